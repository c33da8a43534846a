/* Tests of datasets/: the Matrix Market reader and the data-set directory
 * loader on tiny fixtures (every field checked), on every bad-input fixture of
 * tests/data/bad/ (status, file, line, token; also under failing allocations),
 * on Cora and PubMed through $LIPGNN_DATA against an independent fscanf
 * reading of the files, and lg_dataset_resolve. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"
#include "core/internal.h"
#include "datasets/mtx.h"

#define TINY LG_TEST_DATA "/tiny"
#define BAD LG_TEST_DATA "/bad/"

/* ------------------------------------------------------------------------- */
/* Helpers                                                                    */
/* ------------------------------------------------------------------------- */

static void assert_ids(const lg_idx *got, lg_idx n_got, const lg_idx *want, lg_idx n_want) {
    assert_int_equal(n_got, n_want);
    for (lg_idx k = 0; k < n_want; k++) assert_int_equal(got[k], want[k]);
}

/* The fields every loaded data set shares. */
static void assert_common(const lg_dataset *ds, const char *name, lg_idx n) {
    assert_non_null(ds);
    assert_string_equal(ds->name, name);
    assert_int_equal(ds->graph->n, n);
    assert_ok(lg_graph_check(ds->graph));
    assert_int_equal(ds->features->n, n);
    assert_int_equal(ds->n_graphs, 1);
    assert_non_null(ds->graph_ptr);
    assert_int_equal(ds->graph_ptr[0], 0);
    assert_int_equal(ds->graph_ptr[1], n);
    assert_null(ds->roots);
    if (ds->features->kind == LG_FEAT_SPARSE) {
        const lg_features *f = ds->features;
        assert_int_equal(f->p[0], 0);
        assert_int_equal(f->p[n], f->nnz);
        for (lg_idx i = 0; i < n; i++)
            for (lg_idx k = f->p[i]; k < f->p[i + 1]; k++) {
                assert_true(f->j[k] >= 0 && f->j[k] < f->d);
                if (k > f->p[i]) assert_true(f->j[k] > f->j[k - 1]);
                assert_true(isfinite(f->x[k]));
            }
    }
}

static const int32_t tiny_labels[6] = {0, 1, 2, 1, 0, -1};

/* ------------------------------------------------------------------------- */
/* Valid tiny data sets                                                       */
/* ------------------------------------------------------------------------- */

static void test_tiny(void **state) {
    (void)state;
    lg_dataset *ds = NULL;
    assert_ok(lg_dataset_load(&ds, TINY));
    assert_common(ds, "tiny", 6);
    /* graph: 0->1, 1->2, 2->0, 3->4, 4->3, 1->1, and 0->1 again (dropped) */
    assert_int_equal(ds->graph->nnz, 6);
    const lg_idx gp[7] = {0, 1, 3, 4, 5, 6, 6}, gj[6] = {2, 0, 1, 1, 4, 3};
    for (int i = 0; i < 7; i++) assert_int_equal(ds->graph->p[i], gp[i]);
    for (int k = 0; k < 6; k++) assert_int_equal(ds->graph->j[k], gj[k]);
    /* features: sparse 6 x 4, rows given out of order, row 5 empty */
    const lg_features *f = ds->features;
    assert_int_equal(f->kind, LG_FEAT_SPARSE);
    assert_int_equal(f->d, 4);
    assert_int_equal(f->nnz, 7);
    const lg_idx fp[7] = {0, 2, 3, 4, 5, 7, 7}, fj[7] = {0, 2, 1, 3, 1, 0, 3};
    const float fx[7] = {-2.0f, 0.5f, 3.25f, 1e-3f, 150.0f, 7.0f, -0.125f};
    for (int i = 0; i < 7; i++) assert_int_equal(f->p[i], fp[i]);
    for (int k = 0; k < 7; k++) {
        assert_int_equal(f->j[k], fj[k]);
        assert_true(f->x[k] == fx[k]); /* exact: strtof rounds correctly */
    }
    /* labels (after a comment and around a blank line), splits */
    for (int i = 0; i < 6; i++) assert_int_equal(ds->labels[i], tiny_labels[i]);
    assert_int_equal(ds->n_classes, 3);
    const lg_idx tr[] = {0, 1}, va[] = {2}, te[] = {3, 4};
    assert_ids(ds->train, ds->n_train, tr, 2);
    assert_ids(ds->val, ds->n_val, va, 1);
    assert_ids(ds->test, ds->n_test, te, 2);
    lg_dataset_free(ds);

    /* a trailing '/' is not part of the name; "." is named after the
     * directory it stands for */
    assert_ok(lg_dataset_load(&ds, TINY "/"));
    assert_string_equal(ds->name, "tiny");
    lg_dataset_free(ds);
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(chdir(TINY), 0);
    lg_status st = lg_dataset_load(&ds, ".");
    assert_int_equal(chdir(cwd), 0);
    assert_ok(st);
    assert_string_equal(ds->name, "tiny");
    lg_dataset_free(ds);
}

static void test_tiny_edges_dense(void **state) {
    (void)state;
    lg_dataset *ds = NULL;
    assert_ok(lg_dataset_load(&ds, LG_TEST_DATA "/tiny-edges"));
    assert_common(ds, "tiny-edges", 6);
    assert_int_equal(ds->graph->nnz, 6);
    assert_string_equal(lg_test_graph_row(ds->graph, 0), "2");
    assert_string_equal(lg_test_graph_row(ds->graph, 1), "0,1");
    assert_string_equal(lg_test_graph_row(ds->graph, 2), "1");
    assert_string_equal(lg_test_graph_row(ds->graph, 3), "4");
    assert_string_equal(lg_test_graph_row(ds->graph, 4), "3");
    assert_string_equal(lg_test_graph_row(ds->graph, 5), "");
    /* dense 6 x 3, column-major in the file, row-major here */
    const lg_features *f = ds->features;
    assert_int_equal(f->kind, LG_FEAT_DENSE);
    assert_int_equal(f->d, 3);
    assert_int_equal(f->nnz, 18);
    assert_null(f->p);
    assert_null(f->j);
    for (int r = 0; r < 6; r++) {
        assert_true(f->x[r * 3 + 0] == (float)(r + 1));
        assert_true(f->x[r * 3 + 1] == (float)-(r + 1));
        assert_true(f->x[r * 3 + 2] == (float)r + 0.5f);
    }
    for (int i = 0; i < 6; i++) assert_int_equal(ds->labels[i], tiny_labels[i]);
    assert_int_equal(ds->n_classes, 3);
    const lg_idx tr[] = {0, 1, 2}, te[] = {3, 4};
    assert_ids(ds->train, ds->n_train, tr, 3);
    assert_int_equal(ds->n_val, 0); /* no val.txt */
    assert_ids(ds->test, ds->n_test, te, 2);
    lg_dataset_free(ds);
}

