/* test_scope_probe: the scope's switch probe (trace/step/scope.c) through its probe ops - armed at
 * the first window's open, at the slid switch_at; a disarm of every probe (the engine's count
 * moves: a D program's unload) makes the next scope_poll arm it again, once; none while no
 * window is open; the window's close disarms it. The rest of the hypervisor is stubbed. */
#include <stdio.h>
#include <string.h>
#include "scope.h"
#include "kaslr.h"
#include "task.h"
#include "gmem.h"
#include "hv_guest.h"
#include "check.h"

#define SLIDE 0x2000000ull
#define SWITCH_AT 0xffffffff81000100ull

/* The hypervisor around scope.c. */
void spin_lock(struct spinlock *l) { (void)l; }
void spin_unlock(struct spinlock *l) { (void)l; }
bool kaslr_known(void) { return true; }
uint64_t kaslr_slide(void) { return SLIDE; }
bool task_read(uint64_t task, struct task_info *out) { (void)task; (void)out; return false; }
size_t gmem_read_gva(const struct gmem_paging *p, uint64_t gva, void *buf, size_t len)
{
    (void)p; (void)gva; (void)buf; (void)len;
    return 0;
}
void hv_guest_paging(struct gmem_paging *p) { (void)p; }

/* The probe engine, as scope_probe_ops sees it. */
static int arms, disarms;
static uint64_t armed_va;
static unsigned disarm_alls;
static int f_arm(uint64_t va, uint32_t id) { arms++; armed_va = va; return id == SCOPE_PROBE_ID; }
static void f_disarm(uint64_t va) { disarms++; (void)va; }
static unsigned f_count(void) { return disarm_alls; }

int main(void)
{
    struct trace_opts o;
    memset(&o, 0, sizeof o);
    o.scope = TRACE_SCOPE_COMM;
    memcpy(o.scope_comm, "md5sum", 7);
    o.switch_at = SWITCH_AT;
    scope_configure(&o);
    static const struct scope_probe_ops ops = { f_arm, f_disarm, f_count };
    scope_set_probe_ops(&ops);

    scope_poll();
    CHECK(arms == 0, "no window: the probe is not armed");
    scope_window_open();
    CHECK(arms == 1 && armed_va == SWITCH_AT + SLIDE, "the first window arms it at the slid address");
    scope_poll();
    CHECK(arms == 1, "armed and not lost: scope_poll leaves it");
    disarm_alls++;                          /* the engine disarmed every probe */
    scope_poll();
    CHECK(arms == 2 && armed_va == SWITCH_AT + SLIDE, "a disarm of every probe: armed again");
    scope_poll();
    CHECK(arms == 2, "once");
    scope_window_close();
    CHECK(disarms == 1, "the window's close disarms it");
    disarm_alls++;
    scope_poll();
    CHECK(arms == 2, "no window open: not armed again");
    scope_window_open();
    CHECK(arms == 3, "the next window arms it");
    scope_window_close();
    return check_summary("test_scope_probe");
}
