/* fires: 1  args: -q */
/*
 * strsize is the most characters a string holds, its NUL apart, as in dtrace-utils: a string
 * constant longer than that is cut at strsize characters, like every other string
 * (funcs/strlen/tst.capped-sizw.d: strlen("123456789") is 5 at strsize=5); two constants that
 * differ past strsize compare equal; a key is cut the same way. strsize=1 is refused and 2 is
 * the least (options/err.strsize-min.d, tst.strsize-min.d).
 */
#pragma D option strsize=5
#pragma D option quiet

BEGIN
{
	s = "123456789";
	a["abcdefgh"] = 1;
	printf("strlen %d [%s] [%s] equal %d key %d\n", strlen("123456789"), s, "abcdefgh",
	    s == "12345xyz", a["abcdeXYZ"]);
	printf("[%s]\n", strjoin(s, "ab"));
	exit(strlen("123456789") == 5 ? 0 : 1);
}
