/* lipgnn train: train a model on a data set; and the shared model options. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>

#include "cli/cli.h"

static const char lg__train_help[] =
    "Usage: lipgnn train (--data DIR | --dataset NAME | --trees DEPTH | --sbm N[,M]) [OPTIONS]\n"
    "       lipgnn train --resume FILE [DATA] [OPTIONS]\n"
    "Trains a deep attention model or a baseline GNN (Adam; full batch, or mini-batches\n"
    "of graphs for TREES) and reports accuracies, per-layer gradient norms and gradient\n"
    "explosions.\n"
    "\n"
    "TREES (--trees D) defaults: D+1 layers of width 32 (--hidden 32), no dropout\n"
    "(--dropout 0 --att-dropout 0), no weight decay (--weight-decay 0), mini-batches of\n"
    "1024 trees (--batch-size 1024); loss and accuracies at the roots; the reported\n"
    "metric is training accuracy.\n"
    "\n"
    "Model:\n"
    "  --model M            gat (DeepGAT, default), gt (DeepGT), gat-classic (2-layer GAT),\n"
    "                       a baseline without attention: gcn, gin, ggnn, gcnii,\n"
    "                       l2 (L2 self-attention layers, Kim et al. 2021; no\n"
    "                       attention dropout, --norm none, pairnorm or pairnorm-si),\n"
    "                       or cosine (LipsFormer-style: scaled cosine attention, tau 10,\n"
    "                       CenterNorm, weighted residual alpha = 1/L, spectral init;\n"
    "                       --norm none, --att-dropout 0, the residual always on)\n"
    "  --layers L           layers (default 10; gat-classic, gcn: 2; gcnii: 64)\n"
    "  --hidden H           width of each head (default 64; gat-classic: 8; gcn: 16)\n"
    "  --heads K            heads, concatenated (default 1; gat-classic: 8)\n"
    "  --norm N             none | lipschitz | lipschitz-ref | pairnorm | pairnorm-si |\n"
    "                       layernorm (gat, gt), or ATT+NODE (e.g. lipschitz+pairnorm)\n"
    "                       (default none)\n"
    "  --lip-scale S        scale s of LipschitzNorm (default 1)\n"
    "  --residual           residual connections where widths match (refused where\n"
    "                       none do: gat-classic, a gcn of 1 or 2 layers)\n"
    "  --gate               gated skip connection (gt)\n"
    "  --init glorot|pytorch  initial parameters (default glorot, the spec's); pytorch\n"
    "                       (gat, gt): PyTorch's nn.Linear default, U(+-1/sqrt(fan in))\n"
    "                       weights and biases, for the input and output linears and\n"
    "                       GT's layers, as the LipschitzNorm authors' code\n"
    "  --train-eps          gin: learn eps per layer (default: fixed at 0, GIN-0)\n"
    "  --alpha A            gcnii: weight of the initial residual (default 0.1)\n"
    "  --lambda X           gcnii: beta_l = log(X / l + 1) (default 0.5)\n"
    "  --dropout P          feature dropout (default 0.6; gt, gcn, gin, ggnn 0.5)\n"
    "  --att-dropout P      attention dropout (default 0.3; gat-classic 0.6)\n"
    "  --self-loops on|off  add self-loops (default on; gt, gin, ggnn off)\n"
    "  --feature-norm none|row  row-normalise features (default none; gat-classic,\n"
    "                       gcn, gcnii row)\n"
    "\n"
    "Training:\n"
    "  --epochs E           epochs (default 200; 0: build the model, save it with --save,\n"
    "                       train and evaluate nothing; --json then has null metrics).\n"
    "                       With --resume, the run's total, the checkpoint's included\n"
    "  --batch-size N       graphs (trees) per mini-batch, 0 = full batch (default 0;\n"
    "                       --trees: 1024). Each epoch visits the training graphs in an\n"
    "                       order shuffled from the seed, one Adam step per batch; the\n"
    "                       per-epoch gradient norms are the mean over the batches\n"
    "  --lr X               Adam learning rate (default 0.005; gcn, gcnii 0.01)\n"
    "  --weight-decay X     L2 added to the gradient (default 5e-4)\n"
    "  --layer-weight-decay X  L2 on the layers' parameters instead, not on the input and\n"
    "                       output linears (default: --weight-decay; gcnii 0.01)\n"
    "  --plateau            ReduceLROnPlateau on the validation loss (factor 0.1, patience 10)\n"
    "  --patience N         early stopping after N epochs without a better validation loss\n"
    "                       (both watch the training loss where there is no validation\n"
    "                       split, as TREES, and say so)\n"
    "  --missing P          remove the features of a share P of the non-training nodes\n"
    "  --threads N          threads of lipgnn's kernels (default: all cores)\n"
    "  --max-memory SIZE    refuse a model (with its data set), or a data set to read\n"
    "                       or make, whose estimated memory exceeds SIZE (bytes,\n"
    "                       or with K, M, G, T; default: the machine's physical memory,\n"
    "                       or the control group's limit when smaller: SLURM's --mem)\n"
    "\n"
    "Gradient diagnostics:\n"
    "  --grad-log FILE      CSV of epoch,layer,group,norm for every epoch and layer (layer\n"
    "                       0: the first attention layer, next to the input; group\n"
    "                       attention: its attention parameters, all: all its parameters),\n"
    "                       then the input and output linear layers' (layer -1, group\n"
    "                       input; layer L, group output; in the models that have them)\n"
    "  --explode-threshold X  a layer gradient norm above X is an explosion (default 1000)\n"
    "  --explode-growth X   ... or growth by more than X times ... (default 1000)\n"
    "  --explode-window W   ... against the layer's norm W epochs earlier (default 10;\n"
    "                       0: off; from epoch W + 1), to a norm of at least threshold / X\n"
    "                       (vanishing gradients that grow do not count)\n"
    "  --stop-on-explosion  end the run at an explosion (exit status 3)\n"
    "\n"
    "Output and state:\n"
    "  --log FILE           CSV of every epoch's losses and accuracies\n"
    "  --save FILE          write a checkpoint at the end (and on Ctrl-C, SIGTERM or\n"
    "                       SIGHUP, at the end of the epoch; a second one ends the run\n"
    "                       at once; a signal ignored when lipgnn started, as nohup's\n"
    "                       SIGHUP, stays ignored)\n"
    "  --save-best FILE     write a checkpoint of the best epoch (best validation accuracy;\n"
    "                       training accuracy without a validation split) when it is reached:\n"
    "                       the model whose 'best' accuracies the summary reports\n"
    "  --resume FILE        continue from a checkpoint (same model options, data, --seed,\n"
    "                       --missing, --batch-size, --explode-window; --epochs, --lr,\n"
    "                       --weight-decay, --patience, --plateau, --explode-threshold and\n"
    "                       --explode-growth may change). Without a data option, the data\n"
    "                       and --seed the checkpoint records (every checkpoint records\n"
    "                       its run's data options, --data by its absolute path; said on\n"
    "                       stderr); one given is used instead, with a note when it\n"
    "                       differs, and the recorded --seed unless --seed is given.\n"
    "                       Checkpoints written before lipgnn recorded them need a data\n"
    "                       option (and --seed)\n"
    "  --json               print one JSON object (the last line of stdout) instead of the\n"
    "                       text summary (notes stay on stderr)\n"
    "  --verbose            one line per epoch on stderr (also when not on a terminal)\n"
    "  --quiet              no progress display\n"
    "  -h, --help           this help\n"
    "\n";

/* Set by a stop signal (lg_cli_catch_stop): stop at the end of the epoch. */
static volatile sig_atomic_t lg__stop_signal;

