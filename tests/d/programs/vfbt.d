/* fires: 10  args: -q */
fbt::do_mmap:entry /arg0 < 3/ { printf("k=%d caller=%x a6=%x a7=%x a8=%x a9=%x p6=%x\n", arg0, caller, arg6, arg7, arg8, arg9, (uint64_t)args[6]); }
