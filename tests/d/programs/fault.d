/* fires: 100 */
syscall::getpid:entry /arg0 == 7 || arg0 == 9/ { trace(*(int *)arg0); } syscall::getpid:entry /arg0 == 8/ { trace(arg1); }
