/* unit_stacks: the stack unwinders and flame graphs of host-tools/stacks/.
 *  1. ORC on real kernel images (paths as arguments, or HVT_STACKS_KERNELS, colon-separated;
 *     none: SKIP): the table loads by section headers and by kallsyms alike, is large and
 *     sorted; corrupt section headers fail cleanly; synthetic stacks laid out from the table's
 *     own entries for chains of real functions (SP- and BP-based frames, saved rbp, a kernel
 *     pt_regs, an iret frame, a user pt_regs, end of stack) unwind to exactly that chain;
 *     truncated copies end cleanly; garbage never crashes or loops.
 *  2. ORC rules on hand-made tables (no kernel needed): both entry layouts, sorting,
 *     SP_INDIRECT/BP_INDIRECT/R10 bases, no-entry fallback, loops; fp_unwind.
 *  3. flame: folded output, reading folded input back (and rejecting bad lines), the SVG. */
#include "flame.h"
#include "orc.h"
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"


/* ---------------- 1. ORC on a real kernel ---------------- */

enum { STK = 16384, MAXF = 32 };
static const uint64_t STACK_BASE = 0xffffc90000abc000ull, SLIDE = 0x2a00000ull; /* KASLR: 2 MiB steps */
static const uint64_t USER_RIP = 0x401136, USER_RSP = 0x7ffc12345678, USER_RBP = 0x7ffc123456a0;
enum { KERNEL_CS = 0x10, USER_CS = 0x33, PLACEHOLDER_BP = 0 };

/* What a chain element's ORC entry must be. */
enum { W_SP, W_SP8, W_SP_BP, W_BP, W_REGS_K, W_REGS_U, W_PARTIAL, W_END };
typedef struct {
    const char *func;
    int want;
} chain_link;

static int matches(const orc_entry *e, int want)
{
    int call = e->type == ORC_TYPE_CALL && !e->signal;
    switch (want) {
    case W_SP:
        return call && e->sp_reg == ORC_REG_SP && e->sp_offset >= 16 && e->sp_offset <= 0x400 &&
               (e->bp_reg == ORC_REG_UNDEFINED || e->bp_reg == ORC_REG_PREV_SP);
    case W_SP8: /* nothing pushed: the return address on top */
        return call && e->sp_reg == ORC_REG_SP && e->sp_offset == 8 && e->bp_reg == ORC_REG_UNDEFINED;
    case W_SP_BP: /* also saves the caller's rbp */
        return call && e->sp_reg == ORC_REG_SP && e->sp_offset >= 16 && e->sp_offset <= 0x400 &&
               e->bp_reg == ORC_REG_PREV_SP;
    case W_BP: return call && e->sp_reg == ORC_REG_BP && e->sp_offset > 0 && e->bp_reg == ORC_REG_PREV_SP;
    case W_REGS_K:
    case W_REGS_U:
        return e->type == ORC_TYPE_REGS && e->sp_reg == ORC_REG_SP && e->sp_offset >= 0 && e->bp_reg == ORC_REG_UNDEFINED;
    case W_PARTIAL:
        return e->type == ORC_TYPE_REGS_PARTIAL && e->sp_reg == ORC_REG_SP && e->sp_offset >= 0 &&
               e->bp_reg == ORC_REG_UNDEFINED;
    case W_END: return e->type == ORC_TYPE_END_OF_STACK;
    }
    return 0;
}

/* The first row of `func` (or of its sub-labels, e.g. entry_SYSCALL_64_after_hwframe) whose
 * entry is `want` and is the one lookups find at that address. */
static const orc_row *pick(const orc_table *t, const ksym_table *s, const char *func, int want)
{
    int64_t si = ksym_find(s, func);
    if (si < 0) return NULL;
    uint64_t a = s->syms[si].addr;
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->rows[mid].ip < a) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = lo; i < t->count; i++) {
        const orc_row *r = &t->rows[i];
        uint64_t off;
        int64_t in = ksym_lookup(s, r->ip, &off);
        if (in < 0 || (s->syms[in].addr != a && strncmp(ksym_name(s, in), func, strlen(func)) != 0)) break;
        if (orc_find(t, r->ip) == &r->e && matches(&r->e, want)) return r;
    }
    return NULL;
}

typedef struct {
    uint8_t mem[STK], used[STK];
    uint64_t sp, bp, init_bp;
    int64_t bp_slot; /* offset of the word holding the current bp; -1: the initial register */
    int bp_fixed;    /* the current bp value is relied on by a frame already laid out */
    int last_full;   /* the last frame crossed was a full pt_regs */
    uint64_t pcs[MAXF];
    uint64_t exact;
    int n, stop;
    size_t read_off[MAXF]; /* per frame: lowest offset the unwinder must read to step from it */
} stack_layout;

static int put(stack_layout *L, uint64_t addr, uint64_t v, int force)
{
    if (addr < STACK_BASE || addr - STACK_BASE > STK - 8) return -1;
    size_t o = addr - STACK_BASE;
    for (int i = 0; i < 8; i++)
        if (L->used[o + i] && !force) return -1;
    for (int i = 0; i < 8; i++) L->mem[o + i] = (uint8_t)(v >> 8 * i), L->used[o + i] = 1;
    return 0;
}

/* A frame needs bp == v: patch wherever the current bp value comes from. */
static int set_bp(stack_layout *L, uint64_t v)
{
    if (L->bp_fixed && L->bp != v) return -1;
    if (L->bp_slot < 0) L->init_bp = v;
    else put(L, STACK_BASE + (uint64_t)L->bp_slot, v, 1);
    L->bp = v;
    L->bp_fixed = 1;
    return 0;
}

static void new_bp_slot(stack_layout *L, uint64_t addr, uint64_t v)
{
    L->bp_slot = (int64_t)(addr - STACK_BASE);
    L->bp = v;
    L->bp_fixed = 0;
}

/* Lay out the stack that the chain's entries describe, leaf first: the return address (or
 * pt_regs / iret frame) where each entry puts the caller's ip, saved rbp where it says. */
