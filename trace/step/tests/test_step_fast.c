/* test_step_fast: the MTF fast path (trace/step/step_fast.asm, assembled with HOST_TEST) run on the
 * host through the exit stub's register contract (step_fast_harness.asm), against a VMCS in
 * memory. A random instruction stream - straight runs, jumps, registers changed within each
 * instruction's write set, code ids replaced at an address, kernel and user addresses - is
 * stepped the way step.c does it: the fast path takes what it may, and where it declines (a
 * full chunk, the full step's turn - a CR3 or IDT loaded by the pending instruction among its
 * reasons -, a changed task, a cache miss, a stale host pointer, changed code bytes, each
 * provoked on purpose) the test writes that record as the
 * full step would (rec_insn, every register compared; the predictor stamps kept as put_insn
 * keeps them). Checked:
 *   - every guest register comes back as it went in, and the stack as the stub left it;
 *   - a declined step changes nothing in the encoder or the fast path's state but its count;
 *   - the chunks, read by the host reader, hold exactly the instructions stepped: RIP, code
 *     id and length, CR3, time stamp and all 17 registers;
 *   - the checkregs variant counts a change outside the write set, and still records it;
 *   - an entry compared in its page's last 16 bytes (icache_set_shift) sees its bytes alone.
 * Some instructions cross their page's end (FGEN_CROSS: the tail's bytes live apart, as in the
 * next page), and a changed byte on either side must make the fast path decline; so must one
 * in the second 8 bytes of an entry's window, which the fast path compares only for entries
 * marked FGEN_HI (icache_fgen).
 * REP string instructions (P_REP) repeat, mostly with the same register deltas as their last
 * iteration: the plain path folds those into REPEAT counts, which the reader must expand back.
 * With 'flow' (the FLOW record mode, step_fast_entry_flow; the stream also repeats
 * instructions, as REP string iterations do), the fast path's bytes are also compared after
 * every step with what rec_insn writes for the same instructions into an encoder of its own:
 * the same RUN and REPEAT counts, the same records, byte for byte.
 *   test_step_fast [SEED] [STEPS] [flow]   prints "step_fast: N passed, M failed" */
#include "step_cpu.h"
#include "step_fast_test.h"
#include "trace_chunkw.h"
#include "trace_reader.h"
#include "rand_regs.h"
#include <asm/prctl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "check.h"

#define NCODES  512
#define CAP     (48 * 1024)           /* small chunks: many boundaries */
#define CR3     0x12345000ull
#define IDT     0xfffffe0000000000ull
#define HARNESS_BAD_STACK 0x100

int fast_run(uint64_t regs[16], void *entry);
void step_fast_entry(void), step_fast_entry_check(void), step_fast_entry_flow(void);
uint64_t test_vmcs[TV_COUNT];         /* what step_fast.asm reads in place of the VMCS */

struct want { uint64_t rip, cr3; uint32_t id; uint8_t len; uint64_t regs[HVT_NREGS]; };


static struct step_fast f;
static struct rec_enc e2;          /* the C encoder alone (flow) */
static uint8_t buf2[CAP];
static bool flow;
static struct icache_entry *icache;
static uint64_t task_word = 0xffff888001234000ull;
static tcw *w;
static struct want *want;
static size_t nwant, pass, fail;
static uint64_t tsc = 5000;
/* The instructions: where they are (a page of bytes each: the fast path reads 16 bytes at
 * the host pointer) and what they are. */
static struct code { uint64_t rip; uint8_t len, flags, cross, bytes[16]; uint32_t id, cand; } codes[NCODES];
static uint8_t *pages, *tails;         /* cross: the bytes in the first page; the rest in tails */

/* Where byte i of code c sits in guest memory. */
static uint8_t *code_byte(unsigned c, unsigned i)
{
    const struct code *k = &codes[c];
    if (!k->cross)
        return pages + (size_t)c * 4096 + i;
    return i < k->cross ? pages + (size_t)c * 4096 + 4096 - k->cross + i : tails + (size_t)c * 16 + i - k->cross;
}
/* The generation step.c's icache_hptr gives code c's entry. */
static uint32_t fgen_of(const struct icache_entry *ic, unsigned c, uint32_t fgen)
{
    fgen = icache_fgen(ic, fgen);
    return fgen && codes[c].cross ? fgen | FGEN_CROSS : fgen;
}

