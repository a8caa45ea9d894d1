/*
 * sink.c - where trace chunks go.
 *  - The dedicated NIC's stream when it is up (net/: HVT_MSG_TRACE batches, lossless: a slow
 *    collector stalls stepping). Before the first batch, and whenever the guest's LSTAR has
 *    changed since, an HVT_MSG_META "lstar=HEX\ncpus=N\n" tells the collector what the debug
 *    port's "HVT-META lstar=... cpus=..." line tells hvt-import (the KASLR slide, the CPUs).
 *  - Otherwise the debug port: each chunk as a header line and its raw bytes on port 0xE9
 *      HVT-CHUNKB <kind> <cpu> <nrecords> <ninsns> <first_code_id> <first_tsc> <last_tsc> <len>
 *      <len bytes>
 *    (one REP OUTSB: an instruction per byte, where hex cost ~11 per byte and twice the bytes).
 *    Bochs copies port 0xE9 to its stdout synchronously, so this is lossless too and needs no
 *    NIC; host-tools' hvt-import turns these chunks into a trace file (e9_lines.h).
 *  - Flight-recorder mode (trace option flight=MB): RECORDS chunks go into a per-CPU ring of
 *    chunk slots instead, the oldest overwritten; at the CPU's stop (any reason: mark, budget,
 *    panic address, triple fault, power-off) the ring is dumped oldest first, after a chunk
 *    holding one GAP marker that counts what was overwritten. CODE chunks still go out live:
 *    they are small, and sending them at once keeps every id ahead of the records using it.
 */
#include "trace.h"
#include "hv_api.h"
#include "hv_transport.h"
#include "hvt_stream.h"
#include "hvt_trace_format.h"
#include "hvt_bootinfo.h"
#include "rec_enc.h"

#define HELD_BYTES    (64u * 1024)         /* a STOP chunk: CONTEXT + STOP markers */

/* The image's transport (all members NULL without one: the debug port only). */
static struct hv_transport tr;
static void (*link_failed_fn)(void);
enum sent { SENT, DROPPED, NO_STREAM };

#define STAGE_BYTES (HVT_STREAM_MAX_PAYLOAD)
static uint8_t *stage[HVT_MAX_CPUS];     /* batch header + chunk, per CPU */
static struct trace_sink_stats stats;
static uint64_t meta_lstar;              /* LSTAR value the collector was last told */

void trace_sink_stats(struct trace_sink_stats *s)
{
    s->stream_chunks = __atomic_load_n(&stats.stream_chunks, __ATOMIC_RELAXED);
    s->stream_bytes = __atomic_load_n(&stats.stream_bytes, __ATOMIC_RELAXED);
    s->debug_port_chunks = __atomic_load_n(&stats.debug_port_chunks, __ATOMIC_RELAXED);
}

/* In VMX root the LSTAR MSR still holds the guest's value (the hypervisor never loads its
 * own), as step.c's HVT-META line relies on too. Several CPUs may race here and
 * send the same text twice: harmless, the collector keeps the last value. */
static void send_meta(unsigned cpu)
{
    uint64_t lstar = hv_rdmsr(MSR_IA32_LSTAR);
    if (lstar == __atomic_load_n(&meta_lstar, __ATOMIC_RELAXED))
        return;
    char text[64];
    int n = hv_snprintf(text, sizeof text, "lstar=%lx\ncpus=%u\n", lstar, hv_cpu_count());
    if (n > 0 && tr.send(cpu, HVT_MSG_META, text, (size_t)n) == 0)
        __atomic_store_n(&meta_lstar, lstar, __ATOMIC_RELAXED);
}

static bool code_lost;

bool trace_sink_code_lost(void) { return __atomic_exchange_n(&code_lost, false, __ATOMIC_ACQ_REL); }

