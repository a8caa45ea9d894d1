/* d_runtime.c - D programs on the probe engine: loading, firing, draining, snapshots. See
 * d_runtime.h. */
#include "d_runtime.h"
#include "dif.h"
#include "probe.h"
#include "task.h"
#include "trace.h"
#include "hv_api.h"
#include "hv_rand.h"
#include "gmem.h"
#include "hvt_stream.h"
#include "hvt_dif.h"
#include "hvt_probe.h"
#include "hvt_bootinfo.h"
#include "hvt_trace_format.h"
#include "step.h"
#include "kaslr.h"
#include "kunwind.h"
#include "x86_arch.h"

#define DRAIN_BUF   (64u << 10)            /* a CPU's records per message */
#define SNAP_BUF    (64u << 10)            /* aggregation entries per message */
#define STATE_MAX   (48u << 20)            /* the most state memory one program may ask for */
/* Images and state come from the D budget (TRACE_D_MEM_PARTS of what the start left,
 * hv_api.h): a guest loading ever larger programs cannot take the probes' memory or vmm/'s;
 * past it a load is refused with HVT_D_ENOMEM and a reason hvt prints. */
static struct hv_budget d_mem = { .parts = TRACE_D_MEM_PARTS };
#define WHY_BUDGET  "over the D budget (see hv_mem_mb)"

static void say_why(char *why, size_t n, const char *s)
{
    size_t i = 0;
    for (; i + 1 < n && s[i]; i++)
        why[i] = s[i];
    why[i] = 0;
}

/* Loads (the guest's hypercall on any CPU, the host's parts in the transport's poll on any
 * CPU) are serialized by load_lock, only ever tried: a second loader gets EBUSY rather than
 * waiting, as the first may be waiting for the link the second one's CPU polls. Images are
 * double-buffered: a load copies into img[spare] (which only the lock holder writes, never the
 * buffer the live program runs from), verifies that copy, and publishes it by swapping hdr.
 * The stage belongs to one loader at a time (stage_src): a host load in parts cannot be
 * continued with bytes a guest load wrote in between, nor the other way round. */
enum { STAGE_NONE, STAGE_HOST, STAGE_GUEST };
static uint32_t load_lock;
static struct { uint8_t *p; uint32_t cap; } img[2];
static unsigned spare;                     /* img[] the next load writes; the other one runs */
static uint8_t *stage;                     /* img[spare].p while a load is staged */
static uint32_t stage_len, stage_total, stage_src;
static void *state_mem;
static size_t state_cap;
static struct dif_state *st;
static const struct hvt_dif_hdr *hdr;      /* of the loaded image (img[!spare]) */
static uint64_t load_ns;                   /* timestamp when it was taken (walltimestamp's origin) */
static uint64_t uses_var;                  /* bit i: some VAR instruction reads built-in i */
static bool thin_loaded;                   /* dif_thin() of the program (read under enter()) */
static bool loaded;                        /* firings may use st (read under inflight) */
static uint32_t inflight;                  /* CPUs using st now (a firing, a drain, an op) */
static struct spinlock op_lock;            /* BEGIN/END/snapshot: one CPU runs them */
static uint32_t op_begin, op_end, op_snap; /* pending: BEGIN; END; a snapshot's generation */
static bool snap_running;                  /* a CPU is sending a snapshot (one at a time: the
                                              host sees generations in order, never mixed) */
static uint32_t snap_gen;
static uint8_t *snap_buf;
static struct hvt_d_status status;         /* counters (the LOAD fields per load) */

static struct {
    uint8_t *buf;                          /* drain buffer */
    struct kunwind_cache *kcache;          /* this CPU's ORC lookups (cleared at each load) */
    uint64_t first_tsc;                    /* when records began to wait here (0: none) */
    bool hurry;                            /* the VM said its buffer is half full */
} pcpu[HVT_MAX_CPUS];

/* Use the program's state (true), or there is none now. A load never waits for the CPUs
 * using it (one of them may be waiting for the link the loading CPU polls): it refuses. */
/* enter() and unload() are the two sides of a store-buffering (Dekker) handshake: each stores
 * one variable and then loads the other's. x86 lets a load pass an earlier store to another
 * address that still sits in the store buffer (SDM vol. 3, "Memory Ordering in P6 and More
 * Recent Processor Families": loads may be reordered with older stores to different
 * locations), so with release/acquire alone both sides can miss each other: unload() reads
 * inflight 0 while enter() reads loaded true, and a load then lays the state out under a CPU
 * that uses it. Sequentially consistent accesses on both sides (a locked add here, XCHG for
 * unload()'s store) put the four accesses in one total order: either unload() sees the
 * increment or enter() sees loaded false. */
static bool enter(void)
{
    __atomic_add_fetch(&inflight, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&loaded, __ATOMIC_SEQ_CST))
        return true;
    __atomic_sub_fetch(&inflight, 1, __ATOMIC_RELEASE);
    return false;
}
static void leave(void) { __atomic_sub_fetch(&inflight, 1, __ATOMIC_RELEASE); }

/* --- guest memory for the interpreter --- */

