/*
 * trace.h - hvtrace's tracing policy (trace/): single-stepping with the monitor trap flag,
 * per-instruction records, markers and triggers. Built on vmm/'s public API (vmm/include/)
 * and the transport table of hv/hv_transport.h only.
 *
 * Contract:
 *  - trace_layer_init() (called by the image, after the transport layer) registers the
 *    policy's exit handlers with vmm/ (hv_exit.h); tracing starts and stops on the
 *    HVT_HC_MARK hypercall (RBX = TRACE_MARK_START / TRACE_MARK_STOP) for all CPUs: the
 *    calling CPU at once, the others at their next VM exit (a periodic preemption-timer exit
 *    guarantees one within TRACE_POLL_TICKS).
 *  - Output: RECORDS chunks per CPU and CODE dictionary batches, in the payload formats of
 *    include/hvt_trace_format.h, handed to trace_sink_*() (sink.c). A CODE batch is always
 *    emitted before the first RECORDS chunk that uses its ids. Nothing is dropped: when the
 *    sink is slow, stepping waits.
 */
#ifndef HVT_TRACE_H
#define HVT_TRACE_H
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "hv_api.h"

#define TRACE_MARK_STOP  0
#define TRACE_MARK_START 1
#define TRACE_POLL_TICKS 20000000ull
/* The parts of what the start left in the hypervisor's region (vmm/'s budgets, hv_api.h) that
 * the two allocators driven from outside take: the probe engine (probe tables and shadow
 * pages, armed by the guest's root or the collector) and D programs (images and state). Each
 * is refused past its own, so the guest filling one leaves the other, and vmm/'s reserve,
 * whole; the 2 parts left over are for what nobody budgets (a CPU's stream stage at its first
 * use, the D drain buffers). */
#define TRACE_PROBE_MEM_PARTS 3u
#define TRACE_D_MEM_PARTS     3u
_Static_assert(TRACE_PROBE_MEM_PARTS + TRACE_D_MEM_PARTS < HV_BUDGET_PARTS,
               "room left for what nobody budgets");

enum trace_chunk_kind { TRACE_CHUNK_CODE = 1, TRACE_CHUNK_RECORDS = 2 };
struct trace_chunk_info {
    unsigned cpu, kind;
    uint32_t nrecords, ninsns, first_code_id;
    uint64_t first_tsc, last_tsc;
};
struct hvt_boot_info;
struct hv_transport;
int trace_layer_init(struct hvt_boot_info *bi, const struct hv_transport *t);

/* The sink: deliver one chunk payload (blocking until accepted). 't' is the transport the
 * image gave the layer (its members NULL: the debug port only). */
void trace_sink_chunk(const struct trace_chunk_info *ci, const uint8_t *payload, size_t len);
void trace_sink_init(const struct hv_transport *t, void (*on_link_failed)(void));
/* Flight-recorder mode: keep the last 'mb' MB of RECORDS chunks per CPU share, in slots of
 * chunk_bytes; trace_sink_stop(cpu) dumps this CPU's ring (called when it stops tracing). */
int  trace_sink_flight(uint64_t mb, unsigned ncpu, size_t chunk_bytes);
void trace_sink_stop(unsigned cpu);
/* A failed link (net link_timeout_ms): chunks sent now are dropped and counted (LOSS), and
 * the sink calls the on_link_failed given to trace_sink_init (tracing stops, reason LINK). A CPU's last chunk - markers only, its STOP among them - is
 * held instead (trace_sink_hold) and sent by trace_sink_poll() (any exit of that CPU) once the
 * link is back, after the LOSS report: the reason reaches the collector. */
bool trace_sink_link_failed(void);
/* Was a CODE batch lost since the last call (a failed link)? Clears the mark. */
bool trace_sink_code_lost(void);
void trace_sink_hold(const struct trace_chunk_info *ci, const uint8_t *payload, size_t len);
void trace_sink_poll(unsigned cpu);

/* A header line and len raw bytes, then a newline, on the debug port, kept together. */
void trace_sink_debug_blob(const char *head, const void *p, size_t len);
/* One stream message of 'type' from 'cpu' (not trace data: it neither stops tracing on a
 * failed link nor goes to the debug port): sent (waits while the link is slow), dropped
 * (the link has failed: the transport counts it and reports a LOSS later), or no stream. */
enum trace_sink_sent { TRACE_SINK_SENT, TRACE_SINK_DROPPED, TRACE_SINK_NO_STREAM };
enum trace_sink_sent trace_sink_message(unsigned cpu, uint16_t type, const void *p, size_t len);

struct trace_sink_stats { uint64_t stream_chunks, stream_bytes, debug_port_chunks; };
void trace_sink_stats(struct trace_sink_stats *s);

/* Host control of tracing over the stream (trace_ctl.c): trace_layer_init calls trace_ctl_init. */
#include "trace_ctl.h"

#endif
