/*
 * step.c - single-stepping the guest with the monitor trap flag (Intel SDM 26.5.2) and
 * turning each step into one record (rec_enc.c).
 *
 * At every MTF exit the guest is about to execute the instruction at RIP, and the registers
 * show the effect of the previous one. So each CPU keeps one instruction "pending": at the
 * next exit it is written with the registers it produced, and the new RIP becomes pending.
 * Its bytes are read before it runs (self-modifying code is recorded as it was executed).
 * Exits that emulate an instruction (CPUID, VMCALL, ...) move RIP without an MTF exit; the
 * post-exit hook treats them as a step too.
 * Interrupt and exception entries are recognised by RIP landing on a handler of the guest's
 * IDT (MTF exits after event delivery, before the handler's first instruction: SDM 26.5.2).
 */
#include "step.h"
#include "trace.h"
#include "codedict.h"
#include "rec_enc.h"
#include "x86_len.h"
#include "x86_wregs.h"
#include "hv_api.h"
#include "hv_guest.h"
#include "hv_exit.h"
#include "gmem.h"
#include "time_dilate.h"
#include "task.h"
#include "kaslr.h"
#include "trace_opts.h"
#include "step_cpu.h"
#include "scope.h"

#define IDT_GATE_SIZE 16
#define PAGE          STEP_PAGE
#define CS_AR_L       (1u << 13)            /* 64-bit code segment (SDM 24.4.1, 3.4.5) */

struct trace_cpu step_cpus[HVT_MAX_CPUS];
volatile int trace_want;                   /* 1: every CPU should step */
bool step_stepping[HVT_MAX_CPUS];           /* step_cpus[].stepping, for step_cpu_idle() */
static volatile unsigned want_reason;      /* HVT_REASON_* of the last start/stop request */
struct trace_stats trace_stats;

/* Options that act at every step (step_configure); kernel addresses slid at start. */
static struct {
    enum trace_only only;
    uint64_t cr3;
    struct trace_range range[TRACE_MAX_RANGES];
    unsigned nrange;
    uint64_t stop_at[TRACE_MAX_STOP_AT];
    unsigned nstop_at;
    bool filtering, budget_on;
    volatile int64_t budget_left;
} sopt;
static const struct trace_opts *opts;

/* Empty entries hold a RIP no instruction has (non-canonical): a zeroed one would match 0. */
static void icache_reset(struct trace_cpu *t)
{
    for (unsigned i = 0; i < ICACHE_SLOTS; i++) {
        t->f->icache[i].rip = ~0ull;
        t->f->icache[i].fgen = 0;
        t->f->icache[i].slot = (uint16_t)(i / ICACHE_WAYS);
    }
}

static void step_woken(void);

int step_init(unsigned ncpu)
{
    for (unsigned i = 0; i < ncpu; i++) {
        struct step_fast *f = hv_alloc_pages(HV_PAGES(sizeof(struct step_fast)));
        if (!f)
            return -1;
        step_cpus[i].chunk = f->chunk_store;
        f->self = f;
        f->enc = &f->enc_store;
        f->icache = hv_alloc_pages(HV_PAGES(ICACHE_SLOTS * sizeof(struct icache_entry)));
        step_cpus[i].f = f;
        if (!f->icache)
            return -1;
        icache_reset(&step_cpus[i]);
    }
    if (hv_on_wake(step_woken))
        return -1;
    return codedict_init();
}

void step_configure(const struct trace_opts *o)
{
    opts = o;
    sopt.only = o->only;
    sopt.cr3 = o->cr3 & CR3_PROC_MASK;
    sopt.nrange = o->nrange;
    sopt.nstop_at = o->nstop_at;
    sopt.filtering = o->only != TRACE_ONLY_ALL || o->cr3 || o->nrange;
    sopt.budget_on = o->budget != 0;
    sopt.budget_left = (int64_t)o->budget;
    scope_configure(o);
}

void step_flight(uint64_t mb)
{
    if (mb && trace_sink_flight(mb, hv_cpu_count(), CHUNK_BYTES))
        hv_log("hvtrace: flight recorder: not enough hypervisor memory for %lu MB: streaming instead\n", mb);
}

/* Kernel addresses in the options are link-time: slide them once the slide is known. */
static void slide_options(void)
{
    uint64_t slide = kaslr_slide();
    for (unsigned i = 0; i < sopt.nrange; i++) {
        bool k = trace_opts_is_kernel(opts->range[i].lo) && !opts->ranges_runtime;
        sopt.range[i].lo = opts->range[i].lo + (k ? slide : 0);
        sopt.range[i].hi = opts->range[i].hi + (k ? slide : 0);
    }
    for (unsigned i = 0; i < sopt.nstop_at; i++)
        sopt.stop_at[i] = opts->stop_at[i] + (trace_opts_is_kernel(opts->stop_at[i]) ? slide : 0);
}

/* The filters' verdict on an address (kernel/user only, ranges), whatever the process. */
static bool rip_pass(uint64_t rip)
{
    bool kernel = trace_opts_is_kernel(rip);
    if ((sopt.only == TRACE_ONLY_KERNEL && !kernel) || (sopt.only == TRACE_ONLY_USER && kernel))
        return false;
    if (!sopt.nrange)
        return true;
    for (unsigned i = 0; i < sopt.nrange; i++)
        if (rip >= sopt.range[i].lo && rip < sopt.range[i].hi)
            return true;
    return false;
}

static bool filter_pass(uint64_t rip, uint64_t cr3)
{
    return (!sopt.cr3 || (cr3 & CR3_PROC_MASK) == sopt.cr3) && rip_pass(rip);
}

/* --- guest code bytes through a small software TLB --- */

/* Also ends the fast path's use of every decoded entry at a user address: their host
 * pointers came from this process's translations. */
static void stlb_flush(struct trace_cpu *t)
{
    for (int i = 0; i < STLB_SLOTS; i++)
        t->stlb[i].tag = 1;            /* never a page-aligned VA */
    if (++t->f->fgen_user <= FGEN_KERNEL || (t->f->fgen_user & FGEN_FLAGS)) {
        /* Wrapped: no entry may keep an old generation that would be valid again. */
        t->f->fgen_user = FGEN_KERNEL + 1;
        for (unsigned i = 0; i < ICACHE_SLOTS; i++)
            t->f->icache[i].fgen = 0;
    }
}

