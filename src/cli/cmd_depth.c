/* lipgnn depth-study: accuracy against depth over a grid of models, depths,
 * norms, residual and missing settings and seeds. Every finished run is
 * appended to DIR/runs.csv (flushed and synced), so an interrupted study
 * resumes where it stopped; DIR/summary.md (mean +- std table) and
 * DIR/depth.svg (the plot) are rewritten atomically after every run. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/internal.h"
#include "cli/svg.h"

static const char lg__depth_help[] =
    "Usage: lipgnn depth-study (--dataset NAME | --data DIR | --trees D[,D2|..Dn] | --sbm N[,M]) --out DIR [OPTIONS]\n"
    "Trains every combination of model x layers x norm x residual x missing x seed and\n"
    "plots accuracy against depth (the paper's Fig. 3/4 style). Seeds are the outer loop,\n"
    "so an interrupted study already covers every cell with its first seeds.\n"
    "\n"
    "Grid (comma-separated lists):\n"
    "  --model M[,M2]       gat, gt, gat-classic, gcn, gin, ggnn, gcnii, l2, cosine\n"
    "                       (default gat; cosine needs --residual 1 and --norm none)\n"
    "  --layers L1,L2,...   depths (each 1..1000; required, except with --trees); A..B is\n"
    "                       every depth from A to B, A..B:S every S-th (2..30:4: 2,6,...,30)\n"
    "  --trees D1,D2,... | --trees A..B  TREES of these depths (2..10): the x axis is then\n"
    "                       the tree depth d, each run with d+1 layers (the paper's TREES\n"
    "                       setting) or, with --layers, with each listed number of layers\n"
    "                       (one series each). A single depth with --layers keeps layers\n"
    "                       on the x axis. The trees are mini-batched as in 'train --trees'\n"
    "                       (--batch-size, default 1024)\n"
    "  --norms N1,N2,...    norms as for 'train --norm' (none, lipschitz, lipschitz+pairnorm,\n"
    "                       ...; default none,lipschitz); --norm is a synonym. A (model,\n"
    "                       norm, residual) that a model refuses (l2 or cosine with\n"
    "                       lipschitz, cosine without its residual) is skipped, said on\n"
    "                       stderr and in summary.md: models whose norms differ can be\n"
    "                       set side by side (--model gat,l2 --norms none,lipschitz)\n"
    "  --residual 0,1       without / with residual connections (default 0)\n"
    "  --missing P1,P2,...  shares of non-training nodes without features (default 0)\n"
    "  --seeds N            training seeds --seed+0 .. --seed+N-1 (default 3); with --trees\n"
    "                       the trees themselves are always generated from --seed\n"
    "\n"
    "Output:\n"
    "  --out DIR            directory (created if missing) of settings.txt (the options all\n"
    "                       runs share: a DIR made with other options is refused),\n"
    "                       runs.csv (one row per run, appended as runs finish; runs\n"
    "                       already in it are skipped; its columns are in the README: a\n"
    "                       field is empty where there is no value, as val_acc without a\n"
    "                       validation split; a file of an earlier format is upgraded),\n"
    "                       summary.md (mean +- sample std of the metric per cell, and per\n"
    "                       series the depth chosen on validation with its test accuracy\n"
    "                       at the best-validation epoch: the paper's Table 1; on the\n"
    "                       training accuracy where there is no validation split, TREES) and\n"
    "                       depth.svg (metric against depth with +- std error bars); one\n"
    "                       study at a time (DIR/.lock: a second one is refused)\n"
    "  --metric M           test, val or train accuracy at the last epoch (default test;\n"
    "                       with --trees train, as in the paper; for data without a test\n"
    "                       split val, or train without a validation split either)\n"
    "  --grad-logs          also write DIR/grad_<model>_<norm>_r<res>_m<missing>[_d<depth>]_L<layers>_seed<s>.csv\n"
    "                       (the per-epoch gradient norms of 'train --grad-log')\n"
    "  --json               print one JSON object at the end (the cells' means and stds)\n"
    "  --verbose            one line per finished run on stderr (also when not on a terminal)\n"
    "  --quiet              no progress display\n"
    "  -h, --help           this help\n"
    "\n"
    "Parallel runs:\n"
    "  --jobs N             N runs at once (default 1), each in a process of its own that\n"
    "                       loads the data itself (N times the memory of one run). --threads\n"
    "                       is then each run's (default: the cores / N, at least 1). A run\n"
    "                       gives the same result as in a study without --jobs at the same\n"
    "                       --threads; rows reach runs.csv in the order runs finish. Narrow\n"
    "                       models (hidden 64, 1 head) use cores better as N single-thread\n"
    "                       runs than as one N-thread run. A run waits, with a note, while\n"
    "                       it and the runs in progress would need more than the memory\n"
    "                       limit (--max-memory, or the machine's or control group's)\n"
    "\n"
    "Every other option of 'lipgnn train' (--hidden, --heads, --epochs, --lr, --dropout,\n"
    "--threads, --explode-*, ...) applies to every run; --save, --resume, --log and\n"
    "--grad-log do not. Ctrl-C / SIGTERM / SIGHUP stop at the end of the current epoch:\n"
    "that run is not recorded (with --jobs: the runs in progress), summary.md and\n"
    "depth.svg are written, and the exit status is 130 / 143 / 129; a second one ends the\n"
    "runs at once. A signal ignored when the study started (nohup) stays ignored. A run\n"
    "that fails stops the study (with --jobs, after the other runs in progress have\n"
    "finished and been recorded).\n"
    "\n";

enum { LG__MAX_LIST = 256, LG__KEY = 64, LG__NFIELDS = 23, LG__NFIELDS_V1 = 17, LG__MAX_JOBS = 64 };

/* The hidden option that makes depth-study a worker of a --jobs study: it
 * reads cells from stdin and writes their runs.csv rows to stdout. */
#define LG__WORKER_OPT "--worker-of-jobs"

/* runs.csv's header. A field with no value is empty: val_acc without a
 * validation split (TREES; best_val_acc is then the best training accuracy),
 * test_acc and test_acc_at_best_val without a test split,
 * first_explosion_epoch and explosion_layer (-1: the loss) when the detector
 * did not fire, and the columns after epoch_ms_median in the rows of a file
 * upgraded from an earlier format (lg__runs_upgrade_v1), which did not
 * record them. epochs_total_s is the wall time of the run's epochs (training and
 * evaluation), threads its thread count. */
static const char lg__csv_header[] =
    "model,trees,layers,norm,residual,missing,seed,epochs_run,train_acc,val_acc,test_acc,best_val_acc,"
    "test_acc_at_best_val,exploded,first_explosion_epoch,max_layer_grad_norm,epoch_ms_median,best_epoch,"
    "train_acc_at_best_val,explosion_layer,epochs_total_s,threads,lipgnn_version\n";

/* The header of the second format, without the columns after
 * epoch_ms_median (and with -1 and 0 where empty fields are now): such a file
 * is upgraded in place (lg__runs_upgrade_v1). */
static const char lg__csv_header_v1[] =
    "model,trees,layers,norm,residual,missing,seed,epochs_run,train_acc,val_acc,test_acc,best_val_acc,"
    "test_acc_at_best_val,exploded,first_explosion_epoch,max_layer_grad_norm,epoch_ms_median\n";

/* One run recorded in runs.csv (its key and its accuracies). */
typedef struct lg__rec {
    char model[LG__KEY];   /* canonical model name                     */
    int trees;             /* TREES depth (0: another data set)        */
    int layers;            /* attention layers                         */
    char norm[LG__KEY];    /* canonical norm spelling                  */
    int residual;          /* 0 or 1                                   */
    char missing[LG__KEY]; /* missing share, "%g"                      */
    uint64_t seed;         /* training seed                            */
    double acc[5];         /* train, val, test accuracy (last epoch),
                              best val accuracy, test at the best-val epoch:
                              indexed by --metric (0..2) or LG__ACC_*;
                              NAN for an empty field (no such split)   */
    int exploded;          /* 1: a gradient explosion was detected     */
    long long epochs_run;  /* epochs it ran (fewer than --epochs: it
                              stopped, at an explosion or early)        */
} lg__rec;

/* The entries of lg__rec.acc after the three metrics. */
enum { LG__ACC_BEST_VAL = 3, LG__ACC_TEST_AT_BEST_VAL = 4 };

/* The grid's lists. */
typedef struct lg__grid {
    lg_model_kind models[LG__MAX_LIST]; int nmodels;       /* --model        */
    int layers[LG__MAX_LIST]; int nlayers;                 /* --layers       */
    int depths[LG__MAX_LIST]; int ndepths;                 /* --trees (0: none) */
    int xdepth;            /* 1: the x axis is the tree depth (layers d+1, or
                              each of --layers as a series); 0: the layers  */
    lg_att_norm att[LG__MAX_LIST]; lg_node_norm node[LG__MAX_LIST];
    char norm[LG__MAX_LIST][LG__KEY]; int nnorms;          /* --norms        */
    int residual[2]; int nresidual;                        /* --residual     */
    double missing[LG__MAX_LIST]; char missing_s[LG__MAX_LIST][LG__KEY];
    int nmissing;                                          /* --missing      */
    long long seeds;                                       /* --seeds        */
    uint64_t base_seed;                                    /* --seed         */
    /* 1: the series (model mi, residual ri, norm ni) is not run, the model
     * refusing that combination whatever the depth (e.g. l2 with lipschitz:
     * its attention is Lipschitz without it; cosine without its residual) */
    unsigned char skip[LG__MAX_LIST][2][LG__MAX_LIST];
    int nskip;
} lg__grid;

/* The records of runs.csv. */
typedef struct lg__recs {
    lg__rec *r;   /* records, file order   */
    size_t n, cap; /* count and capacity   */
} lg__recs;

static int lg__recs_push(lg__recs *rs, const lg__rec *r) {
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? 2 * rs->cap : 64;
        lg__rec *p = realloc(rs->r, cap * sizeof *p);
        if (!p) return -1;
        rs->r = p;
        rs->cap = cap;
    }
    rs->r[rs->n++] = *r;
    return 0;
}

/* Points on the x axis; layer series per (model, residual, missing, norm). */
static int lg__npoints(const lg__grid *g) { return g->xdepth ? g->ndepths : g->nlayers; }
static int lg__nlser(const lg__grid *g) { return g->xdepth && g->nlayers ? g->nlayers : 1; }
/* The layers and the tree depth of point pi of layer series lj. */
static int lg__cell_layers(const lg__grid *g, int lj, int pi) {
    return g->xdepth ? (g->nlayers ? g->layers[lj] : g->depths[pi] + 1) : g->layers[pi];
}
static int lg__cell_depth(const lg__grid *g, int pi) { return g->xdepth ? g->depths[pi] : g->depths[0]; }

/* The record with this key, or NULL. O(n). */
static const lg__rec *lg__recs_find(const lg__recs *rs, const char *model, int trees, int layers, const char *norm,
                                    int residual, const char *missing, uint64_t seed) {
    for (size_t i = 0; i < rs->n; i++) {
        const lg__rec *r = &rs->r[i];
        if (r->layers == layers && r->trees == trees && r->residual == residual && r->seed == seed &&
            !strcmp(r->model, model) &&
            !strcmp(r->norm, norm) && !strcmp(r->missing, missing))
            return r;
    }
    return NULL;
}

/* Splits a comma list into items (s is modified); -1 on an empty list or item. */
static int lg__split(const char *cmd, const char *opt, char *s, char **items, int *n) {
    *n = 0;
    if (!*s) {
        lg_cli_errorf(cmd, "%s: empty list", opt);
        return -1;
    }
    for (char *p = s;;) {
        char *c = strchr(p, ',');
        if (c) *c = 0;
        if (!*p) {
            lg_cli_errorf(cmd, "%s: empty item in the list", opt);
            return -1;
        }
        if (*n == LG__MAX_LIST) {
            lg_cli_errorf(cmd, "%s: more than %d items", opt, LG__MAX_LIST);
            return -1;
        }
        items[(*n)++] = p;
        if (!c) break;
        p = c + 1;
    }
    return 0;
}

/* Parses the list options into g; -1 after a message. */
static int lg__parse_lists(const char *cmd, lg__grid *g, char *models, char *layers, char *norms, char *residual,
                           char *missing) {
    char *it[LG__MAX_LIST];
    int n;
    long long v;
    if (lg__split(cmd, "--model", models, it, &n)) return -1;
    for (int i = 0; i < n; i++) {
        if (lg_model_kind_parse(it[i], &g->models[i]) != LG_OK) {
            lg_cli_errorf(cmd, "--model: %s", lg_last_error());
            return -1;
        }
        for (int j = 0; j < i; j++)
            if (g->models[j] == g->models[i]) { lg_cli_errorf(cmd, "--model: '%s' given twice", it[i]); return -1; }
    }
    g->nmodels = n;
    n = 0;
    int nl = 0; /* layers: items L, or ranges A..B (every L from A to B) and A..B:S (every S-th) */
    if (layers && lg__split(cmd, "--layers", layers, it, &n)) return -1;
    for (int i = 0; i < n; i++) {
        char *dots = strstr(it[i], "..");
        long long a, b, step = 1;
        if (dots) {
            *dots = 0;
            char *colon = strchr(dots + 2, ':');
            if (colon) *colon = 0;
            if (lg_cli_parse_ll(cmd, "--layers", it[i], 1, 1000, &a) ||
                lg_cli_parse_ll(cmd, "--layers", dots + 2, 1, 1000, &b) ||
                (colon && lg_cli_parse_ll(cmd, "--layers (the step after ':')", colon + 1, 1, 1000, &step)))
                return -1;
            if (b < a) { lg_cli_errorf(cmd, "--layers: the range %lld..%lld is empty", a, b); return -1; }
        } else {
            if (lg_cli_parse_ll(cmd, "--layers", it[i], 1, 1000, &v)) return -1;
            a = b = v;
        }
        for (long long l = a; l <= b; l += step) {
            if (nl == LG__MAX_LIST) { lg_cli_errorf(cmd, "--layers: more than %d depths", LG__MAX_LIST); return -1; }
            g->layers[nl] = (int)l;
            for (int j = 0; j < nl; j++)
                if (g->layers[j] == g->layers[nl]) { lg_cli_errorf(cmd, "--layers: %d given twice", g->layers[nl]); return -1; }
            nl++;
        }
    }
    n = nl;
    /* sorted, so rows and plot points go by depth */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && g->layers[j - 1] > g->layers[j]; j--) {
            int t = g->layers[j]; g->layers[j] = g->layers[j - 1]; g->layers[j - 1] = t;
        }
    g->nlayers = n;
    if (lg__split(cmd, "--norms", norms, it, &n)) return -1;
    for (int i = 0; i < n; i++) {
        if (lg_norm_parse(it[i], &g->att[i], &g->node[i]) != LG_OK) {
            lg_cli_errorf(cmd, "--norms: %s", lg_last_error());
            return -1;
        }
        lg_norm_format(g->norm[i], LG__KEY, g->att[i], g->node[i]);
        for (int j = 0; j < i; j++)
            if (!strcmp(g->norm[j], g->norm[i])) { lg_cli_errorf(cmd, "--norms: '%s' given twice", it[i]); return -1; }
    }
    g->nnorms = n;
    if (lg__split(cmd, "--residual", residual, it, &n)) return -1;
    if (n > 2) { lg_cli_errorf(cmd, "--residual: a list of 0 and 1"); return -1; }
    for (int i = 0; i < n; i++) {
        if (lg_cli_parse_ll(cmd, "--residual", it[i], 0, 1, &v)) return -1;
        g->residual[i] = (int)v;
        if (i && g->residual[0] == g->residual[1]) { lg_cli_errorf(cmd, "--residual: %lld given twice", v); return -1; }
    }
    g->nresidual = n;
    if (lg__split(cmd, "--missing", missing, it, &n)) return -1;
    for (int i = 0; i < n; i++) {
        if (lg_cli_parse_double(cmd, "--missing", it[i], 0, 1, &g->missing[i])) return -1;
        snprintf(g->missing_s[i], LG__KEY, "%g", g->missing[i]);
        for (int j = 0; j < i; j++)
            if (!strcmp(g->missing_s[j], g->missing_s[i])) { lg_cli_errorf(cmd, "--missing: %s given twice", it[i]); return -1; }
    }
    g->nmissing = n;
    return 0;
}

