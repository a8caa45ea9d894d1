/* follow.c - a collector's stored messages, in stream order, as they are written. See follow.h. */
#include "follow.h"
#include <stdlib.h>
#include <string.h>

/* The chunk holding offset 'off' (index.tsv: chunk, first_off, bytes, messages). */
static unsigned chunk_of(const char *dir, uint64_t off)
{
    char path[4200], line[256];
    snprintf(path, sizeof path, "%s/index.tsv", dir);
    FILE *f = fopen(path, "r");
    unsigned best = 0, c;
    unsigned long long first;
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "chunk-%u.hvts\t%llu", &c, &first) == 2 && first <= off && c > best)
            best = c;
    fclose(f);
    return best;
}

static FILE *open_chunk(const follow *w, unsigned c)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/chunk-%06u.hvts", w->dir, c);
    return fopen(path, "rb");
}

int follow_open(follow *w, const char *dir, uint64_t from_off)
{
    memset(w, 0, sizeof *w);
    snprintf(w->dir, sizeof w->dir, "%s", dir);
    w->from_off = from_off;
    w->chunk = chunk_of(w->dir, from_off);
    w->buf = malloc(HVT_STREAM_MAX_PAYLOAD + sizeof(struct hvt_msg_hdr));
    return w->buf ? 0 : -1;
}

void follow_close(follow *w)
{
    if (w->f)
        fclose(w->f);
    free(w->buf);
    w->f = NULL;
    w->buf = NULL;
}

/* Whole messages of the buffer; returns -1 on a malformed header (the file is not ours). */
static int parse(follow *w, follow_msg_fn fn, void *ctx)
{
    size_t at = 0;
    while (w->len - at >= sizeof(struct hvt_msg_hdr)) {
        struct hvt_msg_hdr h;
        memcpy(&h, w->buf + at, sizeof h);
        if (h.magic != HVT_STREAM_MAGIC || h.hdr_len != sizeof h || h.len > HVT_STREAM_MAX_PAYLOAD)
            return -1;
        if (w->len - at - sizeof h < h.len)
            break;
        if (h.cpu != HVT_CPU_NONE && h.off >= w->from_off && h.off >= w->next_off) {
            w->msgs++;
            fn(ctx, &h, w->buf + at + sizeof h);
        }
        if (h.cpu != HVT_CPU_NONE && h.off >= w->next_off)
            w->next_off = h.off + sizeof h + h.len;
        at += sizeof h + h.len;
    }
    memmove(w->buf, w->buf + at, w->len - at);
    w->len -= at;
    return 0;
}

int follow_poll(follow *w, follow_msg_fn fn, void *ctx)
{
    for (;;) {
        if (!w->f && !(w->f = open_chunk(w, w->chunk)))
            return 0;                  /* not written yet */
        size_t cap = HVT_STREAM_MAX_PAYLOAD + sizeof(struct hvt_msg_hdr);
        size_t got = fread(w->buf + w->len, 1, cap - w->len, w->f);
        w->len += got;
        if (parse(w, fn, ctx) < 0) {
            fprintf(stderr, "hvt: %s/chunk-%06u.hvts: not a stream of hvtrace messages\n", w->dir, w->chunk);
            return -1;
        }
        if (got)
            continue;
        clearerr(w->f);
        /* At the end of this chunk: move on only once the next one exists (the collector
         * finishes a chunk before it opens the next), and only at a message boundary. */
        FILE *next = open_chunk(w, w->chunk + 1);
        if (!next)
            return 0;
        got = fread(w->buf + w->len, 1, cap - w->len, w->f);   /* what came meanwhile */
        w->len += got;
        if (got && parse(w, fn, ctx) < 0) {
            fclose(next);
            return -1;
        }
        fclose(w->f);
        w->f = next;
        w->chunk++;
        w->len = 0;
    }
}
