/* fires: 12  args: --folded ${W}/stackfold.folded --flame ${W}/stackfold.svg */
syscall::getpid:entry { @[execname, stack()] = count(); }
