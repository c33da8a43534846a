/*
 * libFuzzer harness of the CLI option parsers of `lipgnn train` (also used by
 * demo) and `lipgnn depth-study` (its grid lists, then every model's train
 * options): lg_cli_train_parse and lg_cli_depth_parse on an argv built from
 * the input, without loading data or training.
 *
 * Input: the arguments, one a line (at most 200). If the first line is
 * "depth-study" it is argv[0] for depth-study; otherwise argv[0] is "train".
 * Every argv must be refused with a message, print the help, or give options
 * that the library accepts. The parser must hold no state between calls: after
 * each input, a fixed argv must parse to the same options as at the start.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "fuzz_util.h"

enum { LG__MAXARGS = 200 };

static int lg__reference(lg_train_opts *o) {
    char a0[] = "train", a1[] = "--trees", a2[] = "3", a3[] = "--layers=4", a4[] = "--norm", a5[] = "lipschitz";
    char *argv[] = {a0, a1, a2, a3, a4, a5, NULL};
    return lg_cli_train_parse("train", 6, argv, o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static lg_train_opts ref;
    static int have_ref;
    if (!have_ref) {
        LG_FUZZ_REQUIRE(lg__reference(&ref) == 0);
        have_ref = 1;
    }
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    char *argv[LG__MAXARGS + 2];
    int argc = 0;
    argv[argc++] = "train";
    char *start = text;
    int depth = size >= 12 && !memcmp(text, "depth-study\n", 12);
    if (depth) {
        argv[0] = "depth-study";
        start = text + 12;
    }
    for (char *p = start; argc <= LG__MAXARGS;) {
        char *nl = memchr(p, '\n', (size_t)(text + size - p));
        if (nl) *nl = 0;
        if (p < text + size || nl) argv[argc++] = p;
        if (!nl) break;
        p = nl + 1;
    }
    argv[argc] = NULL;

    lg_train_opts o;
    if (depth) {
        int st = lg_cli_depth_parse(argc, argv);
        LG_FUZZ_REQUIRE(st == 0 || st == 1 || st == 2);
        goto again;
    }
    int rc = lg_cli_train_parse("train", argc, argv, &o);
    LG_FUZZ_REQUIRE(rc == -1 || rc == 0 || rc == 1);
    if (rc == 0) {
        LG_FUZZ_REQUIRE(lg_model_config_check(&o.mc) == LG_OK);
        LG_FUZZ_REQUIRE(lg_train_config_check(&o.tc) == LG_OK);
        /* the data sources, restated here as an independent oracle of
         * lg_cli_data_check: a new source must be added to both */
        int sources = (o.data.data != NULL) + (o.data.dataset != NULL) + (o.data.trees != 0) + (o.data.sbm_nodes != 0);
        LG_FUZZ_REQUIRE(sources == 1);
        LG_FUZZ_REQUIRE(o.data.trees == 0 || (o.data.trees >= 2 && o.data.trees <= 10));
        LG_FUZZ_REQUIRE(o.threads >= 0 && o.max_memory >= 0);
    }
again:
    free(text);

    /* no state carried over from that input */
    lg_train_opts again;
    LG_FUZZ_REQUIRE(lg__reference(&again) == 0);
    LG_FUZZ_REQUIRE(again.mc.layers == ref.mc.layers && again.mc.att_norm == ref.mc.att_norm &&
                    again.data.trees == ref.data.trees && again.mc.kind == ref.mc.kind &&
                    again.tc.epochs == ref.tc.epochs && again.mc.hidden == ref.mc.hidden);
    return 0;
}
