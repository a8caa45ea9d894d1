/* fires: 1  args: -q */
/*
 * Scalar arrays as DTrace has them: a global `int a[5]`, a string array, a clause-local
 * `this int t[4]` and a thread-local `self int u[4]`, each element 0 until stored; an index
 * that is not a constant is checked when it runs: index out of bounds, ERROR's arg4
 * DTRACEFLT_BADINDEX (11: dtrace-utils has no D name for it) and arg5 the index
 * (dtrace-utils' arrays/tst.declared-bounds.runtime_in.d and runtime_out.d), and so is one
 * into a kernel array of more than one element
 * (curthread->comm[20]: char[16]). A constant index out of bounds is a compile error
 * (arrays/err.D_ARR_BOUNDS.declared.d: unit_d). test-d-coll checks the 4 messages.
 */
int a[5];
string s[3];
this int t[4];
self int u[4];

BEGIN
{
	a[0] = 100;
	a[4] = 500;
	a[2]++;
	a[2] += 10;
	s[1] = "one";
	this->t[3] = 33;
	self->u[1] = 11;
	i = 3;
	printf("a %d %d %d %d %d\n", a[0], a[1], a[2], a[3], a[4]);
	printf("s [%s] [%s] t %d %d u %d %d\n", s[0], s[1], this->t[3], this->t[0], self->u[1], self->u[i]);
	printf("a[i] %d comm[i] %d\n", a[i + 1], curthread->comm[i]);
}

BEGIN
{
	i = 8;
	a[i] = 12345678;
	printf("not reached\n");
}

BEGIN
{
	i = 4;
	this->t[i] = 1;
}

BEGIN
{
	self->u[i + 1] = 1;
}

BEGIN
{
	i = 20;
	trace(curthread->comm[i]);
}

ERROR
{
	printf("ERROR arg4 %d arg5 %d\n", arg4, arg5);
}

BEGIN
{
	exit(0);
}
