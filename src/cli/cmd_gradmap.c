/* lipgnn gradmap: an SVG heat-map of per-layer gradient norms (layer x epoch)
 * from one or two 'train --grad-log' CSV files, on a shared log colour scale. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "cli/svg.h"
#include "train/optim.h"

static const char lg__gradmap_help[] =
    "Usage: lipgnn gradmap --log FILE [--log FILE2] --out OUT.svg [OPTIONS]\n"
    "Draws the gradient norms logged by 'lipgnn train --grad-log FILE' as a heat-map:\n"
    "layers on the y axis (layer 0 at the bottom; with --group all, the input and\n"
    "output linear layers below and above, where the log has them), epochs on the x\n"
    "axis, colour = log10(norm). With two logs (e.g. without and with --norm\n"
    "lipschitz) the two panels share one colour scale. Zero norms are grey, inf/nan\n"
    "red. With more than 400 epochs a cell shows the maximum over a bin of epochs.\n"
    "Each cell's tooltip (its <title>, shown on hover by browsers) gives its layer,\n"
    "epochs and value.\n"
    "\n"
    "  --log FILE          a grad-log CSV (header epoch,layer,group,norm); once or twice\n"
    "  --out FILE          the SVG to write\n"
    "  --group G           attention (default: the attention parameters) or all\n"
    "  --title T           a title above the figure\n"
    "  --label L           the title of a panel (default: the file's base name); as many\n"
    "                      as --log\n"
    "  --explode-threshold X, --explode-growth X, --explode-window W\n"
    "                      the explosion detector's settings, as given to 'train'\n"
    "                      (defaults 1000, 1000, 10). It is run again on each log's 'all'\n"
    "                      norms, from the log's first epoch, and where it fires the\n"
    "                      epoch is marked by a dashed line and the layer's cell by a\n"
    "                      frame; below the panels, each log's verdict (on stderr too\n"
    "                      but 'no explosion' from epoch 1). The log has no loss: an\n"
    "                      explosion 'train' found in a non-finite loss alone is not\n"
    "                      seen here, and where the norms are not finite either the\n"
    "                      replay names the first such layer, not the one whose output\n"
    "                      first was. A log that starts after epoch 1 (train --resume)\n"
    "                      is replayed without the epochs before, which the run's\n"
    "                      detector had seen: the verdict says so\n"
    "  -h, --help          this help\n";

enum { LG__MAX_LOGS = 2, LG__MAX_COLS = 400, LG__MAX_LAYER = 9999, LG__MAX_EPOCH = 100000000, LG__LINE = 256,
       LG__IO_OUT = LG__MAX_LAYER + 2 /* (while reading) the output linear layer's row */ };

/* Cell states, in the order a bin's maximum prefers them. */
enum { LG__MISSING = 0, LG__ZERO = 1, LG__VALUE = 2, LG__BAD = 3 };

/* One row of the chosen group. */
typedef struct lg__row {
    long epoch;  /* 1-based epoch                      */
    long layer;  /* 0-based layer                      */
    double norm; /* >= 0, inf or nan                   */
    long line;   /* line number in the file            */
} lg__row;

/* One panel: the chosen group's rows of one file, binned into a grid. */
typedef struct lg__panel {
    const char *path;     /* the file                                      */
    const char *label;    /* the panel title                               */
    lg__row *rows;        /* rows of the chosen group                      */
    size_t nrows, cap;    /* count and capacity of rows                    */
    long emin, emax;      /* epoch range                                   */
    long layers;          /* rows drawn: natt + io_in + io_out              */
    int io_in, io_out;    /* 1: the input (output) linear layer's rows are
                             drawn (group 'all' of a log that has them): row
                             0 the input one, row l + io_in attention layer l,
                             the last row the output one                     */
    long natt;            /* attention layers (rows drawn but io_in, io_out) */
    long bin;             /* epochs per column                             */
    long cols;            /* columns                                       */
    double *val;          /* layers x cols maxima (row-major, layer major) */
    unsigned char *state; /* layers x cols LG__* states                    */
    lg__row *det;         /* the 'all' rows, the detector's norms, when the
                             chosen group is another (else rows are)       */
    size_t ndet, detcap;  /* count and capacity of det                     */
    int xstate;           /* LG__X_*: what the detector found               */
    long xfirst;          /* the first epoch it saw (> 1: a resumed run's log) */
    long xepoch;          /* LG__X_FIRED: the epoch it fired at             */
    int xlayer;           /* ... and the layer it named (-1: none)          */
    char xwhy[256];       /* its reason, or why it could not be run         */
} lg__panel;

/* What replaying the detector over a log found (lg__panel_replay). */
enum { LG__X_NONE = 0, LG__X_FIRED = 1, LG__X_UNKNOWN = 2 };

static void lg__panel_free(lg__panel *p) {
    free(p->det);
    free(p->rows);
    free(p->val);
    free(p->state);
}

