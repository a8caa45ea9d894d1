/* trace_ctl.c - host-driven start/stop; see trace_ctl.h. */
#include "trace_ctl.h"
#include "hvt_trace_format.h"
#ifdef HVT_HOST
#include <string.h>
#else
#include "hv_api.h"
#include "hv_transport.h"
#include "step.h"
#include "trace.h"
#include "trace_opts.h"
#include "probe.h"
#include "d_runtime.h"
#include "guest_cmd.h"
#include "hv_dma.h"
#include "hv_exit.h"
_Static_assert(HVT_IOMMU_ON == (int)HV_IOMMU_ON && HVT_IOMMU_NO_DMAR == (int)HV_IOMMU_NO_DMAR &&
               HVT_IOMMU_PARTIAL == (int)HV_IOMMU_PARTIAL && HVT_IOMMU_FAILED == (int)HV_IOMMU_FAILED,
               "the wire's iommu states are vmm/'s");
_Static_assert(HVT_HC_REFUSED_FUNCS == HV_HYPERCALL_MAX, "one refusal counter per function");
#endif

static const struct trace_ctl_ops *ops;
static struct hvt_trace_status state;    /* host_request, flags, starts, stops */

void trace_ctl_set_ops(const struct trace_ctl_ops *o) { ops = o; }

int trace_ctl_parse_args(const uint8_t *args, uint32_t len, struct hvt_trace_args *a)
{
    memset(a, 0, sizeof *a);
    if (len == 0)
        return HVT_CTL_OK;
    if (len != sizeof *a)
        return HVT_CTL_EINVAL;
    memcpy(a, args, sizeof *a);
    if (a->flags & ~HVT_TRACE_F_ALL || (!(a->flags & HVT_TRACE_F_RECORD) && a->record))
        return HVT_CTL_EINVAL;
    if (a->flags & HVT_TRACE_F_RECORD) {
        uint32_t mode = HVT_TRACE_RECORD_MODE(a->record), mask = HVT_TRACE_RECORD_REGS(a->record);
        if (mode >= HVT_MODE_COUNT || mask >> HVT_NREGS || (mode == HVT_MODE_REGS) != (mask != 0))
            return HVT_CTL_EINVAL;
    }
    for (unsigned i = 0; i < sizeof a->reserved / sizeof a->reserved[0]; i++)
        if (a->reserved[i])
            return HVT_CTL_EINVAL;
    if ((a->flags & HVT_TRACE_F_KERNEL_ONLY) && (a->flags & HVT_TRACE_F_USER_ONLY))
        return HVT_CTL_EINVAL;
    if ((a->flags & HVT_TRACE_F_ADDR_RANGE) && a->addr_lo >= a->addr_hi)
        return HVT_CTL_EINVAL;
    if ((a->flags & HVT_TRACE_F_BUDGET) && a->insn_budget == 0)
        return HVT_CTL_EINVAL;
    if (a->flags & ~TRACE_CTL_SUPPORTED_FILTERS)
        return HVT_CTL_EINVAL;               /* well-formed, not implemented yet */
    return HVT_CTL_OK;
}

void trace_ctl_refusals(struct hvt_trace_status *st, uint64_t (*refused)(unsigned func))
{
    st->hc_refused_total = 0;
    for (unsigned f = 0; f < HVT_HC_REFUSED_FUNCS; f++) {
        uint64_t n = refused(f);
        st->hc_refused[f] = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
        st->hc_refused_total += n;
    }
}

static void reply_status(uint8_t *out, uint32_t *out_len)
{
    struct hvt_trace_status st = state;
    if (ops && ops->counters)
        ops->counters(&st);
    memcpy(out, &st, sizeof st);
    *out_len = sizeof st;
}