static enum sent send_stream(const struct trace_chunk_info *ci, const uint8_t *p, size_t len)
{
    unsigned cpu = hv_cpu_id();
    size_t hdr = sizeof(struct hvt_trace_batch) + sizeof(hvt_trace_batch_ext);
    if (!tr.active || !tr.send || !tr.active() || hdr + len > STAGE_BYTES)
        return NO_STREAM;
    if (!stage[cpu] && !(stage[cpu] = hv_alloc_pages(HV_PAGES(STAGE_BYTES))))
        return NO_STREAM;
    send_meta(cpu);
    struct hvt_trace_batch b = { ci->kind == TRACE_CHUNK_CODE ? HVT_BATCH_CODE : HVT_BATCH_RECORDS,
                                 0, ci->nrecords, ci->first_tsc };
    hvt_trace_batch_ext x = { ci->ninsns, ci->first_code_id, ci->last_tsc };
    memcpy(stage[cpu], &b, sizeof b);
    memcpy(stage[cpu] + sizeof b, &x, sizeof x);
    memcpy(stage[cpu] + hdr, p, len);
    int rc = tr.send(ci->kind == TRACE_CHUNK_RECORDS ? ci->cpu : cpu, HVT_MSG_TRACE, stage[cpu], hdr + len);
    if (rc == HV_TRANSPORT_LINK_FAILED) {
        /* Counted by net/ (a LOSS once the link is back); tracing stops: the reason goes out
         * in each CPU's held STOP chunk (trace_sink_hold). A lost CODE batch leaves ids the
         * collector never learnt: the next window gives every code a new one. */
        if (ci->kind == TRACE_CHUNK_CODE)
            __atomic_store_n(&code_lost, true, __ATOMIC_RELEASE);
        link_failed_fn();
        return DROPPED;
    }
    if (rc)
        return NO_STREAM;
    __atomic_add_fetch(&stats.stream_chunks, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&stats.stream_bytes, len, __ATOMIC_RELAXED);
    return SENT;
}

static void sink_live(const struct trace_chunk_info *ci, const uint8_t *p, size_t len);

/* --- a failed link: each CPU's last chunk (its STOP marker) waits for the link --- */
struct held { struct trace_chunk_info ci; size_t len; uint8_t *buf; };
static struct held held[HVT_MAX_CPUS];

bool trace_sink_link_failed(void) { return tr.link_failed && tr.link_failed(); }

void trace_sink_hold(const struct trace_chunk_info *ci, const uint8_t *p, size_t len)
{
    struct held *h = &held[ci->cpu];
    if (len > HELD_BYTES || (!h->buf && !(h->buf = hv_alloc_pages(HV_PAGES(HELD_BYTES))))) {
        hv_log("hvtrace: cpu %u: cannot hold the STOP chunk (%lu bytes): sending it now\n", ci->cpu, len);
        sink_live(ci, p, len);
        return;
    }
    h->ci = *ci;
    memcpy(h->buf, p, len);
    __atomic_store_n(&h->len, len, __ATOMIC_RELEASE);
}

void trace_sink_poll(unsigned cpu)
{
    struct held *h = &held[cpu];
    if (!__atomic_load_n(&h->len, __ATOMIC_ACQUIRE) || trace_sink_link_failed())
        return;
    size_t len = h->len;
    h->len = 0;
    hv_log("hvtrace: cpu %u: link back: sending the held STOP chunk\n", cpu);
    sink_live(&h->ci, h->buf, len);
}

/* --- flight recorder --- */
struct fr_slot { struct trace_chunk_info ci; uint32_t len; uint8_t *buf; };
struct fr_cpu {
    struct fr_slot *slot;
    unsigned head, count;                   /* next slot to write; slots holding chunks */
    uint64_t lost_chunks, lost_records, lost_insns;
};
static struct { unsigned nslots; size_t slot_bytes; struct fr_cpu cpu[HVT_MAX_CPUS]; } fr;

int trace_sink_flight(uint64_t mb, unsigned ncpu, size_t chunk_bytes)
{
    uint64_t per_cpu = mb * 1024 * 1024 / ncpu;
    unsigned n = (unsigned)(per_cpu / chunk_bytes);
    if (n < 2)
        n = 2;
    for (unsigned c = 0; c < ncpu; c++) {
        fr.cpu[c].slot = hv_alloc_pages(HV_PAGES(n * sizeof(struct fr_slot)));
        if (!fr.cpu[c].slot)
            return -1;
        for (unsigned i = 0; i < n; i++)
            if (!(fr.cpu[c].slot[i].buf = hv_alloc_pages(HV_PAGES(chunk_bytes))))
                return -1;
    }
    fr.slot_bytes = chunk_bytes;
    fr.nslots = n;
    hv_log("hvtrace: flight recorder: %u chunks of %lu KiB per CPU\n", n, chunk_bytes / 1024);
    return 0;
}