static void test_tiny_symmetric_integer(void **state) {
    (void)state;
    lg_dataset *ds = NULL;
    assert_ok(lg_dataset_load(&ds, LG_TEST_DATA "/tiny-sym"));
    assert_common(ds, "tiny-sym", 6);
    /* lower triangle 2-1, 3-2, 4-4, 6-5 (1-based): both directions, the
     * self-loop once */
    assert_int_equal(ds->graph->nnz, 7);
    assert_string_equal(lg_test_graph_row(ds->graph, 0), "1");
    assert_string_equal(lg_test_graph_row(ds->graph, 1), "0,2");
    assert_string_equal(lg_test_graph_row(ds->graph, 2), "1");
    assert_string_equal(lg_test_graph_row(ds->graph, 3), "3");
    assert_string_equal(lg_test_graph_row(ds->graph, 4), "5");
    assert_string_equal(lg_test_graph_row(ds->graph, 5), "4");
    const lg_features *f = ds->features;
    assert_int_equal(f->kind, LG_FEAT_SPARSE);
    assert_int_equal(f->d, 2);
    assert_int_equal(f->nnz, 3);
    const lg_idx fp[7] = {0, 1, 1, 2, 2, 2, 3}, fj[3] = {0, 0, 1};
    const float fx[3] = {3.0f, 12.0f, -4.0f};
    for (int i = 0; i < 7; i++) assert_int_equal(f->p[i], fp[i]);
    for (int k = 0; k < 3; k++) {
        assert_int_equal(f->j[k], fj[k]);
        assert_true(f->x[k] == fx[k]);
    }
    lg_dataset_free(ds);
}

/* A long unsorted row goes through the row sort; checked against qsort. */
static int cmp_idx(const void *a, const void *b) {
    lg_idx x = *(const lg_idx *)a, y = *(const lg_idx *)b;
    return (x > y) - (x < y);
}

static void test_csr_sorts_rows(void **state) {
    (void)state;
    enum { D = 997, K = 600 };
    char path[] = "/tmp/lg_test_mtx_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    assert_non_null(fp);
    lg_rng rng;
    lg_rng_seed(&rng, 7);
    lg_idx cols[D];
    for (lg_idx c = 0; c < D; c++) cols[c] = c;
    lg_rng_shuffle(&rng, cols, D);
    fprintf(fp, "%%%%MatrixMarket matrix coordinate real general\n3 %d %d\n", D, K + 1);
    for (int k = 0; k < K; k++) fprintf(fp, "2 %lld %lld.5\n", (long long)cols[k] + 1, (long long)cols[k]);
    fprintf(fp, "3 1 -1\n");
    fclose(fp);
    lg__mtx m;
    lg__mtx_want want = {LG__MTX_COORDINATE | LG__MTX_REAL | LG__MTX_GENERAL, 3, -1, NULL, "test"};
    assert_ok(lg__mtx_read(&m, path, &want));
    lg_idx *p, *j;
    float *x;
    assert_ok(lg__mtx_to_csr(&m, &p, &j, &x));
    assert_int_equal(p[0], 0);
    assert_int_equal(p[1], 0);
    assert_int_equal(p[2], K);
    assert_int_equal(p[3], K + 1);
    qsort(cols, K, sizeof cols[0], cmp_idx);
    for (int k = 0; k < K; k++) {
        assert_int_equal(j[k], cols[k]);
        assert_true(x[k] == (float)cols[k] + 0.5f); /* values moved with their columns */
    }
    assert_int_equal(j[K], 0);
    lg__free(p);
    lg__free(j);
    lg__free(x);
    lg__mtx_free(&m);
    remove(path);
}

/* ------------------------------------------------------------------------- */
/* Bad input                                                                  */
/* ------------------------------------------------------------------------- */

/* One fixture of tests/data/bad/: the expected status, the file the message
 * must name, the line (0: none applies) and a token the message must quote. */
typedef struct bad_case {
    const char *name;
    lg_status status;
    const char *file;
    int line;
    const char *token;
} bad_case;