static uint8_t *page_of(struct trace_cpu *t, uint64_t va)
{
    uint64_t vp = va & ~(PAGE - 1);
    struct stlb_entry *s = &t->stlb[(vp >> X86_PAGE_SHIFT) & (STLB_SLOTS - 1)];
    if (s->tag == vp)
        return s->page;
    struct gmem_paging pg;
    struct gmem_xlat x;
    hv_guest_paging(&pg);
    if (gmem_walk(&pg, vp, &x))
        return 0;
    uint8_t *h = gmem_map_gpa(x.gpa);
    if (h) {
        s->tag = vp;
        s->page = h;
    }
    return h;
}

/* Copy up to 15 bytes at rip; returns how many could be read. */
static unsigned fetch(struct trace_cpu *t, uint64_t rip, uint8_t *out)
{
    unsigned n = 0;
    while (n < X86_MAX_INSN_LEN) {
        uint64_t a = rip + n;
        uint8_t *p = page_of(t, a);
        if (!p)
            break;
        unsigned off = (unsigned)(a & (PAGE - 1)), take = (unsigned)(PAGE - off);
        if (take > X86_MAX_INSN_LEN - n)
            take = X86_MAX_INSN_LEN - n;
        memcpy(out + n, p + off, take);
        n += take;
    }
    return n;
}

/* --- the guest's IDT: handler address -> vector --- */

static void evmap_build(struct trace_cpu *t);
static uint32_t ends_seen[HVT_MAX_CPUS];    /* scope_ends_gen() when each CPU's evmap was built */

static void idt_load(struct trace_cpu *t)
{
    uint64_t base = hv_guest_read(HV_GUEST_IDTR_BASE);
    unsigned limit = (unsigned)hv_guest_read(HV_GUEST_IDTR_LIMIT);
    struct gmem_paging pg;
    hv_guest_paging(&pg);
    t->idt_base = base;
    for (unsigned v = 0; v < IDT_VECTORS; v++) {
        uint8_t g[IDT_GATE_SIZE];
        t->idt_handler[v] = 0;
        if ((v + 1) * IDT_GATE_SIZE - 1 > limit)
            continue;
        if (gmem_read_gva(&pg, base + v * IDT_GATE_SIZE, g, sizeof g) != sizeof g)
            continue;
        /* 64-bit gate (SDM 6.14.1): offset 15:0, 31:16, 63:32; P is bit 47. */
        if (!(g[5] & 0x80))
            continue;
        t->idt_handler[v] = (uint64_t)g[0] | (uint64_t)g[1] << 8 | (uint64_t)g[6] << 16 |
                            (uint64_t)g[7] << 24 | (uint64_t)g[8] << 32 | (uint64_t)g[9] << 40 |
                            (uint64_t)g[10] << 48 | (uint64_t)g[11] << 56;
        uint8_t code[X86_MAX_INSN_LEN];
        size_t n = gmem_read_gva(&pg, t->idt_handler[v], code, sizeof code);
        t->idt_first_len[v] = n ? (uint8_t)x86_insn_len(code, n) : 0;
    }
    evmap_build(t);
}

static void evmap_add(struct trace_cpu *t, uint64_t rip, int vec, bool ran_first)
{
    for (unsigned i = evmap_hash(rip), n = 0; n < EVMAP_SLOTS; i = (i + 1) % EVMAP_SLOTS, n++) {
        if (t->evmap[i].rip == rip)
            return;                             /* shared handler: keep the first vector */
        if (!t->evmap[i].rip) {
            t->evmap[i].rip = rip;
            t->evmap[i].vec = (int16_t)vec;
            t->evmap[i].ran_first = ran_first;
            return;
        }
    }
}

static void evmap_build(struct trace_cpu *t)
{
    memset(t->evmap, 0, sizeof t->evmap);
    for (int v = 0; v < IDT_VECTORS; v++)
        if (t->idt_handler[v]) {
            evmap_add(t, t->idt_handler[v], v, false);
            if (t->idt_first_len[v])
                evmap_add(t, t->idt_handler[v] + t->idt_first_len[v], v, true);
        }
    /* Auto-stop addresses: no event (vec -1), but the fast path leaves them to step(). */
    for (unsigned i = 0; i < sopt.nstop_at; i++)
        evmap_add(t, sopt.stop_at[i], -1, false);
    /* The ends of step()'s threads: the same (scope_ends_gen says when they change). */
    uint64_t ends[SCOPE_MAX_THREADS];
    ends_seen[t - step_cpus] = scope_ends_gen();
    for (unsigned i = 0, n = scope_ends(ends, SCOPE_MAX_THREADS); i < n; i++)
        evmap_add(t, ends[i], -1, false);
    /* The decoded-instruction cache marks evmap addresses (P_SPECIAL) when it fills: start
     * it again so every mark reflects this map. */
    icache_reset(t);
}

/* The evmap entry for rip, or NULL. */
static const struct evmap_entry *evmap_find(const struct trace_cpu *t, uint64_t rip)
{
    for (unsigned i = evmap_hash(rip); t->evmap[i].rip; i = (i + 1) % EVMAP_SLOTS)
        if (t->evmap[i].rip == rip)
            return &t->evmap[i];
    return 0;
}

/* Did an interrupt or exception just get delivered? Real CPUs take the MTF exit before the
 * handler's first instruction (RIP = handler, SDM 26.5.2); Bochs 3.0 takes it after that
 * instruction (RIP = handler + its length). Returns the vector, and *ran_first. */
static int event_at(struct trace_cpu *t, uint64_t rip, bool *ran_first)
{
    const struct evmap_entry *m = evmap_find(t, rip);
    if (!m)
        return -1;
    *ran_first = m->ran_first;
    return m->vec;
}

/* --- chunks --- */

/* Every chunk after the first restates whose instructions follow (CONTEXT), so a reader - or a
 * flight-recorder dump that lost the older chunks - can start at any chunk. Time stamps use the
 * guest's TSC as the exit found it (hv_exit_guest_tsc): dilation takes the exit out of it,
 * whatever the hypervisor does meanwhile (a chunk sent to the debug port takes millions of
 * ticks). */
static void chunk_begin(struct trace_cpu *t)
{
    rec_begin(t->f->enc, t->chunk, CHUNK_BYTES, hv_exit_guest_tsc());
    if (t->task_known)
        (void)rec_context(t->f->enc, t->task.pid, t->task.tgid, t->task.comm, t->task_cr3);
}

