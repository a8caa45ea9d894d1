/* stable: the proc and sched providers' rows (stable.h). Each row says which probe of the
 * running kernel stands for the stable probe, when it counts and what its arguments are, after
 * dtrace-utils' libdtrace/dt_prov_proc.c and dt_prov_sched.c (their dependent probes and
 * trampolines), except where a row says otherwise. */
#include "stable.h"
#include <string.h>

/* the proc and sched rows leave the lockstat fields (helper, set, clear) out: zero */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define TASK_ARGS(e) { "(lwpsinfo_t *)" e, "(psinfo_t *)" e }
#define TASK_TYPES   { "lwpsinfo_t *", "psinfo_t *" }

static const stable_row rows[] = {
    /* ---- proc ---- */
    /* a new process: dtrace-utils fires create for every task sched_process_fork makes, threads
     * too; here, as in Solaris's proc provider, only for a new process (lwp-create has the
     * threads) */
    { "proc", "create", "sdt:sched::sched_process_fork", "args[1]->pid == args[1]->tgid",
      { "(psinfo_t *)args[1]" }, { "psinfo_t *" }, 0 },
    /* dtrace-utils reads the file name from the caller's memory at execve's entry: a child
     * that execs right after fork has often not touched the page its parent's string is on
     * (fork copies no page table entries of file-backed memory), and the read faults. The
     * kernel's own copy instead, once per execve and execveat (and the kernel's own execs),
     * when alloc_bprm(fd, filename) starts: before the file is opened, so a name that does
     * not exist fires it too (6.8+ opens the file there, 6.1 later in bprm_execve). An exec
     * refused before that (a bad name pointer, RLIMIT_NPROC) does not fire. The system calls
     * where alloc_bprm is not a probe */
    { "proc", "exec", "fbt::alloc_bprm:entry", NULL, { "stringof(args[1]->name)" }, { "string" }, 0 },
    { "proc", "exec", "syscall::execve:entry", NULL, { "copyinstr(arg0)" }, { "string" }, 1 },
    { "proc", "exec", "syscall::execveat:entry", NULL, { "copyinstr(arg1)" }, { "string" }, 1 },
    /* exec-failure's args[0]: the system call's return value, as dtrace-utils gives it */
    { "proc", "exec-failure", "syscall::execve:return", "arg1 != 0", { "(int)arg1" }, { "int" }, 0 },
    { "proc", "exec-failure", "syscall::execveat:return", "arg1 != 0", { "(int)arg1" }, { "int" }, 0 },
    { "proc", "exec-success", "syscall::execve:return", "arg1 == 0", { NULL }, { NULL }, 0 },
    { "proc", "exec-success", "syscall::execveat:return", "arg1 == 0", { NULL }, { NULL }, 0 },
    /* the process's exit: its group leader's; args[0] CLD_EXITED 1, CLD_KILLED 2, CLD_DUMPED 3
     * from the task's exit_code, as dtrace-utils computes it */
    { "proc", "exit", "sdt:sched::sched_process_exit", "args[0]->pid == args[0]->tgid",
      { "(int)((args[0]->exit_code & 0x7f) == 0 ? 1 : (args[0]->exit_code & 0x80) ? 3 : 2)" }, { "int" }, 0 },
    { "proc", "lwp-create", "sdt:sched::sched_process_fork", NULL, TASK_ARGS("args[1]"), TASK_TYPES, 0 },
    { "proc", "lwp-exit", "sdt:sched::sched_process_exit", NULL, { NULL }, { NULL }, 0 },
    { "proc", "lwp-start", "fbt::schedule_tail:return", NULL, { NULL }, { NULL }, 0 },
    { "proc", "signal-clear", "syscall::rt_sigtimedwait:return", "(int)arg1 > 0", { "(int)arg1" }, { "int" }, 0 },
    /* the signal number: where the kernel turned an unhandled signal into SIGKILL, the one it
     * keeps in signal->group_exit_code (dtrace-utils' trampoline) */
    { "proc", "signal-handle", "sdt:signal::signal_deliver", NULL,
      { "(int)(args[0] == 9 && curthread->signal->group_exit_code > 0 ? curthread->signal->group_exit_code : args[0])",
        "args[1]", "args[2]->sa.sa_handler" },
      { "int", "struct kernel_siginfo *", "__sighandler_t" }, 0 },
    /* a kernel whose signal_deliver site cannot be probed (6.1's: its block stores to the
     * stack): the frame for a handler set up (signal_setup_done(failed, ksig, stepping)); a
     * signal taken by its default action does not fire it */
    { "proc", "signal-handle", "fbt::signal_setup_done:entry", "arg0 == 0",
      { "args[1]->sig", "&args[1]->info", "args[1]->ka.sa.sa_handler" },
      { "int", "struct kernel_siginfo *", "__sighandler_t" }, 1 },
    { "proc", "signal-send", "fbt::complete_signal:entry", NULL,
      { "(lwpsinfo_t *)args[1]", "(psinfo_t *)args[1]", "args[0]" }, { "lwpsinfo_t *", "psinfo_t *", "int" }, 0 },
    /* a new process's first thread returning from its creation (lwp-start: every thread) */
    { "proc", "start", "fbt::schedule_tail:return", "curthread->pid == curthread->tgid", { NULL }, { NULL }, 0 },

    /* ---- sched ---- */
    /* args[2], the cpuinfo_t, is 0 as in dtrace-utils */
    { "sched", "dequeue", "fbt::dequeue_task_*:entry", NULL,
      { "(lwpsinfo_t *)args[1]", "(psinfo_t *)args[1]", "(void *)0", "(int)arg2" },
      { "lwpsinfo_t *", "psinfo_t *", "cpuinfo_t *", "int" }, 0 },
    { "sched", "enqueue", "fbt::enqueue_task_*:entry", NULL,
      { "(lwpsinfo_t *)args[1]", "(psinfo_t *)args[1]", "(void *)0", "(int)((arg2 & 0x10) != 0)" },
      { "lwpsinfo_t *", "psinfo_t *", "cpuinfo_t *", "int" }, 0 },
    /* the thread about to leave the CPU is current; args[] name the one coming on */
    { "sched", "off-cpu", "sdt:sched::sched_switch", NULL, TASK_ARGS("args[2]"), TASK_TYPES, 0 },
    /* dtrace-utils takes __perf_event_task_sched_in, which the kernel calls only while a perf
     * event is open (dtrace opens one); finish_task_switch runs first thing on the new thread
     * after every switch, a new task's first too */
    { "sched", "on-cpu", "fbt::finish_task_switch*:entry", NULL, { NULL }, { NULL }, 0 },
    /* sched_switch's preempt flag, and a switch away from a thread that set its state */
    { "sched", "preempt", "sdt:sched::sched_switch", "args[0] != 0", { NULL }, { NULL }, 0 },
    { "sched", "sleep", "sdt:sched::sched_switch", "args[0] == 0 && args[3] != 0", { NULL }, { NULL }, 0 },
    { "sched", "surrender", "fbt::do_sched_yield:entry", NULL, TASK_ARGS("curthread"), TASK_TYPES, 0 },
    { "sched", "tick", "fbt::scheduler_tick:entry", NULL, TASK_ARGS("curthread"), TASK_TYPES, 0 },
    { "sched", "tick", "fbt::sched_tick:entry", NULL, TASK_ARGS("curthread"), TASK_TYPES, 1 }, /* 6.10+ */
    { "sched", "wakeup", "sdt:sched::sched_wakeup", NULL, TASK_ARGS("args[0]"), TASK_TYPES, 0 },

    /* ---- lockstat (dtrace-utils' dt_prov_lockstat.c: the lock taken at a function's entry,
     * the probe at its return; its per-CPU slots are thread-locals here, which a thread that
     * sleeps in mutex_lock and wakes on another CPU keeps) ---- */
#define HELPER(p, n, u, pr, s0, s1) { "lockstat", n, u, pr, { NULL }, { NULL }, 0, 1, { s0, s1 }, { NULL } }
#define MUTEX  { "struct mutex *" }
#define SPIN   { "spinlock_t *" }
    HELPER(0, "adaptive-acquire", "fbt::mutex_lock:entry", NULL, "self->__ls_lock = arg0", NULL),
    { "lockstat", "adaptive-acquire", "fbt::mutex_lock:return", "self->__ls_lock != 0",
      { "(struct mutex *)self->__ls_lock" }, MUTEX, 0, 0, { NULL }, { "self->__ls_lock = 0" } },
    /* blocked: the time mutex_lock slept in schedule_preempt_disabled (args[1], ns) */
    HELPER(0, "adaptive-block", "fbt::mutex_lock:entry", NULL, "self->__ls_lock = arg0", "self->__ls_btime = 0"),
    HELPER(0, "adaptive-block", "fbt::schedule_preempt_disabled:entry", "self->__ls_lock != 0",
           "self->__ls_bfrom = timestamp", NULL),
    HELPER(0, "adaptive-block", "fbt::schedule_preempt_disabled:return", "self->__ls_bfrom != 0",
           "self->__ls_btime = self->__ls_btime + (timestamp - self->__ls_bfrom)", "self->__ls_bfrom = 0"),
    { "lockstat", "adaptive-block", "fbt::mutex_lock:return", "self->__ls_lock != 0 && self->__ls_btime != 0",
      { "(struct mutex *)self->__ls_lock", "self->__ls_btime" }, { "struct mutex *", "uint64_t" }, 0, 0, { NULL },
      { "self->__ls_lock = 0", "self->__ls_btime = 0" } },
    /* spun: from the first spin lock mutex_lock took (its wait_lock) to its return, as dtrace-utils */
    HELPER(0, "adaptive-spin", "fbt::mutex_lock:entry", NULL, "self->__ls_lock = arg0", "self->__ls_stime = 0"),
    HELPER(0, "adaptive-spin", "fbt::_raw_spin_lock:entry", "self->__ls_lock != 0 && self->__ls_stime == 0",
           "self->__ls_stime = timestamp", NULL),
    { "lockstat", "adaptive-spin", "fbt::mutex_lock:return", "self->__ls_lock != 0 && self->__ls_stime != 0",
      { "(struct mutex *)self->__ls_lock", "timestamp - self->__ls_stime" }, { "struct mutex *", "uint64_t" }, 0, 0,
      { NULL }, { "self->__ls_lock = 0", "self->__ls_stime = 0" } },
    HELPER(0, "adaptive-release", "fbt::mutex_unlock:entry", NULL, "self->__ls_rel = arg0", NULL),
    { "lockstat", "adaptive-release", "fbt::mutex_unlock:return", "self->__ls_rel != 0",
      { "(struct mutex *)self->__ls_rel" }, MUTEX, 0, 0, { NULL }, { "self->__ls_rel = 0" } },
    HELPER(0, "spin-acquire", "fbt::_raw_spin_lock*:entry", NULL, "self->__ls_slock = arg0", NULL),
    HELPER(0, "spin-acquire", "fbt::_raw_spin_trylock*:entry", NULL, "self->__ls_slock = arg0", NULL),
    { "lockstat", "spin-acquire", "fbt::_raw_spin_lock*:return", "self->__ls_slock != 0",
      { "(spinlock_t *)self->__ls_slock" }, SPIN, 0, 0, { NULL }, { "self->__ls_slock = 0" } },
    { "lockstat", "spin-acquire", "fbt::_raw_spin_trylock*:return", "self->__ls_slock != 0 && arg1 == 1",
      { "(spinlock_t *)self->__ls_slock" }, SPIN, 0, 0, { NULL }, { "self->__ls_slock = 0" } },
    HELPER(0, "spin-release", "fbt::_raw_spin_unlock*:entry", NULL, "self->__ls_srel = arg0", NULL),
    { "lockstat", "spin-release", "fbt::_raw_spin_unlock*:return", "self->__ls_srel != 0",
      { "(spinlock_t *)self->__ls_srel" }, SPIN, 0, 0, { NULL }, { "self->__ls_srel = 0" } },
    /* spun: the queued spin lock's slow path, args[1] its time (ns) */
    HELPER(0, "spin-spin", "fbt::*queued_spin_lock_slowpath:entry", NULL, "self->__ls_sslock = arg0",
           "self->__ls_sstime = timestamp"),
    { "lockstat", "spin-spin", "fbt::*queued_spin_lock_slowpath:return", "self->__ls_sstime != 0",
      { "(spinlock_t *)self->__ls_sslock", "timestamp - self->__ls_sstime" }, { "spinlock_t *", "uint64_t" }, 0, 0,
      { NULL }, { "self->__ls_sslock = 0", "self->__ls_sstime = 0" } },
};

const stable_row *stable_rows(size_t *n)
{
    *n = sizeof rows / sizeof rows[0];
    return rows;
}

size_t stable_find(const char *prov, const char *name, size_t *first)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (!strcmp(rows[i].prov, prov) && !strcmp(rows[i].name, name)) {
            if (!n)
                *first = i;
            n++;
        }
    return n;
}

int stable_is_provider(const char *prov)
{
    return !strcmp(prov, "proc") || !strcmp(prov, "sched") || !strcmp(prov, "lockstat");
}
