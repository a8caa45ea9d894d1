/* fires: 3  env: TZ=UTC  args: -q */
syscall::getpid:entry /arg0 == 2/ { printf("[%T] [%S] [%C] [%C] [%hx] [%hhx] [%lx] [%i]\n", 1700000000000000000, execname, 65, 10, (short)-1, (char)-1, 255L, 3); }
