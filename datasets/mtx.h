/*
 * The text-file readers under the data-set loader: a whole file in memory, a
 * line and token cursor that keeps line numbers for messages, strict number
 * parsing, and the Matrix Market reader (coordinate and array matrices).
 *
 * Every error message has the form `<path>:<line>: <what is wrong>`, naming
 * the offending token. No size declared in a header is allocated before it is
 * checked against the file's length. Internal: lg__ names, not installed.
 */
#ifndef LG_DATASETS_MTX_H
#define LG_DATASETS_MTX_H

#include <stddef.h>

#include "core/internal.h"

/* ------------------------------------------------------------------------- */
/* Files and the line/token cursor                                            */
/* ------------------------------------------------------------------------- */

/* A file read whole into memory. */
typedef struct lg__file {
    char *data;       /* len bytes followed by a NUL (owned)                */
    size_t len;       /* length of the file in bytes                        */
    const char *path; /* the path as given, for messages (not owned)       */
} lg__file;

/* Reads the regular file at path into f (f->data NULL on failure). LG_EIO
 * naming the path and the system's reason when it cannot be opened or read,
 * LG_ENOMEM. O(file size). */
lg_status lg__file_read(lg__file *f, const char *path);

/* Frees f's buffer; a zeroed f is a no-op. */
void lg__file_free(lg__file *f);

/* A cursor over the lines of a file, and over the tokens of its current line.
 * Tokens are separated by blanks (space, tab, CR, VT, FF); lines end at LF. */
typedef struct lg__lex {
    const char *path; /* for messages                                       */
    const char *p;    /* start of the next line                             */
    const char *end;  /* end of the text (points at its NUL)                */
    lg_idx line;      /* number of the current line (1-based; 0 before any) */
    const char *cur;  /* next unread byte of the current line               */
    const char *le;   /* end of the current line (its LF or the text's end) */
} lg__lex;

/* A token: bytes [b, e) of the current line. */
typedef struct lg__tok {
    const char *b; /* first byte         */
    const char *e; /* one past the last  */
} lg__tok;

/* Starts a cursor over the whole of f. */
void lg__lex_init(lg__lex *lx, const lg__file *f);

/* Moves to the next line. 0 at the end of the text. O(line length). */
int lg__lex_line(lg__lex *lx);

/* Moves to the next line holding a token, skipping blank lines and lines whose
 * first token starts with `comment` (0: none). 0 at the end of the text. */
int lg__lex_data_line(lg__lex *lx, char comment);

/* Takes the next token of the current line into t; 0 if the line has no more. */
int lg__lex_tok(lg__lex *lx, lg__tok *t);

