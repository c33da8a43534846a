/* lipgnn lipschitz: per-layer Lipschitz estimates of a checkpoint's model on a
 * graph beside the theoretical bounds (lipgnn/lipschitz.h), as CSV, an SVG
 * plot against depth and a summary (table, or one JSON object). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/svg.h"

static const char lg__lip_help[] =
    "Usage: lipgnn lipschitz --model FILE [--data DIR | --dataset NAME | --trees DEPTH | --sbm N[,M]]\n"
    "                        [OPTIONS]\n"
    "Estimates each layer's Lipschitz constant of a trained model on its graph, beside the\n"
    "layer's theoretical upper bound (LipschitzNorm paper, Corollaries 1 and 2), and their\n"
    "products over the layers. The map of layer l: its input features (all nodes) to its\n"
    "output, evaluation mode, with its activation (and residual, PairNorm, LayerNorm if\n"
    "the model has them); Frobenius norms. See docs/lipschitz-estimator.md. Beside them,\n"
    "the scale of the forward pass: the root-mean-square of each layer's input per node\n"
    "(and of the last layer's output), evaluation mode.\n"
    "\n"
    "  --model FILE        a checkpoint of 'lipgnn train --save' (also: --resume FILE)\n"
    "  --iters N           power-iteration steps, and ascent steps per start (default 50)\n"
    "  --starts S          gradient-ascent starts per layer (default 3; 0: no ascent)\n"
    "  --radius R          starts at distance R ||H|| from the real input H (default 0.1)\n"
    "  --seed S            seed of the estimator's random vectors and starts (default 1;\n"
    "                      --trees and --sbm data are made again from the checkpoint's seed)\n"
    "  --out DIR           write DIR/lipschitz.csv and DIR/lipschitz.svg\n"
    "  --csv FILE          the CSV: layer,kind,heads,norm,power_iteration_estimate,\n"
    "                      ascent_estimate,upper_bound,bound_basis,prod_power_iteration,\n"
    "                      prod_ascent,prod_upper_bound,input_rms (inf: no bound known)\n"
    "  --svg FILE          the plot: estimates and bounds per layer and their running\n"
    "                      products against the layer, log scale\n"
    "  --json              one JSON object on stdout instead of the table\n"
    "  --quiet             no progress on stderr\n"
    "  --threads N         threads (default: all cores)\n"
    "  --max-memory SIZE   refuse a model (with its data set), or a data set to read\n"
    "                      or make, whose estimated memory exceeds SIZE (bytes,\n"
    "                      or with K, M, G, T; default: the machine's physical memory,\n"
    "                      or the control group's limit when smaller: SLURM's --mem)\n"
    "  -h, --help          this help\n"
    "\n"
    "Data (at most one; the data the checkpoint was trained on; none: the data options\n"
    "the checkpoint records, said on stderr, which checkpoints written before lipgnn\n"
    "recorded them lack; one given that differs from them is used, with a note):\n"
    "  --data DIR          a data-set directory\n"
    "  --dataset NAME      the directory NAME under $LIPGNN_DATA (e.g. cora)\n"
    "  --trees DEPTH       the synthetic TREES problem (a full-batch model: --batch-size 0)\n"
    "  --trees-count N     number of trees (default 5000)\n"
    "  --sbm N[,M]         the synthetic stochastic block model (see lipgnn train --help)\n";

/* A number for CSV: %.6g (inf, nan as C prints them). */
static void lg__lip_num(FILE *f, double v) {
    if (isnan(v)) fputs("nan", f);
    else if (isinf(v)) fputs(v > 0 ? "inf" : "-inf", f);
    else fprintf(f, "%.6g", v);
}


