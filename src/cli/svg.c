/* The tiny SVG writer of the CLI (see svg.h). */
#include <math.h>
#include <string.h>

#include "cli/svg.h"

void lg_svg_num(FILE *f, double v) {
    char b[64];
    if (!isfinite(v)) v = 0;
    snprintf(b, sizeof b, "%.2f", v);
    char *dot = strchr(b, '.');
    if (dot) {
        char *e = b + strlen(b) - 1;
        while (e > dot && *e == '0') *e-- = 0;
        if (e == dot) *e = 0;
    }
    if (!strcmp(b, "-0")) strcpy(b, "0");
    fputs(b, f);
}

/* Length of the valid UTF-8 sequence starting at p (1..4), or 0 if invalid. */
static int lg__utf8_len(const unsigned char *p) {
    unsigned c = p[0];
    int n;
    unsigned min;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) { n = 2; min = 0x80; }
    else if (c >= 0xe0 && c <= 0xef) { n = 3; min = 0x800; }
    else if (c >= 0xf0 && c <= 0xf4) { n = 4; min = 0x10000; }
    else return 0;
    unsigned cp = c & (0x3fu >> (n - 1));
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 0; /* also stops at the terminating NUL */
        cp = (cp << 6) | (p[i] & 0x3fu);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp == 0xfffe || cp == 0xffff) return 0;
    return n;
}

void lg_svg_escape(FILE *f, const char *s) {
    if (!s) return;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        switch (*p) {
        case '&': fputs("&amp;", f); p++; continue;
        case '<': fputs("&lt;", f); p++; continue;
        case '>': fputs("&gt;", f); p++; continue;
        case '"': fputs("&quot;", f); p++; continue;
        case '\'': fputs("&apos;", f); p++; continue;
        default: break;
        }
        if (*p < 0x20 && *p != '\t' && *p != '\n') { fputc('?', f); p++; continue; }
        int n = lg__utf8_len(p);
        if (!n) { fputc('?', f); p++; continue; }
        fwrite(p, 1, (size_t)n, f);
        p += n;
    }
}

static void lg__attrs(FILE *f, const char *attrs) {
    if (attrs && *attrs) { fputc(' ', f); fputs(attrs, f); }
}

void lg_svg_begin(FILE *f, double width, double height, const char *font) {
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"", f);
    lg_svg_num(f, width);
    fputs("\" height=\"", f);
    lg_svg_num(f, height);
    fputs("\" viewBox=\"0 0 ", f);
    lg_svg_num(f, width);
    fputc(' ', f);
    lg_svg_num(f, height);
    fputs("\" font-family=\"", f);
    lg_svg_escape(f, font ? font : "sans-serif");
    fputs("\">\n", f);
    lg_svg_rect(f, 0, 0, width, height, "#ffffff", NULL);
}

void lg_svg_end(FILE *f) { fputs("</svg>\n", f); }

void lg_svg_group_begin(FILE *f, const char *attrs) {
    fputs("<g", f);
    lg__attrs(f, attrs);
    fputs(">\n", f);
}

void lg_svg_group_end(FILE *f) { fputs("</g>\n", f); }

void lg_svg_rect(FILE *f, double x, double y, double w, double h, const char *fill, const char *attrs) {
    lg_svg_rect_title(f, x, y, w, h, fill, attrs, NULL);
}

void lg_svg_rect_title(FILE *f, double x, double y, double w, double h, const char *fill, const char *attrs,
                       const char *title) {
    fputs("<rect", f);
    lg__attrs(f, attrs);
    fputs(" x=\"", f);
    lg_svg_num(f, x);
    fputs("\" y=\"", f);
    lg_svg_num(f, y);
    fputs("\" width=\"", f);
    lg_svg_num(f, w < 0 ? 0 : w);
    fputs("\" height=\"", f);
    lg_svg_num(f, h < 0 ? 0 : h);
    fputs("\" fill=\"", f);
    lg_svg_escape(f, fill ? fill : "none");
    if (!title) {
        fputs("\"/>\n", f);
        return;
    }
    fputs("\"><title>", f);
    lg_svg_escape(f, title);
    fputs("</title></rect>\n", f);
}

