/* fires: 1  args: -q */
/* dtrace-utils' test/unittest/aggs/tst.quantlast.d: a count only in quantize()'s last bucket (2^62) prints that row and the one below; expected output: that test's .r. */
#pragma D option quiet

BEGIN
{
	x = 0x4000000000000000;
	@ = quantize(x, 1234);
	exit(0);
}