/* ---- runs.csv ---- */

/* Writes path via a temporary file and rename(2); writer fills the stream.
 * Returns 0, or -1 after a message. */
typedef void (*lg__writer)(FILE *f, const void *ctx);
static int lg__write_atomic(const char *cmd, const char *path, lg__writer w, const void *ctx) {
    char tmp[4400];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp) {
        lg_cli_errorf(cmd, "%s: path too long", path);
        return -1;
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        lg_cli_errorf(cmd, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    w(f, ctx);
    int bad = ferror(f) || fflush(f) != 0 || fsync(fileno(f)) != 0;
    if (fclose(f) != 0) bad = 1;
    if (bad || rename(tmp, path) != 0) {
        lg_cli_errorf(cmd, "%s: write error: %s", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}


/* 1 if field is a decimal number as the rows' writer prints them: digits, a
 * point and an exponent; no sign, space, hexadecimal, inf or nan (which
 * strtod takes). */
static int lg__field_decimal(const char *field) {
    if (!((*field >= '0' && *field <= '9') || *field == '.')) return 0;
    return field[strspn(field, "0123456789.eE+-")] == 0;
}

/* 0 if field is an accuracy, a decimal number in [0, 1] (into *v); -1
 * otherwise. */
static int lg__field_acc(const char *field, double *v) {
    char *end;
    if (!lg__field_decimal(field)) return -1;
    *v = strtod(field, &end);
    return !*field || *end || !(*v >= 0 && *v <= 1) ? -1 : 0;
}

/* 0 if field is a decimal integer in [lo, hi], or empty when empty_ok; -1
 * otherwise. */
static int lg__field_int(const char *field, long long lo, long long hi, int empty_ok) {
    if (!*field) return empty_ok ? 0 : -1;
    if (!(field[0] == '-' || (field[0] >= '0' && field[0] <= '9'))) return -1; /* (strtoll takes spaces, '+') */
    char *end;
    errno = 0;
    const long long x = strtoll(field, &end, 10);
    return errno || *end || x < lo || x > hi ? -1 : 0;
}

/* Parses one complete line (without its newline) of runs.csv; -1 if
 * malformed, and then *why (if why is not NULL) says how. */
static int lg__parse_rec(char *line, lg__rec *r, const char **why) {
    static const char bad_field[] = "a field missing, extra or out of range";
    if (why) *why = bad_field;
    char *f[LG__NFIELDS];
    int n = 0;
    for (char *p = line;;) {
        if (n == LG__NFIELDS) return -1;
        f[n++] = p;
        char *c = strchr(p, ',');
        if (!c) break;
        *c = 0;
        p = c + 1;
    }
    if (n != LG__NFIELDS) return -1;
    memset(r, 0, sizeof *r);
    lg_model_kind k;
    lg_att_norm a;
    lg_node_norm nn;
    char *end;
    if (lg_model_kind_parse(f[0], &k) != LG_OK) return -1;
    snprintf(r->model, LG__KEY, "%s", lg_model_kind_name(k));
    errno = 0;
    long d = strtol(f[1], &end, 10);
    if (f[1][0] < '0' || f[1][0] > '9') return -1; /* (a sign or a space: "-0" was TREES to the upgrade) */
    if (errno || *end || !(d == 0 || (d >= 2 && d <= 10))) return -1;
    r->trees = (int)d;
    char **f1 = f + 1; /* the fields after the tree depth */
    errno = 0;
    long l = strtol(f1[1], &end, 10);
    if (errno || *end || !*f1[1] || l < 1 || l > 1000) return -1;
    r->layers = (int)l;
    if (lg_norm_parse(f1[2], &a, &nn) != LG_OK) return -1;
    lg_norm_format(r->norm, LG__KEY, a, nn);
    if (strcmp(f1[3], "0") && strcmp(f1[3], "1")) return -1;
    r->residual = f1[3][0] == '1';
    double m = strtod(f1[4], &end);
    if (!lg__field_decimal(f1[4]) || *end || !(m >= 0 && m <= 1)) return -1;
    snprintf(r->missing, LG__KEY, "%g", m);
    if (f1[5][0] < '0' || f1[5][0] > '9') return -1; /* (strtoull takes spaces and a sign) */
    errno = 0;
    unsigned long long s = strtoull(f1[5], &end, 10);
    if (errno || *end) return -1;
    r->seed = (uint64_t)s;
    errno = 0;
    long long ep = strtoll(f1[6], &end, 10);
    if (errno || *end || !*f1[6] || ep < 0) return -1;
    r->epochs_run = ep;
    for (int i = 0; i < 5; i++) { /* accuracies: in [0, 1]; val and test ones empty (NAN) without their split */
        if (!*f1[7 + i] && (i == 1 || i == 2 || i == LG__ACC_TEST_AT_BEST_VAL)) {
            r->acc[i] = NAN;
            continue;
        }
        if (lg__field_acc(f1[7 + i], &r->acc[i])) return -1;
    }
    if (strcmp(f1[12], "0") && strcmp(f1[12], "1")) return -1;
    r->exploded = f1[12][0] == '1';
    if (lg__field_int(f1[13], -1, LLONG_MAX, 1)) return -1; /* first explosion epoch (-1: none, as before) */
    const long long fe = *f1[13] ? strtoll(f1[13], NULL, 10) : -1; /* (-1: none) */
    /* a gradient norm: inf or nan (printed "-nan" too) where training diverged */
    if (!lg__field_decimal(f1[14]) && strcmp(f1[14], "inf") && strcmp(f1[14], "nan") && strcmp(f1[14], "-nan")) return -1;
    double gn = strtod(f1[14], &end);
    if (*end || gn < 0) return -1;
    double ms = strtod(f1[15], &end);
    if (!lg__field_decimal(f1[15]) || *end || !(ms >= 0) || !isfinite(ms)) return -1;
    /* the columns after epoch_ms_median, each empty in an upgraded row */
    double v;
    if (lg__field_int(f1[16], 0, LLONG_MAX, 1)) return -1;                   /* best_epoch            */
    if (*f1[17] && lg__field_acc(f1[17], &v)) return -1;                      /* train_acc_at_best_val */
    if (lg__field_int(f1[18], -1, INT_MAX, 1)) return -1;                     /* explosion_layer       */
    /* the explosion fields agree with exploded (an upgraded row's explosion_layer is empty) */
    if (r->exploded ? fe < 1 : fe != -1 || *f1[18]) {
        if (why)
            *why = r->exploded ? "exploded is 1 but first_explosion_epoch is not an epoch"
                               : "exploded is 0 but first_explosion_epoch or explosion_layer is given";
        return -1;
    }
    /* the fields that name an epoch or a layer name one the run had, and a
     * norm that is not finite always fires the detector (lg__explode_observe) */
    const long long be = *f1[16] ? strtoll(f1[16], NULL, 10) : 0, el = *f1[18] ? strtoll(f1[18], NULL, 10) : -1;
    if (be > ep || fe > ep) {
        if (why) *why = "best_epoch or first_explosion_epoch is after epochs_run";
        return -1;
    }
    if (el >= r->layers) {
        if (why) *why = "explosion_layer is not a layer of the model (0 to layers - 1, or -1: the loss)";
        return -1;
    }
    if (!r->exploded && !isfinite(gn)) {
        if (why) *why = "exploded is 0 but max_layer_grad_norm is not finite, which the detector fires on";
        return -1;
    }
    if (*f1[19]) { /* epochs_total_s */
        if (!lg__field_decimal(f1[19])) return -1;
        v = strtod(f1[19], &end);
        if (*end || !(v >= 0) || !isfinite(v)) return -1;
    }
    if (lg__field_int(f1[20], 1, INT_MAX, 1)) return -1;                      /* threads               */
    for (const char *c = f1[21]; *c; c++)                                     /* lipgnn_version        */
        if (!isalnum((unsigned char)*c) && !strchr(".+-_~", *c)) return -1;
    return 0;
}

/* The header of runs.csv before the trees column (lipgnn 0.1.0's first
 * depth-study): such a file is upgraded in place (trees = 0 in every row). */
static const char lg__csv_header_v0[] =
    "model,layers,norm,residual,missing,seed,epochs_run,train_acc,val_acc,test_acc,best_val_acc,"
    "test_acc_at_best_val,exploded,first_explosion_epoch,max_layer_grad_norm,epoch_ms_median\n";

/* If buf (len bytes, NUL-terminated) is a runs.csv of the first format,
 * replaces it in memory by the second (the complete lines only; the
 * column trees = depth after the model: 0, or the one tree depth such a study
 * had); the caller validates the rows before it writes the file. depth < 0
 * refuses (several depths given: which one the study had is unknown).
 * 1 (upgraded), 0 (not the first format: buf unchanged), or after a message
 * -1 (refused) or -2 (out of memory). */
static int lg__runs_upgrade(const char *cmd, const char *path, int depth, char **buf, size_t *len) {
    const size_t h0 = strlen(lg__csv_header_v0);
    if (*len < h0 || strncmp(*buf, lg__csv_header_v0, h0)) return 0;
    if (depth < 0) {
        lg_cli_errorf(cmd, "%s: a study of the format without the trees column, which had one tree depth: "
                      "give that depth alone (--trees D) to upgrade it", path);
        return -1;
    }
    char col[16];
    const int cl = snprintf(col, sizeof col, ",%d", depth);
    size_t lines = 0;
    for (size_t k = h0; k < *len; k++) lines += (*buf)[k] == '\n';
    size_t cap = strlen(lg__csv_header_v1) + *len + (size_t)cl * lines + 1, n = 0;
    char *out = malloc(cap);
    if (!out) { lg_cli_errorf(cmd, "out of memory"); return -2; }
    n += (size_t)sprintf(out, "%s", lg__csv_header_v1); /* then upgraded again, by lg__runs_upgrade_v1 */
    for (char *p = *buf + h0, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
        char *comma = memchr(p, ',', (size_t)(nl - p));
        if (!comma) { /* a blank line stays; a row without a comma is refused with its line number */
            memcpy(out + n, p, (size_t)(nl + 1 - p));
            n += (size_t)(nl + 1 - p);
            continue;
        }
        memcpy(out + n, p, (size_t)(comma - p));
        n += (size_t)(comma - p);
        memcpy(out + n, col, (size_t)cl);
        n += (size_t)cl;
        memcpy(out + n, comma, (size_t)(nl + 1 - comma));
        n += (size_t)(nl + 1 - comma);
    }
    out[n] = 0;
    if ((*buf)[*len - 1] != '\n' && *len > h0)
        fprintf(stderr, "lipgnn %s: %s: dropping the incomplete last line (an interrupted write)\n", cmd, path);
    free(*buf);
    *buf = out;
    *len = n;
    return 1;
}

/* If buf (len bytes, NUL-terminated) is a runs.csv of the second format
 * (lg__csv_header_v1), replaces it in memory by the current format: each row
 * of 17 fields gets the six new columns empty (not recorded then), an empty
 * first_explosion_epoch for its -1 and, in a TREES row (trees > 0: no
 * validation split), an empty val_acc for its 0; blank lines, rows of another
 * field count (refused by the caller, with their line number) and an
 * incomplete last line (dropped by the caller) are copied as they are.
 * 1 (upgraded), 0 (not that format: buf unchanged), or -1 after a message. */
static int lg__runs_upgrade_v1(const char *cmd, char **buf, size_t *len) {
    const size_t h1 = strlen(lg__csv_header_v1);
    if (*len < h1 || strncmp(*buf, lg__csv_header_v1, h1)) return 0;
    size_t lines = 0;
    for (size_t k = h1; k < *len; k++) lines += (*buf)[k] == '\n';
    const char add[] = ",,,,,,"; /* the six new columns */
    const size_t cap = strlen(lg__csv_header) + *len + (sizeof add - 1) * lines + 1;
    char *out = malloc(cap);
    if (!out) { lg_cli_errorf(cmd, "out of memory"); return -1; }
    size_t n = (size_t)sprintf(out, "%s", lg__csv_header);
    char *p = *buf + h1;
    for (char *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
        const char *f[LG__NFIELDS_V1 + 1];
        size_t fl[LG__NFIELDS_V1 + 1];
        int nf = 0;
        for (const char *q = p; nf <= LG__NFIELDS_V1;) {
            const char *c = memchr(q, ',', (size_t)(nl - q));
            f[nf] = q;
            fl[nf++] = (size_t)((c ? c : nl) - q);
            if (!c) break;
            q = c + 1;
        }
        if (nl == p || nf != LG__NFIELDS_V1) { /* a blank line, or a row the caller refuses */
            memcpy(out + n, p, (size_t)(nl + 1 - p));
            n += (size_t)(nl + 1 - p);
            continue;
        }
        int trees = 0; /* a depth other than 0 */
        for (size_t k = 0; k < fl[1]; k++) trees |= f[1][k] != '0';
        if (trees) fl[9] = 0;                                    /* TREES: no validation accuracy */
        if (fl[14] == 2 && !strncmp(f[14], "-1", 2)) fl[14] = 0; /* no explosion                  */
        for (int k = 0; k < nf; k++) {
            if (k) out[n++] = ',';
            memcpy(out + n, f[k], fl[k]);
            n += fl[k];
        }
        memcpy(out + n, add, sizeof add - 1);
        n += sizeof add - 1;
        out[n++] = '\n';
    }
    const size_t tail = strlen(p); /* an incomplete last line: the caller drops it */
    memcpy(out + n, p, tail);
    n += tail;
    out[n] = 0;
    free(*buf);
    *buf = out;
    *len = n;
    return 1;
}

/* The bytes an upgraded runs.csv is rewritten with (lg__write_atomic). */
typedef struct lg__bytes {
    const char *p; /* the bytes */
    size_t n;      /* how many  */
} lg__bytes;
static void lg__write_bytes(FILE *f, const void *ctx) {
    const lg__bytes *b = ctx;
    if (b->n) (void)fwrite(b->p, 1, b->n, f);
}

/* Reads DIR/runs.csv if present: upgrades a file of an earlier format (the
 * first one's runs get the tree depth old_depth, lg__runs_upgrade; the
 * second's the empty columns of lg__runs_upgrade_v1), validates the header and
 * every row (blank lines are skipped; a row repeating an earlier row's run is
 * noted, the first kept), drops a truncated last line (truncating the file),
 * and loads the records; an upgraded file is rewritten only once all its rows
 * are valid; a row of a model of grid g (train options opts) that ran more
 * epochs than that model's --epochs is malformed too. Creates the file with
 * its header when missing or empty. Returns the file opened for appending, or
 * NULL after a message (*status = the exit status). */
static FILE *lg__runs_open(const char *cmd, const char *path, int old_depth, const lg__grid *g,
                           const lg_train_opts *opts, lg__recs *rs, int *status) {
    *status = LG_EXIT_USAGE;
    int missing = 0;
    FILE *f = lg_cli_open_regular(cmd, path, &missing);
    char *buf = NULL;
    size_t len = 0;
    int upgraded = 0;
    if (!f && !missing) return NULL;
    if (f) {
        size_t cap = 0;
        for (;;) {
            if (len + 4096 + 1 > cap) {
                cap = cap ? 2 * cap : 65536;
                char *p = realloc(buf, cap);
                if (!p) { fclose(f); free(buf); lg_cli_errorf(cmd, "out of memory"); *status = LG_EXIT_FAIL; return NULL; }
                buf = p;
            }
            size_t got = fread(buf + len, 1, cap - len - 1, f);
            len += got;
            if (got == 0) break;
        }
        const int err = ferror(f) ? errno : 0; /* (before fclose, which may change errno) */
        fclose(f);
        if (err) { free(buf); lg_cli_errorf(cmd, "%s: read error: %s", path, strerror(err)); return NULL; }
        buf[len] = 0;
        const char *nul = memchr(buf, 0, len);
        if (nul) { /* refused before anything reads or upgrades it: the line scans stop at a NUL */
            long ln = 1;
            for (const char *q = buf; q < nul; q++) ln += *q == '\n';
            lg_cli_errorf(cmd, "%s:%ld: a NUL byte (not a depth-study runs.csv, or a damaged one; the file is unchanged)",
                          path, ln);
            free(buf);
            return NULL;
        }
        /* the first format becomes the second, the second the current one */
        const int up0 = lg__runs_upgrade(cmd, path, old_depth, &buf, &len);
        const int up1 = up0 < 0 ? -1 : lg__runs_upgrade_v1(cmd, &buf, &len);
        if (up0 < 0 || up1 < 0) {
            if (up0 != -1) *status = LG_EXIT_FAIL; /* out of memory (the second upgrade's only failure) */
            free(buf);
            return NULL;
        }
        upgraded = up0 ? 1 : up1 ? 2 : 0;
    }
    size_t hl = strlen(lg__csv_header);
    size_t keep = 0; /* bytes of the file to keep */
    if (len > 0) {
        if (len < hl && memchr(buf, '\n', len) == NULL && !strncmp(buf, lg__csv_header, len)) {
            keep = 0; /* a truncated header: rewrite it */
        } else if (strspn(buf, "\r\n") == len) {
            keep = 0; /* blank lines only (an editor's save of an emptied file): as an empty file */
        } else if (len < hl || strncmp(buf, lg__csv_header, hl)) {
            char *nl = memchr(buf, '\n', len);
            int shown = (int)(nl ? (size_t)(nl - buf) : (len < 400 ? len : 400));
            if (shown > 400) shown = 400;
            const int crlf = shown > 0 && buf[shown - 1] == '\r';
            lg_cli_printable(buf, (size_t)shown); /* shown on a terminal */
            lg_cli_errorf(cmd, "%s: not a depth-study runs.csv (header '%.*s'; expected '%.*s')%s", path, shown, buf,
                          (int)hl - 1, lg__csv_header, crlf ? ": its lines end in CRLF (\\r\\n), not LF" : "");
            free(buf);
            return NULL;
        } else {
            keep = hl;
            long lineno = 1;
            char *p = buf + hl;
            while (p < buf + len) {
                char *nl = memchr(p, '\n', (size_t)(buf + len - p));
                lineno++;
                if (!nl) {
                    fprintf(stderr, "lipgnn %s: %s: dropping the incomplete last line %ld (an interrupted write)\n",
                            cmd, path, lineno);
                    break;
                }
                const int rl = (int)(nl - p); /* (buf is never written: an upgraded file is written from it) */
                if (rl == 0) { /* a blank line (an editor's last newline): skipped */
                    p = nl + 1;
                    keep = (size_t)(p - buf);
                    continue;
                }
                lg__rec r;
                char *row = strndup(p, (size_t)rl); /* the parse cuts its line at the commas */
                if (!row) {
                    free(buf);
                    lg_cli_errorf(cmd, "out of memory");
                    *status = LG_EXIT_FAIL;
                    return NULL;
                }
                const char *why = NULL;
                char why_ep[160];
                int bad = lg__parse_rec(row, &r, &why);
                free(row);
                for (int mi = 0; !bad && mi < g->nmodels; mi++)
                    if (!strcmp(r.model, lg_model_kind_name(g->models[mi])) && r.epochs_run > opts[mi].tc.epochs) {
                        snprintf(why_ep, sizeof why_ep, "epochs_run %lld is more than the study's --epochs %d of %s",
                                 r.epochs_run, opts[mi].tc.epochs, r.model);
                        why = why_ep;
                        bad = 1;
                    }
                if (bad) {
                    char shown[121]; /* the row's start, printable (a \r moved the cursor) */
                    const int sl = rl < 120 ? rl : 120;
                    lg_cli_printable(memcpy(shown, p, (size_t)sl), (size_t)sl);
                    const int cr = memchr(p, '\r', (size_t)rl) != NULL;
                    lg_cli_errorf(cmd, "%s:%ld: malformed row '%.*s' (%s%s)%s",
                                  path, lineno, sl, shown, why, cr ? "; it holds a CR (\\r): lines must end in LF alone" : "", upgraded == 1 ? " (as upgraded from the first format, with the trees "
                                  "column and those after epoch_ms_median added; the file is unchanged)" : upgraded == 2 ? " (as upgraded from the format "
                                  "without the columns after epoch_ms_median; the file is unchanged)" : "");
                    free(buf);
                    return NULL;
                }
                const lg__rec *first = lg__recs_find(rs, r.model, r.trees, r.layers, r.norm, r.residual, r.missing,
                                                     r.seed);
                if (first)
                    fprintf(stderr, "lipgnn %s: note: %s:%ld: the run of this row (%s d=%d L=%d %s res=%d missing=%s "
                            "seed %llu) is in an earlier row too: the earlier row is kept, this one ignored\n", cmd,
                            path, lineno, r.model, r.trees, r.layers, r.norm, r.residual, r.missing,
                            (unsigned long long)r.seed);
                else if (lg__recs_push(rs, &r)) {
                    free(buf);
                    lg_cli_errorf(cmd, "out of memory");
                    *status = LG_EXIT_FAIL;
                    return NULL;
                }
                p = nl + 1;
                keep = (size_t)(p - buf);
            }
        }
    }
    if (upgraded) { /* every row valid: the upgraded rows replace the file, without a truncated last line */
        const lg__bytes b = {buf, keep};
        if (lg__write_atomic(cmd, path, lg__write_bytes, &b)) {
            free(buf);
            *status = LG_EXIT_FAIL;
            return NULL;
        }
        if (upgraded == 1)
            fprintf(stderr, "lipgnn %s: %s: upgraded from the format without the trees column (%zu runs; the columns "
                    "after epoch_ms_median, which it had not either, are empty in their rows)\n", cmd, path, rs->n);
        else
            fprintf(stderr, "lipgnn %s: %s: upgraded from the format without the columns best_epoch, "
                    "train_acc_at_best_val, explosion_layer, epochs_total_s, threads and lipgnn_version (%zu runs; those are "
                    "empty in their rows)\n", cmd, path, rs->n);
        len = keep;
    }
    free(buf);
    if (len > 0 && keep < len && truncate(path, (off_t)keep) != 0) {
        lg_cli_errorf(cmd, "%s: cannot truncate: %s", path, strerror(errno));
        return NULL;
    }
    f = fopen(path, "ab");
    if (!f) {
        lg_cli_errorf(cmd, "%s: cannot write: %s", path, strerror(errno));
        return NULL;
    }
    (void)fcntl(fileno(f), F_SETFD, FD_CLOEXEC); /* not a --jobs worker's */
    if (keep == 0) {
        fputs(lg__csv_header, f);
        if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
            lg_cli_errorf(cmd, "%s: write error: %s", path, strerror(errno));
            fclose(f);
            return NULL;
        }
    }
    *status = LG_EXIT_OK;
    return f;
}

/* ---- summary statistics ---- */

/* Mean and sample std of the metric (an index of lg__rec.acc) over the grid's
 * seeds for one cell. */
typedef struct lg__stat {
    int n;       /* runs recorded      */
    int exploded, stopped; /* of them: flagged by the detector; ended before --epochs */
    int nv;      /* of them: with a value of the metric (none without its split) */
    double mean; /* mean over those (NAN if nv=0) */
    double std;  /* sample std (0 if nv=1, NAN if nv=0) */
} lg__stat;

static lg__stat lg__cell_stat(const lg__grid *g, const lg__recs *rs, int metric, int mi, int ri, int xi, int ni,
                              int lj, int pi, long long epochs) {
    lg__stat s = {0, 0, 0, 0, NAN, NAN};
    double sum = 0, sq = 0;
    const char *model = lg_model_kind_name(g->models[mi]);
    for (long long k = 0; k < g->seeds; k++) {
        const lg__rec *r = lg__recs_find(rs, model, lg__cell_depth(g, pi), lg__cell_layers(g, lj, pi), g->norm[ni],
                                         g->residual[ri], g->missing_s[xi], g->base_seed + (uint64_t)k);
        if (!r) continue;
        s.n++;
        s.exploded += r->exploded;
        s.stopped += r->epochs_run < epochs;
        if (isnan(r->acc[metric])) continue; /* (the parse admits no other NAN) */
        s.nv++;
        sum += r->acc[metric];
    }
    if (!s.nv) return s;
    s.mean = sum / s.nv;
    for (long long k = 0; k < g->seeds; k++) {
        const lg__rec *r = lg__recs_find(rs, model, lg__cell_depth(g, pi), lg__cell_layers(g, lj, pi), g->norm[ni],
                                         g->residual[ri], g->missing_s[xi], g->base_seed + (uint64_t)k);
        if (r && !isnan(r->acc[metric])) sq += (r->acc[metric] - s.mean) * (r->acc[metric] - s.mean);
    }
    s.std = s.nv > 1 ? sqrt(sq / (s.nv - 1)) : 0;
    return s;
}

static const char *const lg__metric_names[3] = {"train", "val", "test"};

/* The label of a series (model, norm, and residual / missing when they vary
 * or are not the default). */
static void lg__series_label(const lg__grid *g, int mi, int ri, int xi, int ni, int lj, char *buf, size_t cap) {
    int n = snprintf(buf, cap, "%s %s", lg_model_kind_name(g->models[mi]), g->norm[ni]);
    if (n < 0 || (size_t)n >= cap) return;
    if (g->xdepth && g->nlayers) n += snprintf(buf + n, cap - (size_t)n, " L=%d", g->layers[lj]);
    if (n < 0 || (size_t)n >= cap) return;
    if (g->nresidual > 1 || g->residual[ri]) n += snprintf(buf + n, cap - (size_t)n, " res=%d", g->residual[ri]);
    if (n < 0 || (size_t)n >= cap) return;
    if (g->nmissing > 1 || g->missing[xi] != 0) snprintf(buf + n, cap - (size_t)n, " missing=%s", g->missing_s[xi]);
}

/* What the summary and plot writers need. */
typedef struct lg__study {
    const lg__grid *g;     /* the grid              */
    const lg__recs *rs;    /* recorded runs         */
    int metric;            /* 0 train, 1 val, 2 test */
    const char *dsname;    /* data set name          */
    long long total, done; /* runs in the grid, recorded */
    int epochs;            /* --epochs               */
    int noval;             /* 1: no validation split (TREES): runs.csv's
                              best_val_acc is the best training accuracy,
                              and the selection is made on it            */
} lg__study;

/* Visits the series in a fixed order: model, residual, missing, norm, and
 * layers (when the x axis is the tree depth and --layers is given), but the
 * skipped (model, residual, norm) combinations. */
#define LG__FOR_SERIES(g)                                  \
    for (int mi = 0; mi < (g)->nmodels; mi++)              \
        for (int ri = 0; ri < (g)->nresidual; ri++)        \
            for (int xi = 0; xi < (g)->nmissing; xi++)     \
                for (int ni = 0; ni < (g)->nnorms; ni++)   \
                    for (int lj = 0; lj < lg__nlser(g); lj++) \
                        if (!(g)->skip[mi][ri][ni])

static void lg__write_summary(FILE *f, const void *ctx) {
    const lg__study *s = ctx;
    const lg__grid *g = s->g;
    char label[256];
    fprintf(f, "# lipgnn depth-study: %s\n\n", s->dsname);
    fprintf(f, "%s accuracy at the last epoch (of %d), mean ± sample std over seeds (n runs; k exploded: flagged "
            "by the gradient-explosion detector; k stopped: ended sooner, by --stop-on-explosion or --patience, "
            "scored at their own last epoch); %lld of %lld runs done.\n",
            lg__metric_names[s->metric], s->epochs, s->done, s->total);
    if (g->nresidual == 1 && !g->residual[0] && g->nmissing == 1 && g->missing[0] == 0)
        fprintf(f, "No residual connections, no missing features.\n");
    if (g->xdepth && !g->nlayers) fprintf(f, "Each run has d+1 layers for trees of depth d.\n");
    if (g->nskip) { /* the combinations a model refuses */
        fprintf(f, "Not run (the model refuses the combination):");
        int first = 1;
        for (int mi = 0; mi < g->nmodels; mi++)
            for (int ri = 0; ri < g->nresidual; ri++)
                for (int ni = 0; ni < g->nnorms; ni++)
                    if (g->skip[mi][ri][ni]) {
                        fprintf(f, "%s %s %s res=%d", first ? "" : ",", lg_model_kind_name(g->models[mi]), g->norm[ni],
                                g->residual[ri]);
                        first = 0;
                    }
        fprintf(f, ".\n");
    }
    fprintf(f, "\n| %s |", g->xdepth ? "depth" : "layers");
    LG__FOR_SERIES(g) {
        lg__series_label(g, mi, ri, xi, ni, lj, label, sizeof label);
        fprintf(f, " %s |", label);
    }
    fprintf(f, "\n|---:|");
    LG__FOR_SERIES(g) fprintf(f, "---|");
    fputc('\n', f);
    for (int pi = 0; pi < lg__npoints(g); pi++) {
        fprintf(f, "| %d |", g->xdepth ? g->depths[pi] : g->layers[pi]);
        LG__FOR_SERIES(g) {
            lg__stat st = lg__cell_stat(g, s->rs, s->metric, mi, ri, xi, ni, lj, pi, s->epochs);
            char more[64] = ""; /* how many of the runs exploded or stopped early */
            if (st.exploded) snprintf(more, sizeof more, ", %d exploded", st.exploded);
            if (st.stopped) snprintf(more + strlen(more), sizeof more - strlen(more), ", %d stopped", st.stopped);
            if (st.nv && st.nv < st.n) /* some runs without the metric's split (a hand-joined runs.csv) */
                snprintf(more + strlen(more), sizeof more - strlen(more), ", %d n/a", st.n - st.nv);
            if (st.nv > 1) fprintf(f, " %.3f ± %.3f (n=%d%s) |", st.mean, st.std, st.n, more);
            else if (st.nv == 1) fprintf(f, " %.3f (n=%d%s) |", st.mean, st.n, more); /* no spread from one run */
            else if (st.n) fprintf(f, " n/a (n=%d%s) |", st.n, more);
            else fprintf(f, " – (n=0) |");
        }
        fputc('\n', f);
    }
    /* model selection on validation (the paper's Table 1 protocol); without
     * a validation split (TREES), on the training accuracy, and said so */
    const char *sel = s->noval ? "training" : "validation";
    fprintf(f, "\nThe %s chosen on %s accuracy%s: for each series, the one with the highest mean best %s "
               "accuracy over its runs, and there the test accuracy at each run's best-%s epoch.\n\n",
            g->xdepth ? "depth" : "number of layers", sel, s->noval ? " (the data set has no validation split)" : "",
            sel, sel);
    fprintf(f, "| series | %s | mean best %s | test at best %s |\n|---|---:|---|---|\n", g->xdepth ? "depth" : "layers",
            s->noval ? "train" : "val.", s->noval ? "train" : "val.");
    LG__FOR_SERIES(g) {
        int best = -1;
        lg__stat bv = {0, 0, 0, 0, NAN, NAN};
        for (int pi = 0; pi < lg__npoints(g); pi++) {
            lg__stat v = lg__cell_stat(g, s->rs, LG__ACC_BEST_VAL, mi, ri, xi, ni, lj, pi, s->epochs);
            if (v.nv > 0 && (best < 0 || v.mean > bv.mean)) best = pi, bv = v; /* the first on ties */
        }
        lg__series_label(g, mi, ri, xi, ni, lj, label, sizeof label);
        if (best < 0) {
            fprintf(f, "| %s | – | – | – (n=0) |\n", label);
            continue;
        }
        lg__stat t = lg__cell_stat(g, s->rs, LG__ACC_TEST_AT_BEST_VAL, mi, ri, xi, ni, lj, best, s->epochs);
        fprintf(f, "| %s | %d | %.3f |", label, g->xdepth ? g->depths[best] : g->layers[best], bv.mean);
        if (t.nv > 1) fprintf(f, " %.3f ± %.3f (n=%d) |\n", t.mean, t.std, t.nv);
        else if (t.nv == 1) fprintf(f, " %.3f (n=1) |\n", t.mean);
        else fprintf(f, " n/a (no test split) |\n");
    }
}

/* Categorical colours (Tableau 10). */
static const char *const lg__colors[10] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                           "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

static void lg__write_svg(FILE *f, const void *ctx) {
    const lg__study *s = ctx;
    const lg__grid *g = s->g;
    char buf[256];
    size_t maxlab = 0; /* the legend's width follows its longest label */
    LG__FOR_SERIES(g) {
        lg__series_label(g, mi, ri, xi, ni, lj, buf, sizeof buf);
        if (strlen(buf) > maxlab) maxlab = strlen(buf);
    }
    const double L = 70, T = 44, B = 60, pw = 460, ph = 356;
    const double R = fmax(230, 60 + 7.0 * (double)maxlab), W = L + pw + R;
    const int np = lg__npoints(g);
    const int *xv = g->xdepth ? g->depths : g->layers; /* x values, ascending */
    const double H = fmax(T + ph + B, T + 20.0 * g->nmodels * g->nresidual * g->nmissing * g->nnorms * lg__nlser(g) + 10);
    double xmin = xv[0], xmax = xv[np - 1];
    if (xmax - xmin < 1) { xmin -= 1; xmax += 1; }
    double pad = 0.04 * (xmax - xmin);
    xmin -= pad;
    xmax += pad;
#define LG__X(v) (L + ((v) - xmin) / (xmax - xmin) * pw)
#define LG__Y(v) (T + (1 - (v)) * ph)
    lg_svg_begin(f, W, H, NULL);
    snprintf(buf, sizeof buf, "depth-study: %s (%s accuracy, mean ± std over seeds)", s->dsname,
             lg__metric_names[s->metric]);
    lg_svg_text(f, W / 2, 24, 15, "middle", "class=\"title\"", buf); /* long titles: the whole width */
    /* axes, grid and ticks */
    lg_svg_group_begin(f, "class=\"axes\"");
    for (int k = 0; k <= 5; k++) {
        double v = k / 5.0, y = LG__Y(v);
        lg_svg_line(f, L, y, L + pw, y, "#e0e0e0", 1, "class=\"grid\"");
        lg_svg_line(f, L - 5, y, L, y, "#000000", 1, "class=\"ytick\"");
        snprintf(buf, sizeof buf, "%.1f", v);
        lg_svg_text(f, L - 8, y + 4, 11, "end", "class=\"ytick-label\"", buf);
    }
    double last = -1e300;
    for (int li = 0; li < np; li++) {
        double x = LG__X(xv[li]);
        lg_svg_line(f, x, T + ph, x, T + ph + 5, "#000000", 1, "class=\"xtick\"");
        if (x - last >= 22) {
            snprintf(buf, sizeof buf, "%d", xv[li]);
            lg_svg_text(f, x, T + ph + 18, 11, "middle", "class=\"xtick-label\"", buf);
            last = x;
        }
    }
    lg_svg_line(f, L, T + ph, L + pw, T + ph, "#000000", 1, "class=\"axis\"");
    lg_svg_line(f, L, T, L, T + ph, "#000000", 1, "class=\"axis\"");
    lg_svg_text(f, L + pw / 2, H - 16, 13, "middle", "class=\"axis-title\"",
                g->xdepth ? (g->nlayers ? "tree depth d" : "tree depth d (d+1 layers)") : "layers");
    snprintf(buf, sizeof buf, "%s accuracy", lg__metric_names[s->metric]);
    fprintf(f, "<g transform=\"translate(18 ");
    lg_svg_num(f, T + ph / 2);
    fprintf(f, ") rotate(-90)\">\n");
    lg_svg_text(f, 0, 0, 13, "middle", "class=\"axis-title\"", buf);
    lg_svg_group_end(f);
    lg_svg_group_end(f);
    /* series */
    int si = 0;
    double *xs = malloc((size_t)np * sizeof *xs), *ys = malloc((size_t)np * sizeof *ys);
    LG__FOR_SERIES(g) {
        const char *col = lg__colors[si % 10];
        const char *dash = g->residual[ri] ? " stroke-dasharray=\"6 3\"" : "";
        lg__series_label(g, mi, ri, xi, ni, lj, buf, sizeof buf);
        lg_svg_group_begin(f, "class=\"series-group\"");
        if (xs && ys) {
            for (int li = 0; li < np; li++) {
                lg__stat st = lg__cell_stat(g, s->rs, s->metric, mi, ri, xi, ni, lj, li, s->epochs);
                xs[li] = LG__X(xv[li]);
                ys[li] = st.nv ? LG__Y(fmin(1, fmax(0, st.mean))) : NAN;
            }
            char attrs[96];
            snprintf(attrs, sizeof attrs, "class=\"series\"%s", dash);
            lg_svg_polyline(f, xs, ys, (size_t)np, col, 2, attrs);
            for (int li = 0; li < np; li++) {
                lg__stat st = lg__cell_stat(g, s->rs, s->metric, mi, ri, xi, ni, lj, li, s->epochs);
                if (!st.nv) continue;
                double x = xs[li], lo = LG__Y(fmax(0, st.mean - st.std)), hi = LG__Y(fmin(1, st.mean + st.std));
                lg_svg_line(f, x, lo, x, hi, col, 1.5, "class=\"errbar\"");
                lg_svg_line(f, x - 4, lo, x + 4, lo, col, 1.5, "class=\"errbar-cap\"");
                lg_svg_line(f, x - 4, hi, x + 4, hi, col, 1.5, "class=\"errbar-cap\"");
                lg_svg_circle(f, x, ys[li], 3.5, col, "#ffffff", "class=\"marker\"");
            }
        }
        lg_svg_group_end(f);
        /* legend entry */
        double ly = T + 10 + 20 * si;
        lg_svg_group_begin(f, "class=\"legend\"");
        char attrs[96];
        snprintf(attrs, sizeof attrs, "class=\"legend-line\"%s", dash);
        lg_svg_line(f, L + pw + 16, ly, L + pw + 44, ly, col, 2, attrs);
        lg_svg_circle(f, L + pw + 30, ly, 3.5, col, "#ffffff", "class=\"legend-marker\"");
        lg_svg_text(f, L + pw + 50, ly + 4, 12, "start", "class=\"legend-label\"", buf);
        lg_svg_group_end(f);
        si++;
    }
    free(xs);
    free(ys);
    snprintf(buf, sizeof buf, "%lld of %lld runs", s->done, s->total);
    lg_svg_text(f, L + pw + 16, T + ph, 11, "start", "class=\"note\"", buf);
    lg_svg_end(f);
#undef LG__X
#undef LG__Y
}

/* Rewrites summary.md and depth.svg; -1 after a message. */
static int lg__write_outputs(const char *cmd, const char *dir, const lg__study *s) {
    char path[4200];
    int n = snprintf(path, sizeof path, "%s/summary.md", dir);
    if (n < 0 || (size_t)n >= sizeof path || lg__write_atomic(cmd, path, lg__write_summary, s)) return -1;
    n = snprintf(path, sizeof path, "%s/depth.svg", dir);
    if (n < 0 || (size_t)n >= sizeof path) return -1;
    return lg__write_atomic(cmd, path, lg__write_svg, s);
}

/* mkdir -p; -1 after a message. */
static int lg__mkdirs(const char *cmd, const char *dir) {
    char p[4096];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) {
        lg_cli_errorf(cmd, "--out: path too long");
        return -1;
    }
    for (char *c = p + 1;; c++) {
        if (*c == '/' || !*c) {
            char save = *c;
            *c = 0;
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                lg_cli_errorf(cmd, "--out: cannot create %s: %s", p, strerror(errno));
                return -1;
            }
            *c = save;
            if (!save) break;
        }
    }
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        lg_cli_errorf(cmd, "--out: %s is not a directory", dir);
        return -1;
    }
    return 0;
}

