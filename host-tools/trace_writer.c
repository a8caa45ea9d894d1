/* trace_writer: see trace_writer.h. */
#include "trace_writer.h"
#include "trace_varint.h"
#include "trace_chunkw.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    TW_MAX_CPUS = 256,
    TW_CHUNK_TARGET = HVT_CHUNK_RAW_MAX / 4, /* cut chunks at 1 MiB raw */
    TW_RECORD_MAX = 1 + 5 * HVT_VARINT_MAX + HVT_NREGS * HVT_VARINT_MAX + HVT_COMM_MAX + 4,
    TW_DICT_BITS = 20,
};

typedef struct {
    uint8_t *buf;
    size_t len;
    uint32_t nrecords, ninsns;
    uint64_t first_tsc, tsc, tick, expected_rip, cr3;
    uint64_t regs[HVT_NREGS];
    struct { uint64_t rip; uint32_t id; } pred[HVT_PRED_SLOTS]; /* id + 1; 0 = empty. One line per slot */
    int active;
    /* the last SWITCH, restated as CONTEXT at the start of the next chunk */
    int have_task, need_context;
    uint64_t pid, tgid, task_cr3;
    char comm[HVT_COMM_MAX + 1];
} tw_cpu;

#define TW_FNV_OFFSET 0xcbf29ce484222325ull
#define TW_FNV_PRIME 0x100000001b3ull

typedef struct { uint32_t id_plus1; uint8_t len; uint8_t bytes[HVT_CODE_MAX]; } tw_dict_slot;

struct tw_writer {
    tcw *cw;            /* the chunk layer: file header, chunks, index, footer */
    hvt_trace_file_hdr hdr;
    int err;
    tw_cpu *cpus[TW_MAX_CPUS];
    tw_dict_slot *dict; /* open addressing, 1 << TW_DICT_BITS slots, grows */
    uint32_t dict_bits, dict_used, next_id;
    uint8_t *code_buf;  /* pending CODE chunk */
    size_t code_len;
    uint32_t code_first, code_count;
    size_t chunk_target; /* cut chunks at this many raw bytes */
};

static void emit_chunk(tw_writer *w, hvt_trace_chunk_hdr *h, const uint8_t *raw, size_t raw_len)
{
    if (!w->err && tcw_chunk(w->cw, h, raw, raw_len) != 0) w->err = 1;
}

static void flush_code(tw_writer *w)
{
    if (!w->code_count) return;
    hvt_trace_chunk_hdr h = {0};
    h.kind = HVT_CHUNK_CODE;
    h.nrecords = w->code_count;
    h.first_code_id = w->code_first;
    emit_chunk(w, &h, w->code_buf, w->code_len);
    w->code_len = 0;
    w->code_count = 0;
    w->code_first = w->next_id;
}

static void reset_state(tw_cpu *c)
{
    c->expected_rip = 0;
    c->cr3 = 0;
    c->tick = 1;
    memset(c->regs, 0, sizeof c->regs);
    memset(c->pred, 0, sizeof c->pred);
}

static void flush_cpu(tw_writer *w, unsigned cpu)
{
    tw_cpu *c = w->cpus[cpu];
    if (!c || !c->len) return;
    flush_code(w); /* ids used by this chunk must be on disk first */
    hvt_trace_chunk_hdr h = {0};
    h.kind = HVT_CHUNK_RECORDS;
    h.cpu = (uint16_t)cpu;
    h.nrecords = c->nrecords;
    h.ninsns = c->ninsns;
    h.first_tsc = c->first_tsc;
    h.last_tsc = c->tsc;
    emit_chunk(w, &h, c->buf, c->len);
    c->len = 0;
    c->nrecords = c->ninsns = 0;
    c->first_tsc = c->tsc;
    reset_state(c);
    c->need_context = c->have_task;
}

