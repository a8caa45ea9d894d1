/* fires: 6 */
/* stack() and ustack() as aggregation keys: fake_hv's firing k unwinds to 4 kernel frames when k is even, 3 when odd; its user stack starts at 0x400000 + k (tests/net/fake_hv_d.c). Printed as dtrace prints @[stack()] (frames on lines of their own, 14 spaces in, then the value), and through printa's %k. */
syscall::getpid:entry { @k[stack()] = count(); @u[ustack(2)] = sum(arg0); @j[execname, stack(2)] = count(); }
END { printa("%s:%k|%@d\n", @j); }
