/* vm: tests/probe/test-probes-net.sh (run sdt: the sdt-work workload, tests/guest/sdt-work.c; its checks are there) */
BEGIN { on = 0; wpid = 0; }
syscall::getpid:entry { @polls = count(); }
syscall::getppid:entry /execname == "sdt-work"/ { on = !on; wpid = pid; }
sdt:sched::sched_process_fork /on && args[0]->pid == wpid && args[1]->pid > wpid/ { @fork = count(); }
sdt:sched::sched_process_exec /on && execname == "sdt-kid" && args[1] == pid/ { @exec = count(); }
sdt:sched::sched_process_exit /on && execname == "sdt-kid" && args[0]->pid == pid/ { @exit = count(); }
tracepoint:sched:sched_switch /on && pid == wpid && args[0] == 0 && args[3] != 0 && args[1]->pid == tid && args[2]->pid != tid/ { @vol = count(); }
sdt:sched::sched_switch /on && pid == wpid && args[1]->pid != tid/ { @badprev = count(); }
sdt:sched::sched_wakeup /on && args[0]->pid == wpid/ { @wake = count(); }
END {
    printa("sdt fork %@d\n", @fork);
    printa("sdt exec %@d\n", @exec);
    printa("sdt exit %@d\n", @exit);
    printa("sdt vol %@d\n", @vol);
    printa("sdt wake %@d\n", @wake);
    printa("sdt badprev %@d\n", @badprev);
}