/* Records "<path>:<line>: <message>" (the current line) and returns s. */
lg_status lg__lex_error(const lg__lex *lx, lg_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Writes a printable, quoted and shortened copy of t into buf (for messages);
 * returns buf. */
const char *lg__tok_quote(const lg__tok *t, char *buf, size_t cap);

/* Parses t as a decimal integer (optional sign, digits only) into *v.
 * LG_EPARSE if it is not one, LG_ERANGE beyond 64 bits; the message names
 * `what`, the token and the current line. */
lg_status lg__lex_int(const lg__lex *lx, const lg__tok *t, const char *what, lg_idx *v);

/* Parses t as a float with strtof (correctly rounded, C locale) into *v.
 * LG_EPARSE if not a number, LG_ENUMERIC if NaN or infinite (1e999 included). */
lg_status lg__lex_float(const lg__lex *lx, const lg__tok *t, const char *what, float *v);

/* Requires the current line to have no further token: LG_EPARSE naming the
 * first extra one otherwise. */
lg_status lg__lex_eol(lg__lex *lx, const char *what);

/* Number of lines of f (an upper bound on its entries). O(file size). */
lg_idx lg__file_lines(const lg__file *f);

/* The length of the regular file at path and the number of its lines, as
 * lg__file_lines would count them once it is read, reading it in blocks of
 * 64 KiB without holding it. LG_EIO as lg__file_read, LG_ENOMEM.
 * O(file size) time, O(1) memory. */
lg_status lg__file_count(const char *path, size_t *len, lg_idx *lines);

/* ------------------------------------------------------------------------- */
/* Matrix Market                                                              */
/* ------------------------------------------------------------------------- */

/* The kinds of a Matrix Market banner, as bit flags so that a caller can say
 * which it accepts. */
enum {
    LG__MTX_COORDINATE = 1u << 0, /* format: (row, column[, value]) entries    */
    LG__MTX_ARRAY = 1u << 1,      /* format: every value, column-major         */
    LG__MTX_PATTERN = 1u << 2,    /* field: no values                          */
    LG__MTX_REAL = 1u << 3,       /* field: floating-point values              */
    LG__MTX_INTEGER = 1u << 4,    /* field: integer values (read as floats)    */
    LG__MTX_GENERAL = 1u << 5,    /* symmetry: every entry stored              */
    LG__MTX_SYMMETRIC = 1u << 6,  /* symmetry: lower triangle only (i >= j)    */
};

/* What the caller of lg__mtx_read accepts. */
typedef struct lg__mtx_want {
    unsigned accept;  /* OR of the LG__MTX_ kinds accepted (one of each group) */
    lg_idx rows;      /* required number of rows, or -1 for any               */
    lg_idx cols;      /* required number of columns, or -1 for any            */
    const char *rows_from; /* where the required rows come from, for messages */
    const char *what;  /* what the file holds ("the graph"), for messages    */
} lg__mtx_want;

/* A Matrix Market matrix read into memory. */
typedef struct lg__mtx {
    unsigned format;   /* LG__MTX_COORDINATE or LG__MTX_ARRAY                */
    unsigned field;    /* LG__MTX_PATTERN, LG__MTX_REAL or LG__MTX_INTEGER   */
    unsigned symmetry; /* LG__MTX_GENERAL or LG__MTX_SYMMETRIC               */
    lg_idx rows, cols; /* declared size                                       */
    lg_idx nnz;        /* coordinate: entries; array: rows * cols             */
    lg_idx size_line;  /* line number of the size line                       */
    lg_idx *i;         /* coordinate: nnz 0-based row ids, file order; else NULL */
    lg_idx *j;         /* coordinate: nnz 0-based column ids; else NULL       */
    float *x;          /* values (NULL for pattern); array: ROW-major rows x cols */
    lg__file file;     /* the file's text, kept to locate entries in messages */
} lg__mtx;

/* Reads the Matrix Market file at path into m, checking the banner against
 * want->accept, the size against want->rows/cols, every index against the size
 * (symmetric: i >= j too), the entry count, one entry per line, and finite
 * values. Blank lines may appear anywhere after the banner, `%` comments
 * between the banner and the size line. Entry counts are bounded by the file's
 * length before anything is allocated. On failure m is left empty. O(file). */
lg_status lg__mtx_read(lg__mtx *m, const char *path, const lg__mtx_want *want);

/* The most of a Matrix Market file that lg__mtx_read_header reads. */
#define LG__MTX_HEAD_MAX ((size_t)1 << 20)

/* Reads the banner and the size line alone of the Matrix Market file at path
 * into m's kinds, rows, cols and nnz, checked as lg__mtx_read checks them
 * (the entry count against the whole file's length), and m->file.len the
 * file's length; no entry is read and m holds no array or text afterwards
 * (m->file.data is NULL: nothing to free). Reads at most the
 * file's first LG__MTX_HEAD_MAX bytes: LG_EUNSUPPORTED when the header does
 * not end within them; else lg__mtx_read's errors for the header. O(header). */
lg_status lg__mtx_read_header(lg__mtx *m, const char *path, const lg__mtx_want *want);

/* Frees m's arrays and text; a zeroed m is a no-op. */
void lg__mtx_free(lg__mtx *m);

/* Line number of coordinate entry k (0-based, file order) of m, or 0 if it
 * cannot be found. O(file). */
lg_idx lg__mtx_entry_line(const lg__mtx *m, lg_idx k);

/* Compressed rows of a coordinate real/integer matrix m: p (rows+1), j and x
 * (nnz each), columns ascending within a row. Duplicate entries are LG_EPARSE
 * naming the line of the second one. O(nnz + rows), O(nnz log nnz) for rows
 * the file does not list in column order. */
lg_status lg__mtx_to_csr(const lg__mtx *m, lg_idx **p, lg_idx **j, float **x);

#endif /* LG_DATASETS_MTX_H */
