/* fires: 1000  args: -q */
/*
 * A system call's return probe carries the return value in arg0 as well as arg1 (DTrace's
 * syscall provider), so sum(arg0) at read's return is the bytes read; errno is set from a
 * failed return. The fake's firing k returns k, or -EAGAIN when k % 100 == 99.
 */
syscall::read:return
{
    @bytes = sum(arg0);
    @same[arg0 == arg1 ? "arg0 == arg1" : "arg0 != arg1"] = count();
    @errs[errno] = count();
}
syscall::read:return
/errno == 0/
{
    @ok = sum(arg0);
}