static void lg__on_signal(int sig) { lg__stop_signal = sig; }

int lg_cli_stop_requested(void) { return lg__stop_signal != 0; }


enum {
    O_MODEL = 1000, O_LAYERS, O_HIDDEN, O_HEADS, O_NORM, O_LIPS, O_RESID, O_GATE, O_DROP, O_ATTDROP, O_LOOPS,
    O_FNORM, O_EPOCHS, O_LR, O_WD, O_PLATEAU, O_PATIENCE, O_MISSING, O_THREADS, O_GRADLOG, O_XTHR, O_XGROW,
    O_XWIN, O_XSTOP, O_LOG, O_SAVE, O_RESUME, O_JSON, O_VERBOSE, O_QUIET, O_DATA, O_MAXMEM, O_TEPS, O_ALPHA,
    O_LAMBDA, O_LWD, O_INIT, O_SAVEBEST, O_BATCH /* O_BATCH last: it sizes given[] */
};

static const struct option lg__train_options[] = {
    {"data", required_argument, 0, O_DATA},        {"dataset", required_argument, 0, O_DATA},
    {"trees", required_argument, 0, O_DATA},       {"trees-count", required_argument, 0, O_DATA}, {"sbm", required_argument, 0, O_DATA},
    {"seed", required_argument, 0, O_DATA},        {"model", required_argument, 0, O_MODEL},
    {"layers", required_argument, 0, O_LAYERS},    {"hidden", required_argument, 0, O_HIDDEN},
    {"heads", required_argument, 0, O_HEADS},      {"norm", required_argument, 0, O_NORM},
    {"lip-scale", required_argument, 0, O_LIPS},   {"residual", no_argument, 0, O_RESID},
    {"gate", no_argument, 0, O_GATE},              {"dropout", required_argument, 0, O_DROP},
    {"att-dropout", required_argument, 0, O_ATTDROP}, {"self-loops", required_argument, 0, O_LOOPS},
    {"feature-norm", required_argument, 0, O_FNORM}, {"epochs", required_argument, 0, O_EPOCHS},
    {"lr", required_argument, 0, O_LR},            {"weight-decay", required_argument, 0, O_WD},
    {"plateau", no_argument, 0, O_PLATEAU},        {"patience", required_argument, 0, O_PATIENCE},
    {"missing", required_argument, 0, O_MISSING},  {"threads", required_argument, 0, O_THREADS},
    {"grad-log", required_argument, 0, O_GRADLOG}, {"explode-threshold", required_argument, 0, O_XTHR},
    {"explode-growth", required_argument, 0, O_XGROW}, {"explode-window", required_argument, 0, O_XWIN},
    {"stop-on-explosion", no_argument, 0, O_XSTOP}, {"log", required_argument, 0, O_LOG},
    {"save", required_argument, 0, O_SAVE},        {"resume", required_argument, 0, O_RESUME},
    {"save-best", required_argument, 0, O_SAVEBEST},
    {"json", no_argument, 0, O_JSON},              {"verbose", no_argument, 0, O_VERBOSE},
    {"quiet", no_argument, 0, O_QUIET},            {"max-memory", required_argument, 0, O_MAXMEM},
    {"train-eps", no_argument, 0, O_TEPS},         {"alpha", required_argument, 0, O_ALPHA},
    {"lambda", required_argument, 0, O_LAMBDA},   {"layer-weight-decay", required_argument, 0, O_LWD},
    {"batch-size", required_argument, 0, O_BATCH}, {"init", required_argument, 0, O_INIT},
    {"help", no_argument, 0, 'h'},
    {0, 0, 0, 0},
};

const struct option *lg_cli_train_option_table(void) { return lg__train_options; }

/* Parses the train options into o. Returns -1 after printing an error, 1
 * after printing help, 0 on success. Two passes: --model first, since the
 * other defaults depend on it. */