static uint8_t *put_task(uint8_t *p, uint64_t pid, uint64_t tgid, const char *comm, uint64_t cr3)
{
    p = tv_put(tv_put(p, pid), tgid);
    size_t l = strnlen(comm, HVT_COMM_MAX);
    *p++ = (uint8_t)l;
    memcpy(p, comm, l);
    return tv_put(p + l, cr3);
}

/* First record of a chunk: restate the current task (see HVT_MARK_CONTEXT). */
static void restate(tw_cpu *c)
{
    if (!c->need_context) return;
    c->need_context = 0;
    uint8_t *p = c->buf + c->len;
    *p++ = HVT_TAG_MARKER | HVT_MARK_CONTEXT;
    p = put_task(p, c->pid, c->tgid, c->comm, c->task_cr3);
    c->len = (size_t)(p - c->buf);
    c->nrecords++;
}

tw_writer *tw_open(const char *path, const hvt_trace_file_hdr *hdr, int zstd_level)
{
    tw_writer *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->hdr = *hdr;
    w->cw = tcw_create(path, hdr, zstd_level);
    w->chunk_target = TW_CHUNK_TARGET;
    w->dict_bits = TW_DICT_BITS;
    w->dict = calloc((size_t)1 << w->dict_bits, sizeof *w->dict);
    w->code_buf = malloc(TW_CHUNK_TARGET + 16);
    if (!w->cw || !w->dict || !w->code_buf) {
        if (w->cw) tcw_close(w->cw);
        free(w->dict);
        free(w->code_buf);
        free(w);
        return NULL;
    }
    return w;
}

static tw_cpu *get_cpu(tw_writer *w, unsigned cpu)
{
    if (w->err || cpu >= TW_MAX_CPUS) return NULL;
    tw_cpu *c = w->cpus[cpu];
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c || !(c->buf = malloc(TW_CHUNK_TARGET + TW_RECORD_MAX))) {
            free(c);
            w->err = 1;
            return NULL;
        }
        reset_state(c);
        w->cpus[cpu] = c;
    }
    return c;
}

static uint64_t dict_hash(const uint8_t *b, uint8_t len)
{
    uint64_t h = TW_FNV_OFFSET ^ len; /* FNV-1a */
    for (uint8_t i = 0; i < len; i++) h = (h ^ b[i]) * TW_FNV_PRIME;
    return h ^ (h >> 29);
}

static int dict_grow(tw_writer *w);

static int code_id(tw_writer *w, const uint8_t *b, uint8_t len, uint32_t *id)
{
    size_t mask = ((size_t)1 << w->dict_bits) - 1;
    for (size_t i = dict_hash(b, len) & mask;; i = (i + 1) & mask) {
        tw_dict_slot *s = &w->dict[i];
        if (!s->id_plus1) {
            s->id_plus1 = ++w->next_id;
            s->len = len;
            memcpy(s->bytes, b, len);
            *id = s->id_plus1 - 1;
            w->code_buf[w->code_len++] = len;
            memcpy(w->code_buf + w->code_len, b, len);
            w->code_len += len;
            w->code_count++;
            if (w->code_len >= w->chunk_target) flush_code(w);
            if (++w->dict_used * 2 > mask) return dict_grow(w);
            return 0;
        }
        if (s->len == len && memcmp(s->bytes, b, len) == 0) {
            *id = s->id_plus1 - 1;
            return 0;
        }
    }
}

static int dict_grow(tw_writer *w)
{
    size_t old_n = (size_t)1 << w->dict_bits;
    tw_dict_slot *old = w->dict;
    w->dict_bits++;
    size_t mask = ((size_t)1 << w->dict_bits) - 1;
    w->dict = calloc(mask + 1, sizeof *w->dict);
    if (!w->dict) { w->dict = old; w->dict_bits--; w->err = 1; return -1; }
    for (size_t j = 0; j < old_n; j++) {
        if (!old[j].id_plus1) continue;
        size_t i = dict_hash(old[j].bytes, old[j].len) & mask;
        while (w->dict[i].id_plus1) i = (i + 1) & mask;
        w->dict[i] = old[j];
    }
    free(old);
    return 0;
}

