/* fires: 1500  args: -q */
/*
 * dtrace-utils' aggs/tst.llquantize.d (expected output: its .r): llquantize(i, 10, 0, 6, 20)
 * of i = 0 .. 1499: order 0's buckets 0 .. 9, then 20 per order less the 2 below it. Its
 * syscall::ioctl:entry /pid == $target/ firings are fake_hv's getpid firings here (1500 of
 * them, in order).
 */
#pragma D option quiet

syscall::getpid:entry
{
	@ = llquantize(i++, 10, 0, 6, 20);
}

syscall::getpid:entry
/i == 1500/
{
	exit(0);
}
