/* gs-forge - an unprivileged process forging the kernel's per-CPU base: it points its own GS
 * base where the kernel's `current` would read as init_task (whose cred is root's) and then
 * asks for root-only hypercalls. The hypervisor must take the caller's task from
 * IA32_KERNEL_GS_BASE at CPL 3 (which only the kernel writes), so each call is refused with
 * #UD: the process dies of SIGILL (exit status 132).
 *
 *   gs-forge find INIT_TASK CURRENT_OFF   (root) print the GS base X for which the word at
 *       X + CURRENT_OFF holds &init_task: a word of init_task itself that points back at it
 *       (group_leader, real_parent: read through /proc/kcore), else CPU 0's kernel GS base
 *       (/dev/cpu/0/msr: CPU 0's own `current`, init_task while CPU 0 idles); then the method
 *   gs-forge how                          which way the GS base can be set here: wrgsbase
 *       (the kernel enabled FSGSBASE: any canonical value, the kernel half too) or arch_prctl
 *       (ARCH_SET_GS, which refuses kernel addresses: the forgery cannot be made)
 *   gs-forge mark|probe|cmd X             set the GS base to X and issue HVT_HC_MARK (start),
 *       HVT_HC_PROBE (counters) or HVT_HC_CMD (may it run?); returning means the hypervisor
 *       took the call: it prints that and exits 0.
 * INIT_TASK and CURRENT_OFF come from /proc/kallsyms (read as root by tests/guest/init). */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <asm/prctl.h>
#include "hvt_guest.h"

#define HWCAP2_FSGSBASE_BIT (1ul << 1)     /* Linux's AT_HWCAP2: the kernel enabled FSGSBASE */
#define MSR_GS_BASE 0xc0000101u            /* in kernel mode: the per-CPU base */

static int have_wrgsbase(void) { return (getauxval(AT_HWCAP2) & HWCAP2_FSGSBASE_BIT) != 0; }

/* A word of init_task equal to its own address, found in /proc/kcore's PT_LOAD segments. */
static int kcore_self_ptr(uint64_t it, uint64_t *at)
{
    int fd = open("/proc/kcore", O_RDONLY);
    if (fd < 0)
        return -1;
    Elf64_Ehdr eh;
    int rc = -1;
    if (pread(fd, &eh, sizeof eh, 0) != sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG))
        goto out;
    for (unsigned i = 0; i < eh.e_phnum && rc; i++) {
        Elf64_Phdr ph;
        if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) != sizeof ph)
            break;
        if (ph.p_type != PT_LOAD || it < ph.p_vaddr || it - ph.p_vaddr >= ph.p_memsz)
            continue;
        static uint64_t words[2048];       /* 16 KiB: the start of task_struct */
        ssize_t n = pread(fd, words, sizeof words, (off_t)(ph.p_offset + (it - ph.p_vaddr)));
        for (ssize_t k = 0; n > 0 && k < n / 8; k++)
            if (words[k] == it) {
                *at = it + 8 * (uint64_t)k;
                rc = 0;
                break;
            }
    }
out:
    close(fd);
    return rc;
}

static int cmd_find(uint64_t it, uint64_t cur)
{
    uint64_t at, base;
    if (kcore_self_ptr(it, &at) == 0) {
        printf("0x%llx kcore\n", (unsigned long long)(at - cur));
        return 0;
    }
    int fd = open("/dev/cpu/0/msr", O_RDONLY);
    if (fd >= 0 && pread(fd, &base, 8, MSR_GS_BASE) == 8) {
        printf("0x%llx cpu0-gsbase\n", (unsigned long long)base);
        close(fd);
        return 0;
    }
    fprintf(stderr, "gs-forge: neither /proc/kcore nor /dev/cpu/0/msr gives a forgery\n");
    return 1;
}

static void set_gs(uint64_t x)
{
    if (have_wrgsbase()) {
        __asm__ volatile("wrgsbase %0" :: "r"(x) : "memory");
        return;
    }
    if (syscall(SYS_arch_prctl, ARCH_SET_GS, x))
        perror("gs-forge: arch_prctl(ARCH_SET_GS) (a kernel address is refused)");
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "how")) {
        puts(have_wrgsbase() ? "wrgsbase" : "arch_prctl");
        return 0;
    }
    if (argc == 4 && !strcmp(argv[1], "find"))
        return cmd_find(strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0));
    if (argc != 3) {
        fprintf(stderr, "usage: gs-forge find INIT_TASK CURRENT_OFF | how | mark|probe|cmd X\n");
        return 2;
    }
    uint64_t func, b, c = 0, d = 0;
    if (!strcmp(argv[1], "mark"))
        func = HVT_HC_MARK, b = 1;
    else if (!strcmp(argv[1], "probe"))
        func = HVT_HC_PROBE, b = 2;
    else if (!strcmp(argv[1], "cmd"))
        func = HVT_HC_CMD, b = 4;
    else
        return 2;
    uint64_t x = strtoull(argv[2], NULL, 0);
    fflush(NULL);
    set_gs(x);
    /* Nothing between the GS write and the VMCALL uses GS (user-space TLS is FS). */
    int64_t st = hvt_hypercall(func, &b, &c, &d);
    printf("gs-forge: %s with GS base 0x%llx was taken (status %lld)\n", argv[1],
           (unsigned long long)x, (long long)st);
    return 0;
}