static void check(int ok, const char *what, size_t step)
{
    if (ok) { pass++; return; }
    if (fail++ < 10) fprintf(stderr, "step_fast: step %zu: %s\n", step, what);
}

static int64_t folded;                /* instructions in markers' counts, less the markers */
static void flush_chunk(void)
{
    folded += (int64_t)f.enc_store.ninsns - (int64_t)f.enc_store.nrecords;
    /* The clock the chunk ends at (the index's last_tsc): a tick per instruction, the fast
     * path's counted ones included (no TIME marker here). */
    check(rec_tsc(&f.enc_store) == f.enc_store.first_tsc + f.enc_store.ninsns, "the chunk's clock is not a tick per instruction", nwant);
    hvt_trace_chunk_hdr ch;
    memset(&ch, 0, sizeof ch);
    ch.kind = HVT_CHUNK_RECORDS;
    ch.nrecords = f.enc_store.nrecords;
    ch.ninsns = f.enc_store.ninsns;
    ch.first_tsc = f.enc_store.first_tsc;
    ch.last_tsc = rec_tsc(&f.enc_store);
    if (f.enc_store.len && tcw_chunk(w, &ch, f.enc_store.buf, f.enc_store.len)) { fprintf(stderr, "%s\n", tcw_error(w)); exit(2); }
    rec_begin(&f.enc_store, f.chunk_store, CAP, tsc);
}

/* flow: the C encoder's record of the same instruction, and the two encoders compared. */
static void shadow_record(const struct want *x, const uint64_t *regs, size_t step)
{
    if (!flow)
        return;
    if (rec_insn(&e2, x->rip, x->id, x->len, x->cr3, regs, regs[HVT_REG_RFLAGS], REC_REGS_ALL)) {
        rec_begin(&e2, buf2, sizeof buf2, tsc);
        check(!rec_insn(&e2, x->rip, x->id, x->len, x->cr3, regs, regs[HVT_REG_RFLAGS], REC_REGS_ALL),
              "rec_insn: no room in an empty chunk", step);
    }
    check(f.enc_store.len == e2.len && !memcmp(f.enc_store.buf, e2.buf, f.enc_store.len) && f.enc_store.nrecords == e2.nrecords &&
          f.enc_store.ninsns == e2.ninsns && rec_tsc(&f.enc_store) == rec_tsc(&e2), "flow: bytes differ from rec_insn's", step);

}

/* The decoded entry for code c, as step.c fills it (slot, host pointer, write set, ...). */
static struct icache_entry *fill(unsigned c, uint32_t fgen)
{
    struct code *k = &codes[c];
    struct icache_entry *ic = icache_find(icache, k->rip);
    if (!ic)
        ic = icache_insert(icache, k->rip);
    memset(ic, 0, sizeof *ic);
    ic->slot = (uint16_t)icache_set(k->rip);
    icache_set_code(ic, k->rip, k->bytes, k->len, k->id);
    ic->hptr = pages + (size_t)c * 4096;
    if (k->cross) {
        icache_set_shift(ic, 16u - k->cross);
        if (!icache_set_tail(ic, k->bytes, k->len - k->cross)) { fprintf(stderr, "tail\n"); exit(2); }
        ic->hptr = pages + (size_t)c * 4096 + 4096 - 16;
        ic->hptr2 = tails + (size_t)c * 16;
    }
    ic->cand = k->cand;
    ic->handler = step_fast_handler(k->cand | p_rep_cand(k->flags));
    ic->flags = k->flags;
    ic->fgen = fgen_of(ic, c, fgen);
    /* A new entry has no stamp, so the fast path sends its code id even where the predictor
     * still holds it (rec_insn would not): for the byte comparison of 'flow', both encoders
     * forget that prediction (no stamped entry relies on it: the slot holds this rip). */
    uint32_t slot = HVT_PRED_SLOT(k->rip);
    if (flow && f.enc_store.pred[slot].rip == k->rip)
        f.enc_store.pred[slot].valid = e2.pred[slot].valid = 0;
    return ic;
}

