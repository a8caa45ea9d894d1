/* vm: tests/probe/test-probes-net.sh (run d: the probe-net workload, tests/guest/probe-net.c; its checks are there) */
syscall::getppid:entry
{
    @calls[probefunc] = count();
    @percpu[cpu] = count();
    self->t = timestamp;
}
syscall::getppid:return
/self->t/
{
    @lat = quantize(timestamp - self->t);
    @matched = count();
    self->t = 0;
}
syscall::getpriority:entry
/execname == "probe-net"/
{
    printf("getpriority(%x, %x) by %s\n", arg0, arg1, execname);
}
syscall::getpriority:return
/execname == "probe-net"/
{
    printf("getpriority returned %d errno %d\n", (int)arg1, errno);
}
syscall::getpriority:entry
/execname == "probe-net"/
{
    printf("ustack:");
    ustack();
}
syscall::getpriority:entry
/execname == "probe-net"/
{
    printf("ids: pid %d ppid %d uid %d gid %d\n", pid, ppid, uid, gid);
}
BEGIN
{
    printf("wall: %d\n", walltimestamp / 1000000000);
}
syscall::getpid:entry
{
    @polls[execname] = count();
}
