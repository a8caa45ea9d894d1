ERROR arg1 is the faulting probe's id: 1, arg2 its clause: 1

