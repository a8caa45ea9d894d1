/* fires: 8  args: -q */
syscall::getpid:entry { printf("k=%d", arg0); ustack(); } syscall::getpid:entry /arg0 == 5/ { printf("two=%d", arg0); ustack(2); }
