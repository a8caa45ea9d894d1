/* mod-work - the guest side of the modio run of test-probes-net (tests/probe/test-probes-net.sh,
 * its D program tests/d/programs/mod-work.d): a module loaded after the host armed probes in
 * it, a block device written with O_DIRECT by a known number of bytes, the module unloaded,
 * and all of it again. It says "probe-net: waiting" and makes a getpid() call every 0.2 s until
 * the engine's firing counter moves (the host's program is armed), then, between two getppid()
 * calls (the program's window), twice:
 *   1. insmod /lib/brd.ko rd_nr=1 rd_size=1024 (the kernel package's RAM disk driver: 1 MiB);
 *   2. /dev/ram0 opened with O_DIRECT and written with W writes (4 KiB and 64 KiB ones: each
 *      one bio, one call of brd_submit_bio);
 *   3. SYNCS fsync()s (brd has no write cache: each a flush bio ended at once, waited for in
 *      submit_bio_wait), closed, rmmod brd (the probes in it go with it: the guest must stay healthy);
 * then once, for the block layer's request (blk-mq) path: insmod /lib/loop.ko, /dev/loop0 on
 * a 1 MiB file in the initramfs's tmpfs, scheduled by kyber (insmod /lib/kyber-iosched.ko: its
 * code inserts each request, the kernel's block_rq_insert tracepoint in a module), the same
 * writes with O_DIRECT, the scheduler set back to none, rmmod kyber_iosched, detached, rmmod loop.
 * Then once, for a module's own tracepoints: insmod /lib/configfs.ko and /lib/null_blk.ko as a
 * zoned device (4 MiB zones), /dev/nullb0 written with O_DIRECT from sector 0 (null_zone_write:
 * sdt:nullb::nullb_zone_op each), ZRESETS resets of zone 0 (BLKRESETZONE: zone management, the
 * same tracepoint each) and one BLKREPORTZONE of REPORT_ZONES zones (nullb_report_zones with that
 * count), rmmod null_blk.
 * It prints the writes and bytes it made to each ("mod-work: writes=N bytes=B ...
 * loop_writes=N loop_bytes=B ... null_writes=N null_resets=N null_report=N null_bytes=B"), then "probe-net:
 * workload done" and waits for the disarm ("probe-net: disarmed"). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/blkzoned.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include "hvt_guest.h"
#include "probe_wait.h"

#define SMALL 24                           /* 4 KiB writes per round */
#define LARGE 6                            /* 64 KiB writes per round */
#define ROUNDS 2
#define SYNCS 3                            /* fsync()s of /dev/ram0 per round */
#define ZRESETS 2                          /* resets of nullb0's zone 0 */
#define REPORT_ZONES 5                     /* zones asked for by its BLKREPORTZONE */

/* the writes to an O_DIRECT block device, then nsync fsync()s (each a flush waited for in
 * submit_bio_wait: io:::wait-start): the writes' count, -1 on a failure */
static int writes_to(const char *dev, long *bytes, int nsync)
{
    static char buf[65536] __attribute__((aligned(4096)));
    memset(buf, 0x5a, sizeof buf);
    int fd = open(dev, O_WRONLY | O_DIRECT), n = 0;
    if (fd < 0) {
        perror(dev);
        return -1;
    }
    off_t at = 0;
    for (int i = 0; i < SMALL + LARGE; i++) {
        size_t len = i < SMALL ? 4096 : 65536;
        if (pwrite(fd, buf, len, at) != (ssize_t)len) {
            perror("mod-work: write");
            close(fd);
            return -1;
        }
        at += (off_t)len;
        *bytes += (long)len;
        n++;
    }
    for (int i = 0; i < nsync; i++)
        if (fsync(fd)) {
            perror("mod-work: fsync");
            n = -1;
        }
    close(fd);
    return n;
}

/* one round: load, write, unload; the writes made, -1 on a failure */
static int round_trip(long *bytes)
{
    if (system("insmod /lib/brd.ko rd_nr=1 rd_size=1024")) {
        printf("mod-work: insmod failed\n");
        return -1;
    }
    /* devtmpfs makes the node; without it, brd's major 1, minor 0 */
    if (access("/dev/ram0", F_OK))
        mknod("/dev/ram0", S_IFBLK | 0600, makedev(1, 0));
    int n = writes_to("/dev/ram0", bytes, SYNCS);
    if (system("rmmod brd")) {
        printf("mod-work: rmmod failed\n");
        return -1;
    }
    return n;
}

