/*
 * A main() for the fuzz harnesses in builds without libFuzzer (gcc, Release,
 * ASan): runs the harness once on every file given, or on every regular file of
 * every directory given. ctest replays the seed corpora and the inputs of past
 * findings (tests/fuzz/regressions) with it, so a finding stays fixed in the
 * ordinary test runs too.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int lg__run_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return -1; }
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (size_t r; buf && (r = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            unsigned char *nb = realloc(buf, cap *= 2);
            if (!nb) { free(buf); buf = NULL; }
            buf = nb;
        }
    }
    fclose(f);
    if (!buf) { fprintf(stderr, "%s: out of memory\n", path); return -1; }
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

static int lg__cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv) {
    int runs = 0;
    for (int k = 1; k < argc; k++) {
        struct stat sb;
        if (stat(argv[k], &sb) != 0) { perror(argv[k]); return 1; }
        if (!S_ISDIR(sb.st_mode)) {
            if (lg__run_file(argv[k])) return 1;
            runs++;
            continue;
        }
        struct dirent **list;
        int m = scandir(argv[k], &list, NULL, NULL);
        if (m < 0) { perror(argv[k]); return 1; }
        qsort(list, (size_t)m, sizeof *list, lg__cmp);
        for (int i = 0; i < m; i++) {
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", argv[k], list[i]->d_name);
            if (list[i]->d_name[0] != '.' && stat(p, &sb) == 0 && S_ISREG(sb.st_mode)) {
                if (lg__run_file(p)) return 1;
                runs++;
            }
            free(list[i]);
        }
        free(list);
    }
    printf("replay: %d inputs, no finding\n", runs);
    return runs > 0 ? 0 : 1;
}
