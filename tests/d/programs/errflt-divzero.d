/* fires: 1  args: -q */
/*
 * dtrace-utils' test/unittest/error/tst.DTRACEFLT_DIVZERO.div.d: a division by zero in the
 * fifth BEGIN clause (index 4): ERROR's arg1 is BEGIN's id, arg2 4, arg4 DTRACEFLT_DIVZERO,
 * arg5 0, and it exits 0 only if all of them are. No output (that test's .r).
 */
#pragma D option quiet

BEGIN { myid = id } /* clause 0 */
BEGIN { myid = id } /* clause 1 */
BEGIN { myid = id } /* clause 2 */
BEGIN { myid = id } /* clause 3 */

BEGIN
{
	myid = id;
	i = 1;
	j = 2;
	j = i / (j - 2);
	exit(1);
}

ERROR
{
	exit(arg1 != myid || arg2 != 4 || arg4 != DTRACEFLT_DIVZERO ||
	     arg5 != 0);
}