/* the loop device over a file: requests (blk-mq), not bare bios */
static int loop_trip(long *bytes)
{
    if (system("insmod /lib/loop.ko && dd if=/dev/zero of=/tmp/loop.img bs=65536 count=16 2>/dev/null")) {
        printf("mod-work: loop set-up failed\n");
        return -1;
    }
    if (access("/dev/loop0", F_OK))
        mknod("/dev/loop0", S_IFBLK | 0600, makedev(7, 0));
    /* the kyber I/O scheduler (a module): its insert path fires the kernel's block_rq_insert
     * from the module's own code (loop has no scheduler by default) */
    if (system("losetup /dev/loop0 /tmp/loop.img && insmod /lib/kyber-iosched.ko && "
               "echo kyber > /sys/block/loop0/queue/scheduler")) {
        printf("mod-work: losetup or kyber failed\n");
        return -1;
    }
    int n = writes_to("/dev/loop0", bytes, 0);
    if (system("echo none > /sys/block/loop0/queue/scheduler && rmmod kyber_iosched && "
               "losetup -d /dev/loop0 && rmmod loop && rm /tmp/loop.img")) {
        printf("mod-work: loop tear-down failed\n");
        return -1;
    }
    return n;
}

/* the zoned null_blk device: writes from sector 0 (one zone's write pointer), ZRESETS zone
 * resets, one zone report; the writes made, -1 on a failure */
static int null_trip(long *bytes, int *report)
{
    if (system("insmod /lib/configfs.ko && insmod /lib/null_blk.ko nr_devices=1 zoned=1 zone_size=4 gb=1")) {
        printf("mod-work: null_blk set-up failed\n");
        return -1;
    }
    if (access("/dev/nullb0", F_OK)) {
        FILE *f = fopen("/sys/block/nullb0/dev", "r");
        unsigned ma = 0, mi = 0;
        if (f && fscanf(f, "%u:%u", &ma, &mi) == 2)
            mknod("/dev/nullb0", S_IFBLK | 0600, makedev(ma, mi));
        if (f)
            fclose(f);
    }
    int n = writes_to("/dev/nullb0", bytes, 0), fd = open("/dev/nullb0", O_RDWR);
    struct blk_zone_range zr = { .sector = 0, .nr_sectors = 4u << 11 };   /* 4 MiB in sectors */
    for (int i = 0; fd >= 0 && n > 0 && i < ZRESETS; i++)
        if (ioctl(fd, BLKRESETZONE, &zr)) {
            perror("mod-work: BLKRESETZONE");
            n = -1;
        }
    static struct { struct blk_zone_report r; struct blk_zone z[REPORT_ZONES]; } rep;
    rep.r.sector = 0;
    rep.r.nr_zones = REPORT_ZONES;
    if (fd < 0 || (n > 0 && ioctl(fd, BLKREPORTZONE, &rep))) {
        perror("mod-work: nullb0");
        n = -1;
    }
    *report = (int)rep.r.nr_zones;
    if (fd >= 0)
        close(fd);
    if (system("rmmod null_blk && rmmod configfs")) {
        printf("mod-work: null_blk tear-down failed\n");
        return -1;
    }
    return n;
}

int main(void)
{
    if (!hvt_present())
        return 2;
    printf("probe-net: waiting for the host to arm\n");
    fflush(stdout);
    if (probe_wait_armed(probe_poke_getpid))
        return 1;
    long bytes = 0, lbytes = 0;
    int writes = 0, lwrites = 0, ok = 1;
    syscall(SYS_getppid);                  /* the window opens */
    for (int r = 0; r < ROUNDS && ok; r++) {
        int n = round_trip(&bytes);
        ok = n > 0;
        writes += n > 0 ? n : 0;
    }
    if (ok) {
        lwrites = loop_trip(&lbytes);
        ok = lwrites > 0;
    }
    long nbytes = 0;
    int nwrites = 0, nreport = 0;
    if (ok) {
        nwrites = null_trip(&nbytes, &nreport);
        ok = nwrites > 0;
    }
    syscall(SYS_getppid);                  /* and closes */
    /* the guest goes on after the unloads: a module's probes did not outlive its code */
    int alive = !system("echo 3 > /proc/sys/vm/drop_caches && cat /proc/modules | grep -c brd; true");
    printf("mod-work: writes=%d bytes=%ld rounds=%d loop_writes=%d loop_bytes=%ld syncs=%d pid=%d null_writes=%d "
           "null_resets=%d null_report=%d null_bytes=%ld\n", writes, bytes, ROUNDS, lwrites, lbytes, ROUNDS * SYNCS,
           (int)getpid(), nwrites, ZRESETS, nreport, nbytes);
    printf("probe-net: workload done calls=%d %s\n", writes, ok && alive ? "ok" : "FAIL");
    fflush(stdout);
    probe_wait_disarmed(probe_poke_getpid);
    return 0;
}
