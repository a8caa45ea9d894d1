/* fires: 1  args: -q */
/*
 * dtrace-utils' aggs/tst.llquantize_sort.d (expected output: its .r): negative values in
 * llquantize's negative buckets ('<= -4', -2, -1), 0 in the underflow bucket, keys sorted by
 * dtrace-utils' weighted sum of the buckets and then their zero bucket.
 */
#pragma D option quiet

BEGIN
{
	@normal["r"] = llquantize( 2, 2, 0, 1, 2, 1);
	@normal["z"] = llquantize(-4, 2, 0, 1, 2, 1);
	@normal["v"] = llquantize( 0, 2, 0, 1, 2, 1);
	@normal["x"] = llquantize(-2, 2, 0, 1, 2, 1);
	@normal["q"] = llquantize( 3, 2, 0, 1, 2, 1);
	@normal["u"] = llquantize( 0, 2, 0, 1, 2, 2);
	@normal["y"] = llquantize(-3, 2, 0, 1, 2, 1);
	@normal["t"] = llquantize( 0, 2, 0, 1, 2, 2);
	@normal["p"] = llquantize( 4, 2, 0, 1, 2, 1);
	@normal["w"] = llquantize(-1, 2, 0, 1, 2, 1);
	@normal["s"] = llquantize( 1, 2, 0, 1, 2, 1);

	@tricky["r"] = llquantize( 2, 2, 0, 1, 4, 1);
	@tricky["z"] = llquantize(-4, 2, 0, 1, 4, 1);
	@tricky["v"] = llquantize( 0, 2, 0, 1, 4, 1);
	@tricky["x"] = llquantize(-2, 2, 0, 1, 4, 1);
	@tricky["q"] = llquantize( 3, 2, 0, 1, 4, 1);
	@tricky["u"] = llquantize( 0, 2, 0, 1, 4, 2);
	@tricky["y"] = llquantize(-3, 2, 0, 1, 4, 1);
	@tricky["t"] = llquantize( 0, 2, 0, 1, 4, 2);
	@tricky["p"] = llquantize( 4, 2, 0, 1, 4, 1);
	@tricky["w"] = llquantize(-1, 2, 0, 1, 4, 1);
	@tricky["s"] = llquantize( 1, 2, 0, 1, 4, 1);

	printf("normal\n");
	printa(@normal);
	printf("tricky\n");
	printa(@tricky);
	exit(0);
}
