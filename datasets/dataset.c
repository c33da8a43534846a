/*
 * The data-set directory loader (lipgnn/dataset.h): labels.txt first (its line
 * count is the node count n, against which every other file is checked), then
 * the graph (graph.mtx or edges.txt), the features (features.mtx, sparse or
 * dense) and the splits (train.txt, val.txt, test.txt).
 *
 * The text files (labels, splits, edges.txt) hold one record a line; blank
 * lines and lines starting with `#` are skipped. Every error names the file,
 * the line and the offending value (datasets/mtx.h does the reading).
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "datasets/mtx.h"
#include "graph/graph_internal.h"

void lg_features_free(lg_features *f) {
    if (!f) return;
    lg__free(f->x);
    lg__free(f->p);
    lg__free(f->j);
    lg__free(f);
}

void lg_dataset_free(lg_dataset *ds) {
    if (!ds) return;
    lg__free(ds->name);
    lg_graph_free(ds->graph);
    lg_features_free(ds->features);
    lg__free(ds->labels);
    lg__free(ds->train);
    lg__free(ds->val);
    lg__free(ds->test);
    lg__free(ds->graph_ptr);
    lg__free(ds->roots);
    lg__free(ds);
}

size_t lg_dataset_bytes(const lg_dataset *ds) {
    if (!ds) return 0;
    const size_t I = sizeof(lg_idx);
    size_t b = sizeof *ds + (ds->name ? strlen(ds->name) + 1 : 0);
    const lg_graph *g = ds->graph;
    if (g) b += sizeof *g + I * ((size_t)g->n + 1 + (size_t)g->nnz);
    const lg_features *f = ds->features;
    if (f) b += sizeof *f + sizeof(float) * (size_t)f->nnz + (f->kind == LG_FEAT_SPARSE ? I * ((size_t)f->n + 1 + (size_t)f->nnz) : 0);
    const lg_idx n = g ? g->n : f ? f->n : 0;
    if (ds->labels) b += sizeof(int32_t) * (size_t)n;
    b += I * ((size_t)ds->n_train + (size_t)ds->n_val + (size_t)ds->n_test);
    if (ds->graph_ptr) b += I * ((size_t)ds->n_graphs + 1);
    if (ds->roots) b += I * (size_t)ds->n_graphs;
    return b;
}

/* *out = "dir/name" (a new string; no doubled '/'). */
static lg_status lg__path_join(char **out, const char *dir, const char *name) {
    size_t a = strlen(dir), b = strlen(name);
    int slash = a > 0 && dir[a - 1] != '/';
    char *s = lg__malloc(a + (size_t)slash + b + 1);
    *out = s;
    if (!s) return lg__nomem("file path");
    memcpy(s, dir, a);
    if (slash) s[a] = '/';
    memcpy(s + a + (size_t)slash, name, b + 1);
    return LG_OK;
}

/* 1 if path exists, 0 if it does not (ENOENT/ENOTDIR), -1 on another error. */
static int lg__exists(const char *path) {
    struct stat sb;
    if (stat(path, &sb) == 0) return 1;
    return (errno == ENOENT || errno == ENOTDIR) ? 0 : -1;
}

/* ds->name = the base name of dir (trailing '/' ignored; "." and ".." are
 * resolved to the real directory's name). */
static lg_status lg__dataset_name(lg_dataset *ds, const char *dir) {
    char real[PATH_MAX];
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    size_t b = len;
    while (b > 0 && dir[b - 1] != '/') b--;
    const char *base = dir + b;
    size_t blen = len - b;
    if ((blen == 1 && base[0] == '.') || (blen == 2 && base[0] == '.' && base[1] == '.') || blen == 0 ||
        (blen == 1 && base[0] == '/')) {
        if (realpath(dir, real)) {
            char *slash = strrchr(real, '/');
            base = (slash && slash[1]) ? slash + 1 : real;
            blen = strlen(base);
        }
    }
    ds->name = lg__malloc(blen + 1);
    if (!ds->name) return lg__nomem("data-set name");
    memcpy(ds->name, base, blen);
    ds->name[blen] = '\0';
    return LG_OK;
}

