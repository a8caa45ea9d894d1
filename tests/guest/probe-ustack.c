/* probe-ustack SECONDS - a user program built with frame pointers whose time is spent four
 * calls deep (main -> ustack_outer -> ustack_middle -> ustack_inner, the last one spinning),
 * for the profile test: hvt --ustack unwinds its samples' user stacks by frame pointers and
 * the host names the frames with this binary's symbols. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void ustack_inner(void)
{
    for (int i = 0; i < 100000; i++)
        sink += i;
}

__attribute__((noinline)) void ustack_middle(void)
{
    ustack_inner();
    __asm__ volatile("" ::: "memory");     /* not a tail call: keep this frame */
}

__attribute__((noinline)) void ustack_outer(void)
{
    ustack_middle();
    __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
    double secs = argc > 1 ? atof(argv[1]) : 1.0;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        ustack_outer();
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
    return 0;
}
