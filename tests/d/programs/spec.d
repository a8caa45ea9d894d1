/* fires: 1000  args: -q */
syscall::getpid:entry { s = speculation(); speculate(s); printf("entry %d\n", arg0); }
  syscall::getpid:return /s/ { speculate(s); printf("return %d\n", arg0); }
  syscall::getpid:return /s && arg0 % 10 == 3/ { commit(s); s = 0; }
  syscall::getpid:return /s/ { discard(s); s = 0; }