/* The firing's guest paging, read from the VMCS only when a clause reads guest memory. */
/* tlb: kernel pages this firing already translated (a stack key's unwind reads the ORC tables
 * dozens of times; the guest's paging cannot change while its CPU is in this exit). */
#define FIRE_TLB 8
struct fire_ctx {
    struct gmem_paging kernel, cur;
    const struct guest_regs *g;
    bool paging, kpaging;                  /* both read / the kernel's read */
    uint64_t pc;
    unsigned kind;                         /* the probe's (PROBE_*) */
    uint32_t tid;
    unsigned ntlb, tlb_next;
    uint64_t tlb_va[FIRE_TLB];
    const uint8_t *tlb_page[FIRE_TLB];
};

static void need_paging(struct fire_ctx *c)
{
    if (c->paging)
        return;
    probe_kernel_paging(&c->kernel);
    hv_guest_paging(&c->cur);
    c->paging = true;
}

/* Kernel loads reach kernel addresses only, user loads (copyin, copyinstr) user addresses
 * only, as in DTrace: a user pointer dereferenced as a kernel one is an invalid address even
 * where the kernel's page tables happen to map it. */
#define USER_TOP 0x0000800000000000ull     /* above: non-canonical, then the kernel half */
static size_t env_read(void *ctx, uint64_t va, void *buf, size_t len, int user)
{
    struct fire_ctx *c = ctx;
    if (user ? va >= USER_TOP || len > USER_TOP - va : va < ~(USER_TOP - 1))
        return 0;
    need_paging(c);
    return gmem_read_gva(user ? &c->cur : &c->kernel, va, buf, len);
}

/* x86-64 kernel stacks are 16 KiB, aligned to their size: copy up to the top of this one. */
#define KSTACK_SIZE (16u << 10)
static size_t env_stack(void *ctx, void *buf, size_t max, uint64_t *rsp)
{
    struct fire_ctx *c = ctx;
    uint64_t sp = hv_guest_read(HV_GUEST_RSP);     /* the VMCS holds it, not the saved GPRs */
    need_paging(c);
    uint64_t top = (sp | (KSTACK_SIZE - 1)) + 1;
    size_t n = top - sp < max ? top - sp : max;
    *rsp = sp;
    return gmem_read_gva(&c->kernel, sp, buf, n);
}

/* Linux x86-64's struct pt_regs, which the entry code saves at the top of the task's kernel
 * stack (task_pt_regs(): the stack's end - sizeof(struct pt_regs), no padding on 64-bit):
 * r15 r14 r13 r12 bp bx r11 r10 r9 r8 ax cx dx si di orig_ax ip cs flags sp ss. The layout is
 * the kernel's ABI with BPF's PT_REGS_* and ptrace's user_regs_struct. */
#define PT_REGS_WORDS 21
#define PT_REGS_R13   2
#define PT_REGS_BP    4
#define PT_REGS_R10   7
#define PT_REGS_DX    12
#define PT_REGS_DI    14
#define PT_REGS_IP    16
#define PT_REGS_CS    17
#define PT_REGS_SP    19

/* The user registers a ustack() starts from: the CPU's in user mode; in kernel mode those the
 * entry saved at the top of this kernel stack, if its saved CS is a user one (on an interrupt
 * or exception stack, or in a kernel thread, the words there are no user frame: none). */
static bool env_uregs(void *ctx, uint64_t *pc, uint64_t *fp)
{
    struct fire_ctx *c = ctx;
    if (hv_guest_read(HV_GUEST_CS_SEL) & 3) {
        *pc = hv_guest_read(HV_GUEST_RIP);
        *fp = c->g ? c->g->r[GPR_RBP] : 0;
        return c->g != NULL;
    }
    uint64_t sp = hv_guest_read(HV_GUEST_RSP);
    uint64_t top = (sp | (KSTACK_SIZE - 1)) + 1;
    uint64_t regs[PT_REGS_WORDS];
    need_paging(c);
    if (gmem_read_gva(&c->kernel, top - sizeof regs, regs, sizeof regs) != sizeof regs ||
        (regs[PT_REGS_CS] & 3) != 3 || regs[PT_REGS_IP] >= USER_TOP)
        return false;
    *pc = regs[PT_REGS_IP];
    *fp = regs[PT_REGS_BP];
    return true;
}

/* The running program's kernel ORC tables (its image's hvt_dif_korc moved by the KASLR slide),
 * set by the load before the program is published; korc_ok false: kernel stack keys are
 * empty. */
static struct kunwind_tables korc;
static bool korc_ok;

/* A kernel read through the firing's small translation cache: the page walk (gmem_walk) once
 * per page, then copies from the host mapping of guest RAM (gmem_map_gpa: RAM only). A read
 * across a page boundary takes the plain path. */
