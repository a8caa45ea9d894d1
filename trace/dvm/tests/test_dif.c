/* test_dif.c - the D verifier and interpreter (trace/dif_*.c) on hand-assembled programs, a
 * fake guest memory with holes, and a randomized mutation test of the verifier/interpreter
 * pair (every mutant either refused or run without harm). Expected values are derived by hand
 * from DTrace's documented rules (comments say how). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <pthread.h>
#include "dif.h"
#include "hvt_stream.h"
#include "dif_impl.h"
#include "dif_asm.h"
#include "hvt_probe.h"
#include "check.h"


/* ------------------------------------------------------------------ the fake guest */

#define NPAGES 16
static struct { uint64_t va; uint8_t data[4096]; } gpages[NPAGES];
static int ngpages, last_user;
static uint8_t *gmap(uint64_t va)
{
    gpages[ngpages].va = va;
    memset(gpages[ngpages].data, 0, 4096);
    return gpages[ngpages++].data;
}
static size_t fake_read(void *ctx, uint64_t va, void *buf, size_t len, int user)
{
    size_t n = 0;
    last_user = user;
    while (n < len) {
        uint64_t a = va + n;
        int i;
        for (i = 0; i < ngpages && gpages[i].va != (a & ~4095ull); i++)
            ;
        if (i == ngpages)
            break;
        size_t chunk = 4096 - (a & 4095);
        if (chunk > len - n)
            chunk = len - n;
        memcpy((uint8_t *)buf + n, gpages[i].data + (a & 4095), chunk);
        n += chunk;
    }
    return n;
}
static size_t fake_stack(void *ctx, void *buf, size_t max, uint64_t *rsp)
{
    *rsp = 0xffffc90000003f00ull;
    size_t n = max < 20 ? max : 20;
    for (size_t i = 0; i < n; i++)
        ((uint8_t *)buf)[i] = (uint8_t)(0xa0 + i);
    return n;
}
static int notified;
static void fake_notify(void *ectx, unsigned cpu) { notified++; }
/* user registers for USTACK: uregs_ok false: none */
static bool uregs_ok;
static uint64_t uregs_pc, uregs_fp;
static bool fake_uregs(void *ctx, uint64_t *pc, uint64_t *fp)
{
    *pc = uregs_pc;
    *fp = uregs_fp;
    return uregs_ok;
}
/* step() / unstep(): tracer_ok false refuses (a step() with the tracer's threads all taken) */
static bool tracer_ok = true;
static int tracer_calls, tracer_what;
static bool fake_tracer(void *ctx, int what)
{
    tracer_calls++;
    tracer_what = what;
    return tracer_ok;
}
static const struct dif_env ENV = { .read = fake_read, .stack = fake_stack, .notify = fake_notify,
                                    .tracer = fake_tracer, .uregs = fake_uregs };
static struct dif_firing F;
static void firing_reset(void)
{
    memset(&F, 0, sizeof(F));
    F.tsc = 12345;
    for (int i = 0; i < 10; i++)
        F.v[HVT_DIF_V_ARG0 + i] = 1000 + (uint64_t)i;
    F.v[HVT_DIF_V_PID] = 50;
    F.v[HVT_DIF_V_TID] = 51;
    F.v[HVT_DIF_V_WALLTIMESTAMP] = 1;
    F.v[HVT_DIF_V_REGS_SP] = 1000;
    F.v[HVT_DIF_V_TIMESTAMP] = 777;
    F.v[HVT_DIF_V_ERRNO] = 22;
    F.execname = "bash-but-longer-than-16";
    F.execname_max = 16;
}

/* ------------------------------------------------------------------ running programs */

struct prog { uint8_t *img; size_t len; void *mem; struct dif_state *st; };
#define NCORPUS 64
static struct { uint8_t *img; size_t len; } corpus[NCORPUS];
static int ncorpus;

static bool p_load(struct prog *p, unsigned ncpus)
{
    struct dif_verr e;
    memset(p, 0, sizeof(*p));
    p->img = a_build(&p->len);
    int rc = dif_verify(p->img, p->len, &e);
    if (rc) {
        printf("  verify: clause %d insn %d item %d: %s\n", e.clause, e.insn, e.item, e.reason);
        return false;
    }
    size_t sz = dif_state_size(p->img, ncpus);
    p->mem = aligned_alloc(64, (sz + 63) & ~(size_t)63);
    rc = dif_state_init(&p->st, p->mem, sz, p->img, ncpus, &ENV);
    if (rc)
        return false;
    if (ncorpus < NCORPUS && p->len < 8192) {
        corpus[ncorpus].img = malloc(p->len);
        memcpy(corpus[ncorpus].img, p->img, p->len);
        corpus[ncorpus++].len = p->len;
    }
    return true;
}
static void p_free(struct prog *p) { free(p->img); free(p->mem); memset(p, 0, sizeof(*p)); }

struct rec { struct hvt_drec h; const uint64_t *w; uint32_t nw; };
static uint8_t dbuf[4 << 20] __attribute__((aligned(8)));
static struct rec recs[4096];
static int nrecs;
static int drain(struct prog *p, unsigned cpu)
{
    long n = dif_drain(p->st, cpu, dbuf, sizeof(dbuf));
    nrecs = 0;
    for (long o = 0; o < n && nrecs < 4096; ) {
        struct rec *r = &recs[nrecs++];
        memcpy(&r->h, dbuf + o, sizeof(r->h));
        r->w = (const uint64_t *)(dbuf + o + sizeof(r->h));
        r->nw = (r->h.len - (uint32_t)sizeof(r->h)) / 8;
        if (r->h.len < 40 || r->h.len % 8) {
            printf("bad record length %u\n", r->h.len);
            break;
        }
        o += r->h.len;
    }
    return nrecs;
}

/* Runs a program whose clause 0 is probe 1's only clause (the open clause is ended first):
 * one firing on CPU 0, then the records. Returns the DATA record's words after the ACT
 * header, or NULL (an error record is then recs[0]). */
static struct prog P;
static const uint64_t *run1(void)
{
    if (A.open)
        a_end();
    a_probe(1, 1, 0);
    p_free(&P);
    if (!p_load(&P, 2)) {
        CHECK(0, "program refused");
        return NULL;
    }
    CHECK(dif_fire(P.st, 0, 1, &F) == 1, "fire");
    drain(&P, 0);
    if (nrecs != 1 || recs[0].h.type != HVT_DREC_DATA)
        return NULL;
    return recs[0].w + 1;
}
static const char *str_at(const uint64_t *w, int i, uint16_t *len)
{
    const uint8_t *p = (const uint8_t *)(w + i);
    memcpy(len, p, 2);
    return (const char *)p + 2;
}
static bool str_is(const uint64_t *w, int i, const char *s)
{
    uint16_t len;
    const char *p = str_at(w, i, &len);
    return len == strlen(s) && !memcmp(p, s, len);
}

/* ------------------------------------------------------------------ opcode semantics */

static void test_arith(void)
{
    a_new();
    ACT(7);
    LDI(1, -5); EMIT(1);
    a_i(HVT_DIF_OP_LDC, 2, 0, 0, (int32_t)a_const(0x123456789abcdef0ull)); EMIT(2);
    LDI(3, 7);
    I3(ADD, 4, 1, 3); EMIT(4);
    I3(SUB, 4, 1, 3); EMIT(4);
    I3(MUL, 4, 1, 3); EMIT(4);
    LDI(5, 2);
    I3(UDIV, 4, 1, 5); EMIT(4);
    I3(SDIV, 4, 1, 5); EMIT(4);
    I3(UREM, 4, 1, 5); EMIT(4);
    I3(SREM, 4, 1, 5); EMIT(4);
    a_i(HVT_DIF_OP_LDC, 6, 0, 0, (int32_t)a_const(0x8000000000000000ull));
    LDI(7, -1);
    I3(SDIV, 4, 6, 7); EMIT(4);            /* INT64_MIN / -1 wraps */
    I3(SREM, 4, 6, 7); EMIT(4);
    I3(AND, 4, 1, 3); EMIT(4);
    I3(OR, 4, 1, 3); EMIT(4);
    I3(XOR, 4, 1, 3); EMIT(4);
    LDI(8, 65);                            /* shift counts are mod 64 */
    I3(SHL, 4, 3, 8); EMIT(4);
    I3(SHR, 4, 1, 8); EMIT(4);
    I3(SAR, 4, 1, 8); EMIT(4);
    II(ADDI, 4, 3, -10); EMIT(4);
    I2(NEG, 4, 1); EMIT(4);
    I2(NOT, 4, 3); EMIT(4);
    I2(LNOT, 4, 3); EMIT(4);
    LDI(9, 0);
    I2(LNOT, 4, 9); EMIT(4);
    LDI(10, 0x80); II(SEXT, 4, 10, 1); EMIT(4);
    LDI(10, 0x18000); II(SEXT, 4, 10, 2); EMIT(4);
    a_i(HVT_DIF_OP_LDC, 10, 0, 0, (int32_t)a_const(0x180000000ull)); II(SEXT, 4, 10, 4); EMIT(4);
    II(ZEXT, 4, 1, 1); EMIT(4);
    II(ZEXT, 4, 1, 2); EMIT(4);
    II(ZEXT, 4, 1, 4); EMIT(4);
    I3(EQ, 4, 1, 3); EMIT(4);
    I3(NE, 4, 1, 3); EMIT(4);
    I3(LT, 4, 1, 3); EMIT(4);              /* -5 < 7 signed */
    I3(LE, 4, 1, 3); EMIT(4);
    I3(LTU, 4, 1, 3); EMIT(4);             /* 2^64-5 < 7 unsigned: no */
    I3(LEU, 4, 1, 3); EMIT(4);
    I3(EQ, 4, 3, 3); EMIT(4);
    I3(LE, 4, 3, 3); EMIT(4);
    I3(LT, 4, 3, 3); EMIT(4);
    I3(LEU, 4, 3, 1); EMIT(4);
    I2(MOV, 11, 1); EMIT(11);
    I0(NOP);
    const uint64_t *w = run1();
    static const int64_t want[] = {
        -5, 0x123456789abcdef0ll, 2, -12, -35, 0x7ffffffffffffffdll, -2, 1, -1,
        INT64_MIN, 0, 3, -1, -4, 14, 0x7ffffffffffffffdll, -3, -3, 5, -8, 0, 1,
        -128, -32768, INT32_MIN, 0xfb, 0xfffb, 0xfffffffbll, 0, 1, 1, 1, 0, 0, 1, 1, 0, 1, -5,
    };
    const int n = sizeof(want) / sizeof(want[0]);
    CHECK(w && recs[0].nw == (uint32_t)n + 1, "arith record: %u words", nrecs ? recs[0].nw : 0);
    CHECK(w && recs[0].w[0] == 7, "ACT header: action 7, zeros");
    for (int i = 0; w && i < n; i++)
        CHECK((int64_t)w[i] == want[i], "arith value %d: %lld, want %lld", i, (long long)w[i],
              (long long)want[i]);
    CHECK(recs[0].h.probe == 1 && recs[0].h.clause == 0 && recs[0].h.tsc == 12345 &&
          recs[0].h.cpu == 0, "record header");
}

static void test_branches(void)
{
    a_new();
    ACT(0);
    LDI(1, 0);
    LDI(2, 1);
    int j1 = II(BZ, 0, 1, 0);              /* taken */
    LDI(3, 99); EMIT(3);
    a_patch(j1, a_here());
    LDI(3, 1); EMIT(3);
    int j2 = II(BNZ, 0, 1, 0);             /* not taken */
    LDI(3, 2); EMIT(3);
    a_patch(j2, a_here());
    LDI(3, 3); EMIT(3);
    int j3 = II(BNZ, 0, 2, 0);             /* taken */
    LDI(3, 98); EMIT(3);
    a_patch(j3, a_here());
    int j4 = II(BZ, 0, 2, 0);              /* not taken */
    LDI(3, 4); EMIT(3);
    a_patch(j4, a_here());
    int j5 = II(JMP, 0, 0, 0);
    LDI(3, 97); EMIT(3);
    a_patch(j5, a_here());
    LDI(3, 5); EMIT(3);
    const uint64_t *w = run1();
    CHECK(w && recs[0].nw == 6 && w[0] == 1 && w[1] == 2 && w[2] == 3 && w[3] == 4 && w[4] == 5,
          "branches: taken and not taken");
}

/* step() taken: the clause goes on; refused: the firing's error (fault STEPREFUSED at the
 * TRACER's pc), its later actions not run - DTrace's way with a fault, and counted as an error. */
static void test_tracer(void)
{
    for (int refuse = 0; refuse < 2; refuse++) {
        tracer_ok = !refuse;
        tracer_calls = 0;
        a_new();
        ACT(0);
        LDI(1, 1); EMIT(1);
        a_i(HVT_DIF_OP_TRACER, 0, 0, 0, HVT_DIF_TRACER_STEP);
        LDI(2, 2); EMIT(2);
        const uint64_t *w = run1();
        if (!refuse)
            CHECK(w && tracer_calls == 1 && tracer_what == HVT_DIF_TRACER_STEP && w[0] == 1 && w[1] == 2,
                  "step() taken: the clause goes on");
        else
            CHECK(!w && tracer_calls == 1 && nrecs == 1 && recs[0].h.type == HVT_DREC_ERROR &&
                  recs[0].h.fault == HVT_DIF_F_STEPREFUSED && recs[0].h.pc == 3,
                  "step() refused: an error record at its pc (got %d records, type %u fault %u pc %u)", nrecs,
                  nrecs ? recs[0].h.type : 0, nrecs ? recs[0].h.fault : 0, nrecs ? recs[0].h.pc : 0);
    }
    tracer_ok = true;
}

static void test_guest_loads(void)
{
    ngpages = 0;
    uint8_t *pg = gmap(0xffff888000001000ull);
    for (int i = 0; i < 8; i++)
        pg[i] = (uint8_t)(0x80 + i);
    memcpy(pg + 0x100, "hello", 6);
    memcpy(pg + 4096 - 4, "xyz", 4);        /* ends just before a hole */
    memset(pg + 0x200, 'A', 0x100);         /* no NUL: reaches into the next (mapped) page */
    uint8_t *pg2 = gmap(0xffff888000002000ull);
    memcpy(pg2, "tail", 5);
    uint8_t *pg3 = gmap(0x400000);          /* user */
    memcpy(pg3, "user", 5);
    a_new();
    ACT(0);
    a_i(HVT_DIF_OP_LDC, 1, 0, 0, (int32_t)a_const(0xffff888000001000ull));
    II(LDG, 2, 1, 1); EMIT(2);
    II(LDG, 2, 1, 1 | HVT_DIF_LD_SIGNED); EMIT(2);
    II(LDG, 2, 1, 2); EMIT(2);
    II(LDG, 2, 1, 2 | HVT_DIF_LD_SIGNED); EMIT(2);
    II(LDG, 2, 1, 4); EMIT(2);
    II(LDG, 2, 1, 4 | HVT_DIF_LD_SIGNED); EMIT(2);
    II(LDG, 2, 1, 8); EMIT(2);
    II(ADDI, 3, 1, 0x100);
    II(STRG, 4, 3, 0); EMIT(4);
    II(ADDI, 3, 1, 4096 - 4);
    II(STRG, 4, 3, 0); EMIT(4);
    II(ADDI, 3, 1, 0x1000 - 2);             /* no NUL in "xyz\0"'s last 2 bytes? "z\0" */
    II(STRG, 4, 3, 0); EMIT(4);
    LDI(5, 0x400000);
    II(STRG, 4, 5, HVT_DIF_LD_USER); EMIT(4);
    const uint64_t *w = run1();
    CHECK(w && w[0] == 0x80 && (int64_t)w[1] == -128 && w[2] == 0x8180 &&
          (int64_t)w[3] == (int16_t)0x8180 && w[4] == 0x83828180 &&
          (int64_t)w[5] == (int32_t)0x83828180 && w[6] == 0x8786858483828180ull,
          "LDG sizes and signs");
    CHECK(w && str_is(w, 7, "hello") && str_is(w, 8, "xyz") && str_is(w, 9, "z") &&
          str_is(w, 10, "user") && last_user == 1, "STRG kernel and user");

    /* a string that runs off its page into the next mapped one, truncated at strsize-1 */
    a_new();
    ACT(0);
    a_i(HVT_DIF_OP_LDC, 1, 0, 0, (int32_t)a_const(0xffff888000001ff0ull));
    memset(pg + 0xff0, 'B', 12);
    II(STRG, 2, 1, 0); EMIT(2);
    w = run1();
    CHECK(w && str_is(w, 0, "BBBBBBBBBBBBxyz"), "STRG across pages stops at NUL");
    memset(pg + 0xff0, 'C', 16);            /* now no NUL before the page's end */
    memset(pg2, 'D', 4096);
    a_new();
    ACT(0);
    a_i(HVT_DIF_OP_LDC, 1, 0, 0, (int32_t)a_const(0xffff888000001ff0ull));
    II(STRG, 2, 1, 0); EMIT(2);
    w = run1();
    uint16_t len = 0;
    CHECK(w && (str_at(w, 0, &len), len == 63), "STRG truncated at strsize-1: %u", len);

    /* STRGR: an argument list as ps shows it (NULs but the last made spaces), user memory,
     * across a page boundary; empty when end <= start; cut at strsize-1; a hole faults */
    uint8_t *pg4 = gmap(0x401000);
    memcpy(pg3 + 4096 - 6, "/bin/e", 6);
    memcpy(pg4, "cho\0one\0two words\0", 19);
    a_new();
    ACT(0);
    LDI(1, 0x400000 + 4096 - 6);
    LDI(2, 0x401000 + 19);
    a_i(HVT_DIF_OP_STRGR, 3, 1, 2, HVT_DIF_LD_USER); EMIT(3);
    a_i(HVT_DIF_OP_STRGR, 3, 2, 1, HVT_DIF_LD_USER); EMIT(3);
    memset(pg4 + 100, 'x', 900);
    LDI(1, 0x401000 + 100);
    LDI(2, 0x401000 + 1000);
    a_i(HVT_DIF_OP_STRGR, 3, 1, 2, HVT_DIF_LD_USER); EMIT(3);
    w = run1();
    len = 0;
    /* values are 8-byte aligned: the 25 bytes of the first take 4 words */
    CHECK(w && str_is(w, 0, "/bin/echo one two words") && str_is(w, 4, "") && (str_at(w, 5, &len), len == 63),
          "STRGR: the argument list with spaces, empty, cut at strsize-1 (%u)", len);
    a_new();
    ACT(0);
    LDI(1, 0x401000 + 4090);
    LDI(2, 0x401000 + 4200);
    a_i(HVT_DIF_OP_STRGR, 3, 1, 2, HVT_DIF_LD_USER); EMIT(3);
    w = run1();
    CHECK(!w && nrecs == 1 && recs[0].h.type == HVT_DREC_ERROR && recs[0].h.fault == HVT_DIF_F_BADADDR &&
          recs[0].h.arg == 0x402000, "STRGR into a hole faults at the hole");

    /* faults: an unmapped page, a load crossing into a hole, a string crossing into one */
    struct { uint64_t va; int op; int32_t imm; uint64_t addr; } f[] = {
        { 0xffff888000005000ull, HVT_DIF_OP_LDG, 8, 0xffff888000005000ull },
        { 0xffff888000002ffcull, HVT_DIF_OP_LDG, 8, 0xffff888000003000ull },
        { 0xffff888000002ff0ull, HVT_DIF_OP_STRG, 0, 0xffff888000003000ull },
        { 0x400000, HVT_DIF_OP_LDG, 8 | HVT_DIF_LD_USER, 0x400000 },   /* user bit honored? mapped: no fault */
    };
    for (int i = 0; i < 4; i++) {
        a_new();
        ACT(0);
        LDI(3, 5); EMIT(3);
        a_i(HVT_DIF_OP_LDC, 1, 0, 0, (int32_t)a_const(f[i].va));
        a_i(f[i].op, 2, 1, 0, f[i].imm);
        EMIT(2);
        w = run1();
        if (i == 3) {
            CHECK(w != NULL, "user LDG of a mapped page");
            continue;
        }
        CHECK(!w && nrecs == 1 && recs[0].h.type == HVT_DREC_ERROR &&
              recs[0].h.fault == HVT_DIF_F_BADADDR && recs[0].h.arg == f[i].addr &&
              recs[0].h.pc == 4 && recs[0].h.len == 40,
              "fault %d: type %u fault %u arg %llx pc %u", i, nrecs ? recs[0].h.type : 0,
              recs[0].h.fault, (unsigned long long)recs[0].h.arg, recs[0].h.pc);
    }
}