static const bad_case bad_cases[] = {
    /* missing and unreadable files */
    {"missing-labels", LG_EIO, "labels.txt", 0, "No such file"},
    {"missing-graph", LG_EIO, "graph.mtx", 0, "edges.txt"},
    {"missing-features", LG_EIO, "features.mtx", 0, "No such file"},
    {"missing-train", LG_EIO, "train.txt", 0, "No such file"},
    {"missing-test", LG_EIO, "test.txt", 0, "No such file"},
    {"labels-is-dir", LG_EIO, "labels.txt", 0, "directory"},
    {"both-graphs", LG_EPARSE, "graph.mtx", 0, "edges.txt"},
    /* empty files */
    {"empty-graph", LG_EPARSE, "graph.mtx", 0, "empty"},
    {"empty-features", LG_EPARSE, "features.mtx", 0, "empty"},
    {"empty-labels", LG_EPARSE, "labels.txt", 0, "empty"},
    {"empty-labels-comments", LG_EPARSE, "labels.txt", 0, "no labels"},
    {"empty-train", LG_EPARSE, "train.txt", 0, "empty"},
    /* banners */
    {"banner-missing", LG_EPARSE, "graph.mtx", 1, "\"MatrixMarket\""},
    {"banner-blank", LG_EPARSE, "graph.mtx", 1, "blank line"},
    {"banner-object", LG_EPARSE, "features.mtx", 1, "\"vector\""},
    {"banner-graph-array", LG_EPARSE, "graph.mtx", 1, "\"array\""},
    {"banner-graph-real", LG_EPARSE, "graph.mtx", 1, "\"real\""},
    {"banner-graph-skew", LG_EPARSE, "graph.mtx", 1, "\"skew-symmetric\""},
    {"banner-features-pattern", LG_EPARSE, "features.mtx", 1, "\"pattern\""},
    {"banner-features-complex", LG_EPARSE, "features.mtx", 1, "\"complex\""},
    {"banner-features-symmetric", LG_EPARSE, "features.mtx", 1, "\"symmetric\""},
    {"banner-format-unknown", LG_EPARSE, "features.mtx", 1, "\"sparse\""},
    {"banner-extra", LG_EPARSE, "graph.mtx", 1, "\"extra\""},
    {"banner-short", LG_EPARSE, "graph.mtx", 1, "field"},
    /* size lines */
    {"size-missing-number", LG_EPARSE, "graph.mtx", 3, "2 numbers"},
    {"size-nonnumeric", LG_EPARSE, "graph.mtx", 3, "\"six\""},
    {"size-extra", LG_EPARSE, "graph.mtx", 3, "extra token \"7\""},
    {"size-absent", LG_EPARSE, "graph.mtx", 2, "size line"},
    {"size-negative-rows", LG_ERANGE, "graph.mtx", 3, "-6"},
    {"size-negative-nnz", LG_ERANGE, "features.mtx", 3, "-7"},
    {"size-huge-nodes", LG_ERANGE, "graph.mtx", 3, "1000000000000 rows"},
    {"size-huge-nnz", LG_ERANGE, "features.mtx", 3, "1000000000000 entries"},
    {"size-huge-dense", LG_ERANGE, "features.mtx", 2, "6000000000000 entries"},
    {"size-overflow", LG_ERANGE, "features.mtx", 3, "9223372036854775807"},
    {"size-64bit", LG_ERANGE, "graph.mtx", 3, "\"99999999999999999999\""},
    {"size-not-square", LG_ERANGE, "graph.mtx", 3, "5 columns"},
    {"size-zero-features", LG_ERANGE, "features.mtx", 2, "0 feature columns"},
    {"rows-graph-labels", LG_ERANGE, "graph.mtx", 3, "labels.txt"},
    {"rows-features-labels", LG_ERANGE, "features.mtx", 3, "labels.txt"},
    /* entry counts */
    {"truncated-graph", LG_EPARSE, "graph.mtx", 8, "5 of the 7"},
    {"truncated-features", LG_EPARSE, "features.mtx", 9, "5 of the 7"},
    {"surplus-graph", LG_EPARSE, "graph.mtx", 11, "surplus"},
    {"surplus-features", LG_EPARSE, "features.mtx", 12, "surplus"},
    /* indices and tokens */
    {"index-zero-row", LG_ERANGE, "graph.mtx", 4, "row index 0"},
    {"index-zero-col", LG_ERANGE, "features.mtx", 4, "column index 0"},
    {"index-beyond-row", LG_ERANGE, "graph.mtx", 5, "row index 7"},
    {"index-beyond-col", LG_ERANGE, "features.mtx", 5, "column index 5"},
    {"index-negative", LG_ERANGE, "graph.mtx", 4, "-1"},
    {"index-float", LG_EPARSE, "graph.mtx", 4, "\"1.0\" is not an integer"},
    {"index-nonnumeric", LG_EPARSE, "graph.mtx", 4, "\"b\""},
    {"entry-extra-token", LG_EPARSE, "graph.mtx", 4, "extra token \"3\""},
    {"entry-short", LG_EPARSE, "graph.mtx", 4, "1 token"},
    {"comment-in-entries", LG_EPARSE, "graph.mtx", 6, "\"%\""},
    {"graph-symmetric-upper", LG_EPARSE, "graph.mtx", 4, "above the diagonal"},
    {"value-nonnumeric", LG_EPARSE, "features.mtx", 4, "\"abc\""},
    {"value-junk", LG_EPARSE, "features.mtx", 4, "\"0.5x\""},
    {"value-missing", LG_EPARSE, "features.mtx", 4, "2 tokens"},
    {"value-extra-token", LG_EPARSE, "features.mtx", 4, "extra token \"1\""},
    {"value-nan", LG_ENUMERIC, "features.mtx", 4, "\"nan\""},
    {"value-inf", LG_ENUMERIC, "features.mtx", 5, "\"-inf\""},
    {"value-overflow", LG_ENUMERIC, "features.mtx", 6, "\"1e999\""},
    {"value-float-overflow", LG_ENUMERIC, "features.mtx", 6, "\"3.5e38\""},
    {"value-not-integer", LG_EPARSE, "features.mtx", 4, "\"0.5\" is not an integer"},
    {"features-duplicate", LG_EPARSE, "features.mtx", 12, "line 4"},
    /* dense features */
    {"dense-truncated", LG_EPARSE, "features.mtx", 13, "11 of the 12"},
    {"dense-surplus", LG_EPARSE, "features.mtx", 15, "surplus"},
    {"dense-extra-token", LG_EPARSE, "features.mtx", 3, "extra token \"2\""},
    {"dense-nan", LG_ENUMERIC, "features.mtx", 11, "\"NaN\""},
    {"dense-symmetric", LG_EPARSE, "features.mtx", 1, "symmetric"},
    /* labels */
    {"labels-below", LG_ERANGE, "labels.txt", 3, "-2"},
    {"labels-float", LG_EPARSE, "labels.txt", 4, "\"1.5\" is not an integer"},
    {"labels-text", LG_EPARSE, "labels.txt", 2, "\"abc\""},
    {"labels-extra", LG_EPARSE, "labels.txt", 6, "extra token \"2\""},
    {"labels-too-big", LG_ERANGE, "labels.txt", 7, "label 6"},
    {"labels-64bit", LG_ERANGE, "labels.txt", 2, "\"99999999999999999999999\""},
    {"labels-nul", LG_EPARSE, "labels.txt", 3, "\"1?\""},
    /* splits */
    {"split-range", LG_ERANGE, "train.txt", 2, "node id 6"},
    {"split-negative", LG_ERANGE, "test.txt", 1, "node id -1"},
    {"split-duplicate", LG_EPARSE, "train.txt", 3, "twice"},
    {"split-overlap", LG_EPARSE, "test.txt", 2, "train.txt"},
    {"split-unlabelled", LG_ERANGE, "test.txt", 2, "node 5 has no label"},
    {"split-float", LG_EPARSE, "val.txt", 2, "\"2.0\""},
    {"split-extra", LG_EPARSE, "train.txt", 1, "extra token \"1\""},
    /* edges.txt */
    {"edges-range", LG_ERANGE, "edges.txt", 3, "node id 6"},
    {"edges-negative", LG_ERANGE, "edges.txt", 2, "node id -1"},
    {"edges-one-token", LG_EPARSE, "edges.txt", 4, "found one"},
    {"edges-extra-token", LG_EPARSE, "edges.txt", 4, "extra token \"1\""},
    {"edges-nonnumeric", LG_EPARSE, "edges.txt", 5, "\"four\""},
};

enum { N_BAD = sizeof bad_cases / sizeof bad_cases[0] };

/* Checks status and message of one bad case's load. */
static void check_bad(const bad_case *c, lg_status st, const lg_dataset *ds) {
    char path[512], prefix[600];
    const char *msg = lg_last_error();
    snprintf(path, sizeof path, "%s%s/%s", BAD, c->name, c->file);
    if (st != c->status)
        fail_msg("%s: got %s, expected %s: %s", c->name, lg_status_name(st), lg_status_name(c->status), msg);
    if (ds) fail_msg("%s: a data set was returned with an error", c->name);
    if (c->line > 0) {
        snprintf(prefix, sizeof prefix, "%s:%d: ", path, c->line);
        if (strncmp(msg, prefix, strlen(prefix)) != 0)
            fail_msg("%s: message does not start with \"%s\": %s", c->name, prefix, msg);
    } else if (!strstr(msg, path)) {
        fail_msg("%s: message does not name %s: %s", c->name, path, msg);
    }
    if (c->token && !strstr(msg, c->token))
        fail_msg("%s: message does not mention '%s': %s", c->name, c->token, msg);
}

