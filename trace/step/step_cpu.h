/*
 * step_cpu.h - the per-CPU stepping state shared by the full step (step.c) and the MTF fast
 * path (step_fast.asm, through struct step_fast's asserted offsets). Internal to those two.
 *
 * Contract between them: at every MTF exit the guest is about to execute the instruction at
 * RIP; one instruction is "pending" (its decoded-cache entry, f.p_ic), recorded at the next
 * exit with the registers it produced. The fast path (step_fast.asm) handles only the plain
 * case - allowed by the full step (f.left), no event, no task switch, no CR3 or IDT change, a
 * decoded-instruction cache hit whose bytes still match guest memory - and otherwise leaves
 * the exit untouched for the full step.
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
#define CHUNK_BYTES   (256u * 1024)         /* a CPU's chunk of records */
#define IDT_VECTORS   256
#define EVMAP_SLOTS   4096                  /* >> 2 x 256 handlers + stop addresses: one probe */
/* Decoded-cache entries: 16384 sets of two (4 MiB per CPU); set s mirrors predictor slot
 * s % HVT_PRED_SLOTS, see pstamp. 4096 direct-mapped entries missed on about half the steps of
 * an idle CPU's wake-ups (the kernel's working set is larger); 16384 direct-mapped ones still
 * had ~18 conflict misses in each 350-instruction getpid iteration (two hot instructions in
 * one entry evict each other). A miss costs a full step (about 2,000 instructions against the
 * fast path's ~130): md5sum of 1 MiB missed 109 K times in 8192 sets of two, 69 K in 32768
 * (59,816 distinct instructions). A new entry goes to way 0 and moves way 0 to way 1. */
#define ICACHE_WAYS   2
#define ICACHE_SETS   (HVT_PRED_SLOTS * 4)
#define ICACHE_SLOTS  (ICACHE_SETS * ICACHE_WAYS)
#define STEP_PAGE     X86_PAGE_SIZE
#define CR3_ADDR_MASK 0x000ffffffffff000ull
/* A process identity: the page-table root without PCID (bits 11:0) and without the bit that
 * selects the user half of a PTI page-table pair (bit 12: Linux keeps them 8 KiB aligned). */
#define CR3_PROC_MASK (CR3_ADDR_MASK & ~0x1000ull)
/* Full steps at least every this many fast ones: the full exit path polls the NIC, the
 * triggers and the host's commands (about every 0.5 M host instructions). */
#define STEP_FAST_RUN 4096
/* The fast path compares RFLAGS as register 16 of the write set (HVT_REG_RFLAGS). */
#define CAND_ALL      REC_REGS_ALL

/* icache entry flags. P_SYSCALL, P_SWINT, P_IRET, P_CTX: the instruction needs the full step
 * when it retires (its marker; it retires by an event; it may load RFLAGS.RF, which the next
 * instruction clears - outside any write set; it may load CR3 or IDTR, which the fast path
 * does not check). P_SPECIAL: its address is in the evmap (an event was delivered if RIP is
 * here, or it is an auto-stop address): the full step must see it. P_REP: a REP string
 * instruction, whose iterations may be REPEAT counts (REC_CAND_REP). */
enum { P_SYSCALL = 1, P_SWINT = 2, P_SPECIAL = 4, P_IRET = 8, P_REP = 16, P_CTX = 32,
       P_PENDING = P_SYSCALL | P_SWINT | P_IRET | P_CTX };
/* rec_insn's REC_CAND_REP bit for an entry with these flags. */
static inline uint32_t p_rep_cand(unsigned flags) { return flags & P_REP ? REC_CAND_REP : 0; }

struct stlb_entry { uint64_t tag; uint8_t *page; };
/* Decoded-instruction cache: an instruction seen before at this RIP with the same bytes needs
 * no length decoding and no dictionary lookup (the common case by far). 128 bytes: the fast
 * path (step_fast.asm) finds set s's way w at icache + (s * ICACHE_WAYS + w) << ICACHE_SHIFT.
 *   hptr, fgen  where its 16-byte window is in host memory, valid while fgen is FGEN_KERNEL
 *               (kernel addresses: mapped alike in every process) or the CPU's fgen_user (user
 *               addresses: until the process changes), with FGEN_HI where some of its bytes
 *               are in the window's second half and FGEN_PENDING for P_PENDING (icache_fgen).
 *               0: not for the fast path (P_SPECIAL, or the instruction itself crosses a page).
 *   shift       where the instruction starts in that window: 0, or for one that ends in the
 *               last 16 bytes of its page, the window is the page's last 16 bytes (the next
 *               page is another mapping) and lo/hi/mlo/mhi hold its bytes at 'shift'.
 *   hptr2, lo2, mlo2  an instruction that crosses into the next page (its window the page's
 *               last 16 bytes, shift as above): where its bytes in that page are and what
 *               they are (at most 8: a longer tail leaves the entry to the full step); its
 *               fgen then carries FGEN_CROSS, so the fast path compares them too.
 *   pstamp      the encoder's predictor slot (set % HVT_PRED_SLOTS) holds (rip, id) while
 *               this equals the encoder's pstamp (rec_enc.h): the record needs no code id.
 *               Whoever sets that slot stamps the entry it came from and unstamps the other
 *               entries that share the slot. */
