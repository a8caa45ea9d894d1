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
#include "hv_api.h"
#include "hv_core.h"
#include "hv_guest.h"
#include "hv_hooks.h"
#include "vmx.h"
#include "gmem.h"

#define CHUNK_BYTES   (256u * 1024)
#define STLB_SLOTS    64
#define IDT_VECTORS   256
#define IDT_GATE_SIZE 16
#define PAGE          0x1000ull
#define CR3_ADDR_MASK 0x000ffffffffff000ull
#define OPC_SYSCALL0  0x0f
#define OPC_SYSCALL1  0x05
/* Host ticks a VM exit + VM entry cost beyond what rdtsc brackets (measured in Bochs). */
#define VMX_TRANSITION_TICKS 2

struct stlb_entry { uint64_t tag; uint8_t *page; };

struct trace_cpu {
    bool stepping;
    bool have_pending, pending_syscall;
    uint64_t p_rip, p_cr3;
    uint32_t p_id;
    uint8_t p_len;
    uint64_t exit_tsc;
    uint64_t idt_base;
    uint64_t idt_handler[IDT_VECTORS];
    struct stlb_entry stlb[STLB_SLOTS];
    uint64_t stlb_cr3;
    struct rec_enc *enc;
    uint8_t *chunk;
    uint64_t steps, records_bytes;
};

static struct trace_cpu cpus[HVT_MAX_CPUS];
static volatile int trace_want;            /* 1: every CPU should step */
struct trace_stats trace_stats;

int step_init(unsigned ncpu)
{
    for (unsigned i = 0; i < ncpu; i++) {
        cpus[i].enc = hv_alloc_pages((sizeof(struct rec_enc) + 4095) / 4096);
        cpus[i].chunk = hv_alloc_pages(CHUNK_BYTES / 4096);
        if (!cpus[i].enc || !cpus[i].chunk)
            return -1;
    }
    return codedict_init();
}

/* --- guest code bytes through a small software TLB --- */

static void stlb_flush(struct trace_cpu *t)
{
    for (int i = 0; i < STLB_SLOTS; i++)
        t->stlb[i].tag = 1;            /* never a page-aligned VA */
}

static uint8_t *page_of(struct trace_cpu *t, uint64_t va)
{
    uint64_t vp = va & ~(PAGE - 1);
    struct stlb_entry *s = &t->stlb[(vp >> 12) & (STLB_SLOTS - 1)];
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
    }
}

static int idt_vector_of(struct trace_cpu *t, uint64_t rip)
{
    for (int v = 0; v < IDT_VECTORS; v++)
        if (t->idt_handler[v] == rip)
            return v;
    return -1;
}

/* --- chunks --- */

static uint64_t guest_tsc(void) { return hv_rdtsc() + (uint64_t)hv_tsc_offset(); }

static void chunk_begin(struct trace_cpu *t) { rec_begin(t->enc, t->chunk, CHUNK_BYTES, guest_tsc()); }

static void chunk_flush(struct trace_cpu *t, unsigned cpu)
{
    struct rec_enc *e = t->enc;
    if (!e->nrecords)
        return;
    codedict_flush();                       /* ids before their first use */
    struct trace_chunk_info ci = { .cpu = cpu, .kind = TRACE_CHUNK_RECORDS,
                                   .nrecords = e->nrecords, .ninsns = e->ninsns,
                                   .first_tsc = e->first_tsc, .last_tsc = e->tsc };
    trace_sink_chunk(&ci, e->buf, e->len);
    t->records_bytes += e->len;
    chunk_begin(t);
}

#define EMIT(t, cpu, call) do { if (call) { chunk_flush(t, cpu); (void)(call); } } while (0)

static void read_regs(const struct guest_regs *g, uint64_t r[HVT_NREGS])
{
    for (int i = 0; i < 16; i++)
        r[i] = g->r[i];
    r[HVT_REG_RSP] = hv_guest_read(HV_GUEST_RSP);
    r[HVT_REG_RFLAGS] = hv_guest_read(HV_GUEST_RFLAGS);
}

