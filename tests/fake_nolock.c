/* LD_PRELOAD shim for the depth-study test of a file system that has no
 * locks (NFS without its lock service, some FUSE file systems): fcntl's
 * F_SETLK and F_SETLKW fail with ENOLCK, as they do there; every other call
 * goes to the C library's fcntl. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

int fcntl(int fd, int cmd, ...);

int fcntl(int fd, int cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *); /* every fcntl command takes one argument or none */
    va_end(ap);
    if (cmd == F_SETLK || cmd == F_SETLKW) {
        errno = ENOLCK;
        return -1;
    }
    void *sym = dlsym(RTLD_NEXT, "fcntl");
    int (*real)(int, int, ...) = NULL;
    memcpy(&real, &sym, sizeof real); /* ISO C has no cast from object to function pointer */
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    return real(fd, cmd, arg);
}
