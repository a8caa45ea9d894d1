/* fires: 1500  args: -q */
/*
 * dtrace-utils' aggs/tst.llquantneg.d (expected output: its .r): llquantize(i, 10, 0, 6, 20)
 * of i = 0 .. 1499 with increments +1 and -1 in turn: dtrace-utils' symmetric buckets, the
 * bars either side of the center line, the sums of 0 above 100 left out. Its
 * syscall::ioctl:entry /pid == $target/ firings are fake_hv's getpid firings here (1500 of
 * them, in order).
 */
#pragma D option quiet

syscall::getpid:entry
/i % 2 == 0/
{
	@ = llquantize(i++, 10, 0, 6, 20);
}

syscall::getpid:entry
/i % 2 != 0/
{
	@ = llquantize(i++, 10, 0, 6, 20, -1);
}

syscall::getpid:entry
/i == 1500/
{
	exit(0);
}
