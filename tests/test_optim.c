/* Tests of Adam (against a double-precision transcription of PyTorch's
 * update) and of the explosion detector. */
#include <math.h>
#include <omp.h>
#include <string.h>

#include "testutil.h"
#include "train/optim.h"

static void test_adam_matches_reference(void **state) {
    (void)state;
    enum { N = 1000 };
    static float p[N], g[N], m[N], v[N];
    static double pr[N], mr[N], vr[N];
    lg_rng r;
    lg_rng_seed(&r, 1);
    for (int k = 0; k < N; k++) { p[k] = (float)(lg_rng_double(&r) * 2 - 1); pr[k] = p[k]; }
    lg_adam a = {0.005, 0.9, 0.999, 1e-8, 5e-4};
    for (long t = 1; t <= 50; t++) {
        for (int k = 0; k < N; k++) g[k] = (float)(lg_rng_double(&r) - 0.5) * (k % 7 == 0 ? 1e-6f : 1.0f);
        lg__adam_step(&a, t, p, g, m, v, N);
        for (int k = 0; k < N; k++) {
            double gg = g[k] + a.weight_decay * pr[k];
            mr[k] = a.beta1 * mr[k] + (1 - a.beta1) * gg;
            vr[k] = a.beta2 * vr[k] + (1 - a.beta2) * gg * gg;
            double mh = mr[k] / (1 - pow(a.beta1, (double)t)), vh = vr[k] / (1 - pow(a.beta2, (double)t));
            pr[k] -= a.lr * mh / (sqrt(vh) + a.eps);
        }
    }
    for (int k = 0; k < N; k++) assert_true(fabs(p[k] - pr[k]) < 1e-5 * (1 + fabs(pr[k])));
}

static void test_adam_thread_invariant(void **state) {
    (void)state;
    enum { N = 100003 };
    static float p1[N], p2[N], g[N], m1[N], v1[N], m2[N], v2[N];
    for (int k = 0; k < N; k++) { p1[k] = p2[k] = (float)sin(k); g[k] = (float)cos(3.0 * k); }
    lg_adam a = {0.01, 0.9, 0.999, 1e-8, 5e-4};
    omp_set_num_threads(1);
    for (long t = 1; t <= 3; t++) lg__adam_step(&a, t, p1, g, m1, v1, N);
    omp_set_num_threads(2);
    for (long t = 1; t <= 3; t++) lg__adam_step(&a, t, p2, g, m2, v2, N);
    assert_memory_equal(p1, p2, sizeof p1);
    assert_memory_equal(v1, v2, sizeof v1);
}

/* Every instruction-set variant of Adam gives the bits of the update written
 * out in scalar float (the order of optim.h's formula), over a length that
 * spans chunks and ends inside a vector, with tiny and zero gradients (the eps
 * region) and a NaN gradient that must stay in its own element. */
static void test_adam_isa_variants_bitwise(void **state) {
    (void)state;
    enum { N = 100003 };
    static float p[N], g[N], m[N], v[N], pr[N], mr[N], vr[N];
    const char *isa[3] = {"baseline", "avx2", "avx512"};
    const lg_adam a = {0.005, 0.9, 0.999, 1e-8, 5e-4};
    int compared = 0;
    for (int i = 0; i < 3; i++) {
        if (lg_set_kernel_isa(isa[i]) != LG_OK) continue;
        for (int k = 0; k < N; k++) {
            pr[k] = p[k] = (float)sin(0.37 * k);
            mr[k] = m[k] = vr[k] = v[k] = 0;
        }
        for (long t = 1; t <= 3; t++) {
            for (int k = 0; k < N; k++) g[k] = k % 5 == 0 ? 0.0f : (float)cos(1.3 * k + t) * (k % 7 == 0 ? 1e-9f : 1.0f);
            g[12345] = NAN;
            lg__adam_step(&a, t, p, g, m, v, N);
            const double bc1 = 1.0 - pow(a.beta1, (double)t), bc2 = 1.0 - pow(a.beta2, (double)t);
            const float step = (float)(a.lr / bc1), rbc2 = (float)(1.0 / sqrt(bc2));
            const float b1 = (float)a.beta1, b2 = (float)a.beta2, eps = (float)a.eps, wd = (float)a.weight_decay;
            for (int k = 0; k < N; k++) {
                float gg = g[k] + wd * pr[k];
                mr[k] = b1 * mr[k] + (1.0f - b1) * gg;
                vr[k] = b2 * vr[k] + (1.0f - b2) * gg * gg;
                pr[k] -= step * mr[k] / (sqrtf(vr[k]) * rbc2 + eps);
            }
        }
        assert_memory_equal(p, pr, sizeof p);
        assert_memory_equal(m, mr, sizeof m);
        assert_memory_equal(v, vr, sizeof v);
        assert_true(isnan(p[12345]) && !isnan(p[12344]) && !isnan(p[12346]));
        compared++;
    }
    assert_ok(lg_set_kernel_isa("auto"));
    assert_true(compared >= 1);
    if (compared < 3) print_message("test_adam_isa_variants_bitwise: %d of 3 variants run on this CPU\n", compared);
}

