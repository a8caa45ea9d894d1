/* probe_ctl.c - probes armed from outside the engine: the guest tool's HVT_HC_PROBE hypercall,
 * checked specs (the hypercall and the host's control commands take the same path) and the
 * host's HVT_CTL_PROBE_* commands. See probe.h. */
#include "probe.h"
#include "probe_budget.h"
#include "probe_module.h"
#include "kaslr.h"
#include "task.h"
#include "trace.h"
#include "trace_opts.h"
#include "hv_api.h"
#include "hv_exit.h"
#include "hv_guest.h"
#include "hv_ept.h"
#include "gmem.h"
#include "hvt_hypercall.h"
#include "hvt_stream.h"

_Static_assert((int)PROBE_ENTRY == HVT_PROBE_KIND_ENTRY && (int)PROBE_RETURN == HVT_PROBE_KIND_RETURN &&
               (int)PROBE_ADDR == HVT_PROBE_KIND_ADDR && (int)PROBE_PROFILE == HVT_PROBE_KIND_PROFILE &&
               (int)PROBE_TICK == HVT_PROBE_KIND_TICK, "a spec's kind is the engine's enum probe_kind");

/* ---- probes in loadable modules: probe_module.c walks, the engine arms ---- */
static struct spinlock mod_lock;           /* before the engine's lock, never after it */

static size_t mod_read(uint64_t va, void *buf, size_t len)
{
    struct gmem_paging pg;
    probe_kernel_paging(&pg);
    return trace_opts_is_kernel(va) ? gmem_read_gva(&pg, va, buf, len) : 0;
}

static int mod_arm(uint64_t va, uint64_t end, uint32_t id, uint32_t flags)
{
    return trace_opts_is_kernel(va) ? probe_arm(PROBE_ENTRY, va, end, id, flags) : PROBE_EINVAL;
}

static int mod_arm_return(uint64_t lo, uint64_t hi, uint32_t id, uint32_t flags)
{
    return trace_opts_is_kernel(lo) && hi > lo && hi - lo <= PROBE_RETURN_SPAN_MAX
           ? probe_arm(PROBE_RETURN, lo, hi, id, flags) : PROBE_EINVAL;
}

static int mod_arm_sdt(uint64_t va, uint32_t id, uint32_t flags, const uint64_t recipe[3])
{
    return trace_opts_is_kernel(va) ? probe_arm_sdt(va, id, flags, recipe) : PROBE_EINVAL;
}

static const struct probe_module_io mod_io = { mod_read, mod_arm, mod_arm_return, mod_arm_sdt,
                                               probe_disarm_range };

/* The engine's module hook (probe_set_module_hook): a load, an unload, a disarm of all. */
static void module_event(enum probe_modev ev, uint64_t mod)
{
    if (ev != PROBE_MODEV_FORGET && !trace_opts_is_kernel(mod))
        return;
    spin_lock(&mod_lock);
    if (ev == PROBE_MODEV_LOAD) {
        int rc = probe_module_loaded(&mod_io, mod);
        if (rc)
            hv_log("hvtrace: cpu %u: module at %lx loaded: %d probe site(s)\n", hv_cpu_id(), mod, rc);
    } else if (ev == PROBE_MODEV_FREE) {
        probe_module_freed(&mod_io, mod);
    } else {
        probe_module_reset();
    }
    spin_unlock(&mod_lock);
}

/* HVT_PROBE_KIND_MODINFO, HVT_PROBE_KIND_MODHOOK and HVT_PROBE_F_MODULE specs. */
static int module_spec(struct hvt_probe_spec sp)
{
    unsigned kind = sp.kind & HVT_PROBE_KIND_MASK;
    int rc;
    if (kind == HVT_PROBE_KIND_MODINFO || kind == HVT_PROBE_KIND_MODHOOK) {
        if (sp.kind & ~(HVT_PROBE_KIND_MASK | HVT_PROBE_F_LINKTIME))
            return PROBE_EINVAL;
        if (sp.kind & HVT_PROBE_F_LINKTIME) {
            if (!kaslr_known())
                return PROBE_EINVAL;
            sp.lo += kaslr_slide();
        }
        if (!trace_opts_is_kernel(sp.lo))
            return PROBE_EINVAL;
        if (kind == HVT_PROBE_KIND_MODHOOK) {
            if (sp.hi != HVT_MODHOOK_LOAD && sp.hi != HVT_MODHOOK_FREE)
                return PROBE_EINVAL;
            rc = probe_arm(PROBE_ENTRY, sp.lo, sp.lo + 1, 0,
                           sp.hi == HVT_MODHOOK_LOAD ? PROBE_F_MODHOOK_LOAD : PROBE_F_MODHOOK_FREE);
            return rc < 0 ? rc : 0;        /* not a site the host asked for */
        }
        spin_lock(&mod_lock);
        rc = probe_module_layout(&mod_io, sp.lo, sp.hi);
        spin_unlock(&mod_lock);
        return rc;
    }
    if ((kind != PROBE_ENTRY && kind != PROBE_RETURN) ||
        (sp.kind & ~(HVT_PROBE_KIND_MASK | HVT_PROBE_F_MODULE | HVT_PROBE_F_RECORD |
                     HVT_PROBE_F_STACK | HVT_PROBE_F_ACTION)))
        return PROBE_EINVAL;
    uint32_t flags = sp.kind & (HVT_PROBE_F_RECORD | HVT_PROBE_F_STACK | HVT_PROBE_F_ACTION);
    spin_lock(&mod_lock);
    rc = kind == PROBE_ENTRY ? probe_module_want(&mod_io, sp.id, flags, sp.lo, sp.hi)
                             : probe_module_want_return(&mod_io, sp.id, flags, sp.lo, sp.hi);
    spin_unlock(&mod_lock);
    return rc;
}