/* Strict non-negative decimal integer of at most 9 digits; -1 if invalid. */
static long lg__parse_count(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n > 9) return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* A norm: a number >= 0, inf or nan (also "-nan", as printf writes it). */
static int lg__parse_norm(const char *s, double *out) {
    if (s[0] == '-') {
        if (strcasecmp(s + 1, "nan")) return -1;
        *out = NAN;
        return 0;
    }
    if (!((s[0] >= '0' && s[0] <= '9') || s[0] == '.' || s[0] == 'i' || s[0] == 'I' || s[0] == 'n' || s[0] == 'N'))
        return -1;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end) return -1;
    /* overflow gives inf, underflow 0 or a subnormal: both are norms */
    if (!(v >= 0) && !isnan(v)) return -1;
    *out = v;
    return 0;
}

/* Reads one line (without its "\n" or "\r\n") into buf; returns its length,
 * -1 at end of file, -2 if too long, -3 on a NUL byte. */
static int lg__read_line(FILE *f, char *buf, int *eof) {
    int n = 0, c;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (c == 0) return -3;
        if (n >= LG__LINE - 1) return -2;
        buf[n++] = (char)c;
    }
    if (c == EOF) {
        *eof = 1;
        if (n == 0) return -1;
    }
    if (n > 0 && buf[n - 1] == '\r') n--;
    buf[n] = 0;
    return n;
}

static int lg__row_cmp(const void *a, const void *b) {
    const lg__row *x = a, *y = b;
    if (x->layer != y->layer) return x->layer < y->layer ? -1 : 1;
    if (x->epoch != y->epoch) return x->epoch < y->epoch ? -1 : 1;
    return x->line < y->line ? -1 : (x->line > y->line);
}

#define LG__BAD_LINE(...) do { lg_cli_errorf(cmd, __VA_ARGS__); rc = LG_EXIT_USAGE; goto done; } while (0)

/* Reads and validates p->path, keeping the rows of `group`, then bins them.
 * Returns an exit status (message printed). O(rows log rows). */
