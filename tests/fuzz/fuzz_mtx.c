/*
 * libFuzzer harness of the Matrix Market reader (datasets/mtx.c).
 *
 * Input: a first line saying what the caller accepts, then the file:
 *   "g N\n"  a graph (coordinate pattern general|symmetric), N x N required,
 *            then turned into a CSR graph as the data-set loader does;
 *   "f N\n"  node features (coordinate|array real|integer general), N rows
 *            required, then compressed rows (coordinate) as the loader does;
 *   anything else: every kind accepted, any size (read only).
 * Every file must be either refused with a message or read into a matrix whose
 * indices, order and values satisfy what mtx.h promises.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/mtx.h"
#include "fuzz_util.h"

static void lg__check_matrix(const lg__mtx *m) {
    LG_FUZZ_REQUIRE(m->rows >= 0 && m->cols >= 0 && m->nnz >= 0);
    if (m->format == LG__MTX_COORDINATE) {
        for (lg_idx k = 0; k < m->nnz; k++) {
            LG_FUZZ_REQUIRE(m->i[k] >= 0 && m->i[k] < m->rows);
            LG_FUZZ_REQUIRE(m->j[k] >= 0 && m->j[k] < m->cols);
            if (m->symmetry == LG__MTX_SYMMETRIC) LG_FUZZ_REQUIRE(m->i[k] >= m->j[k]);
        }
        if (m->nnz > 0) LG_FUZZ_REQUIRE(lg__mtx_entry_line(m, m->nnz - 1) > m->size_line);
    } else {
        LG_FUZZ_REQUIRE(m->format == LG__MTX_ARRAY && m->nnz == m->rows * m->cols);
    }
    if (m->x)
        for (lg_idx k = 0; k < m->nnz; k++) LG_FUZZ_REQUIRE(isfinite(m->x[k]));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *nl = memchr(data, '\n', size);
    if (!nl || nl - data > 16) return 0;
    char head[17] = {0}; /* zeroed: an empty first line leaves head + 1 a string too */
    memcpy(head, data, (size_t)(nl - data));
    char mode = head[0];
    long n = strtol(head + 1, NULL, 10);
    if (n < 0 || n > 100000) return 0;
    const char *path = lg_fuzz_write("m.mtx", nl + 1, size - (size_t)(nl + 1 - data));

    lg__mtx_want want = {0, -1, -1, "labels.txt", "the matrix"};
    if (mode == 'g') {
        want.accept = LG__MTX_COORDINATE | LG__MTX_PATTERN | LG__MTX_GENERAL | LG__MTX_SYMMETRIC;
        want.rows = want.cols = n;
    } else if (mode == 'f') {
        want.accept = LG__MTX_COORDINATE | LG__MTX_ARRAY | LG__MTX_REAL | LG__MTX_INTEGER | LG__MTX_GENERAL;
        want.rows = n;
    } else {
        want.accept = ~0u;
    }
    /* the header alone (lg_dataset_load_estimate's reading): where the whole
     * file reads, the same kinds and sizes */
    lg__mtx h;
    const lg_status hs = lg__mtx_read_header(&h, path, &want);
    LG_FUZZ_REQUIRE(h.i == NULL && h.j == NULL && h.x == NULL && h.file.data == NULL);
    if (hs != LG_OK) LG_FUZZ_REQUIRE(lg_last_error()[0] != 0);
    lg__mtx m;
    lg_status st = lg__mtx_read(&m, path, &want);
    if (st == LG_OK)
        LG_FUZZ_REQUIRE(hs == LG_OK && h.format == m.format && h.field == m.field && h.symmetry == m.symmetry &&
                        h.rows == m.rows && h.cols == m.cols && h.nnz == m.nnz && h.size_line == m.size_line);
    if (st != LG_OK) {
        LG_FUZZ_REQUIRE(lg_last_error()[0] != 0);
        LG_FUZZ_REQUIRE(m.i == NULL && m.j == NULL && m.x == NULL && m.file.data == NULL);
        return 0;
    }
    lg__check_matrix(&m);
    if (want.rows >= 0) LG_FUZZ_REQUIRE(m.rows == want.rows);
    if (want.cols >= 0) LG_FUZZ_REQUIRE(m.cols == want.cols);
    if (mode == 'g') {
        lg_graph *g = NULL;
        st = lg_graph_from_edges(&g, n, m.nnz, m.i, m.j, m.symmetry == LG__MTX_SYMMETRIC ? LG_GRAPH_SYMMETRIZE : 0);
        if (st == LG_OK) {
            LG_FUZZ_REQUIRE(g->n == n && g->p[0] == 0 && g->p[n] == g->nnz);
            for (lg_idx i = 0; i < n; i++)
                for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++) LG_FUZZ_REQUIRE(g->j[e] >= 0 && g->j[e] < n);
        }
        lg_graph_free(g);
    } else if (mode == 'f' && m.format == LG__MTX_COORDINATE) {
        lg_idx *p = NULL, *j = NULL;
        float *x = NULL;
        st = lg__mtx_to_csr(&m, &p, &j, &x);
        if (st == LG_OK) {
            LG_FUZZ_REQUIRE(p[0] == 0 && p[m.rows] == m.nnz);
            for (lg_idx r = 0; r < m.rows; r++) {
                LG_FUZZ_REQUIRE(p[r] <= p[r + 1]);
                for (lg_idx e = p[r]; e < p[r + 1]; e++) {
                    LG_FUZZ_REQUIRE(j[e] >= 0 && j[e] < m.cols && isfinite(x[e]));
                    if (e > p[r]) LG_FUZZ_REQUIRE(j[e - 1] < j[e]); /* ascending, no duplicates */
                }
            }
        } else {
            LG_FUZZ_REQUIRE(p == NULL && j == NULL && x == NULL && lg_last_error()[0] != 0);
        }
        lg__free(p);
        lg__free(j);
        lg__free(x);
    }
    lg__mtx_free(&m);
    return 0;
}
