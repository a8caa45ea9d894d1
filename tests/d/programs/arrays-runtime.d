/* fires: 1  args: -q */
/*
 * dtrace-utils' arrays/tst.declared-bounds.runtime_out.d: a[8] of an int a[5] with a
 * non-constant index is a run-time error that ERROR sees (expected output: that test's .r).
 */
#pragma D option quiet

int a[5];

BEGIN
{
	i = 8;
	a[i] = 12345678;
	trace(a[i]);
	exit(1);
}

ERROR
{
	trace("expected run-time error");
	exit(0);
}