/* An instruction that ends near its page's end is compared in the page's last 16 bytes
 * (icache_set_shift): the masked compare sees exactly its bytes, wherever they sit. */
static void check_shift(void)
{
    for (unsigned shift = 0; shift < 16; shift++)
        for (unsigned len = 1; len <= HVT_CODE_MAX && shift + len <= 16; len++) {
            uint8_t b[16], win[16];
            for (int i = 0; i < 16; i++) { b[i] = (uint8_t)rnd(); win[i] = (uint8_t)rnd(); }
            memcpy(win + shift, b, len);
            struct icache_entry ic;
            memset(&ic, 0, sizeof ic);
            icache_set_code(&ic, 0x1000, b, len, 1);
            icache_set_shift(&ic, shift);
            uint64_t lo, hi;
            memcpy(&lo, win, 8);
            memcpy(&hi, win + 8, 8);
            check(!((lo ^ ic.lo) & ic.mlo) && !((hi ^ ic.hi) & ic.mhi) && ic.shift == shift,
                  "shifted entry does not match its own bytes", shift * 16 + len);
            for (unsigned i = 0; i < 16; i++) {
                win[i] ^= 0x5a;
                memcpy(&lo, win, 8);
                memcpy(&hi, win + 8, 8);
                bool differs = ((lo ^ ic.lo) & ic.mlo) || ((hi ^ ic.hi) & ic.mhi);
                check(differs == (i >= shift && i < shift + len), "shifted masks cover other bytes", i);
                win[i] ^= 0x5a;
            }
        }
    check(icache_window_shift(0, 4096) == 0 && icache_window_shift(4080, 4096) == 0 &&
          icache_window_shift(4081, 4096) == 1 && icache_window_shift(4095, 4096) == 15, "window shift", 0);
}

/* step.c's fill (f.fill), played by the test: the code the test left out of the cache for the
 * fast path to decode (fill_next, with the generation fill_fgen: 0 leaves it to the full step)
 * filled, as decode() would; NULL for any other address (no code there) or one in the
 * pending's set. The registers C code may clobber are clobbered. */
static unsigned fill_next = ~0u;
static uint32_t fill_fgen;
static struct icache_entry *filled;
static struct icache_entry *test_fill(struct step_fast *ff, uint64_t rip)
{
    __asm__ volatile("mov $0x5a5a5a5a5a5a5a5a, %%rax\n\tmov %%rax, %%r10\n\tmov %%rax, %%r11\n\t"
                     "mov %%rax, %%r8\n\tmov %%rax, %%r9\n\tmov %%rax, %%rcx\n\tmov %%rax, %%rdx"
                     ::: "rax", "rcx", "rdx", "r8", "r9", "r10", "r11");
    if (fill_next == ~0u || codes[fill_next].rip != rip || icache_set(rip) == icache_set(ff->p_ic->rip))
        return NULL;
    /* (fill() would forget the encoder's prediction of it: not in the middle of a step) */
    if (flow && f.enc_store.pred[HVT_PRED_SLOT(rip)].rip == rip)
        return NULL;
    filled = fill(fill_next, fill_fgen);
    return filled;
}

/* The full step's record of the pending instruction (step.c put_insn). */
static void full_record(const struct icache_entry *p, const uint64_t *regs)
{
    uint32_t cand = REC_REGS_ALL | p_rep_cand(p->flags);
    if (rec_insn(&f.enc_store, p->rip, p->id, p->len, f.cr3, regs, regs[HVT_REG_RFLAGS], cand)) {
        flush_chunk();
        rec_insn(&f.enc_store, p->rip, p->id, p->len, f.cr3, regs, regs[HVT_REG_RFLAGS], cand);
    }
    icache_pred_set(icache, p->rip, p->id, f.enc_store.pstamp);
}

