/* probe_ctl.c - probes armed from outside the engine: checked specs (the guest tool's
 * hypercall and the host's control commands take the same path) and the host's
 * HVT_CTL_PROBE_* commands. See probe.h. */
#include "probe.h"
#include "kaslr.h"
#include "trace_opts.h"
#include "hv_api.h"
#include "hvt_stream.h"

#define RETURN_SPAN_MAX (1u << 20)         /* a function's extent, at most (return probes) */

int probe_arm_spec(const struct hvt_probe_spec *s)
{
    struct hvt_probe_spec sp = *s;
    unsigned kind = sp.kind & HVT_PROBE_KIND_MASK;
    if (sp.kind & ~(HVT_PROBE_KIND_MASK | HVT_PROBE_F_LINKTIME | HVT_PROBE_F_RECORD |
                    HVT_PROBE_F_STACK | HVT_PROBE_F_USER | HVT_PROBE_F_SYSARGS | HVT_PROBE_F_COMM | HVT_PROBE_F_ACTION))
        return PROBE_EINVAL;
    if (sp.kind & HVT_PROBE_F_USER) {      /* lo: the user address, hi: the pid or the name's key */
        bool by_name = sp.kind & HVT_PROBE_F_COMM;
        if (kind != PROBE_ADDR || (sp.kind & HVT_PROBE_F_LINKTIME) || trace_opts_is_kernel(sp.lo) ||
            !sp.hi || (!by_name && sp.hi > UINT32_MAX))
            return PROBE_EINVAL;
        return probe_arm_user(sp.lo, by_name ? 0 : (uint32_t)sp.hi, by_name ? sp.hi : 0, sp.id,
                              sp.kind & (HVT_PROBE_F_RECORD | HVT_PROBE_F_STACK | HVT_PROBE_F_ACTION));
    }
    if (sp.kind & HVT_PROBE_F_COMM)
        return PROBE_EINVAL;
    if (kind == PROBE_PROFILE || kind == PROBE_TICK)   /* lo: the period, in TSC ticks */
        return probe_profile_arm((enum probe_kind)kind, sp.lo, sp.id, sp.kind & HVT_PROBE_F_ACTION);
    if (sp.kind & HVT_PROBE_F_LINKTIME) {
        if (!kaslr_known())
            return PROBE_EINVAL;
        sp.lo += kaslr_slide();
        sp.hi += kaslr_slide();
    }
    if (kind < PROBE_ENTRY || kind > PROBE_ADDR || !trace_opts_is_kernel(sp.lo) ||
        (kind == PROBE_RETURN && (sp.hi <= sp.lo || sp.hi - sp.lo > RETURN_SPAN_MAX)))
        return PROBE_EINVAL;
    return probe_arm((enum probe_kind)kind, sp.lo, sp.hi, sp.id,
                     sp.kind & (HVT_PROBE_F_RECORD | HVT_PROBE_F_STACK | HVT_PROBE_F_SYSARGS |
                                HVT_PROBE_F_ACTION));
}

/* Runs inside the transport's poll: it may neither send nor wait. Arming needs neither (each
 * CPU takes a new mapping at its next exit; until then it runs the original code, and a #BP
 * met on a mapping already dropped is resumed harmlessly), and a disarm leaves the records
 * to each CPU's next exit. */
int probe_ctl_handle(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out,
                     uint32_t *out_len)
{
    struct hvt_probe_status st = { 0 }, before;
    switch (cmd) {
    case HVT_CTL_PROBE_ARM: {
        if (!len || len % sizeof(struct hvt_probe_spec) ||
            len / sizeof(struct hvt_probe_spec) > HVT_CTL_PROBE_SPECS)
            return HVT_CTL_EINVAL;
        probe_status(&before);             /* the record counters as they were before arming */
        for (uint32_t i = 0; i < len / sizeof(struct hvt_probe_spec); i++) {
            struct hvt_probe_spec sp;
            memcpy(&sp, args + i * sizeof sp, sizeof sp);   /* the args need not be aligned */
            int rc = probe_arm_spec(&sp);
            if (rc < 0 && rc != PROBE_ENOSITE) {
                st.error = rc;
                break;
            }
            st.sites_armed += rc > 0 ? (uint32_t)rc : 0;
            st.specs_taken++;
        }
        break;
    }
    case HVT_CTL_PROBE_DISARM:
        if (len)
            return HVT_CTL_EINVAL;
        probe_disarm_all();
        probe_flush_request();
        probe_report_stats();
        break;
    case HVT_CTL_PROBE_STATUS:
        if (len)
            return HVT_CTL_EINVAL;
        break;
    default:
        return HVT_CTL_ENOSYS;
    }
    probe_status(&st);
    if (cmd == HVT_CTL_PROBE_ARM) {
        st.records = before.records;
        st.records_lost = before.records_lost;
    }
    st.slide = kaslr_known() ? (int64_t)kaslr_slide() : 0;
    memcpy(out, &st, sizeof st);
    *out_len = sizeof st;
    return HVT_CTL_OK;
}
