/* The checkpoint container (src/train/checkpoint.h). */
#define _DEFAULT_SOURCE /* realpath, readlink */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"
#include "train/checkpoint.h"

static const char lg__magic[8] = {'L', 'I', 'P', 'G', 'N', 'N', 'C', 'K'};

uint64_t lg__fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t k = 0; k < n; k++) h = (h ^ p[k]) * 0x100000001b3ULL;
    return h;
}

static void lg__put_u32(unsigned char *b, uint32_t v) {
    for (int k = 0; k < 4; k++) b[k] = (unsigned char)(v >> (8 * k));
}
static void lg__put_u64(unsigned char *b, uint64_t v) {
    for (int k = 0; k < 8; k++) b[k] = (unsigned char)(v >> (8 * k));
}
static uint32_t lg__get_u32(const unsigned char *b) {
    uint32_t v = 0;
    for (int k = 3; k >= 0; k--) v = (v << 8) | b[k];
    return v;
}
static uint64_t lg__get_u64(const unsigned char *b) {
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--) v = (v << 8) | b[k];
    return v;
}

/* Writes n bytes, honouring the simulated crash budget (*budget < 0: none). */
static int lg__write_all(int fd, const void *data, size_t n, uint64_t *h, long long *budget) {
    const unsigned char *p = data;
    *h = lg__fnv1a(*h, data, n);
    if (*budget >= 0 && (long long)n > *budget) {
        if (*budget > 0 && write(fd, p, (size_t)*budget) < 0) return -1;
        *budget = 0;
        errno = EIO;
        return -2; /* simulated death */
    }
    if (*budget >= 0) *budget -= (long long)n;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

lg_status lg__ckpt_target(const char *path, char *real, const char **file) {
    if (!path || !real || !file) return lg__error(LG_EINVAL, "checkpoint target: NULL argument");
    if (!path[0]) return lg__error(LG_EINVAL, "checkpoint path is empty");
    *file = path;
    struct stat sb;
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        if (realpath(path, real)) {
            *file = real;
        } else if (errno == ENOENT) { /* a link to a file not made yet: that file (one level) */
            char to[PATH_MAX];
            ssize_t n = readlink(path, to, sizeof to - 1);
            if (n > 0) {
                to[n] = '\0';
                const char *slash = strrchr(path, '/');
                int dl = to[0] == '/' || !slash ? 0 : (int)(slash - path + 1); /* relative: beside the link */
                if (snprintf(real, PATH_MAX, "%.*s%s", dl, path, to) < PATH_MAX) *file = real;
            }
        }
    }
    if (stat(*file, &sb) == 0 && !S_ISREG(sb.st_mode))
        return lg__error(LG_EIO,
                         "%s: not a regular file (%s): a checkpoint is written to a new file that then replaces "
                         "the old one; give a file's path",
                         path, S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a pipe"
                                                   : S_ISCHR(sb.st_mode) || S_ISBLK(sb.st_mode) ? "a device"
                                                                                                : "a special file");
    /* its directory must take the new file */
    char dir[PATH_MAX];
    const char *slash = strrchr(*file, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else snprintf(dir, sizeof dir, "%.*s", slash == *file ? 1 : (int)(slash - *file), *file);
    const int e = lg__dir_probe(dir);
    if (e) return lg__error(LG_EIO, "%s: cannot create a file in %s: %s", path, dir, strerror(e));
    return LG_OK;
}

lg_status lg__ckpt_save(const char *path, const lg_ckpt_section *sections, uint32_t count,
                        long long fail_after_bytes) {
    if (!path || (count && !sections)) return lg__error(LG_EINVAL, "checkpoint save: NULL argument");
    char real[PATH_MAX];
    LG_CHECK(lg__ckpt_target(path, real, &path));
    size_t plen = strlen(path);
    char *tmp = lg__malloc(plen + 32);
    if (!tmp) return lg__nomem("checkpoint path");
    snprintf(tmp, plen + 32, "%s.tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        lg_status st = lg__error(LG_EIO, "%s: cannot create its new file %s: %s", path, tmp, strerror(errno));
        lg__free(tmp);
        return st;
    }
    uint64_t h = LG_FNV_START;
    long long budget = fail_after_bytes;
    unsigned char head[16];
    memcpy(head, lg__magic, 8);
    lg__put_u32(head + 8, LG_CKPT_VERSION);
    lg__put_u32(head + 12, count);
    int rc = lg__write_all(fd, head, 16, &h, &budget);
    for (uint32_t s = 0; s < count && rc == 0; s++) {
        unsigned char sh[16];
        lg__put_u32(sh, sections[s].tag);
        lg__put_u32(sh + 4, 0);
        lg__put_u64(sh + 8, sections[s].length);
        rc = lg__write_all(fd, sh, 16, &h, &budget);
        if (rc == 0 && sections[s].length) rc = lg__write_all(fd, sections[s].data, sections[s].length, &h, &budget);
    }
    if (rc == 0) {
        unsigned char tail[8];
        uint64_t sum = h;
        lg__put_u64(tail, sum);
        rc = lg__write_all(fd, tail, 8, &h, &budget);
    }
    if (rc == -2) { /* simulated death: the temporary file stays, the target is untouched */
        close(fd);
        lg__free(tmp);
        return lg__error(LG_EIO, "%s: save interrupted (simulated)", path);
    }
    if (rc == 0 && fsync(fd) != 0) rc = -1;
    if (close(fd) != 0) rc = -1;
    if (rc == 0 && rename(tmp, path) != 0) rc = -1;
    lg_status st = LG_OK;
    if (rc != 0) {
        st = lg__error(LG_EIO, "%s: cannot write checkpoint: %s", path, strerror(errno));
        unlink(tmp);
    }
    lg__free(tmp);
    return st;
}

lg_status lg__ckpt_load(lg_ckpt **out, const char *path) {
    lg_status st = LG_OK;
    lg_ckpt *c = NULL;
    FILE *f = NULL;
    if (!out || !path) return lg__error(LG_EINVAL, "checkpoint load: NULL argument");
    *out = NULL;
    size_t size = 0;
    LG_CHECK(lg__file_open_regular(path, "checkpoint", &f, &size));
    if (size < 24) {
        st = lg__error(LG_EPARSE, "%s: not a lipgnn checkpoint (%zu bytes, truncated or empty)", path, size);
        goto fail;
    }
    LG_CALLOC(c, 1, "checkpoint");
    LG_ALLOC(c->blob, size, "checkpoint contents");
    if (fread(c->blob, 1, size, f) != size) {
        st = lg__error(LG_EIO, "%s: read error", path);
        goto fail;
    }
    if (memcmp(c->blob, lg__magic, 8) != 0) {
        st = lg__error(LG_EPARSE, "%s: not a lipgnn checkpoint (bad magic)", path);
        goto fail;
    }
    c->version = lg__get_u32(c->blob + 8);
    if (c->version != LG_CKPT_VERSION) {
        st = lg__error(LG_EPARSE, "%s: checkpoint format version %u, this lipgnn reads version %u", path,
                       c->version, LG_CKPT_VERSION);
        goto fail;
    }
    uint64_t sum = lg__get_u64(c->blob + size - 8);
    if (lg__fnv1a(LG_FNV_START, c->blob, size - 8) != sum) {
        st = lg__error(LG_EPARSE, "%s: checksum mismatch (the file is truncated or damaged)", path);
        goto fail;
    }
    c->count = lg__get_u32(c->blob + 12);
    if (c->count > (size - 24) / 16) {
        st = lg__error(LG_EPARSE, "%s: %u sections cannot fit in %zu bytes", path, c->count, size);
        goto fail;
    }
    LG_CALLOC(c->sections, c->count, "checkpoint sections");
    size_t pos = 16, end = size - 8;
    for (uint32_t s = 0; s < c->count; s++) {
        if (end - pos < 16) {
            st = lg__error(LG_EPARSE, "%s: section %u header runs past the end", path, s);
            goto fail;
        }
        c->sections[s].tag = lg__get_u32(c->blob + pos);
        c->sections[s].length = lg__get_u64(c->blob + pos + 8);
        pos += 16;
        if (c->sections[s].length > end - pos) {
            st = lg__error(LG_EPARSE, "%s: section %u (%llu bytes) runs past the end", path, s,
                           (unsigned long long)c->sections[s].length);
            goto fail;
        }
        c->sections[s].data = c->blob + pos;
        pos += c->sections[s].length;
    }
    if (pos != end) {
        st = lg__error(LG_EPARSE, "%s: %zu unexpected bytes after the last section", path, end - pos);
        goto fail;
    }
    fclose(f);
    *out = c;
    return LG_OK;
fail:
    if (f) fclose(f);
    lg__ckpt_free(c);
    return st;
}

const lg_ckpt_section *lg__ckpt_find(const lg_ckpt *c, uint32_t tag) {
    for (uint32_t s = 0; c && s < c->count; s++)
        if (c->sections[s].tag == tag) return &c->sections[s];
    return NULL;
}

void lg__ckpt_free(lg_ckpt *c) {
    if (!c) return;
    lg__free(c->sections);
    lg__free(c->blob);
    lg__free(c);
}