static void test_divzero(void)
{
    const int ops[] = { HVT_DIF_OP_UDIV, HVT_DIF_OP_SDIV, HVT_DIF_OP_UREM, HVT_DIF_OP_SREM };
    for (int i = 0; i < 4; i++) {
        a_new();
        ACT(0);
        LDI(1, 1); EMIT(1);
        LDI(2, 0);
        a_i(ops[i], 3, 1, 2, 0);
        EMIT(3);
        const uint64_t *w = run1();
        CHECK(!w && nrecs == 1 && recs[0].h.type == HVT_DREC_ERROR &&
              recs[0].h.fault == HVT_DIF_F_DIVZERO && recs[0].h.pc == 4 && recs[0].h.clause == 0,
              "division by zero (op %d) faults and discards the partial record", ops[i]);
    }
}

static void test_builtins(void)
{
    a_new();
    ACT(0);
    int ids[] = { HVT_DIF_V_ARG0, HVT_DIF_V_ARG0 + 5, HVT_DIF_V_PID, HVT_DIF_V_TID,
                  HVT_DIF_V_WALLTIMESTAMP, HVT_DIF_V_REGS_SP, HVT_DIF_V_CPU, HVT_DIF_V_TIMESTAMP,
                  HVT_DIF_V_ERRNO, HVT_DIF_V_EPID, HVT_DIF_V_ID };
    for (int i = 0; i < 11; i++) {
        II(VAR, 1, 0, ids[i]);
        EMIT(1);
    }
    int sids[] = { HVT_DIF_V_EXECNAME, HVT_DIF_V_PROBEPROV, HVT_DIF_V_PROBEMOD,
                   HVT_DIF_V_PROBEFUNC, HVT_DIF_V_PROBENAME };
    for (int i = 0; i < 5; i++) {
        II(VAR, 2, 0, sids[i]);
        EMIT(2);
    }
    const uint64_t *w = run1();
    static const uint64_t want[] = { 1000, 1005, 50, 51, 1, 1000, 0, 777, 22, 1, 1 };
    for (int i = 0; w && i < 11; i++)
        CHECK(w[i] == want[i], "builtin %d: %llu want %llu", ids[i], (unsigned long long)w[i],
              (unsigned long long)want[i]);
    /* strings: execname read up to execname_max bytes; each string 24 or 8 bytes */
    CHECK(w && str_is(w, 11, "bash-but-longer-") && str_is(w, 14, "fbt") &&
          str_is(w, 15, "vmlinux") && str_is(w, 17, "do_sys_open") && str_is(w, 19, "entry"),
          "string built-ins");
}

static void test_strings(void)
{
    a_new();
    A.hdr.strsize = 16;
    ACT(0);
    SCONST(1, "abcdefghij");
    SCONST(2, "klmnopqrst");
    I3(STRJOIN, 3, 1, 2); EMIT(3);          /* truncated at strsize-1 = 15 */
    I2(STRLEN, 4, 3); EMIT(4);
    const char *bn_in[] = { "/a/b/", "", "/", "abc", "a/b", "//x//", "/usr/lib/libc" };
    for (int i = 0; i < 7; i++) {
        SCONST(5, bn_in[i]);
        I2(BASENAME, 6, 5); EMIT(6);
    }
    const char *cmp[][2] = { { "abc", "abd" }, { "abd", "abc" }, { "abc", "abc" },
                             { "ab", "abc" }, { "\xff", "a" }, { "", "" } };
    for (int i = 0; i < 6; i++) {
        SCONST(7, cmp[i][0]);
        SCONST(8, cmp[i][1]);
        I3(SCMP, 9, 7, 8); EMIT(9);
    }
    SCONST(1, "a string constant longer than strsize");
    EMIT(1);                                /* constants are cut at strsize-1 too */
    I2(MOV, 10, 2); EMIT(10);               /* MOV of a string */
    const uint64_t *w = run1();
    CHECK(w && str_is(w, 0, "abcdefghijklmno") && w[3] == 15, "strjoin truncated at strsize-1");
    const char *bn_out[] = { "b", ".", "/", "abc", "b", "x", "libc" };
    int k = 4;
    for (int i = 0; w && i < 7; i++) {
        uint16_t len;
        str_at(w, k, &len);
        CHECK(str_is(w, k, bn_out[i]), "basename(\"%s\") = \"%.*s\" want \"%s\"", bn_in[i],
              len, str_at(w, k, &len), bn_out[i]);
        k += (int)((2 + len + 7) / 8);
    }
    static const int64_t cmp_want[] = { -1, 1, 0, -1, 1, 0 };
    for (int i = 0; w && i < 6; i++, k++)
        CHECK((int64_t)w[k] == cmp_want[i], "scmp %d: %lld", i, (long long)w[k]);
    CHECK(w && str_is(w, k, "a string consta"), "constant cut at strsize-1");
    CHECK(w && str_is(w, k + 3, "klmnopqrst"), "MOV keeps a string");

    /* scratch: 8 strings held at once fit, a 9th faults; chained joins reuse buffers */
    a_new();
    ACT(0);
    II(VAR, 0, 0, HVT_DIF_V_EXECNAME);      /* read in place: takes no scratch buffer */
    for (int r = 1; r <= 8; r++)
        I3(STRJOIN, r, 0, 0);
    I3(STRJOIN, 9, 0, 0);
    run1();
    CHECK(nrecs == 1 && recs[0].h.type == HVT_DREC_ERROR &&
          recs[0].h.fault == HVT_DIF_F_NOSCRATCH && recs[0].h.pc == 10, "9th scratch string faults");
    a_new();
    ACT(0);
    II(VAR, 1, 0, HVT_DIF_V_EXECNAME);
    SCONST(2, "x");
    for (int i = 0; i < 40; i++)
        I3(STRJOIN, 1, 1, 2);
    EMIT(1);
    w = run1();
    uint16_t len = 0;
    CHECK(w && (str_at(w, 0, &len), len == 56) && !memcmp(str_at(w, 0, &len), "bash-but-longer-x", 17),
          "40 chained joins: buffers reused (len %u)", len);
}

static void test_stack_exit(void)
{
    a_new();
    ACT(3);
    a_i(HVT_DIF_OP_STACK, 0, 0, 0, 64);
    ACT(4);
    LDI(1, 3);
    II(EXIT, 0, 1, 0);
    const uint64_t *w = run1();
    int64_t status = 0;
    CHECK(w && recs[0].h.len == 40 + 8 + 16 + 24 + 8 + 8, "stack record length %u", recs[0].h.len);
    CHECK(w && (w[0] & 0xffffffff) == 20 && (w[0] >> 32) == 0 && w[1] == 0xffffc90000003f00ull &&
          ((const uint8_t *)(w + 2))[0] == 0xa0 && ((const uint8_t *)(w + 2))[19] == 0xb3 &&
          ((const uint8_t *)(w + 2))[20] == 0 && ((const uint8_t *)(w + 2))[23] == 0,
          "stack: u32 bytes, u32 0, rsp, bytes, zero pad");
    CHECK(w && w[5] == 4 && w[6] == 3, "exit's action and value");
    CHECK(dif_exiting(P.st, &status) && status == 3, "exit() marks the program exiting");
    /* exit followed by a fault: the clause did not happen, nor did the exit */
    a_new();
    ACT(0);
    LDI(1, 3);
    II(EXIT, 0, 1, 0);
    LDI(2, 0);
    I3(UDIV, 3, 1, 2);
    run1();
    CHECK(!dif_exiting(P.st, NULL) && recs[0].h.type == HVT_DREC_ERROR, "exit undone by a fault");
    /* after exit() only END runs (dtrace-utils' DRAINING): probe 1's clause 0 exits, its clause
     * 1 does not run, nor does probe 1 again; probe 2 (END) does */
    a_new();
    ACT(0); LDI(1, 5); II(EXIT, 0, 1, 0); a_end();
    ACT(1); LDI(1, 11); EMIT(1); a_end();
    ACT(2); LDI(1, 22); EMIT(1); a_end();
    a_probe(1, 2, 0, 1);
    a_probe(2, 1, 2);
    A.hdr.end_probe = 2;
    p_free(&P);
    CHECK(p_load(&P, 1), "exit gate program");
    dif_fire(P.st, 0, 1, &F);
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].h.clause == 0 && dif_exiting(P.st, NULL), "exit: the clause after it skipped (%d records)", nrecs);
    dif_fire(P.st, 0, 1, &F);
    drain(&P, 0);
    CHECK(nrecs == 0, "exit: a later firing runs nothing (%d records)", nrecs);
    dif_fire(P.st, 0, 2, &F);
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].h.clause == 2 && recs[0].w[1] == 22, "exit: END still runs");
}

/* USTACK: the user pc, then the frame chain read as user memory, ended by depth, a fault, a
 * zero return address, a frame not above the last one, a misaligned or kernel fp */
static void ustack_case(const char *what, int depth, const uint64_t *want, uint32_t nwant)
{
    a_new();
    ACT(2);
    a_i(HVT_DIF_OP_USTACK, 0, 0, 0, depth);
    ACT(3);
    LDI(1, 77);
    EMIT(1);
    last_user = -1;
    const uint64_t *w = run1();
    CHECK(w && recs[0].h.len == 40 + 8 + 8 + 8 * nwant + 8 + 8, "%s: record length %u", what,
          w ? recs[0].h.len : 0);
    bool same = w && (w[0] & 0xffffffff) == nwant && (w[0] >> 32) == 0;
    for (uint32_t i = 0; same && i < nwant; i++)
        same = w[1 + i] == want[i];
    CHECK(same, "%s: u32 count %u, u32 0, the pcs", what, nwant);
    CHECK(w && w[1 + nwant] == 3 && w[2 + nwant] == 77 && last_user != 0,
          "%s: the next action follows; frames read as user memory only", what);
}

static void test_ustack(void)
{
    const uint64_t S = 0x7ffd0000f000ull;
    uint8_t *pg = gmap(S);
    uint64_t fr[8] = { S + 0x20, 0x401111, S + 0x40, 0x402222, S + 0x40, 0x403333 };
    /* frame 0 at S: next S+0x20 (ret 0x401111); frame at S+0x20: next S+0x40 (0x402222);
     * frame at S+0x40: next S+0x40, not above itself (0x403333, then the walk ends) */
    memcpy(pg, fr, 16);
    memcpy(pg + 0x20, fr + 2, 16);
    memcpy(pg + 0x40, fr + 4, 16);
    uregs_ok = true;
    uregs_pc = 0x400abc;
    uregs_fp = S;
    ustack_case("chain", 20, (const uint64_t[]){ 0x400abc, 0x401111, 0x402222, 0x403333 }, 4);
    ustack_case("depth 2", 2, (const uint64_t[]){ 0x400abc, 0x401111 }, 2);
    ustack_case("depth 1", 1, (const uint64_t[]){ 0x400abc }, 1);
    uregs_fp = S + 0x1000;                 /* not mapped: the stack just ends */
    ustack_case("unmapped fp", 20, (const uint64_t[]){ 0x400abc }, 1);
    uregs_fp = S + 4;                      /* misaligned */
    ustack_case("misaligned fp", 20, (const uint64_t[]){ 0x400abc }, 1);
    uregs_fp = 0xffff888000000000ull;      /* a kernel address is never read as a frame */
    ustack_case("kernel fp", 20, (const uint64_t[]){ 0x400abc }, 1);
    uregs_fp = S;
    uint64_t zero_ret[2] = { S + 0x20, 0 };
    memcpy(pg, zero_ret, 16);
    ustack_case("zero return address", 20, (const uint64_t[]){ 0x400abc }, 1);
    uregs_ok = false;                      /* no user registers (a kernel thread) */
    ustack_case("no user registers", 20, NULL, 0);
    uregs_ok = true;
    uregs_pc = 0xffffffff81000000ull;      /* a kernel pc is no user stack */
    ustack_case("kernel pc", 20, NULL, 0);
    uregs_ok = false;
    ngpages = 0;
}

/* ------------------------------------------------------------------ variables */

static void test_vars(void)
{
    a_new();
    uint32_t g = a_var(HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 0, 0, 0);
    uint32_t gs = a_var(HVT_DIF_VK_GLOBAL, HVT_DIF_T_STR, 0, 0, 0);
    uint32_t t = a_var(HVT_DIF_VK_THREAD, HVT_DIF_T_INT, 0, 0, 0);
    uint32_t ts = a_var(HVT_DIF_VK_THREAD, HVT_DIF_T_STR, 0, 0, 0);
    uint32_t l = a_var(HVT_DIF_VK_LOCAL, HVT_DIF_T_INT, 0, 0, 0);
    uint32_t ls = a_var(HVT_DIF_VK_LOCAL, HVT_DIF_T_STR, 0, 0, 0);
    uint32_t av = a_var(HVT_DIF_VK_ASSOC, HVT_DIF_T_INT, 2, HVT_DIF_T_INT, HVT_DIF_T_STR);
    uint32_t as = a_var(HVT_DIF_VK_ASSOC, HVT_DIF_T_STR, 1, HVT_DIF_T_INT, 0);
    /* clause 0: stores */
    II(VAR, 1, 0, HVT_DIF_V_ARG0); II(STGV, 0, 1, g);
    II(VAR, 2, 0, HVT_DIF_V_EXECNAME); II(STGV, 0, 2, gs);
    II(VAR, 3, 0, HVT_DIF_V_TID); I3(ADD, 3, 3, 3); II(STTV, 0, 3, t);
    SCONST(4, "thr"); II(STTV, 0, 4, ts);
    LDI(5, 5); II(STLV, 0, 5, l);
    SCONST(6, "loc"); II(STLV, 0, 6, ls);
    I0(TCLR); LDI(7, 1); TPUSH(7); SCONST(8, "x"); TPUSH(8); LDI(9, 10); II(STAV, 0, 9, av);
    I0(TCLR); LDI(7, 2); TPUSH(7); SCONST(8, "y"); TPUSH(8); LDI(9, 20); II(STAV, 0, 9, av);
    I0(TCLR); LDI(7, 3); TPUSH(7); SCONST(8, "three"); II(STAV, 0, 8, as);
    a_end();
    /* clause 1: loads */
    ACT(0);
    II(LDGV, 1, 0, g); EMIT(1);
    II(LDGV, 1, 0, gs); EMIT(1);
    II(LDTV, 1, 0, t); EMIT(1);
    II(LDTV, 1, 0, ts); EMIT(1);
    II(LDLV, 1, 0, l); EMIT(1);
    II(LDLV, 1, 0, ls); EMIT(1);
    I0(TCLR); LDI(7, 1); TPUSH(7); SCONST(8, "x"); TPUSH(8); II(LDAV, 1, 0, av); EMIT(1);
    I0(TCLR); LDI(7, 2); TPUSH(7); SCONST(8, "y"); TPUSH(8); II(LDAV, 1, 0, av); EMIT(1);
    I0(TCLR); LDI(7, 1); TPUSH(7); SCONST(8, "y"); TPUSH(8); II(LDAV, 1, 0, av); EMIT(1);
    I0(TCLR); LDI(7, 3); TPUSH(7); II(LDAV, 1, 0, as); EMIT(1);
    I0(TCLR); LDI(7, 4); TPUSH(7); II(LDAV, 1, 0, as); EMIT(1);
    a_end();
    /* clause 2: deletes (0 and "") */
    LDI(1, 0); II(STTV, 0, 1, t);
    SCONST(2, ""); II(STTV, 0, 2, ts);
    I0(TCLR); LDI(7, 1); TPUSH(7); SCONST(8, "x"); TPUSH(8); II(STAV, 0, 1, av);
    I0(TCLR); LDI(7, 3); TPUSH(7); II(STAV, 0, 2, as);
    a_end();
    a_probe(1, 2, 0, 1);
    a_probe(2, 1, 1);
    a_probe(3, 1, 2);
    p_free(&P);
    CHECK(p_load(&P, 2), "vars program");
    CHECK(dif_fire(P.st, 0, 1, &F) == 2, "two clauses");
    drain(&P, 0);
    const uint64_t *w = nrecs == 1 ? recs[0].w + 1 : NULL;
    CHECK(w && recs[0].h.clause == 1 && w[0] == 1000 && str_is(w, 1, "bash-but-longer-") &&
          w[4] == 102 && str_is(w, 5, "thr") && w[6] == 5 && str_is(w, 7, "loc") &&
          w[8] == 10 && w[9] == 20 && w[10] == 0 && str_is(w, 11, "three") && str_is(w, 12, ""),
          "every kind of variable stored and loaded; this-> across clauses");
    /* another firing: this-> is fresh; on another CPU the globals are the same */
    dif_fire(P.st, 1, 2, &F);
    drain(&P, 1);
    w = nrecs == 1 ? recs[0].w + 1 : NULL;
    CHECK(w && w[0] == 1000 && w[4] == 102 && w[6] == 0 && str_is(w, 7, ""),
          "this-> reset by a new firing, globals shared");
    F.v[HVT_DIF_V_TID] = 52;
    dif_fire(P.st, 0, 2, &F);
    drain(&P, 0);
    w = nrecs == 1 ? recs[0].w + 1 : NULL;
    CHECK(w && w[4] == 0 && str_is(w, 5, ""), "self-> of another thread: 0 and \"\"");
    F.v[HVT_DIF_V_TID] = 51;
    dif_fire(P.st, 0, 3, &F);
    dif_fire(P.st, 0, 2, &F);
    drain(&P, 0);
    w = nrecs == 1 ? recs[0].w + 1 : NULL;
    CHECK(w && w[4] == 0 && str_is(w, 5, "") && w[8] == 0 && w[9] == 20 && str_is(w, 11, ""),
          "storing 0 and \"\" deletes");
    int nfree = 0;
    for (uint32_t i = P.st->dyn_free; i && nfree < 100; nfree++)
        i = ((struct dif_dyn_ent *)(P.st->dyn + (size_t)(i - 1) * P.st->dyn_chunk))->next;
    CHECK(nfree == 4, "deleted entries' chunks are free again: %d", nfree);

    /* dynvarsize counts keys and values, as DTrace's (dtrace-utils: dynvarsize / (tuple +
     * value) elements): 15 bytes hold no 16-byte thread-local (refused, as DTrace's "Enabling
     * exceeds size of buffer"), 16 hold one; storing 0 into others takes no room (dtrace-utils'
     * tvar/tst.store_zero_nop.d: no drop) */
    a_new();
    A.hdr.dynvarsize = 15;
    t = a_var(HVT_DIF_VK_THREAD, HVT_DIF_T_INT, 0, 0, 0);
    LDI(1, 1); II(STTV, 0, 1, t); LDI(1, 0); II(STTV, 0, 1, t + 1); II(STTV, 0, 1, t + 2);
    ACT(0); II(LDTV, 1, 0, t); EMIT(1); a_end();
    (void)a_var(HVT_DIF_VK_THREAD, HVT_DIF_T_INT, 0, 0, 0);
    (void)a_var(HVT_DIF_VK_THREAD, HVT_DIF_T_INT, 0, 0, 0);
    a_probe(1, 1, 0);
    p_free(&P);
    {
        size_t len;
        uint8_t *img = a_build(&len);
        struct dif_verr e;
        int rc = dif_verify(img, len, &e);
        CHECK(rc == DIF_EINVAL && e.reason && !strcmp(e.reason, "dynvarsize holds no dynamic variable"),
              "dynvarsize 15: refused (%s)", rc ? e.reason : "accepted");
        free(img);
    }
    A.hdr.dynvarsize = 16;
    CHECK(p_load(&P, 1) && P.st->dyn_nchunks == 1, "dynvarsize 16: one thread-local");
    dif_fire(P.st, 0, 1, &F);
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].h.type == HVT_DREC_DATA && recs[0].w[1] == 1,
          "self->a = 1 kept, self->b = self->c = 0 stored with no drop");

    /* exhaustion: 4 chunks, 10 threads storing */
    a_new();
    A.hdr.dynvarsize = 4 * (8 + 8);
    t = a_var(HVT_DIF_VK_THREAD, HVT_DIF_T_INT, 0, 0, 0);
    LDI(1, 1); II(STTV, 0, 1, t); a_end();
    LDI(1, 0); II(STTV, 0, 1, t); a_end();
    ACT(0); II(LDTV, 1, 0, t); EMIT(1); a_end();
    a_probe(1, 1, 0);
    a_probe(2, 1, 1);
    a_probe(3, 1, 2);
    p_free(&P);
    CHECK(p_load(&P, 1) && P.st->dyn_nchunks == 4, "4 chunks");
    for (int i = 1; i <= 10; i++) {
        F.v[HVT_DIF_V_TID] = (uint64_t)i;
        dif_fire(P.st, 0, 1, &F);
    }
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].h.type == HVT_DREC_DYNDROPS && recs[0].h.arg == 6,
          "6 dynamic variable drops reported");
    F.v[HVT_DIF_V_TID] = 1;
    dif_fire(P.st, 0, 2, &F);               /* delete one */
    F.v[HVT_DIF_V_TID] = 11;
    dif_fire(P.st, 0, 1, &F);
    dif_fire(P.st, 0, 3, &F);
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].h.type == HVT_DREC_DATA && recs[0].w[1] == 1,
          "a deleted entry's room is used again");
    firing_reset();
}