static struct trace_chunk_info chunk_info(const struct rec_enc *e, unsigned cpu)
{
    struct trace_chunk_info ci = { .cpu = cpu, .kind = TRACE_CHUNK_RECORDS,
                                   .nrecords = e->nrecords, .ninsns = e->ninsns,
                                   .first_tsc = e->first_tsc, .last_tsc = rec_tsc(e) };
    return ci;
}

static void chunk_flush(struct trace_cpu *t, unsigned cpu)
{
    struct rec_enc *e = t->f->enc;
    if (!e->nrecords)
        return;
    codedict_flush();                       /* ids before their first use */
    struct trace_chunk_info ci = chunk_info(e, cpu);
    uint64_t t0 = hv_rdtsc();
    trace_sink_chunk(&ci, e->buf, e->len);
    t->t_sink += hv_rdtsc() - t0;
    t->records_bytes += e->len;
    chunk_begin(t);
}

#define EMIT(t, cpu, call) do { if (call) { chunk_flush(t, cpu); (void)(call); } } while (0)

/* The exit stub saved the GPRs in x86 encoding order - the format's HVT_REG_* order - with a
 * free slot for RSP (it lives in the VMCS; the stub does not restore that slot): fill it, and
 * the saved registers are the record's register array, without a copy. */
_Static_assert((int)GPR_RAX == (int)HVT_REG_RAX && (int)GPR_RSP == (int)HVT_REG_RSP &&
               (int)GPR_R15 == (int)HVT_REG_R15,
               "guest_regs order is the trace format's register order");
static const uint64_t *gprs(struct guest_regs *g)
{
    g->r[GPR_RSP] = hv_guest_read(HV_GUEST_RSP);
    return g->r;
}

/* Filters suspend recording with STOP(FILTER) and resume it with START(FILTER): a reader
 * (and the continuity check) then knows the next instruction does not follow the last one. */
static void recording(struct trace_cpu *t, unsigned cpu, bool on)
{
    if (t->rec_on == on)
        return;
    EMIT(t, cpu, rec_startstop(t->f->enc, on, HVT_REASON_FILTER));
    t->rec_on = on;
}

/* Write one instruction record if the filters keep it and the budget allows it; true if
 * written. The budget is one counter for all CPUs, so the trace holds exactly that many. */
static bool put_insn(struct trace_cpu *t, unsigned cpu, bool keep, uint64_t rip, uint32_t id,
                     unsigned len, uint64_t cr3, const uint64_t *gpr, uint64_t rflags, uint32_t cand)
{
    if (!keep) {
        recording(t, cpu, false);
        t->filtered++;
        return false;
    }
    recording(t, cpu, true);
    if (sopt.budget_on) {
        int64_t left = __atomic_sub_fetch(&sopt.budget_left, 1, __ATOMIC_RELAXED);
        if (left < 0) {
            step_request_reason(false, HVT_REASON_BUDGET);
            return false;
        }
        if (!left)
            step_request_reason(false, HVT_REASON_BUDGET);   /* this one is the last */
    }
    /* A chunk counts its instructions in 32 bits, and FLOW's RUN markers count up to 65535
     * each: end it long before that (the fast path adds at most STEP_FAST_RUN more). */
    if (t->f->enc->ninsns > UINT32_MAX / 2)
        chunk_flush(t, cpu);
    EMIT(t, cpu, rec_insn(t->f->enc, rip, id, len, cr3, gpr, rflags, cand));
    t->recorded++;
    /* The predictor slot of rip now holds (rip, id): the decoded entry of that slot mirrors
     * it if it is this instruction, and must not claim it otherwise (step_cpu.h pstamp). */
    icache_pred_set(t->f->icache, rip, id, t->f->enc->pstamp);
    return true;
}

/* Where the fast path finds the entry's bytes: valid for as long as its generation (see
 * step_cpu.h); never for an entry the full step must see - an event or stop address, or one
 * the filters leave out (the fast path records only what they keep: it runs within one
 * process, so only the address part can change their verdict; the cache starts afresh with
 * each window, whose options it reflects). */
static void icache_hptr(struct trace_cpu *t, struct icache_entry *ic, const uint8_t *h)
{
    ic->hptr = h;
    ic->fgen = icache_fgen(ic, (ic->flags & P_SPECIAL) || (sopt.filtering && !rip_pass(ic->rip)) ? 0
                               : trace_opts_is_kernel(ic->rip) ? FGEN_KERNEL : t->f->fgen_user);
}

/* What the fast path needs to take the next exits (step_fast.asm), after a full step whose
 * pending instruction it may retire ('ok') or not. */
static void fast_prepare(struct trace_cpu *t, unsigned cpu, uint64_t cr3, uint64_t rflags, bool ok)
{
    struct step_fast *f = t->f;
    /* The first record of a chunk compares every register (the decoder starts from zeros), and
     * an instruction that starts with RF or TF set changes RFLAGS whatever its write set says
     * (RF clears when it completes; TF raises #DB): the full step writes those records - unless
     * RF is all and the fast path compares RFLAGS for it anyway, as for a REP string
     * instruction, whose every iteration but the last ends with RF set. (Refused there, a full
     * step that fell inside a long REP MOVS took every iteration left: each began with RF.) */
    bool rf_ok = !(rflags & RFLAGS_RF) || (f->p_ic->cand >> HVT_REG_RFLAGS & 1);
    ok = ok && !f->enc->cand_all && !(rflags & RFLAGS_TF) && rf_ok;
    /* After a stretch the filters or the scope left out, the first record is the full step's:
     * it writes START(filter) and compares every register (they moved in the gap). */
    ok = ok && t->rec_on;
    /* The record that carries a new CR3 is the full step's (the fast path writes no CR3 field):
     * after a switch of address space, or of PTI half, one more exit takes the full step. */
    ok = ok && f->enc->cr3 == cr3;
    f->cr3 = cr3;
    f->len_limit = f->enc->cap - REC_MAX_BYTES;
    /* The guest's current task pointer must stay what task_check() last saw. */
    if (task_cpus[cpu].slot) {
        f->task_slot = task_cpus[cpu].slot;
        f->task_last = task_cpus[cpu].last;
    } else {
        f->task_slot = &f->task_last;        /* no attribution: nothing to watch */
        ok = ok && !task_on;
    }
    /* A full step at least every STEP_FAST_RUN exits, and at the exit where the guest's timer
     * deadline falls due (time_dilate.h: one guest tick per step). */
    ok = ok && !sopt.budget_on;             /* one count for all CPUs: every record checks it */
    f->left = ok ? dilate_fast_left(cpu, STEP_FAST_RUN) : 0;
}

