/* fires: 300  args: -q */
syscall::getpid:entry { @c[execname] = count(); @s[execname] = sum(arg0); }
  syscall::getpid:entry /arg2 == 3/ { @m[execname] = max(arg0); }
  syscall::getpid:entry /execname != "gamma"/ { @b[execname] = min(arg0); }
  END { printa("%-8s %@d %@d %@d %@d\n", @c, @s, @m, @b); }
