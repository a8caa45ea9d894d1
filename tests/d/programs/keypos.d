/* fires: 300  args: -x aggsortkey -x aggsortkeypos=2 */
syscall::getpid:entry /arg2 < 2/ { @[execname, arg2, arg0 % 2] = count(); }
