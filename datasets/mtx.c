/*
 * Text-file reading for the data-set loader (datasets/mtx.h): whole files,
 * a line/token cursor, strict numbers, and the Matrix Market reader.
 *
 * Matrix Market (Boisvert, Pozo & Remington, "The Matrix Market Exchange
 * Formats: Initial Design", NIST 1996): a banner
 * `%%MatrixMarket matrix <coordinate|array> <field> <symmetry>`, `%` comment
 * lines, a size line (`rows cols nnz` or `rows cols`), then one entry a line:
 * `i j [value]` 1-based for coordinate, values column by column for array.
 * Blank lines may appear anywhere after the banner. Keywords are
 * case-insensitive.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "datasets/mtx.h"

/* ------------------------------------------------------------------------- */
/* Files                                                                      */
/* ------------------------------------------------------------------------- */

/* Reads up to cap bytes of fp into buf, NUL-terminated; *got the count.
 * LG_EIO naming path on a read error. */
static lg_status lg__file_fill(FILE *fp, const char *path, char *buf, size_t cap, size_t *got) {
    char why[128];
    *got = cap ? fread(buf, 1, cap, fp) : 0;
    if (*got != cap && ferror(fp)) {
        strerror_r(errno, why, sizeof why);
        return lg__error(LG_EIO, "%s: read error: %s", path, why);
    }
    buf[*got] = '\0';
    return LG_OK;
}

lg_status lg__file_read(lg__file *f, const char *path) {
    FILE *fp = NULL;
    size_t len = 0, got = 0;
    f->data = NULL;
    f->len = 0;
    f->path = path;
    LG_CHECK(lg__file_open_regular(path, NULL, &fp, &len));
    f->data = lg__malloc(len + 1);
    if (!f->data) {
        fclose(fp);
        return lg__nomem(path);
    }
    lg_status st = lg__file_fill(fp, path, f->data, len, &got);
    fclose(fp);
    if (st != LG_OK) {
        lg__file_free(f);
        return st;
    }
    f->len = got; /* a file that shrank meanwhile is read as it now is */
    return LG_OK;
}

/* The newlines in the len bytes at p. */
static lg_idx lg__newlines(const char *p, size_t len) {
    lg_idx count = 0;
    for (const char *end = p + len; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) count++;
    return count;
}

lg_status lg__file_count(const char *path, size_t *len, lg_idx *lines) {
    enum { BLOCK = 1 << 16 };
    FILE *fp = NULL;
    size_t got = 0;
    *len = 0;
    *lines = 1;
    LG_CHECK(lg__file_open_regular(path, NULL, &fp, len));
    char *buf = lg__malloc(BLOCK + 1); /* not on the stack, which a caller's thread may have small */
    if (!buf) {
        fclose(fp);
        return lg__nomem(path);
    }
    lg_status st;
    do {
        st = lg__file_fill(fp, path, buf, BLOCK, &got);
        if (st == LG_OK) *lines += lg__newlines(buf, got);
    } while (st == LG_OK && got == BLOCK);
    lg__free(buf);
    fclose(fp);
    return st;
}

void lg__file_free(lg__file *f) {
    if (!f) return;
    lg__free(f->data);
    f->data = NULL;
    f->len = 0;
}

lg_idx lg__file_lines(const lg__file *f) { return 1 + lg__newlines(f->data, f->len); }

/* ------------------------------------------------------------------------- */
/* Line and token cursor                                                      */
/* ------------------------------------------------------------------------- */

static inline int lg__blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

void lg__lex_init(lg__lex *lx, const lg__file *f) {
    lx->path = f->path;
    lx->p = f->data;
    lx->end = f->data + f->len;
    lx->line = 0;
    lx->cur = lx->le = f->data;
}

int lg__lex_line(lg__lex *lx) {
    if (lx->p >= lx->end) {
        lx->cur = lx->le = lx->end;
        return 0;
    }
    const char *nl = memchr(lx->p, '\n', (size_t)(lx->end - lx->p));
    lx->cur = lx->p;
    lx->le = nl ? nl : lx->end;
    lx->p = nl ? nl + 1 : lx->end;
    lx->line++;
    return 1;
}