void lg_svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke, double width,
                 const char *attrs) {
    fputs("<line", f);
    lg__attrs(f, attrs);
    fputs(" x1=\"", f);
    lg_svg_num(f, x1);
    fputs("\" y1=\"", f);
    lg_svg_num(f, y1);
    fputs("\" x2=\"", f);
    lg_svg_num(f, x2);
    fputs("\" y2=\"", f);
    lg_svg_num(f, y2);
    fputs("\" stroke=\"", f);
    lg_svg_escape(f, stroke ? stroke : "#000000");
    fputs("\" stroke-width=\"", f);
    lg_svg_num(f, width);
    fputs("\"/>\n", f);
}

void lg_svg_polyline(FILE *f, const double *x, const double *y, size_t n, const char *stroke, double width,
                     const char *attrs) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) k += isfinite(x[i]) && isfinite(y[i]);
    if (k < 2) return;
    fputs("<polyline", f);
    lg__attrs(f, attrs);
    fputs(" fill=\"none\" stroke=\"", f);
    lg_svg_escape(f, stroke ? stroke : "#000000");
    fputs("\" stroke-width=\"", f);
    lg_svg_num(f, width);
    fputs("\" points=\"", f);
    const char *sep = "";
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]) || !isfinite(y[i])) continue;
        fputs(sep, f);
        lg_svg_num(f, x[i]);
        fputc(',', f);
        lg_svg_num(f, y[i]);
        sep = " ";
    }
    fputs("\"/>\n", f);
}

void lg_svg_circle(FILE *f, double cx, double cy, double r, const char *fill, const char *stroke,
                   const char *attrs) {
    fputs("<circle", f);
    lg__attrs(f, attrs);
    fputs(" cx=\"", f);
    lg_svg_num(f, cx);
    fputs("\" cy=\"", f);
    lg_svg_num(f, cy);
    fputs("\" r=\"", f);
    lg_svg_num(f, r < 0 ? 0 : r);
    fputs("\" fill=\"", f);
    lg_svg_escape(f, fill ? fill : "none");
    fputs("\" stroke=\"", f);
    lg_svg_escape(f, stroke ? stroke : "none");
    if (stroke) fputs("\" stroke-width=\"1", f);
    fputs("\"/>\n", f);
}

void lg_svg_text(FILE *f, double x, double y, double size, const char *anchor, const char *attrs,
                 const char *text) {
    fputs("<text", f);
    lg__attrs(f, attrs);
    fputs(" x=\"", f);
    lg_svg_num(f, x);
    fputs("\" y=\"", f);
    lg_svg_num(f, y);
    fputs("\" font-size=\"", f);
    lg_svg_num(f, size);
    fputs("\" text-anchor=\"", f);
    lg_svg_escape(f, anchor ? anchor : "start");
    fputs("\">", f);
    lg_svg_escape(f, text);
    fputs("</text>\n", f);
}

/* viridis (matplotlib) sampled at t = 0, 1/8, ..., 1 */
static const unsigned char lg__viridis[9][3] = {
    {0x44, 0x01, 0x54}, {0x47, 0x2c, 0x7a}, {0x3b, 0x51, 0x8b}, {0x2c, 0x71, 0x8e}, {0x21, 0x90, 0x8d},
    {0x27, 0xad, 0x81}, {0x5c, 0xc8, 0x63}, {0xaa, 0xdc, 0x32}, {0xfd, 0xe7, 0x25},
};

void lg_svg_viridis(double t, char out[8]) {
    if (!(t > 0)) t = 0; /* also NaN */
    if (t > 1) t = 1;
    double s = t * 8;
    int i = (int)s;
    if (i > 7) i = 7;
    double u = s - i;
    int c[3];
    for (int k = 0; k < 3; k++) {
        double v = lg__viridis[i][k] + u * (lg__viridis[i + 1][k] - lg__viridis[i][k]);
        c[k] = (int)lround(v);
        if (c[k] < 0) c[k] = 0;
        if (c[k] > 255) c[k] = 255;
    }
    snprintf(out, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}
