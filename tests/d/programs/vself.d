/* fires: 300  args: -q */
syscall::getpid:entry /arg0 < 0/ { self->a[0, ""] = 0; } syscall::getpid:entry /arg0 >= 290/ { printf("k=%d prev=%d\n", arg0, self->a[arg0 % 5, execname]); } syscall::getpid:entry { self->a[arg0 % 5, execname] = arg0; } syscall::getpid:entry /arg0 == 0/ { this->p = (char *)curthread; printf("%c%c%c\n", this->p[0], this->p[5], this->p[7]); }