static size_t kread_cached(void *ctx, uint64_t va, void *buf, size_t len)
{
    struct fire_ctx *c = ctx;
    if (va < ~(USER_TOP - 1))
        return 0;
    uint64_t page = va & X86_PAGE_MASK, off = va & ~X86_PAGE_MASK;
    if (!c->paging && !c->kpaging) {       /* the kernel's tables only */
        probe_kernel_paging(&c->kernel);
        c->kpaging = true;
    }
    if (off + len > X86_PAGE_SIZE)
        return gmem_read_gva(&c->kernel, va, buf, len);
    const uint8_t *host = NULL;
    for (unsigned i = 0; i < c->ntlb; i++)
        if (c->tlb_va[i] == page) {
            host = c->tlb_page[i];
            break;
        }
    if (!host) {
        struct gmem_xlat x;
        if (gmem_walk(&c->kernel, page, &x) != GMEM_OK || !(host = gmem_map_gpa(x.gpa & X86_PAGE_MASK)))
            return 0;
        unsigned slot = c->ntlb < FIRE_TLB ? c->ntlb++ : c->tlb_next++ % FIRE_TLB;
        c->tlb_va[slot] = page;
        c->tlb_page[slot] = host;
    }
    if (len == 8)                          /* the common sizes without a call */
        __builtin_memcpy(buf, host + off, 8);
    else if (len == 4)
        __builtin_memcpy(buf, host + off, 4);
    else
        __builtin_memcpy(buf, host + off, len);
    return len;
}

/* The kernel stack as a key: unwound from the firing's registers (those the sample path
 * records, so both unwinds see the same start) over the same window of the stack the sample
 * path copies for the host's unwinder: [rsp, the 16 KiB stack's top), at most
 * HVT_PROBE_STACK_MAX bytes. No frames when the firing was in user mode (from_user then). The registers the
 * entry code's ORC entries name (R10, R13, DI, DX, BP) stand in for a pt_regs, as the host's
 * unwinder takes them. */
static unsigned env_kstack(void *ctx, uint64_t *pcs, unsigned max, uint32_t *exact, bool *from_user)
{
    struct fire_ctx *c = ctx;
    uint16_t cs = (uint16_t)hv_guest_read(HV_GUEST_CS_SEL);
    *exact = 0;
    *from_user = cs & 3;                   /* in user mode: no kernel frames, the thread is user's */
    if (!korc_ok || !c->g || (cs & 3))
        return 0;
    uint64_t rsp = hv_guest_read(HV_GUEST_RSP);
    uint64_t top = (rsp | (KSTACK_SIZE - 1)) + 1;
    uint64_t hi = top - rsp < HVT_PROBE_STACK_MAX ? top : rsp + HVT_PROBE_STACK_MAX;
    uint64_t regs[PT_REGS_WORDS] = { 0 };
    regs[PT_REGS_BP] = c->g->r[GPR_RBP];
    regs[PT_REGS_R13] = c->g->r[GPR_R13];
    regs[PT_REGS_R10] = c->g->r[GPR_R10];
    regs[PT_REGS_DX] = c->g->r[GPR_RDX];
    regs[PT_REGS_DI] = c->g->r[GPR_RDI];
    regs[PT_REGS_IP] = c->pc;
    regs[PT_REGS_CS] = cs;
    regs[PT_REGS_SP] = rsp;
    struct kunwind_regs r = { c->pc, rsp, c->g->r[GPR_RBP], regs };
    struct kunwind_mem m = { kread_cached, c, pcpu[hv_cpu_id()].kcache, NULL, 0, 0 };
    /* the page RSP is in, mapped once: most frames' words are there (the rip alone needs
     * no stack) */
    uint64_t page = rsp & X86_PAGE_MASK, word;
    if (max > 1 && kread_cached(c, rsp & ~7ull, &word, 8) == 8)
        for (unsigned i = 0; i < c->ntlb; i++)
            if (c->tlb_va[i] == page) {
                m.win = c->tlb_page[i];
                m.win_lo = page;
                m.win_hi = page + X86_PAGE_SIZE;
            }
    struct kunwind_result res;
    unsigned n = kunwind(&korc, &m, &r, rsp, hi, pcs, max, &res);
    *exact = (uint32_t)res.exact_mask;
    *from_user = res.stop == KUNWIND_STOP_USER;
    return n;
}

static void env_notify(void *env_ctx, unsigned cpu)
{
    if (cpu < HVT_MAX_CPUS)
        __atomic_store_n(&pcpu[cpu].hurry, true, __ATOMIC_RELAXED);
}

/* step() / unstep(): the instruction tracer's window opens (closes), its START/STOP markers
 * saying PROBE. step() steps the firing's thread (step.h step_request_thread), and at a
 * function's entry (fbt, syscall entry: the probe is on its first instruction, the return
 * address at RSP) up to that call's return: the instruction it returns to, with the stack
 * pointer above the return address. Several threads may be stepped at once, each to its own
 * return; a step() the tracer has no room for is refused: the firing's error. */