static double lg__now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void lg__fmt_time(double s, char *buf, size_t cap) {
    if (!(s >= 0) || s > 1e9) { snprintf(buf, cap, "?"); return; }
    long t = lround(s);
    if (t >= 3600) snprintf(buf, cap, "%ldh%02ldm", t / 3600, (t / 60) % 60);
    else if (t >= 60) snprintf(buf, cap, "%ldm%02lds", t / 60, t % 60);
    else snprintf(buf, cap, "%lds", t);
}

static void lg__print_json(const char *dir, const lg__study *s) {
    const lg__grid *g = s->g;
    printf("{\"out\":");
    lg_json_string(stdout, dir);
    printf(",\"dataset\":");
    lg_json_string(stdout, s->dsname);
    /* selection: what best_val_mean is the best of (train without a validation split) */
    printf(",\"metric\":\"%s\",\"selection\":\"%s\",\"runs_total\":%lld,\"runs_done\":%lld,\"cells\":[",
           lg__metric_names[s->metric], s->noval ? "train" : "val", s->total, s->done);
    int first = 1;
    LG__FOR_SERIES(g)
    for (int pi = 0; pi < lg__npoints(g); pi++) {
        lg__stat st = lg__cell_stat(g, s->rs, s->metric, mi, ri, xi, ni, lj, pi, s->epochs);
        printf("%s{\"model\":\"%s\",\"trees\":%d,\"layers\":%d,\"norm\":", first ? "" : ",",
               lg_model_kind_name(g->models[mi]), lg__cell_depth(g, pi), lg__cell_layers(g, lj, pi));
        lg_json_string(stdout, g->norm[ni]);
        printf(",\"residual\":%d,\"missing\":%s,\"n\":%d,\"exploded\":%d,\"stopped\":%d,", g->residual[ri],
               g->missing_s[xi], st.n, st.exploded, st.stopped);
        /* null for no runs, or no value (an accuracy of a split the data set does not have) */
        const lg__stat bv = lg__cell_stat(g, s->rs, LG__ACC_BEST_VAL, mi, ri, xi, ni, lj, pi, s->epochs);
        const lg__stat tb = lg__cell_stat(g, s->rs, LG__ACC_TEST_AT_BEST_VAL, mi, ri, xi, ni, lj, pi, s->epochs);
        /* a sample std needs two values: null from one, as summary.md shows none */
        const char *const key[5] = {"mean", "std", "best_val_mean", "test_at_best_val_mean", "test_at_best_val_std"};
        const double val[5] = {st.mean, st.nv > 1 ? st.std : NAN, bv.mean, tb.mean, tb.nv > 1 ? tb.std : NAN};
        for (int k = 0; k < 5; k++) {
            printf("%s\"%s\":", k ? "," : "", key[k]);
            lg_json_number(stdout, "%.6f", val[k]);
        }
        /* how many of the n runs have a value (n/a without its split) */
        printf(",\"n_values\":%d,\"test_at_best_val_n_values\":%d}", st.nv, tb.nv);
        first = 0;
    }
    printf("]}\n");
    lg_cli_flush(stdout);
}

