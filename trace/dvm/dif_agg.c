/*
 * dif_agg.c - aggregations (dif.h): the value slots each function needs, DTrace's bucket
 * rules, the per-CPU hash tables, clear and snapshot. Slot layouts: include/hvt_dif.h.
 * A CPU's table: hash heads (entry offset + 1) then entries bump-allocated in the order keys
 * first appear, never freed (clear and a snapshot part zero values, keys stay), so an entry's
 * offset is a stable snapshot cursor. The snapshot parts sent to the host (dif_agg_part) take
 * the values out, as DTrace's aggregation buffer switch does: each holds what was aggregated
 * since the previous part, and the host adds them up (and clears its sum at clear()).
 */
#include "dif_impl.h"
#include "hvt_stream.h"


static bool dif_p_zero(const int64_t *p, unsigned from)
{
    for (unsigned i = from; i < 4; i++)
        if (p[i])
            return false;
    return true;
}

/* dtrace-utils' llquantize bucket of v (its dt_cg_agg_llquantize_bin), for parameters
 * dif_agg_nbuckets accepted. The buckets are symmetric: the negative overflow, the negative
 * orders from high down to low, the underflow bucket (|v| < factor^low) in the middle, the
 * positive orders, the positive overflow; each order mag's range [factor^mag,
 * factor^(mag+1)) is cut into steps buckets of which the first steps/factor (below
 * factor^mag) never fill and are left out. |v| is taken as unsigned (INT64_MIN too), and
 * factor^(high+1) fits 64 bits, so nothing here overflows. */
uint32_t dif_llquantize_bucket(int64_t factor, int64_t low, int64_t high, int64_t steps,
                               int64_t v)
{
    uint64_t f = (uint64_t)factor, sf = (uint64_t)(steps / factor), per = (uint64_t)steps - sf;
    uint64_t under = 1 + (uint64_t)(high - low + 1) * per;
    uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v, max = 1, ind = 0;
    for (int64_t i = 0; i < low; i++)
        max *= f;
    if (a < max)
        return (uint32_t)under;
    int64_t mag = low;
    for (;;) {
        max *= f;
        if (a < max) {
            ind = (mag != 0 ? a / (max / (uint64_t)steps) : a * (uint64_t)steps / max) - sf;
            break;
        }
        if (++mag > high)
            break;                   /* the overflow bucket: ind 0 past the last order */
    }
    uint64_t off = (uint64_t)(mag - low) * per + ind + 1;
    return (uint32_t)(v < 0 ? under - off : under + off);
}

