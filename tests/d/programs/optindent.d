/* fires: 4  args: -q -x stackindent=3 */
/* stackindent: each ustack() frame is indented 3 spaces instead of DTrace's 14 (the fake's
 * firing k has pc 0x400000 + k and 4 - k % 4 return addresses above it). */
syscall::getpid:entry { printf("k=%d", arg0); ustack(); }