/* ------------------------------------------------------------------ aggregations */

struct aent { uint16_t agg, cpu; uint32_t key_len, nb; const uint8_t *key; const int64_t *b; };
static uint8_t snapbuf[1 << 20] __attribute__((aligned(8)));
static struct aent aents[512];
static int snap(struct prog *p, unsigned cpu)
{
    uint32_t cur = 0;
    long n = dif_agg_snapshot(p->st, cpu, snapbuf, sizeof(snapbuf), &cur);
    int k = 0;
    for (long o = 0; o < n && k < 512; k++) {
        struct hvt_dagg_rec r;
        memcpy(&r, snapbuf + o, sizeof(r));
        aents[k] = (struct aent){ r.agg, r.cpu, r.key_len, r.nbuckets, snapbuf + o + 16,
                                  (const int64_t *)(snapbuf + o + 16 + r.key_len) };
        if (r.len != 16 + r.key_len + 8 * r.nbuckets)
            printf("bad agg record\n");
        o += r.len;
    }
    return k;
}
static const struct aent *agg_find(int n, uint16_t agg)
{
    for (int i = 0; i < n; i++)
        if (aents[i].agg == agg)
            return &aents[i];
    return NULL;
}
/* nb buckets equal to the sparse list {index, value}... ended by -1 */
static bool buckets_are(const struct aent *e, uint32_t nb, ...)
{
    int64_t want[1024] = { 0 };
    va_list ap;
    va_start(ap, nb);
    for (int i; (i = va_arg(ap, int)) >= 0; )
        want[i] = va_arg(ap, int64_t);
    va_end(ap);
    if (!e || e->nb != nb)
        return false;
    for (uint32_t i = 0; i < nb; i++)
        if (e->b[i] != want[i]) {
            printf("  bucket %u: %lld want %lld\n", i, (long long)e->b[i], (long long)want[i]);
            return false;
        }
    return true;
}
#define V(x) ((int64_t)(x))

static void test_aggs(void)
{
    a_new();
    a_agg(HVT_DIF_AGG_COUNT, 0, 0, 0, 0, 0, 0, 0, 1);
    a_agg(HVT_DIF_AGG_SUM, 0, 0, 0, 0, 0, 0, 0, 1);
    a_agg(HVT_DIF_AGG_MIN, 0, 0, 0, 0, 0, 0, 0, 1);
    a_agg(HVT_DIF_AGG_MAX, 0, 0, 0, 0, 0, 0, 0, 1);
    a_agg(HVT_DIF_AGG_AVG, 0, 0, 0, 0, 0, 0, 0, 2);
    a_agg(HVT_DIF_AGG_STDDEV, 0, 0, 0, 0, 0, 0, 0, 4);
    a_agg(HVT_DIF_AGG_QUANTIZE, 0, 0, 0, 0, 0, 0, 0, 127);
    a_agg(HVT_DIF_AGG_LQUANTIZE, 0, 0, 0, 0, 10, 2, 0, 7);        /* levels 5 */
    a_agg(HVT_DIF_AGG_LQUANTIZE, 0, 0, 0, -10, 10, 5, 0, 6);      /* levels 4 */
    a_agg(HVT_DIF_AGG_LLQUANTIZE, 0, 0, 0, 10, 0, 2, 10, 57);
    a_agg(HVT_DIF_AGG_LLQUANTIZE, 0, 0, 0, 2, 0, 3, 4, 19);
    a_agg(HVT_DIF_AGG_COUNT, 2, HVT_DIF_T_STR, HVT_DIF_T_INT, 0, 0, 0, 0, 1);
    a_agg(HVT_DIF_AGG_QUANTIZE, 0, 0, 0, 0, 0, 0, 0, 127);
    a_agg(HVT_DIF_AGG_STDDEV, 0, 0, 0, 0, 0, 0, 0, 4);
    I0(TCLR);
    II(VAR, 1, 0, HVT_DIF_V_ARG0);
    a_i(HVT_DIF_OP_AGG, 0, 0, 0, 0);
    for (int k = 1; k <= 10; k++)
        a_i(HVT_DIF_OP_AGG, 0, 1, 0, k);
    II(VAR, 2, 0, HVT_DIF_V_EXECNAME); TPUSH(2);
    II(VAR, 3, 0, HVT_DIF_V_ARG0 + 1); TPUSH(3);
    a_i(HVT_DIF_OP_AGG, 0, 0, 0, 11);
    a_end();
    I0(TCLR); II(VAR, 1, 0, HVT_DIF_V_ARG0); a_i(HVT_DIF_OP_AGG, 0, 1, 0, 12); a_end();
    I0(TCLR); II(VAR, 1, 0, HVT_DIF_V_ARG0); a_i(HVT_DIF_OP_AGG, 0, 1, 0, 13); a_end();
    a_probe(1, 1, 0);
    a_probe(2, 1, 1);
    a_probe(3, 1, 2);
    p_free(&P);
    CHECK(p_load(&P, 2), "aggregations program");
    static const int64_t vals[] = { 5, -3, 0, 12, 1000, 1, 2 };
    for (int i = 0; i < 7; i++) {
        F.v[HVT_DIF_V_ARG0] = (uint64_t)vals[i];
        F.v[HVT_DIF_V_ARG0 + 1] = i < 3 ? 1 : 2;
        dif_fire(P.st, 0, 1, &F);
    }
    /* quantize's edges (DTrace: bucket 63 is 0, 63+1+k holds [2^k, 2^(k+1)), 62-k holds
     * (-2^(k+1), -2^k], the ends take everything beyond 2^62) */
    static const int64_t qv[] = { 3, 4, -1, -2, -4, -5, INT64_MAX, INT64_MIN, 1ll << 62,
                                  -(1ll << 62), (1ll << 62) - 1, -((1ll << 62) - 1) };
    for (int i = 0; i < 12; i++) {
        F.v[HVT_DIF_V_ARG0] = (uint64_t)qv[i];
        dif_fire(P.st, 0, 2, &F);
    }
    static const int64_t sv[] = { 1ll << 40, 1ll << 40, 1ll << 40, -(1ll << 40), INT64_MIN };
    for (int i = 0; i < 5; i++) {
        F.v[HVT_DIF_V_ARG0] = (uint64_t)sv[i];
        dif_fire(P.st, 0, 3, &F);
    }
    firing_reset();
    int n = snap(&P, 0);
    CHECK(n == 15, "15 entries: %d", n);
    CHECK(buckets_are(agg_find(n, 0), 1, 0, V(7), -1), "count");
    CHECK(buckets_are(agg_find(n, 1), 1, 0, V(1017), -1), "sum");
    CHECK(buckets_are(agg_find(n, 2), 1, 0, V(-3), -1), "min");
    CHECK(buckets_are(agg_find(n, 3), 1, 0, V(1000), -1), "max");
    CHECK(buckets_are(agg_find(n, 4), 2, 0, V(7), 1, V(1017), -1), "avg: count, sum");
    /* 25+9+0+144+1000000+1+4 */
    CHECK(buckets_are(agg_find(n, 5), 4, 0, V(7), 1, V(1017), 2, V(1000183), -1), "stddev");
    /* 5 -> [4,8) 66; -3 -> (-4,-2] 61; 0 -> 63; 12 -> [8,16) 67; 1000 -> [512,1024) 73;
     * 1 -> 64; 2 -> 65 */
    CHECK(buckets_are(agg_find(n, 6), 127, 61, V(1), 63, V(1), 64, V(1), 65, V(1), 66, V(1),
                      67, V(1), 73, V(1), -1), "quantize");
    /* lquantize(0, 10, 2): [0] < 0, [1+i] [2i, 2i+2), [6] >= 10: -3 -> 0; 0, 1 -> 1; 2 -> 2;
     * 5 -> 3; 12, 1000 -> 6 */
    CHECK(buckets_are(agg_find(n, 7), 7, 0, V(1), 1, V(2), 2, V(1), 3, V(1), 6, V(2), -1),
          "lquantize(0, 10, 2)");
    /* lquantize(-10, 10, 5): [1] [-10,-5) [2] [-5,0) [3] [0,5) [4] [5,10) [5] >= 10:
     * -3 -> 2; 0, 1, 2 -> 3; 5 -> 4; 12, 1000 -> 5 */
    CHECK(buckets_are(agg_find(n, 8), 6, 2, V(1), 3, V(3), 4, V(1), 5, V(2), -1),
          "lquantize(-10, 10, 5)");
    /* llquantize(10, 0, 2, 10), dtrace-utils' symmetric layout: 9 buckets per order, [0] <=
     * -1000, [1..27] the negative orders, [28] |v| < 1, [29..37] 1..9, [38..46] 10..90,
     * [47..55] 100..900, [56] >= 1000: -3 -> 25; 0 -> 28; 1 -> 29; 2 -> 30; 5 -> 33; 12 -> 38;
     * 1000 -> 56 */
    CHECK(buckets_are(agg_find(n, 9), 57, 25, V(1), 28, V(1), 29, V(1), 30, V(1), 33, V(1), 38, V(1),
                      56, V(1), -1), "llquantize(10, 0, 2, 10)");
    /* llquantize(2, 0, 3, 4): 2 buckets per order (4 steps less the 2 below it), [9] |v| < 1:
     * order 0 [1,2) -> 10 (11 never fills); order 1 [2,4) width 1 -> 12, 13; order 2 [4,8)
     * width 2 -> 14, 15; order 3 [8,16) width 4 -> 16, 17; >= 16 -> 18; negatives mirrored:
     * -3 -> 5; 0 -> 9; 1 -> 10; 2 -> 12; 5 -> 14; 12 -> 17; 1000 -> 18 */
    CHECK(buckets_are(agg_find(n, 10), 19, 5, V(1), 9, V(1), 10, V(1), 12, V(1), 14, V(1), 17, V(1),
                      18, V(1), -1), "llquantize(2, 0, 3, 4)");
    CHECK(buckets_are(agg_find(n, 12), 127, 0, V(2), 1, V(1), 60, V(2), 61, V(1), 62, V(1),
                      65, V(1), 66, V(1), 125, V(1), 126, V(2), -1), "quantize edges");
    /* sum of squares: 4 * 2^80 + 2^126 = hi 2^18 + 2^62, lo 0; sum wraps */
    CHECK(buckets_are(agg_find(n, 13), 4, 0, V(5), 1, (int64_t)((1ull << 41) + (1ull << 63)),
                      3, V((1ll << 18) + (1ll << 62)), -1), "stddev's 128-bit sum of squares");
    int keyed = 0;
    for (int i = 0; i < n; i++) {
        if (aents[i].agg != 11)
            continue;
        keyed++;
        uint16_t klen;
        memcpy(&klen, aents[i].key, 2);
        int64_t k1;
        memcpy(&k1, aents[i].key + 24, 8);
        CHECK(aents[i].key_len == 32 && klen == 16 &&
              !memcmp(aents[i].key + 2, "bash-but-longer-", 16) &&
              aents[i].key[18] == 0 && aents[i].key[23] == 0 &&
              ((k1 == 1 && aents[i].b[0] == 3) || (k1 == 2 && aents[i].b[0] == 4)),
              "keyed count: (str, int) key encoded, counted");
    }
    CHECK(keyed == 2, "two keys");
}

static void test_agg_clear_snapshot(void)
{
    a_new();
    a_agg(HVT_DIF_AGG_COUNT, 0, 0, 0, 0, 0, 0, 0, 1);
    a_agg(HVT_DIF_AGG_MIN, 0, 0, 0, 0, 0, 0, 0, 1);
    a_agg(HVT_DIF_AGG_COUNT, 1, HVT_DIF_T_INT, 0, 0, 0, 0, 0, 1);
    I0(TCLR); II(VAR, 1, 0, HVT_DIF_V_ARG0);
    a_i(HVT_DIF_OP_AGG, 0, 0, 0, 0);
    a_i(HVT_DIF_OP_AGG, 0, 1, 0, 1);
    a_end();
    I0(TCLR);                              /* AGGCLR is refused (test_dif_bounds.c) */
    a_end();
    I0(TCLR); II(VAR, 1, 0, HVT_DIF_V_ARG0); TPUSH(1); a_i(HVT_DIF_OP_AGG, 0, 0, 0, 2); a_end();
    a_probe(1, 1, 0);
    a_probe(2, 1, 1);
    a_probe(3, 1, 2);
    p_free(&P);
    CHECK(p_load(&P, 2), "aggregation program");
    F.v[HVT_DIF_V_ARG0] = 5;
    dif_fire(P.st, 0, 1, &F);
    F.v[HVT_DIF_V_ARG0] = 7;
    dif_fire(P.st, 1, 1, &F);
    dif_fire(P.st, 1, 1, &F);
    int n = snap(&P, 0);
    CHECK(n == 2 && agg_find(n, 0)->b[0] == 1 && agg_find(n, 1)->b[0] == 5 && aents[0].cpu == 0,
          "cpu 0's aggregations");
    n = snap(&P, 1);
    CHECK(n == 2 && agg_find(n, 0)->b[0] == 2 && agg_find(n, 1)->b[0] == 7 && aents[0].cpu == 1,
          "cpu 1's aggregations");

    /* snapshot through a small buffer: 5 keyed entries of 32 bytes */
    for (int k = 1; k <= 5; k++) {
        F.v[HVT_DIF_V_ARG0] = (uint64_t)k;
        dif_fire(P.st, 0, 3, &F);
    }
    uint32_t cur = 0;
    long full = dif_agg_snapshot(P.st, 0, snapbuf, sizeof(snapbuf), &cur);
    CHECK(full == 2 * 24 + 5 * 32, "full snapshot %ld", full);
    static uint8_t part[4096];
    size_t got = 0;
    int calls = 0;
    long r;
    cur = 0;
    CHECK(dif_agg_snapshot(P.st, 0, part, 23, &cur) == DIF_ESMALL && cur == 0,
          "a buffer smaller than an entry: DIF_ESMALL, cursor kept");
    while ((r = dif_agg_snapshot(P.st, 0, part + got, 32, &cur)) > 0 && calls < 20) {
        got += (size_t)r;
        calls++;
    }
    CHECK(r == 0 && calls == 7 && got == (size_t)full && !memcmp(part, snapbuf, got),
          "resumed snapshot: %d calls, %zu bytes", calls, got);
    got = 0;
    calls = 0;
    cur = 0;
    while ((r = dif_agg_snapshot(P.st, 0, part + got, 70, &cur)) > 0 && calls < 20) {
        got += (size_t)r;
        calls++;
    }
    CHECK(r == 0 && calls == 4 && got == (size_t)full && !memcmp(part, snapbuf, got),
          "70-byte buffer: %d calls", calls);
    cur = 3;
    CHECK(dif_agg_snapshot(P.st, 0, part, sizeof(part), &cur) == DIF_EINVAL, "bad cursor");

    /* dif_agg_part takes the values out: each part holds what came since the previous one */
    {
        struct hvt_dagg_part ph;
        int64_t cnt = -1, mn = -1, k5 = -1;
        int parts = 0;
        cur = 0;
        for (long pn; (pn = dif_agg_part(P.st, 0, 9, part, 100, &cur)) > (long)sizeof ph && parts < 20; parts++)
            for (long o = sizeof ph; o < pn;) {
                struct hvt_dagg_rec r;
                memcpy(&r, part + o, sizeof r);
                int64_t v, key;
                memcpy(&v, part + o + sizeof r + r.key_len, 8);
                memcpy(&key, part + o + sizeof r, 8);
                if (r.agg == 0) cnt = v;
                if (r.agg == 1) mn = v;
                if (r.agg == 2 && key == 5) k5 = v;
                o += r.len;
            }
        memcpy(&ph, part, sizeof ph);
        CHECK(ph.flags == HVT_DAGG_LAST && ph.gen == 9 && ph.nrecs == 0 && parts >= 2 &&
              cnt == 1 && mn == 5 && k5 == 1, "part: %d parts, count %lld, key 5 %lld",
              parts, (long long)cnt, (long long)k5);
        n = snap(&P, 0);
        CHECK(n == 7 && agg_find(n, 2)->b[0] == 0 && aents[6].b[0] == 0,
              "after the part: keys stay, values reset");
        F.v[HVT_DIF_V_ARG0] = 5;
        dif_fire(P.st, 0, 3, &F);
        dif_fire(P.st, 0, 1, &F);
        n = snap(&P, 0);
        CHECK(agg_find(n, 0)->b[0] == 1 && agg_find(n, 1)->b[0] == 5 && aents[4].b[0] == 0 &&
              aents[6].b[0] == 1, "the next part holds only what came since");
    }

    /* weights (AGGW): quantize(arg0, 3), lquantize(arg0, 0, 10, 2, -2), llquantize(arg0, 10,
     * 0, 2, 10, arg1): the value's bucket gains the weight */
    a_new();
    a_agg(HVT_DIF_AGG_QUANTIZE, 0, 0, 0, 0, 0, 0, 0, 127);
    a_agg(HVT_DIF_AGG_LQUANTIZE, 0, 0, 0, 0, 10, 2, 0, 7);
    a_agg(HVT_DIF_AGG_LLQUANTIZE, 0, 0, 0, 10, 0, 2, 10, 57);
    I0(TCLR); II(VAR, 1, 0, HVT_DIF_V_ARG0); II(VAR, 2, 0, HVT_DIF_V_ARG0 + 1); LDI(3, 3); LDI(4, -2);
    a_i(HVT_DIF_OP_AGGW, 0, 1, 3, 0);
    a_i(HVT_DIF_OP_AGGW, 0, 1, 4, 1);
    a_i(HVT_DIF_OP_AGGW, 0, 1, 2, 2);
    a_end();
    a_probe(1, 1, 0);
    p_free(&P);
    CHECK(p_load(&P, 1), "weights program");
    F.v[HVT_DIF_V_ARG0] = 5, F.v[HVT_DIF_V_ARG0 + 1] = 1000;
    dif_fire(P.st, 0, 1, &F);
    F.v[HVT_DIF_V_ARG0] = 6, F.v[HVT_DIF_V_ARG0 + 1] = 7;
    dif_fire(P.st, 0, 1, &F);
    F.v[HVT_DIF_V_ARG0] = 0, F.v[HVT_DIF_V_ARG0 + 1] = -1;
    dif_fire(P.st, 0, 1, &F);
    n = snap(&P, 0);
    /* quantize: 0 -> 63, 5 and 6 -> 66 ([4, 8)); lquantize step 2: 0 -> 1, 5 -> 3, 6 -> 4;
     * llquantize: 0 -> 28, 5 -> 33, 6 -> 34 */
    CHECK(buckets_are(agg_find(n, 0), 127, 63, V(3), 66, V(6), -1) &&
          buckets_are(agg_find(n, 1), 7, 1, V(-2), 3, V(-2), 4, V(-2), -1) &&
          buckets_are(agg_find(n, 2), 57, 28, V(-1), 33, V(1000), 34, V(7), -1), "weighted buckets");
    F.v[HVT_DIF_V_ARG0 + 1] = 0;

    /* no room for new keys: counted, reported */
    a_new();
    A.hdr.aggsize = 256;
    a_agg(HVT_DIF_AGG_COUNT, 1, HVT_DIF_T_INT, 0, 0, 0, 0, 0, 1);
    I0(TCLR); II(VAR, 1, 0, HVT_DIF_V_ARG0); TPUSH(1); a_i(HVT_DIF_OP_AGG, 0, 0, 0, 0); a_end();
    a_probe(1, 1, 0);
    p_free(&P);
    CHECK(p_load(&P, 1), "small aggsize");
    for (int k = 0; k < 20; k++) {
        F.v[HVT_DIF_V_ARG0] = (uint64_t)k;
        dif_fire(P.st, 0, 1, &F);
    }
    n = snap(&P, 0);
    drain(&P, 0);
    CHECK(n > 0 && n < 20 && nrecs == 1 && recs[0].h.type == HVT_DREC_AGGDROPS &&
          recs[0].h.arg == (uint64_t)(20 - n), "aggregation drops: %d kept, %llu dropped", n,
          nrecs ? (unsigned long long)recs[0].h.arg : 0ull);
    firing_reset();
}

