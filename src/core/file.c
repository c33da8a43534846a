/* Opening the files the library reads (data sets, checkpoints), and whether
 * a directory takes the files it writes. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/internal.h"

lg_status lg__file_open_regular(const char *path, const char *what, FILE **fp, size_t *len) {
    char why[128];
    struct stat sb;
    *fp = NULL;
    *len = 0;
    /* O_NONBLOCK: opening a FIFO without a writer would otherwise wait for
     * one (forever); it is refused below as not a regular file, which a
     * regular file's open and reads ignore, and the flag is cleared anyway */
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        strerror_r(errno, why, sizeof why);
        return lg__error(LG_EIO, "%s: cannot open%s%s: %s", path, what ? " " : "", what ? what : "", why);
    }
    lg_status st = LG_OK;
    if (fstat(fd, &sb) != 0) {
        strerror_r(errno, why, sizeof why);
        st = lg__error(LG_EIO, "%s: cannot stat: %s", path, why);
    } else if (!S_ISREG(sb.st_mode)) {
        st = lg__error(LG_EIO, "%s: not a regular file%s", path,
                       S_ISDIR(sb.st_mode) ? " (a directory)" : S_ISFIFO(sb.st_mode) ? " (a pipe)" : "");
    } else if (sb.st_size < 0 || (unsigned long long)sb.st_size >= (unsigned long long)SIZE_MAX) {
        st = lg__error(LG_EIO, "%s: file too large to read", path);
    } else {
        const int fl = fcntl(fd, F_GETFL);
        if (fl == -1 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == -1 || !(*fp = fdopen(fd, "rb"))) {
            strerror_r(errno, why, sizeof why);
            st = lg__error(LG_EIO, "%s: cannot open%s%s: %s", path, what ? " " : "", what ? what : "", why);
        }
    }
    if (st != LG_OK) {
        close(fd);
        return st;
    }
    *len = (size_t)sb.st_size;
    return LG_OK;
}

int lg__dir_probe(const char *dir) {
    char probe[4200];
    if (snprintf(probe, sizeof probe, "%s/.lipgnn-probe.%ld", dir, (long)getpid()) >= (int)sizeof probe)
        return ENAMETOOLONG;
    const int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return errno;
    close(fd);
    unlink(probe);
    return 0;
}
