/*
 * sink.c - where trace chunks go.
 *  - The dedicated NIC's stream when it is up (net/: HVT_MSG_TRACE batches, lossless: a slow
 *    collector stalls stepping). Before the first batch, and whenever the guest's LSTAR has
 *    changed since, an HVT_MSG_META "lstar=HEX\ncpus=N\n" tells the collector what the debug
 *    port's "HVT-META lstar=... cpus=..." line tells hvt-import (the KASLR slide, the CPUs).
 *  - Otherwise the debug port: each chunk as one text line on port 0xE9
 *      HVT-CHUNK <kind> <cpu> <nrecords> <ninsns> <first_code_id> <first_tsc> <last_tsc> <hex>
 *    Bochs copies port 0xE9 to its stdout synchronously, so this is lossless too and needs no
 *    NIC; host-tools' hvt-import turns these lines into a trace file.
 */
#include "trace.h"
#include "hv_api.h"
#include "hv_core.h"
#include "hvt_stream.h"
#include "hvt_trace_format.h"
#include "cpu.h"

/* net/ when linked in (weak: a build without the NIC has only the debug port). */
__attribute__((weak)) bool net_active(void);
__attribute__((weak)) int stream_send(unsigned cpu, uint16_t type, const void *data, size_t len);

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
 * own), as hook_hypercall's HVT-META line relies on too. Several CPUs may race here and
 * send the same text twice: harmless, the collector keeps the last value. */
static void send_meta(unsigned cpu)
{
    uint64_t lstar = cpu_rdmsr(MSR_IA32_LSTAR);
    if (lstar == __atomic_load_n(&meta_lstar, __ATOMIC_RELAXED))
        return;
    char text[64];
    int n = hv_snprintf(text, sizeof text, "lstar=%lx\ncpus=%u\n", lstar, hv_cpu_count());
    if (n > 0 && stream_send(cpu, HVT_MSG_META, text, (size_t)n) == 0)
        __atomic_store_n(&meta_lstar, lstar, __ATOMIC_RELAXED);
}

static bool send_stream(const struct trace_chunk_info *ci, const uint8_t *p, size_t len)
{
    unsigned cpu = hv_cpu_id();
    size_t hdr = sizeof(struct hvt_trace_batch) + sizeof(hvt_trace_batch_ext);
    if (!net_active || !stream_send || !net_active() || hdr + len > STAGE_BYTES)
        return false;
    if (!stage[cpu] && !(stage[cpu] = hv_alloc_pages(STAGE_BYTES / 4096)))
        return false;
    send_meta(cpu);
    struct hvt_trace_batch b = { ci->kind == TRACE_CHUNK_CODE ? HVT_BATCH_CODE : HVT_BATCH_RECORDS,
                                 0, ci->nrecords, ci->first_tsc };
    hvt_trace_batch_ext x = { ci->ninsns, ci->first_code_id, ci->last_tsc };
    memcpy(stage[cpu], &b, sizeof b);
    memcpy(stage[cpu] + sizeof b, &x, sizeof x);
    memcpy(stage[cpu] + hdr, p, len);
    if (stream_send(ci->kind == TRACE_CHUNK_RECORDS ? ci->cpu : cpu, HVT_MSG_TRACE, stage[cpu], hdr + len))
        return false;
    __atomic_add_fetch(&stats.stream_chunks, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&stats.stream_bytes, len, __ATOMIC_RELAXED);
    return true;
}

#define PORT_E9 0xe9

static void put_str(const char *s) { while (*s) hv_outb(PORT_E9, (uint8_t)*s++); }

void trace_sink_init(void) {}

void trace_sink_chunk(const struct trace_chunk_info *ci, const uint8_t *p, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    if (send_stream(ci, p, len))
        return;
    __atomic_add_fetch(&stats.debug_port_chunks, 1, __ATOMIC_RELAXED);
    char head[160];
    hv_snprintf(head, sizeof head, "HVT-CHUNK %u %u %u %u %u %lu %lu ", ci->kind, ci->cpu,
                ci->nrecords, ci->ninsns, ci->first_code_id, ci->first_tsc, ci->last_tsc);
    hv_log_lock();
    put_str(head);
    for (size_t i = 0; i < len; i++) {
        hv_outb(PORT_E9, (uint8_t)hex[p[i] >> 4]);
        hv_outb(PORT_E9, (uint8_t)hex[p[i] & 15]);
    }
    hv_outb(PORT_E9, '\n');
    hv_log_unlock();
}
