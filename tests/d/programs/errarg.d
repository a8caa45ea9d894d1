/* fires: 3  args: -q */
BEGIN { } syscall::getpid:entry /arg0 == 1/ { myid = id; trace(*(int *)arg0); } ERROR { printf("ERROR arg1 is the faulting probe's id: %d, arg2 its clause: %d\n", arg1 == myid, arg2); }