static void test_bad_inputs(void **state) {
    (void)state;
    char dir[512];
    for (int k = 0; k < N_BAD; k++) {
        const bad_case *c = &bad_cases[k];
        lg_dataset *ds = NULL;
        snprintf(dir, sizeof dir, "%s%s", BAD, c->name);
        lg_clear_error();
        lg_status st = lg_dataset_load(&ds, dir);
        check_bad(c, st, ds);
        lg_dataset_free(ds);
    }
}

/* Every fixture directory has a case above (none forgotten), and vice versa. */
static void test_bad_fixtures_all_listed(void **state) {
    (void)state;
    char cmd[600], line[256];
    snprintf(cmd, sizeof cmd, "ls -1 '%s'", BAD);
    FILE *ls = popen(cmd, "r");
    assert_non_null(ls);
    int dirs = 0;
    while (fgets(line, sizeof line, ls)) {
        line[strcspn(line, "\n")] = '\0';
        if (strstr(line, ".py")) continue;
        int found = 0;
        for (int k = 0; k < N_BAD; k++) found |= strcmp(bad_cases[k].name, line) == 0;
        if (!found) fail_msg("tests/data/bad/%s has no entry in bad_cases", line);
        dirs++;
    }
    pclose(ls);
    assert_int_equal(dirs, N_BAD);
}

static void test_bad_arguments(void **state) {
    (void)state;
    lg_dataset *ds = (lg_dataset *)1;
    assert_int_equal(lg_dataset_load(NULL, TINY), LG_EINVAL);
    assert_int_equal(lg_dataset_load(&ds, NULL), LG_EINVAL);
    assert_null(ds);
    assert_int_equal(lg_dataset_load(&ds, ""), LG_EINVAL);
    assert_int_equal(lg_dataset_load(&ds, BAD "no-such-directory"), LG_EIO);
    assert_non_null(strstr(lg_last_error(), "no-such-directory"));
    assert_int_equal(lg_dataset_load(&ds, TINY "/labels.txt"), LG_EIO);
    assert_non_null(strstr(lg_last_error(), "not a directory"));
    assert_null(ds);
    lg_dataset_free(NULL);
    lg_features_free(NULL);
}

/* A data set whose file is a FIFO, a file at a time: refused at once as not a
 * regular file by the load and its estimate (opening a FIFO that has no writer
 * used to wait for one, forever). */
static void test_fifo_file(void **state) {
    (void)state;
    static const char *const files[] = {"graph.mtx", "features.mtx", "labels.txt", "train.txt", "val.txt", "test.txt"};
    enum { NF = 6 };
    char dir[256], path[600];
    for (int victim = 0; victim < NF; victim++) {
        assert_int_equal(lg_test_tmpdir(dir, sizeof dir, "lg_test_fifo"), 0);
        for (int f = 0; f < NF; f++) {
            snprintf(path, sizeof path, "%s/%s", dir, files[f]);
            if (f == victim) {
                assert_int_equal(mkfifo(path, 0600), 0);
                continue;
            }
            char src[600], buf[8192];
            snprintf(src, sizeof src, "%s/%s", TINY, files[f]);
            FILE *in = fopen(src, "rb"), *out = fopen(path, "wb");
            assert_non_null(in);
            assert_non_null(out);
            size_t n = fread(buf, 1, sizeof buf, in);
            assert_int_equal(fwrite(buf, 1, n, out), n);
            fclose(in);
            assert_int_equal(fclose(out), 0);
        }
        lg_dataset *ds = NULL;
        assert_int_equal(lg_dataset_load(&ds, dir), LG_EIO);
        assert_null(ds);
        assert_non_null(strstr(lg_last_error(), files[victim]));
        assert_non_null(strstr(lg_last_error(), "not a regular file (a pipe)"));
        size_t peak = 0;
        assert_int_not_equal(lg_dataset_load_estimate(dir, &peak), LG_OK);
        for (int f = 0; f < NF; f++) {
            snprintf(path, sizeof path, "%s/%s", dir, files[f]);
            assert_int_equal(unlink(path), 0);
        }
        assert_int_equal(rmdir(dir), 0);
    }
}

/* Random byte mutations of tiny's files (seeded, so reproducible): every load
 * either succeeds with a consistent data set or fails with a file-naming
 * message; nothing crashes (the ASan build checks memory). */
static void test_mutations(void **state) {
    (void)state;
    static const char *const files[] = {"graph.mtx", "features.mtx", "labels.txt", "train.txt", "val.txt", "test.txt"};
    static const char alphabet[] = "0123456789-+.eE \n\r\t%#naifNx:";
    enum { NF = 6, ITER = 400 };
    char *text[NF];
    size_t len[NF];
    char path[600], tmpl[] = "/tmp/lg_test_mut_XXXXXX";
    for (int f = 0; f < NF; f++) {
        snprintf(path, sizeof path, "%s/%s", TINY, files[f]);
        FILE *fp = fopen(path, "rb");
        assert_non_null(fp);
        text[f] = malloc(4096);
        len[f] = fread(text[f], 1, 4096, fp);
        fclose(fp);
    }
    char *dir = mkdtemp(tmpl);
    assert_non_null(dir);
    lg_rng rng;
    lg_rng_seed(&rng, 2021);
    int ok = 0;
    for (int it = 0; it < ITER; it++) {
        int victim = (int)lg_rng_below(&rng, NF);
        for (int f = 0; f < NF; f++) {
            char buf[4200];
            size_t n = len[f];
            memcpy(buf, text[f], n);
            if (f == victim) {
                int edits = 1 + (int)lg_rng_below(&rng, 3);
                for (int e = 0; e < edits && n > 0; e++) {
                    size_t at = (size_t)lg_rng_below(&rng, n);
                    char c = alphabet[lg_rng_below(&rng, sizeof alphabet)]; /* NUL included */
                    switch (lg_rng_below(&rng, 4)) {
                    case 0: buf[at] = c; break;                                     /* replace */
                    case 1: memmove(buf + at + 1, buf + at, n - at); buf[at] = c; n++; break; /* insert */
                    case 2: memmove(buf + at, buf + at + 1, n - at - 1); n--; break; /* delete */
                    default: n = at; break;                                          /* truncate */
                    }
                }
            }
            snprintf(path, sizeof path, "%s/%s", dir, files[f]);
            FILE *fp = fopen(path, "wb");
            assert_non_null(fp);
            fwrite(buf, 1, n, fp);
            fclose(fp);
        }
        lg_dataset *ds = NULL;
        lg_status st = lg_dataset_load(&ds, dir);
        if (st == LG_OK) {
            assert_common(ds, strrchr(dir, '/') + 1, ds->graph->n);
            for (lg_idx k = 0; k < ds->n_train; k++) assert_true(ds->labels[ds->train[k]] >= 0);
            ok++;
        } else {
            assert_true(st == LG_EPARSE || st == LG_ERANGE || st == LG_ENUMERIC || st == LG_EIO);
            if (!strstr(lg_last_error(), dir)) fail_msg("iteration %d: message without the path: %s", it, lg_last_error());
            assert_null(ds);
        }
        lg_dataset_free(ds);
    }
    assert_true(ok > 0 && ok < ITER); /* both outcomes happen */
    for (int f = 0; f < NF; f++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        remove(path);
        free(text[f]);
    }
    rmdir(dir);
}

