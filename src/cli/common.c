/* Option parsing helpers and data-set loading shared by the subcommands. */
#define _DEFAULT_SOURCE /* realpath */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/internal.h"

const char *lg_cli_prog = "lipgnn";

void lg_cli_errorf(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "%s%s%s: ", lg_cli_prog, cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

FILE *lg_cli_open_regular(const char *cmd, const char *path, int *missing) {
    struct stat sb;
    *missing = 0;
    if (stat(path, &sb) != 0 && errno == ENOENT) {
        *missing = 1;
        return NULL;
    }
    FILE *f = NULL;
    size_t len = 0;
    if (lg__file_open_regular(path, NULL, &f, &len) != LG_OK) {
        lg_cli_errorf(cmd, "%s", lg_last_error());
        return NULL;
    }
    return f;
}

/* The files lg_dataset_load reads in a data-set directory (edges.txt in
 * place of graph.mtx; val.txt optional). */
static const char *const lg__data_files[] = {"graph.mtx", "edges.txt", "features.mtx", "labels.txt",
                                             "train.txt", "val.txt", "test.txt"};
enum { LG__NDATA_FILES = sizeof lg__data_files / sizeof *lg__data_files };

/* The directory of path (".", "/" or its part before the last '/'), into dir
 * (cap bytes); returns the name after it. */
static const char *lg__dir_of(const char *path, char *dir, size_t cap) {
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, cap, ".");
    else if (slash == path) snprintf(dir, cap, "/");
    else snprintf(dir, cap, "%.*s", (int)(slash - path), path);
    return slash ? slash + 1 : path;
}

/* -1 after a message when an output (opt[a], path[a], a < nout) is one of the
 * files the data set d is read from (its directory's lg__data_files): the same
 * device and inode, or, not there yet, a file of such a name in that
 * directory (which would change the data set); else 0. */
static int lg__check_data_clobber(const char *cmd, int nout, const char *const *opt, const char *const *path,
                                  const lg_cli_data *d) {
    char dir[4096], file[4200], odir[4096], what[4200];
    struct stat sd, so, sf, sod;
    if (!d || (!d->data && !d->dataset)) return 0;
    if (d->dataset) {
        if (lg_dataset_resolve(d->dataset, dir, sizeof dir) != LG_OK) {
            lg_clear_error(); /* the load's to say */
            return 0;
        }
    } else snprintf(dir, sizeof dir, "%s", d->data);
    if (stat(dir, &sd) != 0 || !S_ISDIR(sd.st_mode)) return 0; /* the load's to say */
    snprintf(what, sizeof what, "%s %s", d->dataset ? "--dataset" : "--data", d->dataset ? d->dataset : d->data);
    for (int a = 0; a < nout; a++) {
        if (!path[a]) continue;
        const int there = stat(path[a], &so) == 0;
        const char *base = lg__dir_of(path[a], odir, sizeof odir);
        const int in_dir = stat(odir, &sod) == 0 && sod.st_dev == sd.st_dev && sod.st_ino == sd.st_ino;
        for (int k = 0; k < LG__NDATA_FILES; k++) {
            snprintf(file, sizeof file, "%s/%s", dir, lg__data_files[k]);
            int same;
            if (there) same = stat(file, &sf) == 0 && sf.st_dev == so.st_dev && sf.st_ino == so.st_ino;
            else same = in_dir && !strcmp(base, lg__data_files[k]);
            if (!same) continue;
            lg_cli_errorf(cmd, "%s %s is the data set's %s (%s): writing %s would destroy the data set (give it a "
                          "file of its own)", opt[a], path[a], lg__data_files[k], what, opt[a]);
            return -1;
        }
    }
    return 0;
}

int lg_cli_check_clobber(const char *cmd, int n, int nout, const char *const *opt, const char *const *path,
                         const lg_cli_data *d) {
    for (int a = 0; a < nout; a++) {
        struct stat sa, sb;
        if (!path[a]) continue;
        const int ina = stat(path[a], &sa) == 0;
        for (int b = 0; b < n; b++) {
            if (b == a || !path[b] || (b < nout && b < a)) continue;
            const int inb = stat(path[b], &sb) == 0;
            int same;
            if (ina && inb) same = sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino && S_ISREG(sa.st_mode);
            else same = b < nout && !strcmp(path[a], path[b]); /* two outputs not there yet: by their paths */
            if (!same) continue;
            lg_cli_errorf(cmd, "%s %s and %s %s are the same file: writing %s would destroy %s (give it a file of its own)",
                          opt[a], path[a], opt[b], path[b], opt[a], b < nout ? "the other output" : "it");
            return -1;
        }
    }
    return lg__check_data_clobber(cmd, nout, opt, path, d);
}

/* -1 after "OPT PATH: cannot create a file in DIR: <reason>" when no new file
 * can be made in dir (a probe file created there and removed at once: what
 * access() cannot tell, as root in /proc, or a regular file in the path); else 0. */
static int lg__probe_dir(const char *cmd, const char *opt, const char *path, const char *dir) {
    const int e = lg__dir_probe(dir);
    if (e) lg_cli_errorf(cmd, "%s %s: cannot create a file in %s: %s", opt, path, dir, strerror(e));
    return e ? -1 : 0;
}

int lg_cli_check_writable(const char *cmd, const char *opt, const char *path) {
    struct stat sb;
    if (!path) return 0;
    if (stat(path, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            lg_cli_errorf(cmd, "%s %s: a directory, not a file", opt, path);
            return -1;
        }
        if (access(path, W_OK) != 0) {
            lg_cli_errorf(cmd, "%s %s: cannot write: %s", opt, path, strerror(errno));
            return -1;
        }
        return 0;
    }
    /* a new file: its directory must exist and take it */
    char dir[4096];
    lg__dir_of(path, dir, sizeof dir);
    return lg__probe_dir(cmd, opt, path, dir);
}

int lg_cli_check_save(const char *cmd, const char *opt, const char *path) {
    if (!path) return 0;
    if (lg_trainer_save_check(path) != LG_OK) { /* its message: "PATH: cannot create a file in DIR: <reason>", ... */
        lg_cli_errorf(cmd, "%s %s", opt, lg_last_error());
        return -1;
    }
    return 0;
}