int lg_cli_train_parse(const char *cmd, int argc, char **argv, lg_train_opts *o) {
    int c, idx;
    long long v;
    memset(o, 0, sizeof *o);
    lg_model_kind kind = LG_MODEL_GAT;
    opterr = 0;
    optind = 0; /* glibc: a full restart (1 would keep a half-read "-xy" group of an earlier parse) */
    const char *const *extra = strcmp(cmd, "depth-study") ? NULL : lg_cli_depth_option_names;
    while ((c = lg_cli_getopt(cmd, argc, argv, lg__train_options, &idx, extra)) != -1) {
        if (c == 'h') {
            fputs(lg__train_help, stdout);
            fputs(lg_cli_data_help_resume, stdout);
            return 1;
        }
        if (c == '?') return -1; /* (lg_cli_getopt printed the error) */
        if (c == O_MODEL && lg_model_kind_parse(optarg, &kind) != LG_OK) {
            lg_cli_errorf(cmd, "--model: %s", lg_last_error());
            return -1;
        }
    }
    if (optind < argc) {
        lg_cli_errorf(cmd, "unexpected argument '%s'", argv[optind]);
        return -1;
    }
    lg_model_config_default(&o->mc, kind);
    lg_train_config_default(&o->tc);
    if (kind == LG_MODEL_GCN || kind == LG_MODEL_GCNII) o->tc.lr = 0.01; /* Kipf & Welling; Chen et al. */
    if (kind == LG_MODEL_GCNII) o->tc.layer_weight_decay = 0.01;         /* Chen et al.: 0.01 on the convolutions */
    int given[O_BATCH + 1] = {0}; /* options given, by id */
    int seed_given = 0;
    optind = 0; /* glibc: a full restart (1 would keep a half-read "-xy" group of an earlier parse) */
    while ((c = getopt_long(argc, argv, "h", lg__train_options, &idx)) != -1) {
        const char *name = lg__train_options[idx].name;
        char opt[64];
        snprintf(opt, sizeof opt, "--%s", name);
        if (c >= O_MODEL && c <= O_BATCH) given[c] = 1;
        switch (c) {
        case O_DATA:
            if (lg_cli_data_option(cmd, &o->data, name, optarg) < 0) return -1;
            seed_given |= !strcmp(name, "seed");
            break;
        case O_MODEL: break;
        case O_LAYERS: if (lg_cli_parse_ll(cmd, opt, optarg, 1, 1000, &v)) return -1; o->mc.layers = (int)v; break;
        case O_HIDDEN: if (lg_cli_parse_ll(cmd, opt, optarg, 1, 65536, &v)) return -1; o->mc.hidden = (int)v; break;
        case O_HEADS: if (lg_cli_parse_ll(cmd, opt, optarg, 1, 1024, &v)) return -1; o->mc.heads = (int)v; break;
        case O_NORM:
            if (lg_norm_parse(optarg, &o->mc.att_norm, &o->mc.node_norm) != LG_OK) {
                lg_cli_errorf(cmd, "%s", lg_last_error());
                return -1;
            }
            break;
        case O_LIPS: if (lg_cli_parse_double(cmd, opt, optarg, 1e-6, 1e6, &o->mc.lip_scale)) return -1; break;
        case O_RESID: o->mc.residual = 1; break;
        case O_GATE: o->mc.gate = 1; break;
        case O_INIT:
            if (lg_init_parse(optarg, &o->mc.init) != LG_OK) {
                lg_cli_errorf(cmd, "%s", lg_last_error());
                return -1;
            }
            break;
        case O_TEPS: o->mc.train_eps = 1; break;
        case O_ALPHA: if (lg_cli_parse_double(cmd, opt, optarg, 0, 1, &o->mc.alpha)) return -1; break;
        case O_LAMBDA: if (lg_cli_parse_double(cmd, opt, optarg, 1e-6, 1.7, &o->mc.lambda)) return -1; break;
        case O_DROP: if (lg_cli_parse_double(cmd, opt, optarg, 0, 0.999, &o->mc.dropout)) return -1; break;
        case O_ATTDROP: if (lg_cli_parse_double(cmd, opt, optarg, 0, 0.999, &o->mc.att_dropout)) return -1; break;
        case O_LOOPS:
            if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
                lg_cli_errorf(cmd, "--self-loops: '%s' is not on or off", optarg);
                return -1;
            }
            o->mc.self_loops = strcmp(optarg, "on") == 0;
            break;
        case O_FNORM:
            if (strcmp(optarg, "none") && strcmp(optarg, "row")) {
                lg_cli_errorf(cmd, "--feature-norm: '%s' is not none or row", optarg);
                return -1;
            }
            o->mc.feature_norm_row = strcmp(optarg, "row") == 0;
            break;
        case O_EPOCHS: if (lg_cli_parse_ll(cmd, opt, optarg, 0, 10000000, &v)) return -1; o->tc.epochs = (int)v; break;
        case O_LR: if (lg_cli_parse_double(cmd, opt, optarg, 1e-12, 100, &o->tc.lr)) return -1; break;
        case O_LWD: if (lg_cli_parse_double(cmd, opt, optarg, 0, 100, &o->tc.layer_weight_decay)) return -1; break;
        case O_WD: if (lg_cli_parse_double(cmd, opt, optarg, 0, 100, &o->tc.weight_decay)) return -1; break;
        case O_PLATEAU: o->tc.plateau = 1; break;
        case O_PATIENCE: if (lg_cli_parse_ll(cmd, opt, optarg, 0, 10000000, &v)) return -1; o->tc.patience = (int)v; break;
        case O_MISSING: if (lg_cli_parse_double(cmd, opt, optarg, 0, 1, &o->tc.missing)) return -1; break;
        case O_THREADS: if (lg_cli_parse_ll(cmd, opt, optarg, 1, 1024, &v)) return -1; o->threads = (int)v; break;
        case O_GRADLOG: if (lg_cli_path_value(cmd, opt, optarg)) return -1; o->grad_log = optarg; break;
        case O_XTHR: case O_XGROW: case O_XWIN: if (lg_cli_parse_explode(cmd, opt, optarg, &o->tc)) return -1; break;
        case O_XSTOP: o->tc.stop_on_explosion = 1; break;
        case O_LOG: if (lg_cli_path_value(cmd, opt, optarg)) return -1; o->log = optarg; break;
        case O_SAVE: if (lg_cli_path_value(cmd, opt, optarg)) return -1; o->save = optarg; break;
        case O_SAVEBEST: if (lg_cli_path_value(cmd, opt, optarg)) return -1; o->save_best = optarg; break;
        case O_RESUME: if (lg_cli_path_value(cmd, opt, optarg)) return -1; o->resume = optarg; break;
        case O_JSON: o->json = 1; break;
        case O_VERBOSE: o->verbose = 1; break;
        case O_QUIET: o->quiet = 1; break;
        case O_MAXMEM:
            if (lg_cli_parse_size(cmd, opt, optarg, &o->max_memory)) return -1;
            break;
        case O_BATCH:
            if (lg_cli_parse_ll(cmd, opt, optarg, 0, 100000000, &v)) return -1;
            o->tc.batch_size = (int)v;
            break;
        default: break;
        }
    }
    /* --resume without a data option: the checkpoint's (before the TREES setting below) */
    if (o->resume && lg_cli_data_from_checkpoint(cmd, &o->data, seed_given, o->resume, o->data_note,
                                                 sizeof o->data_note, o->quiet))
        return -1;
    o->tc.seed = o->data.seed;
    if (lg_cli_data_check(cmd, &o->data)) return -1;
    { /* every two outputs distinct, none the data set's files; each output but
       * --save not --resume (--save onto --resume is a run continued in place: allowed) */
        const char *opt[5] = {"--log", "--grad-log", "--save-best", "--save", "--resume"},
                   *path[5] = {o->log, o->grad_log, o->save_best, o->save, o->resume};
        if (lg_cli_check_clobber(cmd, 4, 4, opt, path, &o->data)) return -1;
        const char *opt2[4] = {"--log", "--grad-log", "--save-best", "--resume"},
                   *path2[4] = {o->log, o->grad_log, o->save_best, o->resume};
        if (lg_cli_check_clobber(cmd, 4, 3, opt2, path2, NULL)) return -1;
    }
    if (o->data.trees && kind != LG_MODEL_GAT_CLASSIC) { /* the TREES setting, where not given */
        if (!given[O_LAYERS]) o->mc.layers = o->data.trees + 1;
        if (!given[O_HIDDEN]) o->mc.hidden = LG_CLI_TREES_HIDDEN;
        if (!given[O_DROP]) o->mc.dropout = 0;
        if (!given[O_ATTDROP]) o->mc.att_dropout = 0;
    }
    if (o->data.trees && !given[O_WD]) o->tc.weight_decay = 0;
    if (o->data.trees && !given[O_BATCH]) o->tc.batch_size = LG_CLI_TREES_BATCH;
    if (lg_model_config_check(&o->mc) != LG_OK || lg_train_config_check(&o->tc) != LG_OK) {
        lg_cli_errorf(cmd, "%s", lg_last_error());
        return -1;
    }
    /* options given that this model would ignore (they went into --json's config
     * unused): the caller refuses them (train, demo) or notes them (depth-study) */
    const int baseline = kind >= LG_MODEL_GCN && kind <= LG_MODEL_GCNII;
    o->unused[0] = 0;
    if ((given[O_ALPHA] || given[O_LAMBDA]) && kind != LG_MODEL_GCNII)
        snprintf(o->unused, sizeof o->unused, "--%s: only --model gcnii has it", given[O_ALPHA] ? "alpha" : "lambda");
    else if (given[O_TEPS] && kind != LG_MODEL_GIN)
        snprintf(o->unused, sizeof o->unused, "--train-eps: only --model gin has it");
    else if (given[O_ATTDROP] && o->mc.att_dropout != 0 && (baseline || kind == LG_MODEL_L2))
        snprintf(o->unused, sizeof o->unused, "--att-dropout: --model %s has no attention dropout",
                 lg_model_kind_name(kind));
    return 0;
}