int lg__lex_tok(lg__lex *lx, lg__tok *t) {
    const char *c = lx->cur, *le = lx->le;
    while (c < le && lg__blank(*c)) c++;
    if (c == le) {
        lx->cur = c;
        return 0;
    }
    t->b = c;
    while (c < le && !lg__blank(*c)) c++;
    t->e = lx->cur = c;
    return 1;
}

int lg__lex_data_line(lg__lex *lx, char comment) {
    while (lg__lex_line(lx)) {
        const char *c = lx->cur;
        while (c < lx->le && lg__blank(*c)) c++;
        if (c == lx->le || (comment && *c == comment)) continue;
        lx->cur = c;
        return 1;
    }
    return 0;
}

lg_status lg__lex_error(const lg__lex *lx, lg_status s, const char *fmt, ...) {
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return lg__error(s, "%s:%lld: %s", lx->path, (long long)(lx->line > 0 ? lx->line : 1), msg);
}

const char *lg__tok_quote(const lg__tok *t, char *buf, size_t cap) {
    size_t k = 0, len = (size_t)(t->e - t->b), show = len > 40 ? 40 : len;
    if (cap < 48) {
        if (cap) buf[0] = '\0';
        return buf;
    }
    buf[k++] = '"';
    for (size_t i = 0; i < show; i++) {
        unsigned char c = (unsigned char)t->b[i];
        buf[k++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (show < len) { memcpy(buf + k, "...", 3); k += 3; }
    buf[k++] = '"';
    buf[k] = '\0';
    return buf;
}

/* The C locale's numbers for strtof and strtod, whatever locale the program
 * has set: after setlocale(LC_ALL, "") under a decimal comma (de_DE), strtof
 * stopped at the '.' of every number ("value 4.99937125e-03 is not a
 * number": PubMed did not load). The locale object is made once and kept for
 * the process; uselocale switches only the calling thread. */
static locale_t lg__c_numeric;
static pthread_once_t lg__c_numeric_once = PTHREAD_ONCE_INIT;
static void lg__c_numeric_make(void) { lg__c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

/* Switches this thread to the C locale's numbers; returns what
 * lg__numeric_back restores ((locale_t)0: nothing was switched, the object
 * could not be made, and numbers follow the program's locale). */
static locale_t lg__numeric_c(void) {
    pthread_once(&lg__c_numeric_once, lg__c_numeric_make);
    return lg__c_numeric ? uselocale(lg__c_numeric) : (locale_t)0;
}

static void lg__numeric_back(locale_t old) {
    if (old) uselocale(old);
}

lg_status lg__lex_int(const lg__lex *lx, const lg__tok *t, const char *what, lg_idx *v) {
    char q[64];
    const char *c = t->b;
    int neg = 0, big = 0;
    if (c < t->e && (*c == '-' || *c == '+')) neg = *c++ == '-';
    if (c == t->e) goto bad;
    uint64_t u = 0;
    for (; c < t->e; c++) {
        unsigned d = (unsigned)(unsigned char)*c - '0';
        if (d > 9) goto bad;
        if (u > (UINT64_MAX - 9) / 10) big = 1;
        else u = u * 10 + d;
    }
    if (big || u > (uint64_t)INT64_MAX)
        return lg__lex_error(lx, LG_ERANGE, "%s %s does not fit in 64 bits", what, lg__tok_quote(t, q, sizeof q));
    *v = neg ? -(lg_idx)u : (lg_idx)u;
    return LG_OK;
bad:;
    /* tell a decimal number from words: "1.5" is a number, not an integer */
    char *end = NULL;
    const locale_t old = lg__numeric_c();
    (void)strtod(t->b, &end);
    lg__numeric_back(old);
    if (end == t->e)
        return lg__lex_error(lx, LG_EPARSE, "%s %s is not an integer", what, lg__tok_quote(t, q, sizeof q));
    return lg__lex_error(lx, LG_EPARSE, "%s %s is not a number", what, lg__tok_quote(t, q, sizeof q));
}

lg_status lg__lex_float(const lg__lex *lx, const lg__tok *t, const char *what, float *v) {
    char q[64];
    char *end = NULL;
    /* The token ends at a blank, a newline or the text's NUL, none of which
     * strtof takes into a number, so it stops at t->e when the token is one. */
    const locale_t old = lg__numeric_c();
    float f = strtof(t->b, &end);
    lg__numeric_back(old);
    if (end != t->e)
        return lg__lex_error(lx, LG_EPARSE, "%s %s is not a number", what, lg__tok_quote(t, q, sizeof q));
    if (!isfinite(f)) {
        int spelled = 0; /* "nan", "inf", "infinity" rather than a too large number */
        for (const char *c = t->b; c < t->e; c++) spelled |= *c == 'n' || *c == 'N';
        return lg__lex_error(lx, LG_ENUMERIC, "%s %s is not finite%s", what, lg__tok_quote(t, q, sizeof q),
                             spelled ? "" : " (overflows float)");
    }
    *v = f;
    return LG_OK;
}

lg_status lg__lex_eol(lg__lex *lx, const char *what) {
    lg__tok t;
    char q[64];
    if (lg__lex_tok(lx, &t))
        return lg__lex_error(lx, LG_EPARSE, "extra token %s after %s", lg__tok_quote(&t, q, sizeof q), what);
    return LG_OK;
}

/* ------------------------------------------------------------------------- */
/* Matrix Market                                                              */
/* ------------------------------------------------------------------------- */

/* A banner keyword and its flag. */
typedef struct lg__kw {
    const char *name;
    unsigned flag; /* 0: a valid keyword this reader does not handle */
} lg__kw;

static int lg__tok_is(const lg__tok *t, const char *s) {
    size_t n = strlen(s);
    return (size_t)(t->e - t->b) == n && strncasecmp(t->b, s, n) == 0;
}

/* Names of the accepted flags of a group, "coordinate or array". */
static const char *lg__kw_list(const lg__kw *kw, size_t nkw, unsigned accept, char *buf, size_t cap) {
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < nkw; i++) {
        if (!(kw[i].flag & accept)) continue;
        int w = snprintf(buf + k, cap - k, "%s%s", k ? " or " : "", kw[i].name);
        if (w < 0 || (size_t)w >= cap - k) break;
        k += (size_t)w;
    }
    return buf;
}

/* Reads one banner keyword of a group into *flag. */
static lg_status lg__banner_kw(lg__lex *lx, const char *group, const lg__kw *kw, size_t nkw, unsigned accept,
                               const char *role, unsigned *flag) {
    lg__tok t;
    char q[64], list[96];
    lg__kw_list(kw, nkw, accept, list, sizeof list);
    if (!lg__lex_tok(lx, &t))
        return lg__lex_error(lx, LG_EPARSE, "banner ends before its %s (expected %s)", group, list);
    for (size_t i = 0; i < nkw; i++) {
        if (!lg__tok_is(&t, kw[i].name)) continue;
        if (!(kw[i].flag & accept))
            return lg__lex_error(lx, LG_EPARSE, "%s %s is not accepted for %s (expected %s)", group,
                                 lg__tok_quote(&t, q, sizeof q), role, list);
        *flag = kw[i].flag;
        return LG_OK;
    }
    return lg__lex_error(lx, LG_EPARSE, "unknown %s %s in the banner (expected %s)", group,
                         lg__tok_quote(&t, q, sizeof q), list);
}

void lg__mtx_free(lg__mtx *m) {
    if (!m) return;
    lg__free(m->i);
    lg__free(m->j);
    lg__free(m->x);
    lg__file_free(&m->file);
    m->i = m->j = NULL;
    m->x = NULL;
}

/* Reads the banner line into m's kinds. */
static lg_status lg__mtx_banner(lg__lex *lx, lg__mtx *m, unsigned accept, const char *what) {
    static const lg__kw formats[] = {{"coordinate", LG__MTX_COORDINATE}, {"array", LG__MTX_ARRAY}};
    static const lg__kw fields[] = {{"pattern", LG__MTX_PATTERN}, {"real", LG__MTX_REAL},
                                    {"integer", LG__MTX_INTEGER}, {"double", 0}, {"complex", 0}};
    static const lg__kw syms[] = {{"general", LG__MTX_GENERAL}, {"symmetric", LG__MTX_SYMMETRIC},
                                  {"skew-symmetric", 0}, {"hermitian", 0}};
    lg__tok t = {NULL, NULL};
    char q[64];
    if (!lg__lex_line(lx))
        return lg__error(LG_EPARSE, "%s: empty file: expected a %%%%MatrixMarket banner", lx->path);
    if (!lg__lex_tok(lx, &t) || !lg__tok_is(&t, "%%MatrixMarket")) {
        if (t.b == NULL)
            return lg__lex_error(lx, LG_EPARSE, "expected the banner `%%%%MatrixMarket matrix <format> <field> <symmetry>`, found a blank line");
        return lg__lex_error(lx, LG_EPARSE,
                             "expected the banner `%%%%MatrixMarket matrix <format> <field> <symmetry>`, found %s",
                             lg__tok_quote(&t, q, sizeof q));
    }
    if (!lg__lex_tok(lx, &t))
        return lg__lex_error(lx, LG_EPARSE, "banner ends before its object (expected matrix)");
    if (!lg__tok_is(&t, "matrix"))
        return lg__lex_error(lx, LG_EPARSE, "object %s is not supported (expected matrix)", lg__tok_quote(&t, q, sizeof q));
    LG_CHECK(lg__banner_kw(lx, "format", formats, 2, accept, what, &m->format));
    LG_CHECK(lg__banner_kw(lx, "field", fields, 5, accept, what, &m->field));
    LG_CHECK(lg__banner_kw(lx, "symmetry", syms, 4, accept, what, &m->symmetry));
    LG_CHECK(lg__lex_eol(lx, "the banner"));
    if (m->format == LG__MTX_ARRAY && m->field == LG__MTX_PATTERN)
        return lg__lex_error(lx, LG_EPARSE, "an array matrix cannot have the pattern field");
    if (m->format == LG__MTX_ARRAY && m->symmetry != LG__MTX_GENERAL)
        return lg__lex_error(lx, LG_EPARSE, "symmetric array matrices are not supported");
    return LG_OK;
}

/* Reads the size line into m->rows, cols, nnz and checks it against want and
 * against what the file's length can hold. */
static lg_status lg__mtx_size(lg__lex *lx, lg__mtx *m, const lg__mtx_want *want) {
    int coo = m->format == LG__MTX_COORDINATE;
    const char *shape = coo ? "`rows cols entries`" : "`rows cols`";
    const char *names[3] = {"row count", "column count", "entry count"};
    lg_idx v[3] = {0, 0, 0};
    int need = coo ? 3 : 2;
    if (!lg__lex_data_line(lx, '%'))
        return lg__lex_error(lx, LG_EPARSE, "end of file before the size line %s", shape);
    m->size_line = lx->line;
    for (int k = 0; k < need; k++) {
        lg__tok t;
        if (!lg__lex_tok(lx, &t))
            return lg__lex_error(lx, LG_EPARSE, "size line has %d number%s, expected %d: %s", k, k == 1 ? "" : "s",
                                 need, shape);
        LG_CHECK(lg__lex_int(lx, &t, names[k], &v[k]));
        if (v[k] < 0) return lg__lex_error(lx, LG_ERANGE, "negative %s %lld on the size line", names[k], (long long)v[k]);
    }
    LG_CHECK(lg__lex_eol(lx, "the size line"));
    m->rows = v[0];
    m->cols = v[1];
    if (want->rows >= 0 && m->rows != want->rows)
        return lg__lex_error(lx, LG_ERANGE, "the matrix has %lld rows, but %s gives %lld nodes", (long long)m->rows,
                             want->rows_from ? want->rows_from : "the data set", (long long)want->rows);
    if (want->cols >= 0 && m->cols != want->cols)
        return lg__lex_error(lx, LG_ERANGE, "the matrix has %lld columns, expected %lld", (long long)m->cols,
                             (long long)want->cols);
    if (m->symmetry == LG__MTX_SYMMETRIC && m->rows != m->cols)
        return lg__lex_error(lx, LG_ERANGE, "a symmetric matrix must be square, not %lld x %lld", (long long)m->rows,
                             (long long)m->cols);
    if (m->cols > 0 && m->rows > INT64_MAX / m->cols)
        return lg__lex_error(lx, LG_ERANGE, "size %lld x %lld overflows 64 bits", (long long)m->rows, (long long)m->cols);
    lg_idx cells = m->rows * m->cols;
    /* an entry takes at least "i j\n" (4 bytes), "i j x\n" (6) or "x\n" (2),
     * the last one without its newline */
    lg_idx bytes = (lg_idx)m->file.len + 1;
    lg_idx room = coo ? bytes / (m->field == LG__MTX_PATTERN ? 4 : 6) : bytes / 2;
    if (coo) {
        m->nnz = v[2];
        if (m->nnz > cells)
            return lg__lex_error(lx, LG_ERANGE, "%lld entries declared, more than the %lld cells of a %lld x %lld matrix",
                                 (long long)m->nnz, (long long)cells, (long long)m->rows, (long long)m->cols);
    } else {
        m->nnz = cells;
    }
    if (m->nnz > room)
        return lg__lex_error(lx, LG_ERANGE, "%lld entries declared, more than a file of %zu bytes can hold",
                             (long long)m->nnz, m->file.len);
    return LG_OK;
}

/* Reads the coordinate entries. */
static lg_status lg__mtx_coordinate(lg__lex *lx, lg__mtx *m) {
    lg_status st = LG_OK;
    const int pattern = m->field == LG__MTX_PATTERN, integer = m->field == LG__MTX_INTEGER;
    const int sym = m->symmetry == LG__MTX_SYMMETRIC;
    const char *shape = pattern ? "`row column`" : "`row column value`";
    LG_ALLOC(m->i, m->nnz, "matrix row ids");
    LG_ALLOC(m->j, m->nnz, "matrix column ids");
    if (!pattern) LG_ALLOC(m->x, m->nnz, "matrix values");
    for (lg_idx k = 0; k < m->nnz; k++) {
        lg__tok t;
        lg_idx r, c;
        if (!lg__lex_data_line(lx, 0))
            return lg__lex_error(lx, LG_EPARSE, "end of file after %lld of the %lld entries declared on line %lld",
                                 (long long)k, (long long)m->nnz, (long long)m->size_line);
        lg__lex_tok(lx, &t); /* a data line has a first token */
        LG_CHECK(lg__lex_int(lx, &t, "row index", &r));
        if (!lg__lex_tok(lx, &t))
            return lg__lex_error(lx, LG_EPARSE, "entry has 1 token, expected %s", shape);
        LG_CHECK(lg__lex_int(lx, &t, "column index", &c));
        if (r < 1 || r > m->rows)
            return lg__lex_error(lx, LG_ERANGE, "row index %lld outside [1, %lld]", (long long)r, (long long)m->rows);
        if (c < 1 || c > m->cols)
            return lg__lex_error(lx, LG_ERANGE, "column index %lld outside [1, %lld]", (long long)c, (long long)m->cols);
        if (sym && r < c)
            return lg__lex_error(lx, LG_EPARSE,
                                 "entry (%lld, %lld) is above the diagonal of a symmetric matrix (only the lower triangle is stored)",
                                 (long long)r, (long long)c);
        m->i[k] = r - 1;
        m->j[k] = c - 1;
        if (!pattern) {
            if (!lg__lex_tok(lx, &t))
                return lg__lex_error(lx, LG_EPARSE, "entry has 2 tokens, expected %s", shape);
            if (integer) {
                lg_idx iv;
                LG_CHECK(lg__lex_int(lx, &t, "value", &iv));
                m->x[k] = (float)iv;
            } else {
                LG_CHECK(lg__lex_float(lx, &t, "value", &m->x[k]));
            }
        }
        LG_CHECK(lg__lex_eol(lx, pattern ? "the entry `row column`" : "the entry `row column value`"));
    }
    return LG_OK;
fail:
    return st;
}

/* Reads the array values (column-major in the file) into row-major m->x. */
static lg_status lg__mtx_array(lg__lex *lx, lg__mtx *m) {
    lg_status st = LG_OK;
    const int integer = m->field == LG__MTX_INTEGER;
    LG_ALLOC(m->x, m->nnz, "matrix values");
    lg_idx r = 0, c = 0;
    for (lg_idx k = 0; k < m->nnz; k++) {
        lg__tok t;
        float *dst = &m->x[r * m->cols + c];
        if (!lg__lex_data_line(lx, 0))
            return lg__lex_error(lx, LG_EPARSE, "end of file after %lld of the %lld values declared on line %lld",
                                 (long long)k, (long long)m->nnz, (long long)m->size_line);
        lg__lex_tok(lx, &t);
        if (integer) {
            lg_idx iv;
            LG_CHECK(lg__lex_int(lx, &t, "value", &iv));
            *dst = (float)iv;
        } else {
            LG_CHECK(lg__lex_float(lx, &t, "value", dst));
        }
        LG_CHECK(lg__lex_eol(lx, "the value (an array file holds one value a line)"));
        if (++r == m->rows) { r = 0; c++; }
    }
    return LG_OK;
fail:
    return st;
}

lg_status lg__mtx_read(lg__mtx *m, const char *path, const lg__mtx_want *want) {
    lg_status st = LG_OK;
    lg__lex lx;
    memset(m, 0, sizeof *m);
    LG_TRY(lg__file_read(&m->file, path));
    lg__lex_init(&lx, &m->file);
    LG_TRY(lg__mtx_banner(&lx, m, want->accept, want->what ? want->what : "this file"));
    LG_TRY(lg__mtx_size(&lx, m, want));
    if (m->format == LG__MTX_COORDINATE)
        LG_TRY(lg__mtx_coordinate(&lx, m));
    else
        LG_TRY(lg__mtx_array(&lx, m));
    if (lg__lex_data_line(&lx, 0)) {
        st = lg__lex_error(&lx, LG_EPARSE, "surplus entry: line %lld declares %lld %s", (long long)m->size_line,
                           (long long)m->nnz, m->format == LG__MTX_COORDINATE ? "entries" : "values");
        goto fail;
    }
    return LG_OK;
fail:
    lg__mtx_free(m);
    memset(m, 0, sizeof *m);
    return st;
}

lg_status lg__mtx_read_header(lg__mtx *m, const char *path, const lg__mtx_want *want) {
    FILE *fp = NULL;
    size_t len = 0, got = 0;
    lg__lex lx;
    memset(m, 0, sizeof *m);
    LG_CHECK(lg__file_open_regular(path, NULL, &fp, &len));
    const size_t cap = len < LG__MTX_HEAD_MAX ? len : LG__MTX_HEAD_MAX;
    char *buf = lg__malloc(cap + 1);
    if (!buf) {
        fclose(fp);
        return lg__nomem(path);
    }
    lg_status st = lg__file_fill(fp, path, buf, cap, &got);
    fclose(fp);
    const lg__file head = {buf, got, path};
    m->file.path = path;
    m->file.len = len; /* the whole file's length bounds the entries (lg__mtx_size) */
    if (st == LG_OK) {
        lg__lex_init(&lx, &head);
        st = lg__mtx_banner(&lx, m, want->accept, want->what ? want->what : "this file");
        if (st == LG_OK) st = lg__mtx_size(&lx, m, want);
        /* the header must end inside the bytes read: a line cut at their end
         * could be misread, or its error be one the whole file does not have */
        if (got < len && lx.le >= lx.end)
            st = lg__error(LG_EUNSUPPORTED, "%s: the header (banner, comments, size line) is longer than %d bytes",
                           path, (int)LG__MTX_HEAD_MAX);
    }
    lg__free(buf);
    if (st != LG_OK) memset(m, 0, sizeof *m);
    return st;
}

lg_idx lg__mtx_entry_line(const lg__mtx *m, lg_idx k) {
    lg__lex lx;
    if (!m->file.data || k < 0 || k >= m->nnz) return 0;
    lg__lex_init(&lx, &m->file);
    if (!lg__lex_line(&lx) || !lg__lex_data_line(&lx, '%')) return 0; /* banner, size line */
    for (lg_idx e = 0; e <= k; e++)
        if (!lg__lex_data_line(&lx, 0)) return 0;
    return lx.line;
}

/* Sorts the parallel arrays j[0..n), x[0..n) by j (heapsort: in place,
 * O(n log n) whatever the order). */
static void lg__sort_row(lg_idx *j, float *x, lg_idx n) {
    for (lg_idx start = n / 2; start-- > 0;) {
        for (lg_idx r = start;;) { /* sift down */
            lg_idx c = 2 * r + 1;
            if (c >= n) break;
            if (c + 1 < n && j[c + 1] > j[c]) c++;
            if (j[r] >= j[c]) break;
            lg_idx tj = j[r]; j[r] = j[c]; j[c] = tj;
            float tx = x[r]; x[r] = x[c]; x[c] = tx;
            r = c;
        }
    }
    for (lg_idx end = n - 1; end > 0; end--) {
        lg_idx tj = j[0]; j[0] = j[end]; j[end] = tj;
        float tx = x[0]; x[0] = x[end]; x[end] = tx;
        for (lg_idx r = 0;;) {
            lg_idx c = 2 * r + 1;
            if (c >= end) break;
            if (c + 1 < end && j[c + 1] > j[c]) c++;
            if (j[r] >= j[c]) break;
            tj = j[r]; j[r] = j[c]; j[c] = tj;
            tx = x[r]; x[r] = x[c]; x[c] = tx;
            r = c;
        }
    }
}

/* The error for a duplicate entry (r, c), naming the lines of its first two
 * occurrences in the file. */
static lg_status lg__mtx_duplicate(const lg__mtx *m, lg_idx r, lg_idx c) {
    lg_idx first = -1, second = -1;
    for (lg_idx k = 0; k < m->nnz && second < 0; k++)
        if (m->i[k] == r && m->j[k] == c) {
            if (first < 0) first = k; else second = k;
        }
    lg_idx l1 = lg__mtx_entry_line(m, first), l2 = lg__mtx_entry_line(m, second);
    return lg__error(LG_EPARSE, "%s:%lld: duplicate entry (%lld, %lld), first given on line %lld", m->file.path,
                     (long long)l2, (long long)r + 1, (long long)c + 1, (long long)l1);
}

lg_status lg__mtx_to_csr(const lg__mtx *m, lg_idx **pp, lg_idx **jp, float **xp) {
    lg_status st = LG_OK;
    lg_idx *p = NULL, *j = NULL;
    float *x = NULL;
    const lg_idx n = m->rows, nnz = m->nnz;
    *pp = *jp = NULL;
    *xp = NULL;
    if (m->format != LG__MTX_COORDINATE || !m->x)
        return lg__error(LG_EINVAL, "%s: not a coordinate matrix with values", m->file.path);
    LG_CALLOC(p, (size_t)n + 1, "feature row pointers");
    LG_ALLOC(j, nnz, "feature column ids");
    LG_ALLOC(x, nnz, "feature values");
    /* counting sort by row, stable: p[r] serves as row r's cursor, and ends
     * as the start of row r+1 */
    for (lg_idx k = 0; k < nnz; k++) p[m->i[k] + 1]++;
    for (lg_idx r = 0; r < n; r++) p[r + 1] += p[r];
    for (lg_idx k = 0; k < nnz; k++) {
        lg_idx dst = p[m->i[k]]++;
        j[dst] = m->j[k];
        x[dst] = m->x[k];
    }
    for (lg_idx r = n; r > 0; r--) p[r] = p[r - 1];
    p[0] = 0;
    for (lg_idx r = 0; r < n; r++) {
        lg_idx b = p[r], e = p[r + 1], k = b + 1;
        while (k < e && j[k] > j[k - 1]) k++;
        if (k < e && j[k] != j[k - 1]) lg__sort_row(j + b, x + b, e - b); /* unsorted */
        for (k = b + 1; k < e; k++)
            if (j[k] == j[k - 1]) {
                st = lg__mtx_duplicate(m, r, j[k]);
                goto fail;
            }
    }
    *pp = p;
    *jp = j;
    *xp = x;
    return LG_OK;
fail:
    lg__free(p);
    lg__free(j);
    lg__free(x);
    return st;
}