/* ------------------------------------------------------------------ buffers and probes */

static void test_buffer_full(void)
{
    a_new();
    A.hdr.bufsize = 256;                    /* 4 records of 56 bytes */
    ACT(0); II(VAR, 1, 0, HVT_DIF_V_ARG0); EMIT(1); a_end();
    a_probe(1, 1, 0);
    p_free(&P);
    CHECK(p_load(&P, 1), "small buffer");
    notified = 0;
    for (int i = 0; i < 10; i++) {
        F.v[HVT_DIF_V_ARG0] = (uint64_t)i;
        dif_fire(P.st, 0, 1, &F);
    }
    CHECK(notified == 1, "notify once until drained: %d", notified);
    CHECK(dif_drain(P.st, 0, dbuf, 39) == 0, "no room even for the drop record: nothing");
    drain(&P, 0);
    CHECK(nrecs == 5 && recs[0].h.type == HVT_DREC_DROPS && recs[0].h.arg == 6,
          "6 drops reported first");
    bool order = nrecs == 5;
    for (int i = 1; order && i < 5; i++)
        order = recs[i].h.type == HVT_DREC_DATA && recs[i].h.len == 56 && recs[i].w[1] == (uint64_t)(i - 1);
    CHECK(order, "the 4 records kept, in order");
    for (int i = 0; i < 4; i++) {
        F.v[HVT_DIF_V_ARG0] = (uint64_t)(100 + i);
        dif_fire(P.st, 0, 1, &F);
    }
    CHECK(notified == 2, "notified again after the drain");
    CHECK(dif_drain(P.st, 0, dbuf, 100) == 56 && ((uint64_t *)dbuf)[6] == 100,
          "partial drain: one record");
    drain(&P, 0);
    CHECK(nrecs == 3 && recs[0].w[1] == 101 && recs[2].w[1] == 103, "the rest next time");
    drain(&P, 0);
    CHECK(nrecs == 0, "empty");
    firing_reset();
}

static void test_many_probes(void)
{
    a_new();
    for (int k = 0; k < 4; k++) {
        ACT(0); II(VAR, 1, 0, HVT_DIF_V_ID); EMIT(1); LDI(2, k); EMIT(2); a_end();
    }
    for (uint32_t i = 0; i < 65536; i++)
        a_probe(7 + 3 * i, 1, (int)(i % 4));
    p_free(&P);
    CHECK(p_load(&P, 1), "65536 probes (%zu bytes)", P.len);
    struct { uint32_t id; int clause; } t[] = {
        { 7, 0 }, { 7 + 3 * 65535, 3 }, { 7 + 3 * 40001, 1 }, { 7 + 3 * 32768, 0 },
        { 8, -1 }, { 0, -1 }, { 0xffffffffu, -1 }, { 7 + 3 * 65536, -1 }, { 6, -1 },
    };
    for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        int rc = dif_fire(P.st, 0, t[i].id, &F);
        drain(&P, 0);
        if (t[i].clause < 0)
            CHECK(rc == DIF_ENOPROBE && nrecs == 0, "id %u: not a probe", t[i].id);
        else
            CHECK(rc == 1 && nrecs == 1 && recs[0].h.probe == t[i].id &&
                  recs[0].w[1] == t[i].id && recs[0].w[2] == (uint64_t)t[i].clause &&
                  recs[0].h.clause == t[i].clause, "id %u: its clause", t[i].id);
    }
    int bad = 0;
    for (uint32_t i = 0; i < 65536; i++) {
        const struct hvt_dif_probe *p = dif_probe_find(P.img, 7 + 3 * i);
        bad += !p || p->id != 7 + 3 * i || dif_probe_find(P.img, 8 + 3 * i);
    }
    CHECK(bad == 0, "every id found, no neighbor: %d bad", bad);
}

static void test_error_probe(void)
{
    a_new();
    A.hdr.error_probe = 99;
    LDI(1, 1); LDI(2, 0); I3(UDIV, 3, 1, 2); a_end();
    ACT(0);
    for (int i = 1; i <= 5; i++) {
        II(VAR, 1, 0, HVT_DIF_V_ARG0 + i);
        EMIT(1);
    }
    II(VAR, 1, 0, HVT_DIF_V_ID); EMIT(1);
    LDI(2, 0); I3(UDIV, 3, 1, 2);          /* its own fault: recorded, no recursion */
    a_end();
    ACT(1); II(VAR, 1, 0, HVT_DIF_V_ARG0 + 1); EMIT(1); a_end();
    a_probe(1, 2, 0, 2);
    a_probe(99, 1, 1);
    p_free(&P);
    CHECK(p_load(&P, 1), "error probe program");
    dif_fire(P.st, 0, 1, &F);
    drain(&P, 0);
    CHECK(nrecs == 3 && recs[0].h.type == HVT_DREC_ERROR && recs[0].h.probe == 1 &&
          recs[0].h.fault == HVT_DIF_F_DIVZERO && recs[0].h.pc == 2, "the fault's record");
    CHECK(nrecs == 3 && recs[1].h.type == HVT_DREC_DATA && recs[1].h.clause == 2 &&
          recs[1].w[1] == 1001, "the next clause still runs with the firing's args");
    CHECK(nrecs == 3 && recs[2].h.type == HVT_DREC_ERROR && recs[2].h.probe == 99 &&
          recs[2].h.clause == 1, "ERROR's own fault");
    /* ERROR's record is lost with its fault: fire ERROR's clause without its fault */
    a_new();
    A.hdr.error_probe = 99;
    LDI(1, 1); LDI(2, 0); I3(UDIV, 3, 1, 2); a_end();
    ACT(0);
    for (int i = 1; i <= 5; i++) {
        II(VAR, 1, 0, HVT_DIF_V_ARG0 + i);
        EMIT(1);
    }
    II(VAR, 1, 0, HVT_DIF_V_ID); EMIT(1);
    a_end();
    a_probe(7, 1, 0);      /* probe 7, whose clause's epid is 1: arg1 must say 7 */
    a_probe(99, 1, 1);
    p_free(&P);
    CHECK(p_load(&P, 1), "error probe program 2");
    dif_fire(P.st, 0, 7, &F);
    drain(&P, 0);
    CHECK(nrecs == 2 && recs[1].h.probe == 99 && recs[1].w[1] == 7 && recs[1].w[2] == 0 &&
          recs[1].w[3] == 2 && recs[1].w[4] == HVT_DTRACEFLT_DIVZERO && recs[1].w[5] == 0 &&
          recs[1].w[6] == 3, "ERROR fired as dtrace-utils numbers it: the probe's id, clause, pc, "
          "DTrace's fault number (DTRACEFLT_DIVZERO 4), address; its id is DTrace's 3");
}

/* epid is DTrace's: clause by clause, each clause's probes by ascending id; id is the probe's,
 * BEGIN/END/ERROR's DTrace's 1/2/3, so they come first. Three clauses over probes 5 (clauses
 * 1, 2), 9 (0, 1), 12 (2) and BEGIN (0): clause 0 has epids 1 (BEGIN) and 2 (9), clause 1 3 (5)
 * and 4 (9), clause 2 5 (5) and 6 (12). */
static void test_epids(void)
{
    a_new();
    A.hdr.begin_probe = 0xffffff01u;
    A.hdr.end_probe = 0xffffff02u;
    for (int k = 0; k < 3; k++) {
        ACT(0); II(VAR, 1, 0, HVT_DIF_V_EPID); EMIT(1); II(VAR, 1, 0, HVT_DIF_V_ID); EMIT(1);
        LDI(2, k); EMIT(2); a_end();
    }
    a_probe(5, 2, 1, 2);
    a_probe(9, 2, 0, 1);
    a_probe(12, 1, 2);
    a_probe(0xffffff01u, 1, 0);
    p_free(&P);
    CHECK(p_load(&P, 1), "epid program");
    struct { uint32_t id; uint64_t want[2][3]; int n; } t[] = {
        { 5, { { 3, 5, 1 }, { 5, 5, 2 } }, 2 },
        { 9, { { 2, 9, 0 }, { 4, 9, 1 } }, 2 },
        { 12, { { 6, 12, 2 } }, 1 },
        { 0xffffff01u, { { 1, 1, 0 } }, 1 },
    };
    for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        dif_fire(P.st, 0, t[i].id, &F);
        drain(&P, 0);
        CHECK(nrecs == t[i].n, "probe %#x: %d records", t[i].id, nrecs);
        for (int j = 0; j < t[i].n && j < nrecs; j++)
            CHECK(recs[j].w[1] == t[i].want[j][0] && recs[j].w[2] == t[i].want[j][1] &&
                  recs[j].w[3] == t[i].want[j][2], "probe %#x clause %llu: epid %llu id %llu",
                  t[i].id, (unsigned long long)recs[j].w[3], (unsigned long long)recs[j].w[1],
                  (unsigned long long)recs[j].w[2]);
    }
}

/* Two CPUs firing at once: per-CPU aggregations, shared dynamic variables. */
struct thr { unsigned cpu; struct dif_firing f; int n; };
static void *thr_main(void *arg)
{
    struct thr *t = arg;
    for (int i = 0; i < t->n; i++)
        dif_fire(P.st, t->cpu, 1, &t->f);
    return NULL;
}
static void test_concurrency(void)
{
    a_new();
    uint32_t tv = a_var(HVT_DIF_VK_THREAD, HVT_DIF_T_INT, 0, 0, 0);
    uint32_t av = a_var(HVT_DIF_VK_ASSOC, HVT_DIF_T_INT, 1, HVT_DIF_T_INT, 0);
    a_agg(HVT_DIF_AGG_COUNT, 0, 0, 0, 0, 0, 0, 0, 1);
    II(LDTV, 1, 0, tv); II(ADDI, 1, 1, 1); II(STTV, 0, 1, tv);
    I0(TCLR); II(VAR, 2, 0, HVT_DIF_V_TID); TPUSH(2);
    II(LDAV, 3, 0, av); II(ADDI, 3, 3, 2); II(STAV, 0, 3, av);
    I0(TCLR); a_i(HVT_DIF_OP_AGG, 0, 0, 0, 0);
    a_end();
    ACT(0); II(LDTV, 1, 0, tv); EMIT(1); I0(TCLR); II(VAR, 2, 0, HVT_DIF_V_TID); TPUSH(2);
    II(LDAV, 3, 0, av); EMIT(3); a_end();
    a_probe(1, 1, 0);
    a_probe(2, 1, 1);
    p_free(&P);
    CHECK(p_load(&P, 2), "concurrency program");
    struct thr t[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        t[i].cpu = (unsigned)i;
        t[i].f = F;
        t[i].f.v[HVT_DIF_V_TID] = 500 + (uint64_t)i;
        t[i].n = 50000;
        pthread_create(&th[i], NULL, thr_main, &t[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    int64_t total = 0;
    for (unsigned c = 0; c < 2; c++) {
        int n = snap(&P, c);
        total += n ? aents[0].b[0] : 0;
    }
    CHECK(total == 100000, "per-CPU counts add up: %lld", (long long)total);
    for (int i = 0; i < 2; i++) {
        dif_fire(P.st, 0, 2, &t[i].f);
        drain(&P, 0);
        CHECK(nrecs == 1 && recs[0].w[1] == 50000 && recs[0].w[2] == 100000,
              "thread %d's self-> and its assoc element", i);
    }
}

/* ------------------------------------------------------------------ speculations */

/* The speculation program: probe 1 speculation() recorded; probe 2 speculate(arg0) then
 * trace(arg1); probe 3 commit(arg0); probe 4 discard(arg0); probe 5 speculate(arg0) then a
 * fault. Expected behaviour is DTrace's (dtrace.c: dtrace_speculation*, its probe loop). */
static void spec_prog(uint32_t nspec, uint32_t specsize, uint32_t bufsize)
{
    a_new();
    A.hdr.nspec = nspec;
    A.hdr.specsize = specsize;
    A.hdr.bufsize = bufsize;
    II(SPECNEW, 1, 0, 0); ACT(0); EMIT(1); a_end();
    II(VAR, 1, 0, HVT_DIF_V_ARG0); a_i(HVT_DIF_OP_SPECULATE, 0, 1, 0, 0);
    ACT(0); II(VAR, 2, 0, HVT_DIF_V_ARG0 + 1); EMIT(2); a_end();
    II(VAR, 1, 0, HVT_DIF_V_ARG0); a_i(HVT_DIF_OP_COMMIT, 0, 1, 0, 0); a_end();
    II(VAR, 1, 0, HVT_DIF_V_ARG0); a_i(HVT_DIF_OP_DISCARD, 0, 1, 0, 0); a_end();
    II(VAR, 1, 0, HVT_DIF_V_ARG0); a_i(HVT_DIF_OP_SPECULATE, 0, 1, 0, 0);
    ACT(0); LDI(2, 0); I3(UDIV, 3, 2, 2); EMIT(3); a_end();
    for (int i = 0; i < 5; i++)
        a_probe((uint32_t)i + 1, 1, i);
}
/* fire probe id on cpu with arg0, arg1 (and tsc) */
static void sfire(unsigned cpu, uint32_t id, uint64_t a0, uint64_t a1)
{
    F.v[HVT_DIF_V_ARG0] = a0;
    F.v[HVT_DIF_V_ARG0 + 1] = a1;
    F.tsc = 5000 + a1;
    dif_fire(P.st, cpu, id, &F);
}
static uint64_t snew(unsigned cpu)
{
    sfire(cpu, 1, 0, 0);
    drain(&P, cpu);
    return nrecs == 1 && recs[0].h.type == HVT_DREC_DATA ? recs[0].w[1] : ~0ull;
}
static void test_spec(void)
{
    spec_prog(2, 256, 64 << 10);
    p_free(&P);
    CHECK(p_load(&P, 2), "speculation program");
    /* speculation(): 1, 2, then none (counted as unavailable, reported by the next drain) */
    CHECK(snew(0) == 1 && snew(1) == 2, "speculation() gives 1 then 2");
    sfire(0, 1, 0, 0);
    drain(&P, 0);
    CHECK(nrecs == 2 && recs[0].h.type == HVT_DREC_SPECUNAVAIL && recs[0].h.arg == 1 &&
          recs[1].w[1] == 0, "a third: 0, one failed speculation (unavailable)");
    /* speculated records go nowhere until the commit; each CPU keeps its own */
    sfire(0, 2, 1, 10); sfire(1, 2, 1, 11); sfire(0, 2, 1, 12); sfire(0, 2, 2, 20);
    drain(&P, 0);
    int n0 = nrecs;
    drain(&P, 1);
    CHECK(n0 == 0 && nrecs == 0, "nothing in the principal buffers yet (%d, %d)", n0, nrecs);
    /* commit(1) on CPU 1: CPU 0's part (free lock) and CPU 1's go to their principal buffers,
     * in order, stamped with the commit's tsc; speculation 2 stays */
    sfire(1, 3, 1, 99);
    drain(&P, 0);
    CHECK(nrecs == 2 && recs[0].w[1] == 10 && recs[1].w[1] == 12 && recs[0].h.cpu == 0 &&
          recs[0].h.clause == 1 && recs[0].h.probe == 2 && recs[0].h.tsc == 5099,
          "CPU 0's committed records: 10, 12, the commit's tsc");
    drain(&P, 1);
    CHECK(nrecs == 1 && recs[0].w[1] == 11 && recs[0].h.cpu == 1, "CPU 1's: 11");
    sfire(0, 3, 1, 98);                       /* committed already: nothing */
    drain(&P, 0);
    CHECK(nrecs == 0, "a second commit does nothing");
    /* discard(2): its record is gone; the id is free again, and so is 1 */
    sfire(1, 4, 2, 0);
    drain(&P, 0);
    n0 = nrecs;
    drain(&P, 1);
    CHECK(n0 == 0 && nrecs == 0, "discarded: nothing");
    CHECK(snew(1) == 1 && snew(0) == 2, "ids recycle: 1 and 2 again");
    /* speculate(0) and speculate() on an id not active: the record is dropped silently */
    sfire(0, 4, 2, 0);                        /* 2 is no longer active */
    sfire(0, 2, 0, 30); sfire(0, 2, 2, 31);
    sfire(0, 3, 2, 0);
    drain(&P, 0);
    CHECK(nrecs == 0, "speculate(0) / on an inactive one: dropped silently, not counted");
    /* speculate(3) > nspec: an illegal operation (DTrace's ILLOP) */
    sfire(0, 2, 3, 40);
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].h.type == HVT_DREC_ERROR && recs[0].h.fault == HVT_DIF_F_ILLOP &&
          recs[0].h.pc == 1, "speculate(3): ILLOP");
    sfire(0, 3, 7, 0);
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].h.fault == HVT_DIF_F_ILLOP, "commit(7): ILLOP");
    /* a fault in a speculated clause: the error record goes to the principal buffer, the
     * partial speculative record is abandoned */
    sfire(0, 5, 1, 50);
    sfire(0, 3, 1, 0);
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].h.type == HVT_DREC_ERROR && recs[0].h.fault == HVT_DIF_F_DIVZERO,
          "a speculated clause's fault: only its error record");
    /* a full speculative buffer: 256 bytes hold 4 records of 56; 6 speculated, committed: 4
     * kept, 2 speculative drops reported */
    CHECK(snew(0) == 1, "speculation 1 again");
    for (int i = 0; i < 6; i++)
        sfire(0, 2, 1, 60 + (uint64_t)i);
    sfire(1, 3, 1, 0);
    drain(&P, 0);
    CHECK(nrecs == 5 && recs[0].h.type == HVT_DREC_SPECDROPS && recs[0].h.arg == 2 &&
          recs[1].w[1] == 60 && recs[4].w[1] == 63, "4 committed, 2 speculative drops");
    /* ... and those of a discarded one are not reported (DTrace's) */
    CHECK(snew(0) == 1, "speculation 1 again (2)");
    for (int i = 0; i < 6; i++)
        sfire(0, 2, 1, 70 + (uint64_t)i);
    sfire(0, 4, 1, 0);
    drain(&P, 0);
    CHECK(nrecs == 0, "a discarded one's drops are not reported");
    /* busy: commit(1) on CPU 0 while CPU 1 holds its buffer lock (it is firing): CPU 1's part
     * waits, so speculation() with 2 active... */
    CHECK(snew(0) == 1 && snew(0) == 2, "both taken");
    sfire(1, 2, 1, 80);
    dif_lock(&P.st->cpus[1].buf_lock);
    sfire(0, 3, 1, 81);
    sfire(0, 1, 0, 0);
    drain(&P, 0);
    CHECK(nrecs == 2 && recs[0].h.type == HVT_DREC_SPECBUSY && recs[0].h.arg == 1 &&
          recs[1].w[1] == 0, "none free, one still committing: a failed speculation (busy)");
    dif_unlock(&P.st->cpus[1].buf_lock);
    sfire(1, 4, 3 - 1, 0);                    /* CPU 1's next firing cleans its part first */
    drain(&P, 1);
    CHECK(nrecs == 1 && recs[0].w[1] == 80 && recs[0].h.tsc == 5081,
          "CPU 1 committed its part when it fired again");
    CHECK(snew(0) == 1 && snew(1) == 2, "both free again");
    /* the same through a drain: CPU 1's part waits until dif_drain(1) */
    sfire(1, 2, 1, 90);
    dif_lock(&P.st->cpus[1].buf_lock);
    sfire(0, 3, 1, 91);
    dif_unlock(&P.st->cpus[1].buf_lock);
    drain(&P, 1);
    CHECK(nrecs == 1 && recs[0].w[1] == 90, "the drain committed CPU 1's part");
    sfire(0, 4, 2, 0);
    /* a commit into a full principal buffer: the records that do not fit are drops */
    spec_prog(1, 4096, 128);                  /* 2 records of 56 fit */
    p_free(&P);
    CHECK(p_load(&P, 1), "small principal buffer");
    CHECK(snew(0) == 1, "speculation");
    for (int i = 0; i < 5; i++)
        sfire(0, 2, 1, 100 + (uint64_t)i);
    sfire(0, 3, 1, 0);
    drain(&P, 0);
    CHECK(nrecs == 3 && recs[0].h.type == HVT_DREC_DROPS && recs[0].h.arg == 3 &&
          recs[1].w[1] == 100 && recs[2].w[1] == 101, "2 committed, 3 drops");
    /* nspec 0: speculation() never succeeds */
    spec_prog(0, 0, 64 << 10);
    p_free(&P);
    CHECK(p_load(&P, 1), "nspec 0");
    sfire(0, 1, 0, 0);
    drain(&P, 0);
    CHECK(nrecs == 2 && recs[0].h.type == HVT_DREC_SPECUNAVAIL && recs[1].w[1] == 0,
          "nspec 0: unavailable");
    firing_reset();
}

