/* lipgnn predict: evaluate a checkpoint, export predictions, embeddings and
 * attention weights. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static const char lg__predict_help[] =
    "Usage: lipgnn predict --resume FILE [--data DIR | --dataset NAME | --trees DEPTH | --sbm N[,M]]\n"
    "                      [OPTIONS]\n"
    "Evaluates a checkpoint written by 'lipgnn train --save' on the data it was trained\n"
    "on, and exports what the model computes. The model is rebuilt from the checkpoint,\n"
    "and so is the data set when no data option is given: the checkpoint records the\n"
    "data options of its training (--data by its absolute path), and predict says on\n"
    "stderr which it uses. A data option given is used instead (a data set moved), with\n"
    "a note when it differs from the recorded one. Checkpoints written before lipgnn\n"
    "recorded them need a data option.\n"
    "\n"
    "  --resume FILE       the checkpoint\n"
    "  --out FILE          predictions as CSV: node,class,p_0,...,p_{C-1},label,split (the\n"
    "                      predicted class, its probabilities, the true label, -1 when\n"
    "                      unlabelled, and train, val, test or none; default: stdout)\n"
    "  --embeddings FILE   the last hidden layer, Matrix Market array (n x width)\n"
    "  --attention FILE    per-edge attention weights of every layer and head as CSV:\n"
    "                      layer,head,source,target,weight\n"
    "  --json              accuracies as one JSON object on stdout (then --out is needed\n"
    "                      for the predictions)\n"
    "  --threads N         threads (default: all cores)\n"
    "  --max-memory SIZE   refuse a model (with its data set), or a data set to read\n"
    "                      or make, whose estimated memory exceeds SIZE (bytes,\n"
    "                      or with K, M, G, T; default: the machine's physical memory,\n"
    "                      or the control group's limit when smaller: SLURM's --mem)\n"
    "  -h, --help          this help\n"
    "--trees and --sbm data are made again from the checkpoint's seed, unless --seed is\n"
    "given.\n"
    "\n";

int lg_cmd_predict(int argc, char **argv) {
    const char *cmd = "predict";
    static const struct option opts[] = {
        {"data", required_argument, 0, 'd'},    {"dataset", required_argument, 0, 'd'},
        {"trees", required_argument, 0, 'd'},   {"trees-count", required_argument, 0, 'd'}, {"sbm", required_argument, 0, 'd'},
        {"seed", required_argument, 0, 'd'},    {"resume", required_argument, 0, 'r'},
        {"out", required_argument, 0, 'o'},     {"embeddings", required_argument, 0, 'e'},
        {"attention", required_argument, 0, 'a'}, {"json", no_argument, 0, 'j'},
        {"threads", required_argument, 0, 't'}, {"max-memory", required_argument, 0, 'm'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    lg_cli_data d = {0};
    const char *resume = NULL, *out = NULL, *emb = NULL, *att = NULL;
    int json = 0, c, idx, threads = 0, seed_given = 0;
    double max_memory = 0;
    long long v;
    optind = 0; /* glibc: a full restart (1 would keep a half-read "-xy" group of an earlier parse) */
    opterr = 0;
    while ((c = lg_cli_getopt(cmd, argc, argv, opts, &idx, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(lg__predict_help, stdout); fputs(lg_cli_data_help_resume, stdout); return LG_EXIT_OK;
        case 'd':
            if (lg_cli_data_option(cmd, &d, opts[idx].name, optarg) < 0) return LG_EXIT_USAGE;
            seed_given |= !strcmp(opts[idx].name, "seed");
            break;
        case 'r': if (lg_cli_path_value(cmd, "--resume", optarg)) return LG_EXIT_USAGE; resume = optarg; break;
        case 'o': if (lg_cli_path_value(cmd, "--out", optarg)) return LG_EXIT_USAGE; out = optarg; break;
        case 'e': if (lg_cli_path_value(cmd, "--embeddings", optarg)) return LG_EXIT_USAGE; emb = optarg; break;
        case 'a': if (lg_cli_path_value(cmd, "--attention", optarg)) return LG_EXIT_USAGE; att = optarg; break;
        case 'j': json = 1; break;
        case 'm': if (lg_cli_parse_size(cmd, "--max-memory", optarg, &max_memory)) return LG_EXIT_USAGE; break;
        case 't': if (lg_cli_parse_ll(cmd, "--threads", optarg, 1, 1024, &v)) return LG_EXIT_USAGE; threads = (int)v; break;
        default: /* '?': lg_cli_getopt printed the error */
            return LG_EXIT_USAGE;
        }
    }
    if (optind < argc) { lg_cli_errorf(cmd, "unexpected argument '%s'", argv[optind]); return LG_EXIT_USAGE; }
    if (!resume) { lg_cli_errorf(cmd, "--resume FILE is required"); return LG_EXIT_USAGE; }
    const char *opt[4] = {"--out", "--embeddings", "--attention", "--resume"}, *path[4] = {out, emb, att, resume};
    lg_cli_set_threads(cmd, threads);
    lg_model_config mc;
    lg_train_config tc;
    lg_status st = lg_checkpoint_config(resume, &mc, &tc);
    if (st != LG_OK) { lg_cli_errorf(cmd, "%s", lg_last_error()); return lg_cli_exit_for(st); }
    if (att && tc.batch_size > 0) { /* before any work: a mini-batch model has no graph of the whole data set */
        lg_cli_errorf(cmd, "--attention: this checkpoint was trained in mini-batches (--batch-size %d); per-edge "
                      "attention weights are written for full-batch models (--batch-size 0) only", tc.batch_size);
        return LG_EXIT_USAGE;
    }
    if (!seed_given) d.seed = tc.seed; /* --trees, --sbm: the data the model was trained on, as lipschitz */
    char data_note[LG_CLI_NOTE_CAP]; /* the checkpoint's data options, which d may point into */
    if (lg_cli_data_from_checkpoint(cmd, &d, seed_given, resume, data_note, sizeof data_note, 0) ||
        lg_cli_data_check(cmd, &d))
        return LG_EXIT_USAGE;
    /* the outputs against each other, the checkpoint and the data set's files
     * (the checkpoint's data, known now); all before the work, not after it */
    if (lg_cli_check_clobber(cmd, 4, 3, opt, path, &d)) return LG_EXIT_USAGE;
    for (int k = 0; k < 3; k++)
        if (lg_cli_check_writable(cmd, opt[k], path[k])) return LG_EXIT_USAGE;
    lg_dataset *ds = NULL;
    int rc = lg_cli_data_load(cmd, &d, max_memory, &ds);
    if (rc) return rc;
    lg_trainer *t = NULL;
    float *logp = NULL, *hid = NULL, *w = NULL;
    FILE *f = NULL;
    int status = LG_EXIT_OK;
    /* the checkpoint says which model to build: refuse one that does not fit */
    status = lg_cli_memory_check(cmd, &mc, &tc, ds, max_memory);
    if (status != LG_EXIT_OK) goto done;
    st = lg_trainer_init(&t, &mc, &tc, ds);
    if (st == LG_OK) st = lg_trainer_load(t, resume);
    if (st != LG_OK) { lg_cli_errorf(cmd, "%s", lg_last_error()); status = lg_cli_exit_for(st); goto done; }
    lg_idx n = ds->graph->n, C = lg_trainer_classes(t), H = lg_trainer_hidden_width(t);
    logp = malloc(sizeof(float) * (size_t)(n * C));
    hid = emb ? malloc(sizeof(float) * (size_t)(n * H)) : NULL;
    if (!logp || (emb && !hid)) { lg_cli_errorf(cmd, "out of memory"); status = LG_EXIT_FAIL; goto done; }
    st = lg_trainer_predict(t, logp, hid);
    if (st != LG_OK) { lg_cli_errorf(cmd, "%s", lg_last_error()); status = lg_cli_exit_for(st); goto done; }
    /* predictions */
    if (out || !json) {
        f = out ? fopen(out, "w") : stdout;
        if (!f) { lg_cli_errorf(cmd, "%s: cannot write: %s", out, strerror(errno)); status = LG_EXIT_USAGE; goto done; }
        /* each node's split (0 none, 1 train, 2 val, 3 test), for the label and split columns */
        unsigned char *split = calloc((size_t)n + 1, 1);
        if (!split) {
            if (out) fclose(f);
            f = NULL;
            lg_cli_errorf(cmd, "out of memory");
            status = LG_EXIT_FAIL;
            goto done;
        }
        const lg_idx *sl[3] = {ds->train, ds->val, ds->test}, sn[3] = {ds->n_train, ds->n_val, ds->n_test};
        for (int q = 0; q < 3; q++)
            for (lg_idx k = 0; k < sn[q]; k++)
                if (sl[q][k] >= 0 && sl[q][k] < n) split[sl[q][k]] = (unsigned char)(q + 1);
        static const char *const split_name[4] = {"none", "train", "val", "test"};
        fprintf(f, "node,class");
        for (lg_idx k = 0; k < C; k++) fprintf(f, ",p_%lld", (long long)k);
        fputs(",label,split\n", f);
        for (lg_idx i = 0; i < n; i++) {
            const float *r = logp + i * C;
            lg_idx best = 0;
            for (lg_idx k = 1; k < C; k++) if (r[k] > r[best]) best = k;
            fprintf(f, "%lld,%lld", (long long)i, (long long)best);
            for (lg_idx k = 0; k < C; k++) fprintf(f, ",%.9g", exp((double)r[k]));
            fprintf(f, ",%d,%s\n", (int)ds->labels[i], split_name[split[i]]);
        }
        free(split);
        if (out && lg_cli_close_out(cmd, f, out)) status = LG_EXIT_FAIL;
        f = NULL;
        if (status != LG_EXIT_OK) goto done; /* no further output begun after a failed one */
    }
    if (emb) {
        if (!(f = fopen(emb, "w"))) { lg_cli_errorf(cmd, "%s: cannot write: %s", emb, strerror(errno)); status = LG_EXIT_USAGE; goto done; }
        char shown[512]; /* the checkpoint's path on the comment's one line: control bytes as '?' */
        snprintf(shown, sizeof shown, "%s", resume);
        lg_cli_printable(shown, strlen(shown));
        fprintf(f, "%%%%MatrixMarket matrix array real general\n%% lipgnn %s: last hidden layer of %s\n%lld %lld\n",
                lg_version(), shown, (long long)n, (long long)H);
        for (lg_idx q = 0; q < H; q++)
            for (lg_idx i = 0; i < n; i++) fprintf(f, "%.9g\n", hid[i * H + q]);
        if (lg_cli_close_out(cmd, f, emb)) status = LG_EXIT_FAIL;
        f = NULL;
        if (status != LG_EXIT_OK) goto done;
    }
    if (att) {
        const lg_graph *g = lg_trainer_graph(t);
        if (!g) { /* a mini-batch model has no graph of the whole data set */
            lg_cli_errorf(cmd, "--attention: this checkpoint was trained in mini-batches (--batch-size %d); per-edge "
                          "attention weights are written for full-batch models (--batch-size 0) only", tc.batch_size);
            status = LG_EXIT_USAGE;
            goto done;
        }
        if (!(f = fopen(att, "w"))) { lg_cli_errorf(cmd, "%s: cannot write: %s", att, strerror(errno)); status = LG_EXIT_USAGE; goto done; }
        fprintf(f, "layer,head,source,target,weight\n");
        for (int l = 0; l < lg_trainer_layers(t) && status == LG_EXIT_OK; l++) {
            lg_idx K = lg_trainer_layer_heads(t, l);
            float *nw = realloc(w, sizeof(float) * (size_t)(g->nnz * K + 1));
            if (!nw) { lg_cli_errorf(cmd, "out of memory"); status = LG_EXIT_FAIL; break; }
            w = nw;
            if ((st = lg_trainer_attention(t, l, w)) != LG_OK) { lg_cli_errorf(cmd, "%s", lg_last_error()); status = LG_EXIT_FAIL; break; }
            for (lg_idx k = 0; k < K; k++)
                for (lg_idx i = 0; i < g->n; i++)
                    for (lg_idx e = g->p[i]; e < g->p[i + 1]; e++)
                        fprintf(f, "%d,%lld,%lld,%lld,%.6g\n", l, (long long)k, (long long)g->j[e], (long long)i, w[e * K + k]);
        }
        if (lg_cli_close_out(cmd, f, att)) status = LG_EXIT_FAIL;
        f = NULL;
    }
    double acc[3] = {0, 0, 0};
    const lg_idx *lists[3] = {ds->train, ds->val, ds->test};
    lg_idx counts[3] = {ds->n_train, ds->n_val, ds->n_test};
    for (int s = 0; s < 3; s++) lg_accuracy_f32(&acc[s], logp, n, C, ds->labels, lists[s], counts[s]);
    if (json) {
        printf("{\"checkpoint\":");
        lg_json_string(stdout, resume);
        printf(",\"dataset\":");
        lg_json_string(stdout, ds->name);
        printf(",\"model\":\"%s\",\"epochs_trained\":%ld,\"train_acc\":%.6f,\"val_acc\":", lg_model_kind_name(mc.kind),
               lg_trainer_epochs_done(t), acc[0]);
        if (ds->n_val > 0) printf("%.6f", acc[1]);
        else printf("null"); /* no validation split (TREES): no accuracy, not 0 */
        printf(",\"test_acc\":");
        if (ds->n_test > 0) printf("%.6f}\n", acc[2]);
        else printf("null}\n");
    } else {
        char va[32] = "", ta[16];
        if (ds->n_val > 0) snprintf(va, sizeof va, "  val %.4f", acc[1]);
        const char *note = ds->n_val ? (ds->n_test ? "" : " (no test split)")
                                     : (ds->n_test ? " (no validation split)" : " (no validation or test split)");
        fprintf(stderr, "lipgnn predict: %s after %ld epochs: train %.4f%s  test %s%s\n", ds->name,
                lg_trainer_epochs_done(t), acc[0], va, lg_cli_acc(ta, sizeof ta, acc[2], ds->n_test > 0), note);
    }
done:
    free(logp);
    free(hid);
    free(w);
    lg_trainer_free(t);
    lg_dataset_free(ds);
    return status;
}
