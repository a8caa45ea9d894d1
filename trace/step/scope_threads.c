/* scope_threads.c - the table of threads step() steps at once (see scope_threads.h). */
#include "scope_threads.h"

/* Fields other CPUs read without the lock are stored whole (one aligned word each). */
#define SET(field, v) __atomic_store_n(&(field), (v), __ATOMIC_RELEASE)
#define GET(field)    __atomic_load_n(&(field), __ATOMIC_ACQUIRE)

int scope_threads_add(struct scope_threads *s, uint32_t tid, uint64_t end_rip, uint64_t end_rsp)
{
    struct scope_thread *slot = 0;
    for (unsigned i = 0; i < SCOPE_MAX_THREADS; i++) {
        struct scope_thread *e = &s->t[i];
        if (e->state == SCOPE_THR_LIVE && e->tid == tid)
            return SCOPE_ADD_LIVE;          /* the outer call's end stands */
        if (e->state != SCOPE_THR_LIVE && (!slot || (e->state == SCOPE_THR_DONE && e->tid == tid)))
            slot = e;                       /* (its own old slot if it has one) */
    }
    if (!slot)
        return SCOPE_ADD_FULL;
    /* Free while it changes, the end before the thread: a reader that sees the thread live
     * sees its end. */
    SET(slot->state, (uint32_t)SCOPE_THR_FREE);
    SET(slot->end_rip, end_rip);
    SET(slot->end_rsp, end_rsp);
    SET(slot->tid, tid);
    SET(slot->state, (uint32_t)SCOPE_THR_LIVE);
    SET(s->gen, s->gen + 1);
    return SCOPE_ADD_NEW;
}

bool scope_threads_live(const struct scope_threads *s, uint32_t tid)
{
    for (unsigned i = 0; i < SCOPE_MAX_THREADS; i++)
        if (GET(s->t[i].state) == SCOPE_THR_LIVE && GET(s->t[i].tid) == tid)
            return true;
    return false;
}

unsigned scope_threads_nlive(const struct scope_threads *s)
{
    unsigned n = 0;
    for (unsigned i = 0; i < SCOPE_MAX_THREADS; i++)
        n += GET(s->t[i].state) == SCOPE_THR_LIVE;
    return n;
}

bool scope_threads_is_end_rip(const struct scope_threads *s, uint64_t rip)
{
    for (unsigned i = 0; i < SCOPE_MAX_THREADS; i++)
        if (GET(s->t[i].state) == SCOPE_THR_LIVE && rip && GET(s->t[i].end_rip) == rip)
            return true;
    return false;
}

int scope_threads_end(struct scope_threads *s, uint32_t tid, uint64_t rip, uint64_t rsp)
{
    for (unsigned i = 0; i < SCOPE_MAX_THREADS; i++) {
        struct scope_thread *e = &s->t[i];
        if (e->state != SCOPE_THR_LIVE || e->tid != tid)
            continue;
        if (!e->end_rip || e->end_rip != rip || e->end_rsp != rsp)
            return SCOPE_END_NO;
        SET(e->state, (uint32_t)SCOPE_THR_DONE);
        return scope_threads_nlive(s) ? SCOPE_END_MORE : SCOPE_END_LAST;
    }
    return SCOPE_END_NO;
}

void scope_threads_end_all(struct scope_threads *s)
{
    for (unsigned i = 0; i < SCOPE_MAX_THREADS; i++)
        if (s->t[i].state == SCOPE_THR_LIVE)
            SET(s->t[i].state, (uint32_t)SCOPE_THR_DONE);
}

unsigned scope_threads_sweep(struct scope_threads *s)
{
    unsigned live = 0;
    for (unsigned i = 0; i < SCOPE_MAX_THREADS; i++) {
        if (s->t[i].state == SCOPE_THR_DONE)
            SET(s->t[i].state, (uint32_t)SCOPE_THR_FREE);
        live += s->t[i].state == SCOPE_THR_LIVE;
    }
    SET(s->gen, s->gen + 1);
    return live;
}
