/* fires: 3  args: -x rawbytes */
/*
 * rawbytes: a string traced, or an aggregation's string key, prints as DTrace's hex dump of
 * its recorded bytes (strsize + 1 of them, as dtrace-utils: the text, then zeros) even when it
 * reads as text.
 * Firing k's execname is alpha, beta or gamma (k % 3).
 */
#pragma D option strsize=16
#pragma D option quiet
syscall::getpid:entry { trace(execname); printf("\n"); @[execname] = count(); }