static bool tracer_stopped;                /* stop() ran: this program steps no more */
static bool env_tracer(void *ctx, int what)
{
    if (what == HVT_DIF_TRACER_STOP)
        __atomic_store_n(&tracer_stopped, true, __ATOMIC_RELEASE);
    if (what == HVT_DIF_TRACER_STEP && __atomic_load_n(&tracer_stopped, __ATOMIC_ACQUIRE))
        return true;
    if (what != HVT_DIF_TRACER_STEP) {
        step_request_reason(false, what == HVT_DIF_TRACER_STOP ? HVT_REASON_PROBE_STOP : HVT_REASON_PROBE);
        return true;
    }
    struct fire_ctx *c = ctx;
    uint64_t rsp = hv_guest_read(HV_GUEST_RSP), ret = 0;
    if (c->kind == PROBE_ENTRY && c->tid) {
        need_paging(c);
        if (gmem_read_gva(&c->kernel, rsp, &ret, sizeof ret) != sizeof ret || !(ret >> 63))
            ret = 0;                        /* no return address: until unstep() */
    }
    if (c->tid)
        return step_request_thread(c->tid, ret, ret ? rsp + 8 : 0, HVT_REASON_PROBE);
    step_request_reason(true, HVT_REASON_PROBE);
    return true;
}

/* One firing runs in its CPU's VM exit with that CPU's buffer lock held (drains and power-off
 * wait on it): besides the interpreter's unit budget (DIF_DEF_BUDGET, about a millisecond of
 * string work), a deadline in TSC ticks bounds guest reads and anything else the units
 * misjudge. 10M ticks is 2-10 ms at today's TSC rates (Bochs's TSC ticks once per
 * instruction: 10M of its instructions); a legitimate firing takes a few thousand. */
#define FIRE_DEADLINE_TICKS 10000000ull
static uint64_t env_clock(void *env_ctx) { return hv_rdtsc(); }

static const struct dif_env env = { .read = env_read, .stack = env_stack, .notify = env_notify,
                                    .tracer = env_tracer, .uregs = env_uregs,
                                    .clock = env_clock, .deadline = FIRE_DEADLINE_TICKS,
                                    .kstack = env_kstack };

/* A fresh hash key for every load (dif.h, dif_env.hash_key): a hardware random word
 * (hv_rand.h) folded with the TSC; a CPU with neither RDSEED nor RDRAND gets the TSC alone,
 * which still differs per load but can be guessed (said once at load). */
static uint64_t load_hash_key(void)
{
    uint64_t r = 0, t = hv_rdtsc();
    static bool told;
    if (!hv_rand_words(&r, 1) && !told) {
        told = true;
        hv_log("hvtrace: D: no hardware random number for the hash key; the TSC stands in\n");
    }
    return (r ^ t) * 0x9e3779b97f4a7c15ull + t;
}

/* --- records out --- */

/* Count what a drain produced (status), then send it from 'cpu' (the sender's sequence). */
static void send_records(unsigned cpu, const uint8_t *p, size_t n)
{
    uint64_t recs = 0;
    for (size_t at = 0; at + sizeof(struct hvt_drec) <= n;) {
        struct hvt_drec r;
        __builtin_memcpy(&r, p + at, sizeof r);
        if (r.len < sizeof r || r.len > n - at)
            break;                         /* cannot happen: the VM writes whole records */
        switch (r.type) {
        case HVT_DREC_DATA: recs++; break;
        case HVT_DREC_ERROR: recs++; __atomic_add_fetch(&status.errors, 1, __ATOMIC_RELAXED); break;
        case HVT_DREC_DROPS: __atomic_add_fetch(&status.drops, r.arg, __ATOMIC_RELAXED); break;
        case HVT_DREC_DYNDROPS: __atomic_add_fetch(&status.dyndrops, r.arg, __ATOMIC_RELAXED); break;
        }
        at += r.len;
    }
    __atomic_add_fetch(&status.records, recs, __ATOMIC_RELAXED);
    enum trace_sink_sent s = trace_sink_message(cpu, HVT_MSG_D_REC, p, n);
    if (s == TRACE_SINK_DROPPED) {
        __atomic_add_fetch(&status.records_lost, recs, __ATOMIC_RELAXED);
    } else if (s == TRACE_SINK_NO_STREAM) {
        char head[64];
        hv_snprintf(head, sizeof head, "HVT-DRECB %u %lu\n", cpu, (uint64_t)n);
        trace_sink_debug_blob(head, p, n);
    }
}

/* Hand on CPU c's records (from this CPU, which may be another one: the VM's buffer lock
 * makes that safe). The caller is inside enter(). */
static void drain_cpu(unsigned self, unsigned c)
{
    long n;
    while ((n = dif_drain(st, c, pcpu[self].buf, DRAIN_BUF)) > 0)
        send_records(self, pcpu[self].buf, (size_t)n);
    pcpu[c].first_tsc = 0;
    pcpu[c].hurry = false;
}

/* Every CPU's aggregations at generation gen: per CPU a run of messages, the last one flagged.
 * Each part takes its values out of the CPU's table (the host adds the parts up). The caller
 * is inside enter(), and the only CPU sending a snapshot (snap_running). */
static void snapshot_all(unsigned self, uint32_t gen)
{
    for (unsigned c = 0; c < hv_cpu_count(); c++) {
        uint32_t cursor = 0;
        long n;
        do {
            n = dif_agg_part(st, c, gen, snap_buf, SNAP_BUF, &cursor);
            enum trace_sink_sent s = trace_sink_message(self, HVT_MSG_D_AGG, snap_buf, (size_t)n);
            if (s == TRACE_SINK_DROPPED)   /* the part took its values out: they are gone */
                hv_log("hvtrace: D aggregation snapshot %u of CPU %u: a part was lost on the link\n",
                       gen, c);
            if (s == TRACE_SINK_NO_STREAM) {
                char head[64];
                hv_snprintf(head, sizeof head, "HVT-DAGGB %u %lu\n", c, (uint64_t)n);
                trace_sink_debug_blob(head, snap_buf, (size_t)n);
            }
        } while (n > (long)sizeof(struct hvt_dagg_part));
    }
}

