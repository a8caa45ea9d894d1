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
/* TCP over the loopback to port 7777 (0x1e61; skc_dport is in network order: 0x611e read as a
 * little-endian u16): every socket of the workload's connections that becomes ESTABLISHED, by
 * the state it left (2 SYN_SENT: the client's; 3 SYN_RECV: the server's) */
sdt:sock::inet_sock_set_state /on && args[2] == 1 && args[0]->__sk_common.skc_family == 2 &&
    (args[0]->__sk_common.skc_num == 7777 || args[0]->__sk_common.skc_dport == 0x611e)/ { @est[args[1]] = count(); }
END {
    printa("sdt est %d %@d\n", @est);
    printa("sdt fork %@d\n", @fork);
    printa("sdt exec %@d\n", @exec);
    printa("sdt exit %@d\n", @exit);
    printa("sdt vol %@d\n", @vol);
    printa("sdt wake %@d\n", @wake);
    printa("sdt badprev %@d\n", @badprev);
}
