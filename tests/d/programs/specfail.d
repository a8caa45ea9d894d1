/* fires: 1000  args: -q */
syscall::getpid:entry { this->s = speculation(); speculate(this->s); printf("%d\n", arg0); }
  syscall::getpid:entry /arg0 % 5 == 4/ { commit(1); }