/* ------------------------------------------------------------------------- */
/* Out of memory                                                              */
/* ------------------------------------------------------------------------- */

/* Fails allocation k = 1, 2, ... until loading dir ends with `final`: every
 * earlier attempt must be LG_ENOMEM with nothing left allocated. Returns the
 * number of allocations of the complete load. */
static long alloc_sweep(const char *dir, lg_status final) {
    for (long k = 1; k < 10000; k++) {
        lg_dataset *ds = NULL;
        lg_test_alloc_fail_at(k);
        lg_status st = lg_dataset_load(&ds, dir);
        long used = lg_test_alloc_count();
        if (st == final) {
            lg_dataset_free(ds);
            long live = lg_test_alloc_live();
            lg_test_alloc_reset();
            if (live != 0) fail_msg("%s: %ld allocations live after the final load", dir, live);
            if (used >= k && final == LG_OK) fail_msg("%s: allocation %ld failed, yet the load succeeded", dir, k);
            return k - 1;
        }
        long live = lg_test_alloc_live();
        lg_test_alloc_reset();
        if (st != LG_ENOMEM)
            fail_msg("%s: failing allocation %ld gave %s: %s", dir, k, lg_status_name(st), lg_last_error());
        if (ds) fail_msg("%s: a data set was returned with LG_ENOMEM", dir);
        if (live != 0) fail_msg("%s: failing allocation %ld leaked %ld allocations", dir, k, live);
    }
    fail_msg("%s: the allocation sweep did not end", dir);
    return -1;
}

static void test_out_of_memory(void **state) {
    (void)state;
    assert_true(alloc_sweep(TINY, LG_OK) > 5);
    assert_true(alloc_sweep(LG_TEST_DATA "/tiny-edges", LG_OK) > 5);
    assert_true(alloc_sweep(LG_TEST_DATA "/tiny-sym", LG_OK) > 5);
}

/* The error paths of every bad case, under failing allocations too. */
static void test_out_of_memory_bad_inputs(void **state) {
    (void)state;
    char dir[512];
    for (int k = 0; k < N_BAD; k++) {
        snprintf(dir, sizeof dir, "%s%s", BAD, bad_cases[k].name);
        alloc_sweep(dir, bad_cases[k].status);
    }
}

/* Numbers are read in the C locale's form whatever locale the program has
 * set: under a decimal comma (de_DE, set by setlocale as a program that calls
 * setlocale(LC_ALL, "") gets it), strtof stopped at the '.' of every number,
 * and the tiny fixture's 0.5 was "not a number" (PubMed did not load). The
 * locale is compiled with localedef into a temporary directory (LOCPATH);
 * skipped, saying so, where that fails (no locale sources: Debian's locales). */
