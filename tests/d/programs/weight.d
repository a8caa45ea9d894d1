/* fires: 300 */
syscall::getpid:entry { @q = quantize(arg0, 3); @l = lquantize(arg2, 0, 7, 1, arg0); }