/* One step: write the pending instruction, note events, make RIP pending. */
static void step(struct trace_cpu *t, unsigned cpu, const struct guest_regs *g)
{
    uint64_t rip = hv_guest_read(HV_GUEST_RIP), cr3 = hv_guest_read(HV_GUEST_CR3);
    if ((cr3 & CR3_ADDR_MASK) != t->stlb_cr3) {
        stlb_flush(t);
        t->stlb_cr3 = cr3 & CR3_ADDR_MASK;
    }
    if (t->have_pending) {
        uint64_t regs[HVT_NREGS];
        read_regs(g, regs);
        EMIT(t, cpu, rec_insn(t->enc, t->p_rip, t->p_id, t->p_len, t->p_cr3, regs));
        if (t->pending_syscall)
            EMIT(t, cpu, rec_syscall(t->enc, g->r[GPR_RAX]));
    }
    if (hv_guest_read(HV_GUEST_IDTR_BASE) != t->idt_base)
        idt_load(t);
    int v = idt_vector_of(t, rip);
    if (v >= 0 && !(t->have_pending && t->p_rip + t->p_len == rip))
        EMIT(t, cpu, rec_event(t->enc, (uint8_t)v, v < 32 ? (v == 2 ? HVT_EV_NMI : HVT_EV_HWEXC) : HVT_EV_EXTINT, 0));
    uint8_t bytes[X86_MAX_INSN_LEN];
    unsigned n = fetch(t, rip, bytes);
    unsigned len = n ? x86_insn_len(bytes, n) : 0;
    t->steps++;
    if (!len) {
        /* Not readable (the page is not present: the guest takes #PF here and retries later,
         * which we will record then) or cut short. Nothing retires here now. */
        t->have_pending = false;
        return;
    }
    t->have_pending = true;
    t->p_rip = rip;
    t->p_cr3 = cr3;
    t->p_len = (uint8_t)len;
    t->p_id = codedict_id(rip, bytes, len);
    t->pending_syscall = len == 2 && bytes[0] == OPC_SYSCALL0 && bytes[1] == OPC_SYSCALL1;
}

static void start_cpu(struct trace_cpu *t, unsigned cpu)
{
    t->stepping = true;
    t->have_pending = false;
    t->idt_base = 0;
    t->stlb_cr3 = ~0ull;
    chunk_begin(t);
    EMIT(t, cpu, rec_startstop(t->enc, 1, HVT_REASON_HYPERCALL));
    hv_set_mtf(true);
}

/* Make the instruction at RIP pending without writing anything (first step after start). */
static void start_pending(struct trace_cpu *t, unsigned cpu, const struct guest_regs *g)
{
    t->have_pending = false;
    step(t, cpu, g);
}

/* The pending instruction has not run yet: it is not part of the trace. */
static void stop_cpu(struct trace_cpu *t, unsigned cpu)
{
    EMIT(t, cpu, rec_startstop(t->enc, 0, HVT_REASON_HYPERCALL));
    chunk_flush(t, cpu);
    t->stepping = false;
    t->have_pending = false;
    hv_set_mtf(false);
    __atomic_add_fetch(&trace_stats.steps, t->steps, __ATOMIC_RELAXED);
    __atomic_add_fetch(&trace_stats.bytes, t->records_bytes, __ATOMIC_RELAXED);
    t->steps = t->records_bytes = 0;
}

void step_request(bool on) { __atomic_store_n(&trace_want, on ? 1 : 0, __ATOMIC_RELEASE); }

void step_pre_exit(struct guest_regs *g, unsigned reason)
{
    struct trace_cpu *t = &cpus[hv_cpu_id()];
    if (t->stepping)
        t->exit_tsc = hv_rdtsc();
}

bool step_mtf_exit(struct guest_regs *g)
{
    unsigned cpu = hv_cpu_id();
    struct trace_cpu *t = &cpus[cpu];
    if (!t->stepping) {
        hv_set_mtf(false);
        return true;
    }
    step(t, cpu, g);
    return true;
}

void step_post_exit(struct guest_regs *g, unsigned reason)
{
    unsigned cpu = hv_cpu_id();
    struct trace_cpu *t = &cpus[cpu];
    int want = __atomic_load_n(&trace_want, __ATOMIC_ACQUIRE);
    if (t->stepping && reason != EXIT_MTF && t->have_pending &&
        hv_guest_read(HV_GUEST_RIP) != t->p_rip)
        step(t, cpu, g);                    /* an emulated instruction retired */
    if (want && !t->stepping) {
        start_cpu(t, cpu);
        start_pending(t, cpu, g);
    } else if (!want && t->stepping) {
        stop_cpu(t, cpu);
    }
    if (t->stepping) {
        /* Time dilation: the guest's TSC does not see the hypervisor's work (SDM 25.6.5). */
        uint64_t spent = hv_rdtsc() - t->exit_tsc + VMX_TRANSITION_TICKS;
        hv_tsc_offset_add(-(int64_t)spent);
    }
}