int probe_arm_spec(const struct hvt_probe_spec *s)
{
    struct hvt_probe_spec sp = *s;
    unsigned kind = sp.kind & HVT_PROBE_KIND_MASK;
    if ((sp.kind & HVT_PROBE_F_MODULE) || kind == HVT_PROBE_KIND_MODINFO || kind == HVT_PROBE_KIND_MODHOOK)
        return module_spec(sp);
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
        return probe_profile_arm((enum probe_kind)kind, sp.lo, sp.id,
                                 sp.kind & (HVT_PROBE_F_ACTION | HVT_PROBE_F_STACK));
    if (sp.kind & HVT_PROBE_F_LINKTIME) {
        if (!kaslr_known())
            return PROBE_EINVAL;
        sp.lo += kaslr_slide();
        sp.hi += kaslr_slide();
    }
    if (kind < PROBE_ENTRY || kind > PROBE_ADDR || !trace_opts_is_kernel(sp.lo) ||
        (kind == PROBE_RETURN && (sp.hi <= sp.lo || sp.hi - sp.lo > PROBE_RETURN_SPAN_MAX)))
        return PROBE_EINVAL;
    return probe_arm((enum probe_kind)kind, sp.lo, sp.hi, sp.id,
                     sp.kind & (HVT_PROBE_F_RECORD | HVT_PROBE_F_STACK | HVT_PROBE_F_SYSARGS |
                                HVT_PROBE_F_ACTION));
}

/* A tracepoint's site in a module: s (lo, hi: the module's and the function's keys), args[0]
 * (recipe words 0 and 1) and args[1] (word 2, the site's offset in the function). */
static int module_sdt_spec(const struct hvt_probe_spec *s, const struct hvt_probe_spec *args)
{
    if (args[0].id != s->id || args[0].kind != HVT_PROBE_KIND_ARGS || args[1].id != s->id ||
        args[1].kind != (HVT_PROBE_KIND_ARGS | HVT_PROBE_F_MODULE) ||
        (s->kind & HVT_PROBE_KIND_MASK) != PROBE_ADDR || args[1].hi > UINT32_MAX ||
        (s->kind & ~(HVT_PROBE_KIND_MASK | HVT_PROBE_F_RECORD | HVT_PROBE_F_STACK | HVT_PROBE_F_ACTION |
                     HVT_PROBE_F_SDT | HVT_PROBE_F_MODULE)))
        return PROBE_EINVAL;
    uint64_t recipe[3] = { args[0].lo, args[0].hi, args[1].lo };
    spin_lock(&mod_lock);
    int rc = probe_module_want_sdt(&mod_io, s->id, s->kind & (HVT_PROBE_F_RECORD | HVT_PROBE_F_STACK | HVT_PROBE_F_ACTION),
                                   s->lo, s->hi, (uint32_t)args[1].hi, recipe);
    spin_unlock(&mod_lock);
    return rc;
}

