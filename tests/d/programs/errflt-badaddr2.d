/* fires: 1  args: -q */
/*
 * dtrace-utils' test/unittest/error/tst.DTRACEFLT_BADADDR2.d: the same at address 0x4000,
 * which ERROR's arg5 carries. Expected output: that test's .r.
 */
#pragma D option quiet

ERROR
{
	printf("The arguments are %u %u %u %u\n",
		arg1, arg2, arg4, arg5);
	printf("The value of arg4 should be %u\n", DTRACEFLT_BADADDR);
	printf("The value of arg5 should be %u\n", 0x4000);
	exit(0);
}

BEGIN
{
	x = (int *)0x4000;
	y = *x;
	trace(y);
}