/* --- firing --- */

static uint64_t ns_of(uint64_t tsc)
{
    uint32_t khz = hdr->tsc_khz;
    if (!khz)
        return tsc;
    return tsc / khz * 1000000ull + tsc % khz * 1000000ull / khz;
}

static const uint64_t no_args[6];

static inline __attribute__((always_inline))
void fill_firing(struct dif_firing *f, struct fire_ctx *c, unsigned cpu, unsigned kind,
                        uint64_t pc, const uint64_t arg[6], const struct probe_who *who,
                        const struct guest_regs *g)
{
    /* Every v[] the interpreter reads is stored below, the unknown ones as 0 (CPU, EPID, ID,
     * EXECNAME and PROBE* it takes elsewhere): a memset of the whole struct would cost more
     * than the rest of this function. */
    /* PPID, UID, VTIMESTAMP and STACKDEPTH are refused by the verifier (no value here: the
     * host reads ppid and uid through curthread), ARG6..9 never read (the host reads them from
     * the stack at fbt entry, else knows they are 0): none of them is stored. */
    f->v[HVT_DIF_V_ERRNO] = 0;
    _Static_assert(HVT_DIF_V__COUNT == 30, "a new built-in: set it in fill_firing");
    c->paging = c->kpaging = false;
    c->g = g;
    c->pc = pc;
    c->kind = kind;
    c->tid = who->tid;
    c->ntlb = c->tlb_next = 0;
    f->ctx = c;
    f->cost = who->cost;
    f->thin = false;
    f->tsc = hv_exit_guest_tsc();
    f->args = arg ? arg : no_args;         /* read where the engine keeps them: no copy */
    f->execname = who->comm;
    f->execname_max = HVT_PROBE_COMM_LEN;
    f->v[HVT_DIF_V_PID] = who->pid;
    f->v[HVT_DIF_V_TID] = who->tid;
    f->v[HVT_DIF_V_CURTHREAD] = who->task;
    f->v[HVT_DIF_V_REGS_PC] = pc;
    /* The ones that cost a division or a VMCS read: only for a program that reads them (the
     * interpreter reads v[id] for a VAR id alone, and uses_var has every VAR's id). */
    uint64_t u = uses_var;
    if (u & (1ull << HVT_DIF_V_TIMESTAMP | 1ull << HVT_DIF_V_WALLTIMESTAMP)) {
        f->v[HVT_DIF_V_TIMESTAMP] = ns_of(f->tsc);
        f->v[HVT_DIF_V_WALLTIMESTAMP] = hdr->walltime ? hdr->walltime + (f->v[HVT_DIF_V_TIMESTAMP] - load_ns) : 0;
    }
    if (kind == PROBE_RETURN && arg && (u & 1ull << HVT_DIF_V_ERRNO))
        f->v[HVT_DIF_V_ERRNO] = hvt_probe_return_errno(arg[1]);
    if (u & 1ull << HVT_DIF_V_REGS_SP)
        f->v[HVT_DIF_V_REGS_SP] = hv_guest_read(HV_GUEST_RSP);
}

/* The built-ins a verified image's VAR instructions read (bit i: HVT_DIF_V_* i). */
static uint64_t image_uses_var(const uint8_t *image)
{
    const struct hvt_dif_hdr *h = (const void *)image;
    const struct hvt_dif_insn *in = (const void *)(image + h->off_insns);
    uint64_t u = 0;
    for (uint32_t i = 0; i < h->ninsns; i++)
        if (in[i].op == HVT_DIF_OP_VAR && in[i].imm >= 0 && in[i].imm < 64)
            u |= 1ull << in[i].imm;
    return u;
}

/* After dif_fire's n: counted, and the records' wait begun or ended. */
static inline __attribute__((always_inline)) void fired(unsigned cpu, int n)
{
    if (n > 0)
        __atomic_add_fetch(&status.fires, (uint64_t)n, __ATOMIC_RELAXED);
    if (!pcpu[cpu].first_tsc)
        pcpu[cpu].first_tsc = hv_rdtsc();
    if (pcpu[cpu].hurry)
        drain_cpu(cpu, cpu);
}

/* The caller is inside enter(). */
static inline __attribute__((always_inline)) void run_probe(uint32_t id, unsigned kind, unsigned cpu, uint64_t pc, const uint64_t arg[6],
                      const struct probe_who *who, struct guest_regs *g)
{
    struct dif_firing f;
    struct fire_ctx c;
    fill_firing(&f, &c, cpu, kind, pc, arg, who, g);
    fired(cpu, dif_fire(st, cpu, id, &f));
}

static void on_fire(uint32_t id, unsigned kind, unsigned cpu, uint64_t pc, const uint64_t arg[6],
                    const struct probe_who *who, struct guest_regs *g)
{
    if (!enter())
        return;                            /* armed with no program: counted by the engine only */
    run_probe(id, kind, cpu, pc, arg, who, g);
    leave();
}