/* Threshold 1e3, growth 100 over 5 epochs. */
static const lg_explode_opts explode_opts = {1e3, 100, 5};

/* A detector of 2 layers (explode_opts) fed epochs 0..19 with both layers'
 * norms at v, none of which fires. */
static void explode_steady(lg_explode *d, double n[2], double v) {
    assert_ok(lg__explode_init(d, 2, &explode_opts));
    n[0] = n[1] = v;
    for (long e = 0; e < 20; e++) assert_int_equal(lg__explode_observe(d, e, 1.0, -1, n), 0);
}

static void test_explode(void **state) {
    (void)state;
    lg_explode d;
    double n[2];
    explode_steady(&d, n, 1);
    n[1] = 999;
    assert_int_equal(lg__explode_observe(&d, 20, 1.0, -1, n), 1); /* 999x growth in 5 epochs */
    assert_int_equal(d.epoch, 20);
    assert_int_equal(d.layer, 1);
    assert_non_null(strstr(d.reason, "grew"));
    n[0] = INFINITY;
    assert_int_equal(lg__explode_observe(&d, 21, 1.0, -1, n), 0); /* reported once */
    lg__explode_destroy(&d);

    assert_ok(lg__explode_init(&d, 2, &explode_opts));
    n[0] = 1; n[1] = 1;
    assert_int_equal(lg__explode_observe(&d, 0, 1.0, -1, n), 0);
    n[0] = 2e3; /* above the threshold */
    assert_int_equal(lg__explode_observe(&d, 1, 1.0, -1, n), 1);
    assert_int_equal(d.layer, 0);
    lg__explode_destroy(&d);

    /* several layers above the threshold: the largest is named, with their count (the lowest was) */
    assert_ok(lg__explode_init(&d, 4, &explode_opts));
    double m4[4] = {2e3, 1, 5e3, 3e3};
    assert_int_equal(lg__explode_observe(&d, 0, 1.0, -1, m4), 1);
    assert_int_equal(d.layer, 2);
    assert_string_equal(d.reason, "gradient norm of layer 2 is 5e+03 > threshold 1e+03 (the largest of 3 layers above it)");
    lg__explode_destroy(&d);
    /* a norm that is not finite comes before one above the threshold, whatever their layers */
    assert_ok(lg__explode_init(&d, 4, &explode_opts));
    m4[3] = INFINITY;
    assert_int_equal(lg__explode_observe(&d, 0, 1.0, -1, m4), 1);
    assert_int_equal(d.layer, 3);
    assert_string_equal(d.reason, "gradient norm of layer 3 is not finite (inf)");
    lg__explode_destroy(&d);

    assert_ok(lg__explode_init(&d, 2, &explode_opts));
    n[0] = 1;
    assert_int_equal(lg__explode_observe(&d, 0, -NAN, -1, n), 1);
    assert_int_equal(d.layer, -1);
    assert_string_equal(d.reason, "loss is nan"); /* not "-nan" */
    lg__explode_destroy(&d);
    /* a gradient norm that is not finite, the loss finite */
    assert_ok(lg__explode_init(&d, 2, &explode_opts));
    n[0] = 1; n[1] = -NAN;
    assert_int_equal(lg__explode_observe(&d, 0, 1.0, -1, n), 1);
    assert_int_equal(d.layer, 1);
    assert_string_equal(d.reason, "gradient norm of layer 1 is not finite (nan)");
    lg__explode_destroy(&d);
    /* a non-finite loss traced to layer 1: reported with that layer */
    n[1] = 1;
    assert_ok(lg__explode_init(&d, 2, &explode_opts));
    assert_int_equal(lg__explode_observe(&d, 0, 1.0, -1, n), 0);
    assert_int_equal(lg__explode_observe(&d, 1, INFINITY, 1, n), 1);
    assert_int_equal(d.epoch, 1);
    assert_int_equal(d.layer, 1);
    assert_string_equal(d.reason, "loss is inf: the output of layer 1 is the first not finite");
    lg__explode_destroy(&d);

    assert_ok(lg__explode_init(&d, 1, &explode_opts));
    double slow = 1; /* slow steady growth, 2x per window: never flagged */
    for (long e = 0; e < 40; e++, slow *= pow(2.0, 1.0 / 5)) assert_int_equal(lg__explode_observe(&d, e, 1.0, -1, &slow), 0);
    lg__explode_destroy(&d);

    /* growth from vanishing gradients (below threshold / growth = 10 when it
     * ends) is not an explosion; the same growth ending at 11 is */
    assert_ok(lg__explode_init(&d, 1, &explode_opts));
    double tiny = 3e-25;
    for (long e = 0; e < 20; e++, tiny *= 10) /* up to 3e-6 */
        assert_int_equal(lg__explode_observe(&d, e, 1.0, -1, &tiny), 0);
    lg__explode_destroy(&d);
    assert_ok(lg__explode_init(&d, 1, &explode_opts));
    double x = 0.1;
    for (long e = 0; e < 5; e++) assert_int_equal(lg__explode_observe(&d, e, 1.0, -1, &x), 0);
    x = 9.9; /* 99x: not enough growth */
    assert_int_equal(lg__explode_observe(&d, 5, 1.0, -1, &x), 0);
    x = 11; /* 110x to 11 >= 10 */
    assert_int_equal(lg__explode_observe(&d, 6, 1.0, -1, &x), 1);
    assert_non_null(strstr(d.reason, "grew"));
    lg__explode_destroy(&d);

    lg_explode_opts bad = {0, 100, 5};
    assert_int_equal(lg__explode_init(&d, 1, &bad), LG_EINVAL);
    bad.threshold = 1;
    bad.growth = 1;
    assert_int_equal(lg__explode_init(&d, 1, &bad), LG_EINVAL);
}

