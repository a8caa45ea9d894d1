/* test_dif_bounds.c - the work one firing or one load can cost is bounded by the image's
 * length: the verifier refuses a probe whose clause list repeats or goes back (one clause
 * listed 2000 times made a firing 2000 clauses long), probe ranges that overlap in
 * probe_clauses[] (4000 probes over one range made the state's epid layout quadratic), and
 * AGGCLR (one instruction walking every CPU's aggregation space; the compiler never emits it).
 * Ordinary images (increasing lists, disjoint ranges) still verify. */
#include <stdio.h>
#include "dif.h"
#include "dif_asm.h"
#include "check.h"

static void expect(const char *what, bool want_ok)
{
    size_t len;
    uint8_t *img = a_build(&len);
    struct dif_verr e = { -1, -1, -1, "" };
    bool ok = dif_verify(img, len, &e) == DIF_OK;
    if (ok == want_ok)
        check_passed++;
    else {
        check_failed++;
        printf("FAIL %s: %s%s\n", what, ok ? "accepted" : "refused: ", ok ? "" : e.reason);
    }
    free(img);
}

static void nop_clause(void)
{
    a_i(HVT_DIF_OP_TCLR, 0, 0, 0, 0);
    a_end();
}

int main(void)
{
    /* one probe listing clause 0 2000 times */
    a_new();
    nop_clause();
    A.probes = grow(A.probes, &A.probe_cap, 1, sizeof *A.probes);
    A.pcl = grow(A.pcl, &A.pcl_cap, 2000, sizeof *A.pcl);
    for (int i = 0; i < 2000; i++)
        A.pcl[A.npcl++] = 0;
    a_probe(1, 0);
    A.probes[0].clauses = 0;
    A.probes[0].nclauses = 2000;
    expect("one clause listed 2000 times", false);
    /* a list that goes back */
    a_new(); nop_clause(); nop_clause();
    a_probe(1, 2, 1, 0);
    expect("clauses 1, 0", false);
    /* 4000 probes over one range */
    a_new(); nop_clause(); nop_clause();
    a_probe(1, 2, 0, 1);
    for (uint32_t id = 2; id <= 4000; id++) {
        a_probe(id, 0);
        A.probes[A.nprobes - 1].clauses = 0;
        A.probes[A.nprobes - 1].nclauses = 2;
    }
    expect("4000 probes over one range", false);
    /* AGGCLR */
    a_new();
    a_agg(HVT_DIF_AGG_COUNT, 0, 0, 0, 0, 0, 0, 0, 1);
    a_i(HVT_DIF_OP_AGGCLR, 0, 0, 0, 0);
    a_end();
    a_probe(1, 1, 0);
    expect("AGGCLR", false);
    /* ordinary images still verify */
    a_new(); nop_clause(); nop_clause(); nop_clause();
    a_probe(1, 2, 0, 2);
    a_probe(2, 1, 1);
    a_probe(3, 2, 1, 2);
    expect("increasing lists, disjoint ranges", true);
    return check_summary("test_dif_bounds");
}
