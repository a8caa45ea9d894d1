/*
 * mmio-touch [BASE_GIB] - high MMIO mapped on demand (test-fatal's second run): as root, map
 * /dev/mem from BASE_GIB GiB (default 64: above Bochs's start-up EPT map of 4 GiB, nothing
 * there) and read one byte from one page in each 2 MiB, in order, 4096 of them (8 GiB), or
 * until a read faults. The hypervisor maps such device space with the largest pages nothing
 * maps yet, so all of it is served by a few 1 GiB mappings; were it mapped a page at a time its
 * bound would run out and the read fault (#GP: SIGSEGV here), never a hypervisor panic. Prints
 * "mmio-touch: N pages read, none faulted" or "..., then SIGSEGV at page N+1"; exit 0 either
 * way, 2 on set-up errors.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define STRIDE (2ull << 20)
#define MAX_PAGES 4096u

static sigjmp_buf jb;
static void on_fault(int sig) { siglongjmp(jb, sig); }

int main(int argc, char **argv)
{
    uint64_t base = (argc > 1 ? strtoull(argv[1], 0, 0) : 64) << 30;
    int fd = open("/dev/mem", O_RDONLY | O_SYNC);
    if (fd < 0) { perror("mmio-touch: /dev/mem"); return 2; }
    struct sigaction sa = { .sa_handler = on_fault };
    sigaction(SIGSEGV, &sa, 0);
    sigaction(SIGBUS, &sa, 0);
    volatile uint8_t *p = 0;
    unsigned n = 0;
    for (; n < MAX_PAGES; n++) {
        p = mmap(0, 4096, PROT_READ, MAP_SHARED, fd, (off_t)(base + n * STRIDE));
        if (p == MAP_FAILED) { perror("mmio-touch: mmap"); return 2; }
        int sig = sigsetjmp(jb, 1);
        if (sig) {
            printf("mmio-touch: %u pages read, then %s at page %u (gpa %#llx)\n", n,
                   sig == SIGSEGV ? "SIGSEGV" : "SIGBUS", n + 1,
                   (unsigned long long)(base + n * STRIDE));
            return 0;
        }
        (void)*p;
        munmap((void *)p, 4096);
    }
    printf("mmio-touch: %u pages read, none faulted\n", n);
    return 0;
}