int lg_cli_env_threads(unsigned long *v) {
    const char *s = getenv("OMP_NUM_THREADS");
    if (!s) return 0;
    for (int first = 1;; first = 0) {
        while (isspace((unsigned char)*s)) s++;
        if (!isdigit((unsigned char)*s) && *s != '+') return -1; /* strtoul's sign, which libgomp refuses at 0 */
        char *end;
        errno = 0;
        const unsigned long x = strtoul(s, &end, 10);
        if (errno || end == s || (long)x <= 0) return -1; /* "-1": ULONG_MAX, (long) -1 */
        if (first) *v = x;
        for (s = end; isspace((unsigned char)*s); s++) {}
        if (!*s) return 1;
        if (*s++ != ',') return -1;
    }
}

int lg_cli_set_threads(const char *cmd, int n) {
    /* the number OMP_NUM_THREADS asks for, not omp_get_max_threads(): libgomp
     * wraps one beyond INT_MAX into its int (2147483648 gave -2147483648) */
    unsigned long env = 0;
    const unsigned long asked = n > 0                          ? (unsigned long)n
                                : lg_cli_env_threads(&env) > 0 ? env
                                                               : (unsigned long)LG_MAX(omp_get_max_threads(), 1);
    const int got = lg_set_threads(asked > LG_MAX_THREADS ? LG_MAX_THREADS : (int)asked);
    if ((unsigned long)got < asked)
        fprintf(stderr, "%s%s%s: note: %lu threads asked for (OMP_NUM_THREADS), %d used: lipgnn runs at most %d\n",
                lg_cli_prog, cmd ? " " : "", cmd ? cmd : "", asked, got, LG_MAX_THREADS);
    return got;
}

/* The errno of the first failed lg_cli_flush of standard output (0: none). */
static int lg__stdout_errno;

int lg_cli_flush(FILE *f) {
    errno = 0;
    if (fflush(f) == 0) return 0;
    if (f == stdout && !lg__stdout_errno) lg__stdout_errno = errno;
    return -1;
}

int lg_cli_close_out(const char *cmd, FILE *f, const char *path) {
    if (!f) return 0;
    errno = 0;
    const int failed = ferror(f) != 0;
    const int closed = fclose(f) == 0;
    if (!failed && closed) return 0;
    int e = errno;
    if (!e && f == stdout) e = lg__stdout_errno; /* the flush that failed, its data gone since */
    lg_cli_errorf(cmd, "%s: write error%s%s", path, e ? ": " : "", e ? strerror(e) : "");
    return -1;
}

/* Optimal-string-alignment distance between a and b (both under 64 bytes),
 * or 99. O(|a| |b|). */
static int lg__edit_distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n >= 64 || m >= 64) return 99;
    int d[64][64];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best) best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *lg_cli_closest(const char *s, const char *const *names, int n) {
    const char *best = NULL;
    int bd = 3;
    for (int k = 0; k < n; k++) {
        int dist = lg__edit_distance(s, names[k]);
        if (dist < bd && 2 * (size_t)dist < strlen(s)) bd = dist, best = names[k];
    }
    return best;
}

void lg_cli_bad_option(const char *cmd, const char *arg, const struct option *opts, const char *const *extra) {
    char help[96];
    snprintf(help, sizeof help, "see 'lipgnn %s --help'", cmd ? cmd : "");
    if (!arg || strncmp(arg, "--", 2) != 0 || !arg[2] || arg[2] == '=') {
        lg_cli_errorf(cmd, "unknown option '%s' (%s)", arg ? arg : "", help);
        return;
    }
    char name[64];
    const char *eq = strchr(arg + 2, '=');
    size_t len = eq ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);
    if (len >= sizeof name) len = sizeof name - 1;
    memcpy(name, arg + 2, len);
    name[len] = 0;
    /* an exact name, else the options it abbreviates (listed when several) */
    int nprefix;
    const struct option *hit = lg_cli_match_option(opts, name, len, &nprefix);
    char list[256] = "";
    for (const struct option *o = opts; nprefix > 1 && o->name; o++)
        if (!strncmp(o->name, name, len)) {
            size_t used = strlen(list);
            snprintf(list + used, sizeof list - used, "%s--%s", used ? ", " : "", o->name);
        }
    if (nprefix > 1) {
        lg_cli_errorf(cmd, "option '--%s' is ambiguous: %s (%s)", name, list, help);
    } else if (hit && hit->has_arg == required_argument && !eq) {
        lg_cli_errorf(cmd, "option '--%s' needs a value (%s)", hit->name, help);
    } else if (hit && hit->has_arg == no_argument && eq) {
        lg_cli_errorf(cmd, "option '--%s' takes no value (%s)", hit->name, help);
    } else {
        const char *names[256];
        int n = 0;
        for (const struct option *o = opts; o->name && n < 256; o++) names[n++] = o->name;
        for (const char *const *e = extra; e && *e && n < 256; e++) names[n++] = *e;
        const char *close = lg_cli_closest(name, names, n);
        if (close) lg_cli_errorf(cmd, "unknown option '--%s' (did you mean '--%s'? %s)", name, close, help);
        else lg_cli_errorf(cmd, "unknown option '--%s' (%s)", name, help);
    }
}

const struct option *lg_cli_match_option(const struct option *opts, const char *name, size_t len, int *n) {
    const struct option *hit = NULL;
    *n = 0;
    for (const struct option *o = opts; o && o->name; o++) {
        if (strncmp(o->name, name, len)) continue;
        if (!o->name[len]) { /* the exact name: no abbreviation */
            *n = 1;
            return o;
        }
        if ((*n)++ == 0) hit = o;
    }
    return *n == 1 ? hit : NULL;
}

int lg_cli_is_option(const char *arg, const struct option *opts, const char *const *extra) {
    if (!arg || strncmp(arg, "--", 2) != 0 || !arg[2] || arg[2] == '=') return 0;
    const char *eq = strchr(arg + 2, '=');
    const size_t len = eq ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);
    int n;
    lg_cli_match_option(opts, arg + 2, len, &n);
    if (n > 0) return 1;
    for (const char *const *e = extra; e && *e; e++)
        if (!strncmp(*e, arg + 2, len)) return 1;
    return 0;
}

int lg_cli_check_value(const char *cmd, const char *opt, const char *value, const struct option *opts,
                       const char *const *extra) {
    if (!lg_cli_is_option(value, opts, extra)) return 0;
    lg_cli_errorf(cmd,
                  "option '%s' needs a value, but the argument after it, '%s', is an option (a value that "
                  "begins with '--' is written %s=VALUE; see 'lipgnn %s --help')",
                  opt, value, opt, cmd ? cmd : "");
    return -1;
}

