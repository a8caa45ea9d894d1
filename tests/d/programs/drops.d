/* fires: 2000  args: -q -x bufsize=512 */
syscall::getpid:entry { printf("%d %s\n", arg0, execname); }