/* The pending instruction retired (no event came first, or it is INT n / INT3, which retire
 * by delivering their vector): its record, and a SYSCALL's marker. */
static void retire_pending(struct trace_cpu *t, unsigned cpu, struct guest_regs *g,
                           const uint64_t *gpr, uint64_t rflags)
{
    const struct icache_entry *p = t->f->p_ic;
    if (put_insn(t, cpu, t->p_keep, p->rip, p->id, p->len, t->f->cr3, gpr, rflags,
                 REC_REGS_ALL | p_rep_cand(p->flags)) &&
        (p->flags & P_SYSCALL))
        EMIT(t, cpu, rec_syscall(t->f->enc, g->r[GPR_RAX]));
}

/* Vector v was delivered at RIP: its marker, the clock resynchronised, and the handler's
 * first instruction where Bochs already ran it before this exit. */
static void record_event(struct trace_cpu *t, unsigned cpu, int v, bool sw_int, bool ran_first,
                         bool keep, uint64_t cr3, const uint64_t *gpr, uint64_t rflags)
{
    uint8_t type = sw_int ? HVT_EV_SWINT : v == VEC_NMI ? HVT_EV_NMI : v < 32 ? HVT_EV_HWEXC : HVT_EV_EXTINT;
    if (v == VEC_DF)
        step_request_reason(false, HVT_REASON_DOUBLE_FAULT);
    if (keep) {
        recording(t, cpu, true);
        EMIT(t, cpu, rec_event(t->f->enc, (uint8_t)v, type, 0));
        /* Resynchronise the record clock (tick per instruction) with the guest's TSC at
         * each event: timestamps stay exact where time does not follow instructions. */
        EMIT(t, cpu, rec_time(t->f->enc, hv_exit_guest_tsc()));
    }
    if (ran_first) {
        uint64_t h = t->idt_handler[v];
        uint8_t hb[X86_MAX_INSN_LEN];
        unsigned hn = fetch(t, h, hb);
        if (hn && x86_insn_len(hb, hn) == t->idt_first_len[v])
            put_insn(t, cpu, !sopt.filtering || filter_pass(h, cr3), h,
                     codedict_id(h, hb, t->idt_first_len[v]), t->idt_first_len[v], cr3, gpr, rflags,
                     REC_REGS_ALL);
    }
}

/* A context switch since the last step: the SWITCH marker (pid, tgid, comm); with a scope,
 * whether the task now running is the wanted one. */
static void record_switch(struct trace_cpu *t, unsigned cpu, uint64_t cr3)
{
    struct task_info ti;
    if (task_check(cpu, &ti)) {
        EMIT(t, cpu, rec_switch(t->f->enc, ti.pid, ti.tgid, ti.comm, cr3));
        t->task = ti;
        t->task_cr3 = cr3;
        t->task_known = true;
        if (scope_on()) {
            t->scope_in = scope_wants(&ti);
            t->arriving = t->arriving && !t->scope_in;
            t->irq_skip = false;
        }
    }
}

/* Scope: this CPU switched to a task that is not wanted (the pending instruction is its):
 * stepping ends here until the switch probe sees a wanted task come (step_post_exit). The
 * guest's clock runs real time again, from where its dilated clock left it. */
static void scope_pause(struct trace_cpu *t, unsigned cpu)
{
    recording(t, cpu, false);
    t->paused = true;
    t->pauses++;
    t->have_pending = false;
    t->irq_skip = false;
    t->f->left = 0;
    hv_set_mtf_fast(false, 0);
    hv_set_mtf(false);
    hv_set_hlt_exiting(false);
    dilate_set(DILATE_OFF);
}

static bool step_threads_ended(void);

/* A step() window's function returned on its thread (the one this CPU runs): that thread's
 * window ends before the caller's next instruction. The last thread's ends the whole window
 * (this CPU stops at this exit's end, step_post_exit); otherwise this CPU stops stepping it,
 * with a STOP(probe) where its trace ends, and pauses until a thread still stepped comes. */
static void scope_thread_done(struct trace_cpu *t, unsigned cpu, int end)
{
    t->have_pending = false;
    t->f->left = 0;
    if (end == SCOPE_END_LAST && step_threads_ended())
        return;
    if (t->rec_on)
        EMIT(t, cpu, rec_startstop(t->f->enc, 0, HVT_REASON_PROBE));
    t->rec_on = false;
    t->scope_in = false;
    scope_pause(t, cpu);
}

/* The decoded-cache entry of the instruction at RIP: found with the same bytes, or decoded
 * (length, code id, class, write set) and cached. NULL: its bytes cannot be read now. */