uint32_t dif_agg_nbuckets(const struct hvt_dif_agg *a, const char **why)
{
    const int64_t *p = a->p;
    switch (a->fn) {
    case HVT_DIF_AGG_COUNT: case HVT_DIF_AGG_SUM: case HVT_DIF_AGG_MIN: case HVT_DIF_AGG_MAX:
    case HVT_DIF_AGG_AVG: case HVT_DIF_AGG_STDDEV: case HVT_DIF_AGG_QUANTIZE:
        if (!dif_p_zero(p, 0)) {
            *why = "parameters on an aggregation that takes none";
            return 0;
        }
        return a->fn == HVT_DIF_AGG_AVG ? 2 : a->fn == HVT_DIF_AGG_STDDEV ? 4 :
               a->fn == HVT_DIF_AGG_QUANTIZE ? HVT_DIF_QUANT_BUCKETS : 1;
    case HVT_DIF_AGG_LQUANTIZE: {
        int64_t base = p[0], limit = p[1], step = p[2];
        if (!dif_p_zero(p, 3)) {
            *why = "parameters on an aggregation that takes none";
            return 0;
        }
        if (step <= 0 || limit <= base) {
            *why = "bad lquantize parameters";
            return 0;
        }
        /* limit > base: the difference is exact as unsigned */
        uint64_t levels = ((uint64_t)limit - (uint64_t)base) / (uint64_t)step;
        if (levels == 0 || levels > HVT_DIF_LQUANT_MAX - 2) {
            *why = levels ? "too many lquantize buckets" : "bad lquantize parameters";
            return 0;
        }
        return (uint32_t)levels + 2;
    }
    case HVT_DIF_AGG_LLQUANTIZE: {
        /* dtrace-utils' rules (dt_cg_agg_llquantize): 2 <= factor, 0 <= low <= high and 1 <=
         * steps, all 16-bit; steps < factor divides it, steps > factor is a multiple of it
         * that divides factor^(low+1) (factor^2 when low is 0); factor^(high+1) fits 64 bits */
        int64_t factor = p[0], low = p[1], high = p[2], steps = p[3];
        if (factor < 2 || factor > 0xffff || low < 0 || low > 0xffff || high < low || high > 0xffff ||
            steps < 1 || steps > 0xffff || (steps < factor && factor % steps) ||
            (steps > factor && steps % factor)) {
            *why = "bad llquantize parameters";
            return 0;
        }
        uint64_t x = 1, pw = 1;
        for (int64_t i = 0; i <= high; i++) {
            if (__builtin_mul_overflow(x, (uint64_t)factor, &x)) {
                *why = "llquantize range overflows 64 bits";
                return 0;
            }
        }
        bool pw_ok = true;           /* factor^(low+1), or factor^2 when low is 0 */
        for (int64_t i = 0; i <= (low ? low : 1) && pw_ok; i++)
            pw_ok = !__builtin_mul_overflow(pw, (uint64_t)factor, &pw);
        if (steps > factor && (!pw_ok || pw % (uint64_t)steps)) {
            *why = "bad llquantize parameters";
            return 0;
        }
        uint64_t n = 2 * (uint64_t)(high - low + 1) * (uint64_t)(steps - steps / factor) + 3;
        if (n > HVT_DIF_LQUANT_MAX) {
            *why = "too many llquantize buckets";
            return 0;
        }
        return (uint32_t)n;
    }
    }
    *why = "bad aggregating function";
    return 0;
}

/* Values of a new or cleared entry */
static void dif_agg_reset(const struct hvt_dif_agg *a, int64_t *b, uint32_t nb)
{
    for (uint32_t i = 0; i < nb; i++)
        b[i] = 0;
    if (a->fn == HVT_DIF_AGG_MIN)
        b[0] = INT64_MAX;
    else if (a->fn == HVT_DIF_AGG_MAX)
        b[0] = INT64_MIN;
}

static int64_t dif_add(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }

/* w: the quantizations' bucket increment (1 unless the program gave one) */
static __attribute__((noinline)) void dif_agg_update(const struct hvt_dif_agg *a, int64_t *b, uint32_t nb, int64_t v,
                           int64_t w)
{
    switch (a->fn) {
    case HVT_DIF_AGG_COUNT: b[0] = dif_add(b[0], 1); break;
    case HVT_DIF_AGG_SUM:   b[0] = dif_add(b[0], v); break;
    case HVT_DIF_AGG_MIN:   if (v < b[0]) b[0] = v; break;
    case HVT_DIF_AGG_MAX:   if (v > b[0]) b[0] = v; break;
    case HVT_DIF_AGG_AVG:   b[0] = dif_add(b[0], 1); b[1] = dif_add(b[1], v); break;
    case HVT_DIF_AGG_STDDEV: {
        /* the square of an int64 fits an unsigned 128-bit value; the sum wraps like DTrace's */
        unsigned __int128 sq = (unsigned __int128)((__int128)v * (__int128)v);
        unsigned __int128 acc = ((unsigned __int128)(uint64_t)b[3] << 64) | (uint64_t)b[2];
        acc += sq;
        b[0] = dif_add(b[0], 1);
        b[1] = dif_add(b[1], v);
        b[2] = (int64_t)(uint64_t)acc;
        b[3] = (int64_t)(uint64_t)(acc >> 64);
        break;
    }
    case HVT_DIF_AGG_QUANTIZE: {
        uint32_t i = dif_quantize_bucket(v);
        if (i < nb)
            b[i] = dif_add(b[i], w);
        break;
    }
    case HVT_DIF_AGG_LQUANTIZE: {
        int64_t base = a->p[0];
        uint64_t levels = nb - 2, lvl;
        uint32_t i = v < base ? 0 :
                     (lvl = ((uint64_t)v - (uint64_t)base) / (uint64_t)a->p[2]) < levels ?
                     (uint32_t)lvl + 1 : (uint32_t)levels + 1;
        b[i] = dif_add(b[i], w);
        break;
    }
    case HVT_DIF_AGG_LLQUANTIZE: {
        uint32_t i = dif_llquantize_bucket(a->p[0], a->p[1], a->p[2], a->p[3], v);
        if (i < nb)
            b[i] = dif_add(b[i], w);
        break;
    }
    }
}