#define ICACHE_SHIFT 7
#define FGEN_KERNEL  1u
#define FGEN_CROSS   (1u << 31)             /* with a generation: check the next page's bytes too */
#define FGEN_HI      (1u << 30)             /* with a generation: its window's second 8 bytes too */
#define FGEN_PENDING (1u << 29)             /* with a generation: P_PENDING (its retirement) */
#define FGEN_FLAGS   (FGEN_CROSS | FGEN_HI | FGEN_PENDING)   /* generations stay below them */
struct icache_entry {
    uint64_t rip, lo, hi, mlo, mhi;
    const uint8_t *hptr;
    uint64_t next;                          /* rip + len: the decoder's next expected RIP */
    uint32_t id;
    uint32_t cand;                          /* registers it may write, RFLAGS as bit 16 */
    uint32_t fgen, pstamp;
    uint16_t slot;                          /* its index */
    uint8_t len, flags;
    uint8_t shift, pad0[3];
    const void *handler;                    /* the fast path's compare for cand (step_fast_handler) */
    /* The entry that ran after this one last time (a hint: the fast path checks its rip, and
     * hashes on a miss); never NULL - itself until then - so it can always be read. */
    struct icache_entry *link;
    const uint8_t *hptr2;
    uint64_t lo2, mlo2;
    uint8_t pad[8];
};
_Static_assert(sizeof(struct icache_entry) == 1u << ICACHE_SHIFT, "icache entry size");
/* The generation an entry is given (0: none), its flags set (entry flags first): what the
 * fast path does for the few entries that need more than the common case - its own compare
 * reads only the window's first 8 bytes (most instructions fit there) and sets no turn. */
static inline uint32_t icache_fgen(const struct icache_entry *ic, uint32_t gen)
{
    if (!gen)
        return 0;
    return gen | (ic->mhi ? FGEN_HI : 0) | (ic->flags & P_PENDING ? FGEN_PENDING : 0);
}
/* Guest RIPs where something happens: interrupt/exception handler entries (and the address
 * after their first instruction, see event_at in step.c), auto-stop addresses (vec < 0). */
struct evmap_entry { uint64_t rip; int16_t vec; int16_t ran_first; };

/* Why the fast path left a step to the full one (counted, for HVT-STEPSTAT). */
enum { FD_LEFT, FD_TASK, FD_MISS, FD_GEN, FD_BYTES, FD_ROOM, FD_COUNT };

/* What the fast path (step_fast.asm) reads and writes, at the offsets step_fast_asm.c
 * generates for it from the FS base (hv_set_mtf_fast's context). The full step prepares it:
 * the fast path takes an MTF exit only while all of it holds, and declines - before changing
 * anything - otherwise. Allocated per CPU (step_init) with the encoder and its chunk inside,
 * so one segment base reaches all three and the path keeps no register for any. */
struct step_fast {
    uint32_t left;                          /* 0: exits until a full step (1: the next one) */
    uint32_t checkregs;                     /* 4: checkregs=on: compare all, count misses */
    uint64_t cr3;                           /* 8: the pending's CR3 (its record's; C only) */
    const uint64_t *task_slot;              /* 16: the guest's current task pointer ... */
    uint64_t task_last;                     /* 24: ... must still be this one */
    struct icache_entry *icache;            /* 32 */
    struct icache_entry *p_ic;              /* 40: the pending instruction */
    struct rec_enc *enc;                    /* 48: enc_store, for C */
    uint64_t len_limit;                     /* 56: room for one more record while len <= this */
    uint64_t fast_steps;                    /* 64 */
    uint64_t wregs_misses;                  /* 72: checkregs: write sets that missed a change */
    uint32_t fgen_user;                     /* 80 */
    uint32_t pad0;                          /* 84 */
    uint64_t miss_rip;                      /* 88: checkregs: the first miss, */
    uint64_t miss_mask;                     /* 96: and what it missed */
    uint64_t declines[FD_COUNT];            /* 104 */
    uint64_t delta[HVT_NREGS];              /* 152: a record's register deltas, by register */
    /* The fast path's miss: RIP decoded into the decoded cache as the full step would (its
     * decode), or NULL - the exit is then the full step's: RIP cannot be read, or its set is
     * the pending instruction's (a new entry moves that set's entries). Called from the exit
     * with the state the fast path keeps; step.c sets it (the host test its own). */
    struct icache_entry *(*fill)(struct step_fast *f, uint64_t rip);   /* 288 */
    uint64_t fills;                         /* 296: misses 'fill' decoded */
    struct step_fast *self;                 /* 304: this block's address ('fill's argument) */
    struct rec_enc enc_store;               /* the encoder ('enc') */
    uint8_t chunk_store[CHUNK_BYTES];       /* its chunk (trace_cpu.chunk, enc->buf) */
};

