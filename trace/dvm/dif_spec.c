/*
 * dif_spec.c - DTrace's speculations (dif.h): speculation(), speculate(), commit(),
 * discard(). A speculated clause builds its record in its CPU's buffer of that speculation
 * (struct dif_specbuf, guarded by the CPU's buffer lock like the principal buffer); commit()
 * or discard() marks the speculation COMMITTING or DISCARDING and each CPU then "cleans" its
 * part under its own buffer lock: the records go to that CPU's principal buffer (with the
 * commit's tsc, as DTrace stamps them with the commit's time) or are dropped. The CPU that
 * commits cleans its own part at once and every other CPU whose buffer lock is free at that
 * moment (a try-lock: it never waits for a lock while holding its own); a CPU that was busy
 * cleans its part when its firing ends or at its next firing or drain. Until every CPU has
 * cleaned it the speculation is busy (speculation() says so when it finds none free).
 */
#include "dif_impl.h"

static bool dif_spec_cas(struct dif_spec *s, uint64_t *old, uint64_t new)
{
    return __atomic_compare_exchange_n(&s->sw, old, new, false, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}

void dif_spec_new(struct dif_run *r, unsigned rd)
{
    struct dif_state *st = r->st;
    bool busy = false;
    for (uint32_t i = 0; i < st->nspec; i++) {
        struct dif_spec *s = &st->specs[i];
        uint64_t sw = __atomic_load_n(&s->sw, __ATOMIC_ACQUIRE);
        uint32_t state = dif_spec_state(sw);
        if (state == DIF_SPEC_FREE) {
            uint64_t want = (uint64_t)(dif_spec_gen(sw) + 1) << 32 | DIF_SPEC_ACTIVE;
            if (dif_spec_cas(s, &sw, want)) {
                r->reg[rd] = i + 1;
                r->rt[rd] = DIF_RT_INT;
                return;
            }
            state = dif_spec_state(sw);      /* another CPU took it: what it is now */
        }
        busy |= state == DIF_SPEC_ENDING || state == DIF_SPEC_COMMITTING ||
                state == DIF_SPEC_DISCARDING;
    }
    __atomic_fetch_add(busy ? &st->specbusy : &st->specunavail, 1, __ATOMIC_RELAXED);
    r->reg[rd] = 0;
    r->rt[rd] = DIF_RT_INT;
}

bool dif_spec_speculate(struct dif_run *r, uint64_t id)
{
    struct dif_state *st = r->st;
    if (r->rec_len || r->spec || r->spec_void || id > st->nspec)
        return dif_fault(r, HVT_DIF_F_ILLOP, 0);
    if (id == 0) {                           /* speculation() had none: DTrace drops silently */
        r->spec_void = true;
        return true;
    }
    uint64_t sw = __atomic_load_n(&st->specs[id - 1].sw, __ATOMIC_ACQUIRE);
    if (dif_spec_state(sw) != DIF_SPEC_ACTIVE) {
        r->spec_void = true;                 /* not (or no longer) active: as DTrace */
        return true;
    }
    r->spec = (uint32_t)id;
    r->spec_gen = dif_spec_gen(sw);
    return true;
}

/* Copy this CPU's records of s (buf[0 .. tail)) to its principal buffer, stamped with the
 * commit's tsc; those that do not fit count as principal drops. */
static void dif_spec_move(struct dif_cpu *c, struct dif_specbuf *b, uint64_t tsc)
{
    uint32_t at = 0;
    while (at + sizeof(struct hvt_drec) <= b->tail) {
        struct hvt_drec *d = (struct hvt_drec *)(b->buf + at);
        uint32_t len = d->len;
        if (len < sizeof(*d) || len > b->tail - at || (len & 7))
            break;                           /* cannot happen: our own records */
        if ((uint64_t)c->buf_tail + len > c->buf_size) {
            c->drops++;
        } else {
            d->tsc = tsc;
            memcpy(c->buf + c->buf_tail, d, len);
            c->buf_tail += len;
        }
        at += len;
    }
}

/* CPU cpu's part of speculation s, if it is waiting to be cleaned there (under that CPU's
 * buffer lock). */
static void dif_spec_clean(struct dif_state *st, unsigned cpu, uint32_t si)
{
    struct dif_spec *s = &st->specs[si];
    struct dif_cpu *c = &st->cpus[cpu];
    struct dif_specbuf *b = &c->spec[si];
    uint64_t sw = __atomic_load_n(&s->sw, __ATOMIC_ACQUIRE);
    uint32_t state = dif_spec_state(sw), gen = dif_spec_gen(sw);
    if ((state != DIF_SPEC_COMMITTING && state != DIF_SPEC_DISCARDING) || b->cleaned == gen)
        return;
    if (state == DIF_SPEC_COMMITTING) {
        dif_spec_move(c, b, s->tsc);
        c->specdrops += b->drops;            /* DTrace reports those of committed ones only */
    }
    b->tail = 0;
    b->drops = 0;
    b->cleaned = gen;
    if (__atomic_sub_fetch(&s->left, 1, __ATOMIC_ACQ_REL) == 0) {
        __atomic_store_n(&s->sw, (uint64_t)gen << 32 | DIF_SPEC_FREE, __ATOMIC_RELEASE);
        __atomic_sub_fetch(&st->spec_pending, 1, __ATOMIC_RELEASE);
    }
}

void dif_spec_clean_cpu(struct dif_state *st, unsigned cpu)
{
    if (!__atomic_load_n(&st->spec_pending, __ATOMIC_ACQUIRE))
        return;
    for (uint32_t i = 0; i < st->nspec; i++)
        dif_spec_clean(st, cpu, i);
}

bool dif_spec_end(struct dif_run *r, uint64_t id, bool commit)
{
    struct dif_state *st = r->st;
    /* a commit appends to the principal buffer, where this clause's record would be built */
    if (id > st->nspec || (commit && r->rec_len))
        return dif_fault(r, HVT_DIF_F_ILLOP, 0);
    if (id == 0)
        return true;
    struct dif_spec *s = &st->specs[id - 1];
    uint64_t sw = __atomic_load_n(&s->sw, __ATOMIC_ACQUIRE);
    if (dif_spec_state(sw) != DIF_SPEC_ACTIVE)
        return true;                         /* not active, or already ending: nothing */
    uint64_t gen = (uint64_t)dif_spec_gen(sw) << 32;
    if (!dif_spec_cas(s, &sw, gen | DIF_SPEC_ENDING))
        return true;                         /* another CPU ended it first */
    __atomic_store_n(&s->left, r->st->ncpus, __ATOMIC_RELAXED);
    s->tsc = r->f->tsc;
    __atomic_add_fetch(&st->spec_pending, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&s->sw, gen | (commit ? DIF_SPEC_COMMITTING : DIF_SPEC_DISCARDING),
                     __ATOMIC_RELEASE);
    dif_spec_clean(st, r->cpu, (uint32_t)id - 1);
    for (unsigned cpu = 0; cpu < st->ncpus; cpu++) {
        struct dif_cpu *c = &st->cpus[cpu];
        if (cpu == r->cpu || !dif_trylock(&c->buf_lock))
            continue;                        /* busy: it cleans its part itself */
        dif_spec_clean(st, cpu, (uint32_t)id - 1);
        dif_unlock(&c->buf_lock);
    }
    return true;
}

struct dif_specbuf *dif_spec_live(struct dif_run *r)
{
    struct dif_specbuf *b = &r->c->spec[r->spec - 1];
    uint64_t sw = __atomic_load_n(&r->st->specs[r->spec - 1].sw, __ATOMIC_ACQUIRE);
    /* committed or discarded here while the clause ran (this CPU cleaned it): gone */
    if (dif_spec_gen(sw) != r->spec_gen || b->cleaned == r->spec_gen)
        return NULL;
    return b;
}
