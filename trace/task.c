/* task.c - current-task attribution (see task.h). */
#include "task.h"
#include "hv_api.h"
#include "hvt_bootinfo.h"
#include "hv_guest.h"
#include "gmem.h"
#include "task_base.h"

#define KERNEL_HALF 0xffff800000000000ull

static struct { uint64_t current_off, pid_off, tgid_off, comm_off, cred_off, euid_off; } lay;
bool task_on;
struct task_cpu task_cpus[HVT_MAX_CPUS];

void task_set_layout(const uint64_t off[6])
{
    lay.current_off = off[0];
    lay.pid_off = off[1];
    lay.tgid_off = off[2];
    lay.comm_off = off[3];
    lay.cred_off = off[4];
    lay.euid_off = off[5];
    task_on = true;
}


void task_kernel_paging(struct gmem_paging *pg)
{
    hv_guest_paging(pg);
    pg->cr3 &= ~TASK_CR3_PTI_USER;
}

void task_reset(unsigned cpu) { task_cpus[cpu].slot = 0; task_cpus[cpu].last = 0; }
void task_forget(unsigned cpu) { task_cpus[cpu].last = 0; }

/* This CPU's current task pointer, or 0 (per-CPU data not reachable yet). The per-CPU base
 * comes from task_base_pick() (task_base.h: never a GS base user code can set); a slot is
 * cached only when the base it came from is the trusted one, taken at a user-mode exit. */
static uint64_t current_task(unsigned cpu)
{
    struct task_cpu *t = &task_cpus[cpu];
    if (!task_on)
        return 0;
    uint64_t *slot = t->slot;
    if (!slot) {
        unsigned cpl = (unsigned)(hv_vmread(VMCS_GUEST_SS_AR) >> 5) & 3;   /* SS.DPL: the CPL */
        uint64_t kgs = hv_rdmsr(MSR_IA32_KERNEL_GS_BASE);   /* not switched by VMX: the guest's */
        struct task_base b = task_base_pick(cpl, hv_guest_read(HV_GUEST_GS_BASE), kgs, t->kbase);
        if (!b.base)
            return 0;
        if (cpl == 3)
            t->kbase = b.base;             /* only the kernel writes KERNEL_GS_BASE */
        struct gmem_paging pg;
        struct gmem_xlat x;
        task_kernel_paging(&pg);
        uint64_t va = b.base + lay.current_off;
        if ((va & 7) || gmem_walk(&pg, va, &x))
            return 0;
        uint8_t *page = gmem_map_gpa(x.gpa);
        if (!page)
            return 0;
        slot = (uint64_t *)(page + (x.gpa & 0xfff));
        if (b.cacheable)
            t->slot = slot;                /* per-CPU data never moves */
    }
    uint64_t task = *(volatile uint64_t *)slot;
    return task >= KERNEL_HALF ? task : 0;
}

static void read_task(uint64_t task, struct task_info *out)
{
    struct gmem_paging pg;
    task_kernel_paging(&pg);
    uint32_t pid = 0, tgid = 0;
    memset(out, 0, sizeof *out);
    out->task = task;
    gmem_read_gva(&pg, task + lay.pid_off, &pid, sizeof pid);
    gmem_read_gva(&pg, task + lay.tgid_off, &tgid, sizeof tgid);
    gmem_read_gva(&pg, task + lay.comm_off, out->comm, sizeof out->comm - 1);
    out->pid = pid;
    out->tgid = tgid;
}

bool task_check(unsigned cpu, struct task_info *out)
{
    uint64_t task = current_task(cpu);
    if (!task || task == task_cpus[cpu].last)
        return false;
    task_cpus[cpu].last = task;
    read_task(task, out);
    return true;
}

uint64_t task_current(unsigned cpu) { return current_task(cpu); }

