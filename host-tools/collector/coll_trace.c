/* coll_trace.c - live trace file from the stream; see coll_trace.h. */
#include "coll_trace.h"
#include "hvt_trace_format.h"
#include "trace_scan.h"
#include "trace_varint.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_HDR (sizeof(struct hvt_trace_batch) + sizeof(hvt_trace_batch_ext))

/* trace.hvt holds guest registers: 0600 before the writer (stdio, umask-bound) opens it. */
static int make_private(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int r = fchmod(fd, 0600);
    int e = errno;
    if (close(fd) < 0 && r == 0)
        return -1;
    errno = e;
    return r;
}

int coll_trace_open(struct coll_trace *t, const char *path, unsigned cpu_count,
                    const struct coll_trace_state *resume, int level, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    t->cpu_count = cpu_count;
    t->level = level;
    snprintf(t->path, sizeof t->path, "%s", path);
    if (resume)
        t->st = *resume;
    if (t->st.data_len) {
        if (make_private(t->path) < 0) {
            snprintf(err, errlen, "%s: %s", t->path, strerror(errno));
            return -1;
        }
        t->w = tcw_reopen(t->path, t->st.data_len, level, err, errlen);
        if (!t->w)
            return -1;
    } else {
        remove(t->path);                 /* a file the checkpoint does not know is not ours */
    }
    return 0;
}

static unsigned file_cpus(const struct coll_trace *t)
{
    unsigned n = t->cpu_count > t->st.meta_cpus ? t->cpu_count : t->st.meta_cpus;
    for (unsigned c = n; c < COLL_TRACE_MAX_CPUS; c++)
        if (t->st.cpu[c].chunks)
            n = c + 1;
    return n;
}

static int ensure_file(struct coll_trace *t)
{
    if (t->w)
        return 0;
    hvt_trace_file_hdr h;
    memset(&h, 0, sizeof h);
    if (make_private(t->path) < 0 || !(t->w = tcw_create(t->path, &h, t->level))) {
        snprintf(t->msg, sizeof t->msg, "cannot create %s: %s", t->path, strerror(errno));
        return -1;
    }
    t->st.data_len = tcw_data_len(t->w);
    return 0;
}

static int put_chunk(struct coll_trace *t, const hvt_trace_chunk_hdr *h, const uint8_t *raw, size_t n)
{
    if (ensure_file(t) != 0)
        return -1;
    if (tcw_chunk(t->w, h, raw, n) != 0) {
        snprintf(t->msg, sizeof t->msg, "%s", tcw_error(t->w) ? tcw_error(t->w) : "write failed");
        return -1;
    }
    return 0;
}

/* One GAP marker on every CPU: which CPUs lost records in the missing bytes is unknown. */
static int write_gaps(struct coll_trace *t)
{
    uint8_t rec[1 + 2 * HVT_VARINT_MAX], *p = rec;
    *p++ = HVT_TAG_MARKER | HVT_MARK_GAP;
    p = tv_put(p, 0);                    /* lost records: unknown */
    p = tv_put(p, 0);                    /* lost instructions: unknown */
    unsigned n = file_cpus(t);
    if (n > COLL_TRACE_MAX_CPUS)
        n = COLL_TRACE_MAX_CPUS;
    for (unsigned c = 0; c < n; c++) {
        struct coll_trace_cpu *k = &t->st.cpu[c];
        hvt_trace_chunk_hdr h = { .kind = HVT_CHUNK_RECORDS, .cpu = (uint16_t)c, .nrecords = 1,
                                  .first_tsc = k->last_tsc, .last_tsc = k->last_tsc };
        if (put_chunk(t, &h, rec, (size_t)(p - rec)) != 0)
            return -1;
        k->records++;
        k->chunks++;
        if (k->window == COLL_WIN_OPEN)
            k->window = COLL_WIN_UNKNOWN;
    }
    t->st.gaps++;
    return 0;
}

unsigned coll_trace_open_windows(const struct coll_trace *t)
{
    unsigned n = 0;
    for (unsigned c = 0; c < COLL_TRACE_MAX_CPUS; c++)
        n += t->st.cpu[c].window == COLL_WIN_OPEN;
    return n;
}

bool coll_trace_finished(const struct coll_trace *t) { return !t->w || tcw_finished(t->w); }

