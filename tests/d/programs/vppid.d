/* fires: 10 */
syscall::getpid:entry /arg0 == 0/ { trace(ppid); }
