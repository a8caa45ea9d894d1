/* probe-ustack SECONDS - a user program built with frame pointers whose time is spent four
 * calls deep (main -> ustack_outer -> ustack_middle -> ustack_inner, the last one spinning),
 * for the profile test: hvt --ustack unwinds its samples' user stacks by frame pointers and
 * the host names the frames with this binary's symbols. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

/* A leaf that keeps a local on the stack: GCC sets up no frame for a leaf that needs none,
 * whatever -fno-omit-frame-pointer says, and a frame-pointer unwind then cannot see that
 * leaf's caller (its samples would show outer -> inner). */
__attribute__((noinline)) void ustack_inner(void)
{
    volatile unsigned long acc[2] = { 0, 0 };
    for (int i = 0; i < 100000; i++)
        acc[i & 1] += i;
    sink += acc[0] + acc[1];
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