static struct icache_entry *decode(struct trace_cpu *t, uint64_t rip)
{
    uint8_t bytes[16];
    struct icache_entry *ic = icache_find(t->f->icache, rip);
    uint8_t *page = page_of(t, rip);
    unsigned off = (unsigned)(rip & (PAGE - 1));
    /* Its 16-byte window on its page: at RIP, or the page's last 16 bytes for an instruction
     * that ends near the page's end (step_cpu.h shift), so that one runs on the fast path too
     * (a loop's instruction there would take the full step at every pass). */
    unsigned shift = icache_window_shift(off, PAGE);
    const uint8_t *win = page ? page + off - shift : 0;
    if (page && ic && off + ic->len <= PAGE) {
        uint64_t lo, hi;                         /* RIP is any byte: unaligned 8-byte loads */
        __builtin_memcpy(&lo, win, 8);
        __builtin_memcpy(&hi, win + 8, 8);
        if (!((lo ^ ic->lo) & ic->mlo) && !((hi ^ ic->hi) & ic->mhi)) {
            icache_hptr(t, ic, win);
            return ic;
        }
    }
    /* The bytes: the 16 at RIP straight from its page when they are all there (a fill's
     * common case), else byte by byte across the page's end. */
    unsigned n;
    if (page && !shift) {
        __builtin_memcpy(bytes, win, 16);
        n = X86_MAX_INSN_LEN;
    } else {
        n = fetch(t, rip, bytes);
    }
    unsigned len = n ? x86_insn_len(bytes, n) : 0;
    if (!len)
        return 0;
    uint32_t id = codedict_id(rip, bytes, len);
    if (!ic)                                /* (else: new bytes at a known address) */
        ic = icache_insert(t->f->icache, rip);
    icache_set_code(ic, rip, bytes, len, id);
    icache_set_shift(ic, shift);
    unsigned cls = x86_insn_class(bytes, len);
    ic->flags = (cls & X86_CLASS_SYSCALL ? P_SYSCALL : 0) | (cls & X86_CLASS_SWINT ? P_SWINT : 0) |
                (cls & X86_CLASS_IRET ? P_IRET : 0) | (cls & X86_CLASS_REPSTR ? P_REP : 0) |
                (cls & X86_CLASS_CTX ? P_CTX : 0) |
                (evmap_find(t, rip) ? P_SPECIAL : 0);
    /* The registers it may write, for the fast path's compare: decoded for 64-bit code
     * only (x86_wregs.h); other modes compare all. */
    bool wflags = true;
    ic->cand = hv_guest_read(HV_GUEST_CS_AR) & CS_AR_L
               ? x86_insn_writes(bytes, len, &wflags) | (uint32_t)wflags << HVT_REG_RFLAGS
               : CAND_ALL;
    if (ic->cand == X86_WREGS_ALL)
        ic->cand = CAND_ALL;
    if (opts->record == HVT_MODE_REGS)      /* the fast path compares only what is recorded */
        ic->cand &= opts->regmask;
    ic->handler = step_fast_handler(ic->cand | p_rep_cand(ic->flags));
    if (page && off + len <= PAGE)
        icache_hptr(t, ic, win);
    else if (page && icache_set_tail(ic, bytes, off + len - PAGE)) {
        /* Across the page's end: the fast path compares the next page's part too (a loop's
         * instruction there would take the full step at every pass). */
        const uint8_t *next = page_of(t, rip - off + PAGE);
        if (next) {
            ic->hptr2 = next;
            icache_hptr(t, ic, win);
            if (ic->fgen)
                ic->fgen |= FGEN_CROSS;
        }
    }
    return ic;
}

/* The fast path's fill (step_cpu.h f.fill): decode() from inside a fast step. */
static struct icache_entry *step_fast_fill(struct step_fast *f, uint64_t rip)
{
    struct trace_cpu *t = &step_cpus[hv_cpu_id()];      /* (this CPU's: t->f is f) */
    /* (An event map older than step()'s ends is the full step's to rebuild first.) */
    if (icache_set(rip) == icache_set(f->p_ic->rip) || scope_ends_gen() != ends_seen[t - step_cpus])
        return 0;
    struct icache_entry *ic = decode(t, rip);
    f->fills += ic != 0;
    return ic;
}

/* One full step: retire the pending instruction, record what happened at this exit (an
 * event, a stop address, a context switch), decode the instruction at RIP, make it pending
 * and prepare the fast path for the next exit. */
static void step(struct trace_cpu *t, unsigned cpu, struct guest_regs *g)
{
    uint64_t rip = hv_guest_read(HV_GUEST_RIP), cr3 = hv_guest_read(HV_GUEST_CR3);
    /* The software TLB holds per process: the two page tables of a PTI pair translate alike
     * wherever both map (the user one maps little of the kernel, the kernel one all of user
     * space), so the switch at every system call and return keeps it. */
    if ((cr3 & CR3_PROC_MASK) != t->stlb_cr3) {
        stlb_flush(t);
        t->stlb_cr3 = cr3 & CR3_PROC_MASK;
    }
    bool idt_moved = hv_guest_read(HV_GUEST_IDTR_BASE) != t->idt_base;
    if (idt_moved || scope_ends_gen() != ends_seen[cpu]) {
        /* The reload (or new step() ends: the event map again) empties the decoded-instruction
         * cache; the pending instruction (often the LIDT that moved the IDT) still retires
         * below, from a copy of its entry: read from the emptied slot its record would carry
         * the empty marker as RIP (~0). */
        if (t->have_pending) {
            t->p_saved = *t->f->p_ic;
            t->f->p_ic = &t->p_saved;
        }
        if (idt_moved)
            idt_load(t);
        else
            evmap_build(t);
    }
    const uint64_t *gpr = gprs(g);
    uint64_t rflags = hv_guest_read(HV_GUEST_RFLAGS);
    bool ran_first = false;
    int v = event_at(t, rip, &ran_first);
    /* RIP = handler + the length of its first instruction is a delivery whose MTF exit came
     * after that instruction - unless this CPU's last exit was at the handler itself (the
     * delivery seen there), and that instruction has just retired. */
    if (v >= 0 && ran_first && t->have_pending && t->f->p_ic->rip == t->idt_handler[v])
        v = -1;
    /* An event means the pending instruction did not retire (an interrupt came first, or it
     * faulted) - unless it is INT n / INT3, which retire by delivering their vector. */
    bool sw_int = t->have_pending && (t->f->p_ic->flags & P_SWINT);
    if (t->have_pending && (v < 0 || sw_int))
        retire_pending(t, cpu, g, gpr, rflags);
    /* Auto-stop where the guest is dying (stop_at: panic, oops entry) or took #DF. */
    for (unsigned i = 0; i < sopt.nstop_at; i++)
        if (rip == sopt.stop_at[i]) {
            hv_log("hvtrace: cpu %u: stop_at address %lx reached\n", cpu, rip);
            step_request_reason(false, HVT_REASON_STOP_AT);
        }
    record_switch(t, cpu, cr3);
    if (t->scope_in && t->task_known && scope_on()) {
        int end = scope_thread_end(t->task.pid, rip, gpr[GPR_RSP]);
        if (end != SCOPE_END_NO) {
            scope_thread_done(t, cpu, end);
            return;
        }
    }
    if (scope_on() && t->irq_skip && rip == t->irq_rip && gpr[GPR_RSP] == t->irq_rsp)
        t->irq_skip = false;                /* back where the interrupt came in */
    /* irq=out: a hardware interrupt or NMI taken by the wanted context is left out up to its
     * return (the pending instruction did not retire: it is where the frame returns to). */
    if (scope_on() && v >= 0 && !sw_int && (v >= 32 || v == VEC_NMI) && scope_irq_out() &&
        t->scope_in && !t->irq_skip && t->have_pending &&
        scope_irq_frame(gpr[GPR_RSP], t->f->p_ic->rip, &t->irq_rsp)) {
        t->irq_skip = true;
        t->irq_rip = t->f->p_ic->rip;
    }
    bool keep = (!sopt.filtering || filter_pass(rip, cr3)) &&
                (!scope_on() || (t->scope_in && !t->irq_skip));
    if (v >= 0)
        record_event(t, cpu, v, sw_int, ran_first, keep, cr3, gpr, rflags);
    t->steps++;
    if (t->arriving && t->steps > t->arrive_until)
        t->arriving = false;                /* the switch did not come (a bound, never seen) */
    if (scope_on() && !t->scope_in && !t->arriving) {
        scope_pause(t, cpu);                /* another task runs here now */
        return;
    }
    struct icache_entry *ic = decode(t, rip);
    if (!ic) {
        t->f->left = 0;
        /* Not readable (the page is not present: the guest takes #PF here and retries
         * later, which we will record then) or cut short. Nothing retires here now. */
        t->have_pending = false;
        return;
    }
    t->have_pending = true;
    t->p_keep = keep;
    t->f->p_ic = ic;
    fast_prepare(t, cpu, cr3, rflags, keep && !(ic->flags & P_PENDING));
}