static int64_t *dif_agg_vals(struct dif_agg_ent *e) { return (int64_t *)((uint8_t *)(e + 1) + e->key_len); }

/* The entry of (agg, key) in this CPU's table, made if it is new; NULL when the table is full.
 * Under the CPU's aggregation lock. Out of line: a firing that repeats its key never comes
 * here (dif_agg_apply), and the one that does pays the hash anyway. */
static __attribute__((noinline))
struct dif_agg_ent *dif_agg_find(struct dif_state *st, struct dif_cpu *c, uint32_t agg,
                                 const uint64_t *key, uint32_t key_len)
{
    const struct hvt_dif_agg *a = &st->aggs[agg];
    uint32_t nb = a->nbuckets;
    uint32_t h = dif_key_hash(st, agg, key, key_len);
    uint32_t *head = &c->agg_hash[h & (c->agg_nhash - 1)];
    for (uint32_t off = *head; off; ) {
        struct dif_agg_ent *x = (struct dif_agg_ent *)(c->agg + off - 1);
        if (x->hash == h && x->agg == agg && x->key_len == key_len && dif_key_eq(x + 1, key, key_len))
            return x;
        off = x->next;
    }
    uint64_t size = DIF_AGG_HDR + (uint64_t)key_len + 8ull * nb;
    if (c->agg_used + size > c->agg_size)
        return NULL;
    struct dif_agg_ent *e = (struct dif_agg_ent *)(c->agg + c->agg_used);
    e->next = *head;
    e->hash = h;
    e->agg = (uint16_t)agg;
    e->key_len = (uint16_t)key_len;
    e->nbuckets = nb;
    memcpy(e + 1, key, key_len);
    dif_agg_reset(a, dif_agg_vals(e), nb);
    *head = c->agg_used + 1;
    c->agg_used += (uint32_t)size;
    return e;
}

void dif_agg_apply(struct dif_state *st, struct dif_cpu *c, uint32_t agg, const uint64_t *key,
                   uint32_t key_len, int64_t v, int64_t w)
{
    const struct hvt_dif_agg *a = &st->aggs[agg];
    /* the key this aggregation was last updated with on this CPU, compared before hashing */
    uint32_t *last = &c->agg_last[agg & (DIF_AGG_LAST - 1)];
    dif_lock(&c->agg_lock);
    struct dif_agg_ent *e = *last ? (struct dif_agg_ent *)(c->agg + *last - 1) : NULL;
    if (!e || e->agg != agg || e->key_len != key_len || !dif_key_eq(e + 1, key, key_len)) {
        if (!(e = dif_agg_find(st, c, agg, key, key_len))) {
            __atomic_fetch_add(&c->aggdrops, 1, __ATOMIC_RELAXED);
            dif_unlock(&c->agg_lock);
            return;
        }
        *last = (uint32_t)((uint8_t *)e - c->agg) + 1;
    }
    int64_t *b = dif_agg_vals(e);
    if (a->fn == HVT_DIF_AGG_COUNT)  /* the common ones here, the rest in dif_agg_update */
        b[0] = dif_add(b[0], 1);
    else if (a->fn == HVT_DIF_AGG_QUANTIZE && dif_quantize_bucket(v) < a->nbuckets)
        b[dif_quantize_bucket(v)] = dif_add(b[dif_quantize_bucket(v)], w);
    else
        dif_agg_update(a, b, a->nbuckets, v, w);
    dif_unlock(&c->agg_lock);
}

