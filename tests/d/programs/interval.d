/* fires: 200000  args: -q --tsc-khz 1000000 */
syscall::getpid:entry { @c = count(); @total = count(); }
  profile:::tick-1s /arg0 % 20000 < 2/ { printf("tick at k=%d: ", arg0); printa("%@d\n", @c); clear(@c); }
  END { printa("end: %@d\n", @c); printa("total: %@d\n", @total); }