static void test_locale_decimal_comma(void **state) {
    (void)state;
    char dir[64], cmd[256];
    assert_int_equal(lg_test_tmpdir(dir, sizeof dir, "lg_locale"), 0);
    snprintf(cmd, sizeof cmd, "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
    const int made = system(cmd) == 0;
    char old[1024] = "";
    const char *env = getenv("LOCPATH");
    if (env) snprintf(old, sizeof old, "%s", env);
    setenv("LOCPATH", dir, 1);
    const int set = made && setlocale(LC_NUMERIC, "de_DE.UTF-8") != NULL;
    const int comma = set && strcmp(localeconv()->decimal_point, ",") == 0;
    lg_dataset *ds = NULL;
    lg_status st = comma ? lg_dataset_load(&ds, TINY) : LG_OK;
    /* the program's locale is the program's again after the load */
    const int kept = !comma || strcmp(localeconv()->decimal_point, ",") == 0;
    setlocale(LC_NUMERIC, "C");
    if (env) setenv("LOCPATH", old, 1);
    else unsetenv("LOCPATH");
    assert_int_equal(lg_test_rmtree(dir), 0);
    if (!comma) {
        print_message("no locale with a decimal comma (localedef -i de_DE failed%s): not checked\n",
                      made ? ", or setlocale did not take it" : ": is Debian's locales installed?");
        skip();
    }
    assert_ok(st);
    assert_true(kept);
    const lg_features *f = ds->features;
    const float fx[7] = {-2.0f, 0.5f, 3.25f, 1e-3f, 150.0f, 7.0f, -0.125f};
    assert_int_equal(f->nnz, 7);
    for (int k = 0; k < 7; k++) assert_true(f->x[k] == fx[k]);
    lg_dataset_free(ds);
}

/* ------------------------------------------------------------------------- */
/* lg_dataset_resolve                                                         */
/* ------------------------------------------------------------------------- */

static void test_resolve(void **state) {
    (void)state;
    char buf[1024];
    const char *old = getenv("LIPGNN_DATA");
    char *saved = old ? strdup(old) : NULL;

    unsetenv("LIPGNN_DATA");
    assert_int_equal(lg_dataset_resolve("cora", buf, sizeof buf), LG_ENOTFOUND);
    assert_non_null(strstr(lg_last_error(), "LIPGNN_DATA is unset"));
    assert_non_null(strstr(lg_last_error(), "export LIPGNN_DATA="));
    setenv("LIPGNN_DATA", "", 1);
    assert_int_equal(lg_dataset_resolve("cora", buf, sizeof buf), LG_ENOTFOUND);

    setenv("LIPGNN_DATA", LG_TEST_DATA, 1);
    assert_ok(lg_dataset_resolve("tiny", buf, sizeof buf));
    assert_string_equal(buf, LG_TEST_DATA "/tiny");
    lg_dataset *ds = NULL;
    assert_ok(lg_dataset_load(&ds, buf));
    assert_string_equal(ds->name, "tiny");
    lg_dataset_free(ds);
    setenv("LIPGNN_DATA", LG_TEST_DATA "/", 1); /* no doubled '/' */
    assert_ok(lg_dataset_resolve("tiny", buf, sizeof buf));
    assert_string_equal(buf, LG_TEST_DATA "/tiny");

    assert_int_equal(lg_dataset_resolve("no-such-set", buf, sizeof buf), LG_ENOTFOUND);
    assert_non_null(strstr(lg_last_error(), "no-such-set"));
    assert_non_null(strstr(lg_last_error(), "not found"));
    /* ... naming the data sets that are there (directories with a labels.txt;
     * bad/ and ckpt-v0/ have none), sorted */
    assert_non_null(strstr(lg_last_error(), "; the data sets there: random60, tiny, tiny-edges, tiny-sym)"));
    setenv("LIPGNN_DATA", LG_TEST_DATA "/ckpt-v0", 1);
    assert_int_equal(lg_dataset_resolve("tiny", buf, sizeof buf), LG_ENOTFOUND);
    assert_non_null(strstr(lg_last_error(), "no data set there"));
    setenv("LIPGNN_DATA", LG_TEST_DATA "/no-such-dir", 1);
    assert_int_equal(lg_dataset_resolve("tiny", buf, sizeof buf), LG_ENOTFOUND);
    assert_non_null(strstr(lg_last_error(), "cannot be read"));
    setenv("LIPGNN_DATA", LG_TEST_DATA "/bad", 1); /* more names than the message holds: cut with "..." */
    assert_int_equal(lg_dataset_resolve("tiny", buf, sizeof buf), LG_ENOTFOUND);
    assert_non_null(strstr(lg_last_error(), "the data sets there: "));
    assert_non_null(strstr(lg_last_error(), " ...)"));
    setenv("LIPGNN_DATA", LG_TEST_DATA, 1);
    assert_int_equal(lg_dataset_resolve("tiny/graph.mtx", buf, sizeof buf), LG_EINVAL);
    assert_int_equal(lg_dataset_resolve("../data", buf, sizeof buf), LG_EINVAL);
    assert_int_equal(lg_dataset_resolve("..", buf, sizeof buf), LG_EINVAL);
    assert_int_equal(lg_dataset_resolve("", buf, sizeof buf), LG_EINVAL);
    assert_int_equal(lg_dataset_resolve(NULL, buf, sizeof buf), LG_EINVAL);
    assert_int_equal(lg_dataset_resolve(".", buf, sizeof buf), LG_EINVAL);
    /* buffer too small: LG_ERANGE, as lg_checkpoint_note (it was LG_EINVAL), buf "" */
    assert_int_equal(lg_dataset_resolve("tiny", buf, 8), LG_ERANGE);
    assert_non_null(strstr(lg_last_error(), "the buffer has 8"));
    assert_string_equal(buf, "");
    const size_t exact = strlen(LG_TEST_DATA "/tiny") + 1;
    assert_int_equal(lg_dataset_resolve("tiny", buf, exact - 1), LG_ERANGE);
    assert_ok(lg_dataset_resolve("tiny", buf, exact));
    assert_int_equal(lg_dataset_resolve("tiny", buf, 0), LG_EINVAL);
    assert_int_equal(lg_dataset_resolve("tiny", NULL, 0), LG_EINVAL);

    if (saved) setenv("LIPGNN_DATA", saved, 1); else unsetenv("LIPGNN_DATA");
    free(saved);
}

/* ------------------------------------------------------------------------- */
/* Cora and PubMed, against an independent reading with fscanf               */
/* ------------------------------------------------------------------------- */

/* Opens dir/name and skips the Matrix Market banner and comments; returns the
 * file positioned at the size line. */
static FILE *open_mtx(const char *dir, const char *name) {
    char path[1024], line[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "r");
    if (!fp) fail_msg("cannot open %s", path);
    long pos = ftell(fp);
    while (fgets(line, sizeof line, fp) && line[0] == '%') pos = ftell(fp);
    fseek(fp, pos, SEEK_SET);
    return fp;
}

/* The ids of a text file, one a line. */
static lg_idx read_ids(const char *dir, const char *name, lg_idx *ids, lg_idx cap) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "r");
    if (!fp) fail_msg("cannot open %s", path);
    lg_idx n = 0;
    long long v;
    while (n < cap && fscanf(fp, "%lld", &v) == 1) ids[n++] = v;
    fclose(fp);
    return n;
}

/* 1 if row i of the CSR (p, j) holds column c. */
static int has(const lg_idx *p, const lg_idx *j, lg_idx i, lg_idx c, lg_idx *at) {
    lg_idx lo = p[i], hi = p[i + 1];
    while (lo < hi) {
        lg_idx mid = lo + (hi - lo) / 2;
        if (j[mid] < c) lo = mid + 1; else hi = mid;
    }
    if (at) *at = lo;
    return lo < p[i + 1] && j[lo] == c;
}

static void check_against_files(const lg_dataset *ds, const char *dir) {
    const lg_idx n = ds->graph->n;
    long long a, b, c;
    float v;
    /* labels */
    lg_idx *ids = malloc(sizeof(lg_idx) * (size_t)(n + 1));
    assert_int_equal(read_ids(dir, "labels.txt", ids, n + 1), n);
    for (lg_idx i = 0; i < n; i++) assert_int_equal(ds->labels[i], ids[i]);
    /* splits */
    assert_int_equal(read_ids(dir, "train.txt", ids, n), ds->n_train);
    for (lg_idx k = 0; k < ds->n_train; k++) assert_int_equal(ds->train[k], ids[k]);
    assert_int_equal(read_ids(dir, "val.txt", ids, n), ds->n_val);
    for (lg_idx k = 0; k < ds->n_val; k++) assert_int_equal(ds->val[k], ids[k]);
    assert_int_equal(read_ids(dir, "test.txt", ids, n), ds->n_test);
    for (lg_idx k = 0; k < ds->n_test; k++) assert_int_equal(ds->test[k], ids[k]);
    free(ids);
    /* graph: symmetric file, each lower-triangle entry in both directions */
    FILE *fp = open_mtx(dir, "graph.mtx");
    assert_int_equal(fscanf(fp, "%lld %lld %lld", &a, &b, &c), 3);
    assert_int_equal(a, n);
    lg_idx m = c;
    for (lg_idx e = 0; e < m; e++) {
        assert_int_equal(fscanf(fp, "%lld %lld", &a, &b), 2);
        assert_true(has(ds->graph->p, ds->graph->j, a - 1, b - 1, NULL));
        assert_true(has(ds->graph->p, ds->graph->j, b - 1, a - 1, NULL));
    }
    fclose(fp);
    /* features: every entry, value exact (fscanf and strtof both round
     * correctly); the counts match, so nothing else is stored */
    const lg_features *f = ds->features;
    fp = open_mtx(dir, "features.mtx");
    assert_int_equal(fscanf(fp, "%lld %lld %lld", &a, &b, &c), 3);
    assert_int_equal(a, n);
    assert_int_equal(b, f->d);
    assert_int_equal(c, f->nnz);
    for (lg_idx e = 0; e < f->nnz; e++) {
        lg_idx at;
        assert_int_equal(fscanf(fp, "%lld %lld %f", &a, &b, &v), 3);
        assert_true(has(f->p, f->j, a - 1, b - 1, &at));
        assert_true(f->x[at] == v);
    }
    fclose(fp);
}

