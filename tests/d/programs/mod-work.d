/* vm: tests/probe/test-probes-net.sh (run modio: the mod-work workload, tests/guest/mod-work.c; its checks are there) */
/* a translator of the program's own (DTrace's syntax), read through xlate at brd's entry */
translator wbio_t < struct bio *B > { op = B->bi_opf & 0xff; bytes = B->bi_iter.bi_size; };
BEGIN { on = 0; wpid = 0; }
syscall::getpid:entry { @polls = count(); }
syscall::getppid:entry /execname == "mod-work"/ { on = !on; wpid = pid; }
/* brd is loaded after this program is armed, twice, and unloaded after each round; its
 * bios: the workload's writes, and the kernel's read of the partition table at each load */
fbt:brd:brd_submit_bio:entry /on/ { @sub[((struct bio *)arg0)->bi_opf & 0xff] = count(); }
/* (args[0] typed from brd's own BTF: a struct bio *) */
fbt:brd:brd_submit_bio:entry /on && xlate<wbio_t *>(args[0])->op == 1/ { @tb = sum(xlate<wbio_t>(args[0]).bytes); }
/* and its returns (the hypervisor finds them in the function as loaded, at each load) */
fbt:brd:brd_submit_bio:return /on/ { @subr = count(); }
/* null_blk's own tracepoints (sdt in a module loaded after arming): each zoned write and zone
 * reset by zone number (arg1), and their bytes (args[0] a struct nullb_cmd *, from null_blk's
 * BTF: a reset moves none), each zone report by the zones it reports (arg1) */
sdt:nullb::nullb_zone_op /on/ { @zop[arg1] = count(); @zb = sum(args[0]->rq->__data_len); }
sdt:nullb::nullb_report_zones /on/ { @rz[arg1] = count(); }
/* its writes' bios (REQ_OP_WRITE = 1) by disk: queued on both; completed as bios on brd only
 * (blk-mq completes requests: block_rq_complete) */
sdt:block::block_bio_queue /on && pid == wpid && (args[0]->bi_opf & 0xff) == 1/ {
    @qn[args[0]->bi_bdev->bd_disk->disk_name] = count(); @qb[args[0]->bi_bdev->bd_disk->disk_name] = sum(args[0]->bi_iter.bi_size);
}
sdt:block::block_bio_complete /on && pid == wpid && (args[1]->bi_opf & 0xff) == 1/ {
    @cn[args[1]->bi_bdev->bd_disk->disk_name] = count(); @cb[args[1]->bi_bdev->bd_disk->disk_name] = sum(args[1]->bi_iter.bi_size);
}
/* the kernel's tracepoint block_rq_insert, at its sites in the kernel and in modules: loop0's
 * requests are inserted by the kyber scheduler's module code (loaded after arming) */
sdt:block::block_rq_insert /on && (args[0]->cmd_flags & 0xff) == 1/ {
    @rin[args[0]->q->disk->disk_name] = count(); @rib[args[0]->q->disk->disk_name] = sum(args[0]->__data_len);
}
/* the loop device's requests (blk-mq): issued and completed, bytes by disk */
sdt:block::block_rq_issue /on && (args[0]->cmd_flags & 0xff) == 1/ {
    @rqn[args[0]->q->disk->disk_name] = count(); @rqb[args[0]->q->disk->disk_name] = sum(args[0]->__data_len);
}
sdt:block::block_rq_complete /on && (args[0]->cmd_flags & 0xff) == 1/ {
    @rcn[args[0]->q->disk->disk_name] = count(); @rcb[args[0]->q->disk->disk_name] = sum(args[2]);
}
/* DTrace's io provider over both: bufinfo_t and devinfo_t translated from the bio */
io:::start /on && args[0]->b_flags & B_WRITE/ {
    @isn[args[1]->dev_statname] = count(); @isb[args[1]->dev_statname] = sum(args[0]->b_bcount);
}
io:::done /on && args[0]->b_flags & B_WRITE/ {
    @idn[args[1]->dev_statname] = count(); @idb[args[1]->dev_statname] = sum(args[0]->b_bcount);
}
/* waited for in submit_bio_wait: every O_DIRECT write (6.1's synchronous direct I/O) and each
 * fsync's flush (no data; brd ends it at once, without a queued bio); wait-done reads the bio
 * its wait-start saw */
io:::wait-start /on/ { @wsn[args[1]->dev_statname] = count(); @wsb[args[1]->dev_statname] = sum(args[0]->b_bcount); }
io:::wait-done /on/ { @wdn[args[1]->dev_statname] = count(); @wdb[args[1]->dev_statname] = sum(args[0]->b_bcount); }
END {
    printa("mod sub%d %@d\n", @sub);
    printa("mod subr %@d\n", @subr);
    printa("mod tb %@d\n", @tb);
    printa("mod zb %@d\n", @zb);
    printa("mod zop %d %@d\n", @zop);
    printa("mod rz %d %@d\n", @rz);
    printa("mod qn %s %@d\n", @qn);
    printa("mod qb %s %@d\n", @qb);
    printa("mod cn %s %@d\n", @cn);
    printa("mod cb %s %@d\n", @cb);
    printa("mod rin %s %@d\n", @rin);
    printa("mod rib %s %@d\n", @rib);
    printa("mod rqn %s %@d\n", @rqn);
    printa("mod rqb %s %@d\n", @rqb);
    printa("mod rcn %s %@d\n", @rcn);
    printa("mod rcb %s %@d\n", @rcb);
    printa("mod isn %s %@d\n", @isn);
    printa("mod isb %s %@d\n", @isb);
    printa("mod idn %s %@d\n", @idn);
    printa("mod idb %s %@d\n", @idb);
    printa("mod wsn %s %@d\n", @wsn);
    printa("mod wsb %s %@d\n", @wsb);
    printa("mod wdn %s %@d\n", @wdn);
    printa("mod wdb %s %@d\n", @wdb);
}
