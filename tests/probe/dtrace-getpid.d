/*
 * make dtrace's own test (test-dtrace): getpid-loop 100 makes 101 getpid() calls, 100 and one
 * for its own pid; each is seen entering and returning, and returns the caller's pid.
 */
syscall::getpid:entry
/pid == $target/
{
	printf("entry %d\n", pid);
	self->in = 1;
}

syscall::getpid:return
/self->in/
{
	printf("return %d %d\n", pid, arg0);
	@calls = count();
	self->in = 0;
}

END
{
	printa("calls %@d\n", @calls);
}
