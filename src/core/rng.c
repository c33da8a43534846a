/* Seeded random numbers: xoshiro256** (Blackman & Vigna 2018) seeded through
 * splitmix64, and splitmix64's finaliser as a stateless hash. */
#include "core/internal.h"

uint64_t lg_hash64(uint64_t z) { return lg__hash64(z); }

void lg_rng_seed(lg_rng *rng, uint64_t seed) {
    if (!rng) return;
    uint64_t x = seed;
    for (int k = 0; k < 4; k++) {
        rng->s[k] = lg_hash64(x);
        x += 0x9e3779b97f4a7c15ULL;
    }
}

static inline uint64_t lg__rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t lg_rng_next(lg_rng *rng) {
    uint64_t *s = rng->s;
    const uint64_t result = lg__rotl(s[1] * 5, 7) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = lg__rotl(s[3], 45);
    return result;
}

float lg_rng_float(lg_rng *rng) { return (float)(lg_rng_next(rng) >> 40) * 0x1.0p-24f; }

double lg_rng_double(lg_rng *rng) { return (double)(lg_rng_next(rng) >> 11) * 0x1.0p-53; }

uint64_t lg_rng_below(lg_rng *rng, uint64_t n) {
    if (n == 0) return 0; /* (outside the contract: no draw in an empty range) */
    /* Reject the top partial range so every value is equally likely. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do x = lg_rng_next(rng); while (x >= limit);
    return x % n;
}

void lg_rng_shuffle(lg_rng *rng, lg_idx *v, lg_idx n) {
    for (lg_idx i = n - 1; i > 0; i--) {
        lg_idx j = (lg_idx)lg_rng_below(rng, (uint64_t)i + 1);
        lg_idx t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}
