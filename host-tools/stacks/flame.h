/* flame: folded stacks and flame graphs (Brendan Gregg's format and picture), without
 * external scripts.
 * Contract:
 *  - flame_add() accumulates `count` samples of one stack given root first. Frame names are
 *    stored as given except that ';' (the folded separator) becomes ':', control characters
 *    become '?', and an empty name becomes "[unknown]", so every stack folds to one valid line.
 *  - flame_write_folded() prints one "root;...;leaf COUNT" line per distinct stack, sorted by
 *    the stack text in byte order (LC_ALL=C sort), so output is deterministic.
 *  - flame_write_svg() writes a self-contained SVG (no script, no external resources): one
 *    <g> per frame holding <title>NAME (N samples, P%)</title>, a <rect> whose width is the
 *    frame's share of all samples, and a <text> label when the frame is wide enough; an "all"
 *    frame at the bottom, callees above callers, siblings left to right in name order; colors
 *    derive from a hash of the name (same name, same color, across runs). Frames narrower
 *    than FLAME_MIN_WIDTH pixels are left out with their callees. Text is XML-escaped and
 *    invalid UTF-8 bytes are replaced, so the file always parses.
 *  - flame_read_folded() adds folded lines ("a;b;c 12"; blank lines skipped; a trailing CR
 *    accepted) from a file. Input is untrusted: a malformed line (no count, a count that is
 *    not a plain decimal integer or overflows, an empty frame, a control character, more than
 *    FLAME_MAX_DEPTH frames or FLAME_MAX_LINE bytes) fails the whole read with
 *    "NAME:LINE: message" in err and leaves the flame unchanged.
 * Functions returning int return 0 or -1; a sample total that would overflow 64 bits is an
 * error, never wrapped or saturated. */
#ifndef HVT_FLAME_H
#define HVT_FLAME_H
#include <stdint.h>
#include <stdio.h>

enum { FLAME_MAX_DEPTH = 4096, FLAME_MAX_LINE = 1 << 20 };
#define FLAME_WIDTH 1200.0   /* SVG width in pixels */
#define FLAME_MIN_WIDTH 0.1  /* frames narrower than this (pixels) are not drawn */

typedef struct flame flame;

flame *flame_new(void);
void flame_free(flame *f);
int flame_add(flame *f, const char *const *frames_root_first, int n, uint64_t count);
/* Distinct stacks and total samples so far. */
size_t flame_stacks(const flame *f);
uint64_t flame_total(const flame *f);
int flame_write_folded(const flame *f, FILE *out);
/* Calls cb for each stack in flame_write_folded's order with its folded text ("root;...;leaf",
 * frames free of ';') and count; stops at the first nonzero return (then -1). */
int flame_each(const flame *f, int (*cb)(void *ctx, const char *folded, uint64_t count), void *ctx);
int flame_write_svg(const flame *f, FILE *out, const char *title);
int flame_read_folded(flame *f, FILE *in, const char *name, char *err, size_t errlen);
#endif