static int lg__lip_csv(const char *cmd, const char *path, const lg_lip_layer *r, const double *rms, int L) {
    FILE *f = fopen(path, "w");
    if (!f) {
        lg_cli_errorf(cmd, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    fputs("layer,kind,heads,norm,power_iteration_estimate,ascent_estimate,upper_bound,bound_basis,"
          "prod_power_iteration,prod_ascent,prod_upper_bound,input_rms\n", f);
    for (int l = 0; l < L; l++) {
        fprintf(f, "%d,%s,%lld,%s,", r[l].layer, r[l].kind, (long long)r[l].heads, lg_att_norm_name(r[l].norm));
        lg__lip_num(f, r[l].power);
        fputc(',', f);
        lg__lip_num(f, r[l].ascent);
        fputc(',', f);
        lg__lip_num(f, r[l].bound);
        if (strpbrk(r[l].basis, ",\"\n")) { /* RFC 4180: quoted, quotes doubled */
            fputs(",\"", f);
            for (const char *c = r[l].basis; *c; c++) {
                if (*c == '"') fputc('"', f);
                fputc(*c, f);
            }
            fputs("\",", f);
        } else {
            fprintf(f, ",%s,", r[l].basis);
        }
        lg__lip_num(f, r[l].prod_power);
        fputc(',', f);
        lg__lip_num(f, r[l].prod_ascent);
        fputc(',', f);
        lg__lip_num(f, r[l].prod_bound);
        fputc(',', f);
        lg__lip_num(f, rms[l]);
        fputc('\n', f);
    }
    return lg_cli_close_out(cmd, f, path);
}

/* The plot: six series against the layer, log10 y axis over whole decades. */
static int lg__lip_svg(const char *cmd, const char *path, const lg_lip_layer *r, int L, const char *title) {
    enum { NS = 6 };
    static const char *names[NS] = {"power iteration", "gradient ascent", "upper bound",
                                    "product: power iteration", "product: ascent", "product: upper bound"};
    static const char *colors[NS] = {"#1f77b4", "#ff7f0e", "#d62728", "#1f77b4", "#ff7f0e", "#d62728"};
    double *xs = malloc(sizeof(double) * (size_t)L), *ys = malloc(sizeof(double) * (size_t)L * NS);
    if (!xs || !ys) {
        free(xs);
        free(ys);
        lg_cli_errorf(cmd, "out of memory");
        return -1;
    }
    double lo = INFINITY, hi = -INFINITY;
    int infb = 0;
    for (int l = 0; l < L; l++) {
        const double v[NS] = {r[l].power, r[l].ascent, r[l].bound, r[l].prod_power, r[l].prod_ascent, r[l].prod_bound};
        infb += !isfinite(r[l].bound);
        for (int s = 0; s < NS; s++) {
            double y = v[s] > 0 && isfinite(v[s]) ? log10(v[s]) : NAN;
            ys[s * L + l] = y;
            if (isfinite(y)) {
                lo = fmin(lo, y);
                hi = fmax(hi, y);
            }
        }
    }
    if (!isfinite(lo)) lo = hi = 0;
    double ylo = floor(lo), yhi = ceil(hi);
    if (yhi <= ylo) yhi = ylo + 1;
    int step = (int)ceil((yhi - ylo) / 10);
    const double W = 820, H = 480, ml = 80, mr = 230, mt = 50, mb = 60, pw = W - ml - mr, ph = H - mt - mb;
    FILE *f = fopen(path, "w");
    if (!f) {
        free(xs);
        free(ys);
        lg_cli_errorf(cmd, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    for (int l = 0; l < L; l++) xs[l] = L > 1 ? ml + pw * l / (L - 1) : ml + pw / 2;
    lg_svg_begin(f, W, H, NULL);
    lg_svg_text(f, W / 2, 28, 16, "middle", "class=\"title\"", title);
    lg_svg_rect(f, ml, mt, pw, ph, NULL, "stroke=\"#444\" class=\"frame\"");
    /* y: decades */
    for (double d = ylo; d <= yhi + 1e-9; d += step) {
        double y = mt + ph - ph * (d - ylo) / (yhi - ylo);
        char lab[32];
        snprintf(lab, sizeof lab, "1e%d", (int)d);
        lg_svg_line(f, ml, y, ml + pw, y, "#ddd", 1, "class=\"grid\"");
        lg_svg_text(f, ml - 8, y + 4, 12, "end", "class=\"ytick\"", lab);
    }
    /* x: layers (at most about 20 labels) */
    int xstep = L > 20 ? (L + 19) / 20 : 1;
    for (int l = 0; l < L; l += xstep) {
        char lab[16];
        snprintf(lab, sizeof lab, "%d", l);
        lg_svg_line(f, xs[l], mt + ph, xs[l], mt + ph + 5, "#444", 1, NULL);
        lg_svg_text(f, xs[l], mt + ph + 20, 12, "middle", "class=\"xtick\"", lab);
    }
    lg_svg_text(f, ml + pw / 2, H - 15, 14, "middle", NULL, "layer");
    fprintf(f, "<text x=\"20\" y=\"%.1f\" font-size=\"14\" text-anchor=\"middle\" transform=\"rotate(-90 20 %.1f)\">"
               "Lipschitz constant (log scale)</text>\n", mt + ph / 2, mt + ph / 2);
    double *py = malloc(sizeof(double) * (size_t)L);
    for (int s = 0; s < NS && py; s++) {
        char attrs[128];
        snprintf(attrs, sizeof attrs, "class=\"series\" data-name=\"%s\"%s", names[s],
                 s >= 3 ? " stroke-dasharray=\"6 4\"" : "");
        lg_svg_group_begin(f, attrs);
        for (int l = 0; l < L; l++) {
            double y = ys[s * L + l];
            py[l] = isfinite(y) ? mt + ph - ph * (y - ylo) / (yhi - ylo) : NAN;
        }
        lg_svg_polyline(f, xs, py, (size_t)L, colors[s], 2, NULL);
        if (s < 3)
            for (int l = 0; l < L; l++)
                if (isfinite(py[l])) lg_svg_circle(f, xs[l], py[l], 3.5, colors[s], NULL, "class=\"point\"");
        lg_svg_group_end(f);
    }
    free(py);
    /* legend */
    lg_svg_group_begin(f, "id=\"legend\"");
    for (int s = 0; s < NS; s++) {
        double y = mt + 14 + 22 * s, x = ml + pw + 16;
        lg_svg_line(f, x, y - 4, x + 28, y - 4, colors[s], 2, s >= 3 ? "stroke-dasharray=\"6 4\"" : NULL);
        lg_svg_text(f, x + 36, y, 12, "start", "class=\"legend\"", names[s]);
    }
    if (infb) {
        char note[96];
        snprintf(note, sizeof note, "upper bound inf (none known)");
        lg_svg_text(f, ml + pw + 16, mt + 14 + 22 * NS + 8, 12, "start", "class=\"note\"", note);
        snprintf(note, sizeof note, "at %d of %d layers: not drawn", infb, L);
        lg_svg_text(f, ml + pw + 16, mt + 14 + 22 * NS + 24, 12, "start", "class=\"note\"", note);
    }
    lg_svg_group_end(f);
    lg_svg_end(f);
    free(xs);
    free(ys);
    return lg_cli_close_out(cmd, f, path);
}

typedef struct {
    int quiet;
    struct timespec t0;
} lg__lip_progress;

static double lg__lip_secs(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

static void lg__lip_tick(void *ctx, long done, long total) {
    lg__lip_progress *p = ctx;
    if (!p->quiet) fprintf(stderr, "lipgnn lipschitz: layer %ld of %ld done (%.1f s)\n", done, total, lg__lip_secs(&p->t0));
}

int lg_cmd_lipschitz(int argc, char **argv) {
    const char *cmd = "lipschitz";
    static const struct option opts[] = {
        {"data", required_argument, 0, 'd'},    {"dataset", required_argument, 0, 'd'},
        {"trees", required_argument, 0, 'd'},   {"trees-count", required_argument, 0, 'd'}, {"sbm", required_argument, 0, 'd'},
        {"model", required_argument, 0, 'r'},   {"resume", required_argument, 0, 'r'},
        {"iters", required_argument, 0, 'i'},   {"starts", required_argument, 0, 's'},
        {"radius", required_argument, 0, 'R'},  {"seed", required_argument, 0, 'S'},
        {"out", required_argument, 0, 'o'},     {"csv", required_argument, 0, 'c'},
        {"svg", required_argument, 0, 'g'},     {"json", no_argument, 0, 'j'},
        {"quiet", no_argument, 0, 'q'},         {"threads", required_argument, 0, 't'},
        {"max-memory", required_argument, 0, 'm'}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    lg_cli_data d = {0};
    lg_lip_config lc;
    lg_lip_config_default(&lc);
    const char *model = NULL, *outdir = NULL, *csv = NULL, *svg = NULL;
    int json = 0, quiet = 0, c, idx, threads = 0;
    double max_memory = 0;
    long long v;
    optind = 0; /* glibc: a full restart */
    opterr = 0;
    while ((c = lg_cli_getopt(cmd, argc, argv, opts, &idx, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(lg__lip_help, stdout); return LG_EXIT_OK;
        case 'd': if (lg_cli_data_option(cmd, &d, opts[idx].name, optarg) < 0) return LG_EXIT_USAGE; break;
        case 'r': if (lg_cli_path_value(cmd, "--model", optarg)) return LG_EXIT_USAGE; model = optarg; break;
        case 'i': if (lg_cli_parse_ll(cmd, "--iters", optarg, 1, 100000, &v)) return LG_EXIT_USAGE; lc.iters = (int)v; break;
        case 's': if (lg_cli_parse_ll(cmd, "--starts", optarg, 0, 10000, &v)) return LG_EXIT_USAGE; lc.starts = (int)v; break;
        case 'R': if (lg_cli_parse_double(cmd, "--radius", optarg, 1e-12, 100, &lc.radius)) return LG_EXIT_USAGE; break;
        case 'S': if (lg_cli_parse_u64(cmd, "--seed", optarg, &lc.seed)) return LG_EXIT_USAGE; break;
        case 'o': if (lg_cli_path_value(cmd, "--out", optarg)) return LG_EXIT_USAGE; outdir = optarg; break;
        case 'c': if (lg_cli_path_value(cmd, "--csv", optarg)) return LG_EXIT_USAGE; csv = optarg; break;
        case 'g': if (lg_cli_path_value(cmd, "--svg", optarg)) return LG_EXIT_USAGE; svg = optarg; break;
        case 'j': json = 1; break;
        case 'q': quiet = 1; break;
        case 'm': if (lg_cli_parse_size(cmd, "--max-memory", optarg, &max_memory)) return LG_EXIT_USAGE; break;
        case 't': if (lg_cli_parse_ll(cmd, "--threads", optarg, 1, 1024, &v)) return LG_EXIT_USAGE; threads = (int)v; break;
        default: /* '?': lg_cli_getopt printed the error */
            return LG_EXIT_USAGE;
        }
    }
    if (optind < argc) { lg_cli_errorf(cmd, "unexpected argument '%s'", argv[optind]); return LG_EXIT_USAGE; }
    if (!model) { lg_cli_errorf(cmd, "--model FILE is required (a checkpoint of 'lipgnn train --save')"); return LG_EXIT_USAGE; }
    if (outdir && (csv || svg)) { lg_cli_errorf(cmd, "give --out DIR or --csv/--svg FILE, not both"); return LG_EXIT_USAGE; }
    char csvbuf[4096], svgbuf[4096], outbuf[4096];
    if (outdir) {
        if (lg_cli_trim_dir(outbuf, sizeof outbuf, outdir)) {
            lg_cli_errorf(cmd, "--out: path too long");
            return LG_EXIT_USAGE;
        }
        outdir = outbuf;
        if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
            lg_cli_errorf(cmd, "%s: cannot create: %s", outdir, strerror(errno));
            return LG_EXIT_USAGE;
        }
        if ((size_t)snprintf(csvbuf, sizeof csvbuf, "%s/lipschitz.csv", outdir) >= sizeof csvbuf ||
            (size_t)snprintf(svgbuf, sizeof svgbuf, "%s/lipschitz.svg", outdir) >= sizeof svgbuf) {
            lg_cli_errorf(cmd, "--out: path too long");
            return LG_EXIT_USAGE;
        }
        csv = csvbuf;
        svg = svgbuf;
    }
    const char *opt[3] = {"--csv", "--svg", "--model"}, *path[3] = {csv, svg, model};
    lg_cli_set_threads(cmd, threads);
    lg_model_config mc;
    lg_train_config tc;
    lg_status st = lg_checkpoint_config(model, &mc, &tc);
    if (st != LG_OK) { lg_cli_errorf(cmd, "%s", lg_last_error()); return lg_cli_exit_for(st); }
    d.seed = tc.seed; /* --trees: the trees the model was trained on */
    char data_note[LG_CLI_NOTE_CAP]; /* the checkpoint's data options, which d may point into */
    if (lg_cli_data_from_checkpoint(cmd, &d, 0, model, data_note, sizeof data_note, quiet) ||
        lg_cli_data_check(cmd, &d))
        return LG_EXIT_USAGE;
    /* the outputs against each other, the checkpoint and the data set's files
     * (known now); all before the estimate, not after it */
    if (lg_cli_check_clobber(cmd, 3, 2, opt, path, &d)) return LG_EXIT_USAGE;
    for (int k = 0; k < 2; k++)
        if (lg_cli_check_writable(cmd, outdir ? "--out" : opt[k], path[k])) return LG_EXIT_USAGE;
    lg_dataset *ds = NULL;
    int rc = lg_cli_data_load(cmd, &d, max_memory, &ds);
    if (rc) return rc;
    lg_trainer *t = NULL;
    lg_lip_layer *rows = NULL;
    double *rms = NULL;
    int status = lg_cli_memory_check(cmd, &mc, &tc, ds, max_memory);
    if (status != LG_EXIT_OK) goto done;
    st = lg_trainer_init(&t, &mc, &tc, ds);
    if (st == LG_OK) st = lg_trainer_load(t, model);
    if (st != LG_OK) { lg_cli_errorf(cmd, "%s", lg_last_error()); status = lg_cli_exit_for(st); goto done; }
    const int L = lg_trainer_layers(t);
    rows = calloc((size_t)L, sizeof *rows);
    rms = calloc((size_t)L + 1, sizeof *rms);
    if (!rows || !rms) { lg_cli_errorf(cmd, "out of memory"); status = LG_EXIT_FAIL; goto done; }
    lg__lip_progress pr = {quiet, {0, 0}};
    clock_gettime(CLOCK_MONOTONIC, &pr.t0);
    if (!quiet)
        fprintf(stderr, "lipgnn lipschitz: %s, %d layers on %s: %d power-iteration steps, %d ascent starts per layer\n",
                lg_model_kind_name(mc.kind), L, ds->name, lc.iters, lc.starts);
    st = lg_lipschitz_estimate(rows, L, t, &lc, lg__lip_tick, &pr);
    if (st != LG_OK) {
        lg_cli_errorf(cmd, "%s", lg_last_error());
        status = st == LG_EUNSUPPORTED ? LG_EXIT_USAGE : lg_cli_exit_for(st);
        goto done;
    }
    st = lg_trainer_predict(t, NULL, NULL); /* the forward pass, evaluation mode */
    if (st == LG_OK) st = lg_trainer_act_rms(t, rms, L + 1);
    if (st != LG_OK) { lg_cli_errorf(cmd, "%s", lg_last_error()); status = lg_cli_exit_for(st); goto done; }
    if (csv && lg__lip_csv(cmd, csv, rows, rms, L)) { status = LG_EXIT_FAIL; goto done; }
    if (svg) {
        char title[256], norm[64];
        lg_norm_format(norm, sizeof norm, mc.att_norm, mc.node_norm);
        snprintf(title, sizeof title, "%s, %d layers, norm %s, on %s: per-layer Lipschitz constants", lg_model_kind_name(mc.kind),
                 L, norm, ds->name);
        if (lg__lip_svg(cmd, svg, rows, L, title)) { status = LG_EXIT_FAIL; goto done; }
    }
    if (csv && !quiet) fprintf(stderr, "%s\n", csv);
    if (svg && !quiet) fprintf(stderr, "%s\n", svg);
    const lg_lip_layer *last = &rows[L - 1];
    if (json) {
        printf("{\"checkpoint\":");
        lg_json_string(stdout, model);
        printf(",\"dataset\":");
        lg_json_string(stdout, ds->name);
        printf(",\"model\":\"%s\",\"layers\":%d,\"iters\":%d,\"starts\":%d,\"seed\":%llu,\"seconds\":%.3f",
               lg_model_kind_name(mc.kind), L, lc.iters, lc.starts, (unsigned long long)lc.seed, lg__lip_secs(&pr.t0));
        const char *keys[3] = {"power_iteration", "ascent", "upper_bound"};
        for (int s = 0; s < 3; s++) {
            printf(",\"%s\":[", keys[s]);
            for (int l = 0; l < L; l++) {
                if (l) putchar(',');
                lg_json_number(stdout, "%.6g", s == 0 ? rows[l].power : s == 1 ? rows[l].ascent : rows[l].bound);
            }
            putchar(']');
        }
        printf(",\"prod_power_iteration\":");
        lg_json_number(stdout, "%.6g", last->prod_power);
        printf(",\"prod_ascent\":");
        lg_json_number(stdout, "%.6g", last->prod_ascent);
        printf(",\"prod_upper_bound\":");
        lg_json_number(stdout, "%.6g", last->prod_bound);
        printf(",\"input_rms\":[");
        for (int l = 0; l < L; l++) {
            if (l) putchar(',');
            lg_json_number(stdout, "%.6g", rms[l]);
        }
        printf("],\"output_rms\":");
        lg_json_number(stdout, "%.6g", rms[L]);
        printf(",\"csv\":");
        if (csv) lg_json_string(stdout, csv); else fputs("null", stdout);
        printf(",\"svg\":");
        if (svg) lg_json_string(stdout, svg); else fputs("null", stdout);
        printf("}\n");
    } else {
        printf("layer  kind  heads  norm           power-iter      ascent       bound   input RMS  basis\n");
        for (int l = 0; l < L; l++)
            printf("%5d  %-4s  %5lld  %-13s  %10.4g  %10.4g  %10.4g  %10.4g  %s\n", rows[l].layer, rows[l].kind,
                   (long long)rows[l].heads, lg_att_norm_name(rows[l].norm), rows[l].power, rows[l].ascent, rows[l].bound,
                   rms[l], rows[l].basis);
        printf("product over layers:      %10.4g  %10.4g  %10.4g\n", last->prod_power, last->prod_ascent,
               last->prod_bound);
        printf("%-71s%10.4g\n", "RMS of the last layer's output:", rms[L]);
    }
done:
    free(rows);
    free(rms);
    lg_trainer_free(t);
    lg_dataset_free(ds);
    return status;
}