/* A duration of s seconds for a progress line: "42s", "3m05s", "2h07m". */
static void lg__fmt_secs(char *buf, size_t cap, double s) {
    if (!(s >= 0) || s > 1e7) snprintf(buf, cap, "?");
    else if (s < 60) snprintf(buf, cap, "%.0fs", s);
    else if (s < 3600) snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

/* ,"key":v in the format fmt, or ,"key":null when have is 0. */
static void lg__json_num(const char *key, const char *fmt, double v, int have) {
    printf(",\"%s\":", key);
    if (have) lg_json_number(stdout, fmt, v);
    else fputs("null", stdout);
}

/* Opens FILE for writing, or prints an error. */
static FILE *lg__open_out(const char *cmd, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) lg_cli_errorf(cmd, "%s: cannot write: %s", path, strerror(errno));
    return f;
}

static void lg__print_json(const lg_train_opts *o, const lg_dataset *ds, const lg_train_summary *s, int interrupted) {
    lg_blas_info bi;
    lg_blas_check(&bi);
    char norm[64];
    lg_norm_format(norm, sizeof norm, o->mc.att_norm, o->mc.node_norm);
    const lg_model_config *m = &o->mc;
    const lg_train_config *t = &o->tc;
    printf("{\"lipgnn_version\":\"%s\",\"blas_core\":", lg_version());
    lg_json_string(stdout, bi.current);
    printf(",\"blas_best\":");
    lg_json_string(stdout, bi.best);
    char wait[LG_CLI_OMP_WAIT_CAP];
    printf(",\"kernel_isa\":\"%s\",\"threads\":%d,\"omp_wait\":", lg_kernel_isa(), omp_get_max_threads());
    lg_json_string(stdout, lg_cli_omp_wait(wait, sizeof wait, 0));
    printf(",\"dataset\":");
    lg_json_string(stdout, ds->name);
    printf(",\"model\":\"%s\",\"norm\":\"%s\",\"layers\":%d,\"hidden\":%d,\"heads\":%d,\"epochs\":%d,\"seed\":%llu",
           lg_model_kind_name(m->kind), norm, m->layers, m->hidden, m->heads, t->epochs, (unsigned long long)t->seed);
    printf(",\"batch_size\":%d,\"graphs\":%lld", t->batch_size, (long long)ds->n_graphs);
    /* the numbers as given (0.6, not 0.59999999999999998); the layer weight
     * decay in effect (a negative one means --weight-decay's) */
    char g[11][32];
    printf(",\"config\":{\"residual\":%s,\"lip_scale\":%s,\"gate\":%s,\"dropout\":%s,\"att_dropout\":%s,"
           "\"self_loops\":%s,\"feature_norm\":\"%s\",\"lr\":%s,\"weight_decay\":%s,\"layer_weight_decay\":%s,\"plateau\":%s,"
           "\"patience\":%d,\"missing\":%s,\"explode_threshold\":%s,\"explode_growth\":%s,"
           "\"explode_window\":%d,\"stop_on_explosion\":%s,\"train_eps\":%s,\"alpha\":%s,\"lambda\":%s,"
           "\"init\":\"%s\"}",
           m->residual ? "true" : "false", lg_cli_shortest(g[0], 32, m->lip_scale), m->gate ? "true" : "false",
           lg_cli_shortest(g[1], 32, m->dropout), lg_cli_shortest(g[2], 32, m->att_dropout),
           m->self_loops ? "true" : "false", m->feature_norm_row ? "row" : "none", lg_cli_shortest(g[3], 32, t->lr),
           lg_cli_shortest(g[4], 32, t->weight_decay),
           lg_cli_shortest(g[5], 32, t->layer_weight_decay < 0 ? t->weight_decay : t->layer_weight_decay),
           t->plateau ? "true" : "false", t->patience, lg_cli_shortest(g[6], 32, t->missing),
           lg_cli_shortest(g[7], 32, t->explode_threshold), lg_cli_shortest(g[8], 32, t->explode_growth),
           t->explode_window, t->stop_on_explosion ? "true" : "false", m->train_eps ? "true" : "false",
           lg_cli_shortest(g[9], 32, m->alpha), lg_cli_shortest(g[10], 32, m->lambda), lg_init_name(m->init));
    /* with no epoch run nothing was evaluated or measured: those fields are null */
    const int ran = s->epochs_run > 0;
    printf(",\"params\":%lld,\"epochs_run\":%ld", (long long)s->n_params, s->epochs_run);
    lg__json_num("train_acc", "%.6f", s->train_acc, ran);
    const int has_val = ran && ds->n_val > 0; /* no validation split (TREES): null, not 0 */
    lg__json_num("val_acc", "%.6f", s->val_acc, has_val);
    const int has_test = ran && ds->n_test > 0; /* likewise without a test split */
    lg__json_num("test_acc", "%.6f", s->test_acc, has_test);
    lg__json_num("train_loss", "%.6g", s->train_loss, ran);
    lg__json_num("val_loss", "%.6g", s->val_loss, has_val);
    lg__json_num("test_loss", "%.6g", s->test_loss, has_test);
    if (ran) printf(",\"best_epoch\":%ld", s->best_epoch);
    else printf(",\"best_epoch\":null");
    lg__json_num("best_val_acc", "%.6f", s->best_val_acc, ran);
    lg__json_num("test_acc_at_best_val", "%.6f", s->test_acc_at_best_val, has_test);
    lg__json_num("train_acc_at_best_val", "%.6f", s->train_acc_at_best_val, ran);
    lg__json_num("epoch_ms_median", "%.4f", s->epoch_ms_median, ran);
    printf(",\"epochs_total_s\":%.3f", s->epochs_ms_total / 1000); /* the epochs run by this process */
    printf(",\"exploded\":%s,\"first_explosion_epoch\":", s->exploded ? "true" : "false");
    if (s->exploded) printf("%ld,\"explosion_layer\":%d,\"explosion_reason\":", s->first_explosion_epoch, s->explosion_layer);
    else printf("null,\"explosion_layer\":null,\"explosion_reason\":");
    lg_json_string(stdout, s->exploded ? s->explosion_reason : "");
    lg__json_num("max_layer_grad_norm", "%.6g", s->max_layer_grad_norm, ran);
    lg__json_num("max_att_grad_norm", "%.6g", s->max_att_grad_norm, ran);
    printf(",\"max_grad_norm_per_layer\":[");
    for (int l = 0; l < s->layers && ran; l++) {
        if (l) putchar(',');
        lg_json_number(stdout, "%.6g", s->max_grad_norm_per_layer[l]);
    }
    printf("],\"max_att_grad_norm_per_layer\":[");
    for (int l = 0; l < s->layers && ran; l++) {
        if (l) putchar(',');
        lg_json_number(stdout, "%.6g", s->max_att_grad_norm_per_layer[l]);
    }
    putchar(']');
    /* the input and output linear layers' (null: the model has none, or unknown) */
    lg__json_num("max_input_grad_norm", "%.6g", s->max_io_grad_norm[0], ran);
    lg__json_num("max_output_grad_norm", "%.6g", s->max_io_grad_norm[1], ran);
    printf(",\"stopped_early\":%s,\"interrupted\":%s}\n", s->stopped_early ? "true" : "false",
           interrupted ? "true" : "false");
}