static int build(stack_layout *L, const orc_table *t, const ksym_table *s, const chain_link *ch, int nch, const char **why)
{
    memset(L, 0, sizeof *L);
    L->sp = STACK_BASE;
    L->bp_slot = -1;
    const orc_row *rows[MAXF];
    for (int i = 0; i < nch; i++)
        if (!(rows[i] = pick(t, s, ch[i].func, ch[i].want))) return *why = ch[i].func, -1;
    *why = "layout conflict";
    L->pcs[L->n++] = rows[0]->ip + SLIDE; /* the sampled rip: exact */
    L->exact = 1;
    for (int i = 0; i < nch; i++) {
        const orc_entry *e = &rows[i]->e;
        if (ch[i].want == W_END) {
            L->stop = ORC_STOP_END;
            return 0;
        }
        if (i + 1 == nch && ch[i].want != W_REGS_U) return -1;
        /* the caller's ip: exact after an interrupt frame, else a return address */
        uint64_t next_pc = i + 1 < nch ? rows[i + 1]->ip + (e->signal ? 0 : 1) + SLIDE : 0, cfa;
        if (e->sp_reg == ORC_REG_SP) cfa = L->sp + (uint64_t)(int64_t)e->sp_offset;
        else { /* BP-based: give the frame 0x40 bytes and point bp where the entry wants */
            cfa = L->sp + 0x40;
            if (cfa - (uint64_t)(int64_t)e->sp_offset < L->sp || set_bp(L, cfa - (uint64_t)(int64_t)e->sp_offset) < 0)
                return -1;
        }
        if (e->type == ORC_TYPE_CALL) {
            if (put(L, cfa - 8, next_pc, 0) < 0) return -1;
            L->read_off[i] = cfa - 8 - STACK_BASE;
            if (e->bp_reg == ORC_REG_PREV_SP) {
                uint64_t slot = cfa + (uint64_t)(int64_t)e->bp_offset;
                if (put(L, slot, PLACEHOLDER_BP, 0) < 0) return -1;
                new_bp_slot(L, slot, PLACEHOLDER_BP);
            }
            L->sp = cfa;
            L->last_full = 0;
        } else if (e->type == ORC_TYPE_REGS) {
            int user = ch[i].want == W_REGS_U;
            uint64_t next_sp = user ? USER_RSP : cfa + ORC_PT_REGS_WORDS * 8 + 0x40;
            if (put(L, cfa + ORC_PT_IP, user ? USER_RIP : next_pc, 0) < 0 ||
                put(L, cfa + ORC_PT_CS, user ? USER_CS : KERNEL_CS, 0) < 0 || put(L, cfa + ORC_PT_SP, next_sp, 0) < 0 ||
                put(L, cfa + ORC_PT_BP, user ? USER_RBP : PLACEHOLDER_BP, 0) < 0)
                return -1;
            L->read_off[i] = cfa - STACK_BASE;
            if (user) {
                L->stop = ORC_STOP_USER;
                return 0;
            }
            new_bp_slot(L, cfa + ORC_PT_BP, PLACEHOLDER_BP); /* bp_reg UNDEFINED: regs->bp */
            L->sp = next_sp;
            L->last_full = 1;
        } else { /* REGS_PARTIAL: an iret frame */
            if (L->last_full) return -1; /* bp would come from the earlier pt_regs: not modelled */
            uint64_t next_sp = cfa + ORC_IRET_FRAME_SIZE + 0x40;
            if (put(L, cfa, next_pc, 0) < 0 || put(L, cfa + 8, KERNEL_CS, 0) < 0 || put(L, cfa + 24, next_sp, 0) < 0)
                return -1;
            L->read_off[i] = cfa - STACK_BASE;
            L->sp = next_sp;
        }
        if (L->n >= MAXF) return -1;
        if (e->signal) L->exact |= 1ull << L->n;
        L->pcs[L->n++] = next_pc;
    }
    return -1;
}

static void fmt_pcs(char *out, size_t len, const ksym_table *s, const uint64_t *pcs, int n)
{
    size_t l = 0;
    out[0] = 0;
    for (int i = 0; i < n && l + 80 < len; i++) {
        uint64_t off;
        int64_t si = ksym_lookup(s, pcs[i] - SLIDE, &off);
        l += (size_t)snprintf(out + l, len - l, " %s+0x%llx", si >= 0 ? ksym_name(s, si) : "?", (unsigned long long)off);
    }
}

