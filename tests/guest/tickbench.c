/* tickbench N_UNTRACED N_TRACED - the guest half of bench-step: how many timer interrupts a
 * busy CPU takes per instruction, untraced and then traced (between hvtrace marks).
 * A 10 kHz interval timer (setitimer, an hrtimer on the TSC-deadline timer) makes the rate
 * measurable in a short traced window. Prints one line:
 *   TICKBENCH untraced_tsc=T loc=L sig=S traced_tsc=T loc=L sig=S
 * loc = this CPU's "LOC" (local timer) interrupts from /proc/interrupts, sig = SIGALRMs. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
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

int main(int argc, char **argv)
{
    unsigned long nu = argc > 1 ? strtoul(argv[1], 0, 0) : 50000000, nt = argc > 2 ? strtoul(argv[2], 0, 0) : 1000000;
    if (!hvt_present()) { fprintf(stderr, "tickbench: hvtrace not detected\n"); return 2; }
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
    return 0;
}