/* Progress within an epoch of mini-batches, on a terminal. */
typedef struct lg__batch_progress {
    long epoch; /* the epoch running */
    int epochs; /* of --epochs       */
} lg__batch_progress;

static void lg__on_batch(void *ctx, long done, long total) {
    const lg__batch_progress *p = ctx;
    fprintf(stderr, "\r\033[Kepoch %ld/%d: batch %ld of %ld (training, then evaluation)", p->epoch, p->epochs, done,
            total);
    fflush(stderr);
}

/* Trains on ds as o says: logs, progress, explosion messages, signals,
 * checkpoint. Fills *sum and *interrupted; returns the exit status. */
int lg_cli_train_run(const char *cmd_name, const lg_train_opts *o, const lg_dataset *ds, lg_train_summary *sum,
                     int *interrupted) {
    lg_trainer *t = NULL;
    FILE *glog = NULL, *elog = NULL;
    int status = LG_EXIT_OK;
    /* every message of the run ("lipgnn CMD: ...") names it when it has a label */
    char named[320];
    const char *cmd = cmd_name;
    if (o->label) {
        snprintf(named, sizeof named, "%s: run %.280s", cmd_name, o->label);
        cmd = named;
    }
    *interrupted = 0;
    memset(sum, 0, sizeof *sum);
    /* refuse, before allocating, a model that does not fit */
    status = lg_cli_memory_check(cmd, &o->mc, &o->tc, ds, o->max_memory);
    if (status != LG_EXIT_OK) goto done;
    /* a status line on a terminal while the model is built (a run of a
     * study has the study's own) */
    const int building = isatty(fileno(stderr)) && !o->quiet && !o->label;
    if (building) {
        fprintf(stderr, "\r\033[Klipgnn %s: building the model%s...", cmd, o->resume ? " and reading the checkpoint" : "");
        fflush(stderr);
    }
    lg_status st = lg_trainer_init(&t, &o->mc, &o->tc, ds);
    if (st == LG_OK) { /* the data options, in every checkpoint of the run: predict and --resume take them */
        char note[LG_CLI_NOTE_CAP];
        if (lg_cli_data_note(&o->data, note, sizeof note) == 0) st = lg_trainer_set_note(t, note);
        else if (o->save || o->save_best) /* (said with --quiet too: predict and --resume will need them given) */
            fprintf(stderr, "lipgnn %s: note: the data options are too long to be recorded in the checkpoint: predict "
                    "and train --resume will need them given\n", cmd);
    }
    lg_model_config ck_mc;
    lg_train_config ck_tc;
    const int ck_lr = st == LG_OK && o->resume && lg_checkpoint_config(o->resume, &ck_mc, &ck_tc) == LG_OK;
    if (st == LG_OK && o->resume) st = lg_trainer_load(t, o->resume);
    if (building) fputs("\r\033[K", stderr);
    if (st == LG_OK && ds->n_val == 0 && (o->tc.patience > 0 || o->tc.plateau) && !o->quiet && !o->label)
        fprintf(stderr, "lipgnn %s: note: %s has no validation split: %s the training loss\n", cmd, ds->name,
                o->tc.patience > 0 && o->tc.plateau ? "--patience and --plateau watch"
                : o->tc.patience > 0               ? "--patience watches"
                                                   : "--plateau watches");
    if (st == LG_OK && ck_lr && ck_tc.lr != o->tc.lr && !o->quiet)
        fprintf(stderr, "lipgnn %s: note: --lr %g replaces the checkpoint's learning rate (its run's --lr %g) from "
                "epoch %ld\n", cmd, o->tc.lr, ck_tc.lr, lg_trainer_epochs_done(t) + 1);
    if (st == LG_OK && o->resume && o->tc.epochs <= lg_trainer_epochs_done(t) && !o->quiet)
        fprintf(stderr, "lipgnn %s: note: %s has run %ld epochs, and --epochs %ld counts the whole run, those "
                "included: no epoch to run (give --epochs above %ld to train on)\n", cmd, o->resume,
                lg_trainer_epochs_done(t), (long)o->tc.epochs, lg_trainer_epochs_done(t));
    if (st != LG_OK) {
        lg_cli_errorf(cmd, "%s", lg_last_error());
        status = lg_cli_exit_for(st);
        goto done;
    }
    int io_rows = 0; /* 1: the model has input and output linear layers, whose rows the grad log has too */
    if (o->grad_log) {
        if (!(glog = lg__open_out(cmd, o->grad_log))) { status = LG_EXIT_USAGE; goto done; }
        fprintf(glog, "epoch,layer,group,norm\n");
        lg_idx off = 0, len = 0;
        io_rows = lg_trainer_layer_params(t, 0, &off, &len) == LG_OK && off > 0;
    }
    if (o->log) {
        if (!(elog = lg__open_out(cmd, o->log))) { status = LG_EXIT_USAGE; goto done; }
        fprintf(elog, "epoch,lr,train_loss_step,train_loss,val_loss,test_loss,train_acc,val_acc,test_acc,ms\n");
    }
    /* the first signal stops at the end of the epoch and gives the signal its
     * default action back, so a second one ends the process at once (an epoch
     * can be long); not installed again once a signal came (depth-study's next
     * run then stops before its first epoch) */
    if (!lg__stop_signal) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = lg__on_signal;
        sa.sa_flags = SA_RESETHAND;
        lg_cli_catch_stop(&sa, NULL);
    }
    int tty = isatty(fileno(stderr)) && !o->quiet;
    lg_epoch_stats es;
    long best_saved = 0; /* the epoch --save-best wrote, or 0 */
    double ran_ms = 0;   /* the epochs' time so far, for the progress line's estimate */
    long start = lg_trainer_epochs_done(t);
    lg__batch_progress bp = {start, o->tc.epochs};
    if (tty && o->tc.batch_size > 0) lg_trainer_set_progress(t, lg__on_batch, &bp);
    for (long e = start; e < o->tc.epochs && !lg_trainer_done(t) && !lg__stop_signal; e++) {
        bp.epoch = e + 1;
        st = lg_trainer_epoch(t, &es);
        if (tty && o->tc.batch_size > 0) fputs("\r\033[K", stderr);
        if (st != LG_OK) {
            lg_cli_errorf(cmd, "epoch %ld: %s", e + 1, lg_last_error());
            status = lg_cli_exit_for(st);
            break;
        }
        if (glog) {
            for (int l = 0; l < es.layers; l++)
                fprintf(glog, "%ld,%d,attention,%.9g\n%ld,%d,all,%.9g\n", es.epoch, l, es.att_grad_norm[l], es.epoch, l,
                        es.grad_norm[l]);
            if (io_rows) /* the input linear layer as layer -1, the output one as layer L */
                fprintf(glog, "%ld,-1,input,%.9g\n%ld,%d,output,%.9g\n", es.epoch, es.io_grad_norm[0], es.epoch,
                        es.layers, es.io_grad_norm[1]);
        }
        if (elog) { /* an empty split's loss and accuracy: empty fields (NaN to a CSV reader), not 0 */
            char vl[32] = "", tl[32] = "", va[16] = "", ta[16] = "";
            if (ds->n_val) snprintf(vl, sizeof vl, "%.9g", es.val_loss), snprintf(va, sizeof va, "%.6f", es.val_acc);
            if (ds->n_test) snprintf(tl, sizeof tl, "%.9g", es.test_loss), snprintf(ta, sizeof ta, "%.6f", es.test_acc);
            fprintf(elog, "%ld,%.9g,%.9g,%.9g,%s,%s,%.6f,%s,%s,%.3f\n", es.epoch, es.lr, es.train_loss_step,
                    es.train_loss, vl, tl, es.train_acc, va, ta, es.ms);
        }
        if (o->save_best) { /* this epoch the best so far: its checkpoint (written atomically) */
            if (lg_trainer_best_epoch(t) == es.epoch) {
                if (lg_trainer_save(t, o->save_best) != LG_OK) {
                    if (tty && !o->verbose) fputc('\n', stderr);
                    lg_cli_errorf(cmd, "--save-best %s", lg_last_error()); /* "PATH: ..." */
                    status = LG_EXIT_FAIL;
                    break;
                }
                best_saved = es.epoch;
            }
        }
        if (es.exploded_now) {
            lg_train_summary s;
            lg_trainer_summary(t, &s);
            if (tty && !o->verbose) fputc('\n', stderr);
            fprintf(stderr, "lipgnn %s: gradient explosion at epoch %ld: %s%s\n", cmd, s.first_explosion_epoch,
                    s.explosion_reason, o->tc.stop_on_explosion ? " (stopping: --stop-on-explosion)" : "");
        }
        if (o->verbose) {
            char va[16], ta[16];
            fprintf(stderr, "epoch %5ld  loss %.4f  train %.4f  val %s  test %s  %.1f ms\n", es.epoch,
                    es.train_loss_step, es.train_acc, lg_cli_acc(va, sizeof va, es.val_acc, ds->n_val > 0),
                    lg_cli_acc(ta, sizeof ta, es.test_acc, ds->n_test > 0), es.ms);
        }
        else if (tty) {
            int w = 24, done = (int)((double)w * (double)es.epoch / (double)(o->tc.epochs ? o->tc.epochs : 1));
            ran_ms += es.ms;
            char eta[32];
            lg__fmt_secs(eta, sizeof eta, ran_ms / 1000 / (double)(es.epoch - start) * (double)(o->tc.epochs - es.epoch));
            fprintf(stderr, "\r[%.*s%*s] epoch %ld/%d  loss %.4f  %s %.4f  %.1f ms/epoch  %s left ", done,
                    "########################", w - done, "", es.epoch, o->tc.epochs, es.train_loss_step,
                    ds->n_val ? "val" : "train", ds->n_val ? es.val_acc : es.train_acc, es.ms, eta);
        }
    }
    if (tty && !o->verbose) fputc('\n', stderr);
    if (lg__stop_signal) {
        *interrupted = 1;
        fprintf(stderr, "lipgnn %s: %s: stopped after epoch %ld\n", cmd,
                lg_cli_stop_word((int)lg__stop_signal), lg_trainer_epochs_done(t));
    }
    if (st == LG_OK) lg_trainer_summary(t, sum);
    if (best_saved > 0 && !o->quiet)
        fprintf(stderr, "lipgnn %s: %s: the checkpoint of epoch %ld, the best %s accuracy\n", cmd, o->save_best,
                best_saved, ds->n_val ? "validation" : "training");
    else if (o->save_best && st == LG_OK && status == LG_EXIT_OK && start > 0 && sum->epochs_run > start)
        /* a resumed run that never beat its best */
        fprintf(stderr, "lipgnn %s: note: --save-best %s not written: no epoch of this run beat the best %s "
                "accuracy, reached at epoch %ld before --resume (that epoch's parameters are not in the resumed "
                "checkpoint)\n", cmd, o->save_best, ds->n_val ? "validation" : "training", sum->best_epoch);
    if (o->save && st == LG_OK) {
        lg_status ss = lg_trainer_save(t, o->save);
        if (ss != LG_OK) {
            lg_cli_errorf(cmd, "--save %s", lg_last_error()); /* "PATH: ...", as lg_cli_check_save's */
            status = LG_EXIT_FAIL;
        } else if (!sum->params_finite)
            fprintf(stderr, "lipgnn %s: note: %s holds parameters that are not finite numbers (the run diverged): "
                    "kept to inspect, but predict, lipschitz and --resume refuse it\n", cmd, o->save);
    }
    /* the summary's arrays belong to the trainer: copy what callers keep */
    if (st == LG_OK && o->json) lg__print_json(o, ds, sum, *interrupted);
    if (st == LG_OK && sum->exploded && o->tc.stop_on_explosion && status == LG_EXIT_OK) status = LG_EXIT_EXPLODED;
    if (*interrupted && status == LG_EXIT_OK) status = 128 + (int)lg__stop_signal;
    if (st != LG_OK && status == LG_EXIT_OK) status = LG_EXIT_FAIL;
