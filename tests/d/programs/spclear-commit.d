/* fires: 10  args: -q */
syscall::getpid:entry { @c = count(); }
    syscall::getpid:entry /arg0 == 5/ { s = speculation(); speculate(s); clear(@c); }
    syscall::getpid:entry /arg0 == 6/ { commit(s); }