static void test_cora(void **state) {
    (void)state;
    char dir[1024];
    if (!lg_test_dataset_path(dir, sizeof dir, "cora")) skip();
    lg_dataset *ds = NULL;
    assert_ok(lg_dataset_load(&ds, dir));
    assert_common(ds, "cora", 2708);
    assert_int_equal(ds->graph->nnz, 10556);
    lg_graph_stats gs;
    assert_ok(lg_graph_stats_compute(ds->graph, &gs));
    assert_true(gs.symmetric);
    assert_int_equal(gs.self_loops, 0);
    assert_int_equal(ds->features->kind, LG_FEAT_SPARSE);
    assert_int_equal(ds->features->d, 1433);
    assert_int_equal(ds->features->nnz, 49216);
    assert_int_equal(ds->n_classes, 7);
    assert_int_equal(ds->n_train, 140);
    assert_int_equal(ds->n_val, 500);
    assert_int_equal(ds->n_test, 1000);
    /* the first lines of labels.txt: 3 4 4 0 3 */
    assert_int_equal(ds->labels[0], 3);
    assert_int_equal(ds->labels[1], 4);
    assert_int_equal(ds->labels[2], 4);
    assert_int_equal(ds->labels[3], 0);
    assert_int_equal(ds->labels[4], 3);
    check_against_files(ds, dir);
    lg_dataset_free(ds);
}

static void test_pubmed(void **state) {
    (void)state;
    char dir[1024];
    if (!lg_test_dataset_path(dir, sizeof dir, "pubmed")) skip();
    lg_dataset *ds = NULL;
    assert_ok(lg_dataset_load(&ds, dir));
    assert_common(ds, "pubmed", 19717);
    assert_int_equal(ds->graph->nnz, 88648);
    assert_int_equal(ds->features->kind, LG_FEAT_SPARSE);
    assert_int_equal(ds->features->d, 500);
    assert_int_equal(ds->features->nnz, 988031);
    assert_int_equal(ds->n_classes, 3);
    assert_int_equal(ds->n_train, 60);
    assert_int_equal(ds->n_val, 500);
    assert_int_equal(ds->n_test, 1000);
    lg_idx count[3] = {0, 0, 0};
    for (lg_idx i = 0; i < 19717; i++) {
        assert_true(ds->labels[i] >= 0 && ds->labels[i] < 3);
        count[ds->labels[i]]++;
    }
    assert_int_equal(count[0], 4103);
    assert_int_equal(count[1], 7739);
    assert_int_equal(count[2], 7875);
    check_against_files(ds, dir);
    lg_dataset_free(ds);
}

/* ------------------------------------------------------------------------- */
/* lg_dataset_load_estimate                                                   */
/* ------------------------------------------------------------------------- */

static lg_status load_dir(lg_dataset **out, const void *dir) { return lg_dataset_load(out, (const char *)dir); }

/* One attempt of the estimate's allocation sweep on the directory ctx. */
static lg_status estimate_attempt(void *ctx, long k) {
    (void)k;
    size_t peak = 1;
    lg_status st = lg_dataset_load_estimate((const char *)ctx, &peak);
    if (st != LG_OK) assert_int_equal(peak, 0);
    else assert_true(peak > 0);
    return st;
}

/* Its argument checks; its allocation failures; an estimate of every valid
 * fixture at least the bytes of the set it loads to; on every bad fixture, a
 * status and *peak = 0, or an estimate (the load then reports the content). */
static void test_estimate_small(void **state) {
    (void)state;
    size_t peak = 1;
    assert_int_equal(lg_dataset_load_estimate(TINY, NULL), LG_EINVAL);
    assert_int_equal(lg_dataset_load_estimate(NULL, &peak), LG_EINVAL);
    assert_int_equal(peak, 0);
    assert_int_equal(lg_dataset_load_estimate("", &peak), LG_EINVAL);
    assert_int_equal(lg_dataset_load_estimate(BAD "no-such-directory", &peak), LG_EIO);
    assert_non_null(strstr(lg_last_error(), "no-such-directory"));
    assert_int_equal(lg_dataset_load_estimate(TINY "/labels.txt", &peak), LG_EIO);
    assert_non_null(strstr(lg_last_error(), "not a directory"));
    static const char *const good[] = {TINY, LG_TEST_DATA "/tiny-edges", LG_TEST_DATA "/tiny-sym"};
    for (size_t k = 0; k < sizeof good / sizeof *good; k++) {
        lg_dataset *ds = NULL;
        assert_ok(lg_dataset_load(&ds, good[k]));
        assert_ok(lg_dataset_load_estimate(good[k], &peak));
        assert_true(peak >= lg_dataset_bytes(ds));
        lg_dataset_free(ds);
    }
    /* under failing allocations: LG_ENOMEM and *peak = 0 until it succeeds,
     * nothing leaked (lg_test_alloc_sweep) */
    static const char *const sweep_dirs[] = {TINY, LG_TEST_DATA "/tiny-edges"};
    for (size_t k = 0; k < 2; k++)
        assert_true(lg_test_alloc_sweep(estimate_attempt, (void *)sweep_dirs[k], 1000) >= 4);
    char dir[512];
    for (int k = 0; k < N_BAD; k++) {
        snprintf(dir, sizeof dir, "%s%s", BAD, bad_cases[k].name);
        peak = 1;
        lg_status st = lg_dataset_load_estimate(dir, &peak);
        if (st != LG_OK) {
            assert_int_equal(peak, 0);
            assert_true(lg_last_error()[0] != '\0');
        } else {
            assert_true(peak > 0);
        }
    }
}

/* A data set of n nodes in dir: labels (8 classes, node % 8), train/val/test
 * of 1000/500/1000 nodes, and a graph of m random edges as graph.mtx (general,
 * or symmetric: the lower triangle) or edges.txt; features n x d with per
 * entries a row (coordinate) or dense (per = 0: array). */
typedef struct synth {
    lg_idx n, m, d, per;
    int txt, sym;
} synth;