/* Parses --trees: "A..B" or a comma list of depths in 2..10, into g->depths
 * (ascending, distinct); -1 after a message. */
static int lg__parse_depths(const char *cmd, const char *val, lg__grid *g) {
    char buf[1024], *it[LG__MAX_LIST];
    int n;
    long long a, b;
    if (snprintf(buf, sizeof buf, "%s", val) >= (int)sizeof buf) { lg_cli_errorf(cmd, "--trees: list too long"); return -1; }
    char *dots = strstr(buf, "..");
    g->ndepths = 0;
    if (dots) {
        *dots = 0;
        if (lg_cli_parse_ll(cmd, "--trees", buf, 2, 10, &a) || lg_cli_parse_ll(cmd, "--trees", dots + 2, 2, 10, &b)) return -1;
        if (b < a) { lg_cli_errorf(cmd, "--trees: %s..%s is an empty range", buf, dots + 2); return -1; }
        for (long long d = a; d <= b; d++) g->depths[g->ndepths++] = (int)d;
        return 0;
    }
    if (lg__split(cmd, "--trees", buf, it, &n)) return -1;
    for (int i = 0; i < n; i++) {
        if (lg_cli_parse_ll(cmd, "--trees", it[i], 2, 10, &a)) return -1;
        for (int j = 0; j < i; j++)
            if (g->depths[j] == (int)a) { lg_cli_errorf(cmd, "--trees: %lld given twice", a); return -1; }
        g->depths[i] = (int)a;
        for (int j = i; j > 0 && g->depths[j - 1] > g->depths[j]; j--) {
            int t = g->depths[j]; g->depths[j] = g->depths[j - 1]; g->depths[j - 1] = t;
        }
    }
    g->ndepths = n;
    return 0;
}

/* The first 11 take a value (lg__depth_parse's vals, in this order). */
const char *const lg_cli_depth_option_names[] = {"model", "layers", "norms", "norm", "residual", "missing", "seeds",
                                                "out", "metric", "trees", "jobs", "json", "verbose", "quiet",
                                                "grad-logs", NULL};

/* Options of depth-study itself (the rest go to lg_cli_train_parse). */
static int lg__is(const char *a, const char *name, const char **val) {
    size_t n = strlen(name);
    if (strncmp(a, "--", 2)) return 0;
    a += 2;
    if (strncmp(a, name, n)) return 0;
    if (a[n] == 0) { *val = NULL; return 1; }
    if (a[n] == '=') { *val = a + n + 1; return 1; }
    return 0;
}

/* 1 when arg is a train option that takes its value from the next argument:
 * "--X" (no '=') with X the name of such an option, or the prefix of no other
 * option's name (getopt_long's abbreviations). */
static int lg__train_value_next(const char *arg) {
    if (strncmp(arg, "--", 2) || !arg[2] || strchr(arg, '=')) return 0;
    int n;
    const struct option *hit = lg_cli_match_option(lg_cli_train_option_table(), arg + 2, strlen(arg + 2), &n);
    return hit && hit->has_arg == required_argument;
}

/* ---- settings.txt: what every run of the study shares ---- */

/* One line of the settings that every run of model mi shares (everything but
 * the grid's lists, the seed and the thread count, which change no result):
 * "model gat: hidden=64 heads=8 epochs=200 ...". */