done:
    if (lg_cli_close_out(cmd, glog, o->grad_log) != 0) status = LG_EXIT_FAIL;
    if (lg_cli_close_out(cmd, elog, o->log) != 0) status = LG_EXIT_FAIL;
    lg_cli_flush(stdout); /* (a failure said when main closes it, with its reason) */
    lg_trainer_free(t);
    sum->max_grad_norm_per_layer = sum->max_att_grad_norm_per_layer = NULL;
    return status;
}

int lg_cmd_train(int argc, char **argv) {
    const char *cmd = "train";
    lg_train_opts o;
    int rc = lg_cli_train_parse(cmd, argc, argv, &o);
    if (rc) return rc > 0 ? LG_EXIT_OK : LG_EXIT_USAGE;
    /* (demo and depth-study set the attention norm themselves: --lip-scale is theirs to use) */
    if (!o.unused[0] && o.mc.lip_scale != 1 && o.mc.att_norm != LG_ATT_NORM_LIPSCHITZ &&
        o.mc.att_norm != LG_ATT_NORM_LIPSCHITZ_REF)
        snprintf(o.unused, sizeof o.unused, "--lip-scale: LipschitzNorm's scale, and --norm %s has no LipschitzNorm",
                 lg_att_norm_name(o.mc.att_norm));
    if (o.unused[0]) {
        lg_cli_errorf(cmd, "%s", o.unused);
        return LG_EXIT_USAGE;
    }
    /* --save's path checked before the data are loaded and the model trained,
     * not only when the checkpoint is written at the end */
    if (lg_cli_check_save(cmd, "--save", o.save) || lg_cli_check_save(cmd, "--save-best", o.save_best) ||
        lg_cli_check_writable(cmd, "--log", o.log) || lg_cli_check_writable(cmd, "--grad-log", o.grad_log))
        return LG_EXIT_USAGE;
    lg_cli_set_threads(cmd, o.threads);
    lg_dataset *ds = NULL;
    o.data.progress = isatty(fileno(stderr)) && !o.quiet;
    rc = lg_cli_data_load(cmd, &o.data, o.max_memory, &ds);
    if (rc) return rc;
    lg_train_summary s;
    int interrupted;
    int status = lg_cli_train_run(cmd, &o, ds, &s, &interrupted);
    const int untrained = s.epochs_run == 0 && status == LG_EXIT_OK && o.tc.epochs == 0;
    if ((s.epochs_run > 0 || untrained) && !o.json) {
        char norm[64];
        lg_norm_format(norm, sizeof norm, o.mc.att_norm, o.mc.node_norm);
        printf("model %s, %d layers, hidden %d, %d head(s), norm %s%s; %s, seed %llu", lg_model_kind_name(o.mc.kind),
               o.mc.kind == LG_MODEL_GAT_CLASSIC ? 2 : o.mc.layers, o.mc.hidden, o.mc.heads, norm,
               o.mc.residual ? ", residual" : "", ds->name, (unsigned long long)o.tc.seed);
        if (o.tc.batch_size > 0 && ds->n_graphs == 1)
            printf(", --batch-size %d on its one graph: one batch an epoch, the whole graph", o.tc.batch_size);
        else if (o.tc.batch_size > 0)
            printf(", mini-batches of %d of its %lld graphs", o.tc.batch_size, (long long)ds->n_graphs);
        putchar('\n');
        if (untrained) {
            printf("--epochs 0: the model was built with its initial parameters%s%s; nothing was trained or "
                   "evaluated\n",
                   o.save ? " and saved to " : "", o.save ? o.save : "");
        } else {
            char ta[16], tb[16];
            const int has_test = ds->n_test > 0;
            lg_cli_acc(ta, sizeof ta, s.test_acc, has_test);
            lg_cli_acc(tb, sizeof tb, s.test_acc_at_best_val, has_test);
            if (ds->n_val)
                printf("epochs %ld: train %.4f  val %.4f  test %s (last epoch%s)\n"
                       "best validation %.4f at epoch %ld: test %s\n",
                       s.epochs_run, s.train_acc, s.val_acc, ta, has_test ? "" : "; no test split", s.best_val_acc,
                       s.best_epoch, tb);
            else
                printf("epochs %ld: train %.4f  test %s (last epoch; no validation split%s)\n"
                       "best training accuracy %.4f at epoch %ld: test %s\n",
                       s.epochs_run, s.train_acc, ta, has_test ? "" : ", no test split", s.best_val_acc, s.best_epoch,
                       tb);
        }
        if (!untrained) {
            /* fabs: a NaN norm prints "nan", not "-nan" (norms are >= 0) */
            printf("largest gradient norm of a layer %.4g (attention parameters %.4g", fabs(s.max_layer_grad_norm),
                   fabs(s.max_att_grad_norm));
            /* the input and output linear layers', which the detector does
             * not watch (none: the model has none, unknown after a checkpoint
             * that predates their record, or both NaN, as the layers' then) */
            if (!isnan(s.max_io_grad_norm[0]) || !isnan(s.max_io_grad_norm[1]))
                printf("; input layer %.4g, output layer %.4g", fabs(s.max_io_grad_norm[0]),
                       fabs(s.max_io_grad_norm[1]));
            printf("); %s\n", s.exploded ? "gradients EXPLODED" : "no explosion");
            if (s.exploded) printf("first explosion at epoch %ld: %s\n", s.first_explosion_epoch, s.explosion_reason);
            printf("%.2f ms per epoch (median), %.2f s in this run\n", s.epoch_ms_median, s.epochs_ms_total / 1000);
        }
    }
    if (s.epochs_run > 0 || untrained) lg_cli_env_notes(stderr); /* on stderr: stdout holds the results */
    lg_dataset_free(ds);
    return status;
}