static void after_record(tw_writer *w, unsigned cpu, tw_cpu *c)
{
    c->nrecords++;
    if (c->len >= w->chunk_target) flush_cpu(w, cpu);
}

int tw_insn_add(tw_writer *w, unsigned cpu, const tw_insn *in)
{
    tw_cpu *c = get_cpu(w, cpu);
    if (!c || in->code_len == 0 || in->code_len > HVT_CODE_MAX) return -1;
    if (!c->active) {
        c->active = 1;
        c->first_tsc = c->tsc = in->tsc - 1; /* so the first record's tick stays 1 if possible */
    }
    uint32_t id;
    if (code_id(w, in->code, in->code_len, &id) != 0) return -1;
    restate(c);
    uint8_t *p0 = c->buf + c->len, *p = p0 + 1;
    uint8_t tag = 0;
    if (in->rip != c->expected_rip) {
        tag |= HVT_INSN_RIP;
        p = tv_put(p, tv_zig((int64_t)(in->rip - c->expected_rip)));
    }
    uint32_t slot = HVT_PRED_SLOT(in->rip);
    if (!(c->pred[slot].id == id + 1 && c->pred[slot].rip == in->rip)) {
        tag |= HVT_INSN_CODE;
        p = tv_put(p, id);
    }
    if (in->cr3 != c->cr3) {
        tag |= HVT_INSN_CR3;
        p = tv_put(p, in->cr3);
        c->cr3 = in->cr3;
    }
    uint64_t tick = in->tsc - c->tsc;
    if (tick != c->tick) {
        tag |= HVT_INSN_TICK;
        p = tv_put(p, tick);
        c->tick = tick;
    }
    uint32_t mask = 0;
    for (int r = 0; r < HVT_REG_RFLAGS; r++)
        if (in->regs[r] != c->regs[r]) mask |= 1u << r;
    if (mask) {
        tag |= HVT_INSN_REGS;
        p = tv_put(p, mask);
        for (int r = 0; r < HVT_REG_RFLAGS; r++)
            if (mask & (1u << r)) {
                p = tv_put(p, tv_zig((int64_t)(in->regs[r] - c->regs[r])));
                c->regs[r] = in->regs[r];
            }
    }
    if (in->regs[HVT_REG_RFLAGS] != c->regs[HVT_REG_RFLAGS]) {   /* RFLAGS alone (version 2) */
        tag |= HVT_INSN_RFLAGS;
        p = tv_put(p, tv_zig((int64_t)(in->regs[HVT_REG_RFLAGS] - c->regs[HVT_REG_RFLAGS])));
        c->regs[HVT_REG_RFLAGS] = in->regs[HVT_REG_RFLAGS];
    }
    *p0 = tag;
    c->len += (size_t)(p - p0);
    c->tsc = in->tsc;
    c->expected_rip = in->rip + in->code_len;
    c->pred[slot].rip = in->rip;
    c->pred[slot].id = id + 1;
    c->ninsns++;
    after_record(w, cpu, c);
    return w->err ? -1 : 0;
}

/* Markers: build into the CPU buffer. */
static uint8_t *mark_begin(tw_writer *w, unsigned cpu, tw_cpu **cp, uint8_t type)
{
    tw_cpu *c = get_cpu(w, cpu);
    if (!c) return NULL;
    *cp = c;
    if (type != HVT_MARK_SWITCH) restate(c);
    else c->need_context = 0;
    uint8_t *p = c->buf + c->len;
    *p++ = HVT_TAG_MARKER | type;
    return p;
}
static int mark_end(tw_writer *w, unsigned cpu, tw_cpu *c, uint8_t *p)
{
    c->len = (size_t)(p - c->buf);
    after_record(w, cpu, c);
    return w->err ? -1 : 0;
}