static int lg__panel_read(const char *cmd, lg__panel *p, const char *group) {
    const char *path = p->path;
    char buf[LG__LINE];
    int rc = LG_EXIT_OK, eof = 0;
    long line = 0;
    size_t other = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        lg_cli_errorf(cmd, "%s: cannot open: %s", path, strerror(errno));
        return LG_EXIT_USAGE;
    }
    for (;;) {
        int n = lg__read_line(f, buf, &eof);
        if (n == -1) break;
        line++;
        if (n == -2) LG__BAD_LINE("%s:%ld: line longer than %d characters", path, line, LG__LINE - 2);
        if (n == -3) LG__BAD_LINE("%s:%ld: NUL byte", path, line);
        if (line == 1) {
            const char *h = buf;
            if (!strncmp(h, "\xEF\xBB\xBF", 3)) h += 3; /* a UTF-8 byte-order mark (a spreadsheet's save) */
            if (strcmp(h, "epoch,layer,group,norm"))
                LG__BAD_LINE("%s:1: header is not 'epoch,layer,group,norm'", path);
            continue;
        }
        if (n == 0) continue; /* a blank line (an editor's last newline) */
        char *fld[4];
        int k = 0;
        char *s = buf;
        fld[k++] = s;
        for (; *s; s++) {
            if (*s != ',') continue;
            if (k == 4) LG__BAD_LINE("%s:%ld: more than 4 fields", path, line);
            *s = 0;
            fld[k++] = s + 1;
        }
        if (k != 4) LG__BAD_LINE("%s:%ld: %d field%s, expected 4 (epoch,layer,group,norm)", path, line, k, k == 1 ? "" : "s");
        /* the input and output linear layers' rows: layer -1 and the layer count (train's grad log) */
        const int in = !strcmp(fld[2], "input"), outl = !strcmp(fld[2], "output");
        long epoch = lg__parse_count(fld[0]), layer = in ? (strcmp(fld[1], "-1") ? -2 : -1) : lg__parse_count(fld[1]);
        double norm;
        if (epoch < 1 || epoch > LG__MAX_EPOCH)
            LG__BAD_LINE("%s:%ld: epoch '%s' is not an integer in 1..%d", path, line, fld[0], LG__MAX_EPOCH);
        if (in && layer != -1) LG__BAD_LINE("%s:%ld: the input layer's row has layer '%s', not -1", path, line, fld[1]);
        if (!in && (layer < 0 || layer > LG__MAX_LAYER))
            LG__BAD_LINE("%s:%ld: layer '%s' is not an integer in 0..%d", path, line, fld[1], LG__MAX_LAYER);
        if (strcmp(fld[2], "attention") && strcmp(fld[2], "all") && !in && !outl)
            LG__BAD_LINE("%s:%ld: group '%s' is not 'attention', 'all', 'input' or 'output'", path, line, fld[2]);
        if (lg__parse_norm(fld[3], &norm))
            LG__BAD_LINE("%s:%ld: norm '%s' is not a number >= 0, inf or nan", path, line, fld[3]);
        if (in || outl) { /* drawn with the 'all' rows, as rows of their own (placed below) */
            if (strcmp(group, "all")) continue;
            if (outl) layer += LG__IO_OUT; /* (its layer, checked below: the attention layers' count) */
        }
        const int chosen = !strcmp(fld[2], group) || in || outl;
        if (!chosen) other++;
        if (!chosen && strcmp(fld[2], "all")) continue; /* (the 'all' rows are kept for the detector) */
        lg__row **rows = chosen ? &p->rows : &p->det;
        size_t *nr = chosen ? &p->nrows : &p->ndet, *cp = chosen ? &p->cap : &p->detcap;
        if (*nr == *cp) {
            size_t cap = *cp ? 2 * *cp : 256;
            lg__row *r = realloc(*rows, cap * sizeof *r);
            if (!r) { lg_cli_errorf(cmd, "%s: out of memory", path); rc = LG_EXIT_FAIL; goto done; }
            *rows = r;
            *cp = cap;
        }
        (*rows)[(*nr)++] = (lg__row){epoch, layer, norm, line};
    }
    if (ferror(f)) {
        lg_cli_errorf(cmd, "%s: read error: %s", path, strerror(errno));
        rc = LG_EXIT_USAGE;
        goto done;
    }
    if (line == 0) LG__BAD_LINE("%s: empty file (no header)", path);
    if (p->nrows == 0)
        LG__BAD_LINE("%s: no '%s' rows (%zu row%s of the other group)", path, group, other, other == 1 ? "" : "s");
    {   /* the input linear layer's rows become row 0, the attention layers' the next, the output's the last */
        long L = 0;
        for (size_t i = 0; i < p->nrows; i++) {
            const long l = p->rows[i].layer;
            p->io_in |= l == -1;
            p->io_out |= l >= LG__IO_OUT;
            if (l >= 0 && l < LG__IO_OUT && l + 1 > L) L = l + 1;
        }
        for (size_t i = 0; i < p->nrows; i++) {
            lg__row *r = &p->rows[i];
            if (r->layer >= LG__IO_OUT && r->layer - LG__IO_OUT != L)
                LG__BAD_LINE("%s:%ld: the output layer's row has layer %ld, not %ld (the attention layers are 0..%ld)",
                             path, r->line, r->layer - LG__IO_OUT, L, L - 1);
            r->layer = r->layer == -1 ? 0 : r->layer >= LG__IO_OUT ? L + p->io_in : r->layer + p->io_in;
        }
        p->natt = L;
    }
    qsort(p->rows, p->nrows, sizeof *p->rows, lg__row_cmp);
    p->emin = p->emax = p->rows[0].epoch;
    p->layers = 0;
    for (size_t i = 0; i < p->nrows; i++) {
        const lg__row *r = &p->rows[i];
        if (i && r->layer == r[-1].layer && r->epoch == r[-1].epoch) {
            const int rin = p->io_in && r->layer == 0, rout = p->io_out && r->layer == p->natt + p->io_in;
            LG__BAD_LINE("%s:%ld: epoch %ld, layer %ld, group %s repeats line %ld", path, r->line, r->epoch,
                         rin ? -1 : rout ? p->natt : r->layer - p->io_in, rin ? "input" : rout ? "output" : group,
                         r[-1].line);
        }
        if (r->epoch < p->emin) p->emin = r->epoch;
        if (r->epoch > p->emax) p->emax = r->epoch;
        if (r->layer + 1 > p->layers) p->layers = r->layer + 1;
    }
    long span = p->emax - p->emin + 1;
    p->bin = (span + LG__MAX_COLS - 1) / LG__MAX_COLS;
    p->cols = (span + p->bin - 1) / p->bin;
    size_t cells = (size_t)p->layers * (size_t)p->cols; /* <= 10^4 x 400 */
    p->val = malloc(cells * sizeof *p->val);
    p->state = calloc(cells, 1);
    if (!p->val || !p->state) { lg_cli_errorf(cmd, "%s: out of memory", path); rc = LG_EXIT_FAIL; goto done; }
    for (size_t i = 0; i < p->nrows; i++) {
        const lg__row *r = &p->rows[i];
        size_t c = (size_t)r->layer * (size_t)p->cols + (size_t)((r->epoch - p->emin) / p->bin);
        int st = !isfinite(r->norm) ? LG__BAD : r->norm > 0 ? LG__VALUE : LG__ZERO;
        if (st > p->state[c]) { p->state[c] = (unsigned char)st; p->val[c] = r->norm; }
        else if (st == LG__VALUE && p->state[c] == LG__VALUE && r->norm > p->val[c]) p->val[c] = r->norm;
    }
done:
    fclose(f);
    return rc;
}

static int lg__row_cmp_epoch(const void *a, const void *b) {
    const lg__row *x = a, *y = b;
    if (x->epoch != y->epoch) return x->epoch < y->epoch ? -1 : 1;
    if (x->layer != y->layer) return x->layer < y->layer ? -1 : 1;
    return x->line < y->line ? -1 : (x->line > y->line);
}