int main(int argc, char **argv)
{
    if (argc > 1) rng = strtoull(argv[1], 0, 0) | 1;
    size_t n = argc > 2 ? strtoull(argv[2], 0, 0) : 300000;
    flow = argc > 3 && !strcmp(argv[3], "flow");
    check_shift();
    char path[] = "/tmp/test_step_fast.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) { perror("mkstemp"); return 2; }
    close(fd);
    icache = aligned_alloc(1u << ICACHE_SHIFT, ICACHE_SLOTS * sizeof *icache);
    pages = calloc(NCODES, 4096);
    tails = calloc(NCODES, 16);
    want = calloc(n + 16, sizeof *want);
    for (unsigned i = 0; i < ICACHE_SLOTS; i++) {
        memset(&icache[i], 0, sizeof icache[i]);
        icache[i].rip = ~0ull;
        icache[i].slot = (uint16_t)(i / ICACHE_WAYS);
    }
    /* Runs of code at kernel and user addresses; write sets of every shape the decoder
     * gives (none, one register, one and RFLAGS, several, all). */
    hvt_trace_file_hdr fh;
    memset(&fh, 0, sizeof fh);
    fh.ncpus = 1;
    w = tcw_create(path, &fh, 1);
    uint8_t dict[NCODES * 17];
    size_t dlen = 0;
    uint64_t at = 0xffffffff81000000ull;
    for (unsigned c = 0; c < NCODES; c++) {
        struct code *k = &codes[c];
        if (c % 64 == 0) at = (c % 128 ? 0x400000ull : 0xffffffff81000000ull) + (rnd() % 0x100000) * 16;
        k->rip = at;
        k->len = (uint8_t)(1 + rnd() % 15);
        at += k->len;
        /* The second quarter shadows the first 64 MiB away: each pair shares a cache set (both
         * ways in use). The second half shadows the first 16 MiB away: each pair shares a
         * predictor slot in different sets (icache_set differs in bit 12 only). */
        if (c >= NCODES / 4 && c < NCODES / 2) {
            k->rip = codes[c - NCODES / 4].rip ^ (1ull << 26);
            k->len = codes[c - NCODES / 4].len;
        }
        if (c >= NCODES / 2) {
            k->rip = codes[c - NCODES / 2].rip ^ (1ull << 24);
            k->len = codes[c - NCODES / 2].len;
        }
        k->id = c;
        k->flags = rnd() % 50 == 0 ? P_SYSCALL : rnd() % 50 == 0 ? P_IRET : rnd() % 50 == 0 ? P_CTX
                 : rnd() % 8 == 0 ? P_REP : 0;
        for (int b = 0; b < 16; b++) k->bytes[b] = (uint8_t)rnd();
        memcpy(pages + (size_t)c * 4096, k->bytes, 16);
        if (k->len >= 2 && rnd() % 8 == 0) {                 /* across its page's end */
            unsigned lo = k->len > 9 ? k->len - 8u : 1u;
            k->cross = (uint8_t)(lo + rnd() % (k->len - lo));
            for (unsigned b = 0; b < 16; b++) tails[(size_t)c * 16 + b] = (uint8_t)rnd();
            for (unsigned b = 0; b < k->len; b++) *code_byte(c, b) = k->bytes[b];
        }
        unsigned shape = (unsigned)(rnd() % 6), r = (unsigned)(rnd() % 16);
        k->cand = shape == 0 ? 0 : shape == 1 ? 1u << r : shape == 2 ? (1u << r) | 1u << HVT_REG_RFLAGS
                : shape == 3 ? 1u << HVT_REG_RFLAGS : shape == 4 ? (uint32_t)(rnd() & CAND_ALL) : CAND_ALL;
        dict[dlen++] = k->len;
        memcpy(dict + dlen, k->bytes, k->len);
        dlen += k->len;
    }
    hvt_trace_chunk_hdr ch;
    memset(&ch, 0, sizeof ch);
    ch.kind = HVT_CHUNK_CODE;
    ch.nrecords = NCODES;
    if (tcw_chunk(w, &ch, dict, dlen)) { fprintf(stderr, "%s\n", tcw_error(w)); return 2; }

    f.icache = icache;
    f.enc = &f.enc_store;
    f.self = &f;
    /* The fast path's context base (GS in this build, the hypervisor's FS). */
    if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)&f)) { perror("arch_prctl"); return 2; }
    f.len_limit = CAP - REC_MAX_BYTES;
    f.cr3 = CR3;
    f.task_slot = &task_word;
    f.task_last = task_word;
    f.fgen_user = FGEN_KERNEL + 1;
    f.fill = test_fill;
    if (flow) {
        rec_set_mode(&f.enc_store, HVT_MODE_FLOW, 0);
        rec_set_mode(&e2, HVT_MODE_FLOW, 0);
        rec_begin(&e2, buf2, sizeof buf2, tsc);
    }
    rec_begin(&f.enc_store, f.chunk_store, CAP, tsc);
    uint64_t regs[HVT_NREGS];
    for (int i = 0; i < HVT_NREGS; i++) regs[i] = rnd();
    unsigned cur = 0;
    f.p_ic = fill(cur, FGEN_KERNEL);
    uint64_t rep_delta[HVT_NREGS] = { 0 };
    const struct icache_entry *rep_of = NULL;
    uint64_t rep_rip = 0;
    uint32_t rep_cand = 0;
    size_t fast = 0, fast_folded = 0, fast_cross = 0, fast_filled = 0, misses_made = 0, declined[FD_COUNT] = { 0 };
    /* The fast path's state, the encoder's included: everything but the chunk (bytes past its
     * length are free), as it was before the step (fb) and after a decline (fa). */
    const size_t f_state = offsetof(struct step_fast, chunk_store);
    static struct step_fast fa, fb;
    for (size_t s = 0; s < n; s++) {
        /* The pending instruction runs: registers of its write set change (checkregs steps
         * sometimes change one outside it). */
        const struct icache_entry *p = f.p_ic;
        struct want x = { .rip = p->rip, .id = p->id, .len = p->len, .cr3 = f.cr3 };
        bool check_variant = !flow && rnd() % 4 == 0;
        if (p->flags & P_REP) {
            /* A REP string iteration: mostly the deltas of its last one. */
            /* (an entry refilled with other code since is another instruction) */
            if (rep_of != p || rep_rip != p->rip || rep_cand != p->cand || rnd() % 8 == 0) {
                memset(rep_delta, 0, sizeof rep_delta);
                for (unsigned k = (unsigned)(rnd() % 4); k; k--) {
                    unsigned r = (unsigned)(rnd() % HVT_NREGS);
                    if (p->cand >> r & 1) rep_delta[r] = change(regs[r]) - regs[r];
                }
                rep_of = p;
                rep_rip = p->rip;
                rep_cand = p->cand;
            }
            for (unsigned r = 0; r < HVT_NREGS; r++) regs[r] += rep_delta[r];
        } else
        for (unsigned k = (unsigned)(rnd() % 3); k; k--) {
            unsigned r = (unsigned)(rnd() % HVT_NREGS);
            if (p->cand >> r & 1) regs[r] = change(regs[r]);
        }
        uint32_t outside = 0;
        if (check_variant && rnd() % 8 == 0) {
            unsigned r = (unsigned)(rnd() % HVT_NREGS);
            if (!(p->cand >> r & 1)) { regs[r] = change(regs[r]); outside = 1u << r; }
        }
        /* The next instruction: the fall-through or a jump; sometimes a new id at the same
         * address (different code), sometimes not in the cache at all. */
        unsigned next = (flow && rnd() % 8 == 0) || (codes[cur].flags & P_REP && rnd() % 4) ? cur
                      : rnd() % 5 ? (cur + 1) % NCODES : (unsigned)(rnd() % NCODES);
        uint32_t fgen = codes[next].rip >> 63 ? FGEN_KERNEL : f.fgen_user;
        struct icache_entry *ic = icache_find(icache, codes[next].rip);
        /* (Filled by an earlier full step: never in the pending's own set, whose entries a
         * fill moves, and a full step records the pending before it fills anything.) */
        bool p_set = icache_set(p->rip) == icache_set(codes[next].rip);
        /* Half the misses are the fast path's to fill (f.fill), now and then with
         * an entry it must then leave to the full step. */
        fill_next = ~0u;
        filled = NULL;
        if (!ic && !p_set && rnd() % 2) {
            fill_next = next;
            fill_fgen = rnd() % 8 ? fgen : 0;
        } else if (!p_set && (!ic || rnd() % 200 == 0)) {
            if (rnd() % 3 == 0)                               /* other code here: an id of that length */
                for (unsigned t = 0, o = (unsigned)(rnd() % NCODES); t < NCODES; t++)
                    if (codes[(o + t) % NCODES].len == codes[next].len) {
                        codes[next].id = (o + t) % NCODES;
                        break;
                    }
            ic = fill(next, rnd() % 2 ? fgen : 0);            /* 0: the full step must see it first */
        }
        /* Conditions the fast path must decline on, now and then. */
        test_vmcs[TV_CR3] = f.cr3;
        test_vmcs[TV_IDTR] = IDT;
        test_vmcs[TV_RIP] = codes[next].rip;
        test_vmcs[TV_RSP] = regs[HVT_REG_RSP];
        test_vmcs[TV_RFLAGS] = regs[HVT_REG_RFLAGS];
        unsigned provoke = rnd() % 64;
        /* CR3, IDTR and the current task change only in kernel code: not after a pending
         * instruction of the process's user code, which the fast path relies on. */
        if (provoke <= 2 && p->fgen == f.fgen_user)
            provoke = 63;
        /* ... and CR3 or IDTR only after MOV to CR3 or LIDT (P_CTX), whose retirement is the
         * full step's (the fast path does not read them). */
        if (provoke <= 1 && !(p->flags & P_CTX))
            provoke = 63;
        uint8_t *hb = code_byte(next, (unsigned)(rnd() % codes[next].len));
        if (provoke == 0) test_vmcs[TV_CR3] ^= 0x1000;
        if (provoke == 1) test_vmcs[TV_IDTR] += 16;
        if (provoke == 2) task_word += 0x100;
        if (provoke == 3) *hb ^= 0x40;                       /* the code changed */
        /* The process changed: a user entry's generation is stale - a cached one's, or the one
         * a fill gives it (fill_fgen, taken before). Kernel entries keep theirs. */
        bool kernel_entry = ic ? (ic->fgen & ~FGEN_FLAGS) == FGEN_KERNEL
                          : fill_next != ~0u && codes[next].rip >> 63;
        bool gen_bumped = provoke == 4 && (ic || fill_next != ~0u) && !kernel_entry;
        if (gen_bumped) f.fgen_user++;
        if (provoke == 5) test_vmcs[TV_RIP] ^= 0x10000;      /* not in the cache */
        uint64_t g[16];
        memcpy(g, regs, sizeof g);
        g[HVT_REG_RSP] = 0xdead;                             /* the VMCS's, not this slot */
        uint64_t g_in[16];
        memcpy(g_in, g, sizeof g);
        memcpy(&fb, &f, f_state);
        uint64_t misses0 = f.wregs_misses;
        int rc = fast_run(g, flow ? (void *)step_fast_entry_flow
                                 : check_variant ? (void *)step_fast_entry_check : (void *)step_fast_entry);
        check(!(rc & HARNESS_BAD_STACK), "stack not as the stub left it", s);
        check(!memcmp(g, g_in, sizeof g), "a guest register was not preserved", s);
        if (!ic && filled)
            ic = filled;                                      /* the fast path's fill */
        bool missed = !ic;
        if (rc & 1) {
            fast++;
            fast_folded += !flow && f.enc_store.nrecords == fb.enc_store.nrecords;   /* a REPEAT count, no record */
            fast_cross += (ic->fgen & FGEN_CROSS) != 0;
            fast_filled += filled != NULL;
            check(provoke > 5 || (provoke == 4 && kernel_entry), "took a step it had to decline", s);
            check(f.p_ic == ic, "the next instruction did not become pending", s);
            if (ic->flags & P_PENDING)
                check(f.left == 1, "a SYSCALL/IRET pending does not leave its retirement to the full step", s);
            if (check_variant)
                check((f.wregs_misses > misses0) == (outside != 0), "checkregs miss count", s);
        } else {
            /* Nothing changed but the decline counter (and a 'left' that ran out). */
            memcpy(&fa, &f, f_state);
            for (int d = 0; d < FD_COUNT; d++) {
                declined[d] += fa.declines[d] - fb.declines[d];
                fa.declines[d] = fb.declines[d];
            }
            fa.left = fb.left;
            check(!memcmp(&f.enc_store, &fb.enc_store, sizeof f.enc_store), "a declined step changed the encoder", s);
            check(!memcmp(&fa, &fb, f_state), "a declined step changed the fast path's state", s);
        }
        if (rc & 1)
            shadow_record(&x, regs, s);
        if (provoke == 2) task_word -= 0x100;
        if (provoke == 3) *hb ^= 0x40;
        if (gen_bumped) f.fgen_user--;
        if (!(rc & 1)) {
            /* The full step: record the pending, make RIP pending, prepare the next. */
            full_record(p, regs);
            shadow_record(&x, regs, s);
            if (rnd() % 4 == 0)                               /* RIP's CR3 differs (PCID, PTI half) */
                f.cr3 = CR3 ^ (rnd() % 2 ? 0x1000 : rnd() % 4096);
            if (missed || test_vmcs[TV_RIP] != codes[next].rip)
                ic = fill(next, fgen);
            else
                ic->fgen = fgen_of(ic, next, fgen);              /* step.c icache_hptr */
            f.p_ic = ic;
        }
        misses_made += outside && (rc & 1);
        memcpy(x.regs, regs, sizeof regs);
        want[nwant++] = x;
        cur = next;
        /* step.c fast_prepare: the full step's turn now and then, and never right after a
         * chunk began (its first record compares every register) or while the encoder's CR3
         * is not the pending's (that record carries the new one). */
        f.left = f.enc_store.cand_all || (ic->flags & P_PENDING) || f.enc_store.cr3 != f.cr3 ? 0 : 1 + (uint32_t)(rnd() % 50);
    }
    flush_chunk();
    if (tcw_finish(w, &fh) || tcw_close(w)) { fprintf(stderr, "write failed\n"); return 2; }

    tr_reader *r = tr_open(path);
    if (!r) { fprintf(stderr, "step_fast: reader refused the file\n"); return 1; }
    tr_rec rec;
    size_t k = 0;
    int rc;
    while ((rc = tr_next(r, &rec)) == 1) {
        if (rec.kind != TR_INSN) continue;
        if (k >= nwant) { check(0, "more records than steps", k); break; }
        const struct want *x = &want[k++];
        int ok = rec.rip == x->rip && rec.code_id == x->id && rec.code_len == x->len && rec.cr3 == x->cr3 &&
                 (flow || !memcmp(rec.regs, x->regs, sizeof x->regs));
        if (!ok && fail < 10)
            fprintf(stderr, "step_fast: record %zu: rip %#" PRIx64 "/%#" PRIx64 " id %u/%u\n", k - 1,
                    rec.rip, x->rip, rec.code_id, x->id);
        check(ok, "record differs from the step", k - 1);
    }
    check(rc == 0 && k == nwant, "read back fewer records than stepped", k);
    /* FULL: REP string iterations became REPEAT counts (each chunk's instructions outnumber
     * its records by them, less their markers). */
    check(flow || (folded > 0 && fast_folded > 0), "no REP string iteration became a REPEAT count", 0);
    check(fast_cross > 0, "no instruction across a page's end took the fast path", 0);
    check(fast_filled > 0, "no miss was filled by the fast path", 0);
    tr_close(r);
    unlink(path);
    printf("step_fast: %zu steps, %zu fast, declined: left %zu task %zu miss %zu gen %zu "
           "bytes %zu room %zu; %zu write-set misses made, %" PRIu64 " counted; %" PRId64 " instructions folded, %zu by the fast path; %zu fast steps across a page's end, %zu filled\n", n, fast,
           declined[FD_LEFT], declined[FD_TASK], declined[FD_MISS],
           declined[FD_GEN], declined[FD_BYTES], declined[FD_ROOM], misses_made, f.wregs_misses, folded, fast_folded, fast_cross, fast_filled);
    check_passed += (long)pass;
    check_failed += (long)fail;
    return check_summary("step_fast");
}
