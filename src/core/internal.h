/*
 * Internal helpers shared by every module: allocation through the hook, error
 * reporting and the CHECK macros. Not installed; names carry the lg__ prefix.
 */
#ifndef LG_CORE_INTERNAL_H
#define LG_CORE_INTERNAL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "lipgnn.h"

/* Allocation through the hook (lg_set_allocator). lg__malloc_array and
 * lg__calloc_array return NULL on count*size overflow; lg__free(NULL) is a
 * no-op. None of them sets an error message: callers say what failed. */
void *lg__malloc(size_t size);
void *lg__calloc(size_t count, size_t size);
void *lg__realloc(void *ptr, size_t size);
void *lg__malloc_array(size_t count, size_t size);
void lg__free(void *ptr);
/* Gives the C library's free heap memory back to the system (glibc's
 * malloc_trim; nothing elsewhere). Large stages freed in a set-up (a
 * generator's or a loader's) otherwise stay resident as holes in the heap
 * below the next one, which then takes new pages: the peak the estimates
 * (lg_sbm_estimate, lg_dataset_load_estimate) follow would be exceeded.
 * Set-up code only: O(heap). */
void lg__heap_trim(void);

/* Records a printf-style message as the thread's last error and returns s, so
 * that `return lg__error(LG_EPARSE, "%s:%ld: ...", file, line);` reads well. */
lg_status lg__error(lg_status s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Opens the regular file at path for reading: *fp (to fclose), its length in
 * *len. Anything else (missing, a directory, a FIFO, a device) is LG_EIO
 * naming path, what (e.g. "checkpoint", or NULL) and the reason, *fp NULL; a
 * FIFO is refused at once, not waited on. O(1). */
lg_status lg__file_open_regular(const char *path, const char *what, FILE **fp, size_t *len);

/* 0 if a new file can be made in the directory dir, else the errno that
 * says why not (ENOTDIR, ENOENT, EACCES, EROFS, ...): found by creating an
 * empty probe file there (O_EXCL, a name of this process's) and removing it
 * at once, which access() cannot tell as root (/proc, /sys). O(1). */
int lg__dir_probe(const char *dir);

/* Records "out of memory: <what>" and returns LG_ENOMEM. */
lg_status lg__nomem(const char *what);

/* LG_OK if the OpenBLAS core type loaded in this process runs on this CPU
 * (lg_blas_info.unsupported is 0), else LG_EUNSUPPORTED with a message that
 * names fn, the core type and the remedy, so that an OPENBLAS_CORETYPE naming
 * kernels this CPU cannot execute ends in an error, not in SIGILL. O(1) after
 * the first call. */
lg_status lg__blas_core_usable(const char *fn);

/* Address space that OpenBLAS takes for each thread that runs one of its
 * dense products: a working buffer (BUFFER_SIZE, 128 MiB on x86-64 in
 * 0.3.21, plus a page; 64 KiB allowed), mapped on the thread's first product
 * and kept until the process ends, touched only as far as the product needs. */
#define LG__BLAS_BUFFER_BYTES (((size_t)128 << 20) + ((size_t)64 << 10))

/* LG_OK if the process can still map the OpenBLAS buffers
 * (LG__BLAS_BUFFER_BYTES each) of omp_get_max_threads() threads, else
 * LG_ENOMEM naming fn, the limit that stops it (ulimit -v, RLIMIT_AS; ulimit
 * -d, RLIMIT_DATA; or the system's, as with vm.overcommit_memory=2) and the
 * remedy. OpenBLAS before 0.3.30 retries a buffer it cannot map forever
 * (OpenBLAS issue 5289: the process hangs, one core busy); since then it ends
 * the process. Checked by starting the OpenMP team (so its stacks are
 * mapped), mapping that many buffers, untouched, and unmapping them: the
 * first time, and whenever the thread count grows beyond the count found to
 * fit (the buffers of the threads found before counted as taken); O(1)
 * otherwise. Called right before dense products, after the allocations
 * that precede them. */
lg_status lg__blas_room(const char *fn);

/* lg__blas_core_usable, then lg__blas_room: called at the entries of every
 * operation that makes dense products. */
lg_status lg__blas_usable(const char *fn);

/* 1 if this CPU (CPUID) has the instructions that OpenBLAS's core type name
 * (any case) executes, 0 if it lacks them (OpenBLAS 0.3.21 takes an
 * OPENBLAS_CORETYPE without checking: its first dense product then stops the
 * process with SIGILL), 1 for a name not listed (OpenBLAS's x86-64 types from
 * Prescott to Cooperlake, and Zen and the FMA4 families, are). */
int lg__blas_core_runs(const char *name);

/* Propagate a failing status to the caller. */
#define LG_CHECK(expr)                                                         \
    do {                                                                       \
        lg_status lg__s_ = (expr);                                             \
        if (lg__s_ != LG_OK) return lg__s_;                                    \
    } while (0)

/* Propagate a failing status through a cleanup label: needs `lg_status st`
 * and a `fail:` label in scope. */
#define LG_TRY(expr)                                                           \
    do {                                                                       \
        st = (expr);                                                           \
        if (st != LG_OK) goto fail;                                            \
    } while (0)

/* Allocate n elements of *p into p, or go to fail with LG_ENOMEM. */
#define LG_ALLOC(p, n, what)                                                   \
    do {                                                                       \
        (p) = lg__malloc_array((size_t)(n) ? (size_t)(n) : 1, sizeof *(p));    \
        if (!(p)) { st = lg__nomem(what); goto fail; }                         \
    } while (0)

#define LG_CALLOC(p, n, what)                                                  \
    do {                                                                       \
        (p) = lg__calloc((size_t)(n) ? (size_t)(n) : 1, sizeof *(p));          \
        if (!(p)) { st = lg__nomem(what); goto fail; }                         \
    } while (0)

/* splitmix64's finaliser, inline for the per-element masks of the kernels;
 * lg_hash64 (lipgnn/core.h) is the same function. */
static inline uint64_t lg__hash64(uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A caller's name for messages: a data set made by hand may leave it NULL. */
static inline const char *lg__name(const char *s) { return s ? s : "(unnamed)"; }

/* 1 if the byte ranges [a, a + abytes) and [b, b + bbytes) overlap (an empty
 * range overlaps nothing). O(1): the argument checks of the public functions
 * whose arrays must not alias. */
static inline int lg__overlap(const void *a, size_t abytes, const void *b, size_t bbytes) {
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return abytes > 0 && bbytes > 0 && x < y + bbytes && y < x + abytes;
}

/* The argument check of two arrays that must not alias (a of abytes bytes,
 * named an; b likewise): LG_EINVAL "fn: an and bn overlap" if their bytes do
 * (lg__overlap), else LG_OK. O(1). */
static inline lg_status lg__apart(const char *fn, const void *a, const char *an, size_t abytes, const void *b,
                                  const char *bn, size_t bbytes) {
    return lg__overlap(a, abytes, b, bbytes) ? lg__error(LG_EINVAL, "%s: %s and %s overlap", fn, an, bn) : LG_OK;
}

#define LG_MIN(a, b) ((a) < (b) ? (a) : (b))
#define LG_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Resident bytes of allocations totalling b bytes, for the memory estimates
 * made before allocating (lg_sbm_estimate, lg_trees_estimate): b with 1% and
 * 1 MiB more for the C library's chunk headers, rounding to pages, and freed
 * memory it keeps. */
static inline double lg__resident_bytes(double b) { return b + b / 100 + (double)(1 << 20); }

#endif /* LG_CORE_INTERNAL_H */
