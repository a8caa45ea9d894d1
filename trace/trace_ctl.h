/*
 * trace_ctl.h - tracing started and stopped by the host: the HVT_CTL_TRACE_* control commands
 * of include/hvt_stream.h (docs/stream-protocol.md, "Control"; docs/trace-cli.md).
 *
 * Contract:
 *  - trace_ctl_init() (the hypervisor, from trace_layer_init): registers trace_ctl_handle()
 *    as the transport's handler for commands >= HVT_CTL_TRACE_FIRST when the image has a
 *    transport (hv_transport.h; without one there is no host control).
 *  - trace_ctl_handle() runs inside net_poll() with net's lock held: it never calls
 *    stream_send() and never waits. START and STOP only post a request (step_request_reason,
 *    reason HVT_REASON_USER in the START/STOP markers): every CPU starts or stops stepping at
 *    its next VM exit (the periodic preemption-timer exit guarantees one), like the
 *    HVT_HC_MARK hypercall and the other triggers, which share that state.
 *  - Arguments are checked strictly (trace_ctl_parse_args): START takes no data or exactly one
 *    struct hvt_trace_args; unknown flags, non-zero reserved fields, KERNEL_ONLY with USER_ONLY,
 *    an empty address range or a zero budget are HVT_CTL_EINVAL, and a refused START changes
 *    nothing. Filters given with START replace the boot configuration's filters and budget for
 *    that window (addresses are runtime ones); they are refused while a window is open. STOP
 *    and STATUS take no data.
 *  - Every accepted command replies with struct hvt_trace_status, including what vmm/ did
 *    with the IOMMU (hv_iommu_state) and the hypercalls it refused per function
 *    (hv_hypercall_refused, through trace_ctl_refusals).
 *  - Portable: host builds (-DHVT_HOST) give their own ops (tests/net/fake_hv.c), so the host
 *    tests run this very code.
 */
#ifndef HVT_TRACE_CTL_H
#define HVT_TRACE_CTL_H
#include <stdbool.h>
#include <stdint.h>
#include "hvt_stream.h"

struct trace_ctl_ops {
    /* START's filters for the window it opens: HVT_CTL_OK, or an error that refuses the START
     * (the hypervisor refuses new filters while a window is open). NULL: accepted as given. */
    int  (*configure)(const struct hvt_trace_args *a);
    void (*request)(bool on);                        /* step_request_reason(on, USER) */
    void (*counters)(struct hvt_trace_status *st);   /* steps, bytes, chunks so far */
    /* The HVT_CTL_PROBE_* commands (probe_ctl_handle); NULL: unknown commands. */
    int  (*probe)(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out, uint32_t *out_len);
    /* The HVT_CTL_D_* commands (dprobe_ctl_handle); NULL: unknown commands. */
    int  (*d)(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out, uint32_t *out_len);
    /* HVT_CTL_D_CMD (dcmd_ctl_handle); NULL: unknown command. */
    int  (*cmd)(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out, uint32_t *out_len);
};

struct hv_transport;
struct trace_opts;
/* 'boot': the boot configuration's options, which a START without filters keeps. */
void trace_ctl_init(const struct hv_transport *t, const struct trace_opts *boot);
void trace_ctl_set_ops(const struct trace_ctl_ops *ops);
/* Fill the status's refusal fields from refused(func) for every counted function number:
 * each saturates at UINT32_MAX, the total does not. */
void trace_ctl_refusals(struct hvt_trace_status *st, uint64_t (*refused)(unsigned func));
int  trace_ctl_handle(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out,
                      uint32_t *out_len);
/* HVT_CTL_OK with *a filled (zero when len is 0), or HVT_CTL_EINVAL. */
int  trace_ctl_parse_args(const uint8_t *args, uint32_t len, struct hvt_trace_args *a);
/* Filters the hypervisor implements (trace_ctl_parse_args refuses the others). */
#define TRACE_CTL_SUPPORTED_FILTERS HVT_TRACE_F_ALL

#endif
