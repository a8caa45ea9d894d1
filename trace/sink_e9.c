/*
 * sink_e9.c - the debug-port sink: each chunk as one text line on port 0xE9
 *   HVT-CHUNK <kind> <cpu> <nrecords> <ninsns> <first_code_id> <first_tsc> <last_tsc> <hex>
 * Bochs copies port 0xE9 to its stdout, synchronously, so this sink is lossless and needs no
 * NIC: it is how the tests read traces until the dedicated NIC carries them (net/).
 * host-tools' hvt-import turns these lines into a trace file.
 */
#include "trace.h"
#include "hv_api.h"
#include "hv_core.h"

#define PORT_E9 0xe9
static struct spinlock sink_lock;

static void put_str(const char *s) { while (*s) hv_outb(PORT_E9, (uint8_t)*s++); }

void trace_sink_init(void) {}

void trace_sink_chunk(const struct trace_chunk_info *ci, const uint8_t *p, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    char head[160];
    hv_snprintf(head, sizeof head, "HVT-CHUNK %u %u %u %u %u %lu %lu ", ci->kind, ci->cpu,
                ci->nrecords, ci->ninsns, ci->first_code_id, ci->first_tsc, ci->last_tsc);
    spin_lock(&sink_lock);
    put_str(head);
    for (size_t i = 0; i < len; i++) {
        hv_outb(PORT_E9, (uint8_t)hex[p[i] >> 4]);
        hv_outb(PORT_E9, (uint8_t)hex[p[i] & 15]);
    }
    hv_outb(PORT_E9, '\n');
    spin_unlock(&sink_lock);
}
