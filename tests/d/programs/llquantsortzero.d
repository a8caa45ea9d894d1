/* fires: 1  args: -q */
/*
 * dtrace-utils' aggs/tst.llquantsortzero.d (expected output: its .r): llquantize with low
 * magnitude 0 and steps 20 > factor 10 (order 0 labelled 0 .. 9), a negative increment in the
 * zero bucket, keys sorted by their sums.
 */
#pragma D option quiet

BEGIN
{
	@["Alfalfa"] = llquantize(0, 10, 0, 2, 20, 25);
	@["Buckwheat"] = llquantize(0, 10, 0, 2, 20, -25);
	@["Alfalfa"] = llquantize(2, 10, 0, 2, 20, 100);
	@["Buckwheat"] = llquantize(4, 10, 0, 2, 20, 50);

	printa(@);
	exit(0);
}
