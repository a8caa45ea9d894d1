/* fires: 3000 */
syscall::getpid:entry { @c[execname] = count(); @s[execname] = sum(arg0); @mx = max(arg0); @mn = min(arg1); @a = avg(arg2); @q = quantize(arg0); }
