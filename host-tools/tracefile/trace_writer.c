/* trace_writer: see trace_writer.h. The records themselves are encoded by the hypervisor's own
 * encoder (trace/step/rec_enc.c): one encoder of the format. */
#include "trace_writer.h"
#include "trace_chunkw.h"
#include "rec_enc.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    TW_MAX_CPUS = 256,
    TW_CHUNK_TARGET = HVT_CHUNK_RAW_MAX / 4, /* cut chunks at 1 MiB raw */
    TW_DICT_BITS = 20,
};

typedef struct {
    uint8_t *buf;
    struct rec_enc e;   /* the chunk being built: buffer, decoder state, counts, times */
    size_t begun_len;   /* e.len right after rec_begin (a restated MODE): nothing to send yet */
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
    unsigned mode;       /* record mode and its register set (tw_set_mode) */
    uint32_t regmask;
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

/* The buffer holds a chunk target's worth and one more record of any kind (REC_MAX_BYTES):
 * records are cut at chunk_target, so the encoder never finds it full. */
#define TW_BUF_BYTES (TW_CHUNK_TARGET + REC_MAX_BYTES)

static void flush_cpu(tw_writer *w, unsigned cpu)
{
    tw_cpu *c = w->cpus[cpu];
    if (!c || c->e.len == c->begun_len) return;
    flush_code(w); /* ids used by this chunk must be on disk first */
    hvt_trace_chunk_hdr h = {0};
    h.kind = HVT_CHUNK_RECORDS;
    h.cpu = (uint16_t)cpu;
    h.nrecords = c->e.nrecords;
    h.ninsns = c->e.ninsns;
    h.first_tsc = c->e.first_tsc;
    h.last_tsc = rec_tsc(&c->e);
    emit_chunk(w, &h, c->buf, c->e.len);
    rec_begin(&c->e, c->buf, TW_BUF_BYTES, h.last_tsc);
    c->begun_len = c->e.len;
    c->need_context = c->have_task;
}

/* First record of a chunk: restate the current task (see HVT_MARK_CONTEXT). */
static void restate(tw_cpu *c)
{
    if (!c->need_context) return;
    c->need_context = 0;
    rec_context(&c->e, c->pid, c->tgid, c->comm, c->task_cr3);
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
        if (!c || !(c->buf = malloc(TW_BUF_BYTES))) {
            free(c);
            w->err = 1;
            return NULL;
        }
        rec_set_mode(&c->e, w->mode, w->regmask);   /* no chunk open: no marker yet */
        rec_begin(&c->e, c->buf, TW_BUF_BYTES, 0);
        c->begun_len = c->e.len;
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

/* After one record: a chunk is cut at the writer's target. */
static int after_record(tw_writer *w, unsigned cpu, tw_cpu *c, int rc)
{
    if (rc)
        w->err = 1;                 /* cannot happen: the buffer always holds one more record */
    if (c->e.len >= w->chunk_target) flush_cpu(w, cpu);
    return w->err ? -1 : 0;
}

int tw_insn_add(tw_writer *w, unsigned cpu, const tw_insn *in)
{
    tw_cpu *c = get_cpu(w, cpu);
    if (!c || in->code_len == 0 || in->code_len > HVT_CODE_MAX) return -1;
    if (!c->active) {
        c->active = 1;
        c->e.first_tsc = in->tsc - 1;           /* so the first record's tick stays 1 if possible */
        rec_set_tsc(&c->e, in->tsc - 1);
    }
    uint32_t id;
    if (code_id(w, in->code, in->code_len, &id) != 0) return -1;
    restate(c);
    /* Every register compared: the host has no write sets. */
    int rc = rec_insn_ticked(&c->e, in->rip, id, in->code_len, in->cr3, in->regs,
                             in->regs[HVT_REG_RFLAGS], REC_REGS_ALL, in->tsc - rec_tsc(&c->e));
    return after_record(w, cpu, c, rc);
}

/* Markers: the task is restated first at the start of a chunk (but a SWITCH states it). */
static tw_cpu *mark_begin(tw_writer *w, unsigned cpu, uint8_t type)
{
    tw_cpu *c = get_cpu(w, cpu);
    if (!c) return NULL;
    if (type != HVT_MARK_SWITCH) restate(c);
    else c->need_context = 0;
    return c;
}

int tw_event(tw_writer *w, unsigned cpu, uint8_t vector, uint8_t type, int64_t errcode)
{
    tw_cpu *c = mark_begin(w, cpu, HVT_MARK_EVENT);
    if (!c) return -1;
    return after_record(w, cpu, c, rec_event(&c->e, vector, type, errcode < 0 ? 0 : (uint64_t)errcode + 1));
}

int tw_syscall(tw_writer *w, unsigned cpu, uint64_t nr)
{
    tw_cpu *c = mark_begin(w, cpu, HVT_MARK_SYSCALL);
    if (!c) return -1;
    return after_record(w, cpu, c, rec_syscall(&c->e, nr));
}

int tw_vmexit(tw_writer *w, unsigned cpu, uint64_t reason, uint64_t qual)
{
    tw_cpu *c = mark_begin(w, cpu, HVT_MARK_VMEXIT);
    if (!c) return -1;
    return after_record(w, cpu, c, rec_vmexit(&c->e, reason, qual));
}

int tw_switch(tw_writer *w, unsigned cpu, uint64_t pid, uint64_t tgid, const char *comm, uint64_t cr3)
{
    tw_cpu *c = mark_begin(w, cpu, HVT_MARK_SWITCH);
    if (!c) return -1;
    int rc = rec_switch(&c->e, pid, tgid, comm, cr3);
    c->have_task = 1;
    c->pid = pid;
    c->tgid = tgid;
    c->task_cr3 = cr3;
    snprintf(c->comm, sizeof c->comm, "%.*s", HVT_COMM_MAX, comm);
    return after_record(w, cpu, c, rc);
}

int tw_startstop(tw_writer *w, unsigned cpu, int start, uint64_t reason)
{
    tw_cpu *c = mark_begin(w, cpu, start ? HVT_MARK_START : HVT_MARK_STOP);
    if (!c) return -1;
    return after_record(w, cpu, c, rec_startstop(&c->e, start, reason));
}

int tw_gap(tw_writer *w, unsigned cpu, uint64_t lost_records, uint64_t lost_insns)
{
    tw_cpu *c = mark_begin(w, cpu, HVT_MARK_GAP);
    if (!c) return -1;
    return after_record(w, cpu, c, rec_gap(&c->e, lost_records, lost_insns));
}

int tw_time(tw_writer *w, unsigned cpu, uint64_t tsc)
{
    tw_cpu *c = mark_begin(w, cpu, HVT_MARK_TIME);
    if (!c) return -1;
    if (!c->active) { c->active = 1; c->e.first_tsc = tsc; }
    return after_record(w, cpu, c, rec_time(&c->e, tsc));
}

int tw_set_mode(tw_writer *w, unsigned mode, uint32_t regmask)
{
    if (mode >= HVT_MODE_COUNT) return -1;
    w->mode = mode;
    w->regmask = regmask & REC_REGS_ALL;
    for (unsigned i = 0; i < TW_MAX_CPUS; i++) {
        tw_cpu *c = w->cpus[i];
        if (!c) continue;
        restate(c);   /* the task first, as at any chunk start */
        if (after_record(w, i, c, rec_set_mode(&c->e, mode, w->regmask)) != 0) return -1;
    }
    return w->err ? -1 : 0;
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