/* Reads labels.txt: one class id a line, >= -1 and below the node count.
 * Sets ds->labels, ds->n_classes and *n. O(file). */
static lg_status lg__read_labels(lg_dataset *ds, const char *path, lg_idx *n) {
    lg_status st = LG_OK;
    lg__file f = {0};
    lg__lex lx;
    lg__tok t;
    lg_idx count = 0, max = -1, max_line = 0;
    LG_TRY(lg__file_read(&f, path));
    LG_ALLOC(ds->labels, lg__file_lines(&f), "labels");
    lg__lex_init(&lx, &f);
    while (lg__lex_data_line(&lx, '#')) {
        lg_idx v;
        lg__lex_tok(&lx, &t);
        LG_TRY(lg__lex_int(&lx, &t, "label", &v));
        if (v < -1) {
            st = lg__lex_error(&lx, LG_ERANGE, "label %lld is below -1 (-1 marks an unlabelled node)", (long long)v);
            goto fail;
        }
        if (v > max) { max = v; max_line = lx.line; }
        LG_TRY(lg__lex_eol(&lx, "the label (one a line)"));
        ds->labels[count++] = v > INT32_MAX ? INT32_MAX : (int32_t)v;
    }
    if (count == 0) {
        st = lg__error(LG_EPARSE, "%s: no labels (empty file): expected one class id a line, one line a node", path);
        goto fail;
    }
    if (max >= count || max >= INT32_MAX) {
        lx.line = max_line;
        st = lg__lex_error(&lx, LG_ERANGE, "label %lld is not below the node count %lld (at most one class a node)",
                           (long long)max, (long long)LG_MIN(count, (lg_idx)INT32_MAX));
        goto fail;
    }
    ds->n_classes = (int32_t)(max + 1);
    *n = count;
fail:
    lg__file_free(&f);
    return st;
}

/* Reads graph.mtx into ds->graph. */
static lg_status lg__read_graph_mtx(lg_dataset *ds, const char *path, lg_idx n, const char *labels_path) {
    lg_status st = LG_OK;
    lg__mtx m;
    lg__mtx_want want = {LG__MTX_COORDINATE | LG__MTX_PATTERN | LG__MTX_GENERAL | LG__MTX_SYMMETRIC, n, n,
                         labels_path, "the graph"};
    LG_CHECK(lg__mtx_read(&m, path, &want));
    /* entry (i, j) is the edge i -> j; a symmetric file stores each edge once */
    const unsigned flags = m.symmetry == LG__MTX_SYMMETRIC ? LG_GRAPH_SYMMETRIZE : 0;
    struct cs_dl_sparse *T = NULL;
    st = lg__graph_triplets(&T, n, m.nnz, m.i, m.j, flags);
    lg__mtx_free(&m); /* the triplets hold the edges now */
    return st == LG_OK ? lg__graph_from_triplets(&ds->graph, T, flags) : st;
}