static const char lg__demo_help[] =
    "Usage: lipgnn demo [--sbm N[,M] | --trees DEPTH | --data DIR | --dataset NAME] [--layers L]\n"
    "                   [--epochs E] [--seed S] [--threads N] [--json] [train options]\n"
    "The main job on a built-in problem (no data files): trains the same deep GAT\n"
    "twice, without and with LipschitzNorm, and prints both accuracies, the largest\n"
    "per-layer gradient norm of each run and whether gradients exploded.\n"
    "Default problem: --sbm 3000 (a stochastic block model made with igraph: 3000 nodes\n"
    "in 8 classes, about 12 000 edges, sparse binary class-dependent features, 20\n"
    "training nodes a class), --layers 12 --epochs 100 and DeepGAT's defaults (hidden\n"
    "64, 1 head, dropout 0.6, attention dropout 0.3): about 15 s of CPU. Without\n"
    "the norm such a GAT's gradients grow by two orders of magnitude and it stays near\n"
    "chance; with it, it learns.\n"
    "With --trees: 500 trees, hidden 32, no dropout (TREES is scored by training\n"
    "accuracy, as in the paper).\n"
    "With --trees still 12 layers (not train's DEPTH + 1) unless --layers is given.\n"
    "Every train option is accepted (see 'lipgnn train --help') but --resume. The demo\n"
    "sets the attention norm (none, then lipschitz; a node norm given with --norm, as\n"
    "pairnorm, stays in both runs), so --model needs attention (gat, gt, gat-classic).\n"
    "--save, --save-best, --log and --grad-log name two files, one a run: g.csv gives\n"
    "g-none.csv and g-lipschitz.csv. --json prints one JSON object a run (train's), the\n"
    "run without the norm first, in place of the table.\n";

/* path with "-tag" before its extension (g.csv, none: g-none.csv; a name
 * without one: g-none), or an error (1) when it does not fit cap. */
static int lg__demo_path(char *buf, size_t cap, const char *path, const char *tag) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base) dot = path + strlen(path);
    const int w = snprintf(buf, cap, "%.*s-%s%s", (int)(dot - path), path, tag, dot);
    return w < 0 || (size_t)w >= cap;
}