/* The engine's action while a program whose probes read only arguments, the CPU and
 * execname is loaded (thin_loaded, dif_thin): thin firings, four fields, none of the
 * built-ins, the records' clock or the guest context the rest would cost. A program loaded
 * since this CPU read the action may read more: then on_fire's firing. (dif_fire still checks
 * the probe: only BEGIN, END and ERROR, which no site is armed with, would run nothing.) */
static void on_fire_thin(uint32_t id, unsigned kind, unsigned cpu, uint64_t pc,
                         const uint64_t arg[6], const struct probe_who *who, struct guest_regs *g)
{
    if (!enter())
        return;
    if (!__atomic_load_n(&thin_loaded, __ATOMIC_RELAXED) || !who->comm) {
        leave();
        on_fire(id, kind, cpu, pc, arg, who, g);
        return;
    }
    struct dif_firing f;
    f.thin = true;
    f.args = arg ? arg : no_args;
    f.execname = who->comm;
    f.execname_max = HVT_PROBE_COMM_LEN;
    f.cost = who->cost;
    fired(cpu, dif_fire(st, cpu, id, &f));
    leave();
}

/* BEGIN, END and snapshots, run by the first CPU that exits after the host asked (inside
 * enter()). */
static void run_ops(unsigned cpu, struct guest_regs *g)
{
    spin_lock(&op_lock);
    uint32_t begin = op_begin, end = op_end, snap = snap_running ? 0 : op_snap;
    op_begin = op_end = 0;
    if (snap) {                            /* else left for an exit after the running one */
        op_snap = 0;
        snap_running = true;
    }
    spin_unlock(&op_lock);
    static const uint64_t zero[6];
    struct probe_who who = { .cost = NULL };
    if (begin || end) {
        who.comm = probe_current(cpu, &who.pid, &who.tid);
        who.task = task_current(cpu);
    }
    if (begin && hdr->begin_probe)
        run_probe(hdr->begin_probe, 0, cpu, hv_guest_read(HV_GUEST_RIP), zero, &who, g);
    if (end && hdr->end_probe)
        run_probe(hdr->end_probe, 0, cpu, hv_guest_read(HV_GUEST_RIP), zero, &who, g);
    if (begin || end || snap)
        for (unsigned c = 0; c < hv_cpu_count(); c++)
            drain_cpu(cpu, c);             /* the records before the aggregations they led to */
    if (snap) {
        snapshot_all(cpu, snap);
        __atomic_store_n(&snap_running, false, __ATOMIC_RELEASE);
    }
}

void dprobe_poll(struct guest_regs *g)
{
    if (!__atomic_load_n(&loaded, __ATOMIC_RELAXED))
        return;
    unsigned cpu = hv_cpu_id();
    /* most exits have nothing to do here: look before taking the program (enter()) */
    if (!(__atomic_load_n(&op_begin, __ATOMIC_RELAXED) | __atomic_load_n(&op_end, __ATOMIC_RELAXED) |
          __atomic_load_n(&op_snap, __ATOMIC_RELAXED)) && !pcpu[cpu].hurry && !pcpu[cpu].first_tsc)
        return;
    if (!enter())
        return;
    if (__atomic_load_n(&op_begin, __ATOMIC_RELAXED) | __atomic_load_n(&op_end, __ATOMIC_RELAXED) |
        __atomic_load_n(&op_snap, __ATOMIC_RELAXED))
        run_ops(cpu, g);
    if (pcpu[cpu].hurry || (pcpu[cpu].first_tsc && hv_rdtsc() - pcpu[cpu].first_tsc > TRACE_POLL_TICKS))
        drain_cpu(cpu, cpu);
    leave();
}

void dprobe_flush_all(void)
{
    if (!enter())
        return;
    unsigned cpu = hv_cpu_id();
    for (unsigned c = 0; c < hv_cpu_count(); c++)
        drain_cpu(cpu, c);
    leave();
}

/* --- the host's commands --- */

/* No CPU starts using the program from now on; true when none uses it any more (else the
 * host asks again: a firing or a drain ends soon). */
static bool unload(void)
{
    __atomic_store_n(&loaded, false, __ATOMIC_SEQ_CST);     /* see enter() */
    return __atomic_load_n(&inflight, __ATOMIC_SEQ_CST) == 0;
}

static bool load_trylock(void) { return !__atomic_exchange_n(&load_lock, 1, __ATOMIC_ACQUIRE); }
static void load_unlock(void) { __atomic_store_n(&load_lock, 0, __ATOMIC_RELEASE); }

static int busy(void) { return probe_armed() + probe_profile_armed() != 0; }

static int finish_load(void);
static int finish_stage(void);

/* Room for a new image of 'total' bytes from 'src', the old program gone: 0 or HVT_D_E*.
 * Under load_lock. */
