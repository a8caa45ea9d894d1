/* fires: 1000  args: -q -x specsize=256 */
syscall::getpid:entry /arg0 % 10 == 0/ { s = speculation(); }
  syscall::getpid:entry /s/ { speculate(s); printf("%d\n", arg0); }
  syscall::getpid:entry /arg0 % 10 == 9/ { commit(s); s = 0; }
