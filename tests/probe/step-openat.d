/* step-openat.d - make test-step-scope: D's step() at one process's openat entry steps that
 * thread alone, up to the call's return (tests/probe/check-step-scope.sh judges the trace). */
BEGIN
{
    done = 0;
}

syscall::openat:entry
/execname == "cat" && !done/
{
    done = 1;
    step();
}