static void lg__settings_line(const lg__grid *g, const lg_train_opts *o, int mi, char *buf, size_t cap) {
    const lg_model_config *m = &o->mc;
    const lg_train_config *t = &o->tc;
    snprintf(buf, cap,
             "model %s: hidden=%d heads=%d epochs=%d lr=%.17g weight_decay=%.17g layer_weight_decay=%.17g "
             "dropout=%.17g att_dropout=%.17g self_loops=%d feature_norm=%s lip_scale=%.17g gate=%d plateau=%d "
             "patience=%d batch_size=%d train_eps=%d alpha=%.17g lambda=%.17g explode=%.17g,%.17g,%d",
             lg_model_kind_name(g->models[mi]), m->hidden, m->heads, t->epochs, t->lr, t->weight_decay,
             t->layer_weight_decay, m->dropout, m->att_dropout, m->self_loops, m->feature_norm_row ? "row" : "none",
             m->lip_scale, m->gate, t->plateau, t->patience, t->batch_size, m->train_eps, m->alpha, m->lambda,
             t->explode_threshold, t->explode_growth, t->explode_window);
    /* said only when not the default, so that the settings of the studies made
     * before the option still match their runs */
    if (m->init != LG_INIT_GLOROT) {
        const size_t len = strlen(buf);
        if (len < cap) snprintf(buf + len, cap - len, " init=%s", lg_init_name(m->init));
    }
}

/* 1 when two values of settings.txt (a[0..alen), b[0..blen)) are the same:
 * the same text, or comma-separated parts each the same text or numbers that
 * read as the same double (lr=0.005 and lr=0.0050000000000000001, which %.17g
 * writes for it: an edited file's number against the one written). */
static int lg__settings_value_same(const char *a, size_t alen, const char *b, size_t blen) {
    if (alen == blen && !strncmp(a, b, alen)) return 1;
    while (1) {
        const char *ca = memchr(a, ',', alen), *cb = memchr(b, ',', blen);
        const size_t la = ca ? (size_t)(ca - a) : alen, lb = cb ? (size_t)(cb - b) : blen;
        if (!ca != !cb) return 0;
        if (la != lb || strncmp(a, b, la)) { /* as numbers: each part whole */
            char x[64], y[64], *ex, *ey;
            if (!la || !lb || la >= sizeof x || lb >= sizeof y) return 0;
            memcpy(x, a, la), x[la] = 0;
            memcpy(y, b, lb), y[lb] = 0;
            const double dx = strtod(x, &ex), dy = strtod(y, &ey);
            if (*ex || *ey || isspace((unsigned char)x[0]) || isspace((unsigned char)y[0]) || dx != dy) return 0;
        }
        if (!ca) return 1;
        alen -= la + 1, a = ca + 1;
        blen -= lb + 1, b = cb + 1;
    }
}

/* 1 when two lines of settings.txt of one key say the same settings: the
 * same space-separated tokens in the same order, a name=value's value the
 * same by lg__settings_value_same. */
static int lg__settings_same(const char *a, const char *b) {
    while (1) {
        while (*a == ' ') a++;
        while (*b == ' ') b++;
        const size_t la = strcspn(a, " "), lb = strcspn(b, " ");
        if (!la || !lb) return !la && !lb;
        const char *ea = memchr(a, '=', la), *eb = memchr(b, '=', lb);
        if (!ea || !eb) { /* a token without a value: as text */
            if (ea || eb || la != lb || strncmp(a, b, la)) return 0;
        } else {
            const size_t ka = (size_t)(ea - a), kb = (size_t)(eb - b);
            if (ka != kb || strncmp(a, b, ka) ||
                !lg__settings_value_same(ea + 1, la - ka - 1, eb + 1, lb - kb - 1))
                return 0;
        }
        a += la, b += lb;
    }
}

/* Writes to buf (cap bytes) the settings in which two lines of settings.txt
 * with the same key differ: each space-separated name=value of either whose
 * value differs or that the other lacks, "epochs 50 there, 60 here"; the
 * whole of both values when they are not of that form (the data line). */
static void lg__settings_diff(const char *there, const char *here, char *buf, size_t cap) {
    size_t n = 0;
    buf[0] = 0;
    const char *a0 = strchr(there, ':'), *b0 = strchr(here, ':');
    a0 = a0 ? a0 + 1 : there;
    b0 = b0 ? b0 + 1 : here;
    for (int side = 0; side < 2; side++) { /* the tokens of one line, looked up in the other */
        const char *p = side ? b0 : a0, *other = side ? a0 : b0;
        while (*p) {
            while (*p == ' ') p++;
            const size_t len = strcspn(p, " ");
            const char *eq = memchr(p, '=', len);
            if (!len) break;
            if (!eq) { p += len; continue; }
            const size_t klen = (size_t)(eq - p);
            const char *q = other, *found = NULL; /* name= in the other line */
            for (; *q; q += strcspn(q, " ")) {
                while (*q == ' ') q++;
                if (!strncmp(q, p, klen + 1)) { found = q; break; }
            }
            const size_t flen = found ? strcspn(found, " ") : 0;
            const int same = found && lg__settings_value_same(found + klen + 1, flen - klen - 1, eq + 1, len - klen - 1);
            if (!same && (side == 0 || !found) && n < cap) { /* each difference once, from the recorded side */
                int w;
                if (side == 0)
                    w = snprintf(buf + n, cap - n, "%s%.*s %.*s there, %.*s here", n ? "; " : "", (int)klen, p,
                                 (int)(len - klen - 1), eq + 1, found ? (int)(flen - klen - 1) : 4,
                                 found ? found + klen + 1 : "none");
                else
                    w = snprintf(buf + n, cap - n, "%s%.*s none there, %.*s here", n ? "; " : "", (int)klen, p,
                                 (int)(len - klen - 1), eq + 1);
                if (w > 0) n += (size_t)w;
            }
            p += len;
        }
    }
    if (!n) snprintf(buf, cap, "'%s' there, '%s' here", a0 + (*a0 == ' '), b0 + (*b0 == ' '));
}

/* Checks this invocation against DIR/settings.txt, which records the data
 * line and one line per model of the runs in runs.csv: a line of this
 * invocation whose key (what precedes ':', "data" or "model M") is recorded
 * with another value is
 * refused (its runs would be mixed with the recorded ones in one table); new
 * models' lines are appended; a missing file is created. 0, or the exit
 * status after a message. */
static int lg__settings_check(const char *cmd, const char *dir, const lg__grid *g, const lg_train_opts *opts,
                              const char *data_line) {
    char path[4200], line[1024];
    if (snprintf(path, sizeof path, "%s/settings.txt", dir) >= (int)sizeof path) {
        lg_cli_errorf(cmd, "--out: path too long");
        return LG_EXIT_USAGE;
    }
    /* the lines wanted (100 KB: not on the stack, which a small ulimit -s
     * leaves at 64 KB) and whether runs.csv's settings have each */
    char(*want)[768] = malloc((LG__MAX_LIST + 1) * sizeof *want);
    if (!want) {
        lg_cli_errorf(cmd, "out of memory");
        return LG_EXIT_FAIL;
    }
    int n = 0, rc = 0;
    snprintf(want[n++], sizeof want[0], "%s", data_line);
    for (int mi = 0; mi < g->nmodels; mi++) lg__settings_line(g, &opts[mi], mi, want[n++], sizeof want[0]);
    int have[LG__MAX_LIST + 1] = {0}, keys = 0; /* keys: lines of settings.txt that name a setting wanted */
    int absent = 0;
    FILE *f = lg_cli_open_regular(cmd, path, &absent);
    if (!f && !absent) {
        rc = LG_EXIT_USAGE;
        goto done;
    }
    long lineno = 0;
    while (f && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = 0; /* (a CRLF file's lines too) */
        const char *colon = strchr(line, ':');
        size_t klen = colon ? (size_t)(colon - line) : strlen(line); /* the key: what precedes ':' */
        for (int k = 0; k < n; k++) {
            if (strncmp(want[k], line, klen) || want[k][klen] != ':') continue;
            if (!lg__settings_same(want[k], line)) {
                char diff[512];
                lg__settings_diff(line, want[k], diff, sizeof diff);
                lg_cli_errorf(cmd, "%s holds a study made with other settings (%.*s: %s):\n  %s:%ld: %s\n"
                              "  this command: %s\nGive another --out, or the same options as that study.", dir,
                              (int)klen, line, diff, path, lineno, line, want[k]);
                fclose(f);
                rc = LG_EXIT_USAGE;
                goto done;
            }
            have[k] = 1;
            keys++;
        }
    }
    if (f) fclose(f);
    if (!keys) { /* settings.txt missing, empty or foreign: runs.csv's runs, if any, are of settings unknown */
        char runs[4200], head[512] = "";
        snprintf(runs, sizeof runs, "%s/runs.csv", dir);
        int rows = 0;
        FILE *rf = NULL;
        size_t rlen = 0;
        /* (missing or not a regular file: no runs here; lg__runs_open says why, below) */
        if (lg__file_open_regular(runs, NULL, &rf, &rlen) == LG_OK) { /* a runs.csv of either format with a row after its header (a foreign one: lg__runs_open's error) */
            if (fgets(head, sizeof head, rf) && (!strcmp(head, lg__csv_header) || !strcmp(head, lg__csv_header_v1) ||
                                                   !strcmp(head, lg__csv_header_v0)))
                for (int ch; !rows && (ch = fgetc(rf)) != EOF;) rows = ch != '\n'; /* a row, not blank lines */
            fclose(rf);
        }
        if (rows) /* adopted, as a first-format study's (which had no settings.txt), but said */
            fprintf(stderr,
                    "lipgnn %s: note: %s %s: the runs already in runs.csv are taken as made with this command's "
                    "settings (now written there); if they were not, give another --out\n",
                    cmd, path, absent ? "is missing" : "names none of this study's settings");
    }
    int missing = 0;
    for (int k = 0; k < n; k++) missing |= !have[k];
    if (!missing) goto done;
    f = fopen(path, "a");
    if (!f) {
        lg_cli_errorf(cmd, "%s: cannot write: %s", path, strerror(errno));
        rc = LG_EXIT_USAGE;
        goto done;
    }
    for (int k = 0; k < n; k++)
        if (!have[k]) fprintf(f, "%s\n", want[k]);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0) {
        lg_cli_errorf(cmd, "%s: write error: %s", path, strerror(errno));
        rc = LG_EXIT_FAIL;
    }
done:
    free(want);
    return rc;
}

/* What the options of depth-study say (lg__depth_parse). */
typedef struct lg__depth_args {
    lg__grid *g;           /* the grid (owned)                                  */
    lg_train_opts *opts;   /* the train options of each model (owned)          */
    const char *dir;       /* --out, without trailing slashes: dirbuf           */
    char dirbuf[3904];
    int metric;            /* --metric: 0 train, 1 val, 2 test; -1 the default  */
    int json, verbose, quiet, grad_logs;
    int jobs;              /* --jobs: runs at once, each in a worker process    */
    int worker;            /* 1: this process is a worker (LG__WORKER_OPT)      */
    int help;              /* 1: the help was printed, nothing to run           */
    char **rest;           /* the options passed to lg_cli_train_parse (owned)  */
} lg__depth_args;

static void lg__depth_args_free(lg__depth_args *a) {
    free(a->g);
    free(a->opts);
    free(a->rest);
    memset(a, 0, sizeof *a);
}

/* Parses and checks the options of depth-study into a (every cell's
 * configuration valid), without loading data or touching files. Returns the
 * exit status: LG_EXIT_OK (a->help set if the help was printed), or an error
 * status after a message. a is to be freed with lg__depth_args_free. */