/* Reads edges.txt (`u v` a line, 0-based, edge u -> v) into ds->graph. */
static lg_status lg__read_edges_txt(lg_dataset *ds, const char *path, lg_idx n) {
    lg_status st = LG_OK;
    lg__file f = {0};
    lg__lex lx;
    lg_idx *src = NULL, *dst = NULL, m = 0;
    LG_TRY(lg__file_read(&f, path));
    lg_idx lines = lg__file_lines(&f);
    LG_ALLOC(src, lines, "edge sources");
    LG_ALLOC(dst, lines, "edge targets");
    lg__lex_init(&lx, &f);
    while (lg__lex_data_line(&lx, '#')) {
        lg__tok t;
        lg_idx u, v;
        lg__lex_tok(&lx, &t);
        LG_TRY(lg__lex_int(&lx, &t, "source node", &u));
        if (!lg__lex_tok(&lx, &t)) {
            st = lg__lex_error(&lx, LG_EPARSE, "expected two node ids `u v`, found one");
            goto fail;
        }
        LG_TRY(lg__lex_int(&lx, &t, "target node", &v));
        if (u < 0 || u >= n || v < 0 || v >= n) {
            st = lg__lex_error(&lx, LG_ERANGE, "node id %lld outside [0, %lld) (the node count of labels.txt)",
                               (long long)(u < 0 || u >= n ? u : v), (long long)n);
            goto fail;
        }
        LG_TRY(lg__lex_eol(&lx, "the edge `u v`"));
        src[m] = u;
        dst[m] = v;
        m++;
    }
    /* the file, then the edge arrays, freed as soon as the next copy exists */
    lg__file_free(&f);
    struct cs_dl_sparse *T = NULL;
    st = lg__graph_triplets(&T, n, m, src, dst, 0);
    lg__free(src);
    lg__free(dst);
    return st == LG_OK ? lg__graph_from_triplets(&ds->graph, T, 0) : st;
fail:
    lg__free(src);
    lg__free(dst);
    lg__file_free(&f);
    return st;
}

/* Reads features.mtx into ds->features (sparse for coordinate, dense for
 * array). */
static lg_status lg__read_features(lg_dataset *ds, const char *path, lg_idx n, const char *labels_path) {
    lg_status st = LG_OK;
    lg__mtx m;
    lg_features *f = NULL;
    lg__mtx_want want = {LG__MTX_COORDINATE | LG__MTX_ARRAY | LG__MTX_REAL | LG__MTX_INTEGER | LG__MTX_GENERAL, n,
                         -1, labels_path, "node features"};
    LG_CHECK(lg__mtx_read(&m, path, &want));
    if (m.cols < 1) {
        st = lg__error(LG_ERANGE, "%s:%lld: %lld feature columns: at least one is needed", path,
                       (long long)m.size_line, (long long)m.cols);
        goto fail;
    }
    LG_CALLOC(f, 1, "features");
    f->n = m.rows;
    f->d = m.cols;
    f->nnz = m.nnz;
    if (m.format == LG__MTX_COORDINATE) {
        f->kind = LG_FEAT_SPARSE;
        LG_TRY(lg__mtx_to_csr(&m, &f->p, &f->j, &f->x));
    } else {
        f->kind = LG_FEAT_DENSE;
        f->x = m.x; /* already row-major */
        m.x = NULL;
    }
    ds->features = f;
    f = NULL;
fail:
    lg_features_free(f);
    lg__mtx_free(&m);
    return st;
}

/* Reads a split file: node ids in [0, n), labelled, listed once in all the
 * splits. mark[v] records (line << 2 | split) of the node's first listing.
 * *ids gets a new array of *count ids. */
static lg_status lg__read_split(const lg_dataset *ds, const char *path, lg_idx n, lg_idx *mark, int split,
                                const char *const *split_files, lg_idx **ids, lg_idx *count) {
    lg_status st = LG_OK;
    lg__file f = {0};
    lg__lex lx;
    lg_idx k = 0;
    *count = 0;
    LG_TRY(lg__file_read(&f, path));
    LG_ALLOC(*ids, lg__file_lines(&f), "split node ids");
    lg__lex_init(&lx, &f);
    while (lg__lex_data_line(&lx, '#')) {
        lg__tok t;
        lg_idx v;
        lg__lex_tok(&lx, &t);
        LG_TRY(lg__lex_int(&lx, &t, "node id", &v));
        if (v < 0 || v >= n) {
            st = lg__lex_error(&lx, LG_ERANGE, "node id %lld outside [0, %lld) (the node count of labels.txt)",
                               (long long)v, (long long)n);
            goto fail;
        }
        if (ds->labels[v] < 0) {
            st = lg__lex_error(&lx, LG_ERANGE, "node %lld has no label (-1 in labels.txt)", (long long)v);
            goto fail;
        }
        if (mark[v]) {
            int other = (int)(mark[v] & 3);
            long long line = (long long)(mark[v] >> 2);
            if (other == split)
                st = lg__lex_error(&lx, LG_EPARSE, "node %lld is listed twice (first on line %lld)", (long long)v, line);
            else
                st = lg__lex_error(&lx, LG_EPARSE, "node %lld is also in %s (line %lld): the splits must not overlap",
                                   (long long)v, split_files[other], line);
            goto fail;
        }
        LG_TRY(lg__lex_eol(&lx, "the node id (one a line)"));
        mark[v] = (lx.line << 2) | split;
        (*ids)[k++] = v;
    }
    *count = k;
fail:
    lg__file_free(&f);
    return st;
}

