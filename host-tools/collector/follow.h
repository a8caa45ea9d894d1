/* follow: the messages a collector stores in a boot directory (chunk-NNNNNN.hvts, index.tsv),
 * read in stream order while the collector is still writing them.
 * Contract: follow_open() starts at the chunk holding stream offset from_off and hands on
 * only sequenced messages at or after it, each once (a resumed stream repeats messages: they
 * are skipped by offset); follow_poll() reads what has been stored since the last call and
 * calls fn for every whole message, then returns 0 (nothing more yet) or -1 when a file is not
 * a stream of hvtrace messages (said on stderr). A chunk is left for the next only once the
 * next exists (the collector finishes one before it opens the next). */
#ifndef HVT_FOLLOW_H
#define HVT_FOLLOW_H
#include <stdint.h>
#include <stdio.h>
#include "hvt_stream.h"

typedef void (*follow_msg_fn)(void *ctx, const struct hvt_msg_hdr *h, const uint8_t *payload);

typedef struct {
    char dir[4096];
    unsigned chunk;                   /* chunk-NNNNNN.hvts being read */
    FILE *f;
    uint8_t *buf;                     /* bytes read, not yet a whole message */
    size_t len;
    uint64_t from_off;                /* messages before this offset are not ours */
    uint64_t next_off;                /* the next offset expected (duplicates after a resume) */
    uint64_t msgs;                    /* messages handed on */
} follow;

/* 0, or -1 (no memory). */
int  follow_open(follow *w, const char *dir, uint64_t from_off);
int  follow_poll(follow *w, follow_msg_fn fn, void *ctx);
void follow_close(follow *w);

#endif
