/*
 * step_cpu.h - the per-CPU stepping state shared by the full step (step.c) and the MTF fast
 * path (step_fast.c). Internal to those two files.
 *
 * Contract between them: at every MTF exit the guest is about to execute the instruction at
 * RIP; one instruction is "pending" (p_*), recorded at the next exit with the registers it
 * produced. The fast path handles only the plain case - p_fast set by the full step, no event,
 * no task switch, no CR3 or IDT change, a decoded-instruction cache hit whose bytes still
 * match guest memory - and otherwise leaves the exit untouched for the full step.
 */
#ifndef HVT_STEP_CPU_H
#define HVT_STEP_CPU_H
#include <stdbool.h>
#include <stdint.h>
#include "hv_api.h"
#include "hvt_bootinfo.h"
#include "rec_enc.h"
#include "task.h"

#define STLB_SLOTS    256
#define IDT_VECTORS   256
#define EVMAP_SLOTS   4096                  /* >> 2 x 256 handlers + stop addresses: one probe */
#define ICACHE_SLOTS  4096
#define STEP_PAGE     0x1000ull
#define CR3_ADDR_MASK 0x000ffffffffff000ull
/* A process identity: the page-table root without PCID (bits 11:0) and without the bit that
 * selects the user half of a PTI page-table pair (bit 12: Linux keeps them 8 KiB aligned). */
#define CR3_PROC_MASK (CR3_ADDR_MASK & ~0x1000ull)
/* Full steps at least every this many fast ones: the full exit path polls the NIC, the
 * triggers and the host's commands (about every 0.5 M host instructions). */
#define STEP_FAST_RUN 4096

/* icache entry flags. P_SYSCALL, P_SWINT: the instruction needs the full step when it retires
 * (its marker; it retires by an event). P_SPECIAL: its address is in the evmap (an event was
 * delivered if RIP is here, or it is an auto-stop address): the full step must see it. */
enum { P_SYSCALL = 1, P_SWINT = 2, P_PENDING = P_SYSCALL | P_SWINT, P_SPECIAL = 4 };

struct stlb_entry { uint64_t tag; uint8_t *page; };
/* Decoded-instruction cache: an instruction seen before at this RIP with the same bytes needs
 * no length decoding and no dictionary lookup (the common case by far). */
struct icache_entry { uint64_t rip, lo, hi, mlo, mhi; uint32_t id; uint8_t len, flags; uint16_t wregs; };
_Static_assert(sizeof(struct icache_entry) == 48, "icache entry size");
/* Guest RIPs where something happens: interrupt/exception handler entries (and the address
 * after their first instruction, see event_at in step.c), auto-stop addresses (vec < 0). */
struct evmap_entry { uint64_t rip; int16_t vec; int16_t ran_first; };

struct trace_cpu {
    /* read by the fast path at every step */
    bool p_fast;                            /* the pending instruction may take the fast path */
    uint8_t p_len;
    uint32_t p_id;
    uint32_t p_cand;                        /* registers it may write (rec_insn cand) */
    bool checkregs;                         /* trace option checkregs=on */
    uint64_t p_rip, p_cr3;
    uint64_t stlb_cr3;                      /* process (CR3_PROC_MASK) the stlb holds */
    uint64_t idt_base;
    unsigned fast_left;                     /* fast steps left before a full one */
    struct rec_enc *enc;
    struct icache_entry *icache;
    struct stlb_entry stlb[STLB_SLOTS];
    uint64_t steps, recorded;
    struct evmap_entry evmap[EVMAP_SLOTS];
    /* the full step's */
    bool stepping;
    bool have_pending;
    bool p_keep;                            /* the pending instruction passes the filters */
    uint8_t p_flags;                        /* P_* */
    uint64_t idt_handler[IDT_VECTORS];
    uint8_t idt_first_len[IDT_VECTORS];     /* length of each handler's first instruction */
    uint8_t *chunk;
    uint64_t records_bytes;
    bool halted;                            /* parked in HLT until an interrupt arrives */
    uint64_t win_host_tsc, win_guest_tsc;   /* at trace start: for the per-window report */
    uint64_t t_step, t_sink;                /* ticks inside full steps and inside the sink */
    uint64_t fast_steps;                    /* steps the fast path took */
    uint64_t wregs_misses;                  /* checkregs: write sets that missed a change */
    bool rec_on;                            /* recording (not suspended by a filter) */
    uint64_t filtered;                      /* instructions the filters left out */
    bool task_known;                        /* 'task' holds the last SWITCH's task */
    struct task_info task;
    uint64_t task_cr3;
};

extern struct trace_cpu step_cpus[HVT_MAX_CPUS];

/* The instruction at rip, described by its decoded-cache entry, becomes the pending one (the
 * caller sets p_flags: the fast path has excluded P_SPECIAL already and need not mask it). */
static inline void pending_set(struct trace_cpu *t, const struct icache_entry *ic, uint64_t rip,
                               uint64_t cr3)
{
    t->p_rip = rip;
    t->p_cr3 = cr3;
    t->p_id = ic->id;
    t->p_len = ic->len;
    t->p_cand = ic->wregs;
}

static inline unsigned icache_slot(uint64_t rip) { return (unsigned)((rip ^ (rip >> 12)) & (ICACHE_SLOTS - 1)); }
static inline unsigned evmap_hash(uint64_t rip) { return (unsigned)((rip * 0x9e3779b97f4a7c15ull) >> 52); }
_Static_assert(EVMAP_SLOTS == 1u << 12, "evmap_hash yields 12 bits");

#endif
