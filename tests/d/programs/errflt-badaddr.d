/* fires: 1  args: -q */
/*
 * dtrace-utils' test/unittest/error/tst.DTRACEFLT_BADADDR.d: ERROR's arguments after a load
 * from NULL in BEGIN: arg1 the faulting probe's id (BEGIN's, 1), arg2 the faulting clause's
 * index (1: this ERROR clause is 0), arg4 DTRACEFLT_BADADDR, arg5 the address. Expected
 * output: that test's .r.
 */
#pragma D option quiet

ERROR
{
	printf("The arguments are %u %u %u %u\n",
		arg1, arg2, arg4, arg5);
	printf("The value of arg4 should be %u\n", DTRACEFLT_BADADDR);
	printf("The value of arg5 should be %u\n", NULL);
	exit(0);
}

BEGIN
{
	*(char *)NULL;
}