/* dir names a directory: LG_EINVAL (naming fn) when it is NULL or empty,
 * LG_EIO when it is missing or not a directory. */
static lg_status lg__dataset_dir(const char *dir, const char *fn) {
    struct stat sb;
    if (!dir || !*dir) return lg__error(LG_EINVAL, "%s: no directory given", fn);
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return lg__error(LG_EIO, "%s: %s", dir, lg__exists(dir) == 1 ? "not a directory" : "no such data-set directory");
    return LG_OK;
}

/* The graph file of the data set in dir: *path = "dir/graph.mtx", or
 * "dir/edges.txt" with *txt = 1; exactly one of the two must exist (LG_EPARSE
 * when both do, LG_EIO when neither does). */
static lg_status lg__graph_file(const char *dir, char **path, int *txt) {
    lg_status st = LG_OK;
    char *mtx = NULL, *edges = NULL;
    *path = NULL;
    *txt = 0;
    LG_TRY(lg__path_join(&mtx, dir, "graph.mtx"));
    LG_TRY(lg__path_join(&edges, dir, "edges.txt"));
    const int has_mtx = lg__exists(mtx), has_txt = lg__exists(edges);
    if (has_mtx == 1 && has_txt == 1) {
        st = lg__error(LG_EPARSE, "%s: %s exists too: a data set has one graph file, keep one of the two", mtx, edges);
        goto fail;
    }
    if (has_mtx == 0 && has_txt == 0) {
        st = lg__error(LG_EIO, "%s: no graph: neither graph.mtx nor edges.txt exists", mtx);
        goto fail;
    }
    *txt = has_txt == 1;
    *path = *txt ? edges : mtx;
    if (*txt) edges = NULL;
    else mtx = NULL;
fail:
    lg__free(mtx);
    lg__free(edges);
    return st;
}

