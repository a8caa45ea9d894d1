/* fires: 4  args: -q */
BEGIN { printf("BEGIN epid=%d id=%d\n", epid, id); } syscall::getpid:entry { printf("getpid epid=%d\n", epid); } syscall::getpid:entry /arg0 == 1/ { printf("second epid=%d\n", epid); } END { printf("END epid=%d id=%d\n", epid, id); }
