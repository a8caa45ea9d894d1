/* fires: 3  args: -q */
BEGIN { } syscall::getpid:entry /arg0 == 1/ { trace(*(int *)arg0); } ERROR { printf("ERROR arg1=%d\n", arg1); }