lg_status lg_dataset_load(lg_dataset **out, const char *dir) {
    static const char *const split_files[4] = {"", "train.txt", "val.txt", "test.txt"};
    lg_status st = LG_OK;
    lg_dataset *ds = NULL;
    char *labels_path = NULL, *path = NULL;
    lg_idx *mark = NULL, n = 0;
    if (!out) return lg__error(LG_EINVAL, "lg_dataset_load: out is NULL");
    *out = NULL;
    LG_CHECK(lg__dataset_dir(dir, "lg_dataset_load"));
    LG_CALLOC(ds, 1, "data set");
    LG_TRY(lg__dataset_name(ds, dir));

    LG_TRY(lg__path_join(&labels_path, dir, "labels.txt"));
    LG_TRY(lg__read_labels(ds, labels_path, &n));

    int txt = 0;
    LG_TRY(lg__graph_file(dir, &path, &txt));
    if (txt)
        LG_TRY(lg__read_edges_txt(ds, path, n));
    else
        LG_TRY(lg__read_graph_mtx(ds, path, n, labels_path));
    lg__heap_trim(); /* the graph's freed stages, below what follows (lg_dataset_load_estimate) */
    lg__free(path);
    path = NULL;

    LG_TRY(lg__path_join(&path, dir, "features.mtx"));
    LG_TRY(lg__read_features(ds, path, n, labels_path));
    lg__free(path);
    path = NULL;

    LG_CALLOC(mark, n, "split marks");
    LG_TRY(lg__path_join(&path, dir, "train.txt"));
    LG_TRY(lg__read_split(ds, path, n, mark, 1, split_files, &ds->train, &ds->n_train));
    if (ds->n_train == 0) {
        st = lg__error(LG_EPARSE, "%s: the training split is empty: expected node ids, one a line", path);
        goto fail;
    }
    lg__free(path);
    LG_TRY(lg__path_join(&path, dir, "val.txt"));
    if (lg__exists(path) == 0) { /* optional */
        LG_ALLOC(ds->val, 1, "validation split");
        ds->n_val = 0;
    } else {
        LG_TRY(lg__read_split(ds, path, n, mark, 2, split_files, &ds->val, &ds->n_val));
    }
    lg__free(path);
    LG_TRY(lg__path_join(&path, dir, "test.txt"));
    LG_TRY(lg__read_split(ds, path, n, mark, 3, split_files, &ds->test, &ds->n_test));

    ds->n_graphs = 1;
    LG_ALLOC(ds->graph_ptr, 2, "graph offsets");
    ds->graph_ptr[0] = 0;
    ds->graph_ptr[1] = n;
    ds->roots = NULL;
    *out = ds;
    ds = NULL;
fail:
    lg__free(mark);
    lg__free(path);
    lg__free(labels_path);
    lg_dataset_free(ds);
    return st;
}

/* The stages of lg_dataset_load, in bytes (doubles: no overflow), for
 * lg_dataset_load_estimate. I = sizeof(lg_idx). */
typedef struct lg__load_sizes {
    double n;          /* nodes: the lines of labels.txt (an upper bound)    */
    double labels_len; /* labels.txt's length                                */
    double graph_len;  /* the graph file's length                            */
    double m;          /* its entries (graph.mtx's header) or lines (edges.txt) */
    int txt, sym;      /* edges.txt; graph.mtx symmetric                      */
    double feat_len;   /* features.mtx's length                              */
    double fnnz;       /* its entries (coordinate) or rows x cols (array)   */
    int dense;         /* features.mtx is an array                           */
    double split[3];   /* the lengths of train.txt, val.txt (0: absent), test.txt */
    double slines[3];  /* and their lines                                    */
} lg__load_sizes;

/* The largest resident size during lg_dataset_load of a data set of sizes z,
 * following its allocations stage by stage (each stage what is alive at its
 * end), before the allocator's margin. */
