/*
 * Shared pieces of the libFuzzer harnesses (tests/fuzz/fuzz_*.c): a private
 * scratch directory for the files the readers open, and an invariant check
 * that stops the run like a sanitizer report does.
 */
#ifndef LG_FUZZ_UTIL_H
#define LG_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A fuzz finding that no sanitizer sees (a wrong result): print and trap. */
#define LG_FUZZ_REQUIRE(cond)                                                                   \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);        \
            __builtin_trap();                                                                   \
        }                                                                                       \
    } while (0)

/* The process's scratch directory, under $TMPDIR, else /dev/shm, else /tmp
 * (created on first use, removed at exit). */
const char *lg_fuzz_dir(void);

/* Writes n bytes to <scratch>/name (replacing it) and returns its path (a
 * static buffer per name slot; valid until the next call with that name). */
const char *lg_fuzz_write(const char *name, const void *data, size_t n);

/* Removes <scratch>/name if it exists. */
void lg_fuzz_remove(const char *name);

#endif
