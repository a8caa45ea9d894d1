syscall::getpid:entry { printf("a %d\n", arg0); }