static void run_chain(const char *rel, const orc_table *t, const ksym_table *s, const char *what, const chain_link *ch, int nch)
{
    static stack_layout L;
    const char *why;
    if (build(&L, t, s, ch, nch, &why) < 0) {
        CHECK(0, "%s: %s: cannot lay out the chain (%s)", rel, what, why);
        return;
    }
    uint64_t pcs[64];
    orc_status st;
    struct orc_regs r = {L.pcs[0], STACK_BASE, L.init_bp, NULL};
    int n = orc_unwind(t, SLIDE, &r, STACK_BASE, L.mem, STK, pcs, 64, &st);
    char want[2048], got[2048];
    fmt_pcs(want, sizeof want, s, L.pcs, L.n);
    fmt_pcs(got, sizeof got, s, pcs, n);
    int same = n == L.n && memcmp(pcs, L.pcs, (size_t)n * 8) == 0;
    CHECK(same && st.stop == L.stop && st.exact_mask == L.exact && !st.guessed,
          "%s: %s: want%s (stop %s, exact %llx)\n  got%s (stop %s, exact %llx)", rel, what, want, orc_stop_name(L.stop),
          (unsigned long long)L.exact, got, orc_stop_name(st.stop), (unsigned long long)st.exact_mask);
    if (L.stop == ORC_STOP_USER)
        CHECK(st.user_rip == USER_RIP && st.user_rsp == USER_RSP && st.user_rbp == USER_RBP,
              "%s: %s: user regs %llx %llx %llx", rel, what, (unsigned long long)st.user_rip,
              (unsigned long long)st.user_rsp, (unsigned long long)st.user_rbp);
    printf("  %s: %d frames:%s (%s)\n", what, n, got, orc_stop_name(st.stop));

    /* The copy cut just below what the step from frame k reads: k + 1 pcs, then "read". */
    for (int k = 0; k + 1 < L.n; k++) {
        n = orc_unwind(t, SLIDE, &r, STACK_BASE, L.mem, L.read_off[k], pcs, 64, &st);
        CHECK(n == k + 1 && memcmp(pcs, L.pcs, (size_t)n * 8) == 0 && st.stop == ORC_STOP_READ,
              "%s: %s: copy cut at 0x%zx: %d pcs, stop %s (want %d, read)", rel, what, L.read_off[k], n,
              orc_stop_name(st.stop), k + 1);
    }
    /* A full pcs array. */
    if (L.n > 2) {
        n = orc_unwind(t, SLIDE, &r, STACK_BASE, L.mem, STK, pcs, 2, &st);
        CHECK(n == 2 && memcmp(pcs, L.pcs, 16) == 0 && st.stop == ORC_STOP_MAX, "%s: %s: max 2: %d, %s", rel, what, n,
              orc_stop_name(st.stop));
    }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void garbage(const char *rel, const orc_table *t)
{
    static uint8_t mem[4096];
    uint64_t pcs[64], regs[ORC_PT_REGS_WORDS];
    int bad = 0, deep = 0;
    long frames = 0;
    rng_state = 0x9e3779b97f4a7c15ull; /* the same stacks for every kernel and run */
    for (int it = 0; it < 20000; it++) {
        for (size_t i = 0; i < sizeof mem; i += 8) {
            uint64_t v, k = rnd() % 4;
            if (k == 0) v = t->rows[rnd() % t->count].ip + SLIDE + rnd() % 8; /* text */
            else if (k == 1) v = STACK_BASE + rnd() % (sizeof mem + 64);      /* this stack */
            else if (k == 2) v = rnd() % 512;
            else v = rnd();
            memcpy(mem + i, &v, 8);
        }
        for (int i = 0; i < ORC_PT_REGS_WORDS; i++) regs[i] = STACK_BASE + rnd() % sizeof mem;
        regs[ORC_PT_CS / 8] = rnd() & 1 ? KERNEL_CS : USER_CS;
        struct orc_regs r = {t->rows[rnd() % t->count].ip + SLIDE, STACK_BASE + rnd() % 256,
                             STACK_BASE + rnd() % sizeof mem, rnd() & 1 ? regs : NULL};
        orc_status st;
        int max = it % 7 == 0 ? 64 : 1 + (int)(rnd() % 64);
        int n = orc_unwind(t, SLIDE, &r, STACK_BASE, mem, sizeof mem, pcs, max, &st);
        if (n < 0 || n > max || (n == 0 && st.stop != ORC_STOP_USER)) bad++;
        if (n == max) deep++;
        frames += n;
        /* the same with random bases (copy elsewhere) and a random rip */
        r.rip = rnd(), r.rsp = rnd(), r.rbp = rnd();
        n = orc_unwind(t, rnd(), &r, STACK_BASE, mem, sizeof mem, pcs, 64, &st);
        if (n < 0 || n > 64) bad++;
    }
    CHECK(!bad, "%s: garbage stacks: %d bad results", rel, bad);
    printf("  garbage: 40000 random unwinds ended (%ld frames, %d hit max)\n", frames, deep);
}

/* A copy of the image with one section header field changed. */
static int elf_section_index(const util_buf *e, const char *name)
{
    Elf64_Ehdr eh;
    memcpy(&eh, e->data, sizeof eh);
    Elf64_Shdr str;
    memcpy(&str, e->data + eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof str, sizeof str);
    for (int i = 0; i < eh.e_shnum; i++) {
        Elf64_Shdr sh;
        memcpy(&sh, e->data + eh.e_shoff + (uint64_t)i * sizeof sh, sizeof sh);
        if (strcmp((const char *)e->data + str.sh_offset + sh.sh_name, name) == 0) return i;
    }
    return -1;
}

static void corrupt_check(const char *rel, const kimg *k, const char *sec, size_t field, uint64_t value,
                          const char *want_msg)
{
    kimg c = *k;
    c.elf.data = malloc(k->elf.len);
    memcpy(c.elf.data, k->elf.data, k->elf.len);
    Elf64_Ehdr eh;
    memcpy(&eh, c.elf.data, sizeof eh);
    if (sec) {
        int i = elf_section_index(&k->elf, sec);
        memcpy(c.elf.data + eh.e_shoff + (uint64_t)i * sizeof(Elf64_Shdr) + field, &value, 8);
    } else {
        memcpy(c.elf.data + field, &value, 2);
    }
    orc_table t;
    char err[256] = "";
    int rc = orc_load(&c, &t, err, sizeof err);
    CHECK(rc == -1 && strstr(err, want_msg), "%s: corrupt %s: rc %d, err \"%s\" (want \"%s\")", rel, sec ? sec : "ELF header",
          rc, err, want_msg);
    if (rc == 0) orc_free(&t);
    free(c.elf.data);
}

static void test_kernel(const char *path)
{
    const char *rel = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    kimg k;
    ksym_table s;
    orc_table t;
    char err[256];
    memset(&k, 0, sizeof k);
    memset(&s, 0, sizeof s);
    if (kimg_load(&k, path) < 0 || ksym_extract(&k, &s) < 0) {
        CHECK(0, "%s: cannot load the image or its symbols", rel);
        kimg_free(&k);
        return;
    }
    int rc = orc_load(&k, &t, err, sizeof err);
    CHECK(rc == 0, "%s: orc_load: %s", rel, err);
    if (rc) {
        ksym_free(&s);
        kimg_free(&k);
        return;
    }
    size_t unsorted = 0;
    for (size_t i = 1; i < t.count; i++) unsorted += t.rows[i - 1].ip > t.rows[i].ip;
    printf("== %s: %zu ORC entries, layout V%d, %s, %d text ranges, %zu bad types\n", rel, t.count, t.layout,
           t.was_sorted ? "sorted in the image" : "sorted on load", t.nranges, t.bad_types);
    CHECK(t.count > 100000 && unsorted == 0 && t.from_sections && t.bad_types == 0, "%s: %zu entries, %zu unsorted", rel,
          t.count, unsorted);
    CHECK(t.layout == ORC_LAYOUT_V1, "%s: a 6.1 kernel decoded as layout V%d", rel, t.layout);
    /* entry_SYSCALL_64 starts with two rows at one address (objtool's UNDEFINED terminator and
     * the end-of-stack hint): the lookup must find the hint. */
    int64_t es = ksym_find(&s, "entry_SYSCALL_64");
    const orc_entry *ee = es >= 0 ? orc_find(&t, s.syms[es].addr) : NULL;
    CHECK(ee && ee->type == ORC_TYPE_END_OF_STACK, "%s: entry_SYSCALL_64 is not end of stack", rel);
    CHECK(!orc_find(&t, 0xffffffff80000000ull) && !orc_find(&t, 0), "%s: lookups outside text must miss", rel);

    /* the kallsyms fallback (no section headers) finds the same table */
    kimg c = k;
    c.elf.data = malloc(k.elf.len);
    memcpy(c.elf.data, k.elf.data, k.elf.len);
    memset(c.elf.data + offsetof(Elf64_Ehdr, e_shnum), 0, 2);
    orc_table t2;
    rc = orc_load(&c, &t2, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "no section headers"), "%s: no sections, no symbols: rc %d (%s)", rel, rc, err);
    if (!rc) orc_free(&t2);
    rc = orc_load_ex(&c, &s, ORC_LAYOUT_AUTO, &t2, err, sizeof err);
    CHECK(rc == 0 && !t2.from_sections && t2.count == t.count && t2.layout == t.layout &&
              memcmp(t2.rows, t.rows, t.count * sizeof *t.rows) == 0 && t2.nranges == 2,
          "%s: kallsyms fallback: rc %d (%s)", rel, rc, rc ? err : "different table");
    if (!rc) orc_free(&t2);
    free(c.elf.data);
    Elf64_Ehdr eh;
    Elf64_Shdr ou;
    memcpy(&eh, k.elf.data, sizeof eh);
    memcpy(&ou, k.elf.data + eh.e_shoff + (uint64_t)elf_section_index(&k.elf, ".orc_unwind") * sizeof ou, sizeof ou);
    corrupt_check(rel, &k, ".orc_unwind", offsetof(Elf64_Shdr, sh_size), ou.sh_size - ORC_RAW_ENTRY, "entries but the entry table");
    corrupt_check(rel, &k, ".orc_unwind_ip", offsetof(Elf64_Shdr, sh_size), 3, "odd sizes");
    corrupt_check(rel, &k, ".orc_unwind", offsetof(Elf64_Shdr, sh_offset), k.elf.len - 16, "runs past the end");
    corrupt_check(rel, &k, ".orc_unwind_ip", offsetof(Elf64_Shdr, sh_size), ~0ull - 3, "runs past the end");
    corrupt_check(rel, &k, NULL, offsetof(Elf64_Ehdr, e_shstrndx), 0xffff, "bad section name table");

    /* A kernel thread: worker -> kthread -> ret_from_fork (end of stack); SP-based frames,
     * some saving the caller's rbp. */
    static const chain_link kthread[] = {
        {"process_one_work", W_SP_BP}, {"worker_thread", W_SP}, {"kthread", W_SP_BP}, {"ret_from_fork", W_END}};
    run_chain(rel, &t, &s, "kthread (SP-based, end of stack)", kthread, 4);
    /* read(2): do_syscall_64 keeps a frame pointer (the random kstack offset alloca): a
     * BP-based frame; entry_SYSCALL_64's pt_regs holds user CS: the unwind stops there. */
    static const chain_link sys_read[] = {{"vfs_read", W_SP_BP}, {"ksys_read", W_SP}, {"do_syscall_64", W_BP},
                                          {"entry_SYSCALL_64", W_REGS_U}};
    run_chain(rel, &t, &s, "read syscall (BP-based, user pt_regs)", sys_read, 4);
    /* An interrupt in the idle loop: the IRQ entry's pt_regs (kernel CS) leads to the exact
     * interrupted ip, then the idle task's callers up to the startup code. */
    static const chain_link irq[] = {{"handle_irq_event", W_SP_BP}, {"asm_common_interrupt", W_REGS_K},
                                     {"default_idle", W_SP8},          {"default_idle_call", W_SP8},
                                     {"do_idle", W_SP_BP},          {"cpu_startup_entry", W_SP},
                                     {"start_secondary", W_SP},     {"secondary_startup_64", W_END}};
    run_chain(rel, &t, &s, "interrupt in idle (kernel pt_regs)", irq, 8);
    /* A page fault sampled at its first instruction (an iret frame plus the error code) inside
     * a user copy in openat(2). */
    static const chain_link pf[] = {{"asm_exc_page_fault", W_PARTIAL}, {"strncpy_from_user", W_SP},
                                    {"getname_flags", W_SP_BP},        {"do_sys_openat2", W_SP_BP},
                                    {"__x64_sys_openat", W_SP},        {"do_syscall_64", W_BP},
                                    {"entry_SYSCALL_64", W_REGS_U}};
    run_chain(rel, &t, &s, "page fault entry (iret frame)", pf, 7);

    /* a sample taken in user mode: nothing to unwind */
    uint64_t regs[ORC_PT_REGS_WORDS] = {0}, pcs[8];
    regs[ORC_PT_CS / 8] = USER_CS;
    struct orc_regs ur = {USER_RIP, USER_RSP, USER_RBP, regs};
    orc_status st;
    int n = orc_unwind(&t, SLIDE, &ur, USER_RSP, NULL, 0, pcs, 8, &st);
    CHECK(n == 0 && st.stop == ORC_STOP_USER && st.user_rip == USER_RIP, "%s: user-mode sample: %d, %s", rel, n,
          orc_stop_name(st.stop));
    garbage(rel, &t);
    orc_free(&t);
    ksym_free(&s);
    kimg_free(&k);
}

