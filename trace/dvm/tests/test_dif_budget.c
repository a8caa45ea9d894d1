/* test_dif_budget.c - one firing's work is capped whatever a verified image asks: an
 * instruction count (string and guest-copy loops counted by their bytes) and a clock deadline,
 * either of which ends the whole firing with one error record (HVT_DIF_F_BUDGET) and runs
 * none of its later clauses. The images are the worst a guest can load: one probe running 56 clauses of
 * 8191 NOPs (458,000 instructions, as many as a 4 MiB image holds), and a clause of 8000 STRJOINs of 1 KiB strings
 * (8 MB of copying). An ordinary firing is untouched. The deadline is checked against a fake
 * clock that leaps forward at every reading. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dif.h"
#include "dif_asm.h"
#include "check.h"

#ifndef HVT_DIF_F_BUDGET
#define HVT_DIF_F_BUDGET 8                 /* what the fix names it */
#endif


static uint64_t fake_now, fake_step, clock_reads;
static uint64_t fake_clock(void *env_ctx)
{
    clock_reads++;
    return fake_now += fake_step;
}

struct run { uint32_t ndata, nerr, fault, err_clause, err_pc; uint64_t err_arg; };

/* Verify the image A holds, lay its state out for one CPU with env, fire probe 1, drain. */
static struct run fire_once(const struct dif_env *env)
{
    struct run out = { 0 };
    size_t len;
    uint8_t *img = a_build(&len);
    struct dif_verr e = { -1, -1, -1, "" };
    if (dif_verify(img, len, &e) != DIF_OK) {
        printf("  verify: clause %d insn %d: %s\n", e.clause, e.insn, e.reason);
        out.nerr = ~0u;
        free(img);
        return out;
    }
    size_t sz = dif_state_size(img, 1);
    void *mem = aligned_alloc(64, (sz + 63) & ~(size_t)63);
    struct dif_state *st;
    if (dif_state_init(&st, mem, sz, img, 1, env) != DIF_OK) {
        out.nerr = ~0u;
        free(mem);
        free(img);
        return out;
    }
    struct dif_firing f = { .tsc = 1 };
    dif_fire(st, 0, 1, &f);
    static uint8_t buf[1 << 20] __attribute__((aligned(8)));
    long n = dif_drain(st, 0, buf, sizeof buf);
    for (long at = 0; at + (long)sizeof(struct hvt_drec) <= n;) {
        struct hvt_drec r;
        memcpy(&r, buf + at, sizeof r);
        if (r.type == HVT_DREC_DATA)
            out.ndata++;
        if (r.type == HVT_DREC_ERROR) {
            out.nerr++;
            out.fault = r.fault;
            out.err_clause = r.clause;
            out.err_pc = r.pc;
            out.err_arg = r.arg;
        }
        at += r.len ? r.len : 8;
    }
    free(mem);
    free(img);
    return out;
}

/* NCL clauses of 8191 NOPs on probe 1; the last one records a value. */
#define NCL 56
static void nop_storm(void)
{
    a_new();
    for (int c = 0; c < NCL; c++) {
        int body = c == NCL - 1 ? 8191 - 3 : 8191;
        for (int i = 0; i < body; i++)
            I0(NOP);
        if (c == NCL - 1) {
            ACT(0);
            LDI(1, 7);
            EMIT(1);
        }
        a_end();
    }
    A.probes = grow(A.probes, &A.probe_cap, 1, sizeof *A.probes);
    A.pcl = grow(A.pcl, &A.pcl_cap, NCL, sizeof *A.pcl);
    for (int c = 0; c < NCL; c++)
        A.pcl[A.npcl++] = (uint16_t)c;
    a_probe(1, 0);
    A.probes[0].clauses = 0;
    A.probes[0].nclauses = NCL;
}

/* strsize 1024: r1 = a 1000-byte constant, then r1 = r1 . r2 8000 times, then a record. */
static void strjoin_storm(void)
{
    a_new();
    A.hdr.strsize = 1024;
    char s[1001];
    memset(s, 'x', 1000);
    s[1000] = 0;
    SCONST(2, s);
    SCONST(1, "");
    for (int i = 0; i < 8000; i++)
        I3(STRJOIN, 1, 1, 2);
    ACT(0);
    EMIT(1);
    a_end();
    a_probe(1, 1, 0);
}

