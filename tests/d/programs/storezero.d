/* fires: 1  args: -q */
/*
 * Storing 0 into an associative array element or a thread-local deletes it and never takes
 * room: dtrace-utils' assocs/tst.store_zero_safe.d (dynvarsize=20 holds one element of 16
 * bytes, key and value, as dtrace-utils counts: dynvarsize / (tuple + value); a[2..4] = 0 must
 * not be drops) and tst.store_zero_deletes.d (a[1] = 0 frees the room a[5] then takes), the
 * same for self->. test-d-coll checks that no drop is reported.
 */
#pragma D option dynvarsize=20
#pragma D option quiet

BEGIN
{
	a[1] = 1;
	a[2] = 0;
	a[3] = 0;
	a[4] = 0;
	trace(a[1]);
	trace(a[2]);
	trace(a[3]);
	trace(a[4]);
	printf("\n");
	a[1] = 0;
	a[5] = 5;
	trace(a[1]);
	trace(a[5]);
	printf("\n");
	a[5] = 0;
	self->a = 1;
	self->b = 0;
	self->c = 0;
	trace(self->a);
	trace(self->b);
	trace(self->c);
	printf("\n");
	exit(0);
}

ERROR
{
	exit(1);
}