static void fr_put(const struct trace_chunk_info *ci, const uint8_t *p, size_t len)
{
    struct fr_cpu *f = &fr.cpu[ci->cpu];
    struct fr_slot *s = &f->slot[f->head];
    if (f->count == fr.nslots) {            /* overwrite the oldest: count what is lost */
        f->lost_chunks++;
        f->lost_records += s->ci.nrecords;
        f->lost_insns += s->ci.ninsns;
    } else {
        f->count++;
    }
    s->ci = *ci;
    s->len = (uint32_t)len;
    memcpy(s->buf, p, len);
    f->head = (f->head + 1) % fr.nslots;
}

void trace_sink_stop(unsigned cpu)
{
    struct fr_cpu *f = &fr.cpu[cpu];
    if (!fr.nslots || !f->count)
        return;
    unsigned first = (f->head + fr.nslots - f->count) % fr.nslots;
    hv_log("hvtrace: cpu %u: flight recorder dump: %u chunks kept, %lu overwritten "
           "(%lu records, %lu instructions)\n", cpu, f->count, f->lost_chunks, f->lost_records,
           f->lost_insns);
    if (f->lost_chunks) {
        /* One GAP marker: the reader learns exactly what the ring overwrote. */
        uint8_t gap[1 + 2 * HVT_VARINT_MAX];
        size_t n = 0;
        gap[n++] = HVT_TAG_MARKER | HVT_MARK_GAP;
        n += rec_put_varint(gap + n, f->lost_records);
        n += rec_put_varint(gap + n, f->lost_insns);
        struct trace_chunk_info gi = { .cpu = cpu, .kind = TRACE_CHUNK_RECORDS, .nrecords = 1,
                                       .first_tsc = f->slot[first].ci.first_tsc,
                                       .last_tsc = f->slot[first].ci.first_tsc };
        sink_live(&gi, gap, n);
    }
    for (unsigned k = 0; k < f->count; k++) {
        struct fr_slot *s = &f->slot[(first + k) % fr.nslots];
        sink_live(&s->ci, s->buf, s->len);
    }
    f->count = f->head = 0;
    f->lost_chunks = f->lost_records = f->lost_insns = 0;
}

#define PORT_E9 0xe9

static void put_str(const char *s) { while (*s) hv_outb(PORT_E9, (uint8_t)*s++); }

void trace_sink_init(const struct hv_transport *t, void (*on_link_failed)(void))
{
    tr = *t;
    link_failed_fn = on_link_failed;
}

void trace_sink_chunk(const struct trace_chunk_info *ci, const uint8_t *p, size_t len)
{
    if (fr.nslots && ci->kind == TRACE_CHUNK_RECORDS && len <= fr.slot_bytes)
        fr_put(ci, p, len);
    else
        sink_live(ci, p, len);
}

void trace_sink_debug_blob(const char *head, const void *p, size_t len)
{
    hv_log_lock();
    put_str(head);
    __asm__ volatile("rep outsb" : "+S"(p), "+c"(len) : "d"((uint16_t)PORT_E9) : "memory");
    hv_outb(PORT_E9, '\n');
    hv_log_unlock();
}

enum trace_sink_sent trace_sink_message(unsigned cpu, uint16_t type, const void *p, size_t len)
{
    if (!tr.active || !tr.send || !tr.active())
        return TRACE_SINK_NO_STREAM;
    int rc = tr.send(cpu, type, p, len);
    return rc == 0 ? TRACE_SINK_SENT : rc == HV_TRANSPORT_LINK_FAILED ? TRACE_SINK_DROPPED
                                                                      : TRACE_SINK_NO_STREAM;
}

static void sink_live(const struct trace_chunk_info *ci, const uint8_t *p, size_t len)
{
    if (send_stream(ci, p, len) != NO_STREAM)
        return;                             /* sent, or dropped and counted (failed link) */
    __atomic_add_fetch(&stats.debug_port_chunks, 1, __ATOMIC_RELAXED);
    char head[160];
    hv_snprintf(head, sizeof head, "HVT-CHUNKB %u %u %u %u %u %lu %lu %lu\n", ci->kind, ci->cpu,
                ci->nrecords, ci->ninsns, ci->first_code_id, ci->first_tsc, ci->last_tsc, len);
    trace_sink_debug_blob(head, p, len);
}
