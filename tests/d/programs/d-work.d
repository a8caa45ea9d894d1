/* vm: tests/probe/test-probes-net.sh (run dwork: the d-work workload, tests/guest/d-work.c; its checks are there) */
BEGIN { npg = 0; }
syscall::getpid:entry { @polls = count(); }
syscall::getppid:entry { @bycomm[execname] = count(); }
fbt::__x64_sys_getppid:entry /execname == "dw-one" || execname == "dw-two"/ { @fbt = count(); }
syscall::read:entry
/execname == "d-work"/
{
    @sizes = quantize(arg2);
    self->ts = timestamp;
}
syscall::read:return
/self->ts/
{
    @latmin = min(timestamp - self->ts);
    @latmax = max(timestamp - self->ts);
    self->ts = 0;
}
syscall::openat:entry
/execname == "d-work"/
{
    @paths[copyinstr(arg1)] = count();
}
fbt::vfs_read:entry
/execname == "d-work" && arg2 == 100/
{
    stack();
}
syscall::read:entry
/execname == "d-work" && arg2 == 5000/
{
    trace(*(char *)arg1);
}
syscall::getpgid:entry
/execname == "d-work"/
{
    trace(*(long *)0);
}
syscall::getpgid:entry
/execname == "d-work"/
{
    trace(*(long *)0xffff800000001000);
}
syscall::getpgid:entry
/execname == "d-work"/
{
    step();
}
syscall::getpgid:return
/execname == "d-work"/
{
    npg++;
}
syscall::getpgid:return
/execname == "d-work" && npg == 2/
{
    stop();
}
syscall::getpgid:return
/execname == "d-work" && npg != 2/
{
    unstep();
}