void dif_agg_clear(struct dif_state *st, uint32_t agg)
{
    const struct hvt_dif_agg *a = &st->aggs[agg];
    /* one CPU's lock at a time: never two aggregation locks held together */
    for (unsigned cpu = 0; cpu < st->ncpus; cpu++) {
        struct dif_cpu *c = &st->cpus[cpu];
        dif_lock(&c->agg_lock);
        for (uint32_t off = 0; off < c->agg_used; ) {
            struct dif_agg_ent *e = (struct dif_agg_ent *)(c->agg + off);
            if (e->agg == agg)
                dif_agg_reset(a, dif_agg_vals(e), e->nbuckets);
            off += DIF_AGG_HDR + e->key_len + 8 * e->nbuckets;
        }
        dif_unlock(&c->agg_lock);
    }
}

/* Hash heads for aggsize bytes of table (about one per 64 bytes: entries are 24 bytes and
 * up), and the bytes those heads take. */
size_t dif_agg_cpu_size(uint32_t aggsize, uint32_t *nhash)
{
    uint32_t n = 1;
    while (n * 2 <= aggsize / 64)
        n *= 2;
    *nhash = n;
    return (size_t)n * 4;
}

/* Copy entries from *cursor on; take: reset each copied entry's values (under the same lock
 * hold, so every update lands in exactly one copy). */
static long dif_agg_copy(struct dif_state *st, unsigned cpu, void *out, size_t len,
                         uint32_t *cursor, bool take)
{
    if (!st || cpu >= st->ncpus || !cursor || (!out && len))
        return DIF_EINVAL;
    struct dif_cpu *c = &st->cpus[cpu];
    uint8_t *o = out;
    size_t w = 0;
    long rc = DIF_OK;
    dif_lock(&c->agg_lock);
    uint32_t off = *cursor;
    if ((off & 7) || off > c->agg_used)
        rc = DIF_EINVAL;
    while (rc == DIF_OK && off < c->agg_used) {
        struct dif_agg_ent *e = (struct dif_agg_ent *)(c->agg + off);
        uint64_t esz = DIF_AGG_HDR + (uint64_t)e->key_len + 8ull * e->nbuckets;
        /* a cursor the caller made up must not walk us out of the table */
        if (off + esz > c->agg_used || (e->key_len & 7)) {
            rc = DIF_EINVAL;
            break;
        }
        size_t rlen = sizeof(struct hvt_dagg_rec) + (size_t)esz - DIF_AGG_HDR;
        if (w + rlen > len)
            break;
        struct hvt_dagg_rec r = { (uint32_t)rlen, e->agg, (uint16_t)cpu, e->key_len, e->nbuckets };
        memcpy(o + w, &r, sizeof(r));
        memcpy(o + w + sizeof(r), e + 1, (size_t)esz - DIF_AGG_HDR);
        if (take && e->agg < st->hdr->naggs)
            dif_agg_reset(&st->aggs[e->agg], dif_agg_vals(e), e->nbuckets);
        w += rlen;
        off += (uint32_t)esz;
    }
    if (rc == DIF_OK && !w && off < c->agg_used)
        rc = DIF_ESMALL;             /* the next entry alone does not fit */
    if (rc == DIF_OK)
        *cursor = off;
    dif_unlock(&c->agg_lock);
    return rc == DIF_OK ? (long)w : rc;
}

long dif_agg_snapshot(struct dif_state *st, unsigned cpu, void *out, size_t len,
                      uint32_t *cursor)
{
    return dif_agg_copy(st, cpu, out, len, cursor, false);
}

long dif_agg_part(struct dif_state *st, unsigned cpu, uint32_t gen, void *out, size_t len,
                  uint32_t *cursor)
{
    struct hvt_dagg_part part = { .gen = gen, .cpu = (uint16_t)cpu };
    uint8_t *o = out;
    if (len < sizeof part)
        return DIF_ESMALL;
    long n = dif_agg_copy(st, cpu, o + sizeof part, len - sizeof part, cursor, true);
    if (n < 0)
        n = 0;                             /* nothing more can come out: end this CPU's part */
    for (long at = 0; at < n; part.nrecs++) {
        struct hvt_dagg_rec r;
        memcpy(&r, o + sizeof part + at, sizeof r);
        at += r.len;
    }
    if (n == 0)
        part.flags = HVT_DAGG_LAST;
    memcpy(o, &part, sizeof part);
    return (long)sizeof part + n;
}