static int lg__depth_parse(const char *cmd, int argc, char **argv, lg__depth_args *a) {
    const char *const *valued = lg_cli_depth_option_names; /* its first 11 */
    static const char *const refused[] = {"save", "resume", "log", "grad-log", "save-best"};
    const char *vals[11] = {"gat", NULL, "none,lipschitz", NULL, "0", "0", "3", NULL, NULL, NULL, "1"};
    memset(a, 0, sizeof *a);
    a->metric = -1;
    char **rest = a->rest = malloc(((size_t)argc + 6) * sizeof *rest);
    int nrest = 0;
    if (!rest) { lg_cli_errorf(cmd, "out of memory"); return LG_EXIT_FAIL; }
    rest[nrest++] = (char *)cmd;
    for (int k = 1; k < argc; k++) {
        const char *arg = argv[k], *v = NULL;
        if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
            fputs(lg__depth_help, stdout);
            fputs(lg_cli_data_help, stdout);
            a->help = 1;
            return LG_EXIT_OK;
        }
        if (!strcmp(arg, "--json")) { a->json = 1; continue; }
        if (!strcmp(arg, "--verbose")) { a->verbose = 1; continue; }
        if (!strcmp(arg, "--quiet")) { a->quiet = 1; continue; }
        if (!strcmp(arg, "--grad-logs")) { a->grad_logs = 1; continue; }
        if (!strcmp(arg, LG__WORKER_OPT)) { a->worker = 1; continue; }
        int hit = 0;
        for (size_t i = 0; i < 11 && !hit; i++) {
            if (!lg__is(arg, valued[i], &v)) continue;
            hit = 1;
            if (!v) {
                if (k + 1 >= argc) { lg_cli_errorf(cmd, "--%s needs a value", valued[i]); return LG_EXIT_USAGE; }
                v = argv[++k];
                char opt[32];
                snprintf(opt, sizeof opt, "--%s", valued[i]);
                if (lg_cli_check_value(cmd, opt, v, lg_cli_train_option_table(), lg_cli_depth_option_names))
                    return LG_EXIT_USAGE;
            }
            vals[i == 3 ? 2 : i] = v; /* --norm is --norms */
        }
        if (hit) continue;
        for (size_t i = 0; i < sizeof refused / sizeof *refused; i++)
            if (lg__is(arg, refused[i], &v)) {
                lg_cli_errorf(cmd, "--%s is not supported by depth-study (see --grad-logs)", refused[i]);
                return LG_EXIT_USAGE;
            }
        rest[nrest++] = argv[k];
        if (lg__train_value_next(arg) && k + 1 < argc) { /* its value, whatever it looks like */
            if (lg_cli_check_value(cmd, arg, argv[k + 1], lg_cli_train_option_table(), lg_cli_depth_option_names))
                return LG_EXIT_USAGE;
            rest[nrest++] = argv[++k];
        }
    }
    if (vals[7] && lg_cli_path_value(cmd, "--out", vals[7])) return LG_EXIT_USAGE;
    if (!vals[7]) { lg_cli_errorf(cmd, "--out DIR is required"); return LG_EXIT_USAGE; }
    if (strlen(vals[7]) > 3900) { lg_cli_errorf(cmd, "--out: path too long"); return LG_EXIT_USAGE; }
    if (!vals[1] && !vals[9]) {
        lg_cli_errorf(cmd, "--layers L1,L2,... is required (or --trees D1,D2,...)");
        return LG_EXIT_USAGE;
    }
    lg_cli_trim_dir(a->dirbuf, sizeof a->dirbuf, vals[7]); /* (fits: checked above) */
    a->dir = a->dirbuf;
    lg__grid *g = a->g = calloc(1, sizeof *g);
    if (!g) { lg_cli_errorf(cmd, "out of memory"); return LG_EXIT_FAIL; }
    char first_depth[8]; /* lives as long as rest is used: this function */
    g->depths[0] = 0;
    g->ndepths = 1;
    if (vals[9]) {
        if (lg__parse_depths(cmd, vals[9], g)) return LG_EXIT_USAGE;
        g->xdepth = g->ndepths > 1 || !vals[1];
        /* the train options see one depth (its data options, its TREES defaults) */
        snprintf(first_depth, sizeof first_depth, "%d", g->depths[0]);
        rest[nrest++] = "--trees";
        rest[nrest++] = first_depth;
    }
    {
        char *lists[5];
        for (int i = 0; i < 5; i++) lists[i] = i == 1 && !vals[1] ? NULL : strdup(vals[i == 0 ? 0 : i == 1 ? 1 : i == 2 ? 2 : i + 1]);
        int bad = !lists[0] || (vals[1] && !lists[1]) || !lists[2] || !lists[3] || !lists[4];
        if (bad) lg_cli_errorf(cmd, "out of memory");
        else bad = lg__parse_lists(cmd, g, lists[0], lists[1], lists[2], lists[3], lists[4]);
        for (int i = 0; i < 5; i++) free(lists[i]);
        if (bad) return LG_EXIT_USAGE;
    }
    long long v;
    if (lg_cli_parse_ll(cmd, "--seeds", vals[6], 1, 100000, &v)) return LG_EXIT_USAGE;
    g->seeds = v;
    if (lg_cli_parse_ll(cmd, "--jobs", vals[10], 1, LG__MAX_JOBS, &v)) return LG_EXIT_USAGE;
    a->jobs = (int)v;
    if (vals[8]) {
        for (int i = 0; i < 3; i++)
            if (!strcmp(vals[8], lg__metric_names[i])) a->metric = i;
        if (a->metric < 0) { lg_cli_errorf(cmd, "--metric: '%s' is not test, val or train", vals[8]); return LG_EXIT_USAGE; }
    }
    /* one set of options per model: its defaults, then the user's options */
    lg_train_opts *opts = a->opts = calloc((size_t)g->nmodels, sizeof *opts);
    if (!opts) { lg_cli_errorf(cmd, "out of memory"); return LG_EXIT_FAIL; }
    for (int mi = 0; mi < g->nmodels; mi++) {
        rest[nrest] = "--model";
        rest[nrest + 1] = (char *)lg_model_kind_name(g->models[mi]);
        rest[nrest + 2] = NULL;
        int rc = lg_cli_train_parse(cmd, nrest + 2, rest, &opts[mi]);
        if (rc > 0) { a->help = 1; return LG_EXIT_OK; }
        if (rc < 0) return LG_EXIT_USAGE;
        if (opts[mi].tc.epochs < 1) { /* train's --epochs 0 builds a model and evaluates nothing */
            lg_cli_errorf(cmd, "--epochs: a study needs at least 1 epoch (0 trains and evaluates nothing)");
            return LG_EXIT_USAGE;
        }
        if (opts[mi].unused[0]) /* an option for another model of the grid */
            fprintf(stderr, "lipgnn %s: note: %s: ignored in the runs of --model %s\n", cmd, opts[mi].unused,
                    lg_model_kind_name(g->models[mi]));
        opts[mi].quiet = 1;
        opts[mi].json = 0;
        opts[mi].verbose = 0;
        opts[mi].save = opts[mi].resume = opts[mi].log = opts[mi].grad_log = opts[mi].save_best = NULL;
    }
    /* a (model, residual, norm) combination that the model refuses at every
     * depth and missing share is skipped (said on stderr and in summary.md),
     * so that one study can set models side by side whose norms differ; a
     * model left with nothing to run is an error */
    for (int mi = 0; mi < g->nmodels; mi++) {
        int any = 0;
        char why[512] = "";
        for (int ri = 0; ri < g->nresidual; ri++)
            for (int ni = 0; ni < g->nnorms; ni++) {
                int ok = 0;
                for (int lj = 0; lj < lg__nlser(g) && !ok; lj++)
                    for (int pi = 0; pi < lg__npoints(g) && !ok; pi++)
                        for (int xi = 0; xi < g->nmissing && !ok; xi++) {
                            lg_train_opts o = opts[mi];
                            o.mc.layers = lg__cell_layers(g, lj, pi);
                            o.mc.att_norm = g->att[ni];
                            o.mc.node_norm = g->node[ni];
                            o.mc.residual = g->residual[ri];
                            o.tc.missing = g->missing[xi];
                            ok = lg_model_config_check(&o.mc) == LG_OK;
                            if (!ok) snprintf(why, sizeof why, "%s", lg_last_error());
                        }
                g->skip[mi][ri][ni] = !ok;
                any |= ok;
            }
        if (!any) {
            lg_cli_errorf(cmd, "--model %s accepts none of the --norms and --residual given: %s",
                          lg_model_kind_name(g->models[mi]), why);
            return LG_EXIT_USAGE;
        }
        for (int ri = 0; ri < g->nresidual; ri++)
            for (int ni = 0; ni < g->nnorms; ni++)
                if (g->skip[mi][ri][ni]) {
                    g->nskip++;
                    if (!a->quiet)
                        fprintf(stderr, "lipgnn %s: not run: --model %s --norm %s --residual %d (the model refuses it)\n",
                                cmd, lg_model_kind_name(g->models[mi]), g->norm[ni], g->residual[ri]);
                }
    }
    /* every cell that runs must be valid before anything runs */
    LG__FOR_SERIES(g)
    for (int pi = 0; pi < lg__npoints(g); pi++) {
        lg_train_opts o = opts[mi];
        o.mc.layers = lg__cell_layers(g, lj, pi);
        o.mc.att_norm = g->att[ni];
        o.mc.node_norm = g->node[ni];
        o.mc.residual = g->residual[ri];
        o.tc.missing = g->missing[xi];
        if (lg_model_config_check(&o.mc) != LG_OK || lg_train_config_check(&o.tc) != LG_OK) {
            lg_cli_errorf(cmd, "--model %s --layers %d --norm %s%s: %s", lg_model_kind_name(o.mc.kind), o.mc.layers,
                          g->norm[ni], o.mc.residual ? " --residual 1" : "", lg_last_error());
            return LG_EXIT_USAGE;
        }
    }
    g->base_seed = opts[0].data.seed;
    return LG_EXIT_OK;
}

/* ---- running the grid's cells ---- */

/* One run of the grid: seed index k, series (mi, ri, xi, ni, lj), point pi. */
typedef struct lg__cell {
    long long k;
    int mi, ri, xi, ni, lj, pi;
} lg__cell;

/* The model name and the training seed of cell c. */
static const char *lg__cell_model(const lg__grid *g, const lg__cell *c) { return lg_model_kind_name(g->models[c->mi]); }
static uint64_t lg__cell_seed(const lg__grid *g, const lg__cell *c) { return g->base_seed + (uint64_t)c->k; }

/* The record of cell c in rs, or NULL. */
static const lg__rec *lg__cell_find(const lg__grid *g, const lg__recs *rs, const lg__cell *c) {
    return lg__recs_find(rs, lg__cell_model(g, c), lg__cell_depth(g, c->pi), lg__cell_layers(g, c->lj, c->pi),
                         g->norm[c->ni], g->residual[c->ri], g->missing_s[c->xi], lg__cell_seed(g, c));
}

/* "gat lipschitz d=3 L=4 res missing=0.5 seed 1": cell c for messages (no
 * "missing=" at rate 0). */
static void lg__cell_label(const lg__grid *g, const lg__cell *c, char *buf, size_t cap) {
    const int depth = lg__cell_depth(g, c->pi);
    char dstr[16] = "", mstr[48] = "";
    if (depth) snprintf(dstr, sizeof dstr, " d=%d", depth);
    if (g->missing[c->xi] != 0) snprintf(mstr, sizeof mstr, " missing=%.32s", g->missing_s[c->xi]);
    snprintf(buf, cap, "%s %s%s L=%d%s%s seed %llu", lg__cell_model(g, c), g->norm[c->ni], dstr,
             lg__cell_layers(g, c->lj, c->pi), g->residual[c->ri] ? " res" : "", mstr,
             (unsigned long long)lg__cell_seed(g, c));
}

/* The cells of the grid (total runs) not in rs, in the study's order (seeds
 * outer), into *out (malloc'd, *n of them); -1 on out of memory. */
static int lg__cells_todo(const lg__grid *g, const lg__recs *rs, long long total, lg__cell **out, long long *n) {
    long long m = 0;
    lg__cell *c = malloc((size_t)(total > 0 ? total : 1) * sizeof *c);
    if (!c) return -1;
    for (long long k = 0; k < g->seeds; k++)
        LG__FOR_SERIES(g)
    for (int pi = 0; pi < lg__npoints(g); pi++) {
        lg__cell x = {k, mi, ri, xi, ni, lj, pi};
        if (!lg__cell_find(g, rs, &x)) c[m++] = x;
    }
    *out = c;
    *n = m;
    return 0;
}

/* *o = the train options of cell c: its model's, with the cell's layers,
 * norms, residual, missing features and seed. */
static void lg__cell_opts(const lg__depth_args *a, const lg__cell *c, lg_train_opts *o) {
    const lg__grid *g = a->g;
    *o = a->opts[c->mi];
    o->mc.layers = lg__cell_layers(g, c->lj, c->pi);
    o->mc.att_norm = g->att[c->ni];
    o->mc.node_norm = g->node[c->ni];
    o->mc.residual = g->residual[c->ri];
    o->tc.missing = g->missing[c->xi];
    o->tc.seed = lg__cell_seed(g, c);
}

/* need[i] = the memory of a worker running todo[i] (lg_cli_run_memory: its
 * model and its own copy of the data set), for --jobs to keep the runs in
 * progress within the memory limit; 0 where unknown: TREES of another depth
 * than ds's (ds_depth), whose data set is not loaded here, or a model the
 * estimate refuses (the worker says why). The seeds of a series share one
 * estimate (a seed moves it only through --missing's choice of nodes).
 * Returns the array (free), or NULL when out of memory. */
static double *lg__cells_need(const lg__depth_args *a, const lg__cell *todo, long long ntodo, const lg_dataset *ds,
                              int ds_depth) {
    const lg__grid *g = a->g;
    const size_t keys = (size_t)g->nmodels * 2 * (size_t)g->nmissing * (size_t)g->nnorms * (size_t)lg__nlser(g) *
                        (size_t)lg__npoints(g);
    double *need = malloc((size_t)(ntodo > 0 ? ntodo : 1) * sizeof *need), *known = malloc(keys * sizeof *known);
    if (!need || !known) {
        free(need);
        free(known);
        return NULL;
    }
    for (size_t q = 0; q < keys; q++) known[q] = -1;
    for (long long i = 0; i < ntodo; i++) {
        const lg__cell *c = &todo[i];
        const size_t key = (((((size_t)c->mi * 2 + (size_t)c->ri) * (size_t)g->nmissing + (size_t)c->xi) *
                                 (size_t)g->nnorms + (size_t)c->ni) * (size_t)lg__nlser(g) + (size_t)c->lj) *
                               (size_t)lg__npoints(g) + (size_t)c->pi;
        if (known[key] < 0) {
            known[key] = 0;
            if (lg__cell_depth(g, c->pi) == ds_depth) {
                lg_train_opts o;
                lg_trainer_mem est;
                double total;
                lg__cell_opts(a, c, &o);
                if (lg_cli_run_memory(&o.mc, &o.tc, ds, &est, &total) == LG_OK) known[key] = total;
            }
        }
        need[i] = known[key];
    }
    free(known);
    return need;
}

/* Runs cell c on *ds (reloaded, for TREES of another depth, into *ds and
 * *ds_depth) and writes its runs.csv row, with its newline, into row (cap
 * bytes). Returns the exit status of the run: LG_EXIT_OK or LG_EXIT_EXPLODED
 * with a row; another status, after a message, without one (*interrupted set
 * if a signal stopped it). */
static int lg__cell_run(const char *cmd, const lg__depth_args *a, const lg__cell *c, lg_dataset **ds, int *ds_depth,
                        char *row, size_t cap, int *interrupted) {
    const lg__grid *g = a->g;
    const char *model = lg__cell_model(g, c);
    const uint64_t seed = lg__cell_seed(g, c);
    const int layers = lg__cell_layers(g, c->lj, c->pi), depth = lg__cell_depth(g, c->pi);
    *interrupted = 0;
    if (depth != *ds_depth || !*ds) { /* TREES of another depth: one data set in memory at a time */
        lg_dataset_free(*ds);
        *ds = NULL;
        lg_cli_data d = a->opts[0].data;
        d.trees = depth;
        int st = lg_cli_data_load(cmd, &d, a->opts[c->mi].max_memory, ds);
        if (st) return st;
        *ds_depth = depth;
    }
    lg_train_opts o;
    lg__cell_opts(a, c, &o);
    char glog[4400];
    if (a->grad_logs) {
        char dpart[16] = "";
        if (depth) snprintf(dpart, sizeof dpart, "_d%d", depth);
        int n = snprintf(glog, sizeof glog, "%s/grad_%s_%s_r%d_m%s%s_L%d_seed%llu.csv", a->dir, model, g->norm[c->ni],
                         g->residual[c->ri], g->missing_s[c->xi], dpart, layers, (unsigned long long)seed);
        if (n < 0 || (size_t)n >= sizeof glog) { lg_cli_errorf(cmd, "--out: path too long"); return LG_EXIT_USAGE; }
        o.grad_log = glog;
    }
    char lab[256];
    lg__cell_label(g, c, lab, sizeof lab);
    o.label = lab; /* its messages name it: with --jobs, runs' messages interleave */
    lg_train_summary s;
    int rc = lg_cli_train_run(cmd, &o, *ds, &s, interrupted);
    /* an interrupted run is not recorded (a signal between runs makes the
     * next one stop before its first epoch, with the signal's status) */
    if (*interrupted) return rc ? rc : LG_EXIT_FAIL;
    if (rc != LG_EXIT_OK && rc != LG_EXIT_EXPLODED) return rc;
    /* the fields that may have no value (lg__csv_header) */
    char va[16] = "", ta[16] = "", tb[16] = "", fe[24] = "", el[16] = "", be[24] = "";
    if (s.best_epoch > 0) snprintf(be, sizeof be, "%ld", s.best_epoch);
    if ((*ds)->n_val > 0) snprintf(va, sizeof va, "%.6f", s.val_acc);
    if ((*ds)->n_test > 0) snprintf(ta, sizeof ta, "%.6f", s.test_acc), snprintf(tb, sizeof tb, "%.6f", s.test_acc_at_best_val);
    if (s.exploded) snprintf(fe, sizeof fe, "%ld", s.first_explosion_epoch), snprintf(el, sizeof el, "%d", s.explosion_layer);
    int n = snprintf(row, cap, "%s,%d,%d,%s,%d,%s,%llu,%ld,%.6f,%s,%s,%.6f,%s,%d,%s,%.6g,%.4f,%s,%.6f,%s,%.3f,%d,%s\n",
                     model, depth, layers, g->norm[c->ni], g->residual[c->ri], g->missing_s[c->xi],
                     (unsigned long long)seed, s.epochs_run, s.train_acc, va, ta, s.best_val_acc, tb, s.exploded, fe,
                     s.max_layer_grad_norm, s.epoch_ms_median, be,
                     s.train_acc_at_best_val, el, s.epochs_ms_total / 1000, omp_get_max_threads(), lg_version());
    if (n < 0 || (size_t)n >= cap) { lg_cli_errorf(cmd, "runs.csv row too long"); return LG_EXIT_FAIL; }
    return rc;
}

/* What recording a finished run needs (the study's parent process). */
typedef struct lg__recorder {
    const char *cmd, *dir, *path; /* command, --out, runs.csv's path   */
    FILE *runs;                   /* runs.csv, open for appending       */
    lg__recs *rs;                 /* the records                         */
    lg__study *study;             /* counts, for summary.md and depth.svg */
    int verbose, tty;             /* --verbose; progress on a terminal   */
} lg__recorder;

/* Records the row of cell c (a line of runs.csv with its newline, which took
 * dt seconds): checks that it is that cell's, appends it to runs.csv (flushed
 * and synced), adds its record, says it (--verbose) and rewrites summary.md
 * and depth.svg. LG_EXIT_OK, or an error status after a message. */