/* The threshold is strict ("above this is an explosion"): a norm exactly at
 * it is not flagged, nor counted among the layers above it; the next double
 * up is. (>= flagged a norm sitting at the threshold, e.g. a clipped one.) */
static void test_explode_threshold_strict(void **state) {
    (void)state;
    lg_explode d;
    double n[2];
    explode_steady(&d, n, 1e3);
    assert_int_equal(d.fired, 0);
    n[1] = nextafter(1e3, INFINITY);
    assert_int_equal(lg__explode_observe(&d, 20, 1.0, -1, n), 1);
    assert_int_equal(d.epoch, 20);
    assert_int_equal(d.layer, 1);
    /* one layer above it (layer 0, at the threshold, is not counted) */
    assert_string_equal(d.reason, "gradient norm of layer 1 is 1e+03 > threshold 1e+03");
    lg__explode_destroy(&d);
}

/* Growth is measured against the norm exactly `window` epochs earlier
 * (optim.h, train.h's explode_window), not window - 1: with window 5, a jump
 * that is more than the growth factor over 5 epochs but not over 4 is
 * flagged, and one that is over 4 epochs but not over 5 is not (until the
 * 5-epoch comparison sees it, one epoch later). The second case runs after
 * the history ring (window + 1 rows) has wrapped. */
static void test_explode_window_exact(void **state) {
    (void)state;
    lg_explode d;
    lg_explode_opts o = {1e3, 100, 5}; /* growth counts from threshold / growth = 10 */
    double x;
    assert_ok(lg__explode_init(&d, 1, &o));
    x = 1;
    assert_int_equal(lg__explode_observe(&d, 0, 1.0, -1, &x), 0);
    x = 10;
    for (long e = 1; e < 5; e++) assert_int_equal(lg__explode_observe(&d, e, 1.0, -1, &x), 0);
    x = 500; /* 500x against epoch 0 (5 earlier), 50x against epoch 1 (4 earlier) */
    assert_int_equal(lg__explode_observe(&d, 5, 1.0, -1, &x), 1);
    assert_int_equal(d.epoch, 5);
    assert_int_equal(d.layer, 0);
    assert_string_equal(d.reason, "gradient norm of layer 0 grew 500x in 5 epochs (1 -> 500)");
    lg__explode_destroy(&d);

    assert_ok(lg__explode_init(&d, 1, &o));
    x = 10;
    for (long e = 0; e < 10; e++) assert_int_equal(lg__explode_observe(&d, e, 1.0, -1, &x), 0);
    x = 1;
    for (long e = 10; e < 14; e++) assert_int_equal(lg__explode_observe(&d, e, 1.0, -1, &x), 0);
    x = 500; /* 50x against epoch 9 (5 earlier): not flagged; 500x against epoch 10 is only 4 earlier */
    assert_int_equal(lg__explode_observe(&d, 14, 1.0, -1, &x), 0);
    assert_int_equal(d.fired, 0);
    /* one epoch later epoch 10 is 5 earlier: 500x */
    assert_int_equal(lg__explode_observe(&d, 15, 1.0, -1, &x), 1);
    assert_int_equal(d.epoch, 15);
    assert_string_equal(d.reason, "gradient norm of layer 0 grew 500x in 5 epochs (1 -> 500)");
    lg__explode_destroy(&d);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adam_matches_reference),
        cmocka_unit_test(test_adam_thread_invariant),
        cmocka_unit_test(test_adam_isa_variants_bitwise),
        cmocka_unit_test(test_explode),
        cmocka_unit_test(test_explode_threshold_strict),
        cmocka_unit_test(test_explode_window_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
