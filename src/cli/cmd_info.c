/* lipgnn info: describe a data set. */
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"

static const char lg__info_help[] =
    "Usage: lipgnn info (--data DIR | --dataset NAME | --trees DEPTH | --sbm N[,M]) [--json]\n"
    "Prints nodes, directed edges, features, classes, split sizes, degree statistics,\n"
    "isolated nodes and the memory of a data set.\n"
    "\n"
    "  --json              print one JSON object instead of text\n"
    "  -h, --help          this help\n"
    "\n";

static void lg__info_text(const lg_dataset *ds, const lg_graph_stats *gs) {
    const lg_features *f = ds->features;
    printf("data set      %s\n", ds->name);
    printf("nodes         %lld\n", (long long)gs->n);
    printf("edges         %lld directed (%s, %lld self-loops)\n", (long long)gs->edges,
           gs->symmetric ? "symmetric" : "not symmetric", (long long)gs->self_loops);
    printf("features      %lld (%s, %lld stored values, %.2f%% dense)\n", (long long)f->d,
           f->kind == LG_FEAT_SPARSE ? "sparse" : "dense", (long long)f->nnz,
           f->n && f->d ? 100.0 * (double)f->nnz / ((double)f->n * (double)f->d) : 0.0);
    printf("classes       %d\n", ds->n_classes);
    printf("split         train %lld / val %lld / test %lld\n", (long long)ds->n_train,
           (long long)ds->n_val, (long long)ds->n_test);
    printf("in-degree     min %lld, max %lld, mean %.3f (self-loops excluded)\n", (long long)gs->in_min,
           (long long)gs->in_max, gs->in_mean);
    printf("out-degree    min %lld, max %lld\n", (long long)gs->out_min, (long long)gs->out_max);
    printf("isolated      %lld\n", (long long)gs->isolated);
    if (ds->n_graphs > 1)
        printf("graphs        %lld (disjoint union, %lld nodes each)\n", (long long)ds->n_graphs,
               (long long)(ds->graph_ptr[1] - ds->graph_ptr[0]));
    printf("memory        %.2f MiB (graph, features, labels, splits)\n", lg_dataset_bytes(ds) / 1048576.0);
}

static void lg__info_json(const lg_dataset *ds, const lg_graph_stats *gs) {
    const lg_features *f = ds->features;
    printf("{\"dataset\":");
    lg_json_string(stdout, ds->name);
    printf(",\"nodes\":%lld,\"edges\":%lld,\"self_loops\":%lld,\"symmetric\":%s", (long long)gs->n,
           (long long)gs->edges, (long long)gs->self_loops, gs->symmetric ? "true" : "false");
    printf(",\"features\":%lld,\"features_sparse\":%s,\"features_nnz\":%lld", (long long)f->d,
           f->kind == LG_FEAT_SPARSE ? "true" : "false", (long long)f->nnz);
    printf(",\"classes\":%d,\"train\":%lld,\"val\":%lld,\"test\":%lld", ds->n_classes,
           (long long)ds->n_train, (long long)ds->n_val, (long long)ds->n_test);
    printf(",\"in_degree_min\":%lld,\"in_degree_max\":%lld,\"in_degree_mean\":%.6g", (long long)gs->in_min,
           (long long)gs->in_max, gs->in_mean);
    printf(",\"out_degree_min\":%lld,\"out_degree_max\":%lld,\"isolated\":%lld,\"graphs\":%lld,\"bytes\":%zu}\n",
           (long long)gs->out_min, (long long)gs->out_max, (long long)gs->isolated, (long long)ds->n_graphs,
           lg_dataset_bytes(ds));
}

int lg_cmd_info(int argc, char **argv) {
    static const struct option opts[] = {
        {"data", required_argument, 0, 0},     {"dataset", required_argument, 0, 0},
        {"trees", required_argument, 0, 0},    {"trees-count", required_argument, 0, 0}, {"sbm", required_argument, 0, 0},
        {"seed", required_argument, 0, 0},     {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0},
    };
    lg_cli_data d = {0};
    int json = 0, c, idx;
    optind = 0; /* glibc: a full restart (1 would keep a half-read "-xy" group of an earlier parse) */
    opterr = 0;
    while ((c = lg_cli_getopt("info", argc, argv, opts, &idx, NULL)) != -1) {
        if (c == 'h') { fputs(lg__info_help, stdout); fputs(lg_cli_data_help, stdout); return LG_EXIT_OK; }
        if (c == 'j') { json = 1; continue; }
        if (c == 0) {
            if (lg_cli_data_option("info", &d, opts[idx].name, optarg) < 0) return LG_EXIT_USAGE;
            continue;
        }
        return LG_EXIT_USAGE; /* '?': lg_cli_getopt printed the error */
    }
    if (optind < argc) {
        lg_cli_errorf("info", "unexpected argument '%s'", argv[optind]);
        return LG_EXIT_USAGE;
    }
    if (lg_cli_data_check("info", &d)) return LG_EXIT_USAGE;
    lg_dataset *ds = NULL;
    int rc = lg_cli_data_load("info", &d, 0, &ds);
    if (rc) return rc;
    lg_graph_stats gs;
    lg_status st = lg_graph_stats_compute(ds->graph, &gs);
    if (st != LG_OK) {
        lg_cli_errorf("info", "%s", lg_last_error());
        lg_dataset_free(ds);
        return lg_cli_exit_for(st);
    }
    if (json) lg__info_json(ds, &gs);
    else lg__info_text(ds, &gs);
    lg_dataset_free(ds);
    return LG_EXIT_OK;
}