/* ---------------- 2. ORC rules on hand-made tables ---------------- */

/* One raw entry: bits 0-3 sp_reg, 4-7 bp_reg, then the layout's type/signal/end bits. */
static void raw_entry(uint8_t *p, int16_t spo, int16_t bpo, unsigned spr, unsigned bpr, unsigned hi_bits)
{
    unsigned bits = spr | bpr << 4 | hi_bits << 8;
    p[0] = (uint8_t)spo, p[1] = (uint8_t)((uint16_t)spo >> 8);
    p[2] = (uint8_t)bpo, p[3] = (uint8_t)((uint16_t)bpo >> 8);
    p[4] = (uint8_t)bits, p[5] = (uint8_t)(bits >> 8);
}

typedef struct {
    uint64_t ip;
    int16_t spo, bpo;
    unsigned spr, bpr, hi;
} raw_def;

static int make_table(orc_table *t, const raw_def *d, int n, int layout, char *err)
{
    static uint8_t ips[64 * 4], orcs[64 * 6];
    const uint64_t ip_addr = 0xffffffff82000000ull;
    for (int i = 0; i < n; i++) {
        int32_t rel = (int32_t)(d[i].ip - (ip_addr + 4 * (uint64_t)i));
        memcpy(ips + 4 * i, &rel, 4);
        raw_entry(orcs + 6 * i, d[i].spo, d[i].bpo, d[i].spr, d[i].bpr, d[i].hi);
    }
    return orc_table_from_raw(ips, 4 * (size_t)n, ip_addr, orcs, 6 * (size_t)n, layout, t, err, 200);
}