/* Runs train's explosion detector (lg__explode_observe, with tc's settings)
 * again over p's 'all' rows (group: the chosen one), epoch by epoch from the log's first, with a
 * finite loss (the log has none): sets p->xstate, xepoch, xlayer and xwhy.
 * It is replayed up to the first epoch that lacks a layer's norm or repeats
 * one: an explosion before it is found; else LG__X_UNKNOWN, xwhy saying where
 * and that there was none before. The norms are
 * those of the log, printed with 9 significant digits: a norm within that
 * of the threshold may be judged otherwise than in the run. Returns an exit
 * status (a message printed). O(rows log rows). */
static int lg__panel_replay(const char *cmd, lg__panel *p, const char *group, const lg_train_config *tc) {
    const int all = !strcmp(group, "all"); /* the chosen rows are the detector's */
    const lg__row *src = all ? p->rows : p->det;
    const size_t nsrc = all ? p->nrows : p->ndet;
    p->xstate = LG__X_UNKNOWN;
    p->xepoch = -1;
    p->xlayer = -1;
    lg__row *r = malloc((nsrc ? nsrc : 1) * sizeof *r);
    if (!r) { lg_cli_errorf(cmd, "%s: out of memory", p->path); return LG_EXIT_FAIL; }
    size_t n = 0; /* the attention layers' rows (not the drawn input and output layers'), their layers from 0 */
    for (size_t i = 0; i < nsrc; i++) {
        const long shift = all ? p->io_in : 0; /* (the drawn rows of the linear layers are not the detector's) */
        if (all && (src[i].layer < shift || src[i].layer >= shift + p->natt)) continue;
        r[n] = src[i];
        r[n++].layer -= shift;
    }
    if (n == 0) {
        snprintf(p->xwhy, sizeof p->xwhy, "the log has no 'all' rows, the norms the detector watches");
        free(r);
        return LG_EXIT_OK;
    }
    qsort(r, n, sizeof *r, lg__row_cmp_epoch);
    long e0 = r[0].epoch, L = 0;
    p->xfirst = e0;
    for (size_t i = 0; i < n; i++)
        if (r[i].layer + 1 > L) L = r[i].layer + 1;
    int rc = LG_EXIT_OK;
    double *norms = NULL;
    lg_explode d;
    memset(&d, 0, sizeof d);
    /* the epochs replayed: those before the first row out of place (row i
     * must be epoch e0 + i / L, layer i % L), whole; gap says what is wrong there */
    size_t ok = n;
    char gap[200] = "";
    for (size_t i = 0; i < n && ok == n; i++) {
        const long e = e0 + (long)(i / (size_t)L), l = (long)(i % (size_t)L);
        if (r[i].epoch == e && r[i].layer == l) continue;
        ok = i - i % (size_t)L;
        if (i && r[i].epoch == r[i - 1].epoch && r[i].layer == r[i - 1].layer)
            snprintf(gap, sizeof gap, "line %ld repeats the 'all' norm of epoch %ld, layer %ld", r[i].line, r[i].epoch,
                     r[i].layer);
        else snprintf(gap, sizeof gap, "the log has no 'all' norm of epoch %ld, layer %ld", e, l);
    }
    if (ok == n && n % (size_t)L) {
        ok = n - n % (size_t)L;
        snprintf(gap, sizeof gap, "the log has no 'all' norm of epoch %ld, layer %ld", r[n - 1].epoch, r[n - 1].layer + 1);
    }
    const lg_explode_opts o = {tc->explode_threshold, tc->explode_growth, tc->explode_window};
    if (!(norms = malloc((size_t)L * sizeof *norms)) || lg__explode_init(&d, (int)L, &o) != LG_OK) {
        lg_cli_errorf(cmd, "%s: %s", p->path, norms ? lg_last_error() : "out of memory");
        rc = LG_EXIT_FAIL;
        goto done;
    }
    p->xstate = LG__X_NONE;
    for (size_t i = 0; i < ok; i += (size_t)L) {
        for (long l = 0; l < L; l++) norms[l] = r[i + (size_t)l].norm;
        if (lg__explode_observe(&d, r[i].epoch, 0, -1, norms)) {
            p->xstate = LG__X_FIRED;
            p->xepoch = d.epoch;
            p->xlayer = d.layer;
            snprintf(p->xwhy, sizeof p->xwhy, "%s", d.reason);
            break;
        }
    }
    if (p->xstate == LG__X_NONE && ok < n) { /* no explosion before the gap: after it, unknown */
        p->xstate = LG__X_UNKNOWN;
        if (ok) snprintf(p->xwhy, sizeof p->xwhy, "%s (none up to epoch %ld)", gap, r[ok - 1].epoch);
        else snprintf(p->xwhy, sizeof p->xwhy, "%s", gap);
    }
done:
    lg__explode_destroy(&d);
    free(norms);
    free(r);
    return rc;
}

