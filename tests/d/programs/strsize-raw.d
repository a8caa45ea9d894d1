/* fires: 1 */
/*
 * dtrace-utils' funcs/strjoin/tst.strjoin-capped-size.d: strjoin() cut at strsize (10)
 * characters; with rawbytes a string prints as its recorded bytes, the 10 characters and the
 * NUL (expected output: that test's .r).
 */
#pragma D option rawbytes
#pragma D option strsize=10
#pragma D option quiet

BEGIN
{
	trace(strjoin(probeprov, probename));
	exit(0);
}

ERROR
{
	exit(1);
}
