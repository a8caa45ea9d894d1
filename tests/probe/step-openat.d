/* step-openat.d - make test-step-scope: D's step() at the openat entry of two processes that
 * are in openat at the same time (tests/guest/step-two-run) steps those two threads alone, each
 * up to its own call's return (tests/probe/check-step-scope.sh judges the trace). */
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
