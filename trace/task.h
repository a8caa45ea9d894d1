/*
 * task.h - which process runs: the guest's current task (pid, tgid, comm), read from guest
 * memory with offsets the host computed from the kernel's own BTF and kallsyms
 * (`hvt syms VMLINUZ --layout`) and passed in the boot configuration:
 *     trace = task=CURRENT_PERCPU_OFF:PID_OFF:TGID_OFF:COMM_OFF
 * Why the host computes them: the hypervisor has no BTF parser, and one line of config keeps it
 * that way; raw values would need the same offsets on the host anyway to mean anything.
 * Contract: task_set_layout() takes the offsets (trace_opts.c parses the option);
 * task_check() is called at every step and returns true when the current task changed since
 * the last call on this CPU, filling *out; task_now() reads the current task whatever the last
 * call saw; task_same() is the fast path's check (true: task_check() would return false). Guest
 * memory is only read through gmem.
 */
#ifndef HVT_TASK_H
#define HVT_TASK_H
#include <stdint.h>
#include <stdbool.h>
#include "trace_opts.h"

struct task_info { uint64_t task, pid, tgid; char comm[16]; };

/* Linux keeps the two page-table roots of a PTI pair 8 KiB aligned; bit 12 of CR3 selects the
 * user one, which maps almost no kernel memory. Kernel addresses are walked under the kernel
 * root whichever half the CPU runs on (a VM exit from user mode has the user one loaded). */
#define TASK_CR3_PTI_USER (1ull << 12)
struct gmem_paging;
void task_kernel_paging(struct gmem_paging *pg);

/* Per CPU: host pointer to the guest's current_task slot (per-CPU data never moves; cached
 * only from a trusted base, task_base.h), the task task_check() last reported, and the
 * per-CPU base read from IA32_KERNEL_GS_BASE at a user-mode exit (0: none yet). */
struct task_cpu { uint64_t *slot; uint64_t last; uint64_t kbase; };
extern struct task_cpu task_cpus[];
extern bool task_on;

static inline bool task_same(unsigned cpu)
{
    const struct task_cpu *t = &task_cpus[cpu];
    return t->slot ? *(volatile uint64_t *)t->slot == t->last : !task_on;
}

void task_set_layout(const uint64_t off[6]);   /* off[4], off[5]: cred, euid (0: unknown) */
/* The effective uid of this CPU's current task (false: not known: no layout, no task yet,
 * or its memory unreadable). */
bool task_euid(unsigned cpu, uint32_t *euid);
void task_reset(unsigned cpu);
/* The next task_check() reports the current task again, read afresh (its name may have changed
 * since it was reported: an exec). */
void task_forget(unsigned cpu);
bool task_check(unsigned cpu, struct task_info *out);
bool task_now(unsigned cpu, struct task_info *out);
/* Any task's ids and name, read from guest memory (false: no layout, or not a kernel address). */
bool task_read(uint64_t task, struct task_info *out);
/* The guest's current task pointer on this CPU (0: not known yet): cheap, a read of the
 * per-CPU slot task_now() would walk to first. */
uint64_t task_current(unsigned cpu);
/* Host pointer to the 16 bytes of a task's name in guest RAM (NULL: not mapped, or the name
 * crosses a page): valid while the task exists, so a caller that keeps it for the current task
 * sees a new name (exec, prctl) at once without walking the page tables again. */
const volatile char *task_comm_ptr(uint64_t task);

 
/* For the probe engine and the D runtime: the current process's name (NUL-terminated,
 * TRACE_COMM_MAX bytes readable; "?" when unknown, with pid and tid 0), its pid (the tgid) and
 * tid. The task and where its name and ids live are looked up when the task changes; the
 * name and the ids are read at every call (an exec renames the task in place, and a new task
 * often takes the slab object, so the address, of one that just exited). */
/* What probe_current last found on this CPU (a firing's record takes it from here). */
struct task_who {
    uint64_t task;                         /* the task whose name 'comm' holds, or 0 */
    const volatile char *comm_ptr;         /* its name in guest RAM (task_comm_ptr), or NULL */
    const volatile int32_t *pid_ptr, *tgid_ptr;   /* its pid and tgid in guest RAM, or NULL */
    char comm[TRACE_COMM_MAX];
    uint32_t pid, tid;
};
extern struct task_who task_whos[];
static inline const struct task_who *task_who(unsigned cpu) { return &task_whos[cpu]; }
const char *probe_current_slow(unsigned cpu, uint32_t *pid, uint32_t *tid);
/* Inline, as every firing asks: the same task as last time on this CPU, with its name and ids
 * where they were found (host pointers into guest RAM, valid while the task exists), reads
 * them again there; anything else takes probe_current_slow. */
static inline const char *probe_current(unsigned cpu, uint32_t *pid, uint32_t *tid)
{
    const struct task_cpu *t = &task_cpus[cpu];
    struct task_who *w = &task_whos[cpu];
    if (__builtin_expect(t->slot != 0, 1)) {
        uint64_t task = *(volatile uint64_t *)t->slot;
        if (task && task == w->task && w->comm_ptr && w->pid_ptr && w->tgid_ptr) {
            uint64_t c[2];                 /* two loads: the kernel keeps it NUL-terminated */
            __builtin_memcpy(c, (const char *)w->comm_ptr, sizeof c);
            __builtin_memcpy(w->comm, c, sizeof c);
            w->comm[TRACE_COMM_MAX - 1] = 0;
            *tid = w->tid = (uint32_t)*w->pid_ptr;
            *pid = w->pid = (uint32_t)*w->tgid_ptr;
            return w->comm;
        }
    }
    return probe_current_slow(cpu, pid, tid);
}
/* task_kernel_paging under the name the probe engine's files use. */
void probe_kernel_paging(struct gmem_paging *pg);
#endif
