#define _GNU_SOURCE
/*
 * reset cf9|kbc|reboot|panic - end the machine while hvtrace traces it (test-reset, test-fatal):
 *   cf9     start tracing (mark), 200 getpid calls, then write 0x06 (hard reset) to the PCI
 *           reset control register 0xCF9, as firmware and Linux's reboot=pci do;
 *   kbc     the same, then the keyboard controller's reset command (0xFE to port 0x64);
 *   reboot  reboot(2): the kernel restarts the machine its own way (reboot= on its command
 *           line: reboot=t is a triple fault); tracing is started by the boot options;
 *   panic [HOW]  a child busy with getpid calls on another CPU, start tracing, 200 getpid
 *           calls, then ask a self-test boot's hypervisor to take its fatal path (HV_RANGE
 *           with RBX = HVT_HC_RANGE_PANIC, RCX = HOW: 0 as any panic, 1 other CPUs stopped by
 *           NMI alone, 2 a second panic inside the path; root only).
 * Never returns when the machine resets; exit 1 if it is still running a second later.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/io.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include "hvt_guest.h"

/* panic: a child busy with system calls on another CPU, so that CPU is being stepped (mostly
 * inside the hypervisor) when the fatal path stops it, not idle in HLT. */
static void busy_elsewhere(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 2 || fork() != 0)
        return;
    cpu_set_t other;
    CPU_ZERO(&other);
    CPU_SET((sched_getcpu() + 1) % n, &other);
    sched_setaffinity(0, sizeof other, &other);
    for (;;)
        syscall(SYS_getpid);
}

int main(int argc, char **argv)
{
    if (argc < 2 || (argc > 2 && strcmp(argv[1], "panic"))) {
        fprintf(stderr, "usage: reset cf9|kbc|reboot|panic [HOW]\n");
        return 2;
    }
    if (!strcmp(argv[1], "reboot")) {
        printf("reset: reboot(2)\n");
        fflush(stdout);
        sync();
        reboot(RB_AUTOBOOT);
        perror("reset: reboot");
        return 1;
    }
    if (iopl(3)) { perror("reset: iopl"); return 2; }
    if (!hvt_present()) { fprintf(stderr, "reset: hvtrace not detected\n"); return 2; }
    hvt_pin_cpu("reset");
    if (!strcmp(argv[1], "panic"))
        busy_elsewhere();
    hvt_mark(1);
    for (int i = 0; i < 200; i++)
        syscall(SYS_getpid);
    if (!strcmp(argv[1], "panic")) {
        uint64_t rbx = HVT_HC_RANGE_PANIC, rcx = argc > 2 ? strtoull(argv[2], 0, 0) : 0, rdx = 0;
        printf("reset: asking the hypervisor to panic\n");
        fflush(stdout);
        hvt_hypercall(HVT_HC_HV_RANGE, &rbx, &rcx, &rdx);
    } else if (!strcmp(argv[1], "kbc"))
        outb(0xfe, 0x64);
    else
        outb(0x06, 0xcf9);
    sleep(1);
    printf("reset: FAIL: still running\n");
    return 1;
}