#define F(x) (0xffffffff81000000ull + (x))
static void test_raw(void)
{
    orc_table t;
    char err[200];
    /* V1 (<= 6.2): type:2 (CALL 0, REGS 1, REGS_PARTIAL 2), end:1 */
    const raw_def v1[] = {{F(0x100), 8, 0, ORC_REG_SP, 0, 0},     {F(0x110), 0, 0, ORC_REG_SP, 0, 1},
                          {F(0x120), 8, 0, ORC_REG_SP, 0, 2},     {F(0x130), 0, 0, ORC_REG_UNDEFINED, 0, 4},
                          {F(0x140), 0, 0, ORC_REG_UNDEFINED, 0, 0}, {F(0x150), 8, 0, ORC_REG_SP, 0, 3}};
    int rc = make_table(&t, v1, 6, ORC_LAYOUT_V1, err);
    CHECK(rc == 0, "v1 table: %s", err);
    if (!rc) {
        const orc_entry *a = orc_find(&t, F(0x100)), *b = orc_find(&t, F(0x115)), *c = orc_find(&t, F(0x120)),
                        *d = orc_find(&t, F(0x130)), *e = orc_find(&t, F(0x140));
        CHECK(a->type == ORC_TYPE_CALL && !a->signal && b->type == ORC_TYPE_REGS && b->signal &&
                  c->type == ORC_TYPE_REGS_PARTIAL && c->signal && d->type == ORC_TYPE_END_OF_STACK &&
                  e->type == ORC_TYPE_UNDEFINED && t.bad_types == 1 && t.was_sorted,
              "v1 decode: %d %d %d %d %d bad %zu", a->type, b->type, c->type, d->type, e->type, t.bad_types);
        CHECK(!orc_find(&t, F(0xff)) && orc_find(&t, F(0x150)) && !orc_find(&t, F(0x151)), "v1 range bounds");
        orc_free(&t);
    }
    /* V3 (6.4+): type:3 (UNDEFINED 0, END 1, CALL 2, REGS 3, REGS_PARTIAL 4), signal:1 */
    const raw_def v3[] = {{F(0x100), 8, 0, ORC_REG_SP, 0, 2},        {F(0x110), 0, 0, ORC_REG_SP, 0, 3 | 8},
                          {F(0x120), 8, 0, ORC_REG_SP, 0, 4 | 8},    {F(0x130), 0, 0, ORC_REG_UNDEFINED, 0, 1},
                          {F(0x140), 0, 0, ORC_REG_UNDEFINED, 0, 0}, {F(0x150), 8, 0, ORC_REG_SP, 0, 2 | 8},
                          {F(0x160), 8, 0, ORC_REG_SP, 0, 5}};
    rc = make_table(&t, v3, 7, ORC_LAYOUT_V3, err);
    CHECK(rc == 0, "v3 table: %s", err);
    if (!rc) {
        const orc_entry *a = orc_find(&t, F(0x100)), *b = orc_find(&t, F(0x110)), *c = orc_find(&t, F(0x120)),
                        *d = orc_find(&t, F(0x130)), *e = orc_find(&t, F(0x140)), *f = orc_find(&t, F(0x150));
        CHECK(a->type == ORC_TYPE_CALL && !a->signal && b->type == ORC_TYPE_REGS && b->signal &&
                  c->type == ORC_TYPE_REGS_PARTIAL && d->type == ORC_TYPE_END_OF_STACK && e->type == ORC_TYPE_UNDEFINED &&
                  f->type == ORC_TYPE_CALL && f->signal && t.bad_types == 1,
              "v3 decode");
        char buf[80];
        CHECK(strcmp(orc_entry_str(f, buf, sizeof buf), "sp:sp+8 bp:undef+0 type:call signal") == 0, "entry text: %s", buf);
        orc_free(&t);
    }
    /* Unsorted, with a duplicate address whose real entry comes first in the image: sorted on
     * load, the UNDEFINED terminator first, so the lookup finds the real one. */
    const raw_def uns[] = {{F(0x300), 8, 0, ORC_REG_SP, 0, 0},
                           {F(0x100), 0, 0, ORC_REG_UNDEFINED, 0, 4},
                           {F(0x100), 0, 0, ORC_REG_UNDEFINED, 0, 0},
                           {F(0x200), 16, 0, ORC_REG_SP, 0, 0}};
    rc = make_table(&t, uns, 4, ORC_LAYOUT_V1, err);
    CHECK(rc == 0 && !t.was_sorted && t.rows[0].ip == F(0x100) && t.rows[1].ip == F(0x100) &&
              t.rows[0].e.type == ORC_TYPE_UNDEFINED && orc_find(&t, F(0x100))->type == ORC_TYPE_END_OF_STACK &&
              t.rows[2].ip == F(0x200) && t.rows[3].ip == F(0x300),
          "unsorted table");
    if (!rc) orc_free(&t);
    /* bad raw tables */
    static const uint8_t z[64];
    CHECK(orc_table_from_raw(z, 8, 0, z, 6, ORC_LAYOUT_V1, &t, err, sizeof err) == -1 && strstr(err, "2 entries"),
          "mismatched counts: %s", err);
    CHECK(orc_table_from_raw(z, 6, 0, z, 6, ORC_LAYOUT_V1, &t, err, sizeof err) == -1 && strstr(err, "odd"), "odd: %s", err);
    CHECK(orc_table_from_raw(z, 0, 0, z, 0, ORC_LAYOUT_V1, &t, err, sizeof err) == -1 && strstr(err, "empty"), "empty");
    CHECK(orc_table_from_raw(z, 4, 0, z, 6, 9, &t, err, sizeof err) == -1 && strstr(err, "layout"), "layout");

    /* Unwinding rules, V1. Functions: A SP_INDIRECT (call_on_stack: CFA = (sp) + 16),
     * B BP_INDIRECT (DRAP: CFA = (bp - 8)), C R10-based (needs pt_regs), D sp_offset 0 (sp does
     * not move: a loop), E end, G undefined, H plain SP+8, K REGS with bp from pt_regs. */
    const raw_def rules[] = {
        {F(0x1000), 16, 0, ORC_REG_SP_INDIRECT, ORC_REG_UNDEFINED, 0},
        {F(0x2000), -8, 0, ORC_REG_BP_INDIRECT, ORC_REG_UNDEFINED, 0},
        {F(0x3000), 0, 0, ORC_REG_R10, ORC_REG_UNDEFINED, 0},
        {F(0x4000), 0, 0, ORC_REG_SP, ORC_REG_UNDEFINED, 0},
        {F(0x5000), 0, 0, ORC_REG_UNDEFINED, 0, 4},
        {F(0x6000), 0, 0, ORC_REG_UNDEFINED, 0, 0},
        {F(0x7000), 8, -16, ORC_REG_SP, ORC_REG_PREV_SP, 0},
        {F(0x8000), 0, 0, ORC_REG_SP, ORC_REG_UNDEFINED, 1},
        {F(0x9000), 0, 0, ORC_REG_UNDEFINED, 0, 0},
    };
    rc = make_table(&t, rules, 9, ORC_LAYOUT_V1, err);
    CHECK(rc == 0, "rules table: %s", err);
    if (rc) return;
    static uint8_t mem[1024];
    const uint64_t B = STACK_BASE;
#define W(off, v) (memcpy(mem + (off), &(uint64_t){(v)}, 8))
    uint64_t pcs[16];
    orc_status st;
    /* A at +0x10, sp=B: (B) holds B+0x100 -> CFA B+0x110, return into H+1 at B+0x108;
     * H: sp+8 -> CFA B+0x118, ret at B+0x110 into E+1 -> end. */
    memset(mem, 0, sizeof mem);
    W(0, B + 0x100);
    W(0x108, F(0x7001));
    W(0x110, F(0x5001));
    struct orc_regs r = {F(0x1010), B, 0, NULL};
    int n = orc_unwind(&t, 0, &r, B, mem, sizeof mem, pcs, 16, &st);
    CHECK(n == 3 && pcs[1] == F(0x7001) && pcs[2] == F(0x5001) && st.stop == ORC_STOP_END, "sp_indirect: %d %s", n,
          orc_stop_name(st.stop));
    /* B: bp = B+0x40, (bp-8) = B+0x200 -> CFA, ret at B+0x1f8 into E+1 */
    memset(mem, 0, sizeof mem);
    W(0x38, B + 0x200);
    W(0x1f8, F(0x5001));
    r = (struct orc_regs){F(0x2000), B, B + 0x40, NULL};
    n = orc_unwind(&t, 0, &r, B, mem, sizeof mem, pcs, 16, &st);
    CHECK(n == 2 && pcs[1] == F(0x5001) && st.stop == ORC_STOP_END, "bp_indirect: %d %s", n, orc_stop_name(st.stop));
    /* C: R10 from the caller's pt_regs; without them: bad */
    uint64_t regs[ORC_PT_REGS_WORDS] = {0};
    regs[ORC_PT_R10 / 8] = B + 0x80;
    regs[ORC_PT_CS / 8] = KERNEL_CS;
    memset(mem, 0, sizeof mem);
    W(0x78, F(0x5001));
    r = (struct orc_regs){F(0x3000), B, 0, regs};
    n = orc_unwind(&t, 0, &r, B, mem, sizeof mem, pcs, 16, &st);
    CHECK(n == 2 && pcs[1] == F(0x5001) && st.stop == ORC_STOP_END, "r10 with regs: %d %s", n, orc_stop_name(st.stop));
    r.pt_regs = NULL;
    n = orc_unwind(&t, 0, &r, B, mem, sizeof mem, pcs, 16, &st);
    CHECK(n == 1 && st.stop == ORC_STOP_BAD, "r10 without regs: %d %s", n, orc_stop_name(st.stop));
    /* D: CFA = sp: the caller's sp would not grow */
    W(0x18, F(0x4001));
    r = (struct orc_regs){F(0x4000), B + 0x20, 0, NULL};
    n = orc_unwind(&t, 0, &r, B, mem, sizeof mem, pcs, 16, &st);
    CHECK(n == 1 && st.stop == ORC_STOP_LOOP, "loop: %d %s", n, orc_stop_name(st.stop));
    /* G: undefined */
    r.rip = F(0x6000);
    n = orc_unwind(&t, 0, &r, B, mem, sizeof mem, pcs, 16, &st);
    CHECK(n == 1 && st.stop == ORC_STOP_UNDEFINED, "undefined: %s", orc_stop_name(st.stop));
    /* K: a pt_regs at sp whose bp becomes the next bp; its sp leaves the copy: last frame */
    memset(mem, 0, sizeof mem);
    W(ORC_PT_IP, F(0x7010));
    W(ORC_PT_CS, KERNEL_CS);
    W(ORC_PT_SP, 0xffffc90000001000ull);
    W(ORC_PT_BP, 0x1234);
    r = (struct orc_regs){F(0x8000), B, 0, NULL};
    n = orc_unwind(&t, 0, &r, B, mem, sizeof mem, pcs, 16, &st);
    CHECK(n == 2 && pcs[1] == F(0x7010) && st.exact_mask == 3 && st.stop == ORC_STOP_READ, "regs to another stack: %d %s %llx",
          n, orc_stop_name(st.stop), (unsigned long long)st.exact_mask);
    /* no entry (address outside the table): guessed as a frame-pointer frame, like the kernel */
    memset(mem, 0, sizeof mem);
    W(0x40, B + 0x80); /* saved rbp */
    W(0x48, F(0x5001));
    r = (struct orc_regs){0xffffffffa0001234ull, B, B + 0x40, NULL};
    n = orc_unwind(&t, 0, &r, B, mem, sizeof mem, pcs, 16, &st);
    CHECK(n == 2 && pcs[1] == F(0x5001) && st.guessed && st.stop == ORC_STOP_END, "fp fallback: %d %s", n,
          orc_stop_name(st.stop));
    /* rip 0 (a call through a NULL pointer): the return address is on top of the stack */
    W(0, F(0x5001));
    r = (struct orc_regs){0, B, 0, NULL};
    n = orc_unwind(&t, 0, &r, B, mem, sizeof mem, pcs, 16, &st);
    CHECK(n == 2 && pcs[0] == 0 && pcs[1] == F(0x5001) && st.stop == ORC_STOP_END, "null call: %d %s", n,
          orc_stop_name(st.stop));
    /* a zero return address */
    W(0x108, 0);
    r = (struct orc_regs){F(0x7000), B + 0x108, 0, NULL};
    n = orc_unwind(&t, 0, &r, B, mem, sizeof mem, pcs, 16, &st);
    CHECK(n == 1 && st.stop == ORC_STOP_BAD, "zero return address: %s", orc_stop_name(st.stop));
    /* degenerate arguments */
    CHECK(orc_unwind(&t, 0, &r, B, mem, sizeof mem, pcs, 0, &st) == 0 && orc_unwind(&t, 0, NULL, B, mem, 8, pcs, 4, NULL) == 0,
          "degenerate arguments");
    orc_free(&t);

    /* fp_unwind: rbp chain B+0x100 -> B+0x200 -> B+0x300 -> 0 */
    memset(mem, 0, sizeof mem);
    W(0x100, B + 0x200), W(0x108, 0x401111);
    W(0x200, B + 0x300), W(0x208, 0x402222);
    W(0x300, 0), W(0x308, 0x403333);
    n = fp_unwind(0x400000, B + 0x100, B, mem, sizeof mem, pcs, 16);
    CHECK(n == 4 && pcs[0] == 0x400000 && pcs[1] == 0x401111 && pcs[2] == 0x402222 && pcs[3] == 0x403333, "fp chain: %d", n);
    n = fp_unwind(0x400000, B + 0x100, B, mem, 0x208, pcs, 16); /* copy ends inside the second frame */
    CHECK(n == 2 && pcs[1] == 0x401111, "fp truncated: %d", n);
    n = fp_unwind(0x400000, B + 0x100, B, mem, sizeof mem, pcs, 3);
    CHECK(n == 3, "fp max: %d", n);
    W(0x200, B + 0x100); /* a loop back down */
    n = fp_unwind(0x400000, B + 0x100, B, mem, sizeof mem, pcs, 16);
    CHECK(n == 3 && pcs[2] == 0x402222, "fp loop: %d", n);
    n = fp_unwind(0x400000, ~0ull - 7, B, mem, sizeof mem, pcs, 16);
    CHECK(n == 1, "fp rbp at the top of the address space: %d", n);
    n = fp_unwind(0x400000, B + 0x100, B, NULL, 0, pcs, 16);
    CHECK(n == 1, "fp empty copy: %d", n);
#undef W
}

