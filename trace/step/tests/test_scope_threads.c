/* test_scope_threads.c - the table of threads D's step() steps at once
 * (trace/step/scope_threads.c): joining, each thread's own end, the last one, a full table's
 * refusal, a window ended for all, and a thread that joins while the window closes. */
#include <stdio.h>
#include <string.h>
#include "scope_threads.h"
#include "check.h"

#define RIP(n) (0xffffffff81000000ull + (n) * 0x40)
#define RSP(n) (0xffffc90000010000ull + (n) * 0x1000)

int main(void)
{
    struct scope_threads s;
    memset(&s, 0, sizeof s);
    uint32_t g0 = s.gen;

    /* One thread, then a second with its own end. */
    CHECK(scope_threads_add(&s, 100, RIP(1), RSP(1)) == SCOPE_ADD_NEW && scope_threads_live(&s, 100));
    CHECK(s.gen != g0, "a new end changes the generation");
    CHECK(!scope_threads_live(&s, 101) && scope_threads_nlive(&s) == 1);
    CHECK(scope_threads_add(&s, 101, RIP(2), RSP(2)) == SCOPE_ADD_NEW && scope_threads_nlive(&s) == 2);
    CHECK(scope_threads_is_end_rip(&s, RIP(1)) && scope_threads_is_end_rip(&s, RIP(2)) &&
          !scope_threads_is_end_rip(&s, RIP(3)));

    /* step() again inside a live thread's window: the outer call's end stands. */
    uint32_t g1 = s.gen;
    CHECK(scope_threads_add(&s, 100, RIP(9), RSP(9)) == SCOPE_ADD_LIVE && s.gen == g1);
    CHECK(scope_threads_end(&s, 100, RIP(9), RSP(9)) == SCOPE_END_NO, "the inner call's return is not the end");

    /* Each thread ends at its own end alone: not another's, not a recursive call's (same RIP,
     * another RSP), not another thread reaching it. */
    CHECK(scope_threads_end(&s, 100, RIP(1), RSP(1) - 0x40) == SCOPE_END_NO, "a recursive call's return");
    CHECK(scope_threads_end(&s, 100, RIP(2), RSP(2)) == SCOPE_END_NO, "the other thread's end");
    CHECK(scope_threads_end(&s, 102, RIP(1), RSP(1)) == SCOPE_END_NO, "a thread not stepped at the end");
    CHECK(scope_threads_end(&s, 101, RIP(1), RSP(1)) == SCOPE_END_NO, "a stepped thread at another's end");
    CHECK(scope_threads_live(&s, 100) && scope_threads_live(&s, 101));
    CHECK(scope_threads_end(&s, 100, RIP(1), RSP(1)) == SCOPE_END_MORE, "the first of two ends: others go on");
    CHECK(!scope_threads_live(&s, 100) && scope_threads_live(&s, 101) && scope_threads_nlive(&s) == 1);
    CHECK(!scope_threads_is_end_rip(&s, RIP(1)), "a done thread's end is no longer one");
    CHECK(scope_threads_end(&s, 100, RIP(1), RSP(1)) == SCOPE_END_NO, "a done thread ends once");
    CHECK(scope_threads_end(&s, 101, RIP(2), RSP(2)) == SCOPE_END_LAST, "the last thread's end");
    CHECK(scope_threads_nlive(&s) == 0);

    /* A done thread joins again with its new end (the same window, a later call). */
    CHECK(scope_threads_add(&s, 100, RIP(5), RSP(5)) == SCOPE_ADD_NEW && scope_threads_live(&s, 100));
    CHECK(scope_threads_end(&s, 100, RIP(1), RSP(1)) == SCOPE_END_NO &&
          scope_threads_end(&s, 100, RIP(5), RSP(5)) == SCOPE_END_LAST, "its new end, not its old one");

    /* A full table refuses, changing nothing; a done slot is free again. */
    memset(&s, 0, sizeof s);
    for (uint32_t i = 0; i < SCOPE_MAX_THREADS; i++)
        CHECK(scope_threads_add(&s, 200 + i, RIP(i), RSP(i)) == SCOPE_ADD_NEW);
    uint32_t g2 = s.gen;
    CHECK(scope_threads_add(&s, 300, RIP(20), RSP(20)) == SCOPE_ADD_FULL, "one more than the table holds");
    CHECK(!scope_threads_live(&s, 300) && scope_threads_nlive(&s) == SCOPE_MAX_THREADS && s.gen == g2);
    CHECK(scope_threads_add(&s, 203, RIP(21), RSP(21)) == SCOPE_ADD_LIVE, "a live one in a full table");
    CHECK(scope_threads_end(&s, 203, RIP(3), RSP(3)) == SCOPE_END_MORE);
    CHECK(scope_threads_add(&s, 300, RIP(20), RSP(20)) == SCOPE_ADD_NEW && scope_threads_live(&s, 300),
          "a done thread's slot is taken");
    CHECK(scope_threads_add(&s, 301, RIP(22), RSP(22)) == SCOPE_ADD_FULL);

    /* No end of its own (no return address): only the window's end ends it. */
    memset(&s, 0, sizeof s);
    CHECK(scope_threads_add(&s, 400, 0, 0) == SCOPE_ADD_NEW && !scope_threads_is_end_rip(&s, 0));
    CHECK(scope_threads_end(&s, 400, 0, 0) == SCOPE_END_NO && scope_threads_live(&s, 400));

    /* The window ended for all (unstep()): every thread is done; the close sweeps them. A
     * thread that joins after that (while the window closes) outlives the sweep: it is the
     * next window's. */
    CHECK(scope_threads_add(&s, 401, RIP(3), RSP(3)) == SCOPE_ADD_NEW);
    scope_threads_end_all(&s);
    CHECK(scope_threads_nlive(&s) == 0 && !scope_threads_live(&s, 400) && !scope_threads_live(&s, 401));
    CHECK(scope_threads_add(&s, 402, RIP(4), RSP(4)) == SCOPE_ADD_NEW);
    uint32_t g3 = s.gen;
    CHECK(scope_threads_sweep(&s) == 1 && scope_threads_live(&s, 402) && s.gen != g3,
          "a thread that joined while the window closed stays");
    unsigned used = 0;
    for (unsigned i = 0; i < SCOPE_MAX_THREADS; i++)
        used += s.t[i].state != SCOPE_THR_FREE;
    CHECK(used == 1, "the swept slots are free (%u used)", used);
    CHECK(scope_threads_end(&s, 402, RIP(4), RSP(4)) == SCOPE_END_LAST && scope_threads_sweep(&s) == 0);
    return check_summary("test_scope_threads");
}