static int lg__record(const lg__recorder *w, const lg__cell *c, const char *row, double dt) {
    const lg__grid *g = w->study->g;
    char line[1024], lab[256];
    size_t len = strlen(row);
    lg__rec r;
    lg__cell_label(g, c, lab, sizeof lab);
    if (len < 2 || len >= sizeof line || row[len - 1] != '\n') {
        lg_cli_errorf(w->cmd, "run %s: malformed result '%.120s'", lab, row);
        return LG_EXIT_FAIL;
    }
    memcpy(line, row, len - 1);
    line[len - 1] = 0;
    const lg__recs one = {&r, 1, 1};
    if (lg__parse_rec(line, &r, NULL) || !lg__cell_find(g, &one, c)) {
        lg_cli_errorf(w->cmd, "run %s: its result '%.120s' is not that run's row", lab, row);
        return LG_EXIT_FAIL;
    }
    if (fputs(row, w->runs) < 0 || fflush(w->runs) != 0 || fsync(fileno(w->runs)) != 0) {
        lg_cli_errorf(w->cmd, "%s: write error: %s", w->path, strerror(errno));
        return LG_EXIT_FAIL;
    }
    if (lg__recs_push(w->rs, &r)) { lg_cli_errorf(w->cmd, "out of memory"); return LG_EXIT_FAIL; }
    w->study->done++;
    if (w->verbose) {
        if (w->tty) fputs("\r\033[K", stderr);
        char dstr[16] = ""; /* " d=5" for TREES */
        if (r.trees) snprintf(dstr, sizeof dstr, " d=%d", r.trees);
        char vstr[24] = ""; /* " val 0.7120", none without a validation split */
        if (!w->study->noval) snprintf(vstr, sizeof vstr, " val %.4f", r.acc[1]);
        char tstr[16]; /* the test accuracy, n/a without a test split */
        lg_cli_acc(tstr, sizeof tstr, r.acc[2], !isnan(r.acc[2]));
        fprintf(stderr, "[%lld/%lld] %s %s%s L=%d res=%d missing=%s seed %llu: train %.4f%s test %s%s (%.1f s)\n",
                w->study->done, w->study->total, r.model, r.norm, dstr, r.layers, r.residual, r.missing,
                (unsigned long long)r.seed, r.acc[0], vstr, tstr, r.exploded ? " EXPLODED" : "", dt);
    }
    return lg__write_outputs(w->cmd, w->dir, w->study) ? LG_EXIT_FAIL : LG_EXIT_OK;
}

/* The progress line on a terminal: done/total, what runs, elapsed, ETA
 * (this session's time per unit of work x the work left / jobs; a run's
 * work is its layers and epochs, lg__cell_work, so that a 30-layer run is
 * not taken for as long as a 2-layer one). */
static void lg__progress(const lg__study *st, const char *running, double t0, double run_time, double work_done,
                         double work_left, int jobs) {
    char el[32], eta[32];
    double per = work_done > 0 ? run_time / work_done : NAN;
    lg__fmt_time(lg__now() - t0, el, sizeof el);
    lg__fmt_time(per * work_left / (double)jobs, eta, sizeof eta);
    fprintf(stderr, "\r\033[K[%lld/%lld] %s | %s elapsed, ETA %s\r", st->done, st->total, running, el, eta);
    fflush(stderr);
}

/* A run's work for the estimate: its layers (and the input and output
 * layers) times its epochs. */
static double lg__cell_work(const lg__depth_args *a, const lg__cell *c) {
    return (double)(lg__cell_layers(a->g, c->lj, c->pi) + 2) * (double)a->opts[c->mi].tc.epochs;
}

/* The work of cells [from, n) of todo. */
static double lg__cells_work(const lg__depth_args *a, const lg__cell *todo, long long from, long long n) {
    double w = 0;
    for (long long i = from; i < n; i++) w += lg__cell_work(a, &todo[i]);
    return w;
}

/* The runs of todo one after the other in this process. */
static int lg__run_serial(const lg__depth_args *a, const lg__recorder *w, const lg__cell *todo, long long ntodo,
                          lg_dataset **ds, int *ds_depth) {
    double t0 = lg__now(), run_time = 0, done = 0, left = lg__cells_work(a, todo, 0, ntodo);
    for (long long i = 0; i < ntodo; i++) {
        char row[1024], lab[256];
        if (w->tty) {
            lg__cell_label(a->g, &todo[i], lab, sizeof lab);
            lg__progress(w->study, lab, t0, run_time, done, left, 1);
        }
        double t1 = lg__now();
        int interrupted;
        int rc = lg__cell_run(w->cmd, a, &todo[i], ds, ds_depth, row, sizeof row, &interrupted);
        if (rc != LG_EXIT_OK && rc != LG_EXIT_EXPLODED) return rc;
        double dt = lg__now() - t1;
        run_time += dt;
        done += lg__cell_work(a, &todo[i]);
        left -= lg__cell_work(a, &todo[i]);
        rc = lg__record(w, &todo[i], row, dt);
        if (rc) return rc;
    }
    return LG_EXIT_OK;
}

/* ---- --jobs: worker processes ---- */

/* A worker (the hidden LG__WORKER_OPT): reads cells from stdin, one line
 * "k mi ri xi ni lj pi" each, runs them and writes each one's runs.csv row to
 * stdout; a run that fails writes "error STATUS" and ends the worker with that
 * status (an interrupted one writes nothing). Ends with 0 at the end of stdin. */
static int lg__worker(const char *cmd, const lg__depth_args *a) {
    const lg__grid *g = a->g;
    lg_dataset *ds = NULL;
    int ds_depth = -1, status = LG_EXIT_OK;
    char line[256], row[1024];
    lg_cli_set_threads(cmd, a->opts[0].threads);
    while (fgets(line, sizeof line, stdin)) {
        lg__cell c;
        if (sscanf(line, "%lld %d %d %d %d %d %d", &c.k, &c.mi, &c.ri, &c.xi, &c.ni, &c.lj, &c.pi) != 7 || c.k < 0 ||
            c.k >= g->seeds || c.mi < 0 || c.mi >= g->nmodels || c.ri < 0 || c.ri >= g->nresidual || c.xi < 0 ||
            c.xi >= g->nmissing || c.ni < 0 || c.ni >= g->nnorms || c.lj < 0 || c.lj >= lg__nlser(g) || c.pi < 0 ||
            c.pi >= lg__npoints(g) || g->skip[c.mi][c.ri][c.ni]) {
            lg_cli_errorf(cmd, "worker: bad cell '%.60s'", line);
            status = LG_EXIT_FAIL;
            break;
        }
        int interrupted;
        status = lg__cell_run(cmd, a, &c, &ds, &ds_depth, row, sizeof row, &interrupted);
        if (status == LG_EXIT_EXPLODED) status = LG_EXIT_OK;
        if (interrupted) break;
        if (status != LG_EXIT_OK) {
            printf("error %d\n", status);
            break;
        }
        if (fputs(row, stdout) < 0 || lg_cli_flush(stdout) != 0) { status = LG_EXIT_FAIL; break; } /* the parent is gone */
    }
    lg_cli_flush(stdout);
    lg_dataset_free(ds);
    return status;
}

static volatile sig_atomic_t lg__jobs_signal;  /* the last stop signal the parent received */
static volatile sig_atomic_t lg__jobs_to_pass; /* how many of them a process sent (kill), not the terminal */

/* The parent's handler. A terminal's Ctrl-C (si_code SI_KERNEL) reaches the
 * workers too, in the terminal's process group: passing it on would give each
 * a second signal, which ends a run at once (cmd_train.c's SA_RESETHAND) where
 * the first stops it at the end of its epoch. A signal sent to the parent by a
 * process is passed on, the first and the second alike. */
static void lg__on_jobs_signal(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    lg__jobs_signal = sig;
    if (!si || si->si_code != SI_KERNEL) lg__jobs_to_pass = lg__jobs_to_pass + 1;
}

/* One worker process as the parent sees it. */
typedef struct lg__job {
    pid_t pid;        /* its process (0: ended and reaped)          */
    int in, out;      /* its stdin (written; -1 closed), stdout (read) */
    long long cell;   /* the index in todo of its run (-1: idle)    */
    double t1;        /* when that run was sent                      */
    char buf[1024];   /* the start of a line of its output           */
    size_t len;       /* bytes in buf                                */
} lg__job;

/* Sends todo[i] to job j; 0, or -1 if the worker is gone. */
static int lg__job_send(lg__job *j, const lg__cell *todo, long long i) {
    char line[160];
    const lg__cell *c = &todo[i];
    int n = snprintf(line, sizeof line, "%lld %d %d %d %d %d %d\n", c->k, c->mi, c->ri, c->xi, c->ni, c->lj, c->pi);
    if (write(j->in, line, (size_t)n) != n) return -1; /* a line is far below PIPE_BUF: one write */
    j->cell = i;
    j->t1 = lg__now();
    return 0;
}

static void lg__job_close_in(lg__job *j) {
    if (j->in >= 0) close(j->in);
    j->in = -1;
}

extern char **environ;

/* pipe(2) with both ends close-on-exec (a worker inherits only the two that
 * posix_spawn puts on its stdin and stdout); 0 or -1. */
static int lg__pipe_cloexec(int p[2]) {
    if (pipe(p)) return -1;
    if (fcntl(p[0], F_SETFD, FD_CLOEXEC) == 0 && fcntl(p[1], F_SETFD, FD_CLOEXEC) == 0) return 0;
    close(p[0]);
    close(p[1]);
    p[0] = p[1] = -1;
    return -1;
}

/* Starts a worker: this program with the study's own arguments, LG__WORKER_OPT
 * and --threads T, its stdin and stdout pipes to the parent. 0, or -1 after a
 * message. */
static int lg__job_start(const char *cmd, lg__job *j, int argc, char **argv, int threads) {
    int pin[2] = {-1, -1}, pout[2] = {-1, -1};
    char tbuf[16], **wargv = malloc(((size_t)argc + 7) * sizeof *wargv);
    posix_spawn_file_actions_t fa;
    int fa_ok = 0, rc = -1;
    if (!wargv) { lg_cli_errorf(cmd, "out of memory"); return -1; }
    snprintf(tbuf, sizeof tbuf, "%d", threads);
    int n = 0;
    wargv[n++] = "lipgnn";
    for (int k = 0; k < argc; k++) wargv[n++] = argv[k]; /* argv[0] is "depth-study" */
    wargv[n++] = LG__WORKER_OPT;
    wargv[n++] = "--quiet"; /* the parent says what the parse has to say */
    wargv[n++] = "--threads";
    wargv[n++] = tbuf;
    wargv[n] = NULL;
    if (lg__pipe_cloexec(pin) || lg__pipe_cloexec(pout)) {
        lg_cli_errorf(cmd, "--jobs: pipe: %s", strerror(errno));
        goto out;
    }
    if (posix_spawn_file_actions_init(&fa)) goto out;
    fa_ok = 1;
    if (posix_spawn_file_actions_adddup2(&fa, pin[0], 0) || posix_spawn_file_actions_adddup2(&fa, pout[1], 1)) {
        lg_cli_errorf(cmd, "--jobs: out of memory");
        goto out;
    }
    /* this program's file, as the kernel (or valgrind, which runs it) says */
    char exe[4096];
    ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (el > 0) exe[el] = 0;
    else snprintf(exe, sizeof exe, "/proc/self/exe");
    int e = posix_spawn(&j->pid, exe, &fa, NULL, wargv, environ);
    if (e) {
        lg_cli_errorf(cmd, "--jobs: cannot start a worker (%s): %s", exe, strerror(e));
        goto out;
    }
    j->in = pin[1];
    j->out = pout[0];
    pin[1] = pout[0] = -1;
    j->cell = -1;
    j->len = 0;
    rc = 0;
out:
    if (fa_ok) posix_spawn_file_actions_destroy(&fa);
    for (int k = 0; k < 2; k++) {
        if (pin[k] >= 0) close(pin[k]);
        if (pout[k] >= 0) close(pout[k]);
    }
    free(wargv);
    return rc;
}

/* The runs of todo in a.jobs worker processes, each sent the next run as it
 * finishes one; rows are recorded here as they come. The next run waits,
 * with a note, while it would take the memory of the runs in progress past
 * the limit (need: lg__cells_need; limit: lg_cli_memory_limit, named by
 * what; 0: none), and is sent when it fits or no other run is in progress;
 * one over the limit alone is sent at once, for its worker to refuse it as
 * train does. A failed run stops the
 * sending (the runs in progress finish and are recorded); a stop signal
 * (lg_cli_catch_stop) is passed on to the workers (lg__on_jobs_signal), whose
 * runs in progress are not recorded, and a second one ends them at once. */
