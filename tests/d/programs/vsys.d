/* fires: 10  args: -q */
syscall::getpid:entry /arg0 < 2/ { printf("k=%d a6=%d a9=%d caller=%x\n", arg0, arg6, arg9, caller); }
