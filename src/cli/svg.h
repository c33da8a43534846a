/*
 * A tiny SVG writer for the CLI's plots (no dependency). Every function writes
 * to a caller-owned FILE; write errors are left in the stream (check ferror()
 * once at the end). Coordinates are user units, y pointing down. Text is
 * XML-escaped (& < > " ') and made valid UTF-8; `attrs` arguments are raw,
 * trusted attribute text (e.g. "class=\"cell\""), or NULL.
 */
#ifndef LG_CLI_SVG_H
#define LG_CLI_SVG_H

#include <stddef.h>
#include <stdio.h>

/* Writes the XML declaration and the opening <svg> of a width x height
 * document (viewBox 0 0 width height) with a white background and the given
 * default font family (NULL = sans-serif). */
void lg_svg_begin(FILE *f, double width, double height, const char *font);

/* Closes the document opened by lg_svg_begin. */
void lg_svg_end(FILE *f);

/* Opens / closes a <g> group with raw attributes (may be NULL). */
void lg_svg_group_begin(FILE *f, const char *attrs);
void lg_svg_group_end(FILE *f);

/* A rectangle; fill NULL = "none". */
void lg_svg_rect(FILE *f, double x, double y, double w, double h, const char *fill, const char *attrs);

/* The same with a tooltip: title (escaped) as the rectangle's <title>, which
 * viewers show on hover; NULL: none, as lg_svg_rect. */
void lg_svg_rect_title(FILE *f, double x, double y, double w, double h, const char *fill, const char *attrs,
                       const char *title);

/* A line segment of the given stroke colour and width. */
void lg_svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke, double width,
                 const char *attrs);

/* A polyline through the n points (x[i], y[i]); points with a non-finite
 * coordinate are skipped. Nothing is written when fewer than 2 points remain.
 * O(n). */
void lg_svg_polyline(FILE *f, const double *x, const double *y, size_t n, const char *stroke, double width,
                     const char *attrs);

/* A circle of centre (cx, cy) and radius r; fill and stroke NULL = "none"
 * (stroke width 1 when a stroke is given). */
void lg_svg_circle(FILE *f, double cx, double cy, double r, const char *fill, const char *stroke,
                   const char *attrs);

/* Text at (x, y) (baseline), size in user units, anchor "start", "middle" or
 * "end" (NULL = start). */
void lg_svg_text(FILE *f, double x, double y, double size, const char *anchor, const char *attrs,
                 const char *text);

/* Writes s XML-escaped: & < > " ' become entities, control characters other
 * than tab/newline and invalid UTF-8 bytes become '?'. NULL writes nothing. */
void lg_svg_escape(FILE *f, const char *s);

/* Writes a number compactly (at most 2 decimals, trailing zeros dropped;
 * non-finite values as 0). */
void lg_svg_num(FILE *f, double v);

/* The viridis colour map (perceptual, sequential; 9 stops, linear
 * interpolation in sRGB): t in [0, 1] (clamped; NaN -> 0) to "#rrggbb". */
void lg_svg_viridis(double t, char out[8]);

#endif