/* A host pointer to len bytes at task + off in guest RAM, or 0 (unmapped, or across a page). */
static const volatile uint8_t *task_field_ptr(uint64_t task, uint64_t off, unsigned len)
{
    struct gmem_paging pg;
    struct gmem_xlat x;
    task_kernel_paging(&pg);
    uint64_t va = task + off;
    if (!task_on || ((va & 0xfff) + len > 0x1000) || gmem_walk(&pg, va, &x))
        return 0;
    uint8_t *page = gmem_map_gpa(x.gpa & ~0xfffull);
    return page ? page + (x.gpa & 0xfff) : 0;
}

const volatile char *task_comm_ptr(uint64_t task)
{
    return (const volatile char *)task_field_ptr(task, lay.comm_off, 16);
}

bool task_euid(unsigned cpu, uint32_t *euid)
{
    uint64_t task = current_task(cpu), cred = 0;
    struct gmem_paging pg;
    if (!task || !lay.cred_off)
        return false;
    task_kernel_paging(&pg);
    return gmem_read_gva(&pg, task + lay.cred_off, &cred, sizeof cred) == sizeof cred &&
           cred >= KERNEL_HALF && gmem_read_gva(&pg, cred + lay.euid_off, euid, sizeof *euid) == sizeof *euid;
}

bool task_read(uint64_t task, struct task_info *out)
{
    if (!task_on || task < KERNEL_HALF)
        return false;
    read_task(task, out);
    return true;
}

bool task_now(unsigned cpu, struct task_info *out)
{
    uint64_t task = current_task(cpu);
    if (!task)
        return false;
    read_task(task, out);
    return true;
}

/* The process a probe's firing sees on each CPU (probe_current keeps it). */
struct task_who task_whos[HVT_MAX_CPUS];


void probe_kernel_paging(struct gmem_paging *pg) { task_kernel_paging(pg); }

/* The current process's name and ids: where they live in the task is looked up when the
 * task changes; the name and the ids themselves are read at every call. An exec or prctl
 * renames the task in place, and the slab object of a task that just exited is often the
 * next new task's: a name or a pid cached by the task's address would stick to another
 * process. */
static const char unknown_comm[TRACE_COMM_MAX] = "?";   /* whole: callers read it all */
const char *probe_current_slow(unsigned cpu, uint32_t *pid, uint32_t *tid)
{
    uint64_t task = task_current(cpu);
    *pid = *tid = 0;
    if (!task) {
        task_whos[cpu].task = 0;           /* what a firing hands the action */
        return unknown_comm;
    }
    if (task != task_whos[cpu].task) {
        struct task_info ti;
        if (!task_now(cpu, &ti)) {
            task_whos[cpu].task = 0;
            return unknown_comm;
        }
        __builtin_memcpy(task_whos[cpu].comm, ti.comm, TRACE_COMM_MAX);
        task_whos[cpu].comm[TRACE_COMM_MAX - 1] = 0;
        task_whos[cpu].pid = (uint32_t)ti.tgid;
        task_whos[cpu].tid = (uint32_t)ti.pid;
        task_whos[cpu].task = task;
        task_whos[cpu].comm_ptr = task_comm_ptr(task);
        task_whos[cpu].pid_ptr = (const volatile int32_t *)task_field_ptr(task, lay.pid_off, 4);
        task_whos[cpu].tgid_ptr = (const volatile int32_t *)task_field_ptr(task, lay.tgid_off, 4);
    } else {
        if (task_whos[cpu].comm_ptr) {     /* two loads: the kernel keeps it NUL-terminated */
            uint64_t w[2];
            __builtin_memcpy(w, (const char *)task_whos[cpu].comm_ptr, sizeof w);
            __builtin_memcpy(task_whos[cpu].comm, w, sizeof w);
            task_whos[cpu].comm[TRACE_COMM_MAX - 1] = 0;
        }
        if (task_whos[cpu].pid_ptr)
            task_whos[cpu].tid = (uint32_t)*task_whos[cpu].pid_ptr;
        if (task_whos[cpu].tgid_ptr)
            task_whos[cpu].pid = (uint32_t)*task_whos[cpu].tgid_ptr;
    }
    *pid = task_whos[cpu].pid;
    *tid = task_whos[cpu].tid;
    return task_whos[cpu].comm;
}
