/* fires: 300  args: -q */
/*
 * aggzoom: a distribution's largest bucket is drawn 95% of the bar (38 of 40 '@'), the others
 * in proportion to it, instead of each bucket as its share of the total. Firing k (0..299)
 * counts arg0 = k in its power-of-two bucket and arg2 = k % 7 in a linear one.
 */
#pragma D option aggzoom
syscall::getpid:entry { @q = quantize(arg0); @l = lquantize(arg2, 0, 7, 1); }