/* Two CPUs at once, nspec 1: each firing takes the speculation or fails; a taker speculates
 * one record and commits it. Every firing is accounted for: a record or a failure. */
static void test_spec_concurrency(void)
{
    a_new();
    A.hdr.nspec = 1;
    A.hdr.bufsize = 4 << 20;
    uint32_t lv = a_var(HVT_DIF_VK_LOCAL, HVT_DIF_T_INT, 0, 0, 0);
    II(SPECNEW, 1, 0, 0); II(STLV, 0, 1, lv); a_end();
    II(LDLV, 1, 0, lv); a_i(HVT_DIF_OP_SPECULATE, 0, 1, 0, 0);
    ACT(0); II(VAR, 2, 0, HVT_DIF_V_ARG0); EMIT(2); a_end();
    II(LDLV, 1, 0, lv); a_i(HVT_DIF_OP_COMMIT, 0, 1, 0, 0); a_end();
    a_probe(1, 3, 0, 1, 2);
    p_free(&P);
    CHECK(p_load(&P, 2), "speculation concurrency program");
    struct thr t[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        t[i].cpu = (unsigned)i;
        t[i].f = F;
        t[i].f.v[HVT_DIF_V_ARG0] = 7 + (uint64_t)i;
        t[i].n = 50000;
        pthread_create(&th[i], NULL, thr_main, &t[i]);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    long data = 0, fails = 0, busy = 0, wrong = 0;
    for (unsigned c = 0; c < 2; c++) {
        long n = dif_drain(P.st, c, dbuf, sizeof(dbuf));   /* more than recs[] holds */
        for (long o = 0; o < n; ) {
            struct hvt_drec h;
            memcpy(&h, dbuf + o, sizeof(h));
            if (h.len < sizeof(h) || h.len % 8) {
                wrong++;
                break;
            }
            if (h.type == HVT_DREC_DATA)
                data++, wrong += ((const uint64_t *)(dbuf + o + sizeof(h)))[1] != 7 + c;
            else if (h.type == HVT_DREC_SPECUNAVAIL || h.type == HVT_DREC_SPECBUSY)
                fails += (long)h.arg, busy += h.type == HVT_DREC_SPECBUSY;
            else
                wrong++;
            o += h.len;
        }
    }
    printf("speculation concurrency: %ld committed, %ld failed (%s busy)\n", data, fails,
           busy ? "some" : "none");
    CHECK(data + fails == 100000 && data > 0 && wrong == 0,
          "every firing committed or failed: %ld + %ld (%ld wrong)", data, fails, wrong);
}

/* ------------------------------------------------------------------ the verifier */

static int nrefused;
static void refused_img(uint8_t *img, size_t len, const char *why, int clause, int insn,
                        const char *what)
{
    struct dif_verr e;
    int rc = dif_verify(img, len, &e);
    bool ok = rc == DIF_EINVAL && e.reason && !strcmp(e.reason, why) &&
              (clause == -2 || e.clause == clause) && (insn == -2 || e.insn == insn);
    CHECK(ok, "%s: got %d '%s' clause %d insn %d; want '%s' clause %d insn %d", what, rc,
          e.reason ? e.reason : "(accepted)", e.clause, e.insn, why, clause, insn);
    nrefused += ok;
}
/* The current program (its open clause ended with RET, probe 1 on clause 0 if none) */
static void refused(const char *why, int clause, int insn, const char *what)
{
    if (A.open)
        a_end();
    if (!A.nprobes)
        a_probe(1, 1, 0);
    size_t len;
    uint8_t *img = a_build(&len);
    refused_img(img, len, why, clause, insn, what);
    free(img);
}

/* Scalar arrays (LDSA/STSA on a GLOBAL or LOCAL variable with nelem) and CHKIDX: the elements
 * are kept, an index >= nelem (unsigned: -1 too) faults BADINDEX with the index, a this->
 * array reads as zeros in the next firing; the verifier keeps the ops and the kinds apart. */
static uint32_t a_array(int kind, int type, uint32_t nelem)
{
    uint32_t v = a_var(kind, type, 0, 0, 0);
    A.vars[v].nelem = nelem;
    return v;
}
static void test_arrays(void)
{
    a_new();
    uint32_t g = a_array(HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 5);
    uint32_t gs = a_array(HVT_DIF_VK_GLOBAL, HVT_DIF_T_STR, 3);
    uint32_t l = a_array(HVT_DIF_VK_LOCAL, HVT_DIF_T_INT, 4);
    uint32_t sc = a_var(HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 0, 0, 0);
    /* clause 0: a[4] = 44, a[0] = 10, s[2] = "two", this->l[3] = 33, the scalar after a = 7 */
    LDI(1, 4); LDI(2, 44); a_i(HVT_DIF_OP_STSA, 0, 1, 2, (int32_t)g);
    LDI(1, 0); LDI(2, 10); a_i(HVT_DIF_OP_STSA, 0, 1, 2, (int32_t)g);
    LDI(1, 2); SCONST(2, "two"); a_i(HVT_DIF_OP_STSA, 0, 1, 2, (int32_t)gs);
    LDI(1, 3); LDI(2, 33); a_i(HVT_DIF_OP_STSA, 0, 1, 2, (int32_t)l);
    LDI(2, 7); II(STGV, 0, 2, sc);
    a_end();
    /* clause 1: read them back (and this->l[3] again, 0 in a later firing) */
    ACT(0);
    for (int i = 0; i < 5; i++) { LDI(1, i); II(LDSA, 3, 1, g); EMIT(3); }
    LDI(1, 2); II(LDSA, 3, 1, gs); EMIT(3);
    LDI(1, 1); II(LDSA, 3, 1, gs); EMIT(3);
    LDI(1, 3); II(LDSA, 3, 1, l); EMIT(3);
    II(LDGV, 3, 0, sc); EMIT(3);
    a_end();
    /* clause 2: an index out of bounds, from a register (5, then -1) */
    ACT(0); LDI(1, 5); II(LDSA, 3, 1, g); EMIT(3); a_end();
    ACT(0); LDI(1, -1); LDI(2, 1); a_i(HVT_DIF_OP_STSA, 0, 1, 2, (int32_t)g); a_end();
    /* clause 4: CHKIDX 16 passes 15, faults at 16 */
    ACT(0); LDI(1, 15); II(CHKIDX, 0, 1, 16); EMIT(1); LDI(1, 16); II(CHKIDX, 0, 1, 16); EMIT(1); a_end();
    a_probe(1, 2, 0, 1);
    a_probe(2, 1, 1);
    a_probe(3, 1, 2);
    a_probe(4, 1, 3);
    a_probe(5, 1, 4);
    p_free(&P);
    CHECK(p_load(&P, 2), "arrays: program accepted");
    if (!P.st)
        return;
    dif_fire(P.st, 0, 1, &F);
    drain(&P, 0);
    const uint64_t *w = nrecs == 1 && recs[0].h.type == HVT_DREC_DATA ? recs[0].w + 1 : NULL;
    CHECK(w && w[0] == 10 && w[1] == 0 && w[2] == 0 && w[3] == 0 && w[4] == 44 && str_is(w, 5, "two") &&
          str_is(w, 6, "") && w[7] == 33 && w[8] == 7, "arrays: elements stored and read, others 0, the scalar apart");
    dif_fire(P.st, 1, 2, &F);        /* another CPU, a later firing: globals shared, this-> 0 */
    drain(&P, 1);
    w = nrecs == 1 && recs[0].h.type == HVT_DREC_DATA ? recs[0].w + 1 : NULL;
    CHECK(w && w[0] == 10 && w[4] == 44 && str_is(w, 5, "two") && w[7] == 0,
          "arrays: globals seen by every CPU, this-> array zero in the next firing");
    const uint64_t want[] = { 5, ~0ull };
    for (int i = 0; i < 2; i++) {
        dif_fire(P.st, 0, 3 + (uint32_t)i, &F);
        drain(&P, 0);
        CHECK(nrecs == 1 && recs[0].h.type == HVT_DREC_ERROR && recs[0].h.fault == HVT_DIF_F_BADINDEX &&
              recs[0].h.arg == want[i] && hvt_dif_dtrace_fault(recs[0].h.fault) == HVT_DTRACEFLT_BADINDEX,
              "arrays: index %lld faults BADINDEX with it (got type %u fault %u arg %llx)", (long long)want[i],
              nrecs ? recs[0].h.type : 0, nrecs ? recs[0].h.fault : 0, nrecs ? (unsigned long long)recs[0].h.arg : 0);
    }
    dif_fire(P.st, 0, 5, &F);
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].h.type == HVT_DREC_ERROR && recs[0].h.fault == HVT_DIF_F_BADINDEX &&
          recs[0].h.arg == 16 && recs[0].h.pc == 5, "CHKIDX: 15 < 16 passes, 16 faults at its pc");

    /* the verifier: ops and kinds apart, bounds, value types */
    struct { int op, rd, ra, rb; int kind, type; uint32_t nelem; int32_t imm; const char *why; } bad[] = {
        { HVT_DIF_OP_LDGV, 3, 0, 0, HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 5, -1, "a scalar array read or written whole" },
        { HVT_DIF_OP_STLV, 0, 1, 0, HVT_DIF_VK_LOCAL, HVT_DIF_T_INT, 5, -1, "a scalar array read or written whole" },
        { HVT_DIF_OP_LDSA, 3, 1, 0, HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 0, -1, "element of a variable that is no scalar array" },
        { HVT_DIF_OP_LDSA, 3, 1, 0, HVT_DIF_VK_THREAD, HVT_DIF_T_INT, 0, -1, "variable of another kind" },
        { HVT_DIF_OP_LDSA, 3, 1, 0, HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 5, 9, "variable index out of range" },
        { HVT_DIF_OP_LDSA, 3, 2, 0, HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 5, -1, "integer operand expected" },
        { HVT_DIF_OP_STSA, 0, 1, 2, HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 5, -1, "value type does not match the variable" },
        { HVT_DIF_OP_STSA, 0, 1, 1, HVT_DIF_VK_GLOBAL, HVT_DIF_T_STR, 5, -1, "value type does not match the variable" },
        { HVT_DIF_OP_CHKIDX, 0, 1, 0, HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 0, 0, "bad index bound" },
        { HVT_DIF_OP_CHKIDX, 0, 2, 0, HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 0, 3, "integer operand expected" },
        { HVT_DIF_OP_LDSA, 3, 1, 0, HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, HVT_DIF_ARRAY_MAX + 1, -1,
          "scalar array larger than HVT_DIF_ARRAY_MAX" },
        { HVT_DIF_OP_LDSA, 3, 1, 0, HVT_DIF_VK_GLOBAL, HVT_DIF_T_STR, HVT_DIF_ARRAY_MAX, -1,
          "globals larger than DIF_OPT_MAX" },
        { HVT_DIF_OP_LDSA, 3, 1, 0, HVT_DIF_VK_LOCAL, HVT_DIF_T_INT, (DIF_LOCALS_MAX / 8) + 1, -1,
          "clause-locals larger than DIF_LOCALS_MAX" },
    };
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        a_new();
        bool section = !strncmp(bad[i].why, "scalar array larger", 19) || strstr(bad[i].why, "larger than DIF_");
        if (strstr(bad[i].why, "DIF_OPT_MAX"))
            A.hdr.strsize = 256;     /* 2^20 strings of 256 bytes: 256 MiB */
        uint32_t v = a_array(bad[i].kind, bad[i].type, bad[i].nelem);
        LDI(1, 1); SCONST(2, "s");
        a_i(bad[i].op, bad[i].rd, bad[i].ra, bad[i].rb, bad[i].imm >= 0 ? bad[i].imm : (int32_t)v);
        refused(bad[i].why, section ? -1 : 0, section ? -1 : 2, bad[i].why);
    }
    a_new();
    uint32_t v = a_array(HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 5);
    A.vars[v].key_types[5] = 1;
    refused("keys on a variable that has none", -1, -1, "array: bytes past nelem not zero");
    a_new();
    v = a_array(HVT_DIF_VK_LOCAL, HVT_DIF_T_INT, 5);
    A.vars[v].nkeys = 1;
    refused("keys on a variable that has none", -1, -1, "array: a key count");
    firing_reset();
}

/* A valid program with every section: vars of each kind, aggregations, two clauses. */
static uint8_t *base_image(size_t *len)
{
    a_new();
    a_var(HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 0, 0, 0);
    a_var(HVT_DIF_VK_THREAD, HVT_DIF_T_STR, 0, 0, 0);
    a_var(HVT_DIF_VK_LOCAL, HVT_DIF_T_INT, 0, 0, 0);
    a_var(HVT_DIF_VK_ASSOC, HVT_DIF_T_INT, 2, HVT_DIF_T_INT, HVT_DIF_T_STR);
    a_agg(HVT_DIF_AGG_COUNT, 1, HVT_DIF_T_STR, 0, 0, 0, 0, 0, 1);
    a_agg(HVT_DIF_AGG_LQUANTIZE, 0, 0, 0, 0, 100, 10, 0, 12);
    a_agg(HVT_DIF_AGG_LLQUANTIZE, 0, 0, 0, 10, 0, 2, 10, 57);
    ACT(0);
    a_i(HVT_DIF_OP_LDC, 1, 0, 0, (int32_t)a_const(42));
    EMIT(1);
    II(STGV, 0, 1, 0);
    a_end();
    I0(TCLR); II(VAR, 2, 0, HVT_DIF_V_EXECNAME); TPUSH(2); a_i(HVT_DIF_OP_AGG, 0, 0, 0, 0);
    a_end();
    a_probe(1, 2, 0, 1);
    a_probe(5, 1, 1);
    return a_build(len);
}