int tw_event(tw_writer *w, unsigned cpu, uint8_t vector, uint8_t type, int64_t errcode)
{
    tw_cpu *c;
    uint8_t *p = mark_begin(w, cpu, &c, HVT_MARK_EVENT);
    if (!p) return -1;
    *p++ = vector;
    *p++ = type;
    p = tv_put(p, errcode < 0 ? 0 : (uint64_t)errcode + 1);
    return mark_end(w, cpu, c, p);
}

int tw_syscall(tw_writer *w, unsigned cpu, uint64_t nr)
{
    tw_cpu *c;
    uint8_t *p = mark_begin(w, cpu, &c, HVT_MARK_SYSCALL);
    if (!p) return -1;
    return mark_end(w, cpu, c, tv_put(p, nr));
}

int tw_vmexit(tw_writer *w, unsigned cpu, uint64_t reason, uint64_t qual)
{
    tw_cpu *c;
    uint8_t *p = mark_begin(w, cpu, &c, HVT_MARK_VMEXIT);
    if (!p) return -1;
    return mark_end(w, cpu, c, tv_put(tv_put(p, reason), qual));
}

int tw_switch(tw_writer *w, unsigned cpu, uint64_t pid, uint64_t tgid, const char *comm, uint64_t cr3)
{
    tw_cpu *c;
    uint8_t *p = mark_begin(w, cpu, &c, HVT_MARK_SWITCH);
    if (!p) return -1;
    p = put_task(p, pid, tgid, comm, cr3);
    c->have_task = 1;
    c->pid = pid;
    c->tgid = tgid;
    c->task_cr3 = cr3;
    snprintf(c->comm, sizeof c->comm, "%.*s", HVT_COMM_MAX, comm);
    return mark_end(w, cpu, c, p);
}

int tw_startstop(tw_writer *w, unsigned cpu, int start, uint64_t reason)
{
    tw_cpu *c;
    uint8_t *p = mark_begin(w, cpu, &c, start ? HVT_MARK_START : HVT_MARK_STOP);
    if (!p) return -1;
    return mark_end(w, cpu, c, tv_put(p, reason));
}

int tw_gap(tw_writer *w, unsigned cpu, uint64_t lost_records, uint64_t lost_insns)
{
    tw_cpu *c;
    uint8_t *p = mark_begin(w, cpu, &c, HVT_MARK_GAP);
    if (!p) return -1;
    int rc = mark_end(w, cpu, c, tv_put(tv_put(p, lost_records), lost_insns));
    reset_state(c);
    return rc;
}

int tw_time(tw_writer *w, unsigned cpu, uint64_t tsc)
{
    tw_cpu *c;
    uint8_t *p = mark_begin(w, cpu, &c, HVT_MARK_TIME);
    if (!p) return -1;
    if (!c->active) { c->active = 1; c->first_tsc = tsc; }
    c->tsc = tsc;
    return mark_end(w, cpu, c, tv_put(p, tsc));
}

void tw_set_chunk_bytes(tw_writer *w, size_t bytes)
{
    w->chunk_target = bytes && bytes < TW_CHUNK_TARGET ? bytes : TW_CHUNK_TARGET;
}

int tw_close(tw_writer *w)
{
    if (!w) return -1;
    for (unsigned i = 0; i < TW_MAX_CPUS; i++) flush_cpu(w, i);
    flush_code(w);
    if (!w->err && tcw_finish(w->cw, &w->hdr) != 0) w->err = 1;
    if (w->err && tcw_error(w->cw)) fprintf(stderr, "trace_writer: %s\n", tcw_error(w->cw));
    int rc = w->err ? -1 : 0;
    if (tcw_close(w->cw) != 0) rc = -1;
    for (unsigned i = 0; i < TW_MAX_CPUS; i++)
        if (w->cpus[i]) { free(w->cpus[i]->buf); free(w->cpus[i]); }
    free(w->dict);
    free(w->code_buf);
    free(w);
    return rc;
}
