/* LD_PRELOAD shim for the CLI test of the OpenBLAS fix: OpenBLAS reports the
 * core type named by $LG_FAKE_CORENAME (as Debian's 0.3.21 reports "Prescott"
 * on AVX-512 CPUs it does not know), unless OPENBLAS_CORETYPE is set, in which
 * case it reports that, as the real library does. */
#include <stdlib.h>

char *openblas_get_corename(void);

char *openblas_get_corename(void) {
    char *set = getenv("OPENBLAS_CORETYPE");
    if (set && *set) return set;
    char *fake = getenv("LG_FAKE_CORENAME");
    return fake ? fake : (char *)"Prescott";
}
