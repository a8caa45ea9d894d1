/* fires: 10  args: -q */
syscall::getpid:entry /arg0 < 3/ { printf("%d\n", walltimestamp - arg0); }
