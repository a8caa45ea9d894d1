/* probe_epoch.c - when a probe slot may be reused (see probe_epoch.h). */
#include "probe_epoch.h"

void probe_epoch_init(struct probe_epoch *e)
{
    __atomic_store_n(&e->now, 1, __ATOMIC_RELAXED);
    for (unsigned c = 0; c < PROBE_EPOCH_CPUS; c++)
        __atomic_store_n(&e->cpu[c], 0, __ATOMIC_RELAXED);
}

/* The table was cleared before this: a CPU that reads the new epoch finds none of the
 * retired slots. The full barrier keeps the clearing stores ahead of the quiet check's loads. */
uint64_t probe_epoch_retire(struct probe_epoch *e)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return __atomic_fetch_add(&e->now, 1, __ATOMIC_SEQ_CST);
}

bool probe_epoch_quiet(const struct probe_epoch *e, uint64_t retired, unsigned ncpus)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (unsigned c = 0; c < ncpus && c < PROBE_EPOCH_CPUS; c++) {
        uint64_t in = __atomic_load_n(&e->cpu[c], __ATOMIC_ACQUIRE);
        if (in && in <= retired)
            return false;              /* inside a firing that may hold a retired slot */
    }
    return true;
}
