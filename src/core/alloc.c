/* The allocator hook: every allocation of the library goes through here. */
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "core/internal.h"

static lg_allocator lg__alloc = {malloc, calloc, realloc, free};

void lg_set_allocator(const lg_allocator *a) {
    lg__alloc.malloc_fn = (a && a->malloc_fn) ? a->malloc_fn : malloc;
    lg__alloc.calloc_fn = (a && a->calloc_fn) ? a->calloc_fn : calloc;
    lg__alloc.realloc_fn = (a && a->realloc_fn) ? a->realloc_fn : realloc;
    lg__alloc.free_fn = (a && a->free_fn) ? a->free_fn : free;
}

void *lg__malloc(size_t size) { return lg__alloc.malloc_fn(size ? size : 1); }

void *lg__calloc(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    return lg__alloc.calloc_fn(count ? count : 1, size ? size : 1);
}

void *lg__realloc(void *ptr, size_t size) { return lg__alloc.realloc_fn(ptr, size ? size : 1); }

void *lg__malloc_array(size_t count, size_t size) {
    if (size && count > SIZE_MAX / size) return NULL;
    return lg__malloc(count * size);
}

void lg__free(void *ptr) {
    if (ptr) lg__alloc.free_fn(ptr);
}

void lg__heap_trim(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
