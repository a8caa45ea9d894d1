/*
 * probe_epoch.h - when a probe slot may be reused: an epoch scheme between the CPUs that fire
 * probes (each holds a pointer into the probe table from its lookup until it has resumed the
 * guest, the D action included, without the engine's lock) and the disarm that empties the
 * table. A slot emptied in epoch E may be written again only once no CPU is still inside a
 * firing it entered in E or earlier; until then new probes take fresh slots.
 *
 * Contract (no lock; atomics only; one struct per engine):
 *  - probe_epoch_enter(e, cpu) before a CPU looks a probe up, probe_epoch_leave(e, cpu) once it
 *    no longer uses what it found. Not nested. enter's store is sequentially consistent: it
 *    and the lookup that follows it form a store-buffering pair with the disarm's clearing
 *    of the table and its reading of the CPUs' epochs (SDM vol. 3, "Memory Ordering in P6 and
 *    More Recent Processor Families": a load may pass an earlier store to another address).
 *  - probe_epoch_retire(e) after the disarm unpublished every slot (cleared the lookup
 *    table): returns the epoch those slots were retired in.
 *  - probe_epoch_quiet(e, retired, ncpus): true when no CPU is inside a firing it entered in
 *    epoch retired or before: the slots retired then may be reused.
 */
#ifndef HVT_PROBE_EPOCH_H
#define HVT_PROBE_EPOCH_H
#include <stdint.h>
#include <stdbool.h>

#define PROBE_EPOCH_CPUS 64                /* HVT_MAX_CPUS */

struct probe_epoch {
    uint64_t now;                          /* the current epoch, from 1 */
    uint64_t cpu[PROBE_EPOCH_CPUS];        /* the epoch a CPU entered its firing in; 0: none */
};

void     probe_epoch_init(struct probe_epoch *e);
uint64_t probe_epoch_retire(struct probe_epoch *e);
bool     probe_epoch_quiet(const struct probe_epoch *e, uint64_t retired, unsigned ncpus);

/* Inline: they are on every firing's path. */
/* The CPU's epoch goes out before its lookup reads the table (XCHG: a locked store, which no
 * later load passes), so a retire that cleared the table and then reads this CPU's epoch
 * either sees it or made this CPU's lookup miss the retired slots. */
static inline void probe_epoch_enter(struct probe_epoch *e, unsigned cpu)
{
    if (cpu < PROBE_EPOCH_CPUS)
        __atomic_exchange_n(&e->cpu[cpu], __atomic_load_n(&e->now, __ATOMIC_ACQUIRE),
                            __ATOMIC_SEQ_CST);
}

static inline void probe_epoch_leave(struct probe_epoch *e, unsigned cpu)
{
    if (cpu < PROBE_EPOCH_CPUS)
        __atomic_store_n(&e->cpu[cpu], 0, __ATOMIC_RELEASE);
}

#endif