static void test_verifier(void)
{
    size_t len;
    uint8_t *base = base_image(&len);
    struct dif_verr e;
    CHECK(dif_verify(base, len, &e) == DIF_OK, "base image valid: %s", e.reason ? e.reason : "");
    uint8_t *img = aligned_alloc(64, (len + 127) & ~(size_t)63);
    struct hvt_dif_hdr *h = (struct hvt_dif_hdr *)img;
#define MUT(stmt, why, what) do { memcpy(img, base, len); stmt; refused_img(img, len, why, -2, -2, what); } while (0)
    /* header and layout */
    memcpy(img + 8, base, len);
    CHECK(dif_verify(img + 8, len, &e) == DIF_OK, "control: an 8-aligned copy is fine");
    refused_img(img + 1, len, "image not 8-byte aligned", -1, -1, "misaligned image");
    memcpy(img, base, len);
    refused_img(img, 100, "image shorter than its header", -1, -1, "100 bytes");
    refused_img(img, len - 8, "header size differs from the image's", -1, -1, "truncated image");
    MUT(h->magic ^= 1, "bad magic", "magic");
    MUT(h->size += 8, "header size differs from the image's", "size");
    MUT(h->strsize = 1, "bad strsize", "strsize 1");
    MUT(h->strsize = HVT_DIF_STRSIZE_MAX + 1, "bad strsize", "strsize too big");
    MUT(h->flags = 2, "unknown header flags", "flags");
    MUT(h->off_korc = 8, "section overlaps the header", "korc on the header");
    MUT(h->off_korc = (uint32_t)len - 8, "section outside the image", "korc past the end");
    MUT(h->bufsize = DIF_OPT_MAX + 1, "option too large", "bufsize");
    MUT(h->dynvarsize = 0xffffffffu, "option too large", "dynvarsize");
    MUT(h->off_insns += 4, "section not 8-byte aligned", "insns misaligned");
    MUT(h->ninsns = 0xffffffffu, "section outside the image", "ninsns huge (64-bit end)");
    MUT(h->nconsts = 0x20000000u, "section outside the image", "nconsts * 8 wraps 32 bits");
    MUT(h->off_strtab = (uint32_t)len, "section outside the image", "strtab past the end");
    MUT(h->off_vars = 0, "section overlaps the header", "vars on the header");
    MUT(h->off_consts = h->off_insns, "sections overlap", "consts over insns");
    MUT(h->nclauses = 0x10001, "too many clauses, variables or aggregations", "nclauses");
    MUT(img[h->off_strtab + h->strtab_len - 1] = 'x', "strtab empty or not NUL-terminated",
        "strtab without its NUL");
    MUT(h->strtab_len = 0, "strtab empty or not NUL-terminated", "empty strtab");
    /* vars */
    struct hvt_dif_var *vars = (struct hvt_dif_var *)(img + ((struct hvt_dif_hdr *)base)->off_vars);
    MUT(vars[0].kind = 9, "bad variable kind", "var kind");
    MUT(vars[0].kind = 0, "bad variable kind", "var kind 0");
    MUT(vars[1].type = 3, "bad variable type", "var type");
    MUT(vars[0].name = h->strtab_len, "name outside strtab", "var name");
    MUT(vars[3].nkeys = 0, "bad key count", "assoc without keys");
    MUT(vars[3].nkeys = 9, "bad key count", "assoc with 9 keys");
    MUT(vars[3].key_types[1] = 3, "bad key type", "assoc key type");
    MUT(vars[3].key_types[5] = 1, "unused key type not zero", "unused key type");
    MUT((vars[0].nkeys = 1, vars[0].key_types[0] = 1), "keys on a variable that has none",
        "global with keys");
    MUT(vars[2].pad = 1, "variable padding not zero", "var pad");
    /* aggs */
    struct hvt_dif_agg *aggs = (struct hvt_dif_agg *)(img + ((struct hvt_dif_hdr *)base)->off_aggs);
    MUT(aggs[0].fn = 0, "bad aggregating function", "agg fn 0");
    MUT(aggs[0].fn = 10, "bad aggregating function", "agg fn 10");
    MUT(aggs[0].nbuckets = 2, "nbuckets differs from the function's", "count nbuckets");
    MUT(aggs[1].nbuckets = 13, "nbuckets differs from the function's",
        "lquantize nbuckets as levels+3");
    MUT(aggs[0].p[0] = 1, "parameters on an aggregation that takes none", "count with a param");
    MUT(aggs[0].pad[3] = 1, "aggregation padding not zero", "agg pad");
    MUT(aggs[0].nkeys = 9, "bad key count", "agg 9 keys");
    MUT(aggs[0].name = 0xffffffffu, "name outside strtab", "agg name");
    MUT(aggs[1].p[2] = 0, "bad lquantize parameters", "lquantize step 0");
    MUT(aggs[1].p[2] = -5, "bad lquantize parameters", "lquantize step < 0");
    MUT(aggs[1].p[1] = 0, "bad lquantize parameters", "lquantize limit <= base");
    MUT(aggs[1].p[2] = 200, "bad lquantize parameters", "lquantize step > range");
    MUT((aggs[1].p[0] = INT64_MIN, aggs[1].p[1] = INT64_MAX, aggs[1].p[2] = 1),
        "too many lquantize buckets", "lquantize's range overflows");
    MUT(aggs[1].p[3] = 1, "parameters on an aggregation that takes none", "lquantize p[3]");
    MUT(aggs[2].p[3] = 15, "bad llquantize parameters", "llquantize nsteps % factor");
    MUT(aggs[2].p[3] = 30, "bad llquantize parameters", "llquantize nsteps not a power's divisor");
    MUT(aggs[2].p[0] = 1, "bad llquantize parameters", "llquantize factor 1");
    MUT(aggs[2].p[1] = 3, "bad llquantize parameters", "llquantize high < low");
    MUT(aggs[2].p[2] = 19, "llquantize range overflows 64 bits", "llquantize 10^20");
    MUT(aggs[2].p[3] = 0, "bad llquantize parameters", "llquantize steps 0");
    MUT(aggs[2].p[3] = 3, "bad llquantize parameters", "llquantize steps < factor not dividing it");
    MUT((aggs[2].p[1] = 1, aggs[2].p[3] = 200), "bad llquantize parameters", "llquantize steps not dividing factor^(low+1)");
    MUT((aggs[2].p[0] = 1000, aggs[2].p[3] = 1000), "too many llquantize buckets", "llquantize too many buckets");
    MUT(aggs[2].nbuckets = 29, "nbuckets differs from the function's", "llquantize nbuckets of the old layout");
    /* probes */
    const struct hvt_dif_hdr *bh = (const struct hvt_dif_hdr *)base;
    struct hvt_dif_probe *pr = (struct hvt_dif_probe *)(img + bh->off_probes);
    uint16_t *pcl = (uint16_t *)(img + bh->off_probe_clauses);
    MUT(pcl[0] = 2, "probe clause index out of range", "probe clause index");
    MUT(pr[1].id = 1, "probes not sorted by id", "duplicate probe id");
    MUT(pr[1].id = 0, "probes not sorted by id", "probes out of order");
    MUT(pr[1].nclauses = 3, "probe clauses outside probe_clauses[]", "probe clause range");
    MUT(pr[1].clauses = 0xffffffffu, "probe clauses outside probe_clauses[]", "probe range wraps");
    MUT(pr[0].func = h->strtab_len, "probe name outside strtab", "probe name");
    /* clauses */
    struct hvt_dif_clause *cl = (struct hvt_dif_clause *)(img + bh->off_clauses);
    MUT(cl[0].count = 0, "empty clause", "empty clause");
    MUT(cl[0].count = HVT_DIF_MAX_INSNS + 1, "clause longer than HVT_DIF_MAX_INSNS", "long clause");
    MUT(cl[1].first = 0xfffffff0u, "clause outside insns[]", "clause outside");
    MUT(cl[1] = cl[0], "clauses overlap or out of order", "two clauses on the same code");
    MUT((cl[1].first = 0, cl[0].first = 5), "clauses overlap or out of order", "clauses swapped");
    MUT(cl[0].count--, "clause does not end with RET", "clause without RET");
    free(img);
    free(base);

    /* instructions */
    a_new(); a_i(HVT_DIF_OP__COUNT, 0, 0, 0, 0); refused("unknown opcode", 0, 0, "opcode");
    a_new(); a_i(0xff, 0, 0, 0, 0); refused("unknown opcode", 0, 0, "opcode 255");
    a_new(); LDI(16, 1); refused("register out of range", 0, 0, "rd 16");
    a_new(); LDI(1, 1); I3(ADD, 2, 1, 200); refused("register out of range", 0, 1, "rb 200");
    a_new(); a_i(HVT_DIF_OP_RET, 1, 0, 0, 0); a_end_raw();
    refused("unused register field not zero", 0, 0, "RET with rd");
    a_new(); LDI(1, 1); a_i(HVT_DIF_OP_ADD, 2, 1, 1, 5);
    refused("unused immediate not zero", 0, 1, "ADD with imm");
    a_new(); LDI(1, 1); a_i(HVT_DIF_OP_LDI, 1, 1, 0, 5);
    refused("unused register field not zero", 0, 1, "LDI with ra");
    a_new(); LDI(1, 0); II(BZ, 0, 1, 1); refused("branch not forward", 0, 1, "branch to itself");
    a_new(); LDI(1, 0); I0(NOP); II(BNZ, 0, 1, 1);
    refused("branch not forward", 0, 2, "backward branch");
    a_new(); II(JMP, 0, 0, 5); refused("branch outside the clause", 0, 0, "branch past the end");
    a_new(); LDI(1, 0); II(BZ, 0, 1, 3); refused("branch outside the clause", 0, 1,
                                                   "branch to the end");
    a_new(); a_i(HVT_DIF_OP_LDC, 1, 0, 0, 0); refused("constant index out of range", 0, 0, "LDC");
    a_new(); LDI(1, 0); II(LDG, 2, 1, 3); refused("bad LDG size", 0, 1, "LDG size 3");
    a_new(); LDI(1, 0); II(LDG, 2, 1, 0x48); refused("unknown LDG flags", 0, 1, "LDG flag 0x40");
    a_new(); LDI(1, 0); II(STRG, 2, 1, 1); refused("unknown STRG flags", 0, 1, "STRG flags");
    a_new(); II(VAR, 1, 0, HVT_DIF_V__COUNT); refused("unknown built-in variable", 0, 0, "VAR");
    a_new(); II(VAR, 1, 0, -1); refused("unknown built-in variable", 0, 0, "VAR -1");
    {
        static const int32_t none[] = { HVT_DIF_V_PPID, HVT_DIF_V_UID, HVT_DIF_V_VTIMESTAMP, HVT_DIF_V_STACKDEPTH,
                                        HVT_DIF_V_ARG0 + 6, HVT_DIF_V_ARG0 + 9 };
        for (unsigned i = 0; i < sizeof none / sizeof none[0]; i++) {
            a_new(); II(VAR, 1, 0, none[i]);
            refused("built-in variable the hypervisor does not give", 0, 0, "VAR of no value");
        }
    }
    a_new(); a_i(HVT_DIF_OP_SCONST, 1, 0, 0, 1000); refused("string constant outside strtab", 0, 0,
                                                             "SCONST");
    a_new(); a_var(HVT_DIF_VK_THREAD, HVT_DIF_T_INT, 0, 0, 0); II(LDGV, 1, 0, 0);
    refused("variable of another kind", 0, 0, "LDGV of a thread-local");
    a_new(); a_var(HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 0, 0, 0); II(LDAV, 1, 0, 0);
    refused("variable of another kind", 0, 0, "LDAV of a global");
    a_new(); II(LDTV, 1, 0, 0); refused("variable index out of range", 0, 0, "no vars");
    a_new(); LDI(1, 1); II(SEXT, 1, 1, 3); refused("bad extension width", 0, 1, "SEXT 3");
    a_new(); LDI(1, 1); II(ZEXT, 1, 1, 8); refused("bad extension width", 0, 1, "ZEXT 8");
    a_new(); ACT(70000); refused("action index out of range", 0, 0, "ACT 70000");
    a_new(); ACT(0); a_i(HVT_DIF_OP_STACK, 0, 0, 0, 0); refused("bad stack size", 0, 1, "STACK 0");
    a_new(); ACT(0); a_i(HVT_DIF_OP_STACK, 0, 0, 0, 9000); refused("bad stack size", 0, 1, "STACK 9000");
    a_new(); ACT(0); a_i(HVT_DIF_OP_USTACK, 0, 0, 0, 0); refused("bad user stack depth", 0, 1, "USTACK 0");
    a_new(); ACT(0); a_i(HVT_DIF_OP_USTACK, 0, 0, 0, HVT_DIF_USTACK_MAX + 1);
    refused("bad user stack depth", 0, 1, "USTACK too deep");
    a_new(); ACT(0); a_i(HVT_DIF_OP_USTACK, 0, 0, 0, -1); refused("bad user stack depth", 0, 1, "USTACK -1");
    a_new(); ACT(0); a_i(HVT_DIF_OP_USTACK, 1, 0, 0, 4);
    refused("unused register field not zero", 0, 1, "USTACK with a register");
    a_new(); a_i(HVT_DIF_OP_AGG, 0, 0, 0, 0); refused("aggregation index out of range", 0, 0, "AGG");
    a_new(); a_agg(HVT_DIF_AGG_COUNT, 0, 0, 0, 0, 0, 0, 0, 1); LDI(1, 1);
    a_i(HVT_DIF_OP_AGG, 0, 1, 0, 0); refused("unused register field not zero", 0, 1, "count with a value");
    /* AGGW: a weight on a quantization only, both operands integers */
    a_new(); a_agg(HVT_DIF_AGG_SUM, 0, 0, 0, 0, 0, 0, 0, 1); LDI(1, 1);
    a_i(HVT_DIF_OP_AGGW, 0, 1, 1, 0);
    refused("a weight on an aggregation that is not a quantization", 0, 1, "AGGW on sum");
    a_new(); a_agg(HVT_DIF_AGG_QUANTIZE, 0, 0, 0, 0, 0, 0, 0, 127); LDI(1, 1);
    a_i(HVT_DIF_OP_AGGW, 0, 1, 2, 0); refused("register read before it is set", 0, 1, "AGGW weight unset");
    a_new(); a_agg(HVT_DIF_AGG_QUANTIZE, 0, 0, 0, 0, 0, 0, 0, 127); LDI(1, 1); SCONST(2, "w");
    a_i(HVT_DIF_OP_AGGW, 0, 1, 2, 0); refused("integer operand expected", 0, 2, "AGGW string weight");
    a_new(); a_agg(HVT_DIF_AGG_QUANTIZE, 0, 0, 0, 0, 0, 0, 0, 127); LDI(1, 1);
    a_i(HVT_DIF_OP_AGGW, 0, 1, 16, 0); refused("register out of range", 0, 1, "AGGW weight r16");
    a_new(); a_agg(HVT_DIF_AGG_QUANTIZE, 0, 0, 0, 0, 0, 0, 0, 127); LDI(1, 1);
    a_i(HVT_DIF_OP_AGGW, 0, 1, 1, 1); refused("aggregation index out of range", 0, 1, "AGGW index");
    /* types */
    a_new(); I3(ADD, 1, 2, 3); refused("register read before it is set", 0, 0, "uninitialized");
    a_new(); ACT(0); EMIT(5); refused("register read before it is set", 0, 1, "EMIT uninitialized");
    a_new(); LDI(1, 0); int j = II(BZ, 0, 1, 0); LDI(2, 1); a_patch(j, a_here()); ACT(0); EMIT(2);
    refused("register read before it is set", 0, 4, "set on one path only");
    a_new(); LDI(1, 0); j = II(BZ, 0, 1, 0); LDI(2, 1); int k = II(JMP, 0, 0, 0);
    a_patch(j, a_here()); SCONST(2, "s"); a_patch(k, a_here()); ACT(0); EMIT(2);
    refused("register read before it is set", 0, 6, "int on one path, string on the other");
    a_new(); SCONST(1, "s"); LDI(2, 1); I3(ADD, 3, 1, 2);
    refused("integer operand expected", 0, 2, "ADD of a string");
    a_new(); LDI(1, 1); I2(STRLEN, 2, 1); refused("string operand expected", 0, 1, "STRLEN of an int");
    a_new(); SCONST(1, "s"); II(BZ, 0, 1, 2); refused("integer operand expected", 0, 1, "BZ on a string");
    a_new(); SCONST(1, "s"); II(LDG, 2, 1, 8); refused("integer operand expected", 0, 1, "LDG of a string");
    a_new(); LDI(1, 1); SCONST(2, "s"); I3(SCMP, 3, 2, 1);
    refused("string operand expected", 0, 2, "SCMP of an int");
    a_new(); a_var(HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 0, 0, 0); SCONST(1, "s"); II(STGV, 0, 1, 0);
    refused("value type does not match the variable", 0, 1, "string into an int global");
    a_new(); a_var(HVT_DIF_VK_THREAD, HVT_DIF_T_STR, 0, 0, 0); LDI(1, 1); II(STTV, 0, 1, 0);
    refused("value type does not match the variable", 0, 1, "int into a string self->");
    a_new(); a_var(HVT_DIF_VK_ASSOC, HVT_DIF_T_INT, 2, HVT_DIF_T_INT, HVT_DIF_T_STR);
    LDI(1, 1); TPUSH(1); II(LDAV, 2, 0, 0);
    refused("tuple does not match the keys", 0, 2, "one key for two");
    a_new(); a_var(HVT_DIF_VK_ASSOC, HVT_DIF_T_INT, 2, HVT_DIF_T_INT, HVT_DIF_T_STR);
    LDI(1, 1); TPUSH(1); TPUSH(1); II(STAV, 0, 1, 0);
    refused("tuple does not match the keys", 0, 3, "(int, int) for (int, str)");
    a_new(); a_agg(HVT_DIF_AGG_SUM, 1, HVT_DIF_T_STR, 0, 0, 0, 0, 0, 1);
    LDI(1, 1); TPUSH(1); a_i(HVT_DIF_OP_AGG, 0, 1, 0, 0);
    refused("tuple does not match the keys", 0, 2, "aggregation key type");
    /* The interpreter trusts the verifier for AGG and AGGW: their tuple is the aggregation's
     * keys (a key missing, one too many) and a weight goes to a quantization only. */
    a_new(); a_agg(HVT_DIF_AGG_SUM, 1, HVT_DIF_T_INT, 0, 0, 0, 0, 0, 1);
    LDI(1, 5); a_i(HVT_DIF_OP_AGG, 0, 1, 0, 0);
    refused("tuple does not match the keys", 0, 1, "aggregation keys missing");
    a_new(); a_agg(HVT_DIF_AGG_COUNT, 0, 0, 0, 0, 0, 0, 0, 1);
    LDI(1, 5); TPUSH(1); a_i(HVT_DIF_OP_AGG, 0, 0, 0, 0);
    refused("tuple does not match the keys", 0, 2, "a key on an aggregation without keys");
    a_new(); a_agg(HVT_DIF_AGG_COUNT, 0, 0, 0, 0, 0, 0, 0, 1);
    LDI(1, 5); a_i(HVT_DIF_OP_AGGW, 0, 1, 1, 0);
    refused("a weight on an aggregation that is not a quantization", 0, 1, "AGGW on count");
    a_new(); a_var(HVT_DIF_VK_ASSOC, HVT_DIF_T_INT, 1, HVT_DIF_T_INT, 0);
    LDI(1, 1); j = II(BZ, 0, 1, 0); TPUSH(1); a_patch(j, a_here()); II(LDAV, 2, 0, 0);
    refused("tuple differs between paths", 0, 3, "tuple pushed on one path");
    a_new(); a_var(HVT_DIF_VK_ASSOC, HVT_DIF_T_INT, 1, HVT_DIF_T_INT, 0);
    LDI(1, 1); j = II(BZ, 0, 1, 0); TPUSH(1); a_patch(j, a_here()); I0(TCLR); TPUSH(1);
    II(LDAV, 2, 0, 0);
    a_end(); a_probe(1, 1, 0);
    {
        size_t l2;
        uint8_t *im = a_build(&l2);
        CHECK(dif_verify(im, l2, &e) == DIF_OK, "TCLR makes a merged tuple usable: %s",
              e.reason ? e.reason : "");
        free(im);
    }
    a_new(); LDI(1, 1);
    for (int i = 0; i < 9; i++)
        TPUSH(1);
    refused("tuple longer than HVT_DIF_TUPLE_MAX", 0, 9, "9 pushes");
    a_new(); LDI(1, 1); EMIT(1); refused("value recorded before an ACT", 0, 1, "EMIT before ACT");
    a_new(); LDI(1, 0); j = II(BZ, 0, 1, 0); ACT(0); a_patch(j, a_here()); EMIT(1);
    refused("value recorded before an ACT", 0, 3, "ACT on one path only");
    a_new(); LDI(1, 0); II(EXIT, 0, 1, 0); refused("value recorded before an ACT", 0, 1, "EXIT before ACT");
    a_new(); a_i(HVT_DIF_OP_STACK, 0, 0, 0, 8); refused("value recorded before an ACT", 0, 0, "STACK before ACT");
    a_new(); a_i(HVT_DIF_OP_USTACK, 0, 0, 0, 8); refused("value recorded before an ACT", 0, 0, "USTACK before ACT");
    a_new(); SCONST(1, "s"); ACT(0); II(EXIT, 0, 1, 0); refused("integer operand expected", 0, 2, "exit(string)");
    /* dead code is checked for structure, not types */
    a_new(); j = II(JMP, 0, 0, 0); ACT(0); EMIT(9); a_patch(j, a_here());
    a_end(); a_probe(1, 1, 0);
    {
        size_t l2;
        uint8_t *im = a_build(&l2);
        CHECK(dif_verify(im, l2, &e) == DIF_OK, "unreachable code's types not checked");
        free(im);
    }
    a_new(); j = II(JMP, 0, 0, 0); II(LDG, 1, 1, 3); a_patch(j, a_here());
    refused("bad LDG size", 0, 1, "unreachable code's structure checked");
    /* the second clause's error names it */
    a_new(); ACT(0); a_end(); LDI(1, 1); II(JMP, 0, 0, 0); a_end();
    refused("branch not forward", 1, 1, "error in clause 1");
    printf("verifier: %d malformed images refused with the expected reason\n", nrefused);
    CHECK(nrefused >= 40, "at least 40 refusals: %d", nrefused);
}


/* ------------------------------------------------------------------ edges and defenses */

/* The verifier's rules for speculations: operand types, DTrace's order in a clause on every
 * path, the header's limits. */
