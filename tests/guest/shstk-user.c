/* shstk-user N - a process with a user shadow stack (CET: SDM Vol. 1 17.2 "Shadow Stacks")
 * under a user probe on a function's RET (tests/probe/test-probes-net.sh, run shstk).
 * It turns its shadow stack on (arch_prctl ARCH_SHSTK_ENABLE: Linux >= 6.6 built with
 * X86_USER_SHADOW_STACK, on a CPU with CET shadow stacks), says "shstk: enabled", prints
 * "probe-user: pid=P fn=0xADDR" (ADDR: ret_target's RET instruction, which the host probes with
 * addr:pidP:0xADDR:) and "probe-net: waiting", calls ret_target every 0.2 s until the engine's
 * firing counter moves (the probe is armed), then exactly N more times, each through caller():
 * a RET the hypervisor emulated (the return address popped from the stack only, not from the
 * shadow stack) would leave ret_target's entry on top of the shadow stack, and caller's own
 * RET would then raise #CP (SIGSEGV) at the first firing. Says "probe-net: workload done
 * calls=N ok", then waits for the disarm.
 * main never returns and the shadow stack is turned on by a SYSCALL written here, not by a
 * libc function: a RET of a frame pushed before the shadow stack existed would fault. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "hvt_guest.h"
#include "probe_wait.h"

/* arch/x86/include/uapi/asm/prctl.h (Linux 6.6) */
#define ARCH_SHSTK_ENABLE 0x5001
#define ARCH_SHSTK_STATUS 0x5005
#define ARCH_SHSTK_SHSTK  (1ull << 0)

__attribute__((noinline)) long ret_target(long x)
{
    return x * 3 + 1;
}

/* Its caller: returns after ret_target did, so its RET meets the shadow stack's top that
 * ret_target's (probed) RET should have popped. */
__attribute__((noinline)) long caller(long x)
{
    long v = ret_target(x);
    __asm__ volatile("" ::: "memory");  /* not a tail call: a CALL, then this RET */
    return v + 1;
}

/* The waits' poke: the probed path. */
static void poke_caller(int i) { caller(i); }

static long raw_syscall2(long nr, long a, long b)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return r;
}

__attribute__((noreturn)) static void leave(int status)
{
    fflush(stdout);
    for (;;)
        raw_syscall2(SYS_exit_group, status, 0);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    /* Inline: the enabling call must not return through a RET (see the top). */
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_arch_prctl), "D"((long)ARCH_SHSTK_ENABLE),
                     "S"((long)ARCH_SHSTK_SHSTK) : "rcx", "r11", "memory");
    unsigned long long feat = 0;
    if (r == 0)
        r = raw_syscall2(SYS_arch_prctl, ARCH_SHSTK_STATUS, (long)&feat);
    if (r != 0 || !(feat & ARCH_SHSTK_SHSTK)) {
        printf("shstk: not available (%ld, features %#llx)\n", r, feat);
        leave(2);
    }
    printf("shstk: enabled\n");
    if (!hvt_present())
        leave(2);
    /* The RET: the first C3 byte of ret_target (lea/imul then ret: no C3 inside them). */
    const unsigned char *p = (const unsigned char *)ret_target;
    unsigned off = 0;
    while (off < 64 && p[off] != 0xc3)
        off++;
    if (off == 64)
        leave(2);
    printf("probe-user: pid=%d fn=%#lx (ret_target+%u: its RET)\n", (int)getpid(), (unsigned long)(p + off), off);
    printf("probe-net: waiting for the host to arm\n");
    fflush(stdout);
    if (probe_wait_armed(poke_caller)) {
        printf("probe-net: never armed\n");
        leave(1);
    }
    long bad = 0;
    for (long i = 0; i < n; i++)
        bad += caller(i) != i * 3 + 2;
    printf("probe-net: workload done calls=%ld %s\n", n, bad ? "FAIL" : "ok");
    fflush(stdout);
    probe_wait_disarmed(NULL);
    leave(bad ? 1 : 0);
}
