/* test_probe_epoch.c - probe slots are not reused while a CPU may still hold the old probe
 * (trace/probe/probe_epoch.c). A scenario table (a CPU inside a firing it entered before a
 * disarm keeps the retired slots from reuse; one that entered after, or left, does not), then
 * the race itself on two threads: a "firing" thread enters, looks the slot up through a
 * published index, checks the probe it found stays whole while it "runs its action", and
 * leaves; a "disarm/arm" thread unpublishes the slot, retires it, and rewrites it (a different
 * probe) only when quiet, else waits. The firing thread must never see its probe change under
 * it (a resume through a stale pointer would go to another probe's target). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "probe_epoch.h"
#include "check.h"


static struct probe_epoch E;
static struct { uint64_t va, target; } slot;   /* the probe table's one slot */
static uint32_t published;                     /* the lookup table: 1 = slot 0, 0 = empty */
static volatile int stop;
static uint64_t torn, seen;

static void *firing(void *arg)
{
    for (unsigned i = 0; !stop; i++) {
        probe_epoch_enter(&E, 1);
        if (__atomic_load_n(&published, __ATOMIC_ACQUIRE)) {
            uint64_t va = __atomic_load_n(&slot.va, __ATOMIC_RELAXED);
            uint64_t t = __atomic_load_n(&slot.target, __ATOMIC_RELAXED);
            for (volatile int k = 0; k < (int)(i % 64); k++)
                ;                              /* the D action */
            if (__atomic_load_n(&slot.va, __ATOMIC_RELAXED) != va ||
                __atomic_load_n(&slot.target, __ATOMIC_RELAXED) != t || t != va + 1)
                torn++;                        /* resume would use another probe's fields */
            __atomic_add_fetch(&seen, 1, __ATOMIC_RELAXED);
        }
        probe_epoch_leave(&E, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 200000;
    probe_epoch_init(&E);
    /* scenarios: CPU 0 inside a firing entered in the epoch a disarm retires */
    probe_epoch_enter(&E, 0);
    uint64_t r = probe_epoch_retire(&E);
    CHECK(!probe_epoch_quiet(&E, r, 2), "a CPU inside an older firing: the retired slots are reused");
    probe_epoch_enter(&E, 1);                  /* CPU 1 enters after the retire */
    CHECK(!probe_epoch_quiet(&E, r, 2), "CPU 0 still inside: not quiet");
    probe_epoch_leave(&E, 0);
    CHECK(probe_epoch_quiet(&E, r, 2), "only a newer firing left: quiet");
    probe_epoch_leave(&E, 1);
    CHECK(probe_epoch_quiet(&E, r, 2), "no CPU inside: quiet");
    probe_epoch_enter(&E, 5);
    uint64_t r2 = probe_epoch_retire(&E);
    CHECK(probe_epoch_quiet(&E, r2, 2) && !probe_epoch_quiet(&E, r2, 8),
          "only the CPUs that exist are looked at");
    probe_epoch_leave(&E, 5);

    /* the race */
    probe_epoch_init(&E);
    slot.va = 1000;
    slot.target = 1001;
    __atomic_store_n(&published, 1, __ATOMIC_RELEASE);
    pthread_t t;
    pthread_create(&t, NULL, firing, NULL);
    while (!__atomic_load_n(&seen, __ATOMIC_RELAXED))
        __asm__ volatile("pause");             /* the firing thread runs before the race starts */
    /* at least rounds rewrites, and on until the firing thread has seen as many (a busy
     * machine may not schedule it much): at most 50 x rounds */
    for (unsigned i = 0; i < 50 * rounds && (i < rounds || __atomic_load_n(&seen, __ATOMIC_RELAXED) < rounds); i++) {
        __atomic_store_n(&published, 0, __ATOMIC_SEQ_CST);          /* disarm: unpublish */
        uint64_t ret = probe_epoch_retire(&E);
        while (!probe_epoch_quiet(&E, ret, 2))
            __asm__ volatile("pause");
        uint64_t va = 2000 + 16 * (uint64_t)i;                      /* arm: reuse the slot */
        __atomic_store_n(&slot.va, va, __ATOMIC_RELAXED);
        for (volatile int k = 0; k < 8; k++)
            ;
        __atomic_store_n(&slot.target, va + 1, __ATOMIC_RELAXED);
        __atomic_store_n(&published, 1, __ATOMIC_RELEASE);
    }
    stop = 1;
    pthread_join(t, NULL);
    CHECK(seen >= rounds / 10, "the firing thread ran only %llu firings", (unsigned long long)seen);
    CHECK(torn == 0, "%llu of %llu firings saw their probe rewritten under them",
          (unsigned long long)torn, (unsigned long long)seen);
    printf("test_probe_epoch: %llu firings raced %u rewrites\n", (unsigned long long)seen, rounds);
    return check_summary("test_probe_epoch");
}
