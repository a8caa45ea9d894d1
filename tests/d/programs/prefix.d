/* fires: 2 */
BEGIN { trace(1); } syscall::getpid:entry /arg0 > 5/ { } END { trace(2); }
