/* coll_verify.c - offline trace directory check; see coll_verify.h. */
#include "coll_verify.h"
#include "coll_store.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vctx {
    struct coll_parser *p;
    struct coll_trace *trace;           /* trace.hvt rebuilt from the verbatim messages */
    int trace_err;
    FILE *console;
    uint64_t console_bytes, console_mismatch;
    uint64_t filler_next, filler_bad;   /* HVT_TRACE_FORMAT_FILLER: counters 0, 1, 2 ... */
    uint64_t gaps_seen;                 /* after a counted gap the counters resume elsewhere */
};

static void v_msg(void *ctx, const struct hvt_msg_hdr *h, const uint8_t *pl, const uint8_t *raw)
{
    struct vctx *v = ctx;
    if (v->trace && coll_trace_msg(v->trace, h, pl, v->p->c.gap_events) < 0)
        v->trace_err = 1;
    if (h->type == HVT_MSG_TRACE) {
        struct hvt_trace_batch tb;
        memcpy(&tb, pl, sizeof tb);
        if (tb.format != HVT_TRACE_FORMAT_FILLER)
            return;
        if ((uint64_t)tb.nrecords * 8 != h->len - sizeof tb) {
            v->filler_bad++;
            return;
        }
        uint64_t gaps = v->p->c.gap_events + v->p->c.gap_msgs;
        if (gaps != v->gaps_seen && tb.nrecords) {
            v->gaps_seen = gaps;
            memcpy(&v->filler_next, pl + sizeof tb, 8);
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

/* Compare the live trace.hvt with one rebuilt from the messages: the chunk data up to the
 * checkpoint always (the header is rewritten when a file is finished), the whole file when
 * the live one is finished. */
static int compare_trace(const char *live, const char *rebuilt, uint64_t data_len, char *why, size_t n)
{
    size_t ln = 0, rn = 0;
    uint8_t *l = read_file(live, &ln), *r = read_file(rebuilt, &rn);
    int rc = 0;
    hvt_trace_footer ft;
    if (!data_len) {
        rc = l || rn > sizeof(hvt_trace_file_hdr) ? -1 : 0;
        snprintf(why, n, "state.bin has no trace data but %s", l ? "trace.hvt exists" : "the messages hold some");
    } else if (!l || !r || ln < data_len || rn < data_len) {
        rc = -1;
        snprintf(why, n, "%s is shorter than the checkpoint's %llu bytes", !l || ln < data_len ? live : rebuilt,
                 (unsigned long long)data_len);
    } else if (memcmp(l + sizeof(hvt_trace_file_hdr), r + sizeof(hvt_trace_file_hdr),
                      data_len - sizeof(hvt_trace_file_hdr))) {
        rc = -1;
        snprintf(why, n, "trace.hvt's chunks differ from the ones the messages make");
    } else if (ln > data_len + sizeof ft && (memcpy(&ft, l + ln - sizeof ft, sizeof ft),
                                           !memcmp(ft.magic, HVT_TRACE_FOOTER_MAGIC, sizeof ft.magic)) &&
               (ln != rn || memcmp(l, r, ln))) {
        rc = -1;
        snprintf(why, n, "finished trace.hvt (%zu bytes) differs from the rebuilt one (%zu bytes)", ln, rn);
    }
    free(l);
    free(r);
    return rc;
}

/* Parse every chunk file of dir in order, feeding v (and a trace rebuilt into trace_path). */
static int walk_dir(const char *dir, const struct coll_state *st, struct vctx *v, struct coll_parser *p)
{
    char path[4200];
    size_t n;
    coll_parse_init(p, NULL);
    p->have_hello = true;                      /* chunks hold sequenced messages only */
    p->hello.cpu_count = (uint16_t)st->cpu_count;
    v->p = p;
    struct coll_sink sink = { .ctx = v, .on_msg = v_msg };
    for (uint32_t c = 0; c <= st->chunk_no; c++) {
        snprintf(path, sizeof path, "%s/chunk-%06u.hvts", dir, c);
        uint8_t *b = read_file(path, &n);
        if (!b) {
            printf("verify: FAIL missing %s\n", path);
            return 1;
        }
        size_t used = 0;
        int r = coll_parse_feed(p, b, n, &used, &sink);
        free(b);
        if (r != 0 || used != n) {
            printf("verify: FAIL %s: %s\n", path, r ? p->err : "truncated message at the end");
            return 1;
        }
    }
    return 0;
}

static struct coll_state *load_state(const char *dir)
{
    char path[4200];
    size_t n;
    snprintf(path, sizeof path, "%s/state.bin", dir);
    struct coll_state *st = (struct coll_state *)read_file(path, &n);
    if (!st || n != sizeof *st || st->magic != COLL_STATE_MAGIC || st->version != COLL_STATE_VERSION) {
        printf("verify: FAIL %s: no valid state.bin (version %u)\n", dir, COLL_STATE_VERSION);
        free(st);
        return NULL;
    }
    return st;
}

int coll_rebuild_trace(const char *dir)
{
    struct coll_state *st = load_state(dir);
    if (!st)
        return 1;
    static struct coll_parser p;
    static struct coll_trace t;
    struct vctx v = { .trace = &t };
    char path[4200], err[300];
    snprintf(path, sizeof path, "%s/%s", dir, COLL_TRACE_FILE);
    int rc = coll_trace_open(&t, path, st->cpu_count, NULL, COLL_TRACE_LEVEL, err, sizeof err) < 0 ||
             walk_dir(dir, st, &v, &p) != 0;
    if (coll_trace_close(&t) < 0 || v.trace_err)
        rc = 1;
    if (rc)
        printf("rebuild: FAIL %s %s\n", path, t.msg);
    else
        printf("rebuild: ok %s batches=%llu bad_batches=%llu gaps=%llu\n", path,
               (unsigned long long)t.st.batches, (unsigned long long)t.st.bad_batches,
               (unsigned long long)t.st.gaps);
    free(st);
    return rc;
}

int coll_verify_dir(const char *dir)
{
    char path[4200], tpath[4300], why[300];
    struct coll_state *st = load_state(dir);
    if (!st)
        return 1;
    static struct coll_parser p;
    static struct coll_trace t;
    struct vctx v = { .trace = &t };
    snprintf(tpath, sizeof tpath, "%s/%s.verify", dir, COLL_TRACE_FILE);
    if (coll_trace_open(&t, tpath, st->cpu_count, NULL, COLL_TRACE_LEVEL, why, sizeof why) < 0) {
        printf("verify: FAIL %s\n", why);
        free(st);
        return 1;
    }
    snprintf(path, sizeof path, "%s/console.log", dir);
    v.console = fopen(path, "rb");
    int rc = walk_dir(dir, st, &v, &p);
    uint64_t rebuilt_len = t.w ? tcw_data_len(t.w) : 0;
    if (coll_trace_close(&t) < 0 || v.trace_err) {
        printf("verify: FAIL rebuilding the trace: %s\n", t.msg);
        rc = 1;
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
    snprintf(path, sizeof path, "%s/%s", dir, COLL_TRACE_FILE);
    if (rc == 0 && (rebuilt_len != st->trace.data_len ||
                    compare_trace(path, tpath, st->trace.data_len, why, sizeof why) != 0)) {
        if (rebuilt_len != st->trace.data_len)
            snprintf(why, sizeof why, "the messages make %llu bytes of trace, state.bin says %llu",
                     (unsigned long long)rebuilt_len, (unsigned long long)st->trace.data_len);
        printf("verify: FAIL %s: %s\n", path, why);
        rc = 1;
    }
    remove(tpath);
    /* gaps inside the chunks are counted by the parser; the first message may start later
     * than 0 (a collector that joined a boot late): that is a gap the live collector counted */
    if (rc == 0)
        printf("verify: ok messages=%llu bytes=%llu chunks=%u console_bytes=%llu gap_events=%llu "
               "gap_msgs=%llu lost_msgs=%llu filler_records=%llu trace_bytes_on_disk=%llu "
               "trace_gaps=%llu\n", (unsigned long long)k->msgs,
               (unsigned long long)k->bytes, st->chunk_no + 1, (unsigned long long)v.console_bytes,
               (unsigned long long)s->gap_events, (unsigned long long)s->gap_msgs,
               (unsigned long long)k->lost_msgs, (unsigned long long)v.filler_next,
               (unsigned long long)st->trace.data_len, (unsigned long long)st->trace.gaps);
    free(st);
    return rc;
}