int coll_trace_finish(struct coll_trace *t)
{
    if (!t->w || tcw_finished(t->w))
        return 0;
    hvt_trace_file_hdr h;
    memset(&h, 0, sizeof h);
    h.ncpus = file_cpus(t);
    h.lstar = t->st.lstar;
    if (tcw_finish(t->w, &h) != 0) {
        snprintf(t->msg, sizeof t->msg, "%s", tcw_error(t->w));
        return -1;
    }
    return 0;
}

/* Refuse a batch: say why (with its stream position), count it, and leave a GAP instead. */
static int refuse(struct coll_trace *t, const struct hvt_msg_hdr *h, const char *why)
{
    char w[200];
    snprintf(w, sizeof w, "%s", why);
    t->st.bad_batches++;
    if (write_gaps(t) != 0)
        return -1;
    snprintf(t->msg, sizeof t->msg, "trace batch at stream offset %llu (cpu %u) refused: %s; "
             "a GAP marks it in %s", (unsigned long long)h->off, h->cpu, w, COLL_TRACE_FILE);
    return 1;
}

static int on_records(struct coll_trace *t, const struct hvt_msg_hdr *h, const struct hvt_trace_batch *b,
                      const hvt_trace_batch_ext *x, const uint8_t *raw, size_t n)
{
    char why[160], serr[100];
    ts_summary s;
    if (h->cpu >= COLL_TRACE_MAX_CPUS)
        return refuse(t, h, "CPU beyond what a trace file holds");
    if (ts_scan_records(raw, n, &s, serr, sizeof serr) != 0) {
        snprintf(why, sizeof why, "malformed records (%s)", serr);
        return refuse(t, h, why);
    }
    if (s.records != b->nrecords || s.insns != x->ninsns) {
        snprintf(why, sizeof why, "header says %u records / %u instructions, payload holds %u / %u",
                 b->nrecords, x->ninsns, s.records, s.insns);
        return refuse(t, h, why);
    }
    /* ids must come from earlier CODE batches - unless a gap may have swallowed those */
    if (!t->st.gaps && s.code_ids_end > t->st.code_next) {
        snprintf(why, sizeof why, "uses code id %llu, only %u defined",
                 (unsigned long long)s.code_ids_end - 1, t->st.code_next);
        return refuse(t, h, why);
    }
    hvt_trace_chunk_hdr c = { .kind = HVT_CHUNK_RECORDS, .cpu = h->cpu, .nrecords = b->nrecords,
                              .ninsns = x->ninsns, .first_tsc = b->first_tsc, .last_tsc = x->last_tsc };
    if (put_chunk(t, &c, raw, n) != 0)
        return -1;
    struct coll_trace_cpu *k = &t->st.cpu[h->cpu];
    k->records += b->nrecords;
    k->insns += x->ninsns;
    k->chunks++;
    k->raw_bytes += n;
    k->last_tsc = x->last_tsc;
    k->windows += s.starts;
    if (s.last_window)
        k->window = s.last_window > 0 ? COLL_WIN_OPEN : COLL_WIN_CLOSED;
    return 0;
}

static int on_code(struct coll_trace *t, const struct hvt_msg_hdr *h, const struct hvt_trace_batch *b,
                   const hvt_trace_batch_ext *x, const uint8_t *raw, size_t n)
{
    char why[160], serr[100];
    uint32_t entries;
    if (ts_scan_code(raw, n, &entries, serr, sizeof serr) != 0) {
        snprintf(why, sizeof why, "malformed code entries (%s)", serr);
        return refuse(t, h, why);
    }
    if (entries != b->nrecords) {
        snprintf(why, sizeof why, "header says %u code entries, payload holds %u", b->nrecords, entries);
        return refuse(t, h, why);
    }
    if (x->first_code_id != t->st.code_next && !(t->st.gaps && x->first_code_id > t->st.code_next)) {
        snprintf(why, sizeof why, "code ids start at %u, expected %u", x->first_code_id, t->st.code_next);
        return refuse(t, h, why);
    }
    int rc = 0;
    if (x->first_code_id != t->st.code_next) {
        /* after a gap: the dictionary has a hole readers will refuse; say so, keep the data */
        snprintf(t->msg, sizeof t->msg, "code ids %u..%u were lost in a gap: %s's dictionary is "
                 "incomplete and readers will refuse it", t->st.code_next, x->first_code_id - 1,
                 COLL_TRACE_FILE);
        rc = 1;
    }
    hvt_trace_chunk_hdr c = { .kind = HVT_CHUNK_CODE, .nrecords = b->nrecords,
                              .first_code_id = x->first_code_id };
    if (put_chunk(t, &c, raw, n) != 0)
        return -1;
    t->st.code_next = x->first_code_id + entries;
    return rc;
}

