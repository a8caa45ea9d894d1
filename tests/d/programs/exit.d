/* fires: 1000  args: -q */
syscall::getpid:entry /arg0 == 100/ { exit(3); } END { printf("end ran\n"); }