/* ---------------- 3. flame ---------------- */

static char *to_string(int (*fn)(const flame *, FILE *), const flame *f, size_t *len)
{
    char *buf = NULL;
    size_t l = 0;
    FILE *m = open_memstream(&buf, &l);
    fn(f, m);
    fclose(m);
    if (len) *len = l;
    return buf;
}

static int svg_plain(const flame *f, FILE *out) { return flame_write_svg(f, out, "Test <stacks> & \"more\""); }

/* Well-formedness by hand: every tag closed in order, every '&' an entity. Returns the number
 * of frame groups, or -1. */
static int svg_check(const char *s, char *why, size_t whylen)
{
    const char *stack[64];
    size_t slen[64];
    int depth = 0, frames = 0;
    if (strncmp(s, "<?xml", 5) != 0) return snprintf(why, whylen, "no XML declaration"), -1;
    for (const char *p = s; *p; p++) {
        if (*p == '&') {
            static const char *const ent[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
            int ok = 0;
            for (int i = 0; i < 5; i++) ok |= strncmp(p, ent[i], strlen(ent[i])) == 0;
            if (!ok) return snprintf(why, whylen, "bare & at %ld", (long)(p - s)), -1;
        }
        if (*p != '<') continue;
        const char *end = strchr(p, '>');
        if (!end) return snprintf(why, whylen, "unterminated tag"), -1;
        if (p[1] == '?') {
            p = end;
            continue;
        }
        int closing = p[1] == '/', self = end[-1] == '/';
        const char *name = p + 1 + closing;
        size_t nl = strcspn(name, " />");
        if (closing) {
            if (!depth || slen[depth - 1] != nl || strncmp(stack[depth - 1], name, nl) != 0)
                return snprintf(why, whylen, "</%.*s> closes the wrong element", (int)nl, name), -1;
            depth--;
        } else if (!self) {
            if (depth == 64) return snprintf(why, whylen, "too deep"), -1;
            if (nl == 1 && name[0] == 'g' && name[1] == '>') frames++;
            stack[depth] = name, slen[depth++] = nl;
        }
        p = end;
    }
    if (depth) return snprintf(why, whylen, "%d unclosed elements", depth), -1;
    return frames;
}

/* The width of the rect in the frame group titled exactly `title`, or -1. */
static double rect_width(const char *svg, const char *title, double *y, char *fill, size_t fill_len)
{
    char key[256];
    snprintf(key, sizeof key, "<g><title>%s</title><rect ", title);
    const char *p = strstr(svg, key);
    if (!p) return -1;
    double x, w, yy;
    int h;
    char col[40] = "";
    if (sscanf(p + strlen(key), "x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%d\" fill=\"%39[^\"]\"", &x, &yy, &w, &h, col) != 5)
        return -1;
    if (y) *y = yy;
    if (fill) snprintf(fill, fill_len, "%s", col);
    return w;
}

static void test_flame(void)
{
    flame *f = flame_new();
    const char *s1[] = {"main", "f", "g"}, *s2[] = {"main", "f"}, *s3[] = {"main", "h"}, *s4[] = {"a;b", "c\n"},
               *s5[] = {"main", "h", "g"};
    CHECK(flame_add(f, s1, 3, 2) == 0 && flame_add(f, s2, 2, 1) == 0 && flame_add(f, s3, 2, 3) == 0 &&
              flame_add(f, s1, 3, 5) == 0 && flame_add(f, s4, 2, 1) == 0 && flame_add(f, s5, 3, 4) == 0,
          "flame_add");
    CHECK(flame_add(f, s1, 0, 1) == -1 && flame_add(f, NULL, 1, 1) == -1 && flame_add(f, s1, 3, UINT64_MAX) == -1,
          "flame_add rejects bad input and an overflowing total");
    CHECK(flame_total(f) == 16 && flame_stacks(f) == 5, "totals %llu %zu", (unsigned long long)flame_total(f), flame_stacks(f));
    char *folded = to_string(flame_write_folded, f, NULL);
    const char *want = "a:b;c? 1\nmain;f 1\nmain;f;g 7\nmain;h 3\nmain;h;g 4\n";
    CHECK(strcmp(folded, want) == 0, "folded:\n--- want\n%s--- got\n%s", want, folded);

    /* read back: identical */
    flame *g = flame_new();
    FILE *in = fmemopen(folded, strlen(folded), "r");
    char err[256] = "";
    CHECK(flame_read_folded(g, in, "round", err, sizeof err) == 0, "read back: %s", err);
    fclose(in);
    char *again = to_string(flame_write_folded, g, NULL);
    CHECK(strcmp(again, folded) == 0, "round trip:\n%s", again);
    free(again);
    /* CRLF, blank lines, merging into existing stacks */
    const char *crlf = "main;f 1\r\n\n\r\nx;y 2\n";
    in = fmemopen((void *)crlf, strlen(crlf), "r");
    CHECK(flame_read_folded(g, in, "crlf", err, sizeof err) == 0 && flame_total(g) == 19 && flame_stacks(g) == 6,
          "crlf/blank/merge: %s total %llu", err, (unsigned long long)flame_total(g));
    fclose(in);
    /* malformed lines: the error names the line; nothing is added */
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"main;f\n", "bad:1: no sample count"},
        {"ok 1\nmain;;f 3\n", "bad:2: empty frame name"},
        {"a 1\n\nb x2\n", "bad:3: sample count \"x2\" is not a decimal integer"},
        {"a -1\n", "bad:1: sample count"},
        {"a 1.5\n", "bad:1: sample count \"1.5\""},
        {"a 99999999999999999999\n", "bad:1: sample count overflows"},
        {";a 1\n", "bad:1: empty frame name at byte 1"},
        {"a; 1\n", "bad:1: empty frame name at byte 3"},
        {"a\tb 1\n", "bad:1: control character 0x09 at byte 2"},
        {" 5\n", "bad:1: empty stack"},
        {"a 1\nb \n", "bad:2: empty sample count"},
        {"a 18446744073709551615\nb 1\n", "bad:2: sample total overflows"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        flame *h = flame_new();
        in = fmemopen((void *)bad[i].text, strlen(bad[i].text), "r");
        err[0] = 0;
        int rc = flame_read_folded(h, in, "bad", err, sizeof err);
        fclose(in);
        CHECK(rc == -1 && strncmp(err, bad[i].want, strlen(bad[i].want)) == 0 && flame_total(h) == 0 && flame_stacks(h) == 0,
              "malformed %zu: rc %d err \"%s\" (want \"%s\")", i, rc, err, bad[i].want);
        flame_free(h);
    }
    {
        static const char nul[] = "a\0b 1\n";
        flame *h = flame_new();
        in = fmemopen((void *)nul, sizeof nul - 1, "r");
        int rc = flame_read_folded(h, in, "nul", err, sizeof err);
        fclose(in);
        CHECK(rc == -1 && strstr(err, "nul:1: NUL byte"), "NUL byte: %s", err);
        flame_free(h);
    }

    /* SVG */
    const char *esc[] = {"main", "<x&y>", "\xff\xfe bad utf8"};
    CHECK(flame_add(f, esc, 3, 4) == 0, "add escaped");
    const char *tiny[] = {"main", "tiny"};
    flame_add(f, tiny, 2, 0);
    size_t len;
    char *svg = to_string(svg_plain, f, &len);
    char why[200] = "";
    int frames = svg_check(svg, why, sizeof why);
    /* all, a:b, c?, main, f, g (under f), h, g (under h), <x&y>, ?? bad utf8 = 10; tiny (0 samples) not drawn */
    CHECK(frames == 10, "svg: %d frames (%s)", frames, why);
    CHECK(strstr(svg, "<svg ") && len > 7 && strcmp(svg + len - 7, "</svg>\n") == 0, "svg envelope");
    CHECK(strstr(svg, "Test &lt;stacks&gt; &amp; &quot;more&quot;") && strstr(svg, "<title>&lt;x&amp;y&gt; (4 samples, 20.00%)") &&
              strstr(svg, "<title>?? bad utf8 (4 samples"),
          "svg escaping");
    double yall, ymain, yf;
    char fill1[40], fill2[40];
    double wall = rect_width(svg, "all (20 samples, 100.00%)", &yall, NULL, 0);
    double wmain = rect_width(svg, "main (19 samples, 95.00%)", &ymain, NULL, 0);
    double wf = rect_width(svg, "f (8 samples, 40.00%)", &yf, NULL, 0);
    double wg1 = rect_width(svg, "g (7 samples, 35.00%)", NULL, fill1, sizeof fill1);
    double wg2 = rect_width(svg, "g (4 samples, 20.00%)", NULL, fill2, sizeof fill2);
    double unit = (FLAME_WIDTH - 20) / 20;
#define NEAR(a, b) ((a) - (b) < 0.01 && (b) - (a) < 0.01)
    CHECK(NEAR(wall, 20 * unit) && NEAR(wmain, 19 * unit) && NEAR(wf, 8 * unit) && NEAR(wg1, 7 * unit) && NEAR(wg2, 4 * unit),
          "svg widths %.2f %.2f %.2f %.2f %.2f (unit %.2f)", wall, wmain, wf, wg1, wg2, unit);
    CHECK(yall > ymain && ymain > yf, "svg: root at the bottom (y %.1f %.1f %.1f)", yall, ymain, yf);
    CHECK(strcmp(fill1, fill2) == 0 && fill1[0], "svg: same name, same color (%s %s)", fill1, fill2);
    CHECK(!strstr(svg, ">tiny") && !strstr(svg, "tiny ("), "svg: zero-width frame drawn");
    CHECK(strstr(svg, ">main</text>") != NULL, "svg: wide frame labelled");
    /* the same again: deterministic */
    char *svg2 = to_string(svg_plain, f, NULL);
    CHECK(strcmp(svg, svg2) == 0, "svg not deterministic");
    free(svg2);
    /* an XML parser agrees, if there is one */
    if (system("command -v python3 > /dev/null 2>&1") == 0) {
        char path[] = "/tmp/unit_stacks_XXXXXX";
        int fd = mkstemp(path);
        if (fd >= 0 && write(fd, svg, len) == (ssize_t)len) {
            char cmd[400];
            snprintf(cmd, sizeof cmd,
                     "python3 -c 'import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); "
                     "sys.exit(0 if len(d.getElementsByTagName(\"rect\")) == 11 else 1)' %s",
                     path);
            CHECK(system(cmd) == 0, "python3 xml.dom.minidom rejects the svg (%s)", path);
        }
        if (fd >= 0) close(fd), unlink(path);
    }
    free(svg);
    /* an empty graph is still a valid SVG */
    flame *e = flame_new();
    svg = to_string(svg_plain, e, NULL);
    CHECK(svg_check(svg, why, sizeof why) == 0 && strstr(svg, "no samples"), "empty svg: %s", why);
    free(svg);
    flame_free(e);
    free(folded);
    flame_free(g);
    flame_free(f);
}

int main(int argc, char **argv)
{
    char *paths = NULL;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) test_kernel(argv[i]);
    } else if (getenv("HVT_STACKS_KERNELS") && *getenv("HVT_STACKS_KERNELS")) {
        paths = strdup(getenv("HVT_STACKS_KERNELS"));
        for (char *save = NULL, *p = strtok_r(paths, ":", &save); p; p = strtok_r(NULL, ":", &save))
            if (access(p, R_OK) == 0) test_kernel(p);
            else printf("SKIP %s: not readable\n", p);
    } else {
        printf("SKIP ORC on a real kernel: no image (give paths or HVT_STACKS_KERNELS)\n");
    }
    free(paths);
    test_raw();
    test_flame();
    return check_summary("unit_stacks");
}