int probe_arm_spec_sdt(const struct hvt_probe_spec *s, const struct hvt_probe_spec *args)
{
    unsigned kind = s->kind & HVT_PROBE_KIND_MASK;
    if (args && (s->kind & HVT_PROBE_F_MODULE))
        return module_sdt_spec(s, args);
    if (!args || args->id != s->id || args->kind != HVT_PROBE_KIND_ARGS || kind != PROBE_ADDR ||
        (s->kind & ~(HVT_PROBE_KIND_MASK | HVT_PROBE_F_LINKTIME | HVT_PROBE_F_RECORD |
                     HVT_PROBE_F_STACK | HVT_PROBE_F_ACTION | HVT_PROBE_F_SDT)))
        return PROBE_EINVAL;
    uint64_t va = s->lo, recipe[3] = { args->lo, args->hi, s->hi };
    if (s->kind & HVT_PROBE_F_LINKTIME) {
        if (!kaslr_known())
            return PROBE_EINVAL;
        va += kaslr_slide();
    }
    if (!trace_opts_is_kernel(va))
        return PROBE_EINVAL;
    return probe_arm_sdt(va, s->id, s->kind & (HVT_PROBE_F_RECORD | HVT_PROBE_F_STACK | HVT_PROBE_F_ACTION),
                         recipe);
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
        uint64_t decode_left = PROBE_DECODE_MAX;
        for (uint32_t i = 0; i < len / sizeof(struct hvt_probe_spec); i++) {
            struct hvt_probe_spec sp;
            memcpy(&sp, args + i * sizeof sp, sizeof sp);   /* the args need not be aligned */
            if (!probe_budget_take(&decode_left, &sp, i == 0))
                break;                     /* the rest in the host's next request */
            int rc;
            unsigned nr = hvt_probe_spec_records(&sp);
            if (nr) {                      /* with its recipe, the next spec (two in a module) */
                struct hvt_probe_spec ra[2];
                bool have = i + nr < len / sizeof(struct hvt_probe_spec);
                if (have)
                    memcpy(ra, args + (i + 1) * sizeof ra[0], nr * sizeof ra[0]);
                rc = probe_arm_spec_sdt(&sp, have ? ra : NULL);
                if (rc >= 0 || rc == PROBE_ENOSITE) {
                    i += nr;
                    st.specs_taken += nr;
                }
            } else {
                rc = probe_arm_spec(&sp);
            }
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
    case HVT_CTL_PROBE_COST: {
        if (len != 1 || args[0] > HVT_PROBE_COST_GET)
            return HVT_CTL_EINVAL;
        if (args[0] != HVT_PROBE_COST_GET)
            probe_cost_set(args[0] == HVT_PROBE_COST_ON);
        struct hvt_probe_cost list[(HVT_CTL_MAX_DATA - sizeof(struct hvt_probe_cost_head)) /
                                          sizeof(struct hvt_probe_cost)];
        struct hvt_probe_cost_head h = { .on = probe_cost_enabled() };
        h.n = probe_cost_list(list, sizeof list / sizeof list[0], &h.total);
        memcpy(out, &h, sizeof h);
        memcpy(out + sizeof h, list, h.n * sizeof list[0]);
        *out_len = (uint32_t)(sizeof h + h.n * sizeof list[0]);
        return HVT_CTL_OK;
    }
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

static const struct trace_opts *ctl_opts;  /* the boot configuration's probes (ARM_CFG) */
static int (*ctl_load_d)(uint64_t va, uint32_t len);

/* HVT_HC_PROBE_ARM_SPECS: arm the probes of a guest array (read safely, bounded, each one
 * checked). One call decodes at most PROBE_DECODE_MAX bytes of guest code (return probes
 * decode their function): past that it stops with HVT_HC_EBUSY, RCX the specs taken, and the
 * guest calls again with the rest. */
static int64_t probe_arm_specs(struct guest_regs *g)
{
    uint64_t va = g->r[GPR_RCX], n = g->r[GPR_RDX] & ~HVT_PROBE_NOWAIT;
    bool wait = !(g->r[GPR_RDX] & HVT_PROBE_NOWAIT);
    int64_t armed = 0;
    uint64_t taken = 0, decode_left = PROBE_DECODE_MAX;
    bool more = false;
    if (n > HVT_PROBE_SPECS_MAX)
        return HVT_HC_EINVAL;
    struct gmem_paging pg;
    hv_guest_paging(&pg);
    for (; taken < n; taken++) {
        struct hvt_probe_spec sp;
        if (gmem_read_gva(&pg, va + taken * sizeof sp, &sp, sizeof sp) != sizeof sp)
            break;
        if (!probe_budget_take(&decode_left, &sp, taken == 0)) {
            more = true;                   /* this exit decoded enough: the rest next call */
            break;
        }
        int rc;
        unsigned nr = hvt_probe_spec_records(&sp);
        if (nr) {                          /* with its recipe, the next spec (two in a module) */
            struct hvt_probe_spec ra[2];
            bool have = taken + nr < n &&
                        gmem_read_gva(&pg, va + (taken + 1) * sizeof ra[0], ra, nr * sizeof ra[0]) ==
                            nr * sizeof ra[0];
            rc = probe_arm_spec_sdt(&sp, have ? ra : NULL);
            if (rc >= 0)
                taken += nr;
        } else {
            rc = probe_arm_spec(&sp);
        }
        if (rc < 0 && rc != PROBE_ENOSITE)
            break;
        armed += rc > 0 ? rc : 0;
    }
    g->r[GPR_RBX] = (uint64_t)armed;
    g->r[GPR_RCX] = taken;
    if (more)
        return HVT_HC_EBUSY;
    if (armed && wait)
        hv_ept_wait_all(4 * TRACE_POLL_TICKS);
    return HVT_HC_OK;
}

/* HVT_HC_PROBE_ARM_CFG: arm the boot configuration's probes (RCX: a mask of them, 0 = all). */
static int64_t probe_arm_cfg(struct guest_regs *g)
{
    if (!kaslr_known())
        return HVT_HC_EINVAL;
    int64_t armed = 0, first_rc = 0;
    uint64_t which = g->r[GPR_RCX];         /* bit i-1: probe i; 0: all */
    for (unsigned i = 0; i < ctl_opts->nprobe; i++) {
        if (which && !(which & (1ull << i)))
            continue;
        const struct trace_probe *tp = &ctl_opts->probe[i];
        uint64_t slide = kaslr_slide();
        int rc = probe_arm((enum probe_kind)tp->kind, tp->lo + slide, tp->hi + slide, i + 1, 0);
        hv_log("hvtrace: cpu %u: probe %u (%s %lx): %d site(s)\n", hv_cpu_id(), i + 1,
               tp->kind == PROBE_ENTRY ? "entry" : tp->kind == PROBE_RETURN ? "return" : "addr",
               tp->lo + slide, rc);
        if (rc > 0)
            armed += rc;
        else if (rc < 0 && !first_rc) {
            first_rc = rc;
            g->r[GPR_RCX] = i;
        }
    }
    g->r[GPR_RBX] = (uint64_t)armed;
    /* Return once every CPU runs with the probes (each takes them at its next exit). */
    if (armed && !hv_ept_wait_all(4 * TRACE_POLL_TICKS))
        hv_log("hvtrace: cpu %u: a CPU has not taken up the probes yet\n", hv_cpu_id());
    return armed || !first_rc ? HVT_HC_OK : HVT_HC_EINVAL;
}

/* HVT_HC_PROBE: RBX = enum hvt_hc_probe_op (include/hvt_hypercall.h). */
static int64_t hook_probe(struct guest_regs *g)
{
    switch (g->r[GPR_RBX]) {
    case HVT_HC_PROBE_DISARM_LOG:
        probe_report();                     /* the counts, then the table starts empty */
        probe_disarm_all();
        probe_report_stats();
        return HVT_HC_OK;
    case HVT_HC_PROBE_ARM_SPECS:
        return probe_arm_specs(g);
    case HVT_HC_PROBE_DISARM:
        probe_disarm_all();
        return HVT_HC_OK;
    case HVT_HC_PROBE_COST: {
        uint64_t what = g->r[GPR_RCX], ticks[HVT_PH_COUNT], fires, newtask, switched;
        if (what < 2) {
            probe_cost_set(what == 1);
            return HVT_HC_OK;
        }
        if (what - 2 > HVT_PH_COUNT)
            return HVT_HC_EINVAL;
        probe_cost_sum(ticks, &fires, &newtask, &switched);
        if (what - 2 == HVT_PH_COUNT) {    /* the firings in a new task, of another probe */
            g->r[GPR_RBX] = newtask;
            g->r[GPR_RCX] = switched;
            return HVT_HC_OK;
        }
        g->r[GPR_RBX] = ticks[what - 2];
        g->r[GPR_RCX] = fires;
        return HVT_HC_OK;
    }
    case HVT_HC_PROBE_LOAD_D: {             /* a D program image from guest memory */
        int rc = g->r[GPR_RDX] > UINT32_MAX ? -1 : ctl_load_d(g->r[GPR_RCX], (uint32_t)g->r[GPR_RDX]);
        g->r[GPR_RBX] = (uint64_t)(int64_t)rc;
        return rc ? HVT_HC_EINVAL : HVT_HC_OK;
    }
    }
    probe_flush();                          /* this CPU's records first: they fired before */
    switch (g->r[GPR_RBX]) {
    case HVT_HC_PROBE_STATS:
        probe_report_stats();
        probe_counters(&g->r[GPR_RBX], &g->r[GPR_RCX], &g->r[GPR_RDX]);
        return HVT_HC_OK;
    case HVT_HC_PROBE_ARM_CFG:
        return probe_arm_cfg(g);
    default:
        return HVT_HC_EINVAL;
    }
}

int probe_ctl_init(const struct trace_opts *opts, enum hv_hc_priv priv,
                   int (*load_d)(uint64_t va, uint32_t len))
{
    bool one;
    ctl_opts = opts;
    ctl_load_d = load_d;
    probe_set_module_hook(module_event);
    hv_hypercall_register(HVT_HC_PROBE, hook_probe, priv, &one);
    return one ? 0 : -1;
}
