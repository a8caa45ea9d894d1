/* fires: 10  args: -q */
syscall::getpid:entry { @c = count(); }
  syscall::getpid:entry /arg0 == 9/ { printf("after %d firings: ", arg0 + 1); printa("%@d\n", @c); }