/* The base name of a path ("" stays ""). */
static const char *lg__base(const char *path) {
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

/* "10" followed by the exponent k in Unicode superscripts. */
static void lg__pow10_label(char *out, size_t size, long k) {
    static const char *sup[10] = {"\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074",
                                  "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"};
    char digits[32];
    snprintf(out, size, "10%s", k < 0 ? "\u207b" : "");
    snprintf(digits, sizeof digits, "%ld", k < 0 ? -k : k);
    for (const char *d = digits; *d; d++)
        if (strlen(out) + strlen(sup[*d - '0']) < size) strcat(out, sup[*d - '0']);
}

/* A "nice" tick step (1, 2, 5 x 10^k) giving at most `most` ticks over n units. */
static long lg__nice_step(long n, long most) {
    long step = 1;
    for (;;) {
        for (int m = 0; m < 3; m++) {
            long s = step * (m == 0 ? 1 : m == 1 ? 2 : 5);
            if (n / s < most) return s;
        }
        step *= 10;
    }
}

/* Text rotated by `angle` degrees about its anchor (x, y). */
static void lg__vtext(FILE *f, double x, double y, double size, int angle, const char *attrs, const char *text) {
    char a[160];
    snprintf(a, sizeof a, "%s%stransform=\"rotate(%d %.2f %.2f)\"", attrs ? attrs : "", attrs ? " " : "", angle, x, y);
    lg_svg_text(f, x, y, size, "middle", a, text);
}

/* Layout constants (user units). */
#define LG__PW 480.0   /* plot width                        */
#define LG__LEFT 62.0  /* room for the layer axis            */
#define LG__GAP 28.0   /* between panels                     */
#define LG__BARW 18.0  /* colour bar width                   */

static const char lg__grey[] = "#bdbdbd", lg__red[] = "#e31a1c";

/* The name of drawn row l of p: "layer 3", or with its linear layers'
 * rows (p->io_in, io_out) "input layer" / "output layer". */
static void lg__row_name(const lg__panel *p, long l, char *buf, size_t cap) {
    if (p->io_in && l == 0) snprintf(buf, cap, "input layer");
    else if (p->io_out && l == p->natt + p->io_in) snprintf(buf, cap, "output layer");
    else snprintf(buf, cap, "layer %ld", l - p->io_in);
}

/* Draws panel p with its plot area at (x, y), plot height ph; log10 colour
 * scale [lo, hi]. */
static void lg__draw_panel(FILE *f, const lg__panel *p, double x, double y, double ph, double lo, double hi) {
    char col[8], txt[64];
    double cw = LG__PW / (double)p->cols, ch = ph / (double)p->layers;
    lg_svg_text(f, x + LG__PW / 2, y - 10, 14, "middle", "font-weight=\"bold\" class=\"panel-title\"", p->label);
    lg_svg_group_begin(f, "class=\"panel\" shape-rendering=\"crispEdges\"");
    lg_svg_rect(f, x, y, LG__PW, ph, "#ffffff", "stroke=\"#999999\" stroke-width=\"0.5\"");
    for (long l = 0; l < p->layers; l++)
        for (long c = 0; c < p->cols; c++) {
            size_t i = (size_t)l * (size_t)p->cols + (size_t)c;
            const char *fill;
            switch (p->state[i]) {
            case LG__MISSING: continue;
            case LG__ZERO: fill = lg__grey; break;
            case LG__BAD: fill = lg__red; break;
            default:
                lg_svg_viridis((log10(p->val[i]) - lo) / (hi - lo), col);
                fill = col;
            }
            /* its tooltip: the layer, the epoch (or the bin's first and last) and the value drawn */
            const long ea = p->emin + c * p->bin, eb = ea + p->bin - 1 < p->emax ? ea + p->bin - 1 : p->emax;
            char tip[160], ep[64], rn[32];
            if (eb > ea) snprintf(ep, sizeof ep, "epochs %ld-%ld", ea, eb);
            else snprintf(ep, sizeof ep, "epoch %ld", ea);
            lg__row_name(p, l, rn, sizeof rn);
            if (p->state[i] == LG__ZERO) snprintf(tip, sizeof tip, "%s, %s: 0", rn, ep);
            else if (p->state[i] == LG__BAD) snprintf(tip, sizeof tip, "%s, %s: inf or nan", rn, ep);
            else snprintf(tip, sizeof tip, "%s, %s: %s%.4g", rn, ep, eb > ea ? "max " : "", p->val[i]);
            lg_svg_rect_title(f, x + c * cw, y + (p->layers - 1 - l) * ch, cw, ch, fill, "class=\"cell\"", tip);
        }
    lg_svg_group_end(f);
    if (p->xstate == LG__X_FIRED && p->xepoch >= p->emin && p->xepoch <= p->emax) {
        /* where the detector fired: a dashed line over its epoch's column, a frame round the layer's cell */
        const long c = (p->xepoch - p->emin) / p->bin;
        const double xx = x + ((double)c + 0.5) * cw;
        lg_svg_line(f, xx, y, xx, y + ph, "#000000", 1.5, "class=\"explosion\" stroke-dasharray=\"4 3\"");
        const long row = p->xlayer + p->io_in; /* (the detector's layers are the attention layers) */
        if (p->xlayer >= 0 && row < p->layers)
            lg_svg_rect(f, x + (double)c * cw, y + (double)(p->layers - 1 - row) * ch, cw, ch, NULL,
                        "class=\"explosion-cell\" stroke=\"#000000\" stroke-width=\"2\"");
    }
    /* layer axis: labels at the middle of the rows ("in" and "out" at the
     * linear layers' rows, the attention layers numbered from 0 between; a
     * number closer than a label's height to "in" or "out" is left out) */
    const long na = p->natt, ls = lg__nice_step(na, 12);
    for (long l = -p->io_in; l < na + p->io_out; l++) {
        if (l >= 0 && l < na && l % ls) continue;
        if (l >= 0 && l < na && ((p->io_in && (double)(l + 1) * ch < 11) || (p->io_out && (double)(na - l) * ch < 11)))
            continue;
        double yy = y + (p->layers - 0.5 - (double)(l + p->io_in)) * ch;
        lg_svg_line(f, x - 4, yy, x, yy, "#333333", 1, NULL);
        if (l < 0) snprintf(txt, sizeof txt, "in");
        else if (l >= na) snprintf(txt, sizeof txt, "out");
        else snprintf(txt, sizeof txt, "%ld", l);
        lg_svg_text(f, x - 6, yy + 4, 11, "end", NULL, txt);
    }
    lg__vtext(f, x - LG__LEFT + 16, y + ph / 2, 13, -90, "class=\"axis-title\"", "layer");
    /* epoch axis: the first epoch, then multiples of the step */
    long span = p->emax - p->emin + 1, es = lg__nice_step(span, 9);
    for (long e = p->emin; e <= p->emax;) {
        double xx = x + ((double)(e - p->emin) + 0.5) / (double)p->bin * cw;
        lg_svg_line(f, xx, y + ph, xx, y + ph + 4, "#333333", 1, NULL);
        snprintf(txt, sizeof txt, "%ld", e);
        lg_svg_text(f, xx, y + ph + 16, 11, "middle", NULL, txt);
        long next = (e / es + 1) * es;
        if (e == p->emin && next - e < es / 2) next += es;
        e = next;
    }
    lg_svg_text(f, x + LG__PW / 2, y + ph + 34, 13, "middle", "class=\"axis-title\"", "epoch");
}

/* Draws the colour bar for log10 range [lo, hi] at (x, y), height h. */
static void lg__draw_colorbar(FILE *f, double x, double y, double h, double lo, double hi, const char *group) {
    char col[8], txt[64];
    enum { SLICES = 64 };
    lg_svg_group_begin(f, "id=\"colorbar\" shape-rendering=\"crispEdges\"");
    for (int i = 0; i < SLICES; i++) {
        lg_svg_viridis((i + 0.5) / SLICES, col);
        lg_svg_rect(f, x, y + h - (i + 1) * h / SLICES, LG__BARW, h / SLICES + 0.3, col, NULL);
    }
    lg_svg_rect(f, x, y, LG__BARW, h, NULL, "stroke=\"#333333\" stroke-width=\"0.5\"");
    lg_svg_group_end(f);
    /* ticks at powers of ten, thinned to at most ~8; the ends labelled when
     * fewer than two powers fall inside */
    long k0 = (long)ceil(lo - 1e-9), k1 = (long)floor(hi + 1e-9), ks = 1, nt = 0;
    if (k1 - k0 >= 8) ks = (k1 - k0) / 8 + 1;
    for (long k = k0; k <= k1; k++) {
        if (((k % ks) + ks) % ks) continue;
        double yy = y + h - ((double)k - lo) / (hi - lo) * h;
        lg_svg_line(f, x + LG__BARW, yy, x + LG__BARW + 4, yy, "#333333", 1, NULL);
        lg__pow10_label(txt, sizeof txt, k);
        lg_svg_text(f, x + LG__BARW + 6, yy + 4, 11, "start", "class=\"cbar-tick\"", txt);
        nt++;
    }
    if (nt < 2) {
        double ends[2] = {lo, hi};
        for (int i = 0; i < 2; i++) {
            double yy = y + h - (ends[i] - lo) / (hi - lo) * h;
            snprintf(txt, sizeof txt, "%.3g", pow(10, ends[i]));
            lg_svg_line(f, x + LG__BARW, yy, x + LG__BARW + 4, yy, "#333333", 1, NULL);
            lg_svg_text(f, x + LG__BARW + 6, yy + 4, 11, "start", "class=\"cbar-tick\"", txt);
        }
    }
    snprintf(txt, sizeof txt, "gradient norm (%s), log scale", group);
    lg__vtext(f, x + LG__BARW + 64, y + h / 2, 12, 90, NULL, txt);
}

int lg_cmd_gradmap(int argc, char **argv) {
    const char *cmd = "gradmap";
    static const struct option opts[] = {
        {"log", required_argument, 0, 'l'},   {"out", required_argument, 0, 'o'},
        {"group", required_argument, 0, 'g'}, {"title", required_argument, 0, 't'},
        {"label", required_argument, 0, 'L'}, {"help", no_argument, 0, 'h'},
        /* (distinct values: getopt_long takes an abbreviation shared by options of one value for the first) */
        {"explode-threshold", required_argument, 0, 'X'}, {"explode-growth", required_argument, 0, 'Y'},
        {"explode-window", required_argument, 0, 'Z'},
        {0, 0, 0, 0},
    };
    lg_train_config tc; /* the detector's settings: train's defaults */
    lg_train_config_default(&tc);
    const char *logs[LG__MAX_LOGS], *labels[LG__MAX_LOGS], *out = NULL, *group = "attention", *title = NULL;
    int nlogs = 0, nlabels = 0, c, idx;
    optind = 0; /* glibc: a full restart (1 would keep a half-read "-xy" group of an earlier parse) */
    opterr = 0;
    while ((c = lg_cli_getopt(cmd, argc, argv, opts, &idx, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(lg__gradmap_help, stdout); return LG_EXIT_OK;
        case 'l':
            if (nlogs == LG__MAX_LOGS) { lg_cli_errorf(cmd, "at most %d --log files", LG__MAX_LOGS); return LG_EXIT_USAGE; }
            if (lg_cli_path_value(cmd, "--log", optarg)) return LG_EXIT_USAGE;
            logs[nlogs++] = optarg;
            break;
        case 'L':
            if (nlabels == LG__MAX_LOGS) { lg_cli_errorf(cmd, "at most %d --label", LG__MAX_LOGS); return LG_EXIT_USAGE; }
            labels[nlabels++] = optarg;
            break;
        case 'o': if (lg_cli_path_value(cmd, "--out", optarg)) return LG_EXIT_USAGE; out = optarg; break;
        case 'g':
            if (strcmp(optarg, "attention") && strcmp(optarg, "all")) {
                lg_cli_errorf(cmd, "--group: '%s' is not 'attention' or 'all'", optarg);
                return LG_EXIT_USAGE;
            }
            group = optarg;
            break;
        case 't': title = optarg; break;
        case 'X': case 'Y': case 'Z': {
            char opt[32];
            snprintf(opt, sizeof opt, "--%s", opts[idx].name);
            if (lg_cli_parse_explode(cmd, opt, optarg, &tc)) return LG_EXIT_USAGE;
            break;
        }
        default: /* '?': lg_cli_getopt printed the error */
            return LG_EXIT_USAGE;
        }
    }
    if (optind < argc) { lg_cli_errorf(cmd, "unexpected argument '%s'", argv[optind]); return LG_EXIT_USAGE; }
    if (!nlogs) { lg_cli_errorf(cmd, "--log FILE is required"); return LG_EXIT_USAGE; }
    if (!out || !*out) { lg_cli_errorf(cmd, "--out FILE is required"); return LG_EXIT_USAGE; }
    if (nlabels && nlabels != nlogs) {
        lg_cli_errorf(cmd, "%d --label for %d --log: give one per log, or none", nlabels, nlogs);
        return LG_EXIT_USAGE;
    }
    {
        const char *opt[1 + LG__MAX_LOGS], *path[1 + LG__MAX_LOGS];
        opt[0] = "--out", path[0] = out;
        for (int i = 0; i < nlogs; i++) opt[1 + i] = "--log", path[1 + i] = logs[i];
        if (lg_cli_check_clobber(cmd, 1 + nlogs, 1, opt, path, NULL)) return LG_EXIT_USAGE;
    }
    lg__panel pan[LG__MAX_LOGS];
    memset(pan, 0, sizeof pan);
    int rc = LG_EXIT_OK;
    FILE *f = NULL;
    for (int i = 0; i < nlogs; i++) {
        pan[i].path = logs[i];
        pan[i].label = nlabels ? labels[i] : lg__base(logs[i]);
        if ((rc = lg__panel_read(cmd, &pan[i], group))) goto done;
        if ((rc = lg__panel_replay(cmd, &pan[i], group, &tc))) goto done;
    }
    /* shared colour scale: log10 of the finite positive norms of all files */
    double lo = INFINITY, hi = -INFINITY;
    int any_zero = 0, any_bad = 0, any_missing = 0;
    long maxlayers = 0;
    for (int i = 0; i < nlogs; i++) {
        for (size_t r = 0; r < pan[i].nrows; r++) {
            double v = pan[i].rows[r].norm;
            if (isfinite(v) && v > 0) {
                double lv = log10(v);
                if (lv < lo) lo = lv;
                if (lv > hi) hi = lv;
            }
        }
        size_t cells = (size_t)pan[i].layers * (size_t)pan[i].cols;
        for (size_t k = 0; k < cells; k++) {
            any_zero |= pan[i].state[k] == LG__ZERO;
            any_bad |= pan[i].state[k] == LG__BAD;
            any_missing |= pan[i].state[k] == LG__MISSING;
        }
        if (pan[i].layers > maxlayers) maxlayers = pan[i].layers;
    }
    if (!(lo <= hi)) { lo = -1; hi = 1; }      /* no finite positive norm */
    if (hi - lo < 1e-6) { lo -= 0.5; hi += 0.5; }
    /* each log's explosion verdict (lg__panel_replay), below the panels and,
     * when it fired or could not run, on stderr */
    char verdict[LG__MAX_LOGS][1024];
    size_t vmax = 0; /* the longest, in characters */
    {
        char thr[32], gro[32], win[64], msg[512];
        lg_cli_shortest(thr, sizeof thr, tc.explode_threshold);
        lg_cli_shortest(gro, sizeof gro, tc.explode_growth);
        if (tc.explode_window > 0) snprintf(win, sizeof win, ", growth %s over %d epochs", gro, tc.explode_window);
        else snprintf(win, sizeof win, ", no growth check: window 0");
        for (int i = 0; i < nlogs; i++) {
            const lg__panel *p = &pan[i];
            char from[112] = "";
            if (p->xstate != LG__X_UNKNOWN && p->xfirst > 1) /* a resumed run's log */
                snprintf(from, sizeof from, " (replayed from epoch %ld, the log's first: the epochs before are not seen)",
                         p->xfirst);
            if (p->xstate == LG__X_FIRED)
                snprintf(msg, sizeof msg, "explosion at epoch %ld: %s%s", p->xepoch, p->xwhy, from);
            else if (p->xstate == LG__X_NONE)
                snprintf(msg, sizeof msg, "no explosion (threshold %s%s)%s", thr, win, from);
            else snprintf(msg, sizeof msg, "the explosion detector not run: %s", p->xwhy);
            snprintf(verdict[i], sizeof verdict[i], "%s: %s", p->label, msg);
            size_t nc = 0; /* UTF-8 characters */
            for (const char *q = verdict[i]; *q; q++) nc += ((unsigned char)*q & 0xC0) != 0x80;
            if (nc > vmax) vmax = nc;
            if (p->xstate != LG__X_NONE || *from) fprintf(stderr, "lipgnn %s: note: %s: %s\n", cmd, p->path, msg);
        }
    }
    /* layout */
    double ph = maxlayers * 18.0;
    if (ph < 140) ph = 140;
    if (ph > 480) ph = 480;
    double top = (title ? 34 : 8) + 26, bar_x = nlogs * (LG__LEFT + LG__PW + LG__GAP);
    double width = bar_x + LG__BARW + 86, height = top + ph + 44 + 26 + 18 * nlogs;
    if (LG__LEFT + 6.5 * (double)vmax + 16 > width) width = LG__LEFT + 6.5 * (double)vmax + 16; /* 11 px text: <= 6.5 px a character */
    if (!(f = fopen(out, "w"))) {
        lg_cli_errorf(cmd, "%s: cannot write: %s", out, strerror(errno));
        rc = LG_EXIT_USAGE;
        goto done;
    }
    lg_svg_begin(f, width, height, NULL);
    if (title) lg_svg_text(f, width / 2, 24, 16, "middle", "font-weight=\"bold\" class=\"title\"", title);
    for (int i = 0; i < nlogs; i++) {
        double ph_i = ph * (double)pan[i].layers / (double)maxlayers; /* same row height in every panel */
        double x = i * (LG__LEFT + LG__PW + LG__GAP) + LG__LEFT;
        lg__draw_panel(f, &pan[i], x, top + (ph - ph_i), ph_i, lo, hi);
    }
    lg__draw_colorbar(f, bar_x, top, ph, lo, hi, group);
    /* legend of the special colours */
    double lx = LG__LEFT, ly = top + ph + 50;
    lg_svg_group_begin(f, "class=\"legend\"");
    lg_svg_rect(f, lx, ly, 12, 12, lg__grey, "stroke=\"#666666\" stroke-width=\"0.5\"");
    lg_svg_text(f, lx + 16, ly + 10, 11, "start", NULL, any_zero ? "norm 0" : "norm 0 (none)");
    lg_svg_rect(f, lx + 110, ly, 12, 12, lg__red, "stroke=\"#666666\" stroke-width=\"0.5\"");
    lg_svg_text(f, lx + 126, ly + 10, 11, "start", NULL, any_bad ? "inf / nan" : "inf / nan (none)");
    if (any_missing) {
        lg_svg_rect(f, lx + 240, ly, 12, 12, "#ffffff", "stroke=\"#666666\" stroke-width=\"0.5\"");
        lg_svg_text(f, lx + 256, ly + 10, 11, "start", NULL, "not logged");
    }
    if (pan[0].bin > 1 || (nlogs > 1 && pan[1].bin > 1))
        lg_svg_text(f, lx + 360, ly + 10, 11, "start", NULL, "cells: max over epoch bins");
    lg_svg_group_end(f);
    /* each log's explosion verdict, a line each */
    lg_svg_group_begin(f, "class=\"explosions\"");
    for (int i = 0; i < nlogs; i++)
        lg_svg_text(f, lx, ly + 30 + 18 * i, 11, "start", "class=\"explosion-verdict\"", verdict[i]);
    lg_svg_group_end(f);
    lg_svg_end(f);
    if (ferror(f) | fclose(f)) {
        f = NULL;
        lg_cli_errorf(cmd, "%s: write error: %s", out, strerror(errno));
        rc = LG_EXIT_FAIL;
        goto done;
    }
    f = NULL;
    fprintf(stderr, "%s\n", out);
done:
    if (f) fclose(f);
    for (int i = 0; i < nlogs; i++) lg__panel_free(&pan[i]);
    return rc;
}
