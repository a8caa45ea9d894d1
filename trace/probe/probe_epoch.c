/* probe_epoch.c - when a probe slot may be reused (see probe_epoch.h). */
#include "probe_epoch.h"

void probe_epoch_init(struct probe_epoch *e)
{
    e->now = 1;
    for (unsigned c = 0; c < PROBE_EPOCH_CPUS; c++)
        e->cpu[c] = 0;
}

void probe_epoch_enter(struct probe_epoch *e, unsigned cpu)
{
    if (cpu < PROBE_EPOCH_CPUS)
        e->cpu[cpu] = e->now;
}

void probe_epoch_leave(struct probe_epoch *e, unsigned cpu)
{
    if (cpu < PROBE_EPOCH_CPUS)
        e->cpu[cpu] = 0;
}

uint64_t probe_epoch_retire(struct probe_epoch *e)
{
    return e->now++;
}

bool probe_epoch_quiet(const struct probe_epoch *e, uint64_t retired, unsigned ncpus)
{
    return true;                           /* today: a slot is reused at once */
}