int trace_ctl_handle(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out,
                     uint32_t *out_len)
{
    struct hvt_trace_args a;
    *out_len = 0;
    switch (cmd) {
    case HVT_CTL_TRACE_START:
        if (trace_ctl_parse_args(args, len, &a) != HVT_CTL_OK)
            return HVT_CTL_EINVAL;
        if (ops && ops->configure) {
            int rc = ops->configure(&a);
            if (rc != HVT_CTL_OK)
                return rc;
        }
        state.host_request = HVT_TRACE_REQ_START;
        state.flags = a.flags;
        state.starts++;
        if (ops && ops->request)
            ops->request(true);
        break;
    case HVT_CTL_TRACE_STOP:
        if (len)
            return HVT_CTL_EINVAL;
        state.host_request = HVT_TRACE_REQ_STOP;
        state.stops++;
        if (ops && ops->request)
            ops->request(false);
        break;
    case HVT_CTL_TRACE_STATUS:
        if (len)
            return HVT_CTL_EINVAL;
        break;
    case HVT_CTL_PROBE_ARM:
    case HVT_CTL_PROBE_DISARM:
    case HVT_CTL_PROBE_STATUS:
    case HVT_CTL_PROBE_COST:
        return ops && ops->probe ? ops->probe(cmd, args, len, out, out_len) : HVT_CTL_ENOSYS;
    case HVT_CTL_D_LOAD:
    case HVT_CTL_D_RUN:
        return ops && ops->d ? ops->d(cmd, args, len, out, out_len) : HVT_CTL_ENOSYS;
    case HVT_CTL_D_CMD:
        return ops && ops->cmd ? ops->cmd(cmd, args, len, out, out_len) : HVT_CTL_ENOSYS;
    default:
        return HVT_CTL_ENOSYS;
    }
    reply_status(out, out_len);
    return HVT_CTL_OK;
}

#ifndef HVT_HOST
static const struct trace_opts *boot_opts;   /* the boot configuration's */

/* START's filters become the next window's (trace_opts semantics; step.c applies them). */
static int hv_configure(const struct hvt_trace_args *a)
{
    static struct trace_opts o;
    if (step_active() || step_cpus_stepping())
        return a->flags ? HVT_CTL_EINVAL : HVT_CTL_OK;   /* no new filters mid-window */
    o = *boot_opts;
    if (a->flags) {                                    /* replace the boot filters */
        o.only = a->flags & HVT_TRACE_F_KERNEL_ONLY ? TRACE_ONLY_KERNEL :
                 a->flags & HVT_TRACE_F_USER_ONLY ? TRACE_ONLY_USER : TRACE_ONLY_ALL;
        o.cr3 = a->flags & HVT_TRACE_F_CR3 ? a->cr3 : 0;
        o.nrange = 0;
        if (a->flags & HVT_TRACE_F_ADDR_RANGE) {
            o.range[0].lo = a->addr_lo;
            o.range[0].hi = a->addr_hi;
            o.nrange = 1;
        }
        o.ranges_runtime = true;
        o.budget = a->flags & HVT_TRACE_F_BUDGET ? a->insn_budget : 0;
        if (a->flags & HVT_TRACE_F_RECORD) {
            o.record = HVT_TRACE_RECORD_MODE(a->record);
            o.regmask = HVT_TRACE_RECORD_REGS(a->record);
            o.checkregs = o.checkregs && o.record == HVT_MODE_FULL;
        }
    }
    step_configure(&o);
    return HVT_CTL_OK;
}

/* A host command starts or stops like a mark does, but its START/STOP markers say USER. */
static void hv_request(bool on) { step_request_reason(on, HVT_REASON_USER); }

static void hv_counters(struct hvt_trace_status *st)
{
    struct trace_sink_stats s;
    st->stepping = step_cpus_stepping();
    st->steps_closed = __atomic_load_n(&trace_stats.steps, __ATOMIC_RELAXED);
    st->record_bytes_closed = __atomic_load_n(&trace_stats.bytes, __ATOMIC_RELAXED);
    trace_sink_stats(&s);
    st->chunks_sent = s.stream_chunks;
    st->chunk_bytes_sent = s.stream_bytes;
    st->chunks_debug_port = s.debug_port_chunks;
    unsigned on = 0, all = 0;
    st->iommu = hv_iommu_state(&on, &all);
    st->iommu_units_on = (uint16_t)on;
    st->iommu_units = (uint16_t)all;
    trace_ctl_refusals(st, hv_hypercall_refused);
}

static const struct trace_ctl_ops hv_ops = { .configure = hv_configure, .request = hv_request,
                                             .counters = hv_counters, .probe = probe_ctl_handle,
                                             .d = dprobe_ctl_handle, .cmd = dcmd_ctl_handle };

void trace_ctl_init(const struct hv_transport *t, const struct trace_opts *boot)
{
    boot_opts = boot;
    ops = &hv_ops;
    if (t->set_ctl_handler)
        t->set_ctl_handler(trace_ctl_handle);
}
#endif