struct trace_cpu {
    struct step_fast *f;                    /* the fast path's context (step_init) */
    /* the full step's */
    bool stepping;
    bool have_pending;
    bool p_keep;                            /* the pending instruction passes the filters */
    uint64_t stlb_cr3;                      /* process (CR3_PROC_MASK) the stlb holds */
    uint64_t idt_base;
    uint64_t steps, recorded;               /* full steps; records they wrote */
    struct stlb_entry stlb[STLB_SLOTS];
    struct evmap_entry evmap[EVMAP_SLOTS];
    uint64_t idt_handler[IDT_VECTORS];
    uint8_t idt_first_len[IDT_VECTORS];     /* length of each handler's first instruction */
    uint8_t *chunk;
    uint64_t records_bytes;
    bool halted;                            /* parked in HLT until an interrupt (IF=1) or an
                                               NMI arrives */
    uint64_t silent_wakes;                  /* parked, found running: wake-ups not heard of */
    uint64_t win_host_tsc, win_guest_tsc;   /* at trace start: for the per-window report */
    uint64_t t_step, t_sink;                /* ticks inside full steps and inside the sink */
    bool rec_on;                            /* recording (not suspended by a filter) */
    uint64_t filtered;                      /* instructions the filters left out */
    bool task_known;                        /* 'task' holds the last SWITCH's task */
    struct task_info task;
    uint64_t task_cr3;
    /* Scope (scope.h): the window is open on this CPU but what runs here is not wanted, so it
     * is not stepped ('paused'); the current task is the wanted one ('scope_in'); stepping
     * resumed at the switch probe, before the task changes to the wanted one ('arriving');
     * irq=out: a hardware interrupt of the wanted context is running, recorded from where it
     * returns to (RIP and RSP) on. Counters for HVT-SCOPESTAT. */
    bool paused, scope_in, arriving, irq_skip;
    uint64_t irq_rip, irq_rsp;
    uint64_t arrive_until;                  /* steps: 'arriving' gives up here */
    uint64_t exits, resumes, pauses;
    /* The pending instruction's decoded entry, kept across an IDT reload (which empties the
     * decoded-instruction cache: evmap_build) until it retires. */
    struct icache_entry p_saved;
};

extern struct trace_cpu step_cpus[HVT_MAX_CPUS];

/* step_fast.asm's pass-1 routines by write set: none, any set (a loop), one register i
 * (RFLAGS = 16), one general register i and RFLAGS; and a REP string instruction's (the loop,
 * then a REPEAT count if its iteration changed the registers as its last one did). */
extern const void *const step_fast_handlers[];
enum { FAST_H_NONE, FAST_H_GENERIC, FAST_H_ONE, FAST_H_PAIR = FAST_H_ONE + HVT_NREGS,
       FAST_H_REP = FAST_H_PAIR + HVT_REG_RFLAGS };
/* cand: the write set, with REC_CAND_REP for a REP string instruction. */
static inline const void *step_fast_handler(uint32_t cand)
{
    if (cand & REC_CAND_REP)
        return step_fast_handlers[FAST_H_REP];
    uint32_t gpr = cand & ~(1u << HVT_REG_RFLAGS);
    if (!cand)
        return step_fast_handlers[FAST_H_NONE];
    if (!(cand & (cand - 1)))
        return step_fast_handlers[FAST_H_ONE + __builtin_ctz(cand)];
    if (cand & (1u << HVT_REG_RFLAGS) && !(gpr & (gpr - 1)))
        return step_fast_handlers[FAST_H_PAIR + __builtin_ctz(gpr)];
    return step_fast_handlers[FAST_H_GENERIC];
}

/* Instructions this CPU retired under stepping (every step, full or fast). */
static inline uint64_t step_retired(const struct trace_cpu *t) { return t->steps + t->f->fast_steps; }