static void test_spec_verifier(void)
{
#define SPECULATE(r) a_i(HVT_DIF_OP_SPECULATE, 0, r, 0, 0)
#define COMMIT(r)    a_i(HVT_DIF_OP_COMMIT, 0, r, 0, 0)
    a_new(); A.hdr.nspec = 1; LDI(1, 1); SPECULATE(1); ACT(0); EMIT(1); II(DISCARD, 0, 1, 0);
    a_end(); a_probe(1, 1, 0);
    size_t len;
    uint8_t *img = a_build(&len);
    struct dif_verr e;
    CHECK(dif_verify(img, len, &e) == DIF_OK, "speculate, record, discard: accepted (%s)",
          e.reason ? e.reason : "");
    free(img);
    a_new(); LDI(1, 1); ACT(0); II(DISCARD, 0, 1, 0); a_end(); a_probe(1, 1, 0);
    img = a_build(&len);
    CHECK(dif_verify(img, len, &e) == DIF_OK, "discard after recording: accepted");
    free(img);
    a_new(); LDI(1, 1); ACT(0); SPECULATE(1);
    refused("SPECULATE after an ACT", 0, 2, "speculate after a record");
    a_new(); LDI(1, 1); SPECULATE(1); SPECULATE(1);
    refused("SPECULATE after a SPECULATE or COMMIT", 0, 2, "speculate twice");
    a_new(); LDI(1, 1); COMMIT(1); SPECULATE(1);
    refused("SPECULATE after a SPECULATE or COMMIT", 0, 2, "speculate after commit");
    a_new(); LDI(1, 1); ACT(0); COMMIT(1);
    refused("COMMIT after an ACT", 0, 2, "commit after a record");
    a_new(); LDI(1, 1); COMMIT(1); COMMIT(1);
    refused("COMMIT after a SPECULATE or COMMIT", 0, 2, "commit twice");
    a_new(); LDI(1, 1); SPECULATE(1); COMMIT(1);
    refused("COMMIT after a SPECULATE or COMMIT", 0, 2, "commit in a speculated clause");
    a_new(); a_agg(HVT_DIF_AGG_COUNT, 0, 0, 0, 0, 0, 0, 0, 1);
    LDI(1, 1); SPECULATE(1); I0(TCLR); a_i(HVT_DIF_OP_AGG, 0, 0, 0, 0);
    refused("its effect cannot follow a SPECULATE", 0, 3, "aggregating after speculate");
    a_new(); a_agg(HVT_DIF_AGG_COUNT, 0, 0, 0, 0, 0, 0, 0, 1);
    LDI(1, 1); COMMIT(1); I0(TCLR); a_i(HVT_DIF_OP_AGG, 0, 0, 0, 0);
    refused("aggregating after a COMMIT", 0, 3, "aggregating after commit");
    a_new(); LDI(1, 1); SPECULATE(1); ACT(0); a_i(HVT_DIF_OP_EXIT, 0, 1, 0, 0);
    refused("its effect cannot follow a SPECULATE", 0, 3, "exit after speculate");
    a_new(); LDI(1, 1); SPECULATE(1); a_i(HVT_DIF_OP_TRACER, 0, 0, 0, HVT_DIF_TRACER_STEP);
    refused("its effect cannot follow a SPECULATE", 0, 2, "step after speculate");
    /* an ACT on one path only still comes before the SPECULATE after the join */
    a_new(); LDI(1, 1); a_i(HVT_DIF_OP_BZ, 0, 1, 0, 3); ACT(0); SPECULATE(1);
    refused("SPECULATE after an ACT", 0, 3, "an ACT on one path");
    a_new(); SCONST(1, "x"); SPECULATE(1);
    refused("integer operand expected", 0, 1, "speculate(a string)");
    a_new(); SPECULATE(2);
    refused("register read before it is set", 0, 0, "speculate(unset)");
    a_new(); a_i(HVT_DIF_OP_SPECNEW, 1, 2, 0, 0);
    refused("unused register field not zero", 0, 0, "SPECNEW with an ra");
    a_new(); LDI(1, 1); a_i(HVT_DIF_OP_COMMIT, 0, 1, 0, 5);
    refused("unused immediate not zero", 0, 1, "COMMIT with an immediate");
    a_new(); II(SPECNEW, 1, 0, 0); SCONST(2, "x"); I3(ADD, 3, 1, 1); I2(STRLEN, 4, 2);
    a_end(); a_probe(1, 1, 0);
    img = a_build(&len);
    CHECK(dif_verify(img, len, &e) == DIF_OK, "speculation() is an integer");
    free(img);
    /* header limits: nspec and the memory every CPU needs */
    a_new(); A.hdr.nspec = HVT_DIF_NSPEC_MAX + 1;
    refused("nspec or specsize too large", -1, -1, "nspec");
    a_new(); A.hdr.nspec = 2; A.hdr.specsize = DIF_OPT_MAX / 2 + 8;
    refused("nspec or specsize too large", -1, -1, "nspec * specsize");
    a_new(); A.hdr.nspec = DIF_OPT_MAX / DIF_DEF_SPECSIZE + 1;
    refused("nspec or specsize too large", -1, -1, "nspec * the default specsize");
    a_new(); A.hdr.nspec = 0; A.hdr.specsize = 0xffffffffu;
    refused("nspec or specsize too large", -1, -1, "specsize alone");
    a_new(); A.hdr.nspec = 2; A.hdr.specsize = DIF_OPT_MAX / 2;
    a_end(); a_probe(1, 1, 0);
    img = a_build(&len);
    CHECK(dif_verify(img, len, &e) == DIF_OK, "nspec * specsize = DIF_OPT_MAX: accepted");
    CHECK(dif_state_size(img, 4) > 4ull * DIF_OPT_MAX, "and every CPU's buffers are counted");
    free(img);
#undef SPECULATE
#undef COMMIT
}

static void test_edges(void)
{
    /* llquantize with low > 0: (10, 1, 2, 10): [0] <= -1000, [19] |v| < 10, [20..28] 10..90,
     * [29..37] 100..900, [38] >= 1000; and (2, 0, 61, 2), one bucket per order: [63] 0, [64]
     * 1, [64 + k] [2^(k-1), 2^k), [125] [2^61, 2^62), [126] >= 2^62; the int64 extremes in the
     * overflow buckets, INT64_MIN's magnitude taken as unsigned */
    a_new();
    a_agg(HVT_DIF_AGG_LLQUANTIZE, 0, 0, 0, 10, 1, 2, 10, 39);
    a_agg(HVT_DIF_AGG_LLQUANTIZE, 0, 0, 0, 2, 0, 61, 2, 127);
    I0(TCLR); II(VAR, 1, 0, HVT_DIF_V_ARG0);
    a_i(HVT_DIF_OP_AGG, 0, 1, 0, 0); a_i(HVT_DIF_OP_AGG, 0, 1, 0, 1); a_end();
    a_probe(1, 1, 0);
    p_free(&P);
    CHECK(p_load(&P, 1), "llquantize edge program");
    static const int64_t v[] = { 5, 10, 55, 100, 999, 5000, 0, 1, (1ll << 61) - 1, 1ll << 61,
                                 INT64_MAX, -1, INT64_MIN };
    for (int i = 0; i < 13; i++) {
        F.v[HVT_DIF_V_ARG0] = (uint64_t)v[i];
        dif_fire(P.st, 0, 1, &F);
    }
    int n = snap(&P, 0);
    /* first: INT64_MIN -> 0; 5, 0, 1, -1 -> 19; 10 -> 20; 55 -> 24; 100 -> 29; 999 -> 37; 5000,
     * 2^61-1, 2^61, INT64_MAX -> 38 */
    CHECK(buckets_are(agg_find(n, 0), 39, 0, V(1), 19, V(4), 20, V(1), 24, V(1), 29, V(1), 37, V(1),
                      38, V(4), -1), "llquantize(10, 1, 2, 10)");
    /* second: INT64_MIN -> 0; -1 -> 62; 0 -> 63; 1 -> 64; 5 -> 66; 10 -> 67; 55 -> 69; 100 -> 70;
     * 999 -> 73; 5000 -> 76; 2^61-1 -> 124; 2^61 -> 125; INT64_MAX -> 126 */
    CHECK(buckets_are(agg_find(n, 1), 127, 0, V(1), 62, V(1), 63, V(1), 64, V(1), 66, V(1), 67, V(1),
                      69, V(1), 70, V(1), 73, V(1), 76, V(1), 124, V(1), 125, V(1), 126, V(1), -1),
          "llquantize(2, 0, 61, 2): int64 extremes");
    firing_reset();

    /* a tuple longer than HVT_DIF_KEY_MAX faults (TUPLE) */
    a_new();
    A.hdr.strsize = 256;
    uint32_t av = a_var(HVT_DIF_VK_ASSOC, HVT_DIF_T_INT, 2, HVT_DIF_T_STR, HVT_DIF_T_STR);
    char longs[256];
    memset(longs, 'k', 255);
    longs[255] = 0;
    SCONST(1, longs);
    I0(TCLR); TPUSH(1); TPUSH(1); LDI(2, 1); II(STAV, 0, 2, av);
    a_end();
    I0(TCLR); SCONST(1, "short"); TPUSH(1); TPUSH(1); LDI(2, 1); II(STAV, 0, 2, av);
    a_end();
    a_probe(1, 2, 0, 1);
    p_free(&P);
    CHECK(p_load(&P, 1), "tuple program");
    dif_fire(P.st, 0, 1, &F);
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].h.type == HVT_DREC_ERROR && recs[0].h.fault == HVT_DIF_F_TUPLE &&
          recs[0].h.pc == 3, "2 x 264-byte keys > HVT_DIF_KEY_MAX: TUPLE fault");

    /* a record larger than the whole buffer: a drop, not a partial record */
    a_new();
    A.hdr.bufsize = 4096;
    ACT(0); a_i(HVT_DIF_OP_STACK, 0, 0, 0, 8192); a_end();
    ACT(0); SCONST(1, "still fine"); EMIT(1); a_end();
    a_probe(1, 2, 0, 1);
    p_free(&P);
    CHECK(p_load(&P, 1), "stack program");
    dif_fire(P.st, 0, 1, &F);
    drain(&P, 0);
    CHECK(nrecs == 2 && recs[0].h.type == HVT_DREC_DROPS && recs[0].h.arg == 1 &&
          recs[1].h.type == HVT_DREC_DATA && str_is(recs[1].w, 1, "still fine"),
          "a stack that cannot fit drops its clause only");

    /* this-> generations wrapping: an old generation must not look current */
    a_new();
    uint32_t lv = a_var(HVT_DIF_VK_LOCAL, HVT_DIF_T_INT, 0, 0, 0);
    LDI(1, 9); II(STLV, 0, 1, lv); a_end();
    ACT(0); II(LDLV, 1, 0, lv); EMIT(1); a_end();
    a_probe(1, 1, 0);
    a_probe(2, 1, 1);
    p_free(&P);
    CHECK(p_load(&P, 1), "locals program");
    dif_fire(P.st, 0, 1, &F);               /* sets it in generation 1 */
    P.st->cpus[0].gen = UINT32_MAX;          /* the next firing wraps to 0, then 1 */
    dif_fire(P.st, 0, 2, &F);
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].w[1] == 0, "wrapped generations forget every this->");

    /* state init: memory too small, misaligned */
    {
        size_t sz = dif_state_size(P.img, 1);
        struct dif_state *st = NULL;
        void *m = aligned_alloc(64, (sz + 127) & ~(size_t)63);
        CHECK(dif_state_init(&st, m, sz - 1, P.img, 1, &ENV) == DIF_ENOMEM && !st,
              "too small: DIF_ENOMEM");
        CHECK(dif_state_init(&st, (uint8_t *)m + 4, sz, P.img, 1, &ENV) == DIF_EINVAL,
              "misaligned memory");
        CHECK(dif_state_init(&st, m, sz, P.img, 1, &ENV) == DIF_OK && st == m, "exact size");
        CHECK(dif_fire(st, 1, 1, &F) == DIF_EINVAL && dif_drain(st, 1, dbuf, 8) == DIF_EINVAL,
              "cpu out of range");
        free(m);
    }

    /* verify without an error struct; an image over HVT_DIF_MAX_IMAGE */
    size_t len;
    uint8_t *img = base_image(&len);
    CHECK(dif_verify(img, len, NULL) == DIF_OK && dif_verify(img, len - 8, NULL) == DIF_EINVAL,
          "NULL error struct");
    free(img);
    size_t big = HVT_DIF_MAX_IMAGE + 8;
    img = aligned_alloc(64, (big + 63) & ~(size_t)63);
    memset(img, 0, big);
    ((struct hvt_dif_hdr *)img)->magic = HVT_DIF_MAGIC;
    ((struct hvt_dif_hdr *)img)->size = (uint32_t)big;
    refused_img(img, big, "image larger than HVT_DIF_MAX_IMAGE", -1, -1, "big image");
    free(img);
    /* a TPUSH onto a merged (unusable) tuple keeps it unusable */
    a_new(); a_var(HVT_DIF_VK_ASSOC, HVT_DIF_T_INT, 2, HVT_DIF_T_INT, HVT_DIF_T_INT);
    LDI(1, 1); int j = II(BZ, 0, 1, 0); TPUSH(1); a_patch(j, a_here()); TPUSH(1); TPUSH(1);
    II(LDAV, 2, 0, 0);
    refused("tuple differs between paths", 0, 5, "push onto a merged tuple");
}

/* The interpreter's own checks: an image changed after it was verified (which dif.h
 * forbids) or a register forged to hold a bad string handle must give a fault, not a wild
 * access. */
static void test_defenses(void)
{
    struct { int at; struct hvt_dif_insn in; uint32_t fault; } t[] = {
        { 1, { 200, 0, 0, 0, 0 }, HVT_DIF_F_ILLOP },                        /* unknown op */
        { 1, { HVT_DIF_OP_JMP, 0, 0, 0, 0 }, HVT_DIF_F_ILLOP },             /* backward */
        { 1, { HVT_DIF_OP_JMP, 0, 0, 0, 100 }, HVT_DIF_F_ILLOP },           /* outside */
        { 1, { HVT_DIF_OP_LDC, 1, 0, 0, 1000 }, HVT_DIF_F_ILLOP },          /* no constant */
        { 1, { HVT_DIF_OP_LDGV, 1, 0, 0, 1000 }, HVT_DIF_F_ILLOP },         /* no variable */
        { 1, { HVT_DIF_OP_LDTV, 1, 0, 0, 0 }, HVT_DIF_F_ILLOP },            /* wrong kind */
        { 1, { HVT_DIF_OP_SEXT, 1, 1, 0, 3 }, HVT_DIF_F_ILLOP },
        { 1, { HVT_DIF_OP_ZEXT, 1, 1, 0, 3 }, HVT_DIF_F_ILLOP },
        { 1, { HVT_DIF_OP_LDG, 1, 1, 0, 3 }, HVT_DIF_F_ILLOP },
        { 1, { HVT_DIF_OP_VAR, 1, 0, 0, 5000 }, HVT_DIF_F_ILLOP },
        { 1, { HVT_DIF_OP_SCONST, 1, 0, 0, 100000 }, HVT_DIF_F_ILLOP },
        { 1, { HVT_DIF_OP_STRLEN, 2, 1, 0, 0 }, HVT_DIF_F_BADSTR },         /* an int as a string */
        { 1, { HVT_DIF_OP_AGG, 0, 1, 0, 7 }, HVT_DIF_F_ILLOP },             /* no aggregation */
        { 1, { HVT_DIF_OP_STACK, 0, 0, 0, 0 }, HVT_DIF_F_ILLOP },
        { 1, { HVT_DIF_OP_TPUSH, 0, 5, 0, 0 }, HVT_DIF_F_ILLOP },           /* an empty register */
        { 0, { HVT_DIF_OP_NOP, 0, 0, 0, 0 }, HVT_DIF_F_ILLOP },             /* EMIT without ACT */
        { 4, { HVT_DIF_OP_NOP, 0, 0, 0, 0 }, HVT_DIF_F_ILLOP },             /* no RET */
    };
    for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        a_new();
        a_var(HVT_DIF_VK_GLOBAL, HVT_DIF_T_INT, 0, 0, 0);
        a_agg(HVT_DIF_AGG_SUM, 1, HVT_DIF_T_INT, 0, 0, 0, 0, 0, 1);
        ACT(0); LDI(1, 5); EMIT(1); I0(NOP);
        a_end();
        a_probe(1, 1, 0);
        p_free(&P);
        CHECK(p_load(&P, 1), "defense program");
        struct hvt_dif_hdr *h = (struct hvt_dif_hdr *)P.img;
        ((struct hvt_dif_insn *)(P.img + h->off_insns))[t[i].at] = t[i].in;
        dif_fire(P.st, 0, 1, &F);
        drain(&P, 0);
        CHECK(nrecs == 1 && recs[0].h.type == HVT_DREC_ERROR && recs[0].h.fault == t[i].fault,
              "changed image %u: fault %u want %u", i, nrecs ? recs[0].h.fault : 0, t[i].fault);
    }
    /* a clause index or clause range gone bad */
    struct hvt_dif_hdr *h = (struct hvt_dif_hdr *)P.img;
    ((struct hvt_dif_clause *)(P.img + h->off_clauses))[0].count = 0;
    dif_fire(P.st, 0, 1, &F);
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].h.fault == HVT_DIF_F_ILLOP, "empty clause at run time");
    ((uint16_t *)(P.img + h->off_probe_clauses))[0] = 9;
    dif_fire(P.st, 0, 1, &F);
    drain(&P, 0);
    CHECK(nrecs == 1 && recs[0].h.fault == HVT_DIF_F_ILLOP, "clause index out of range at run time");

    /* forged string handles */
    struct dif_run r;
    memset(&r, 0, sizeof(r));
    r.st = P.st;
    r.c = &P.st->cpus[0];
    const uint64_t forged[] = {
        0, 5, DIF_H_TAG | DIF_H_SCRATCH | 8, DIF_H_TAG | DIF_H_STRTAB | 0xffff,
        DIF_H_TAG | DIF_H_EXEC | 1, DIF_H_TAG | (4ull << 40),
        (DIF_H_TAG ^ (1ull << 60)) | DIF_H_STRTAB,
        DIF_H_TAG | DIF_H_STRTAB | (1ull << 33), DIF_H_TAG | DIF_H_SCRATCH | 0xffffffffull,
    };
    int caught = 0;
    for (unsigned i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
        const char *p;
        uint32_t len;
        r.reg[3] = forged[i];
        r.rt[3] = DIF_RT_STR;
        r.fault = 0;
        caught += !dif_str_get(&r, 3, &p, &len) && r.fault == HVT_DIF_F_BADSTR;
    }
    r.reg[3] = DIF_H_TAG | DIF_H_STRTAB;
    r.rt[3] = DIF_RT_INT;
    const char *p;
    uint32_t len;
    caught += !dif_str_get(&r, 3, &p, &len);
    r.rt[3] = DIF_RT_STR;
    r.c->scratch_len[2] = 0xffff;             /* a length the slot cannot hold */
    r.reg[3] = DIF_H_TAG | DIF_H_SCRATCH | 2;
    caught += !dif_str_get(&r, 3, &p, &len);
    r.c->scratch_len[2] = 0;
    CHECK(caught == 11, "forged string handles: %d of 11 caught", caught);
}

/* ------------------------------------------------------------------ mutation test */

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Every record a drain returns is well-formed, every snapshot entry too. */
static long seen_type[9];
static bool sane_drain(struct dif_state *st, unsigned cpu)
{
    long n = dif_drain(st, cpu, dbuf, 1 << 16);
    for (long o = 0; o < n; ) {
        struct hvt_drec r;
        memcpy(&r, dbuf + o, sizeof(r));
        if (r.len < 40 || r.len % 8 || o + r.len > n || r.type < 1 || r.type > 8 || r.cpu != cpu)
            return false;
        seen_type[r.type]++;
        o += r.len;
    }
    return n >= 0;
}
static bool sane_snapshot(struct dif_state *st, unsigned cpu)
{
    static uint8_t sb[512];
    uint32_t cur = 0;
    long r;
    int guard = 0;
    while ((r = dif_agg_snapshot(st, cpu, sb, sizeof(sb), &cur)) > 0 && guard++ < 100000) {
        for (long o = 0; o < r; ) {
            struct hvt_dagg_rec a;
            memcpy(&a, sb + o, sizeof(a));
            if (a.len != 16 + a.key_len + 8 * a.nbuckets || o + a.len > r)
                return false;
            o += a.len;
        }
    }
    return r == 0 || r == DIF_ESMALL;
}