static void write_synth(const char *dir, const synth *z) {
    char path[600];
    lg_rng rng;
    lg_rng_seed(&rng, 7);
    FILE *f;
    snprintf(path, sizeof path, "%s/labels.txt", dir);
    assert_non_null(f = fopen(path, "w"));
    for (lg_idx i = 0; i < z->n; i++) fprintf(f, "%d\n", (int)(i % 8));
    fclose(f);
    static const char *const split[3] = {"train.txt", "val.txt", "test.txt"};
    const lg_idx count[3] = {1000, 500, 1000};
    lg_idx next = 0;
    for (int s = 0; s < 3; s++) {
        snprintf(path, sizeof path, "%s/%s", dir, split[s]);
        assert_non_null(f = fopen(path, "w"));
        for (lg_idx k = 0; k < count[s]; k++) fprintf(f, "%lld\n", (long long)next++);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/%s", dir, z->txt ? "edges.txt" : "graph.mtx");
    assert_non_null(f = fopen(path, "w"));
    if (!z->txt)
        fprintf(f, "%%%%MatrixMarket matrix coordinate pattern %s\n%lld %lld %lld\n", z->sym ? "symmetric" : "general",
                (long long)z->n, (long long)z->n, (long long)z->m);
    for (lg_idx e = 0; e < z->m; e++) {
        lg_idx u = (lg_idx)(lg_rng_next(&rng) % (uint64_t)z->n), v = (lg_idx)(lg_rng_next(&rng) % (uint64_t)z->n);
        if (z->sym && u < v) { lg_idx t = u; u = v; v = t; }
        if (z->txt) fprintf(f, "%lld %lld\n", (long long)u, (long long)v);
        else fprintf(f, "%lld %lld\n", (long long)u + 1, (long long)v + 1);
    }
    fclose(f);
    snprintf(path, sizeof path, "%s/features.mtx", dir);
    assert_non_null(f = fopen(path, "w"));
    if (z->per) {
        fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%lld %lld %lld\n", (long long)z->n,
                (long long)z->d, (long long)(z->n * z->per));
        for (lg_idx i = 0; i < z->n; i++)
            for (lg_idx k = 0; k < z->per; k++) /* distinct columns: k * (d / per) + a row offset */
                fprintf(f, "%lld %lld %.6f\n", (long long)i + 1, (long long)(k * (z->d / z->per) + i % (z->d / z->per)) + 1,
                        lg_rng_double(&rng));
    } else {
        fprintf(f, "%%%%MatrixMarket matrix array real general\n%lld %lld\n", (long long)z->n, (long long)z->d);
        for (lg_idx c = 0; c < z->n * z->d; c++) fprintf(f, "%.5f\n", lg_rng_double(&rng));
    }
    fclose(f);
}

/* The peak memory of loading data sets whose peak is at each kind of stage
 * (graph.mtx general and symmetric, edges.txt, sparse and dense features)
 * against the estimate (lg_test_assert_peak: at least the peak, at most 1.3
 * times it); and a header too long to read is LG_EUNSUPPORTED. */
static void test_estimate_peak(void **state) {
    (void)state;
    char dir[256], path[600];
    size_t peak = 0;
#if !defined(__SANITIZE_ADDRESS__)
    static const synth cases[] = {
        {200000, 2000000, 16, 1, 0, 0}, /* graph.mtx, general: its text, ids and triplets      */
        {200000, 1500000, 16, 1, 0, 1}, /* symmetric: two triplets an entry                    */
        {200000, 2000000, 16, 1, 1, 0}, /* edges.txt                                           */
        {50000, 200000, 512, 40, 0, 0}, /* coordinate features: text, ids, values, rows        */
        {20000, 100000, 200, 0, 0, 0},  /* array features                                      */
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        assert_int_equal(lg_test_tmpdir(dir, sizeof dir, "lg_test_est"), 0);
        write_synth(dir, &cases[k]);
        char what[128];
        snprintf(what, sizeof what, "load %lld nodes, %lld %s edges, %s features", (long long)cases[k].n,
                 (long long)cases[k].m, cases[k].txt ? "edges.txt" : cases[k].sym ? "symmetric" : "general",
                 cases[k].per ? "coordinate" : "array");
        /* in a new process (this program again, test_load_peak): the C
         * library's allocator starts as a command's does. In this one, earlier
         * loads leave its mmap threshold raised (glibc moves it up to the
         * largest block freed), so that the next load's arrays come from the
         * heap, whose freed holes stay resident: 71 MiB measured for a load
         * that takes 60 in a new process. */
        fflush(NULL);
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            execl("/proc/self/exe", "test_dataset", "--load-peak", dir, what, (char *)NULL);
            _exit(127);
        }
        int status = 0;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
        assert_int_equal(lg_test_rmtree(dir), 0);
    }
#endif
    /* a header that does not end within the first MiB */
    assert_int_equal(lg_test_tmpdir(dir, sizeof dir, "lg_test_est"), 0);
    const synth tiny = {3000, 100, 8, 1, 0, 0};
    write_synth(dir, &tiny);
    snprintf(path, sizeof path, "%s/graph.mtx", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "%%%%MatrixMarket matrix coordinate pattern general\n");
    for (int k = 0; k < 20000; k++) fprintf(f, "%% a comment line of about sixty bytes, to pass the first MiB\n");
    fprintf(f, "3000 3000 1\n1 2\n");
    fclose(f);
    peak = 1;
    assert_int_equal(lg_dataset_load_estimate(dir, &peak), LG_EUNSUPPORTED);
    assert_int_equal(peak, 0);
    assert_non_null(strstr(lg_last_error(), "graph.mtx: the header"));
    lg_dataset *ds = NULL;
    assert_ok(lg_dataset_load(&ds, dir)); /* the loader reads it */
    assert_int_equal(ds->graph->nnz, 1);
    lg_dataset_free(ds);
    assert_int_equal(lg_test_rmtree(dir), 0);
}

/* test_dataset --load-peak DIR WHAT: lg_test_assert_peak of loading DIR
 * against its estimate, alone in this process (test_estimate_peak). */
static const char *peak_dir, *peak_what;
static void test_load_peak(void **state) {
    (void)state;
    size_t peak = 0;
    assert_ok(lg_dataset_load_estimate(peak_dir, &peak));
    lg_test_assert_peak(peak_what, load_dir, peak_dir, peak);
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "--load-peak")) {
        peak_dir = argv[2];
        peak_what = argv[3];
        const struct CMUnitTest one[] = {cmocka_unit_test(test_load_peak)};
        return cmocka_run_group_tests_name("load_peak", one, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_tiny_edges_dense),
        cmocka_unit_test(test_tiny_symmetric_integer),
        cmocka_unit_test(test_csr_sorts_rows),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_locale_decimal_comma),
        cmocka_unit_test(test_bad_fixtures_all_listed),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_fifo_file),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_out_of_memory),
        cmocka_unit_test(test_out_of_memory_bad_inputs),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_estimate_small),
        cmocka_unit_test(test_estimate_peak),
        cmocka_unit_test(test_cora),
        cmocka_unit_test(test_pubmed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