static int stage_new(uint32_t total, uint32_t src)
{
    stage_src = STAGE_NONE;
    stage_total = stage_len = 0;
    if ((loaded && busy()) || !unload())
        return HVT_D_EBUSY;
    if (total < sizeof(struct hvt_dif_hdr) || total > HVT_DIF_MAX_IMAGE)
        return HVT_D_EORDER;
    if (total > img[spare].cap) {          /* never freed: grow by doubling to bound the waste */
        uint32_t cap = img[spare].cap ? img[spare].cap : (64u << 10);
        while (cap < total)
            cap *= 2;
        uint8_t *p = hv_budget_alloc(&d_mem, cap);
        if (!p) {
            say_why(status.why, sizeof status.why, "image " WHY_BUDGET);
            hv_log("hvtrace: D image of %u bytes refused: %lu of %lu KiB of the D budget used\n",
                   total, d_mem.used >> 10, hv_budget_limit(&d_mem) >> 10);
            return HVT_D_ENOMEM;
        }
        img[spare].p = p;
        img[spare].cap = cap;
    }
    stage = img[spare].p;
    stage_total = total;
    stage_src = src;
    return 0;
}

int dprobe_load_guest(uint64_t va, uint32_t len)
{
    if (!load_trylock())
        return HVT_D_EBUSY;
    __builtin_memset(status.why, 0, sizeof status.why);
    status.err_clause = status.err_insn = 0;
    struct gmem_paging pg;
    hv_guest_paging(&pg);
    int rc = stage_new(len, STAGE_GUEST);
    if (!rc && gmem_read_gva(&pg, va, stage, len) != len)
        rc = HVT_D_EORDER;                 /* not all of it mapped */
    if (!rc) {
        stage_len = len;
        rc = finish_load();
    }
    load_unlock();
    return rc;
}

/* One part of the host's load; a part that completes the image finishes the load. A part
 * that adds nothing to an incomplete stage of the host's is refused: after a complete load
 * the stage is empty, so nothing can run the finish step again on a live program. */
static int load_part_locked(const uint8_t *args, uint32_t len)
{
    struct hvt_d_load h;
    if (len < sizeof h)
        return HVT_D_EORDER;
    __builtin_memcpy(&h, args, sizeof h);
    uint32_t n = len - (uint32_t)sizeof h;
    if (h.offset == 0) {                   /* a new image: the old program goes now */
        int rc = stage_new(h.total, STAGE_HOST);
        if (rc)
            return rc;
    }
    if (stage_src != STAGE_HOST || stage_len >= stage_total || h.offset != stage_len ||
        h.total != stage_total || n > stage_total - stage_len)
        return HVT_D_EORDER;
    __builtin_memcpy(stage + stage_len, args + sizeof h, n);
    stage_len += n;
    status.received = stage_len;
    if (stage_len < stage_total)
        return 0;
    return finish_load();
}

static int load_part(const uint8_t *args, uint32_t len)
{
    if (!load_trylock())
        return HVT_D_EBUSY;
    __builtin_memset(status.why, 0, sizeof status.why);
    status.err_clause = status.err_insn = 0;
    int rc = load_part_locked(args, len);
    load_unlock();
    return rc;
}

/* The staged image, whole: verified in the buffer only this loader writes, its state laid
 * out (no CPU uses the state: stage_new unloaded and saw none inside), published by swapping
 * hdr to it. The stage is emptied whatever the outcome. Under load_lock. */
static int finish_load(void)
{
    int rc = finish_stage();
    stage_src = STAGE_NONE;
    stage_total = stage_len = 0;
    return rc;
}