/* Scope: the wanted context is about to run on this CPU (the switch probe saw it come:
 * 'arriving', the task changes inside __switch_to; or the task running here became wanted):
 * stepping resumes at RIP, the guest's clock dilated again. */
#define SCOPE_ARRIVE_STEPS 100000
static void scope_resume(struct trace_cpu *t, unsigned cpu, struct guest_regs *g, bool arriving)
{
    t->paused = false;
    t->resumes++;
    t->arriving = arriving;
    t->arrive_until = t->steps + SCOPE_ARRIVE_STEPS;
    t->scope_in = !arriving;
    /* Became wanted without a switch (an exec renamed it, a step() on it): the SWITCH this CPU
     * wrote when it came may name it as it was then; the first step writes it anew. */
    if (!arriving)
        task_forget(cpu);
    hv_set_hlt_exiting(true);
    dilate_set(DILATE_SOFT);
    hv_set_mtf_fast(true, t->f);
    hv_set_mtf(true);
    t->have_pending = false;
    step(t, cpu, g);
    t->f->left = 0;                          /* a probe's step-over may own the next MTF exit */
}

/* HLT while stepping: stepping would wake the CPU at once (Bochs) or leave the halt
 * unobserved. Park it: skip HLT, enter the HLT activity state without MTF, and let the next
 * external interrupt exit (step_extint_exit) so stepping resumes right at its delivery; an NMI
 * exits too where vmm/ has NMI exiting (step_post_exit unparks). With IF=0 only an NMI or INIT
 * can wake it. */
bool step_hlt_exit(struct guest_regs *g)
{
    unsigned cpu = hv_cpu_id();
    struct trace_cpu *t = &step_cpus[cpu];
    hv_skip_insn();
    if (!t->stepping || t->paused)
        return true;
    step(t, cpu, g);                        /* HLT retired; the next instruction is pending */
    hv_set_activity(VMX_ACTIVITY_HLT);
    if (t->paused)                          /* it switched away first: halt unstepped */
        return true;
    hv_set_mtf(false);
    hv_set_mtf_fast(false, t->f);          /* the stub's shortest way to the exit's rdtsc */
    dilate_set(DILATE_HARD);                /* no steps to check the deadline at */
    if (hv_guest_read(HV_GUEST_RFLAGS) & RFLAGS_IF)
        hv_set_extint_exiting(true);
    t->halted = true;                       /* with IF=0 too: an NMI's exit unparks it */
    return true;
}

/* A parked CPU woke (an external interrupt or an NMI exited, or vmm/ gave it an NMI it held):
 * active again, stepped again from the event's delivery on. */
static void unpark(struct trace_cpu *t)
{
    if (!t->halted)
        return;
    t->halted = false;
    hv_set_extint_exiting(false);
    hv_set_activity(VMX_ACTIVITY_ACTIVE);
    if (t->stepping) {
        hv_set_mtf(true);
        hv_set_mtf_fast(true, t->f);
        dilate_set(DILATE_SOFT);
    }
}

/* vmm/ woke a parked CPU with an event of its own (an NMI it caught in VMX root, held for the
 * guest): it runs again from that delivery, stepped, as after a wake-up that exits. */
static void step_woken(void)
{
    unpark(&step_cpus[hv_cpu_id()]);
}

bool step_extint_exit(struct guest_regs *g)
{
    hv_set_extint_exiting(false);
    unpark(&step_cpus[hv_cpu_id()]);
    return true;
}

static void start_cpu(struct trace_cpu *t, unsigned cpu)
{
    t->stepping = true;
    step_stepping[t - step_cpus] = true;
    hv_set_hlt_exiting(true);
    dilate_set(DILATE_SOFT);
    t->have_pending = false;
    t->f->left = 0;
    t->f->fast_steps = 0;
    t->f->wregs_misses = 0;
    t->f->checkregs = opts->checkregs;
    /* One entry for all CPUs: every CPU starts a window with the same options (checkregs
     * only with full records: the option parser refuses it with another mode). */
    hv_mtf_fast_register(opts->record == HVT_MODE_FLOW ? step_fast_entry_flow
                         : opts->checkregs ? step_fast_entry_check : step_fast_entry);
    memset(t->f->declines, 0, sizeof t->f->declines);
    t->f->fills = 0;
    t->f->fill = step_fast_fill;
    hv_set_mtf_fast(true, t->f);
    t->task_known = false;
    t->idt_base = 0;
    t->stlb_cr3 = ~0ull;
    chunk_begin(t);
    (void)rec_set_mode(t->f->enc, opts->record, opts->regmask);   /* an empty chunk: room */
    task_reset(cpu);
    t->win_host_tsc = hv_rdtsc();
    t->win_guest_tsc = hv_exit_guest_tsc();
    t->rec_on = true;
    t->paused = t->arriving = t->irq_skip = false;
    t->scope_in = true;                     /* until the first step reads the task */
    t->exits = t->resumes = t->pauses = 0;
    slide_options();
    scope_window_open();
    EMIT(t, cpu, rec_startstop(t->f->enc, 1, want_reason));
    hv_set_mtf(true);
}

/* Make the instruction at RIP pending without writing anything (first step after start). */
static void start_pending(struct trace_cpu *t, unsigned cpu, struct guest_regs *g)
{
    t->have_pending = false;
    step(t, cpu, g);
}

