/* fires: 300  args: -q */
BEGIN { printf("hello from BEGIN\n"); } syscall::getpid:entry /arg0 < 5/ { printf("k=%d name=%s s=%s\n", arg0, execname, stringof(copyinstr(curthread))); }
