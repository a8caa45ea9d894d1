/* tickbench N_UNTRACED N_TRACED [MD5_BYTES] - the guest half of bench-step: how many timer
 * interrupts a busy CPU takes per instruction, untraced and then traced (between hvtrace
 * marks); with MD5_BYTES, then a realistic workload in a window of its own: busybox md5sum of
 * a file of that many bytes (written before the window), printing
 *   TICKBENCH-MD5 bytes=N tsc=T status=S
 * N_TRACED 0 skips the busy loop's windows (a boot that measures md5sum alone).
 * A 10 kHz interval timer (setitimer, an hrtimer on the TSC-deadline timer) makes the rate
 * measurable in a short traced window. Prints one line:
 *   TICKBENCH untraced_tsc=T loc=L sig=S traced_tsc=T loc=L sig=S
 * loc = this CPU's "LOC" (local timer) interrupts from /proc/interrupts, sig = SIGALRMs. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>
#include "hvt_guest.h"

static volatile unsigned long sigs;
static void on_alarm(int s) { (void)s; sigs++; }

static unsigned long loc_count(void)
{
    char line[4096];
    unsigned long v = 0;
    FILE *f = fopen("/proc/interrupts", "r");
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "LOC:")) { sscanf(strchr(line, ':') + 1, "%lu", &v); break; }
    fclose(f);
    return v;
}

static void spin(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        __asm__ volatile("" ::: "memory");
}

/* md5sum of an n-byte file, traced from before the fork to after the wait. */
static int md5_window(unsigned long n)
{
    static char path[] = "/tmp/tickbench.dat";
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0) { perror(path); return 1; }
    unsigned long x = 0x9e3779b97f4a7c15ul;
    char b[4096];
    for (unsigned long done = 0; done < n; done += sizeof b) {
        for (size_t i = 0; i < sizeof b; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            b[i] = (char)x;
        }
        size_t k = n - done < sizeof b ? n - done : sizeof b;
        if (write(fd, b, k) != (ssize_t)k) { perror(path); return 1; }
    }
    close(fd);
    printf("TICKBENCH-PHASE md5\n");
    fflush(stdout);
    hvt_mark(1);
    unsigned long long t0 = __rdtsc();
    pid_t p = fork();
    if (p == 0) {
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) dup2(nul, 1);
        execl("/bin/busybox", "md5sum", path, (char *)0);
        _exit(127);
    }
    int st = -1;
    if (p > 0) waitpid(p, &st, 0);
    unsigned long long t1 = __rdtsc();
    hvt_mark(0);
    printf("TICKBENCH-MD5 bytes=%lu tsc=%llu status=%d\n", n, t1 - t0, st);
    return st != 0;
}

int main(int argc, char **argv)
{
    unsigned long nu = argc > 1 ? strtoul(argv[1], 0, 0) : 50000000, nt = argc > 2 ? strtoul(argv[2], 0, 0) : 1000000;
    unsigned long md5 = argc > 3 ? strtoul(argv[3], 0, 0) : 0;
    if (!hvt_present()) { fprintf(stderr, "tickbench: hvtrace not detected\n"); return 2; }
    if (!nt)
        return md5 ? md5_window(md5) : 0;
    signal(SIGALRM, on_alarm);
    struct itimerval it = { { 0, 100 }, { 0, 100 } };
    setitimer(ITIMER_REAL, &it, 0);
    /* Phase lines for the host's wall clock (bochs-run.sh BOCHS_STAMP): Bochs's own cost. */
    printf("TICKBENCH-PHASE untraced\n");
    fflush(stdout);
    unsigned long l0 = loc_count(), s0 = sigs;
    unsigned long long t0 = __rdtsc();
    spin(nu);
    unsigned long long t1 = __rdtsc();
    unsigned long l1 = loc_count(), s1 = sigs;
    printf("TICKBENCH-PHASE traced\n");
    fflush(stdout);
    hvt_mark(1);
    unsigned long long t2 = __rdtsc();
    spin(nt);
    unsigned long long t3 = __rdtsc();
    unsigned long s2 = sigs;
    hvt_mark(0);
    unsigned long l2 = loc_count();
    printf("TICKBENCH untraced_tsc=%llu loc=%lu sig=%lu traced_tsc=%llu loc=%lu sig=%lu\n",
           t1 - t0, l1 - l0, s1 - s0, t3 - t2, l2 - l1, s2 - s1);
    fflush(stdout);
    if (md5) {
        struct itimerval off = { { 0, 0 }, { 0, 0 } };
        setitimer(ITIMER_REAL, &off, 0);     /* md5sum's window: the kernel's own timer only */
        return md5_window(md5);
    }
    return 0;
}