static void test_mutations(long iters)
{
    const size_t mem_size = 8 << 20;
    void *mem = aligned_alloc(64, mem_size);
    uint8_t *img = aligned_alloc(64, 16384);
    long refused_n = 0, accepted = 0, ran = 0, bad = 0, big = 0;
    struct dif_env env = ENV;
    env.notify = NULL;
    for (long it = 0; it < iters; it++) {
        int c = (int)(rnd() % (uint64_t)ncorpus);
        size_t len = corpus[c].len;
        memcpy(img, corpus[c].img, len);
        const struct hvt_dif_hdr *h0 = (const struct hvt_dif_hdr *)img;
        bool insn_mut = (rnd() & 1) && h0->ninsns;
        if (insn_mut) {
            /* an instruction's field set to a plausible value: mutants that pass the
             * verifier more often, so the interpreter sees many different programs */
            struct hvt_dif_insn *in = (struct hvt_dif_insn *)(img + h0->off_insns) +
                                      rnd() % h0->ninsns;
            static const int32_t imms[] = { 0, 1, 2, 4, 8, -1, 0x7fffffff, INT32_MIN, 16, 0x21 };
            switch (rnd() % 5) {
            case 0: in->op = (uint8_t)(rnd() % HVT_DIF_OP__COUNT); break;
            case 1: in->rd = (uint8_t)(rnd() % 16); break;
            case 2: in->ra = (uint8_t)(rnd() % 16); break;
            case 3: in->rb = (uint8_t)(rnd() % 16); break;
            default: in->imm = rnd() & 1 ? imms[rnd() % 10] : (int32_t)(rnd() % 64); break;
            }
        }
        int flips = (int)(rnd() % 4) + !insn_mut;
        for (int k = 0; k < flips; k++) {
            size_t pos = rnd() % len;
            switch (rnd() % 4) {
            case 0: img[pos] = (uint8_t)rnd(); break;
            case 1: img[pos] ^= (uint8_t)(1u << (rnd() % 8)); break;
            case 2: img[pos] = (rnd() & 1) ? 0xff : 0; break;
            default: img[pos] += (rnd() & 1) ? 1 : 0xff; break;   /* off by one */
            }
        }
        if (rnd() % 32 == 0) {          /* a truncated image that says so */
            len = sizeof(struct hvt_dif_hdr) + rnd() % (len - sizeof(struct hvt_dif_hdr) + 1);
            ((struct hvt_dif_hdr *)img)->size = (uint32_t)len;
        }
        struct dif_verr e;
        if (dif_verify(img, len, &e) != DIF_OK) {
            refused_n++;
            if (!e.reason)
                bad++;
            continue;
        }
        accepted++;
        size_t sz = dif_state_size(img, 2);
        if (sz > mem_size) {
            big++;
            continue;
        }
        struct dif_state *st;
        if (dif_state_init(&st, mem, sz, img, 2, &env) != DIF_OK) {
            bad++;
            continue;
        }
        const struct hvt_dif_hdr *h = (const struct hvt_dif_hdr *)img;
        const struct hvt_dif_probe *pr = (const void *)(img + h->off_probes);
        for (int round = 0; round < 3; round++) {
            for (uint32_t p = 0; p < h->nprobes && p < 8; p++) {
                F.v[HVT_DIF_V_ARG0] = rnd();
                F.v[HVT_DIF_V_TID] = rnd() % 4;
                if (dif_fire(st, p & 1, pr[p].id, &F) < 0)
                    bad++;
                ran++;
            }
            dif_fire(st, 0, (uint32_t)rnd(), &F);
        }
        if (!sane_drain(st, 0) || !sane_drain(st, 1) || !sane_snapshot(st, 0) ||
            !sane_snapshot(st, 1))
            bad++;
    }
    firing_reset();
    printf("mutations: %ld mutants, %ld refused, %ld accepted (%ld firings, %ld too big to "
           "run)\n", iters, refused_n, accepted, ran, big);
    printf("mutants' records: %ld data, %ld errors, %ld drops, %ld dynvar drops, %ld agg drops, "
           "%ld spec drops, %ld spec busy, %ld spec unavailable\n", seen_type[1], seen_type[2],
           seen_type[3], seen_type[4], seen_type[5], seen_type[6], seen_type[7], seen_type[8]);
    CHECK(bad == 0, "mutants misbehaved: %ld", bad);
    CHECK(refused_n > 0 && accepted > 0, "both refused and accepted mutants");
    free(img);
    free(mem);
}

/* A firing timed by phase (struct dif_firing cost): the interpreter adds each instruction's
 * time to its phase of the performance model, the predicate's first; untimed, nothing. */
/* The lean path (dif_lean.c): which probes take it, and that it aggregates exactly what the
 * interpreter does. The reference run takes the interpreter's general string path (a
 * 17-byte execname, dif_str_get and dif_put_str) with the lean flags cleared; the lean run the
 * same firings with 16-byte names. Names: empty, short, 7/8/15 bytes, 16 without a NUL, and
 * other bytes after the NUL. */
static void lean_prog(void)
{
    a_new();
    a_agg(HVT_DIF_AGG_COUNT, 1, HVT_DIF_T_STR, 0, 0, 0, 0, 0, 1);
    a_agg(HVT_DIF_AGG_QUANTIZE, 0, 0, 0, 0, 0, 0, 0, 127);
    a_agg(HVT_DIF_AGG_SUM, 2, HVT_DIF_T_INT, HVT_DIF_T_STR, 0, 0, 0, 0, 1);
    a_agg(HVT_DIF_AGG_LQUANTIZE, 1, HVT_DIF_T_STR, 0, 0, 100, 10, 0, 12);
    a_agg(HVT_DIF_AGG_AVG, 1, HVT_DIF_T_INT, 0, 0, 0, 0, 0, 2);
    a_agg(HVT_DIF_AGG_MIN, 0, 0, 0, 0, 0, 0, 0, 1);
    a_agg(HVT_DIF_AGG_QUANTIZE, 2, HVT_DIF_T_INT, HVT_DIF_T_INT, 0, 0, 0, 0, 127);
    a_agg(HVT_DIF_AGG_COUNT, 0, 0, 0, 0, 0, 0, 0, 1);
    a_agg(HVT_DIF_AGG_MAX, 1, HVT_DIF_T_INT, 0, 0, 0, 0, 0, 1);   /* @i: index 8, agg_last's slot of @a */
    a_agg(HVT_DIF_AGG_LLQUANTIZE, 1, HVT_DIF_T_STR, 0, 10, 0, 3, 10, 75);
    a_agg(HVT_DIF_AGG_QUANTIZE, 0, 0, 0, 0, 0, 0, 0, 127);
    /* clause 0: @a[execname] = count(); @b = quantize(arg2); */
    I0(TCLR); II(VAR, 1, 0, HVT_DIF_V_EXECNAME); TPUSH(1); a_i(HVT_DIF_OP_AGG, 0, 0, 0, 0);
    I0(TCLR); II(VAR, 2, 0, HVT_DIF_V_ARG0 + 2); a_i(HVT_DIF_OP_AGG, 0, 2, 0, 1);
    a_end();
    /* clause 1: @c[pid, execname] = sum(arg0); @d[execname] = lquantize(arg1, 0, 100, 10, w 3);
     * @e[cpu] = avg(arg3); @f = min(arg0) */
    I0(TCLR); II(VAR, 3, 0, HVT_DIF_V_PID); TPUSH(3); II(VAR, 4, 0, HVT_DIF_V_EXECNAME); TPUSH(4);
    II(VAR, 5, 0, HVT_DIF_V_ARG0); a_i(HVT_DIF_OP_AGG, 0, 5, 0, 2);
    I0(TCLR); TPUSH(4); II(VAR, 6, 0, HVT_DIF_V_ARG0 + 1); II(LDI, 7, 0, 3);
    a_i(HVT_DIF_OP_AGGW, 0, 6, 7, 3);
    I0(TCLR); II(VAR, 8, 0, HVT_DIF_V_CPU); TPUSH(8); II(VAR, 9, 0, HVT_DIF_V_ARG0 + 3);
    a_i(HVT_DIF_OP_AGG, 0, 9, 0, 4);
    I0(TCLR); a_i(HVT_DIF_OP_AGG, 0, 5, 0, 5);
    a_end();
    /* clause 2: a predicate and a record: the interpreter's */
    II(VAR, 1, 0, HVT_DIF_V_ARG0);
    a_i(HVT_DIF_OP_BZ, 0, 1, 0, 4);
    ACT(0); EMIT(1);
    a_end();
    /* clause 3 (after clause 2 in the image, lean): a NOP; @g[tid, cpu] = quantize(arg2, 5);
     * @h = count(); @i[arg3] = max(arg2); @k[execname] = llquantize(arg1, 10, 0, 3, 10);
     * @l = quantize(-3) (an LDI value); @a[execname] = count() again, after @i took its
     * agg_last slot */
    I0(NOP);
    I0(TCLR); II(VAR, 1, 0, HVT_DIF_V_TID); TPUSH(1); II(VAR, 2, 0, HVT_DIF_V_CPU); TPUSH(2);
    II(VAR, 3, 0, HVT_DIF_V_ARG0 + 2); II(LDI, 4, 0, 5); a_i(HVT_DIF_OP_AGGW, 0, 3, 4, 6);
    I0(TCLR); a_i(HVT_DIF_OP_AGG, 0, 0, 0, 7);
    I0(TCLR); II(VAR, 5, 0, HVT_DIF_V_ARG0 + 3); TPUSH(5); a_i(HVT_DIF_OP_AGG, 0, 3, 0, 8);
    I0(TCLR); II(VAR, 6, 0, HVT_DIF_V_EXECNAME); TPUSH(6); II(VAR, 7, 0, HVT_DIF_V_ARG0 + 1);
    a_i(HVT_DIF_OP_AGG, 0, 7, 0, 9);
    I0(TCLR); II(LDI, 8, 0, -3); a_i(HVT_DIF_OP_AGG, 0, 8, 0, 10);
    I0(TCLR); TPUSH(6); a_i(HVT_DIF_OP_AGG, 0, 0, 0, 0);
    a_end();
    /* clause 4: @c[arg0, execname] = sum(arg1); @e[cpu] = avg(7): arguments, the CPU,
     * execname and constants only */
    I0(TCLR); II(VAR, 1, 0, HVT_DIF_V_ARG0); TPUSH(1); II(VAR, 2, 0, HVT_DIF_V_EXECNAME); TPUSH(2);
    II(VAR, 3, 0, HVT_DIF_V_ARG0 + 1); a_i(HVT_DIF_OP_AGG, 0, 3, 0, 2);
    I0(TCLR); II(VAR, 4, 0, HVT_DIF_V_CPU); TPUSH(4); II(LDI, 5, 0, 7); a_i(HVT_DIF_OP_AGG, 0, 5, 0, 4);
    a_end();
    a_probe(1, 3, 0, 1, 3);                   /* aggregations only: lean */
    a_probe(2, 2, 0, 2);                      /* with clause 2: not lean */
    a_probe(3, 2, 0, 4);                      /* lean, and thin: arguments, cpu, execname */
}

static long lean_snapshot(struct prog *p, uint8_t *out, size_t len)
{
    long total = 0;
    for (unsigned cpu = 0; cpu < 2; cpu++) {
        uint32_t cur = 0;
        long n;
        while ((n = dif_agg_snapshot(p->st, cpu, out + total, len - (size_t)total, &cur)) > 0)
            total += n;
    }
    return total;
}

static void test_lean(void)
{
    static const char *names[] = { "", "sh", "1234567", "12345678", "123456789012345",
                                   "1234567890123456", "probe-bench", "a", "kworker/0:1" };
    struct prog ref, lean;
    lean_prog();
    CHECK(p_load(&ref, 2), "lean program (reference)");
    lean_prog();
    CHECK(p_load(&lean, 2), "lean program");
    CHECK(lean.st->lean[0] == (DIF_LEAN | DIF_LEAN_EXEC) && lean.st->lean[1] == 0 &&
          lean.st->lean[2] == (DIF_LEAN | DIF_LEAN_EXEC | DIF_LEAN_THIN) && !dif_thin(lean.st),
          "aggregation-only probe lean (%u), one with a predicate and a record not (%u), one "
          "reading arguments, cpu and execname thin (%u); the program not (%d)",
          lean.st->lean[0], lean.st->lean[1], lean.st->lean[2], dif_thin(lean.st));
    memset((uint8_t *)ref.st->lean, 0, 3);    /* the reference: the interpreter throughout */
    int thin_runs = 0, thin_refused = 0;
    uint64_t seed = 12345, args[6];
    for (int i = 0; i < 3000; i++) {
        char n16[16], n17[17] = { 0 };
        const char *nm = names[i % 9];
        size_t l = strlen(nm) < 16 ? strlen(nm) : 16;
        memset(n16, 'Z', sizeof n16);         /* bytes past the NUL are no part of the name */
        memcpy(n16, nm, l);
        if (l < 16)
            n16[l] = 0;
        memcpy(n17, n16, 16);
        for (int k = 0; k < 4; k++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            F.v[HVT_DIF_V_ARG0 + k] = (seed >> 20) % 300 - (k == 0 ? 150 : 0);
        }
        if (i % 3 == 0)                       /* arg2 of every sign and magnitude, INT64_MIN too */
            F.v[HVT_DIF_V_ARG0 + 2] = i % 99 == 0 ? (uint64_t)INT64_MIN :
                                      (uint64_t)((int64_t)(seed ^ seed << 17) >> (seed >> 58));
        F.v[HVT_DIF_V_PID] = 100 + (uint64_t)(i % 5);
        F.v[HVT_DIF_V_TID] = 200 + (uint64_t)(i % 3);
        F.args = i % 2 ? args : NULL;         /* the engine's array, or v[] */
        memcpy(args, &F.v[HVT_DIF_V_ARG0], sizeof args);
        unsigned cpu = (unsigned)(i / 7) % 2, probe = i % 10 == 0 ? 2 : 1;
        F.execname = n17;
        F.execname_max = 17;
        dif_fire(ref.st, cpu, probe, &F);
        F.execname = n16;
        F.execname_max = 16;
        dif_fire(lean.st, cpu, probe, &F);
        /* probe 3: a thin firing (its four fields, everything else garbage) against the
         * interpreter's full one; and a thin firing of probe 1 or 2, which read more: refused,
         * nothing run */
        F.execname = n17;
        F.execname_max = 17;
        dif_fire(ref.st, cpu, 3, &F);
        struct dif_firing t;
        memset(&t, 0xdb, sizeof t);
        t.thin = true;
        t.args = F.args ? F.args : &F.v[HVT_DIF_V_ARG0];
        t.execname = n16;
        t.execname_max = 16;
        t.cost = NULL;
        thin_runs += dif_fire(lean.st, cpu, 3, &t) == 2;
        thin_refused += dif_fire(lean.st, cpu, probe, &t) == DIF_ETHIN;
    }
    CHECK(thin_runs == 3000 && thin_refused == 3000,
          "thin firings: 3000 of the thin probe run (%d), 3000 of the others refused (%d)",
          thin_runs, thin_refused);
    static uint8_t a[1 << 18], b[1 << 18];
    long na = lean_snapshot(&ref, a, sizeof a), nb = lean_snapshot(&lean, b, sizeof b);
    CHECK(na > 0 && na == nb && !memcmp(a, b, (size_t)na),
          "lean and interpreted firings: the same aggregations (%ld, %ld bytes)", na, nb);
    int nrec_ref = drain(&ref, 0), nrec_lean = drain(&lean, 0);
    CHECK(nrec_ref == nrec_lean, "the non-lean probe's records alike (%d, %d)", nrec_ref,
          nrec_lean);
    p_free(&ref);
    p_free(&lean);
    /* dif_thin: every probe but BEGIN, END and ERROR (the caller fires those in full) */
    for (int begin = 1; begin >= 0; begin--) {
        struct prog t;
        a_new();
        a_agg(HVT_DIF_AGG_QUANTIZE, 0, 0, 0, 0, 0, 0, 0, 127);
        II(VAR, 1, 0, HVT_DIF_V_ARG0 + 2); a_i(HVT_DIF_OP_AGG, 0, 1, 0, 0);
        a_end();
        LDI(1, 5); ACT(0); EMIT(1);
        a_end();
        a_probe(5, 1, 0);
        a_probe(9, 1, 1);
        A.hdr.begin_probe = begin ? 9 : 0;
        CHECK(p_load(&t, 1), "thin program %d", begin);
        CHECK(dif_thin(t.st) == begin, "a probe with a record: the program thin only when it is "
              "BEGIN's (%d, BEGIN %d)", dif_thin(t.st), begin);
        p_free(&t);
    }
    firing_reset();
}

static void test_phase_timing(void)
{
    a_new();
    a_agg(HVT_DIF_AGG_COUNT, 1, HVT_DIF_T_STR, 0, 0, 0, 0, 0, 1);
    II(VAR, 1, 0, HVT_DIF_V_ARG0);            /* /arg0/ */
    a_i(HVT_DIF_OP_BZ, 0, 1, 0, 8);
    I0(TCLR); II(VAR, 2, 0, HVT_DIF_V_EXECNAME); TPUSH(2);
    a_i(HVT_DIF_OP_AGG, 0, 0, 0, 0);          /* @[execname] = count() */
    ACT(0); EMIT(1);                          /* trace(arg0) */
    a_end();
    a_probe(1, 1, 0);
    p_free(&P);
    CHECK(p_load(&P, 1), "timed program");
    uint64_t cost[HVT_PH_COUNT] = { 0 };
    F.cost = cost;
    F.v[HVT_DIF_V_ARG0] = 7;
    for (int i = 0; i < 100; i++)
        dif_fire(P.st, 0, 1, &F);
    CHECK(cost[HVT_PH_PREDICATE] && cost[HVT_PH_BUILTINS] && cost[HVT_PH_INSNS] &&
          cost[HVT_PH_AGG] && cost[HVT_PH_RECORD],
          "every phase the clause has is timed: predicate %lu builtins %lu insns %lu agg %lu "
          "record %lu", (unsigned long)cost[HVT_PH_PREDICATE], (unsigned long)cost[HVT_PH_BUILTINS],
          (unsigned long)cost[HVT_PH_INSNS], (unsigned long)cost[HVT_PH_AGG],
          (unsigned long)cost[HVT_PH_RECORD]);
    CHECK(!cost[HVT_PH_EXIT] && !cost[HVT_PH_LOOKUP] && !cost[HVT_PH_CLAUSES] && !cost[HVT_PH_SUBR],
          "the caller's phases and one the clause lacks stay 0");
    uint64_t agg = cost[HVT_PH_AGG], pred = cost[HVT_PH_PREDICATE];
    F.v[HVT_DIF_V_ARG0] = 0;                  /* the predicate fails: no aggregation */
    for (int i = 0; i < 100; i++)
        dif_fire(P.st, 0, 1, &F);
    CHECK(cost[HVT_PH_AGG] == agg && cost[HVT_PH_PREDICATE] > pred,
          "a false predicate: its time, none for the aggregation");
    uint64_t before[HVT_PH_COUNT];
    memcpy(before, cost, sizeof before);
    F.cost = NULL;
    F.v[HVT_DIF_V_ARG0] = 7;
    dif_fire(P.st, 0, 1, &F);
    CHECK(!memcmp(before, cost, sizeof before), "untimed firings add nothing");
    int n = snap(&P, 0);
    CHECK(n == 1 && buckets_are(agg_find(n, 0), 1, 0, V(101), -1),
          "timed and untimed firings aggregate the same");
    drain(&P, 0);
    firing_reset();
}

int main(int argc, char **argv)
{
    long iters = argc > 1 ? atol(argv[1]) : 100000;
    setvbuf(stdout, NULL, _IOLBF, 0);
    firing_reset();
    test_tracer();
    test_arith();
    test_branches();
    test_guest_loads();
    test_divzero();
    test_builtins();
    test_strings();
    test_stack_exit();
    test_ustack();
    test_vars();
    test_aggs();
    test_agg_clear_snapshot();
    test_buffer_full();
    test_error_probe();
    test_epids();
    test_concurrency();
    test_spec();
    test_spec_concurrency();
    test_many_probes();
    test_verifier();
    test_arrays();
    test_spec_verifier();
    test_edges();
    test_defenses();
    test_phase_timing();
    test_lean();
    p_free(&P);
    printf("corpus for the mutation test: %d programs\n", ncorpus);
    test_mutations(iters);
    return check_summary("test_dif");
}
