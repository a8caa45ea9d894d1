/* vm: tests/probe/test-probes-net.sh (run modio: the mod-work workload, tests/guest/mod-work.c; its checks are there) */
BEGIN { on = 0; wpid = 0; }
syscall::getpid:entry { @polls = count(); }
syscall::getppid:entry /execname == "mod-work"/ { on = !on; wpid = pid; }
/* brd is loaded after this program is armed, twice, and unloaded after each round; its
 * bios: the workload's writes, and the kernel's read of the partition table at each load */
fbt:brd:brd_submit_bio:entry /on/ { @sub[((struct bio *)arg0)->bi_opf & 0xff] = count(); }
/* its writes: bio-based, so block_bio_queue and block_bio_complete (REQ_OP_WRITE = 1) */
sdt:block::block_bio_queue /on && pid == wpid && (args[0]->bi_opf & 0xff) == 1/ {
    @qn = count(); @qb = sum(args[0]->bi_iter.bi_size);
}
sdt:block::block_bio_complete /on && pid == wpid && (args[1]->bi_opf & 0xff) == 1/ {
    @cn = count(); @cb = sum(args[1]->bi_iter.bi_size);
}
END {
    printa("mod sub%d %@d\n", @sub);
    printa("mod qn %@d\n", @qn);
    printa("mod qb %@d\n", @qb);
    printa("mod cn %@d\n", @cn);
    printa("mod cb %@d\n", @cb);
}