static int on_trace(struct coll_trace *t, const struct hvt_msg_hdr *h, const uint8_t *pl)
{
    struct hvt_trace_batch b;
    hvt_trace_batch_ext x;
    memcpy(&b, pl, sizeof b);            /* the parser checked len >= sizeof b */
    if (b.format == HVT_TRACE_FORMAT_FILLER) {
        t->st.filler_batches++;
        return 0;
    }
    t->st.batches++;
    if (b.format != HVT_BATCH_RECORDS && b.format != HVT_BATCH_CODE) {
        char why[64];
        snprintf(why, sizeof why, "unknown record format %u", b.format);
        return refuse(t, h, why);
    }
    if (h->len < BATCH_HDR)
        return refuse(t, h, "shorter than its batch header and extension");
    if (h->len - BATCH_HDR > HVT_CHUNK_RAW_MAX)
        return refuse(t, h, "payload larger than a chunk may be");
    memcpy(&x, pl + sizeof b, sizeof x);
    const uint8_t *raw = pl + BATCH_HDR;
    size_t n = h->len - BATCH_HDR;
    int rc = b.format == HVT_BATCH_RECORDS ? on_records(t, h, &b, &x, raw, n) : on_code(t, h, &b, &x, raw, n);
    if (rc >= 0 && !coll_trace_open_windows(t) && coll_trace_finish(t) != 0)
        return -1;
    return rc;
}

/* META: key=value lines; the trace file wants lstar (hex) and cpus (decimal). */
static void on_meta(struct coll_trace *t, const uint8_t *pl, size_t n)
{
    char line[128];
    size_t i = 0;
    while (i < n) {
        size_t l = 0;
        while (i < n && pl[i] != '\n') {
            if (l < sizeof line - 1)
                line[l++] = (char)pl[i];
            i++;
        }
        i++;
        line[l] = 0;
        if (!strncmp(line, "lstar=", 6))
            t->st.lstar = strtoull(line + 6, NULL, 16);
        else if (!strncmp(line, "cpus=", 5)) {
            unsigned long c = strtoul(line + 5, NULL, 10);
            if (c <= UINT16_MAX)
                t->st.meta_cpus = (uint32_t)c;
        }
    }
}

int coll_trace_msg(struct coll_trace *t, const struct hvt_msg_hdr *h, const uint8_t *pl, uint64_t gap_events)
{
    t->msg[0] = 0;
    if (gap_events != t->st.gap_seen) {  /* messages went missing before this one */
        t->st.gap_seen = gap_events;
        if (write_gaps(t) != 0)
            return -1;
    }
    switch (h->type) {
    case HVT_MSG_TRACE:
        return on_trace(t, h, pl);
    case HVT_MSG_META:
        on_meta(t, pl, h->len);
        return 0;
    case HVT_MSG_LOSS: {
        struct hvt_loss l;
        memcpy(&l, pl, sizeof l);        /* the parser checked the length */
        if (l.msg_type == HVT_MSG_TRACE || l.msg_type == 0)  /* 0: the hypervisor did not say */
            return write_gaps(t);
        return 0;
    }
    case HVT_MSG_BYE:
    case HVT_MSG_PANIC:              /* the hypervisor's last words: BYE follows if it can */
        return coll_trace_finish(t);
    }
    return 0;
}

int coll_trace_sync(struct coll_trace *t, bool fsync, struct coll_trace_state *out)
{
    if (t->w) {
        if (tcw_flush(t->w, fsync) != 0) {
            snprintf(t->msg, sizeof t->msg, "%s", tcw_error(t->w));
            return -1;
        }
        t->st.data_len = tcw_data_len(t->w);
    }
    if (out)
        *out = t->st;
    return 0;
}

int coll_trace_close(struct coll_trace *t)
{
    if (!t->w)
        return 0;
    int rc = coll_trace_finish(t);
    if (tcw_close(t->w) != 0)
        rc = -1;
    t->w = NULL;
    return rc;
}

void coll_trace_abandon(struct coll_trace *t)
{
    if (t->w && tcw_close(t->w) != 0) { /* a failed store: the restart cuts the file back */ }
    t->w = NULL;
}