/* The pending instruction has not run yet: it is not part of the trace. */
static void stop_cpu(struct trace_cpu *t, unsigned cpu, unsigned reason)
{
    if (trace_sink_link_failed()) {
        /* What is sent now is dropped (and counted): end with a chunk of markers only - no
         * code ids it could depend on - and hold it until the link is back. */
        chunk_flush(t, cpu);
        EMIT(t, cpu, rec_startstop(t->f->enc, 0, reason));
        struct trace_chunk_info ci = chunk_info(t->f->enc, cpu);
        trace_sink_hold(&ci, t->f->enc->buf, t->f->enc->len);
        chunk_begin(t);
    } else {
        EMIT(t, cpu, rec_startstop(t->f->enc, 0, reason));
        chunk_flush(t, cpu);
    }
    trace_sink_stop(cpu);                   /* flight recorder: dump what the ring kept */
    /* The window's cost, exact in Bochs (one TSC tick per instruction with one CPU): host
     * ticks cover guest + hypervisor instructions, guest ticks the guest's alone (dilation). */
    const uint64_t *d = t->f->declines;
    hv_log("HVT-STEPSTAT cpu=%u steps=%lu host_ticks=%lu guest_ticks=%lu record_bytes=%lu "
           "step_ticks=%lu sink_ticks=%lu recorded=%lu filtered=%lu reason=%u timer_fired_in_exit=%lu "
           "fast_steps=%lu soft_fired=%lu wregs_misses=%lu checkregs=%u silent_wakes=%lu record=%u\n",
           cpu, step_retired(t), hv_rdtsc() - t->win_host_tsc, hv_exit_guest_tsc() - t->win_guest_tsc,
           t->records_bytes, t->t_step, t->t_sink, t->recorded + t->f->fast_steps, t->filtered, reason,
           dilate_stats[cpu].fired_in_exit, t->f->fast_steps, dilate_stats[cpu].soft_fired,
           t->f->wregs_misses, t->f->checkregs, t->silent_wakes, t->f->enc->mode);
    hv_log("HVT-FASTSTAT cpu=%u full_steps=%lu declined_left=%lu task=%lu miss=%lu "
           "gen=%lu bytes=%lu room=%lu fills=%lu\n", cpu, t->steps, d[FD_LEFT],
           d[FD_TASK], d[FD_MISS], d[FD_GEN], d[FD_BYTES], d[FD_ROOM], t->f->fills);
    if (scope_on())
        hv_log("HVT-SCOPESTAT cpu=%u exits=%lu full_exits=%lu fast_steps=%lu recorded=%lu "
               "resumes=%lu pauses=%lu switch_fires=%lu\n", cpu, t->exits + t->f->fast_steps, t->exits,
               t->f->fast_steps, t->recorded + t->f->fast_steps, t->resumes, t->pauses, scope_fires(cpu));
    if (t->f->wregs_misses)
        hv_log("hvtrace: cpu %u: write set missed registers %lx at rip %lx first (%lu misses)\n",
               cpu, t->f->miss_mask, t->f->miss_rip, t->f->wregs_misses);
    t->filtered = t->recorded = t->silent_wakes = 0;
    t->t_step = t->t_sink = 0;
    t->stepping = false;
    step_stepping[t - step_cpus] = false;
    t->have_pending = false;
    t->paused = false;
    scope_window_close();
    t->f->left = 0;
    hv_set_mtf_fast(false, 0);
    hv_set_mtf(false);
    hv_set_hlt_exiting(false);
    /* The TSC deadline goes back to the real MSR (a halted CPU would sleep for good else). */
    dilate_set(DILATE_OFF);
    __atomic_add_fetch(&trace_stats.steps, step_retired(t), __ATOMIC_RELAXED);
    __atomic_add_fetch(&trace_stats.bytes, t->records_bytes, __ATOMIC_RELAXED);
    __atomic_add_fetch(&trace_stats.fast_steps, t->f->fast_steps, __ATOMIC_RELAXED);
    t->steps = t->records_bytes = 0;
    t->f->fast_steps = 0;
}

/* Window transitions (trace_want), step()'s threads joining and the window ending for all are
 * one order: a thread joins a window that then ends (it ends too), or one that ended (it asks
 * for the next). */
static struct spinlock want_lock;

static void want_set_locked(bool on, unsigned reason)
{
    want_reason = reason;
    if (on)   /* the guest's syscall entry: the host's KASLR slide (hvt-import reads this) */
        hv_log("HVT-META lstar=%lx cpus=%u\n", hv_rdmsr(MSR_IA32_LSTAR), hv_cpu_count());
    if (on && trace_sink_code_lost()) {
        codedict_forget();
        hv_log("hvtrace: code batches were lost with the link: every code gets a new id\n");
    }
    if (!on)
        scope_end_threads();
    __atomic_store_n(&trace_want, on ? 1 : 0, __ATOMIC_RELEASE);
}

/* Every CPU's next exit takes the full path, which stops it (the fast path never checks). */
static void kick_all(void)
{
    for (unsigned i = 0; i < hv_cpu_count(); i++)
        hv_cpu_kick(i);
}

void step_request_reason(bool on, unsigned reason)
{
    /* The first stop reason wins (a budget stop must not be renamed by the next CPU's). */
    if (__atomic_load_n(&trace_want, __ATOMIC_ACQUIRE) == (on ? 1 : 0))
        return;
    spin_lock(&want_lock);
    bool change = __atomic_load_n(&trace_want, __ATOMIC_ACQUIRE) != (on ? 1 : 0);
    if (change)
        want_set_locked(on, reason);
    spin_unlock(&want_lock);
    if (change && !on)
        kick_all();
}

/* The last of step()'s threads returned: the window ends - unless a thread joined meanwhile. */
static bool step_threads_ended(void)
{
    spin_lock(&want_lock);
    bool stop = __atomic_load_n(&trace_want, __ATOMIC_ACQUIRE) && !scope_threads_left();
    if (stop)
        want_set_locked(false, HVT_REASON_PROBE);
    spin_unlock(&want_lock);
    if (stop)
        kick_all();
    return stop;
}

bool step_cpus_stepping(void)
{
    for (unsigned i = 0; i < hv_cpu_count(); i++)
        if (__atomic_load_n(&step_cpus[i].stepping, __ATOMIC_ACQUIRE))
            return true;
    return false;
}

