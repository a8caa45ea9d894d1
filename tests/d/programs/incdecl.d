/* fires: 4  args: -q */
/*
 * ++ and -- declare a variable first used with them, as DTrace does (an int64_t that was 0),
 * global, self-> or this->, in a predicate too. The values are those of dtrace-utils' tests:
 * clauses/tst.predfirst.d (x++ == 0 in BEGIN's predicate; exit(x - 1) exits 0),
 * variables/tvar/tst.post_inc_lvar.r (self->x++ is 0), tvar/tst.pre_inc_lvar.r (++self->x is
 * 1), and lvar's the same for this->. n-- at each of the 4 firings leaves -4. A predicate may
 * read a variable its clause's body first increments (DTrace cooks the actions first, as in
 * dtrace-utils' aggs/tst.llquantneg.d): m stops at 2.
 */
BEGIN
/x++ == 0/
{
	printf("predfirst: x - 1 = %d\n", x - 1);
}

BEGIN
{
	printf("self->a++ = %d, ++self->b = %d\n", self->a++, ++self->b);
	printf("this->c++ = %d, ++this->d = %d\n", this->c++, ++this->d);
}

syscall::getpid:entry
{
	n--;
}

syscall::getpid:entry
/m < 2/
{
	m++;
}

END
{
	printf("n = %d, m = %d\n", n, m);
}