int lg_cmd_demo(int argc, char **argv) {
    const char *cmd = "demo";
    for (int k = 1; k < argc; k++)
        if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h")) {
            fputs(lg__demo_help, stdout);
            return LG_EXIT_OK;
        }
    /* the demo's defaults first, the user's options after them; the default
     * problem only when the user names none */
    char *args[256];
    int n = 0;
    int has_trees = 0, has_data = 0, has_count = 0, classic = 0;
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k];
        /* refused before the parse, which would read the checkpoint's data (and say so) */
        if (!strcmp(a, "--resume") || !strncmp(a, "--resume=", 9)) {
            lg_cli_errorf(cmd, "--resume: the demo trains two models from their start (use lipgnn train --resume)");
            return LG_EXIT_USAGE;
        }
        /* gat-classic has its 2 layers, not the demo's 12 */
        classic |= (!strcmp(a, "--model") && k + 1 < argc && !strcmp(argv[k + 1], "gat-classic")) ||
                   !strcmp(a, "--model=gat-classic");
        has_count |= !strcmp(a, "--trees-count") || !strncmp(a, "--trees-count=", 14);
        int trees = !strcmp(a, "--trees") || !strncmp(a, "--trees=", 8);
        has_trees |= trees;
        has_data |= trees || !strcmp(a, "--sbm") || !strncmp(a, "--sbm=", 6) || !strcmp(a, "--data") ||
                    !strncmp(a, "--data=", 7) || !strcmp(a, "--dataset") || !strncmp(a, "--dataset=", 10);
    }
    const char *common[] = {"demo", "--layers", "12", "--epochs", "100"};
    const char *sbm[] = {"--sbm", "3000"};
    const char *trees[] = {"--trees-count", "500", "--hidden", "32", "--dropout", "0", "--att-dropout", "0"};
    for (size_t k = 0; k < sizeof common / sizeof *common; k++)
        if (!classic || (k != 1 && k != 2)) args[n++] = (char *)common[k];
    if (!has_data)
        for (size_t k = 0; k < sizeof sbm / sizeof *sbm; k++) args[n++] = (char *)sbm[k];
    if (has_trees) /* (its --trees-count only when none is given: a data option is given once) */
        for (size_t k = has_count ? 2 : 0; k < sizeof trees / sizeof *trees; k++) args[n++] = (char *)trees[k];
    for (int k = 1; k < argc && n < 255; k++) args[n++] = argv[k];
    args[n] = NULL;
    lg_train_opts o;
    int rc = lg_cli_train_parse(cmd, n, args, &o);
    if (rc) return rc > 0 ? LG_EXIT_OK : LG_EXIT_USAGE;
    if (o.unused[0]) {
        lg_cli_errorf(cmd, "%s", o.unused);
        return LG_EXIT_USAGE;
    }
    if (o.mc.kind != LG_MODEL_GAT && o.mc.kind != LG_MODEL_GT && o.mc.kind != LG_MODEL_GAT_CLASSIC) {
        lg_cli_errorf(cmd, "--model %s: the demo trains a model without and with LipschitzNorm, which needs an "
                      "attention it normalises (--model gat, gt or gat-classic)", lg_model_kind_name(o.mc.kind));
        return LG_EXIT_USAGE;
    }
    const lg_att_norm norms[2] = {LG_ATT_NORM_NONE, LG_ATT_NORM_LIPSCHITZ};
    char label[2][64];
    for (int k = 0; k < 2; k++) { /* both models checked before either is trained */
        lg_model_config mc = o.mc;
        mc.att_norm = norms[k];
        lg_norm_format(label[k], sizeof label[k], mc.att_norm, mc.node_norm);
        if (lg_model_config_check(&mc) != LG_OK) {
            lg_cli_errorf(cmd, "%s", lg_last_error());
            return LG_EXIT_USAGE;
        }
    }
    /* one file a run for --save, --log and --grad-log (the second run overwrote the first's) */
    const char **outs[4] = {&o.save, &o.log, &o.grad_log, &o.save_best};
    char outpath[4][2][4200];
    for (int q = 0; q < 4; q++)
        for (int k = 0; k < 2 && *outs[q]; k++)
            if (lg__demo_path(outpath[q][k], sizeof outpath[q][k], *outs[q], k ? "lipschitz" : "none")) {
                lg_cli_errorf(cmd, "%s: path too long", *outs[q]);
                return LG_EXIT_USAGE;
            }
    const char *given[4] = {o.save, o.log, o.grad_log, o.save_best};
    static const char *const outopt[4] = {"--save", "--log", "--grad-log", "--save-best"};
    { /* the eight files distinct, none the data set's, each writable */
        const char *opt[8], *path[8];
        for (int k = 0; k < 2; k++)
            for (int q = 0; q < 4; q++) opt[4 * k + q] = outopt[q], path[4 * k + q] = given[q] ? outpath[q][k] : NULL;
        if (lg_cli_check_clobber(cmd, 8, 8, opt, path, &o.data)) return LG_EXIT_USAGE;
        for (int k = 0; k < 8; k++)
            if (path[k] && ((k % 4 == 0 || k % 4 == 3) ? lg_cli_check_save(cmd, opt[k], path[k])
                                                       : lg_cli_check_writable(cmd, opt[k], path[k])))
                return LG_EXIT_USAGE;
    }
    lg_cli_set_threads(cmd, o.threads);
    lg_dataset *ds = NULL;
    o.data.progress = isatty(fileno(stderr)) && !o.quiet;
    rc = lg_cli_data_load(cmd, &o.data, o.max_memory, &ds);
    if (rc) return rc;
    if (!o.json)
        printf("lipgnn demo: %s (%lld nodes, %d classes), %d-layer %s (hidden %d), %d epochs: without, then with "
               "LipschitzNorm\n",
               ds->name, (long long)ds->graph->n, (int)ds->n_classes,
               o.mc.kind == LG_MODEL_GAT_CLASSIC ? 2 : o.mc.layers,
               o.mc.kind == LG_MODEL_GT ? "graph transformer" : "GAT", o.mc.hidden, o.tc.epochs);
    lg_train_summary s[2];
    int status = LG_EXIT_OK;
    for (int k = 0; k < 2 && status == LG_EXIT_OK; k++) {
        o.mc.att_norm = norms[k];
        for (int q = 0; q < 4; q++)
            if (given[q]) *outs[q] = outpath[q][k];
        int interrupted;
        status = lg_cli_train_run(cmd, &o, ds, &s[k], &interrupted);
        if (interrupted) break;
    }
    if (status == LG_EXIT_OK && !o.json) {
        printf("\n%-22s %10s %10s %14s %10s\n", "norm", "train acc", "test acc", "max grad norm", "exploded");
        /* (TREES is scored by training accuracy, as in the paper; test accuracy beside it) */
        for (int k = 0; k < 2; k++) {
            char ta[16];
            printf("%-22s %10.4f %10s %14.4g %10s\n", label[k], s[k].train_acc,
                   lg_cli_acc(ta, sizeof ta, s[k].test_acc, ds->n_test > 0), s[k].max_layer_grad_norm,
                   s[k].exploded ? "yes" : "no");
        }
        const int by_train = ds->roots != NULL; /* TREES: training accuracy, as in the paper */
        printf("\nWith LipschitzNorm: %s accuracy %.3f (without: %.3f); largest layer gradient norm %.3g (without: "
               "%.3g).\n",
               by_train ? "training" : "test", by_train ? s[1].train_acc : s[1].test_acc,
               by_train ? s[0].train_acc : s[0].test_acc, s[1].max_layer_grad_norm, s[0].max_layer_grad_norm);
    }
    if (status == LG_EXIT_OK) lg_cli_env_notes(stderr); /* --json or not, as train */
    lg_dataset_free(ds);
    return status;
}
