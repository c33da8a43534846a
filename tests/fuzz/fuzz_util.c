/* Scratch files for the fuzz harnesses (see fuzz_util.h). */
#include "fuzz_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char lg__dir[256];

static void lg__cleanup(void) {
    DIR *d = opendir(lg__dir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.') continue;
            snprintf(p, sizeof p, "%s/%s", lg__dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(lg__dir);
}

const char *lg_fuzz_dir(void) {
    if (!lg__dir[0]) {
        /* memory-backed when possible: on a disk, file writes would set the pace */
        const char *tmp = getenv("TMPDIR");
        if (!tmp || !*tmp) tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(lg__dir, sizeof lg__dir, "%s/lgfuzz.XXXXXX", tmp);
        if (!mkdtemp(lg__dir)) {
            perror("lg_fuzz_dir: mkdtemp");
            abort();
        }
        atexit(lg__cleanup);
    }
    return lg__dir;
}

const char *lg_fuzz_write(const char *name, const void *data, size_t n) {
    static char paths[8][512];
    static const char *names[8];
    int slot = 0;
    while (slot < 7 && names[slot] && strcmp(names[slot], name)) slot++;
    names[slot] = name;
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", lg_fuzz_dir(), name);
    int fd = open(paths[slot], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) {
        perror("lg_fuzz_write: open");
        abort();
    }
    const char *p = data;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w <= 0) {
            perror("lg_fuzz_write: write");
            abort();
        }
        p += w;
        n -= (size_t)w;
    }
    close(fd);
    return paths[slot];
}

void lg_fuzz_remove(const char *name) {
    char p[512];
    snprintf(p, sizeof p, "%s/%s", lg_fuzz_dir(), name);
    unlink(p);
}
