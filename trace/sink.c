/*
 * sink.c - where trace chunks go.
 *  - The dedicated NIC's stream when it is up (net/: HVT_MSG_TRACE batches, lossless: a slow
 *    collector stalls stepping).
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

/* net/ when linked in (weak: a build without the NIC has only the debug port). */
__attribute__((weak)) bool net_active(void);
__attribute__((weak)) int stream_send(unsigned cpu, uint16_t type, const void *data, size_t len);

#define STAGE_BYTES (HVT_STREAM_MAX_PAYLOAD)
static uint8_t *stage[HVT_MAX_CPUS];     /* batch header + chunk, per CPU */

static bool send_stream(const struct trace_chunk_info *ci, const uint8_t *p, size_t len)
{
    unsigned cpu = hv_cpu_id();
    size_t hdr = sizeof(struct hvt_trace_batch) + sizeof(hvt_trace_batch_ext);
    if (!net_active || !stream_send || !net_active() || hdr + len > STAGE_BYTES)
        return false;
    if (!stage[cpu] && !(stage[cpu] = hv_alloc_pages(STAGE_BYTES / 4096)))
        return false;
    struct hvt_trace_batch b = { ci->kind == TRACE_CHUNK_CODE ? HVT_BATCH_CODE : HVT_BATCH_RECORDS,
                                 0, ci->nrecords, ci->first_tsc };
    hvt_trace_batch_ext x = { ci->ninsns, ci->first_code_id, ci->last_tsc };
    memcpy(stage[cpu], &b, sizeof b);
    memcpy(stage[cpu] + sizeof b, &x, sizeof x);
    memcpy(stage[cpu] + hdr, p, len);
    return stream_send(ci->kind == TRACE_CHUNK_RECORDS ? ci->cpu : cpu, HVT_MSG_TRACE, stage[cpu], hdr + len) == 0;
}

#define PORT_E9 0xe9

static void put_str(const char *s) { while (*s) hv_outb(PORT_E9, (uint8_t)*s++); }

void trace_sink_init(void) {}

void trace_sink_chunk(const struct trace_chunk_info *ci, const uint8_t *p, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    if (send_stream(ci, p, len))
        return;
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
