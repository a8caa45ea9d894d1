/* coll_verify.c - offline trace directory check; see coll_verify.h. */
#include "coll_verify.h"
#include "coll_store.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vctx {
    FILE *console;
    uint64_t console_bytes, console_mismatch;
    uint64_t filler_next, filler_bad;   /* HVT_TRACE_FORMAT_FILLER: counters 0, 1, 2 ... */
};

static void v_msg(void *ctx, const struct hvt_msg_hdr *h, const uint8_t *pl, const uint8_t *raw)
{
    struct vctx *v = ctx;
    if (h->type == HVT_MSG_TRACE) {
        struct hvt_trace_batch tb;
        memcpy(&tb, pl, sizeof tb);
        if (tb.format != HVT_TRACE_FORMAT_FILLER)
            return;
        if ((uint64_t)tb.nrecords * 8 != h->len - sizeof tb) {
            v->filler_bad++;
            return;
        }
        for (uint32_t i = 0; i < tb.nrecords; i++) {
            uint64_t x;
            memcpy(&x, pl + sizeof tb + 8 * i, 8);
            if (x != v->filler_next)
                v->filler_bad++;
            v->filler_next = x + 1;
        }
        return;
    }
    if (h->type != HVT_MSG_CONSOLE)
        return;
    for (uint32_t i = 0; i < h->len; i++) {
        int c = v->console ? fgetc(v->console) : EOF;
        if (c != pl[i])
            v->console_mismatch++;
    }
    v->console_bytes += h->len;
}

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)sz + 1);
    *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}

int coll_verify_dir(const char *dir)
{
    char path[4200];
    size_t n;
    snprintf(path, sizeof path, "%s/state.bin", dir);
    struct coll_state *st = (struct coll_state *)read_file(path, &n);
    if (!st || n != sizeof *st || st->magic != COLL_STATE_MAGIC) {
        printf("verify: FAIL %s: no valid state.bin\n", dir);
        free(st);
        return 1;
    }
    static struct coll_parser p;
    coll_parse_init(&p, NULL);
    p.have_hello = true;                       /* chunks hold sequenced messages only */
    p.hello.cpu_count = (uint16_t)st->cpu_count;
    struct vctx v = { 0 };
    snprintf(path, sizeof path, "%s/console.log", dir);
    v.console = fopen(path, "rb");
    struct coll_sink sink = { .ctx = &v, .on_msg = v_msg };
    int rc = 0;
    for (uint32_t c = 0; c <= st->chunk_no; c++) {
        snprintf(path, sizeof path, "%s/chunk-%06u.hvts", dir, c);
        uint8_t *b = read_file(path, &n);
        if (!b) {
            printf("verify: FAIL missing %s\n", path);
            rc = 1;
            break;
        }
        size_t used = 0;
        int r = coll_parse_feed(&p, b, n, &used, &sink);
        free(b);
        if (r != 0 || used != n) {
            printf("verify: FAIL %s: %s\n", path, r ? p.err : "truncated message at the end");
            rc = 1;
            break;
        }
    }
    long extra = 0;
    if (v.console) {
        while (fgetc(v.console) != EOF)
            extra++;
        fclose(v.console);
    }
    const struct coll_counters *k = &p.c, *s = &st->c;
    if (rc == 0 && (k->msgs != s->msgs || k->bytes != s->bytes || p.next_off != st->next_off ||
                    k->gap_events != s->gap_events || k->gap_msgs != s->gap_msgs)) {
        printf("verify: FAIL totals differ from state.bin (msgs %llu/%llu, next_off %llu/%llu, "
               "gaps %llu/%llu)\n", (unsigned long long)k->msgs, (unsigned long long)s->msgs,
               (unsigned long long)p.next_off, (unsigned long long)st->next_off,
               (unsigned long long)k->gap_events, (unsigned long long)s->gap_events);
        rc = 1;
    }
    if (rc == 0 && v.filler_bad) {
        printf("verify: FAIL %llu filler records out of sequence\n", (unsigned long long)v.filler_bad);
        rc = 1;
    }
    if (rc == 0 && (v.console_mismatch || extra)) {
        printf("verify: FAIL console.log differs from the CONSOLE messages (%llu bytes differ, "
               "%ld extra)\n", (unsigned long long)v.console_mismatch, extra);
        rc = 1;
    }
    /* gaps inside the chunks are counted by the parser; the first message may start later
     * than 0 (a collector that joined a boot late): that is a gap the live collector counted */
    if (rc == 0)
        printf("verify: ok messages=%llu bytes=%llu chunks=%u console_bytes=%llu gap_events=%llu "
               "gap_msgs=%llu lost_msgs=%llu filler_records=%llu\n", (unsigned long long)k->msgs,
               (unsigned long long)k->bytes, st->chunk_no + 1, (unsigned long long)v.console_bytes,
               (unsigned long long)s->gap_events, (unsigned long long)s->gap_msgs,
               (unsigned long long)k->lost_msgs, (unsigned long long)v.filler_next);
    free(st);
    return rc;
}
