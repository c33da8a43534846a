/* Status names, descriptions and the thread-local last-error message. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

static const char *const lg__names[LG_STATUS_COUNT] = {
    "LG_OK", "LG_ENOMEM", "LG_EINVAL", "LG_EIO", "LG_EPARSE", "LG_ERANGE",
    "LG_ENOTFOUND", "LG_EIGRAPH", "LG_ESPARSE", "LG_ENUMERIC", "LG_EUNSUPPORTED",
};

static const char *const lg__texts[LG_STATUS_COUNT] = {
    "success", "out of memory", "invalid argument", "input/output error",
    "malformed input", "value out of range", "not found", "igraph error",
    "CXSparse error", "non-finite value", "unsupported",
};

/* The last error of this thread: per-thread, so two models in two threads
 * never see each other's messages. */
static _Thread_local char lg__msg[1024];

const char *lg_status_name(lg_status s) {
    return ((unsigned)s < LG_STATUS_COUNT) ? lg__names[s] : "LG_E?";
}

const char *lg_strerror(lg_status s) {
    return ((unsigned)s < LG_STATUS_COUNT) ? lg__texts[s] : "unknown status";
}

const char *lg_last_error(void) { return lg__msg; }

void lg_clear_error(void) { lg__msg[0] = '\0'; }

lg_status lg__error(lg_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lg__msg, sizeof lg__msg, fmt, ap);
    va_end(ap);
    return s;
}

lg_status lg__nomem(const char *what) {
    return lg__error(LG_ENOMEM, "out of memory: %s", what ? what : "allocation");
}

const char *lg_version(void) { return LG_VERSION_STRING; }