static int finish_stage(void)
{
    struct dif_verr e = { -1, -1, -1, "" };
    if (dif_verify(stage, stage_total, &e) != DIF_OK) {
        status.err_clause = (uint32_t)e.clause;
        status.err_insn = (uint32_t)e.insn;
        for (unsigned i = 0; i + 1 < sizeof status.why && e.reason && e.reason[i]; i++)
            status.why[i] = e.reason[i];
        hv_log("hvtrace: D program refused: clause %d insn %d: %s\n", e.clause, e.insn,
               e.reason ? e.reason : "?");
        return HVT_D_EVERIFY;
    }
    size_t need = dif_state_size(stage, hv_cpu_count());
    if (need > STATE_MAX) {
        say_why(status.why, sizeof status.why, "state over the per-program maximum");
        return HVT_D_ENOMEM;
    }
    if (need > state_cap) {
        /* Never freed, so grow by doubling (a guest loading ever larger programs would
         * otherwise leave each old block behind until the region is gone); whole pages: the
         * per-CPU blocks are 64-byte aligned (dif.h), more than hv_alloc promises. */
        size_t cap = need > 2 * state_cap ? need : 2 * state_cap;
        if (cap > STATE_MAX)
            cap = STATE_MAX;                /* need <= STATE_MAX */
        void *m = hv_budget_pages(&d_mem, HV_PAGES(cap));
        if (!m && cap > need)
            m = hv_budget_pages(&d_mem, HV_PAGES(cap = need));
        if (!m) {
            say_why(status.why, sizeof status.why, "state " WHY_BUDGET);
            hv_log("hvtrace: D program's state of %lu KiB refused: %lu of %lu KiB of the D "
                   "budget used\n", (uint64_t)need >> 10, d_mem.used >> 10,
                   hv_budget_limit(&d_mem) >> 10);
            return HVT_D_ENOMEM;
        }
        state_mem = m;
        state_cap = cap;
    }
    korc_ok = false;                       /* no CPU fires: the old program is unloaded */
    for (unsigned c = 0; c < hv_cpu_count(); c++)
        if (pcpu[c].kcache)
            __builtin_memset(pcpu[c].kcache, 0, sizeof *pcpu[c].kcache);
    if (((const struct hvt_dif_hdr *)stage)->off_korc) {
        const struct hvt_dif_hdr *h = (const void *)stage;
        dif_korc_tables((const void *)(stage + h->off_korc), kaslr_slide(), &korc);
        const char *why = kunwind_tables_check(&korc);
        korc_ok = !why;
        if (why)
            hv_log("hvtrace: D: the kernel's ORC tables after the slide: %s: kernel stack keys "
                   "stay empty\n", why);
    }
    struct dif_env load_env = env;
    load_env.hash_key = load_hash_key();
    if (dif_state_init(&st, state_mem, state_cap, stage, hv_cpu_count(), &load_env) != DIF_OK)
        return HVT_D_ENOMEM;
    uses_var = image_uses_var(stage);
    /* the engine's call into D: the thinner one when the program's probes take it */
    __atomic_store_n(&thin_loaded, dif_thin(st), __ATOMIC_RELAXED);   /* read under enter() */
    probe_set_action(dif_thin(st) ? on_fire_thin : on_fire);
    /* the engine computes a firing's arguments only for a program that reads them (args[],
     * argN, or errno from a return value) */
    probe_set_action_args(uses_var & (((1ull << (HVT_DIF_V_ARG0 + 10)) - (1ull << HVT_DIF_V_ARG0)) |
                                      1ull << HVT_DIF_V_ERRNO));
    hdr = (const struct hvt_dif_hdr *)stage;   /* the swap: the next load writes the other one */
    spare ^= 1;
    stage = NULL;
    load_ns = ns_of(hv_rdtsc() + (uint64_t)hv_tsc_offset());   /* the guest's clock, as timestamp */
    for (unsigned c = 0; c < hv_cpu_count(); c++)
        pcpu[c] = (typeof(pcpu[c])){ .buf = pcpu[c].buf, .kcache = pcpu[c].kcache };
    op_begin = op_end = op_snap = 0;
    snap_running = false;
    tracer_stopped = false;
    /* The counters are the program's, not the boot's: a consumer compares the records made
     * with those it received since it loaded this program (no CPU fires or sends now: the
     * program before was unloaded and drained, and this one is not loaded yet). */
    __atomic_store_n(&status.fires, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&status.records, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&status.records_lost, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&status.drops, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&status.errors, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&status.dyndrops, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&loaded, true, __ATOMIC_SEQ_CST);
    hv_log("hvtrace: D program loaded: %u bytes, %u clauses, %u probes, %lu bytes of state\n",
           stage_total, hdr->nclauses, hdr->nprobes, (uint64_t)need);
    return 0;
}

int dprobe_ctl_handle(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out,
                      uint32_t *out_len)
{
    int rc = HVT_CTL_OK;
    if (cmd == HVT_CTL_D_LOAD) {
        status.error = load_part(args, len);
    } else if (cmd == HVT_CTL_D_RUN) {
        struct hvt_d_run r;
        if (len != sizeof r)
            return HVT_CTL_EINVAL;
        __builtin_memcpy(&r, args, sizeof r);
        status.error = 0;
        spin_lock(&op_lock);
        if (!loaded && r.op != HVT_D_OP_UNLOAD) {
            status.error = HVT_D_ENOPROG;
        } else if (r.op == HVT_D_OP_BEGIN) {
            op_begin = 1;
        } else if (r.op == HVT_D_OP_END || r.op == HVT_D_OP_SNAP) {
            op_snap = ++snap_gen;
            op_end |= r.op == HVT_D_OP_END;
        } else if (r.op == HVT_D_OP_STATUS) {
        } else if (r.op == HVT_D_OP_UNLOAD) {
            if (busy())
                status.error = HVT_D_EBUSY;
        } else {
            rc = HVT_CTL_EINVAL;
        }
        spin_unlock(&op_lock);
        if (r.op == HVT_D_OP_UNLOAD && !status.error) {
            if (load_trylock()) {          /* not under a load that would publish after it */
                unload();                  /* a load waits for the last users (EBUSY) */
                load_unlock();
            } else {
                status.error = HVT_D_EBUSY;
            }
        }
    } else {
        return HVT_CTL_ENOSYS;
    }
    status.loaded = loaded;
    status.snap_gen = snap_gen;
    __builtin_memcpy(out, &status, sizeof status);
    *out_len = sizeof status;
    return rc;
}

int dprobe_init(void)
{
    for (unsigned c = 0; c < hv_cpu_count(); c++)
        if (!(pcpu[c].buf = hv_alloc(DRAIN_BUF)) || !(pcpu[c].kcache = hv_alloc(sizeof *pcpu[c].kcache)))
            return -1;
    if (!(snap_buf = hv_alloc(SNAP_BUF)))
        return -1;
    probe_set_action(on_fire);
    return 0;
}