int lg_cli_getopt(const char *cmd, int argc, char **argv, const struct option *opts, int *idx,
                  const char *const *extra) {
    *idx = -1;
    const int c = getopt_long(argc, argv, "h", opts, idx);
    if (c == '?') {
        lg_cli_bad_option(cmd, argv[optind - 1], opts, extra);
        return '?';
    }
    /* a long option's value given as the next argument (not as --X=V) */
    if (c != -1 && *idx >= 0 && opts[*idx].has_arg == required_argument && optarg && optind >= 2 &&
        optarg == argv[optind - 1]) {
        char opt[80];
        snprintf(opt, sizeof opt, "--%s", opts[*idx].name);
        if (lg_cli_check_value(cmd, opt, optarg, opts, extra)) return '?';
    }
    return c;
}

int lg_cli_parse_ll(const char *cmd, const char *opt, const char *s, long long lo, long long hi,
                    long long *out) {
    char *end = NULL;
    errno = 0;
    long long v = (s && *s) ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || (errno && errno != ERANGE) || *end) {
        lg_cli_errorf(cmd, "%s: '%s' is not an integer", opt, s ? s : "");
        return -1;
    }
    if (errno == ERANGE) { /* an integer too large for long long: outside any range, the text as given */
        lg_cli_errorf(cmd, "%s: %s is outside %lld..%lld", opt, s, lo, hi);
        return -1;
    }
    if (v < lo || v > hi) {
        lg_cli_errorf(cmd, "%s: %lld is outside %lld..%lld", opt, v, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int lg_cli_parse_u64(const char *cmd, const char *opt, const char *s, uint64_t *out) {
    char *end = NULL;
    errno = 0;
    if (!s || !*s || *s == '-') {
        lg_cli_errorf(cmd, "%s: '%s' is not a non-negative integer", opt, s ? s : "");
        return -1;
    }
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE && !*end) { /* too large: the range's message, as lg_cli_parse_ll's */
        lg_cli_errorf(cmd, "%s: %s is outside 0..%llu", opt, s, (unsigned long long)UINT64_MAX);
        return -1;
    }
    if (errno || *end) {
        lg_cli_errorf(cmd, "%s: '%s' is not a non-negative integer", opt, s);
        return -1;
    }
    *out = (uint64_t)v;
    return 0;
}

int lg_cli_parse_double(const char *cmd, const char *opt, const char *s, double lo, double hi,
                        double *out) {
    char *end = NULL;
    errno = 0;
    double v = (s && *s) ? strtod(s, &end) : 0;
    /* ERANGE with a finite value is an underflow (1e-400): a number near 0,
     * which the range decides; an overflow is infinite */
    if (!s || !*s || *end || !isfinite(v)) {
        lg_cli_errorf(cmd, "%s: '%s' is not a finite number", opt, s ? s : "");
        return -1;
    }
    if (v < lo || v > hi) { /* the text as given: %g would print 0.9999999 as 1; the bounds shortest */
        char a[32], b[32];
        lg_cli_errorf(cmd, "%s: %s is outside [%s, %s]", opt, s, lg_cli_shortest(a, sizeof a, lo),
                      lg_cli_shortest(b, sizeof b, hi));
        return -1;
    }
    *out = v;
    return 0;
}

int lg_cli_parse_explode(const char *cmd, const char *opt, const char *s, lg_train_config *tc) {
    long long v;
    if (!strcmp(opt, "--explode-threshold")) return lg_cli_parse_double(cmd, opt, s, 1e-30, 1e300, &tc->explode_threshold);
    if (!strcmp(opt, "--explode-growth")) return lg_cli_parse_double(cmd, opt, s, 1.000001, 1e300, &tc->explode_growth);
    if (lg_cli_parse_ll(cmd, opt, s, 0, 100000, &v)) return -1; /* --explode-window */
    tc->explode_window = (int)v;
    return 0;
}

/* The data options' help lines, under lg_cli_data_help's and
 * lg_cli_data_help_resume's headings. */
#define LG__CLI_DATA_OPTIONS_HELP \
    "  --data DIR          a data-set directory (graph.mtx or edges.txt, features.mtx,\n" \
    "                      labels.txt, train.txt, val.txt, test.txt)\n" \
    "  --dataset NAME      the directory NAME under $LIPGNN_DATA (e.g. cora, pubmed)\n" \
    "  --trees DEPTH       the synthetic TREES problem of depth 2..10 (built in)\n" \
    "  --trees-count N     number of trees (default 5000)\n" \
    "  --sbm N[,M]         a synthetic stochastic block model made with igraph (built in):\n" \
    "                      N nodes in 8 classes, about M undirected edges (default 4N:\n" \
    "                      2M directed ones), 80% of them\n" \
    "                      within classes, 128 sparse class-dependent features, 20\n" \
    "                      training nodes a class, 500 validation, 1000 test (fewer\n" \
    "                      for small N); N at least 16 (2 a class), and M no more than\n" \
    "                      the classes hold (refused with the most they do)\n" \
    "  --seed S            seed of everything random (default 0)\n"

const char lg_cli_data_help[] = "Data (exactly one of --data, --dataset, --trees, --sbm):\n" LG__CLI_DATA_OPTIONS_HELP;

const char lg_cli_data_help_resume[] =
    "Data (exactly one of --data, --dataset, --trees, --sbm; with --resume FILE, none:\n"
    "the data options FILE records; its --seed unless --seed is given):\n" LG__CLI_DATA_OPTIONS_HELP;

int lg_cli_trim_dir(char *buf, size_t cap, const char *dir) {
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    if (n >= cap) return -1;
    memcpy(buf, dir, n);
    buf[n] = 0;
    return 0;
}

int lg_cli_path_value(const char *cmd, const char *opt, const char *value) {
    if (value && *value) return 0;
    lg_cli_errorf(cmd, "%s: an empty path", opt);
    return -1;
}

int lg_cli_data_option(const char *cmd, lg_cli_data *d, const char *name, const char *value) {
    static const char *const names[] = {"data", "dataset", "trees", "trees-count", "sbm", "seed"};
    long long v;
    for (unsigned k = 0; k < sizeof names / sizeof *names; k++) {
        if (strcmp(name, names[k])) continue;
        if (d->given & (1u << k)) {
            lg_cli_errorf(cmd, "--%s given twice (give each data option once)", name);
            return -1;
        }
        d->given |= 1u << k;
    }
    if (strcmp(name, "data") == 0) {
        if (lg_cli_path_value(cmd, "--data", value)) return -1;
        d->data = value;
        return 1;
    }
    if (strcmp(name, "dataset") == 0) {
        if (!value || !*value) {
            lg_cli_errorf(cmd, "--dataset: an empty name (give a directory's name under $LIPGNN_DATA, e.g. cora)");
            return -1;
        }
        d->dataset = value;
        return 1;
    }
    if (strcmp(name, "trees") == 0) {
        if (lg_cli_parse_ll(cmd, "--trees", value, 2, 10, &v)) return -1;
        d->trees = (int)v;
        return 1;
    }
    if (strcmp(name, "trees-count") == 0) {
        if (lg_cli_parse_ll(cmd, "--trees-count", value, 1, 100000000, &v)) return -1;
        d->trees_count = v;
        return 1;
    }
    if (strcmp(name, "sbm") == 0) {
        char buf[64];
        const char *comma = strchr(value, ',');
        size_t len = comma ? (size_t)(comma - value) : strlen(value);
        if (len >= sizeof buf) len = sizeof buf - 1;
        memcpy(buf, value, len);
        buf[len] = 0;
        /* the generator's rules, here rather than as its error after the parse:
         * 2 nodes a class at least, and no more edges than the blocks hold */
        lg_sbm_opts so;
        lg_sbm_opts_default(&so);
        if (lg_cli_parse_ll(cmd, "--sbm (nodes)", buf, 2LL * so.classes, 2000000000, &d->sbm_nodes)) return -1;
        d->sbm_edges = 0;
        if (comma && lg_cli_parse_ll(cmd, "--sbm (edges)", comma + 1, 0, 4000000000LL, &d->sbm_edges)) return -1;
        if (!comma) d->sbm_edges = 4 * d->sbm_nodes;
        so.nodes = d->sbm_nodes;
        const long long max_edges = lg_sbm_max_edges(&so);
        if (d->sbm_edges > max_edges) {
            lg_cli_errorf(cmd, "--sbm %s: %lld edges%s are more than %lld nodes in %d classes can hold (at most %lld, "
                          "%.0f%% of them within classes): give fewer edges (--sbm %lld,%lld) or more nodes",
                          value, d->sbm_edges, comma ? "" : " (the default, 4N)", d->sbm_nodes, so.classes, max_edges,
                          100 * so.within, d->sbm_nodes, max_edges);
            return -1;
        }
        return 1;
    }
    if (strcmp(name, "seed") == 0) return lg_cli_parse_u64(cmd, "--seed", value, &d->seed) ? -1 : 1;
    return 0;
}

int lg_cli_data_check(const char *cmd, const lg_cli_data *d) {
    int k = (d->data != NULL) + (d->dataset != NULL) + (d->trees != 0) + (d->sbm_nodes != 0);
    if (k != 1) {
        lg_cli_errorf(cmd, k ? "give only one of --data, --dataset, --trees and --sbm"
                             : "no data set: give --data DIR, --dataset NAME, --trees DEPTH or --sbm N");
        return -1;
    }
    if (d->trees_count && !d->trees) {
        lg_cli_errorf(cmd, "--trees-count goes with --trees");
        return -1;
    }
    return 0;
}

/* The options that give d, as a command line would (name without "--",
 * value): at most 4, into name and value (the numbers' text into num);
 * returns their count. The seed comes with --trees and --sbm, whose data it
 * makes, and with the others when seed_always or when it is not 0. The one
 * list of the data options that lg_cli_data_note and lg_cli_data_describe
 * write, and lg_cli_data_option reads back. */
static int lg__cli_data_args(const lg_cli_data *d, int seed_always, const char *name[4], const char *value[4],
                             char num[4][48]) {
    int n = 0;
    if (d->data) name[n] = "data", value[n++] = d->data;
    if (d->dataset) name[n] = "dataset", value[n++] = d->dataset;
    if (d->trees) {
        snprintf(num[n], sizeof num[n], "%d", d->trees);
        name[n] = "trees", value[n] = num[n], n++;
        if (d->trees_count) {
            snprintf(num[n], sizeof num[n], "%lld", d->trees_count);
            name[n] = "trees-count", value[n] = num[n], n++;
        }
    }
    if (d->sbm_nodes) {
        snprintf(num[n], sizeof num[n], "%lld,%lld", d->sbm_nodes, d->sbm_edges);
        name[n] = "sbm", value[n] = num[n], n++;
    }
    if (seed_always || d->trees || d->sbm_nodes || d->seed) {
        snprintf(num[n], sizeof num[n], "%llu", (unsigned long long)d->seed);
        name[n] = "seed", value[n] = num[n], n++;
    }
    return n;
}

/* s as one shell word into buf (cap > 0 bytes, cut to fit): as it is when
 * every byte is a letter, digit or one of _./+-,:@%=, else in single quotes
 * (a ' as '\'') with control bytes as '?' (lg_cli_printable), so that a path
 * with a space or a newline reads as one and stays on one line. Returns buf. */
static const char *lg__cli_word(char *buf, size_t cap, const char *s) {
    int plain = *s != '\0';
    for (const char *c = s; *c && plain; c++) plain = isalnum((unsigned char)*c) || strchr("_./+-,:@%=", *c);
    size_t n = 0;
#define LG__PUT(ch) do { if (n + 1 < cap) buf[n++] = (ch); } while (0)
    if (!plain) LG__PUT('\'');
    for (const char *c = s; *c; c++) {
        if (!plain && *c == '\'') { LG__PUT('\''); LG__PUT('\\'); LG__PUT('\''); LG__PUT('\''); }
        else LG__PUT(*c);
    }
    if (!plain) LG__PUT('\'');
#undef LG__PUT
    buf[n] = '\0';
    return lg_cli_printable(buf, n);
}

const char *lg_cli_data_describe(char *buf, size_t cap, const lg_cli_data *d) {
    const char *name[4], *value[4];
    char num[4][48], word[4200];
    const int n = lg__cli_data_args(d, 0, name, value, num);
    size_t used = 0;
    if (cap) buf[0] = '\0';
    for (int k = 0; k < n && used < cap; k++) {
        const int w = snprintf(buf + used, cap - used, "%s--%s %s", k ? " " : "", name[k],
                               lg__cli_word(word, sizeof word, value[k]));
        used += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

/* The first line of lg_cli_data_note's text: what it is, and its layout's version. */
static const char lg__note_head[] = "lipgnn data options 1";

/* Appends "key value\n" to buf (used of cap bytes), the value's bytes below
 * 0x20, 0x7f and '%' as %XX: 0, or -1 when it does not fit. */
static int lg__note_line(char *buf, size_t cap, size_t *used, const char *key, const char *value) {
    int w = snprintf(buf + *used, cap - *used, "%s ", key);
    if (w < 0 || (size_t)w >= cap - *used) return -1;
    *used += (size_t)w;
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        const int esc = *p < 0x20 || *p == 0x7f || *p == '%';
        if (cap - *used < (esc ? 4u : 2u)) return -1;
        if (esc) *used += (size_t)snprintf(buf + *used, 4, "%%%02X", *p);
        else buf[(*used)++] = (char)*p;
    }
    if (cap - *used < 2) return -1;
    buf[(*used)++] = '\n';
    buf[*used] = '\0';
    return 0;
}

int lg_cli_data_note(const lg_cli_data *d, char *buf, size_t cap) {
    const char *name[4], *value[4];
    char num[4][48], opt[16];
    const int n = lg__cli_data_args(d, 1, name, value, num);
    int w = snprintf(buf, cap, "%s\n", lg__note_head);
    if (w < 0 || (size_t)w >= cap) return -1;
    size_t used = (size_t)w;
    for (int k = 0; k < n; k++) {
        snprintf(opt, sizeof opt, "--%s", name[k]);
        if (lg__note_line(buf, cap, &used, opt, value[k])) return -1;
    }
    if (d->data) { /* where it is, should the run that reads it be elsewhere */
        char *abs = realpath(d->data, NULL);
        const int rc = abs ? lg__note_line(buf, cap, &used, "abs", abs) : 0;
        free(abs);
        if (rc) return -1;
    }
    return 0;
}

/* Decodes lg__note_line's %XX in s, in place: 0, or -1 for a bad escape or a
 * NUL byte. */
static int lg__note_unescape(char *s) {
    char *o = s;
    for (const char *p = s; *p; p++) {
        if (*p != '%') { *o++ = *p; continue; }
        unsigned v = 0;
        for (int k = 1; k <= 2; k++) {
            const char c = p[k];
            const int x = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (x < 0) return -1;
            v = v * 16 + (unsigned)x;
        }
        if (!v) return -1;
        *o++ = (char)v;
        p += 2;
    }
    *o = '\0';
    return 0;
}

/* Reads lg_cli_data_note's text (in note, decoded in place: d's strings
 * point into it) into *d, and *abs (NULL when not recorded), each option
 * through lg_cli_data_option. 0, or -1 when the text is not such a note or
 * a value is bad (a message printed for a bad value only). */
static int lg__cli_data_from_note(const char *cmd, char *note, lg_cli_data *d, const char **abs) {
    memset(d, 0, sizeof *d);
    *abs = NULL;
    const size_t hl = strlen(lg__note_head);
    if (strncmp(note, lg__note_head, hl) || note[hl] != '\n') return -1;
    for (char *line = note + hl + 1; *line;) {
        char *end = strchr(line, '\n'), *sp = strchr(line, ' ');
        if (!end || !sp || sp > end) return -1;
        *end = *sp = '\0';
        char *value = sp + 1;
        if (lg__note_unescape(value)) return -1;
        if (!strcmp(line, "abs")) *abs = value;
        else if (strncmp(line, "--", 2) || lg_cli_data_option(cmd, d, line + 2, value) != 1) return -1;
        line = end + 1;
    }
    return (d->data != NULL) + (d->dataset != NULL) + (d->trees != 0) + (d->sbm_nodes != 0) == 1 ? 0 : -1;
}

/* The absolute path of the directory d names (--data, or --dataset under
 * $LIPGNN_DATA), malloc'd, or NULL (none there, or d is synthetic). */
static char *lg__cli_data_dir(const lg_cli_data *d) {
    char path[4096];
    if (d->dataset && lg_dataset_resolve(d->dataset, path, sizeof path) != LG_OK) return NULL;
    return d->data || d->dataset ? realpath(d->data ? d->data : path, NULL) : NULL;
}

/* 1 when the data set a and b name differ: their kind, values, or seed where
 * it makes the data; --data by the absolute path (b's recorded one, babs),
 * which may be the directory a --dataset names. */
static int lg__cli_data_differ(const lg_cli_data *a, const lg_cli_data *b, const char *babs) {
    if ((a->data || a->dataset) && (b->data || b->dataset)) {
        if (a->dataset && b->dataset) return strcmp(a->dataset, b->dataset) != 0;
        char *aabs = lg__cli_data_dir(a), *bdir = b->dataset ? lg__cli_data_dir(b) : NULL;
        const char *bb = b->dataset ? bdir : babs;
        /* (without both absolute paths: --data as given against --data as recorded) */
        const int differ = aabs && bb ? strcmp(aabs, bb) != 0 : !a->data || !b->data || strcmp(a->data, b->data) != 0;
        free(aabs);
        free(bdir);
        return differ;
    }
    if (!a->data != !b->data || !a->dataset != !b->dataset || a->trees != b->trees ||
        a->sbm_nodes != b->sbm_nodes || a->sbm_edges != b->sbm_edges)
        return 1;
    lg_trees_opts o; /* --trees-count not given: the generator's count */
    lg_trees_opts_default(&o);
    return a->seed != b->seed ||
           (a->trees && (a->trees_count ? a->trees_count : o.count) != (b->trees_count ? b->trees_count : o.count));
}

int lg_cli_data_from_checkpoint(const char *cmd, lg_cli_data *d, int keep_seed, const char *ckpt, char *note,
                                size_t cap, int quiet) {
    const int given = (d->data != NULL) + (d->dataset != NULL) + (d->trees != 0) + (d->sbm_nodes != 0);
    if (given > 1 || (!given && d->trees_count)) return 0; /* lg_cli_data_check's to say */
    lg_status st = lg_checkpoint_note(ckpt, note, cap, NULL);
    lg_cli_data rec;
    const char *abs = NULL;
    const int recorded = st == LG_OK && lg__cli_data_from_note(cmd, note, &rec, &abs) == 0;
    char what[4200], was[4200];
    if (given) { /* the one given is used; a note when it is not the one recorded */
        if (recorded && !keep_seed) d->seed = rec.seed; /* --seed not given: the checkpoint's, as without data */
        if (recorded && lg__cli_data_differ(d, &rec, abs) && !quiet) {
            if (abs && rec.data) rec.data = abs;
            lg_cli_data_describe(what, sizeof what, d);
            /* a seed taken from the checkpoint is not one given: said apart
             * (--seed is the last option described) */
            char *seed = NULL, theirs[64] = "";
            for (char *p = strstr(what, " --seed "); p; p = strstr(p + 1, " --seed ")) seed = p;
            if (!keep_seed && seed) {
                snprintf(theirs, sizeof theirs, ", with the checkpoint's%s", seed);
                *seed = '\0';
            }
            fprintf(stderr, "lipgnn %s: note: using %s as given%s; %s records that it was trained on %s\n", cmd, what,
                    theirs, ckpt, lg_cli_data_describe(was, sizeof was, &rec));
        }
        return 0;
    }
    if (!recorded) {
        if (st == LG_ENOTFOUND || st == LG_OK)
            lg_cli_errorf(cmd, "no data set: give --data DIR, --dataset NAME, --trees DEPTH or --sbm N[,M] "
                          "(%s %s)", ckpt, st == LG_OK ? "has a note, but not the data options lipgnn train records"
                                                       : "has no record of the data it was trained on: it "
                                                         "predates that record, or its options were too long to "
                                                         "record");
        else if (st == LG_ERANGE)
            lg_cli_errorf(cmd, "no data set: give --data DIR, --dataset NAME, --trees DEPTH or --sbm N[,M] (the "
                          "note of %s is longer than lipgnn train writes)", ckpt);
        else
            lg_cli_errorf(cmd, "%s", lg_last_error());
        return -1;
    }
    const char *as_given = rec.data;
    if (abs && rec.data) rec.data = abs; /* the directory it was, whatever the directory of this run */
    const uint64_t rec_seed = rec.seed;
    if (keep_seed) rec.seed = d->seed;
    rec.progress = d->progress;
    rec.recorded_in = ckpt;
    *d = rec;
    if (!quiet) {
        fprintf(stderr, "lipgnn %s: data: %s (from the checkpoint", cmd, lg_cli_data_describe(what, sizeof what, d));
        char word[4200];
        if (as_given && strcmp(as_given, d->data))
            fprintf(stderr, ", where it was given as %s", lg__cli_word(word, sizeof word, as_given));
        if (d->seed != rec_seed)
            fprintf(stderr, "; --seed %llu as given, where it records --seed %llu", (unsigned long long)d->seed,
                    (unsigned long long)rec_seed);
        fputs(")\n", stderr);
    }
    return 0;
}

int lg_cli_exit_for(lg_status st) {
    switch (st) {
    case LG_OK: return LG_EXIT_OK;
    case LG_EINVAL: case LG_EIO: case LG_EPARSE: case LG_ERANGE: case LG_ENOTFOUND:
    case LG_ENUMERIC: case LG_EUNSUPPORTED:
        return LG_EXIT_USAGE;
    default: return LG_EXIT_FAIL;
    }
}

static int lg__cli_data_fits(const char *cmd, const lg_cli_data *d, const char *verb, const char *data, double need,
                             double max_memory);

/* Ends lg_cli_data_load's status line, if d has one, for what follows. */
static void lg__cli_status_clear(const lg_cli_data *d) {
    if (d->progress) fputs("\r\033[K", stderr);
}

/* lg_cli_data_load without its status line. */
static int lg__cli_data_make(const char *cmd, const lg_cli_data *d, double max_memory, lg_dataset **out) {
    lg_status st;
    size_t need = 0;
    char what[4200]; /* the data set, as the command line gave it */
    int rc;
    *out = NULL;
    if (d->trees) {
        lg_trees_opts o;
        lg_trees_opts_default(&o);
        o.depth = d->trees;
        if (d->trees_count) o.count = d->trees_count;
        o.seed = d->seed;
        st = lg_trees_estimate(&o, &need);
        snprintf(what, sizeof what, "--trees %d, %lld trees", o.depth, (long long)o.count);
        if (st == LG_OK && (rc = lg__cli_data_fits(cmd, d, "making", what, (double)need, max_memory))) return rc;
        if (st == LG_OK) st = lg_trees_generate(out, &o);
    } else if (d->sbm_nodes) {
        lg_sbm_opts o;
        lg_sbm_opts_default(&o);
        o.nodes = d->sbm_nodes;
        o.edges = d->sbm_edges;
        o.seed = d->seed;
        /* small graphs: a quarter of a class's nodes for training at most,
         * then a third of the rest for validation, the others for test */
        lg_idx per_class = o.nodes / o.classes, rest;
        if (o.train_per_class > per_class / 4) o.train_per_class = per_class / 4 > 1 ? per_class / 4 : 1;
        rest = o.nodes - o.train_per_class * o.classes;
        if (o.n_val + o.n_test > rest) {
            o.n_val = rest / 3;
            o.n_test = rest - o.n_val;
        }
        st = lg_sbm_estimate(&o, &need);
        snprintf(what, sizeof what, "--sbm %lld,%lld", (long long)o.nodes, (long long)o.edges);
        if (st == LG_OK && (rc = lg__cli_data_fits(cmd, d, "making", what, (double)need, max_memory))) return rc;
        if (st == LG_OK) st = lg_sbm_generate(out, &o);
    } else {
        /* a directory: its reading's peak estimated from the files' lengths
         * and headers first. Where the estimate fails, the set is read
         * unchecked: a bad file is then the load's error to report, and an
         * .mtx header longer than a MiB (LG_EUNSUPPORTED) reads as usual */
        char path[4096];
        const char *dir = d->data;
        st = LG_OK;
        if (d->dataset) {
            st = lg_dataset_resolve(d->dataset, path, sizeof path);
            dir = path;
        }
        if (st == LG_OK && lg_dataset_load_estimate(dir, &need) == LG_OK) {
            snprintf(what, sizeof what, "%s %s", d->dataset ? "--dataset" : "--data", d->dataset ? d->dataset : d->data);
            if ((rc = lg__cli_data_fits(cmd, d, "reading", what, (double)need, max_memory))) return rc;
        }
        if (st == LG_OK) {
            lg_clear_error(); /* the estimate's, if it failed */
            st = lg_dataset_load(out, dir);
        }
    }
    if (st != LG_OK) {
        lg__cli_status_clear(d);
        lg_cli_errorf(cmd, "%s", lg_last_error()[0] ? lg_last_error() : lg_strerror(st));
        return lg_cli_exit_for(st);
    }
    return LG_EXIT_OK;
}

int lg_cli_data_load(const char *cmd, const lg_cli_data *d, double max_memory, lg_dataset **out) {
    /* the status line: what is being made or read, until it is there */
    if (d->progress) {
        if (d->trees)
            fprintf(stderr, "\r\033[Klipgnn %s: making the data set (TREES of depth %d)...", cmd, d->trees);
        else if (d->sbm_nodes)
            fprintf(stderr, "\r\033[Klipgnn %s: making the data set (--sbm %lld,%lld)...", cmd, d->sbm_nodes,
                    d->sbm_edges);
        else
            fprintf(stderr, "\r\033[Klipgnn %s: reading %s...", cmd, d->dataset ? d->dataset : d->data);
        fflush(stderr);
    }
    const int rc = lg__cli_data_make(cmd, d, max_memory, out);
    lg__cli_status_clear(d);
    if (rc && d->recorded_in) /* e.g. a recorded directory moved since */
        fprintf(stderr, "lipgnn %s: note: those are the data options %s records; a data option given (--data DIR, "
                "--dataset NAME, --trees DEPTH or --sbm N[,M]) is used instead\n", cmd, d->recorded_in);
    return rc;
}

void lg_cli_env_notes(FILE *f) {
    lg_blas_info bi;
    lg_isa_info ii;
    lg_blas_check(&bi);
    lg_kernel_isa_info(&ii);
    if (bi.user_ignored) {
        fprintf(f,
                "note: OpenBLAS did not take OPENBLAS_CORETYPE=%s (not a core type it knows, or one this CPU "
                "cannot run) and runs its own choice, '%s'",
                getenv("OPENBLAS_CORETYPE"), bi.current);
        if (bi.user_slower)
            fprintf(f, "; this CPU runs '%s', whose dense products are faster (set OPENBLAS_CORETYPE=%s)", bi.best,
                    bi.best);
        fputc('\n', f);
    } else if (bi.user_slower)
        fprintf(f,
                "note: OPENBLAS_CORETYPE=%s in the environment holds OpenBLAS to its '%s' kernels; this CPU runs "
                "'%s', whose dense products are faster (unset OPENBLAS_CORETYPE, or set it to %s)\n",
                getenv("OPENBLAS_CORETYPE"), bi.current, bi.best, bi.best);
    if (ii.env && !ii.env_valid)
        fprintf(f, "note: LIPGNN_ISA=%s is not " LG_CLI_ISA_VALUES " and was ignored; lipgnn's kernels run %s\n",
                ii.env, ii.chosen);
}

const char *lg_cli_omp_wait(char *buf, size_t cap, int long_form) {
    const char *pol = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
    if (!cap) return buf;
    if (!pol && spin && getenv("LIPGNN_OMP_REEXEC") && !strcmp(spin, LG_CLI_SPINCOUNT))
        snprintf(buf, cap, "GOMP_SPINCOUNT=%s, a short spin before sleeping (set by lipgnn)", spin);
    else if (pol || spin)
        snprintf(buf, cap, "%s%.40s%s%s%.40s (from the environment)", pol ? "OMP_WAIT_POLICY=" : "", pol ? pol : "",
                 pol && spin ? ", " : "", spin ? "GOMP_SPINCOUNT=" : "", spin ? spin : "");
    else
        snprintf(buf, cap, "libgomp's default (spin, then sleep)%s",
                 long_form ? "; " LG_CLI_COMPUTING " run with GOMP_SPINCOUNT=" LG_CLI_SPINCOUNT
                             " (set by lipgnn when OMP_WAIT_POLICY and GOMP_SPINCOUNT are unset)"
                           : "");
    return buf;
}

void lg_json_string(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

void lg_json_number(FILE *f, const char *fmt, double v) {
    if (isfinite(v)) fprintf(f, fmt, v);
    else fputs("null", f);
}

/* A byte count: a number with an optional K, M, G or T (powers of 1024). */
int lg_cli_parse_size(const char *cmd, const char *opt, const char *s, double *out) {
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    double mul = 1;
    if (end != s && *end) {
        switch (*end) {
        case 'K': case 'k': mul = 1024.0; break;
        case 'M': case 'm': mul = 1024.0 * 1024; break;
        case 'G': case 'g': mul = 1024.0 * 1024 * 1024; break;
        case 'T': case 't': mul = 1024.0 * 1024 * 1024 * 1024; break;
        default: mul = 0;
        }
        if (mul && (end[1] == 'B' || end[1] == 'b') ) end++;
        if (mul) end++;
    }
    if (end != s && !*end && !errno && isfinite(v) && mul != 0 && !(v > 0)) {
        lg_cli_errorf(cmd, "%s: '%s': the size must be above 0 (e.g. 512M, 8G)", opt, s);
        return -1;
    }
    if (end == s || *end || errno || !isfinite(v) || !(v > 0) || mul == 0) {
        lg_cli_errorf(cmd, "%s: '%s' is not a size (e.g. 512M, 8G)", opt, s);
        return -1;
    }
    *out = v * mul;
    return 0;
}

/* The number in a cgroup file of one value (memory.max: a number or "max"),
 * or in the line "key N" of memory.stat when key is given; 0 for none,
 * "max", a value of 2^60 or more (v1's page-rounded LONG_MAX) or a file that
 * cannot be read. */
static double lg__cgroup_value(const char *path, const char *key) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[256];
    double v = 0;
    const size_t kl = key ? strlen(key) : 0;
    while (fgets(line, sizeof line, f)) {
        const char *s = line;
        if (key) {
            if (strncmp(line, key, kl) != 0 || line[kl] != ' ') continue;
            s = line + kl + 1;
        }
        char *end = NULL;
        errno = 0;
        const unsigned long long u = strtoull(s, &end, 10);
        if (end != s && !errno && (*end == '\n' || *end == '\0') && u < (1ull << 60)) v = (double)u;
        break;
    }
    fclose(f);
    return v;
}

double lg_cli_cgroup_memory(const char *self, const char *root) {
    FILE *f = fopen(self, "r");
    if (!f) return 0;
    char line[4096], path[4096 + 512];
    double limit = 0;
    while (fgets(line, sizeof line, f)) {
        /* hierarchy-id:controllers:path */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2) continue;
        char *g = c2 + 1;
        g[strcspn(g, "\n")] = '\0';
        if (g[0] != '/') continue;
        *c2 = '\0';
        const char *ctl = c1 + 1;
        double v = 0;
        if (!*ctl) { /* v2: the group and those above it, the smallest */
            int own = 0;
            for (size_t len = strlen(g); len > 1; ) {
                if (snprintf(path, sizeof path, "%s%.*s/memory.max", root, (int)len, g) >= (int)sizeof path) break;
                own |= access(path, R_OK) == 0;
                const double x = lg__cgroup_value(path, NULL);
                if (x > 0 && (v == 0 || x < v)) v = x;
                while (len > 1 && g[len - 1] != '/') len--;
                if (len > 1) len--; /* the '/' before the last name */
            }
            if (!own && snprintf(path, sizeof path, "%s/memory.max", root) < (int)sizeof path)
                v = lg__cgroup_value(path, NULL);
        } else { /* v1: the memory controller's own hierarchy */
            int mem = 0;
            for (const char *t = ctl; *t; ) {
                const size_t n = strcspn(t, ",");
                mem |= n == 6 && !strncmp(t, "memory", 6);
                t += n + (t[n] == ',');
            }
            if (!mem) continue;
            int n = snprintf(path, sizeof path, "%s/memory%s/memory.stat", root, strcmp(g, "/") ? g : "");
            if (n >= 0 && n < (int)sizeof path && access(path, R_OK) != 0) /* not under root: a namespace's */
                n = snprintf(path, sizeof path, "%s/memory/memory.stat", root);
            if (n < 0 || n >= (int)sizeof path) continue;
            v = lg__cgroup_value(path, "hierarchical_memory_limit");
        }
        if (v > 0 && (limit == 0 || v < limit)) limit = v;
    }
    fclose(f);
    return limit;
}

double lg_cli_memory_limit(double max_memory, const char **what, const char **why) {
    *what = "--max-memory";
    *why = "";
    if (max_memory > 0) return max_memory;
    double limit = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    *what = "this machine's memory";
    const double group = lg_cli_cgroup_memory("/proc/self/cgroup", "/sys/fs/cgroup");
    if (group > 0 && group < limit) {
        limit = group;
        *what = "the memory limit of this process's control group";
        *why = ": a batch job's memory request or a container's limit, past which the kernel kills the process";
    }
    return limit;
}

double lg_cli_unit(double limit, const char **u) {
    static const char *const names[4] = {"bytes", "KiB", "MiB", "GiB"};
    int k = 3;
    while (k > 0 && limit < ldexp(1, 10 * k)) k--;
    *u = names[k];
    return ldexp(1, 10 * k);
}

lg_status lg_cli_run_memory(const lg_model_config *mc, const lg_train_config *tc, const lg_dataset *ds,
                            lg_trainer_mem *est, double *total) {
    lg_status st = lg_trainer_estimate(mc, tc, ds, est);
    *total = st == LG_OK ? (double)est->total + (double)lg_dataset_bytes(ds) : 0;
    return st;
}

int lg_cli_memory_check(const char *cmd, const lg_model_config *mc, const lg_train_config *tc, const lg_dataset *ds,
                        double max_memory) {
    lg_trainer_mem est;
    double total;
    lg_status st = lg_cli_run_memory(mc, tc, ds, &est, &total);
    if (st != LG_OK) {
        lg_cli_errorf(cmd, "%s", lg_last_error());
        return lg_cli_exit_for(st);
    }
    const char *what, *why, *u;
    const double limit = lg_cli_memory_limit(max_memory, &what, &why);
    const double data = (double)lg_dataset_bytes(ds);
    if (limit > 0 && total > limit) {
        /* the estimate in its unit, the limit in its own (a small one: 1.00 KiB, not 0.00 MiB) */
        const char *lu;
        const double U = lg_cli_unit(total, &u), LU = lg_cli_unit(limit, &lu);
        lg_cli_errorf(cmd,
                      "the model needs about %.2f %s (parameters and Adam state %.2f, activations %.2f, "
                      "workspace %.2f, graphs and features %.2f, the data set %.2f), more than %s (%.2f %s)%s",
                      total / U, u, (double)est.params / U, (double)est.activations / U, (double)est.workspace / U,
                      (double)est.other / U, data / U, what, limit / LU, lu, why);
        return LG_EXIT_USAGE;
    }
    return LG_EXIT_OK;
}

/* Refuses to make or read (verb) a data set whose peak (the generator's or
 * the loader's estimate, need bytes) exceeds the memory limit, before
 * anything is allocated: 0, or the exit status after the message. */
static int lg__cli_data_fits(const char *cmd, const lg_cli_data *d, const char *verb, const char *data, double need,
                             double max_memory) {
    const char *what, *why, *u;
    const double limit = lg_cli_memory_limit(max_memory, &what, &why);
    if (limit <= 0 || need <= limit) return LG_EXIT_OK;
    lg__cli_status_clear(d);
    const char *lu; /* the need in its unit, the limit in its own (1.00 KiB, not 0.00 MiB) */
    const double U = lg_cli_unit(need, &u), LU = lg_cli_unit(limit, &lu);
    lg_cli_errorf(cmd, "%s the data set (%s) needs about %.2f %s at its peak, more than %s (%.2f %s)%s", verb, data,
                  need / U, u, what, limit / LU, lu, why);
    return LG_EXIT_USAGE;
}

/* The stop signals (cli.h, LG_CLI_NSTOP). */
static const int lg__stop_signals[LG_CLI_NSTOP] = {SIGINT, SIGTERM, SIGHUP};

void lg_cli_catch_stop(const struct sigaction *act, struct sigaction *old) {
    for (int k = 0; k < LG_CLI_NSTOP; k++) {
        struct sigaction was;
        memset(&was, 0, sizeof was);
        was.sa_handler = SIG_DFL; /* should the query fail */
        (void)sigaction(lg__stop_signals[k], NULL, &was);
        if (old) old[k] = was;
        if (was.sa_handler != SIG_IGN) sigaction(lg__stop_signals[k], act, NULL);
    }
}

void lg_cli_restore_stop(const struct sigaction *old) {
    for (int k = 0; k < LG_CLI_NSTOP; k++) sigaction(lg__stop_signals[k], &old[k], NULL);
}

const char *lg_cli_stop_word(int sig) {
    return sig == SIGINT ? "interrupted" : sig == SIGHUP ? "hung up" : "terminated";
}

char *lg_cli_printable(char *s, size_t n) {
    for (size_t k = 0; k < n; k++)
        if ((unsigned char)s[k] < 0x20 || s[k] == 0x7f) s[k] = '?';
    return s;
}

const char *lg_cli_acc(char *buf, size_t cap, double v, int have) {
    if (have) snprintf(buf, cap, "%.4f", v);
    else snprintf(buf, cap, "n/a");
    return buf;
}

const char *lg_cli_shortest(char *buf, size_t cap, double v) {
    if (v == floor(v) && fabs(v) < 1e15) { /* an integer: 1000, not 1e+03 */
        snprintf(buf, cap, "%.0f", v);
        return buf;
    }
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(buf, cap, "%.*g", digits, v);
        if (strtod(buf, NULL) == v) break;
    }
    return buf;
}
