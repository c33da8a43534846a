/*
 * libFuzzer harness of the checkpoint reader (src/train/checkpoint.c) and of
 * what `lipgnn predict --resume` and `train --resume` do with a checkpoint:
 * read its note and configurations, build the model it describes (when the
 * estimate is small), restore it, and run an epoch and a prediction.
 *
 * Input: one mode byte, then the file. Mode bit 0 set: the harness rewrites the
 * file's last 8 bytes with the right checksum first, so that the fuzzer gets
 * past the checksum into the sections and what the trainer does with them (a
 * checksum only stops accidents, not a crafted file).
 * Data: TREES depth 2, 4 trees, seed 0 (= lipgnn train --trees 2
 * --trees-count 4), so that the seed checkpoints of tests/fuzz/corpus/checkpoint
 * match it and get restored.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lipgnn.h"
#include "train/checkpoint.h"
#include "fuzz_util.h"

/* Models larger than this are not built (the CLI would refuse them against
 * the machine's memory; here they would only slow the fuzzer down). */
#define LG__MAX_BYTES (32u << 20)

static lg_dataset *lg__data(void) {
    static lg_dataset *ds;
    if (!ds) {
        lg_set_threads(1);
        lg_trees_opts o;
        lg_trees_opts_default(&o);
        o.depth = 2;
        o.count = 4;
        o.seed = 0;
        if (lg_trees_generate(&ds, &o) != LG_OK) {
            fprintf(stderr, "fuzz_checkpoint: %s\n", lg_last_error());
            abort();
        }
    }
    return ds;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const lg_dataset *ds = lg__data();
    if (size < 1) return 0;
    unsigned mode = data[0];
    size_t n = size - 1;
    unsigned char *buf = malloc(n ? n : 1);
    if (!buf) return 0;
    memcpy(buf, data + 1, n);
    if ((mode & 1) && n >= 8) {
        uint64_t h = lg__fnv1a(LG_FNV_START, buf, n - 8);
        for (int k = 0; k < 8; k++) buf[n - 8 + k] = (unsigned char)(h >> (8 * k));
    }
    const char *path = lg_fuzz_write("m.ckpt", buf, n);
    free(buf);

    /* the container */
    lg_ckpt *c = NULL;
    lg_status st = lg__ckpt_load(&c, path);
    if (st == LG_OK) {
        for (uint32_t s = 0; s < c->count; s++) {
            const unsigned char *b = c->sections[s].data;
            LG_FUZZ_REQUIRE(b >= c->blob && b + c->sections[s].length <= c->blob + n - 8);
        }
        lg__ckpt_free(c);
    } else {
        LG_FUZZ_REQUIRE(c == NULL && lg_last_error()[0] != 0);
    }

    /* its note (train's data options, which predict and train --resume take
     * when given none): text of the length said, or an error and "" */
    char note[256];
    size_t nlen = 0;
    st = lg_checkpoint_note(path, note, sizeof note, &nlen);
    if (st == LG_OK) LG_FUZZ_REQUIRE(nlen < sizeof note && strlen(note) == nlen);
    else LG_FUZZ_REQUIRE(note[0] == 0 && lg_last_error()[0] != 0 && (st != LG_ERANGE || nlen >= sizeof note));

    /* what predict and train --resume do with it */
    lg_model_config mc;
    lg_train_config tc;
    st = lg_checkpoint_config(path, &mc, &tc);
    if (st != LG_OK) {
        LG_FUZZ_REQUIRE(lg_last_error()[0] != 0);
        return 0;
    }
    LG_FUZZ_REQUIRE(lg_model_config_check(&mc) == LG_OK);
    lg_trainer_mem est;
    if (lg_trainer_estimate(&mc, &tc, ds, &est) != LG_OK || est.total > LG__MAX_BYTES) return 0;
    lg_trainer *t = NULL;
    st = lg_trainer_init(&t, &mc, &tc, ds);
    if (st != LG_OK) {
        LG_FUZZ_REQUIRE(t == NULL && lg_last_error()[0] != 0);
        return 0;
    }
    st = lg_trainer_load(t, path);
    if (st == LG_OK) {
        lg_idx nn = ds->graph->n, C = lg_trainer_classes(t);
        float *logp = malloc(sizeof(float) * (size_t)(nn * C));
        if (logp) {
            /* a restored model's predictions are log-probabilities, or an error */
            lg_status ps = lg_trainer_predict(t, logp, NULL);
            if (ps == LG_OK)
                for (lg_idx k = 0; k < nn * C; k++) LG_FUZZ_REQUIRE(isfinite(logp[k]) || logp[k] == -INFINITY);
            else
                LG_FUZZ_REQUIRE(ps == LG_ENUMERIC && lg_last_error()[0] != 0);
        }
        free(logp);
        lg_train_summary sum;
        lg_trainer_summary(t, &sum);
        LG_FUZZ_REQUIRE(sum.epochs_run >= 0);
        lg_epoch_stats es;
        if (!lg_trainer_done(t)) (void)lg_trainer_epoch(t, &es);
        lg_trainer_summary(t, &sum);
    } else {
        LG_FUZZ_REQUIRE(lg_last_error()[0] != 0);
    }
    lg_trainer_free(t);
    return 0;
}