static int lg__run_jobs(const lg__depth_args *a, const lg__recorder *w, const lg__cell *todo, long long ntodo,
                        const double *need, double limit, const char *what, int argc, char **argv) {
    const char *cmd = w->cmd;
    int nj = a->jobs < ntodo ? a->jobs : (int)ntodo, threads = a->opts[0].threads, status = LG_EXIT_OK;
    /* per --jobs, not per worker started: a run's thread count (and so its
     * bits) does not depend on how many runs were left */
    if (threads <= 0) threads = omp_get_num_procs() / a->jobs > 1 ? omp_get_num_procs() / a->jobs : 1;
    lg__job *jobs = calloc((size_t)nj, sizeof *jobs);
    struct pollfd *pf = calloc((size_t)nj, sizeof *pf);
    if (!jobs || !pf) {
        free(jobs);
        free(pf);
        lg_cli_errorf(cmd, "out of memory");
        return LG_EXIT_FAIL;
    }
    struct sigaction sa, old_stop[LG_CLI_NSTOP], old_pipe;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = lg__on_jobs_signal;
    sa.sa_flags = SA_SIGINFO;
    lg_cli_catch_stop(&sa, old_stop);
    sa.sa_flags = 0;
    sa.sa_handler = SIG_IGN; /* a worker gone: its pipe's write fails with EPIPE */
    sigaction(SIGPIPE, &sa, &old_pipe);
    if (!a->quiet) {
        fprintf(stderr, "lipgnn %s: %d jobs of %d thread%s each\n", cmd, nj, threads, threads > 1 ? "s" : "");
        if (nj * threads > omp_get_num_procs())
            fprintf(stderr, "note: %d jobs x %d threads is more than the %d cores: the runs will slow each other "
                    "down (--threads is each run's)\n", nj, threads, omp_get_num_procs());
    }
    long long next = 0, session = 0, waited = -1;
    double work_done = 0, work_all = lg__cells_work(a, todo, 0, ntodo); /* for the progress line's estimate */
    int live = 0, sending = 1;
    sig_atomic_t passed = 0; /* signals passed on to the workers (lg__jobs_to_pass) */
    double t0 = lg__now(), run_time = 0;
    for (int i = 0; i < nj; i++) jobs[i].in = jobs[i].out = jobs[i].cell = -1;
    for (int i = 0; i < nj; i++) {
        if (lg__job_start(cmd, &jobs[i], argc, argv, threads)) { status = LG_EXIT_FAIL; sending = 0; break; }
        live++;
    }
    while (live > 0) {
        for (; passed < lg__jobs_to_pass; passed++) /* those from a terminal the workers have already */
            for (int i = 0; i < nj; i++)
                if (jobs[i].pid > 0) kill(jobs[i].pid, (int)lg__jobs_signal);
        if (lg__jobs_signal) sending = 0;
        /* the next runs to the idle workers, in order, while they fit */
        for (int i = 0; sending && i < nj && next < ntodo; i++) {
            if (jobs[i].cell >= 0 || jobs[i].in < 0) continue;
            int busy = 0;
            double running = 0;
            for (int q = 0; q < nj; q++)
                if (jobs[q].cell >= 0) { busy++; running += need[jobs[q].cell]; }
            /* a run over the limit alone goes at once: its worker refuses it */
            if (busy > 0 && limit > 0 && need[next] <= limit && running + need[next] > limit) {
                if (waited != next && !a->quiet) {
                    char lab[256];
                    const char *u;
                    const double U = lg_cli_unit(limit, &u);
                    lg__cell_label(a->g, &todo[next], lab, sizeof lab);
                    if (w->tty) fputs("\r\033[K", stderr);
                    fprintf(stderr, "note: run %s waits for memory: it needs about %.2f %s, the %d run%s in progress "
                            "%.2f, more than %s (%.2f %s) together\n", lab, need[next] / U, u, busy,
                            busy > 1 ? "s" : "", running / U, what, limit / U, u);
                    waited = next;
                }
                break;
            }
            if (lg__job_send(&jobs[i], todo, next) == 0) next++;
        }
        if (!sending || next >= ntodo) /* idle workers end at the end of their input */
            for (int i = 0; i < nj; i++)
                if (jobs[i].cell < 0) lg__job_close_in(&jobs[i]);
        if (w->tty) {
            char running[512] = "";
            size_t used = 0;
            for (int i = 0; i < nj && used < sizeof running - 1; i++) {
                if (jobs[i].cell < 0) continue;
                char lab[256];
                lg__cell_label(a->g, &todo[jobs[i].cell], lab, sizeof lab);
                int m = snprintf(running + used, sizeof running - used, "%s%s", used ? "; " : "", lab);
                if (m > 0) used += (size_t)m;
            }
            lg__progress(w->study, used ? running : "finishing", t0, run_time, work_done, work_all - work_done, nj);
        }
        int np = 0;
        for (int i = 0; i < nj; i++)
            if (jobs[i].out >= 0) pf[np++] = (struct pollfd){jobs[i].out, POLLIN, 0};
        int pr = poll(pf, (nfds_t)np, w->tty ? 1000 : -1);
        if (pr < 0 && errno != EINTR) {
            lg_cli_errorf(cmd, "--jobs: poll: %s", strerror(errno));
            status = LG_EXIT_FAIL;
            break;
        }
        for (int i = 0; i < nj; i++) {
            lg__job *j = &jobs[i];
            int ready = 0;
            for (int q = 0; q < np; q++) ready |= pf[q].fd == j->out && pf[q].revents;
            if (!ready || pr <= 0) continue;
            ssize_t got = read(j->out, j->buf + j->len, sizeof j->buf - 1 - j->len);
            if (got < 0 && errno == EINTR) continue;
            if (got > 0) {
                j->len += (size_t)got;
                j->buf[j->len] = 0;
                char *nl;
                while ((nl = memchr(j->buf, '\n', j->len)) != NULL) {
                    char row[1024];
                    size_t ll = (size_t)(nl + 1 - j->buf);
                    memcpy(row, j->buf, ll);
                    row[ll] = 0;
                    memmove(j->buf, nl + 1, j->len - ll);
                    j->len -= ll;
                    j->buf[j->len] = 0;
                    if (j->cell < 0) { /* output while idle: not the protocol */
                        lg_cli_errorf(cmd, "--jobs: unexpected output of a worker: '%.120s'", row);
                        status = status ? status : LG_EXIT_FAIL;
                        sending = 0;
                        continue;
                    }
                    if (!strncmp(row, "error ", 6)) { /* its message is on stderr */
                        int rc = atoi(row + 6);
                        char lab[256];
                        lg__cell_label(a->g, &todo[j->cell], lab, sizeof lab);
                        if (!status) status = rc > 0 ? rc : LG_EXIT_FAIL;
                        j->cell = -1;
                        int busy = 0;
                        for (int q = 0; q < nj; q++) busy += jobs[q].cell >= 0;
                        if (w->tty) fputs("\r\033[K", stderr);
                        fprintf(stderr, "lipgnn %s: run %s failed (status %d)%s\n", cmd, lab, rc,
                                sending && busy ? "; the runs in progress finish first" : "");
                        sending = 0;
                        continue;
                    }
                    double dt = lg__now() - j->t1;
                    int rc = lg__record(w, &todo[j->cell], row, dt);
                    work_done += lg__cell_work(a, &todo[j->cell]);
                    j->cell = -1;
                    run_time += dt;
                    session++;
                    if (rc) {
                        if (!status) status = rc;
                        sending = 0;
                    }
                }
                if (j->len == sizeof j->buf - 1) { /* a line longer than any row */
                    lg_cli_errorf(cmd, "--jobs: a worker's output line is too long");
                    if (!status) status = LG_EXIT_FAIL;
                    sending = 0;
                    j->len = 0;
                }
                continue;
            }
            /* end of its output: it has ended */
            close(j->out);
            j->out = -1;
            lg__job_close_in(j);
            int ws = 0;
            while (waitpid(j->pid, &ws, 0) < 0 && errno == EINTR) {}
            j->pid = 0;
            live--;
            if (j->cell >= 0 && !lg__jobs_signal) { /* it ended in a run, not told to stop */
                char lab[256];
                lg__cell_label(a->g, &todo[j->cell], lab, sizeof lab);
                if (WIFSIGNALED(ws))
                    lg_cli_errorf(cmd, "run %s: its process ended on signal %d%s", lab, WTERMSIG(ws),
                                  WTERMSIG(ws) == SIGKILL ? " (killed: out of memory?)" : "");
                else
                    lg_cli_errorf(cmd, "run %s: its process ended with status %d and no result", lab,
                                  WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
                if (!status) status = WIFEXITED(ws) && WEXITSTATUS(ws) ? WEXITSTATUS(ws) : LG_EXIT_FAIL;
                sending = 0;
            }
            j->cell = -1;
        }
    }
    for (int i = 0; i < nj; i++) { /* after a failure to start one */
        lg__job_close_in(&jobs[i]);
        if (jobs[i].out >= 0) close(jobs[i].out);
        if (jobs[i].pid > 0) while (waitpid(jobs[i].pid, NULL, 0) < 0 && errno == EINTR) {}
    }
    if (lg__jobs_signal) {
        fprintf(stderr, "lipgnn %s: %s: the runs in progress were stopped and not recorded\n", cmd,
                lg_cli_stop_word((int)lg__jobs_signal));
        status = 128 + (int)lg__jobs_signal;
    } else if (status == LG_EXIT_OK && session < ntodo) { /* the workers ended before the work did */
        lg_cli_errorf(cmd, "--jobs: %lld of %lld runs were not run: the worker processes ended", ntodo - session, ntodo);
        status = LG_EXIT_FAIL;
    }
    lg_cli_restore_stop(old_stop);
    sigaction(SIGPIPE, &old_pipe, NULL);
    free(jobs);
    free(pf);
    return status;
}

/* Locks DIR for this study: a write lock (fcntl) on DIR/.lock, held until
 * the descriptor returned is closed or the process ends. Two studies writing
 * one --out at once each ran the runs they found missing, and runs.csv got
 * the same runs twice. A file system that has no locks (ENOLCK: NFS without
 * its lock service; EOPNOTSUPP, ENOSYS, EINVAL: some FUSE ones) does not stop
 * the study: it runs unlocked, with a note. Returns the descriptor, or -1
 * after a message. */
static int lg__out_lock(const char *cmd, const char *dir) {
    char path[4200];
    if (snprintf(path, sizeof path, "%s/.lock", dir) >= (int)sizeof path) {
        lg_cli_errorf(cmd, "--out: path too long");
        return -1;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644); /* not the workers' */
    if (fd < 0) {
        lg_cli_errorf(cmd, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct flock fl;
    memset(&fl, 0, sizeof fl);
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    if (fcntl(fd, F_SETLK, &fl) == 0) return fd;
    const int e = errno;
    if (e == EACCES || e == EAGAIN) {
        fl.l_type = F_WRLCK;
        const int who = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK ? (int)fl.l_pid : 0;
        if (who > 0)
            lg_cli_errorf(cmd, "%s is in use by another depth-study (process %d holds %s): wait for it to end, or "
                          "give another --out", dir, who, path);
        else
            lg_cli_errorf(cmd, "%s is in use by another depth-study (it holds %s): wait for it to end, or give "
                          "another --out", dir, path);
    } else if (e == ENOLCK || e == EOPNOTSUPP || e == ENOSYS || e == EINVAL) {
        fprintf(stderr, "note: %s: cannot lock (%s): another depth-study started on %s while this one runs "
                "would not be refused, and both would run the runs missing there\n", path, strerror(e), dir);
        return fd;
    } else {
        lg_cli_errorf(cmd, "%s: cannot lock: %s", path, strerror(e));
    }
    close(fd);
    return -1;
}

int lg_cmd_depth_study(int argc, char **argv) {
    const char *cmd = "depth-study";
    lg__depth_args a;
    int status = lg__depth_parse(cmd, argc, argv, &a);
    if (status != LG_EXIT_OK || a.help) {
        lg__depth_args_free(&a);
        return status;
    }
    if (a.worker) {
        status = lg__worker(cmd, &a);
        lg__depth_args_free(&a);
        return status;
    }
    lg__grid *g = a.g;
    lg_train_opts *opts = a.opts;
    const char *dir = a.dir;
    int metric = a.metric;
    lg__recs rs = {NULL, 0, 0};
    lg_dataset *ds = NULL;
    lg__cell *todo = NULL;
    FILE *runs = NULL;
    int lock = -1;
    { /* the files --out DIR holds: none one of the data set's (a link there), before any work */
        static const char *const names[] = {"settings.txt", "runs.csv", "summary.md", "depth.svg", ".lock"};
        char files[5][4200];
        const char *opt[5], *path[5];
        for (int k = 0; k < 5; k++) {
            snprintf(files[k], sizeof files[k], "%s/%s", dir, names[k]);
            opt[k] = "--out", path[k] = files[k];
        }
        if (lg_cli_check_clobber(cmd, 5, 5, opt, path, &opts[0].data)) {
            status = LG_EXIT_USAGE;
            goto done;
        }
    }
    lg_cli_set_threads(cmd, opts[0].threads);
    status = lg_cli_data_load(cmd, &opts[0].data, opts[0].max_memory, &ds);
    if (status) goto done;
    int ds_depth = opts[0].data.trees; /* the depth of the TREES in ds (0: not TREES) */
    status = LG_EXIT_USAGE;
    if (metric < 0 && !opts[0].data.trees && ds->n_test == 0) { /* the default, test, would have no values */
        metric = ds->n_val > 0 ? 1 : 0;
        fprintf(stderr, "lipgnn %s: note: %s has no test split: the metric is the %s accuracy (--metric %s)\n", cmd,
                lg__name(ds->name), metric ? "validation" : "training", metric ? "val" : "train");
    }
    if (metric < 0) metric = opts[0].data.trees ? 0 : 2;
    if (metric == 1 && ds->n_val == 0) {
        lg_cli_errorf(cmd, "--metric val: %s has no validation split", lg__name(ds->name));
        goto done;
    }
    if (metric == 2 && ds->n_test == 0) {
        lg_cli_errorf(cmd, "--metric test: %s has no test split (give --metric val or train)", lg__name(ds->name));
        goto done;
    }
    if (lg__mkdirs(cmd, dir)) goto done;
    if ((lock = lg__out_lock(cmd, dir)) < 0) goto done;
    {
        char data_line[256];
        if (opts[0].data.trees)
            snprintf(data_line, sizeof data_line, "data: TREES, %lld trees from seed %llu",
                     (long long)ds->n_graphs, (unsigned long long)g->base_seed);
        else
            snprintf(data_line, sizeof data_line, "data: %s", ds->name);
        int rc = lg__settings_check(cmd, dir, g, opts, data_line);
        if (rc) { status = rc; goto done; }
    }
    char path[4200];
    if (snprintf(path, sizeof path, "%s/runs.csv", dir) >= (int)sizeof path) goto done;
    /* a first-format runs.csv had no tree depths, or the one --trees D */
    runs = lg__runs_open(cmd, path, g->ndepths == 1 ? g->depths[0] : -1, g, opts, &rs, &status);
    if (!runs) goto done;

    char dsname[128];
    if (g->xdepth)
        snprintf(dsname, sizeof dsname, "TREES d=%d..%d, %lld trees", g->depths[0], g->depths[g->ndepths - 1],
                 (long long)ds->n_graphs);
    else
        snprintf(dsname, sizeof dsname, "%s", ds->name);
    lg__study study = {g, &rs, metric, dsname, 0, 0, opts[0].tc.epochs, ds->n_val == 0};
    long long cells = 0, ntodo = 0;
    LG__FOR_SERIES(g) cells += lg__npoints(g);
    study.total = cells * g->seeds;
    if (lg__cells_todo(g, &rs, study.total, &todo, &ntodo)) { lg_cli_errorf(cmd, "out of memory"); status = LG_EXIT_FAIL; goto done; }
    study.done = study.total - ntodo; /* runs of this grid already recorded */
    if (!a.quiet && rs.n > (size_t)study.done) /* a narrower grid than the study's: its other runs are kept */
        fprintf(stderr, "lipgnn %s: note: %s holds %zu run%s outside this grid (other models, depths, norms, "
                "seeds, ...): kept there, but summary.md and depth.svg show this grid's cells only\n", cmd, path,
                rs.n - (size_t)study.done, rs.n - (size_t)study.done == 1 ? "" : "s");
    if (!a.quiet)
        fprintf(stderr, "lipgnn %s: %s, %lld runs (%lld cells x %lld seeds), %lld already in %s, %lld to do\n", cmd,
                dsname, study.total, cells, g->seeds, study.done, path, ntodo);
    if (!a.quiet && ntodo > 0) lg_cli_env_notes(stderr);
    if (lg__write_outputs(cmd, dir, &study)) { status = LG_EXIT_FAIL; goto done; }
    const int tty = isatty(fileno(stderr)) && !a.quiet;
    const lg__recorder w = {cmd, dir, path, runs, &rs, &study, a.verbose, tty};
    double t0 = lg__now();
    if (a.jobs > 1 && ntodo > 1) {
        const char *what, *why;
        const double limit = lg_cli_memory_limit(opts[0].max_memory, &what, &why);
        double *need = lg__cells_need(&a, todo, ntodo, ds, ds_depth);
        lg_dataset_free(ds); /* each worker loads its own */
        ds = NULL;
        if (!need) { lg_cli_errorf(cmd, "out of memory"); status = LG_EXIT_FAIL; goto done; }
        status = lg__run_jobs(&a, &w, todo, ntodo, need, limit, what, argc, argv);
        free(need);
    } else {
        status = lg__run_serial(&a, &w, todo, ntodo, &ds, &ds_depth);
    }
    if (tty) fputs("\r\033[K", stderr);
    if (lg__write_outputs(cmd, dir, &study) && status == LG_EXIT_OK) status = LG_EXIT_FAIL;
    if (!a.quiet) {
        char el[32];
        lg__fmt_time(lg__now() - t0, el, sizeof el);
        fprintf(stderr, "lipgnn %s: %lld of %lld runs done (%lld now, in %s); %s/summary.md, %s/depth.svg\n", cmd,
                study.done, study.total, study.done - (study.total - ntodo), el, dir, dir);
    }
    if (a.json) lg__print_json(dir, &study);
done:
    if (runs && fclose(runs) != 0 && status == LG_EXIT_OK) {
        lg_cli_errorf(cmd, "runs.csv: write error");
        status = LG_EXIT_FAIL;
    }
    if (lock >= 0) close(lock);
    lg_dataset_free(ds);
    free(todo);
    free(rs.r);
    lg__depth_args_free(&a);
    return status;
}

int lg_cli_depth_parse(int argc, char **argv) {
    lg__depth_args a;
    int status = lg__depth_parse("depth-study", argc, argv, &a);
    if (status == LG_EXIT_OK && !a.help) {
        /* what the parse promises */
        if (!a.g || !a.opts || !a.dir || a.g->nmodels < 1 || (a.g->nlayers < 1 && !a.g->xdepth) ||
            a.g->ndepths < 1 || a.g->nnorms < 1 || a.g->nresidual < 1 || a.g->nmissing < 1 || a.g->seeds < 1)
            status = -1;
    }
    lg__depth_args_free(&a);
    return status;
}