uint64_t step_retired_now(unsigned cpu) { return step_retired(&step_cpus[cpu]); }

void step_no_fast(void) { step_cpus[hv_cpu_id()].f->left = 0; }

void step_request(bool on) { step_request_reason(on, HVT_REASON_HYPERCALL); }

bool step_request_thread(uint32_t tid, uint64_t end_rip, uint64_t end_rsp, unsigned reason)
{
    spin_lock(&want_lock);
    bool wanted = __atomic_load_n(&trace_want, __ATOMIC_ACQUIRE) || step_cpus_stepping();
    int r = scope_begin_thread(tid, end_rip, end_rsp, wanted);
    /* A new thread (or one of another kind of window, which goes on as it is) wants the
     * window on: asked for again if it was ending, so the thread is not lost with it. */
    if (r != SCOPE_BEGIN_FULL && !__atomic_load_n(&trace_want, __ATOMIC_ACQUIRE))
        want_set_locked(true, reason);
    spin_unlock(&want_lock);
    /* The thread's end is a new special address: every CPU's next exit is a full step, which
     * rebuilds its event map before the thread can run there (the fast path, which takes
     * misses too, may otherwise pass it for thousands of steps). */
    if (r != SCOPE_BEGIN_FULL)
        kick_all();
    return r != SCOPE_BEGIN_FULL;
}

bool step_active(void) { return __atomic_load_n(&trace_want, __ATOMIC_ACQUIRE); }


/* The guest is dying (triple fault) or powering off: stop this CPU now, with the reason. */
void step_stop_now(unsigned reason)
{
    unsigned cpu = hv_cpu_id();
    step_request_reason(false, reason);
    if (step_cpus[cpu].stepping)
        stop_cpu(&step_cpus[cpu], cpu, want_reason);
}

/* The fatal path (hv_exit.h hv_on_fatal): the other CPUs are stopped and cannot end their own
 * windows, so this CPU ends each one whose state is whole - stopped between two exits, or
 * this CPU itself - with STOP(reason) and sends its chunk (and a flight recorder's ring). A CPU
 * stopped inside the hypervisor may have been writing its chunk: its unsent records are
 * dropped, and the log says so. Nothing is restored on those CPUs (their VMCS is not this
 * CPU's to write): the machine resets next. */
void step_fatal_flush(unsigned reason)
{
    __atomic_store_n(&trace_want, 0, __ATOMIC_RELEASE);
    for (unsigned c = 0; c < hv_cpu_count(); c++) {
        struct trace_cpu *t = &step_cpus[c];
        if (!t->stepping)
            continue;
        enum hv_cpu_stop how = hv_fatal_cpu_stop(c);
        if (how != HV_CPU_STOPPED_AT_EXIT && how != HV_CPU_FATAL) {
            hv_log("hvtrace: fatal: cpu %u %s: its unsent records are dropped\n", c,
                   how == HV_CPU_RUNNING ? "did not stop" : "stopped inside the hypervisor");
            continue;
        }
        EMIT(t, c, rec_startstop(t->f->enc, 0, reason));
        chunk_flush(t, c);
        trace_sink_stop(c);
        t->stepping = false;
        step_stepping[t - step_cpus] = false;
        hv_log("hvtrace: fatal: cpu %u: trace ended (%lu records sent in all)\n", c,
               t->recorded + t->f->fast_steps);
    }
}

bool step_mtf_exit(struct guest_regs *g)
{
    unsigned cpu = hv_cpu_id();
    struct trace_cpu *t = &step_cpus[cpu];
    if (!t->stepping || t->paused) {
        hv_set_mtf(false);
        return true;
    }
    uint64_t t0 = hv_rdtsc();
    step(t, cpu, g);
    t->t_step += hv_rdtsc() - t0;
    return true;
}

void step_post_exit(struct guest_regs *g, unsigned reason)
{
    unsigned cpu = hv_cpu_id();
    struct trace_cpu *t = &step_cpus[cpu];
    int want = __atomic_load_n(&trace_want, __ATOMIC_ACQUIRE);
    unsigned next = scope_on() ? scope_next_take(cpu) : SCOPE_NEXT_NONE;
    if (t->stepping)
        t->exits++;                         /* (the fast path's exits: f.fast_steps) */
    /* A parked CPU is halted until one of the wake-ups above unparks it: one found running
     * means a wake-up this layer did not hear of, and its instructions since went unrecorded.
     * Said (the trace has a hole the continuity check will show) and mended: stepped again. */
    if (t->halted && hv_guest_read(HV_GUEST_ACTIVITY) != VMX_ACTIVITY_HLT) {
        t->silent_wakes++;
        hv_log("hvtrace: cpu %u: woke from a parked HLT unheard of (exit %u, rip %lx): stepping "
               "it again\n", cpu, reason, hv_guest_read(HV_GUEST_RIP));
        t->have_pending = false;            /* the one after HLT ran long ago: no record of it */
        unpark(t);
    }
    /* An NMI exited a parked CPU (NMI exiting: vmm/ injects it at this entry, which wakes
     * the CPU): stepping resumes at its delivery. Parked with interrupts off, nothing else
     * would wake it; with them on, the NMI handler would otherwise run unseen. */
    if (t->halted && reason == EXIT_EXCEPTION_NMI &&
        (hv_exit_intr_info() & VMX_INTR_TYPE_MASK) == VMX_INTR_TYPE_NMI)
        unpark(t);
    if (t->stepping && !t->paused && reason != EXIT_MTF && reason != EXIT_HLT && t->have_pending &&
        hv_guest_read(HV_GUEST_RIP) != t->f->p_ic->rip)
        step(t, cpu, g);                    /* an emulated instruction retired */
    if (want && !t->stepping) {
        start_cpu(t, cpu);
        start_pending(t, cpu, g);
    } else if (!want && t->stepping) {
        stop_cpu(t, cpu, want_reason);
    }
    /* Scope: a paused CPU resumes stepping when the switch probe saw the wanted task come, or
     * when the task it runs became wanted (a name changed by exec, a window's start). */
    if (t->stepping && t->paused) {
        scope_poll();
        if (next == SCOPE_NEXT_WANTED)
            scope_resume(t, cpu, g, true);
        else if (next == SCOPE_NEXT_NONE && scope_task_wants(task_current(cpu)))
            scope_resume(t, cpu, g, false);
    }
    if (t->stepping && !t->paused)
        dilate_exit();
}
