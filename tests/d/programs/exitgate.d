/* fires: 10  args: -q */
/*
 * After exit() only END runs, as in dtrace-utils (a clause runs only while the activity is its
 * probe's, and exit() makes it DRAINING, END's): firing 2 exits in the second clause, so its
 * third clause does not run, and firings 3 to 9 (fake_hv fires them before hvt disarms the
 * probe) run nothing; END still does. dtrace-utils' end/tst.end.d and aggs/tst.max.d show the
 * same (one firing's lines, then END's).
 */
syscall::getpid:entry
{
	printf("k=%d\n", arg0);
}

syscall::getpid:entry
/arg0 == 2/
{
	exit(0);
}

syscall::getpid:entry
{
	printf("after k=%d\n", arg0);
}

END
{
	printf("end\n");
}