static double lg__load_peak(const lg__load_sizes *z) {
    const double I = sizeof(lg_idx), n = z->n, np = z->n + 1;
    double peak = 0, live;
#define LG__STAGE(bytes) (live = (bytes), peak = live > peak ? live : peak)
    /* labels.txt: its text and one label a line */
    const double labels = sizeof(int32_t) * n;
    LG__STAGE(z->labels_len + 1 + labels);
    /* the graph: the reader's ids (graph.mtx: beside its text, kept for its
     * messages until the triplets hold the edges; edges.txt: its text freed
     * first), the triplets (2 ids an entry, 2 entries an edge when the file
     * is symmetric), CXSparse's compressed copy (with its n of workspace),
     * the transpose (the same), the graph copied out of it */
    const double cap = z->m * (z->sym ? 2 : 1), trip = 2 * I * cap, csc = I * np + I * cap;
    if (z->txt) {
        LG__STAGE(labels + z->graph_len + 1 + 2 * I * z->m);
        LG__STAGE(labels + 2 * I * z->m + trip);
    } else {
        LG__STAGE(labels + z->graph_len + 1 + 2 * I * z->m + trip);
    }
    LG__STAGE(labels + trip + csc + I * n);
    LG__STAGE(labels + 2 * csc + I * n);
    LG__STAGE(labels + 2 * csc);
    const double graph = sizeof(lg_graph) + csc; /* at most the compressed copy's entries */
    /* the features: the text, the reader's ids and values, then (coordinate)
     * the compressed rows beside them */
    double feat;
    if (z->dense) {
        feat = sizeof(float) * z->fnnz;
        LG__STAGE(labels + graph + z->feat_len + 1 + feat);
    } else {
        feat = I * np + (I + sizeof(float)) * z->fnnz;
        LG__STAGE(labels + graph + z->feat_len + 1 + (2 * I + sizeof(float)) * z->fnnz + feat);
    }
    /* the splits: the marks, each file's text beside its ids (one a line) */
    double kept = labels + graph + sizeof(lg_features) + feat + sizeof(lg_dataset) + 4096;
    for (int k = 0; k < 3; k++) {
        LG__STAGE(kept + I * n + z->split[k] + 1 + I * z->slines[k]);
        kept += I * z->slines[k];
    }
    LG__STAGE(kept + 2 * I);
#undef LG__STAGE
    return peak;
}

/* lg__file_count of dir/name into *len and *lines; an absent optional file
 * gives 0 and 0. */
static lg_status lg__count_in_dir(const char *dir, const char *name, int optional, double *len, double *lines) {
    char *path = NULL;
    size_t b = 0;
    lg_idx l = 0;
    *len = *lines = 0;
    LG_CHECK(lg__path_join(&path, dir, name));
    lg_status st = optional && lg__exists(path) == 0 ? LG_OK : lg__file_count(path, &b, &l);
    lg__free(path);
    if (st == LG_OK) *len = (double)b, *lines = (double)l;
    return st;
}

lg_status lg_dataset_load_estimate(const char *dir, size_t *peak) {
    lg_status st = LG_OK;
    lg__load_sizes z;
    lg__mtx m;
    char *path = NULL;
    size_t len = 0;
    if (!peak) return lg__error(LG_EINVAL, "lg_dataset_load_estimate: peak is NULL");
    *peak = 0;
    LG_CHECK(lg__dataset_dir(dir, "lg_dataset_load_estimate"));
    memset(&z, 0, sizeof z);
    LG_TRY(lg__count_in_dir(dir, "labels.txt", 0, &z.labels_len, &z.n));
    LG_TRY(lg__graph_file(dir, &path, &z.txt));
    if (z.txt) {
        lg_idx lines = 0;
        LG_TRY(lg__file_count(path, &len, &lines));
        z.m = (double)lines;
    } else {
        const lg__mtx_want want = {LG__MTX_COORDINATE | LG__MTX_PATTERN | LG__MTX_GENERAL | LG__MTX_SYMMETRIC, -1, -1,
                                   NULL, "the graph"};
        LG_TRY(lg__mtx_read_header(&m, path, &want));
        z.m = (double)m.nnz;
        z.sym = m.symmetry == LG__MTX_SYMMETRIC;
        len = m.file.len;
    }
    z.graph_len = (double)len;
    lg__free(path);
    path = NULL;
    LG_TRY(lg__path_join(&path, dir, "features.mtx"));
    {
        const lg__mtx_want want = {LG__MTX_COORDINATE | LG__MTX_ARRAY | LG__MTX_REAL | LG__MTX_INTEGER |
                                       LG__MTX_GENERAL,
                                   -1, -1, NULL, "node features"};
        LG_TRY(lg__mtx_read_header(&m, path, &want));
        z.fnnz = (double)m.nnz;
        z.dense = m.format == LG__MTX_ARRAY;
        z.feat_len = (double)m.file.len;
    }
    LG_TRY(lg__count_in_dir(dir, "train.txt", 0, &z.split[0], &z.slines[0]));
    LG_TRY(lg__count_in_dir(dir, "val.txt", 1, &z.split[1], &z.slines[1]));
    LG_TRY(lg__count_in_dir(dir, "test.txt", 0, &z.split[2], &z.slines[2]));
    {
        const double b = lg__resident_bytes(lg__load_peak(&z));
        *peak = b < (double)SIZE_MAX ? (size_t)b : SIZE_MAX;
    }
fail:
    lg__free(path);
    return st;
}

