/* step-openat.d - make test-step-scope: D's step() at the openat entry of processes that are
 * in openat at the same time (tests/guest/step-two-run: two, then nine) steps those threads
 * alone, each up to its own call's return, eight at most (tests/probe/check-step-scope.sh
 * judges the trace and the errors). The program also probes the scheduler's switch point,
 * where each step() window's own switch probe sits: its probe must outlive the windows. */
BEGIN
{
    cat_done = 0;
    tee_done = 0;
}

syscall::openat:entry
/execname == "cat" && !cat_done/
{
    cat_done = 1;
    step();
}

syscall::openat:entry
/execname == "tee" && !tee_done/
{
    tee_done = 1;
    step();
}

/* Every head's openat (step-two-run's second part: nine at once, one more than the tracer
 * steps at once): eight are stepped, the ninth step() is refused - the firing's error. */
syscall::openat:entry
/execname == "head"/
{
    step();
}

/* After every window has closed: the workload's last process exits. */
syscall::exit_group:entry
/execname == "step-two-run"/
{
    windows_done = 1;
}

fbt::__switch_to:entry
/windows_done/
{
    @switches_after = count();
}

END
{
    printa("switches_after_windows %@d\n", @switches_after);
}