int main(void)
{
    struct dif_env env = { 0 };
    struct run r;

    /* the default budget: 458,000 instructions are far past it */
    nop_storm();
    r = fire_once(&env);
    CHECK(r.nerr == 1 && r.fault == HVT_DIF_F_BUDGET && r.ndata == 0,
          "NOP storm: %u error record(s) (fault %u), %u data record(s); want one BUDGET error, no data",
          r.nerr, r.fault, r.ndata);
    CHECK(r.nerr != 1 || r.err_clause < NCL - 1, "NOP storm: ended in clause %u, before the last one", r.err_clause);

    /* strings count by their bytes: 8000 joins of ~1 KiB end within the first few hundred */
    strjoin_storm();
    r = fire_once(&env);
    CHECK(r.nerr == 1 && r.fault == HVT_DIF_F_BUDGET && r.ndata == 0,
          "STRJOIN storm: %u error record(s) (fault %u), %u data record(s); want one BUDGET error",
          r.nerr, r.fault, r.ndata);
    CHECK(r.nerr == 1 && r.err_pc < 2000, "STRJOIN storm: ended at insn %u (bytes must count)", r.err_pc);

    /* an ordinary firing (a few instructions, a short string) is untouched */
    a_new();
    SCONST(1, "hello");
    ACT(0);
    EMIT(1);
    a_end();
    a_probe(1, 1, 0);
    r = fire_once(&env);
    CHECK(r.nerr == 0 && r.ndata == 1, "ordinary firing: %u errors, %u data", r.nerr, r.ndata);

#ifdef DIF_DEF_BUDGET
    /* the clock deadline: 20,000 NOPs are within the instruction budget, but the clock leaps
     * 1000 ticks at each reading against a 1500-tick deadline */
    a_new();
    for (int i = 0; i < 20000 / 8192 + 1; i++) {
        for (int k = 0; k < 8000; k++)
            I0(NOP);
        a_end();
    }
    a_probe(1, 3, 0, 1, 2);
    env.clock = fake_clock;
    env.deadline = 1500;
    fake_step = 1000;
    clock_reads = 0;
    r = fire_once(&env);
    CHECK(r.nerr == 1 && r.fault == HVT_DIF_F_BUDGET && r.err_arg == HVT_DIF_BUDGET_TIME,
          "deadline: %u error(s), fault %u arg %llu; want one BUDGET (time)", r.nerr, r.fault,
          (unsigned long long)r.err_arg);
    CHECK(clock_reads <= 4, "deadline: the clock was read %llu times (only every few thousand units)",
          (unsigned long long)clock_reads);
    /* the same with a clock that stands still: no fault, and an ordinary firing never reads it */
    fake_step = 0;
    r = fire_once(&env);
    CHECK(r.nerr == 0, "still clock: %u errors", r.nerr);
    a_new();
    LDI(1, 1);
    a_end();
    a_probe(1, 1, 0);
    clock_reads = 0;
    fire_once(&env);
    CHECK(clock_reads == 0, "a short firing read the clock %llu times", (unsigned long long)clock_reads);
    /* an explicit budget: a clause is charged its whole length as it starts (branches only go
     * forward), so one over the budget ends before its first instruction, and of two clauses
     * that fit one at a time the second ends the firing */
    env.clock = NULL;
    env.budget = 100;
    a_new();
    for (int k = 0; k < 200; k++)
        I0(NOP);
    a_end();
    a_probe(1, 1, 0);
    r = fire_once(&env);
    CHECK(r.nerr == 1 && r.fault == HVT_DIF_F_BUDGET && r.err_arg == HVT_DIF_BUDGET_INSNS &&
          r.err_pc == 0, "budget 100, a clause of 201: %u errors, fault %u at pc %u", r.nerr,
          r.fault, r.err_pc);
    a_new();
    for (int c = 0; c < 2; c++) {
        for (int k = 0; k < 60; k++)
            I0(NOP);
        a_end();
    }
    a_probe(1, 2, 0, 1);
    r = fire_once(&env);
    CHECK(r.nerr == 1 && r.fault == HVT_DIF_F_BUDGET && r.err_clause == 1 && r.err_pc == 0,
          "budget 100, two clauses of 61: %u errors, fault %u in clause %u at pc %u", r.nerr,
          r.fault, r.err_clause, r.err_pc);
#else
    check_failed++;
    printf("FAIL: no per-firing budget or clock deadline in dif.h (DIF_DEF_BUDGET, env.clock)\n");
#endif
    return check_summary("test_dif_budget");
}
