/* Opt-in pass timers (core/passtime.h); empty unless LG_PASS_TIMES. */
#include "core/passtime.h"

#ifdef LG_PASS_TIMES
#include <omp.h>

static const char *const lg__pass_names[LG__PASS_COUNT] = {
    "gat_fwd_gemm", "gat_fwd_rows", "gat_bwd_check", "gat_bwd_b1",
    "gat_bwd_b2",   "gat_bwd_b3",   "gat_bwd_tail", "gt_fwd_gemm",
    "gt_fwd_rows",  "gt_bwd_check", "gt_bwd_b1",    "gt_bwd_b2",    "gt_bwd_tail"};
static double lg__pass_s[2][LG__PASS_COUNT], lg__pass_last;
static long lg__pass_n[2][LG__PASS_COUNT];
static int lg__pass_on;

void lg__pass_times_enable(int on) { lg__pass_on = on; }

void lg__pass_mark(int pass) {
    if (!lg__pass_on) return;
    const double t = omp_get_wtime();
    if (pass >= 0 && pass < LG__PASS_COUNT) {
        const int b = omp_get_max_threads() > 1;
        lg__pass_s[b][pass] += t - lg__pass_last;
        lg__pass_n[b][pass]++;
    }
    lg__pass_last = t;
}

void lg__pass_times_report(FILE *f) {
    for (int k = 0; k < LG__PASS_COUNT; k++) {
        if (!lg__pass_n[0][k] && !lg__pass_n[1][k]) continue;
        double us1 = lg__pass_n[0][k] ? 1e6 * lg__pass_s[0][k] / (double)lg__pass_n[0][k] : 0;
        double usT = lg__pass_n[1][k] ? 1e6 * lg__pass_s[1][k] / (double)lg__pass_n[1][k] : 0;
        fprintf(f, "{\"bench\":\"passes\",\"pass\":\"%s\",\"calls_1\":%ld,\"us_1\":%.1f,\"calls_T\":%ld,\"us_T\":%.1f,"
                   "\"speedup\":%.3f}\n",
                lg__pass_names[k], lg__pass_n[0][k], us1, lg__pass_n[1][k], usT, usT > 0 ? us1 / usT : 0.0);
    }
}
#else
typedef int lg__passtime_empty; /* ISO C: a translation unit is not empty */
#endif
