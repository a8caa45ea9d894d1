/* vm: tests/probe/test-probes-net.sh (run stable: the stable-work workload, tests/guest/stable-work.c; its checks are there) */
BEGIN { on = 0; wpid = 0; }
syscall::getpid:entry { @polls = count(); }
syscall::getppid:entry /execname == "stable-work"/ { on = !on; wpid = pid; }
proc:::create /on && pid == wpid/ { @create = count(); @cparent[args[0]->pr_ppid == wpid] = count(); }
proc:::start /on && curpsinfo->pr_ppid == wpid/ { @start = count(); }
proc:::exec /on && curpsinfo->pr_ppid == wpid/ { @exec[args[0]] = count(); }
proc:::exec-success /on && curpsinfo->pr_ppid == wpid/ {
    printf("stable psargs %s\n", curpsinfo->pr_psargs);
    @fname[curpsinfo->pr_fname] = count();
}
proc:::exec-failure /on && curpsinfo->pr_ppid == wpid/ { @execfail[args[0]] = count(); }
proc:::exit /on && curpsinfo->pr_ppid == wpid/ { @exit[args[0]] = count(); }
/* the workload's own on-CPU time between its two markers, DTrace's way */
syscall::getsid:entry /arg0 == 0x57a1 && pid == wpid/ { self->in = 1; self->ts = timestamp; }
sched:::off-cpu /self->in/ { @cpu = sum(timestamp - self->ts); @offcpu = count(); @next[args[1]->pr_pid == pid] = count(); }
sched:::on-cpu /self->in/ { self->ts = timestamp; @oncpu = count(); }
syscall::getsid:entry /arg0 == 0x57a2 && self->in/ { @cpu = sum(timestamp - self->ts); self->in = 0; }
/* lockstat: the mutexes the workload takes between its lock markers */
syscall::getsid:entry /arg0 == 0x57a3 && pid == wpid/ { self->lk = 1; }
syscall::getsid:entry /arg0 == 0x57a4 && pid == wpid/ { self->lk = 0; }
lockstat:::adaptive-acquire /self->lk/ { @lacq[(uint64_t)args[0]] = count(); }
lockstat:::adaptive-release /self->lk/ { @lrel[(uint64_t)args[0]] = count(); }
END {
    printa("stable create %@d\n", @create);
    printa("stable create_parent %d %@d\n", @cparent);
    printa("stable start %@d\n", @start);
    printa("stable exec %s %@d\n", @exec);
    printa("stable fname %s %@d\n", @fname);
    printa("stable execfail %d %@d\n", @execfail);
    printa("stable exit %d %@d\n", @exit);
    printa("stable cpu %@d\n", @cpu);
    printa("stable offcpu %@d\n", @offcpu);
    printa("stable oncpu %@d\n", @oncpu);
    printa("stable next_self %d %@d\n", @next);
    printa("stable lacq %x %@d\n", @lacq);
    printa("stable lrel %x %@d\n", @lrel);
}