static int lg__name_cmp(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

/* Writes into out (cap bytes) what data sets root holds, for an error
 * message: "the data sets there: a, b" (the subdirectories holding a
 * labels.txt, sorted; at most 32 of them, and "..." for more or where out is
 * full), or why there are none. Allocates nothing. */
static void lg__dataset_names(const char *root, char *out, size_t cap) {
    enum { LG__MAXNAMES = 32 };
    char names[LG__MAXNAMES][NAME_MAX + 1], file[PATH_MAX];
    int n = 0, more = 0;
    DIR *d = opendir(root);
    if (!d) {
        snprintf(out, cap, "which cannot be read: %s", strerror(errno));
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        struct stat sb;
        if (e->d_name[0] == '.' || strlen(e->d_name) > NAME_MAX) continue;
        const int w = snprintf(file, sizeof file, "%s/%s/labels.txt", root, e->d_name);
        if (w < 0 || (size_t)w >= sizeof file || stat(file, &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
        if (n == LG__MAXNAMES) more = 1;
        else memcpy(names[n++], e->d_name, strlen(e->d_name) + 1);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, lg__name_cmp);
    int w = snprintf(out, cap, "%s",
                     n ? "the data sets there:" : "no data set there: no directory of it holds a labels.txt");
    size_t used = w > 0 ? (size_t)w : 0;
    for (int k = 0; k < n && used < cap; k++)
        if ((w = snprintf(out + used, cap - used, "%s %s", k ? "," : "", names[k])) > 0) used += (size_t)w;
    if (more && used < cap && (w = snprintf(out + used, cap - used, ", ...")) > 0) used += (size_t)w;
    if (used >= cap && cap > 4) memcpy(out + cap - 5, " ...", 5);
}

lg_status lg_dataset_resolve(const char *name, char *buf, size_t cap) {
    if (!buf || cap == 0) return lg__error(LG_EINVAL, "lg_dataset_resolve: no output buffer");
    buf[0] = '\0';
    if (!name || !*name) return lg__error(LG_EINVAL, "data-set name is empty");
    if (strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return lg__error(LG_EINVAL, "data-set name '%s' is not a plain name (it holds '/' or is . or ..): "
                                    "give a directory path instead", name);
    const char *root = getenv("LIPGNN_DATA");
    if (!root || !*root)
        return lg__error(LG_ENOTFOUND, "data set '%s': LIPGNN_DATA is %s; set it to the directory holding the "
                                       "data sets (export LIPGNN_DATA=/path/to/data), or give a directory path",
                         name, root ? "empty" : "unset");
    size_t rl = strlen(root);
    int slash = root[rl - 1] != '/';
    size_t need = rl + (size_t)slash + strlen(name) + 1;
    if (need > cap)
        return lg__error(LG_ERANGE, "data set '%s': its path under LIPGNN_DATA=%s needs %zu bytes, the buffer has %zu",
                         name, root, need, cap);
    memcpy(buf, root, rl);
    if (slash) buf[rl] = '/';
    memcpy(buf + rl + (size_t)slash, name, strlen(name) + 1);
    struct stat sb;
    if (stat(buf, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        char there[400];
        lg__dataset_names(root, there, sizeof there);
        return lg__error(LG_ENOTFOUND, "data set '%s' not found: %s is not a directory (LIPGNN_DATA=%s; %s)", name,
                         buf, root, there);
    }
    return LG_OK;
}