/* The predictor's hash, wider: icache_set(rip) % HVT_PRED_SLOTS == HVT_PRED_SLOT(rip). */
static inline unsigned icache_set(uint64_t rip) { return (unsigned)((rip ^ (rip >> HVT_PRED_HASH_SHIFT)) & (ICACHE_SETS - 1)); }
_Static_assert(ICACHE_SETS % HVT_PRED_SLOTS == 0, "icache_set extends HVT_PRED_SLOT");
/* The entry holding rip, or NULL. */
static inline struct icache_entry *icache_find(struct icache_entry *c, uint64_t rip)
{
    struct icache_entry *w = &c[icache_set(rip) * ICACHE_WAYS];
    return w[0].rip == rip ? &w[0] : w[1].rip == rip ? &w[1] : 0;
}
/* A free entry for rip: way 0 of its set, whose old entry moves to way 1 (the old way 1 goes).
 * Moved entries keep everything (same set: same predictor slot). */
static inline struct icache_entry *icache_insert(struct icache_entry *c, uint64_t rip)
{
    struct icache_entry *w = &c[icache_set(rip) * ICACHE_WAYS];
    w[1] = w[0];
    w[0].rip = ~0ull;
    w[0].fgen = 0;
    w[0].pstamp = 0;
    return &w[0];
}
/* The code an entry describes: rip, its dictionary id and length, its bytes (16 read, len of
 * them compared). Not yet usable by the fast path (fgen 0) nor stamped. */
static inline void icache_set_code(struct icache_entry *ic, uint64_t rip, const uint8_t bytes[16],
                                   unsigned len, uint32_t id)
{
    ic->rip = rip;
    ic->next = rip + len;
    ic->link = ic;
    ic->pstamp = 0;
    ic->fgen = 0;
    ic->id = id;
    ic->len = (uint8_t)len;
    __builtin_memcpy(&ic->lo, bytes, 8);
    __builtin_memcpy(&ic->hi, bytes + 8, 8);
    ic->mlo = len >= 8 ? ~0ull : (1ull << (8 * len)) - 1;
    ic->mhi = len <= 8 ? 0 : (1ull << (8 * (len - 8))) - 1;
    ic->shift = 0;
}
/* Where an instruction at page offset 'off' starts in its 16-byte window (see shift). */
static inline unsigned icache_window_shift(unsigned off, unsigned page)
{
    return off <= page - 16 ? 0 : off - (page - 16);
}
/* The entry's bytes and masks moved to 'shift' in its window (after icache_set_code, whose
 * bytes and masks already are those of shift 0). */
static inline void icache_set_shift(struct icache_entry *ic, unsigned shift)
{
    if (!shift)
        return;
    uint8_t b[16] = { 0 }, m[16] = { 0 }, src[16];
    __builtin_memcpy(src, &ic->lo, 8);
    __builtin_memcpy(src + 8, &ic->hi, 8);
    for (unsigned i = 0; i < ic->len && shift + i < 16; i++) {
        b[shift + i] = src[i];
        m[shift + i] = 0xff;
    }
    __builtin_memcpy(&ic->lo, b, 8);
    __builtin_memcpy(&ic->hi, b + 8, 8);
    __builtin_memcpy(&ic->mlo, m, 8);
    __builtin_memcpy(&ic->mhi, m + 8, 8);
    ic->shift = (uint8_t)shift;
}
/* An instruction that crosses its page's end, 'tail' of its bytes in the next page (after
 * icache_set_shift, which keeps its window to the first page's bytes): those bytes and their
 * mask. false (nothing set) when they are more than 8. */
static inline bool icache_set_tail(struct icache_entry *ic, const uint8_t *bytes, unsigned tail)
{
    if (tail == 0 || tail > 8)
        return false;
    uint64_t lo = 0;
    __builtin_memcpy(&lo, bytes + ic->len - tail, tail);
    ic->lo2 = lo;
    ic->mlo2 = tail == 8 ? ~0ull : (1ull << (8 * tail)) - 1;
    return true;
}
/* The encoder's predictor slot of rip now holds (rip, id): the entry holding them gets the
 * stamp, the other entries sharing the slot lose theirs (see pstamp). */
static inline void icache_pred_set(struct icache_entry *c, uint64_t rip, uint32_t id, uint32_t pstamp)
{
    for (unsigned s = HVT_PRED_SLOT(rip); s < ICACHE_SETS; s += HVT_PRED_SLOTS)
        for (struct icache_entry *ic = &c[s * ICACHE_WAYS]; ic < &c[(s + 1) * ICACHE_WAYS]; ic++)
            ic->pstamp = ic->rip == rip && ic->id == id ? pstamp : 0;
}
static inline unsigned evmap_hash(uint64_t rip) { return (unsigned)((rip * 0x9e3779b97f4a7c15ull) >> 52); }
_Static_assert(EVMAP_SLOTS == 1u << 12, "evmap_hash yields 12 bits");

#endif
