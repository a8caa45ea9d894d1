/* d_aggview.c - see d_agg.h: the merged, sorted views of an aggregation and the host-side
 * actions on it (clear, trunc, normalize). The comparisons are DTrace's:
 * values by function, integer keys as unsigned numbers of their size, strings byte by byte. */
#include "d_agg_priv.h"
#include <stdlib.h>
#include <string.h>

#define QBUCKETS 127
#define QZERO    63

/* --- views --- */

d_aent *d_aggs_meta(d_aggs *a, const d_aent *e)
{
    int64_t i = d_atab_find(&a->meta, e->agg, e->key, e->klen, e->hash);
    if (i < 0)
        i = d_atab_add(&a->meta, e->agg, e->key, e->klen, e->hash, 0);
    return i < 0 ? NULL : &a->meta.e[i];
}

typedef struct {
    d_aggs *a;
    const d_agg *ag;
    uint32_t hdr;
    int keysort, rev, keypos, valfirst;
} sortctx;

/* The "value" DTrace sorts quantizations by: the sum of bucket values times counts. */
/* a - b in 64 bits as dtrace-utils computes it (wrapping), then as a long double */
static long double ldiff(int64_t a, int64_t b) { return (long double)(int64_t)((uint64_t)a - (uint64_t)b); }

static long double qsum(const sortctx *s, const int64_t *d, int64_t *zero)
{
    const int64_t *p = s->ag->p;
    long double t = 0;
    *zero = 0;
    if (s->ag->fn == HVT_DIF_AGG_QUANTIZE) {
        for (int i = 0; i < QBUCKETS; i++) {
            int64_t bv = i < QZERO ? -((int64_t)1 << (QZERO - 1 - i)) : i == QZERO ? 0 : (int64_t)1 << (i - QZERO - 1);
            t += (long double)bv * (long double)d[i];
        }
        *zero = d[QZERO];
    } else if (s->ag->fn == HVT_DIF_AGG_LQUANTIZE) {
        int64_t base = p[0], levels = (p[1] - p[0]) / p[2];
        t = (long double)d[0] * (long double)(base - 1);
        if (base - 1 == 0)
            *zero = d[0];
        for (int64_t i = 0; i < levels; base += p[2], i++) {
            t += (long double)d[i + 1] * (long double)base;
            if (base == 0)
                *zero = d[i + 1];
        }
        t += (long double)d[levels + 1] * (long double)(base + 1);
        if (base + 1 == 0)
            *zero = d[levels + 1];
    } else {
        /* dtrace-utils' dt_aggregate_llquantizedsum: each bucket's lower bound (negative
         * ones by their magnitude) times its count; "zero" is the underflow bucket */
        int64_t factor = p[0], lmag = p[1], hmag = p[2], steps = p[3], sf = steps / factor;
        int64_t bin0 = 1 + (hmag - lmag + 1) * (steps - sf), i = 1, mag;
        long double scale = 1;
        for (int64_t k = 0; k < lmag; k++)
            scale *= factor;
        t = scale * ldiff(d[bin0 + 1], d[bin0 - 1]);
        if (lmag == 0 && steps > factor) {
            for (int64_t step = 2; step <= factor; step++) {
                i += sf;
                t += step * ldiff(d[bin0 + i], d[bin0 - i]);
            }
            lmag = 1;
        }
        scale = 1;
        for (int64_t k = 0; k < lmag + 1; k++)
            scale *= factor;
        scale /= steps;
        for (mag = lmag; mag <= hmag; mag++) {
            for (int64_t step = sf + 1; step <= steps; step++) {
                i++;
                t += step * scale * ldiff(d[bin0 + i], d[bin0 - i]);
            }
            scale *= factor;
        }
        *zero = d[bin0];
    }
    return t;
}

static int cmp3(long double x, long double y) { return x < y ? -1 : x > y; }

static int valcmp(const sortctx *s, const d_aent *l, const d_aent *r)
{
    const int64_t *x = l->v, *y = r->v;
    switch (s->ag->fn) {
    case HVT_DIF_AGG_AVG: {
        int64_t a = x[0] ? x[1] / x[0] : 0, b = y[0] ? y[1] / y[0] : 0;
        return a < b ? -1 : a > b;
    }
    case HVT_DIF_AGG_STDDEV: {
        uint64_t a = d_agg_stddev(x, 1), b = d_agg_stddev(y, 1);
        return a < b ? -1 : a > b;
    }
    case HVT_DIF_AGG_QUANTIZE: case HVT_DIF_AGG_LQUANTIZE: case HVT_DIF_AGG_LLQUANTIZE: {
        int64_t zx, zy;
        int c = cmp3(qsum(s, x + s->hdr, &zx), qsum(s, y + s->hdr, &zy));
        return c ? c : zx < zy ? -1 : zx > zy;
    }
    default:
        return x[0] < y[0] ? -1 : x[0] > y[0];
    }
}

static uint64_t ukey(const d_value *v)
{
    switch (v->size) {
    case 1: return (uint8_t)v->i;
    case 2: return (uint16_t)v->i;
    case 4: return (uint32_t)v->i;
    default: return (uint64_t)v->i;
    }
}

static int keycmp(const sortctx *s, const d_aent *l, const d_aent *r)
{
    d_value a[HVT_DIF_TUPLE_MAX], b[HVT_DIF_TUPLE_MAX];
    int n = d_agg_key_values(s->ag, l->key, l->klen, a, 0);
    if (d_agg_key_values(s->ag, r->key, r->klen, b, 0) != n)
        return 0;
    int pos = s->keypos < n ? s->keypos : 0;
    for (int j = 0; j < n; j++) {
        const d_value *x = &a[(pos + j) % n], *y = &b[(pos + j) % n];
        if (x->type == D_V_STR) {
            size_t m = x->slen < y->slen ? x->slen : y->slen;
            int c = memcmp(x->s, y->s, m);
            if (c)
                return c < 0 ? -1 : 1;
            if (x->slen != y->slen)
                return x->slen < y->slen ? -1 : 1;
        } else if (x->type == D_V_KSTACK || x->type == D_V_USTACK) {
            /* frame by frame, as unsigned (DTrace's dt_aggregate_keycmp); 0 past the last */
            size_t m = x->slen > y->slen ? x->slen : y->slen;
            for (size_t f = 0; f < m; f++) {
                uint64_t u, w;
                memcpy(&u, x->s + 8 * f, 8);
                memcpy(&w, y->s + 8 * f, 8);
                if (u != w)
                    return u < w ? -1 : 1;
            }
        } else if (ukey(x) != ukey(y)) {
            return ukey(x) < ukey(y) ? -1 : 1;
        }
    }
    return 0;
}

static int entcmp(const void *pl, const void *pr, void *ctx)
{
    const sortctx *s = ctx;
    const d_aent *l = *(d_aent *const *)pl, *r = *(d_aent *const *)pr;
    int c = 0;
    if (s->valfirst)
        c = valcmp(s, l, r);
    if (!c)
        c = keycmp(s, l, r);
    return s->rev ? -c : c;
}

int d_aggs_view(d_aggs *a, int agg, const d_aggopt *opt, int mode, d_atab *t, d_aent ***out)
{
    const d_agg *ag = &a->p->aggs[agg];
    uint32_t nb = ag->nbuckets;
    memset(t, 0, sizeof *t);
    *out = NULL;
    if (a->hdr[agg] == UINT32_MAX)
        return 0;
    for (uint32_t c = 0; c < a->ncpu; c++) {
        const d_atab *ct = &a->cpu[c].cur;
        if (!a->cpu[c].have)
            continue;
        for (uint32_t i = 0; i < ct->n; i++) {
            const d_aent *e = &ct->e[i];
            if (e->agg != agg)
                continue;
            int64_t j = d_atab_find(t, e->agg, e->key, e->klen, e->hash);
            if (j >= 0) {
                d_agg_merge(ag->fn, t->e[j].v, e->v, nb);
                continue;
            }
            if ((j = d_atab_add(t, e->agg, e->key, e->klen, e->hash, nb)) < 0)
                return -1;
            memcpy(t->e[j].v, e->v, nb * sizeof *e->v);
        }
    }
    d_aent **v = malloc((t->n + 1) * sizeof *v);
    if (!v)
        return -1;
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->n; i++) {
        d_aent *e = &t->e[i];
        int64_t m = d_atab_find(&a->meta, e->agg, e->key, e->klen, e->hash);
        if (m >= 0) {
            e->normal = a->meta.e[m].normal;
            if (a->meta.e[m].base && d_agg_since(ag->fn, e->v, a->meta.e[m].base, nb, a->hdr[agg]))
                continue;
        }
        v[n++] = e;
    }
    sortctx s = {a, ag, a->hdr[agg], 0, 0, 0, 1};
    if (mode == 0) {
        s.valfirst = !(opt && opt->sortkey);
        s.rev = opt && opt->sortrev;
        s.keypos = opt && opt->keypos > 0 ? opt->keypos : 0;
    } else {
        s.rev = mode == 2;
    }
    qsort_r(v, n, sizeof *v, entcmp, &s);
    v[n] = NULL;
    *out = v;
    return (int)n;
}

/* --- host-side actions --- */

/* The values a key starts with, as the hypervisor resets them (count 0, min INT64_MAX, ...):
 * later snapshots (deltas) add to them. */
static void reset_vals(uint8_t fn, int64_t *v, uint32_t nb, uint32_t hdr)
{
    memset(v + hdr, 0, (nb - hdr) * sizeof *v);
    if (fn == HVT_DIF_AGG_MIN || fn == HVT_DIF_AGG_MAX)
        v[0] = fn == HVT_DIF_AGG_MIN ? INT64_MAX : INT64_MIN;
}

void d_aggs_clear(d_aggs *a, int agg)
{
    if (agg < 0 || agg >= a->p->naggs || a->hdr[agg] == UINT32_MAX)
        return;
    uint32_t nb = a->p->aggs[agg].nbuckets, hdr = a->hdr[agg];
    uint8_t fn = a->p->aggs[agg].fn;
    /* what shows now stays, at zero; what trunc() removed stays removed until it changes */
    d_atab t;
    d_aent **v;
    int n = d_aggs_view(a, agg, NULL, 1, &t, &v);
    for (int i = 0; i < n; i++) {
        int64_t m = d_atab_find(&a->meta, v[i]->agg, v[i]->key, v[i]->klen, v[i]->hash);
        if (m >= 0) {
            free(a->meta.e[m].base);
            a->meta.e[m].base = NULL;
        }
    }
    free(v);
    d_atab_free(&t);
    for (uint32_t c = 0; c < a->ncpu; c++) {
        d_atab *ct = &a->cpu[c].cur;
        for (uint32_t i = 0; i < ct->n; i++)
            if (ct->e[i].agg == agg)
                reset_vals(fn, ct->e[i].v, nb, hdr);
    }
}

/* DTrace removes the entries trunc() drops from its copy; a later snapshot that brings one
 * something new makes it again. Here: every CPU's sum of the key goes back to its start and
 * the key stays hidden while the merged values are that start (meta base). */
void d_aggs_trunc(d_aggs *a, int agg, int64_t n)
{
    if (agg < 0 || agg >= a->p->naggs || a->hdr[agg] == UINT32_MAX)
        return;
    const d_agg *ag = &a->p->aggs[agg];
    uint32_t nb = ag->nbuckets, hdr = a->hdr[agg];
    d_atab t;
    d_aent **v;
    int cnt = d_aggs_view(a, agg, NULL, n < 0 ? 1 : 2, &t, &v);
    uint64_t keep = n < 0 ? -(uint64_t)n : (uint64_t)n;
    for (int i = 0; i < cnt; i++) {
        if ((uint64_t)i < keep)
            continue;
        d_aent *m = d_aggs_meta(a, v[i]);
        if (!m || (!m->base && !(m->base = calloc(nb, sizeof *m->base))))
            break;
        m->normal = 1;    /* when it comes back it is a new entry */
        reset_vals(ag->fn, m->base, nb, hdr);
        for (uint32_t c = 0; c < a->ncpu; c++) {
            int64_t j = d_atab_find(&a->cpu[c].cur, v[i]->agg, v[i]->key, v[i]->klen, v[i]->hash);
            if (j >= 0)
                reset_vals(ag->fn, a->cpu[c].cur.e[j].v, nb, hdr);
        }
    }
    free(v);
    d_atab_free(&t);
}

void d_aggs_normalize(d_aggs *a, int agg, uint64_t n)
{
    if (agg < 0 || agg >= a->p->naggs)
        return;
    d_atab t;
    d_aent **v;
    int cnt = d_aggs_view(a, agg, NULL, 1, &t, &v);
    for (int i = 0; i < cnt; i++) {
        d_aent *m = d_aggs_meta(a, v[i]);
        if (m)
            m->normal = n ? n : 1;
    }
    free(v);
    d_atab_free(&t);
}

void d_aggs_denormalize(d_aggs *a, int agg)
{
    for (uint32_t i = 0; i < a->meta.n; i++)
        if (a->meta.e[i].agg == agg)
            a->meta.e[i].normal = 1;
}

/* --- printa() of several aggregations: DTrace's joined walk --- */

typedef struct {
    sortctx s[D_JOIN_MAX];
    int n, keysort, rev, pos;
} joinctx;

/* A row's key: any entry's but the zero ones' (which have none) */
static const d_aent *rowkey(d_aent *const *row, int n)
{
    for (int i = 0; i < n; i++)
        if (row[i]->klen)
            return row[i];
    return row[0];
}

static int rowcmp(const void *pl, const void *pr, void *ctx)
{
    const joinctx *j = ctx;
    d_aent *const *l = *(d_aent *const *const *)pl, *const *r = *(d_aent *const *const *)pr;
    int c = j->keysort ? keycmp(&j->s[0], rowkey(l, j->n), rowkey(r, j->n)) : 0;
    /* the sorting aggregation's value, then the others' in order (DTrace's bundle) */
    for (int i = -1; !c && i < j->n; i++) {
        int k = i < 0 ? j->pos : i;
        if (i >= 0 && k == j->pos)
            continue;
        c = valcmp(&j->s[k], l[k], r[k]);
    }
    if (!c && !j->keysort)
        c = keycmp(&j->s[0], rowkey(l, j->n), rowkey(r, j->n));
    return j->rev ? -c : c;
}

static uint32_t rowhash(const uint8_t *k, uint32_t n)
{
    uint32_t h = 2166136261u;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ k[i]) * 16777619u;
    return h;
}

int d_aggs_joined(d_aggs *a, const int *aggs, int n, const d_aggopt *opt, d_join *jv)
{
    memset(jv, 0, sizeof *jv);
    if (n < 1 || n > D_JOIN_MAX)
        return -1;
    jv->n = n;
    d_atab keys = {0};
    d_aent ***vis = calloc((size_t)n, sizeof *vis);
    int *cnt = calloc((size_t)n, sizeof *cnt), rc = -1;
    if (!vis || !cnt)
        goto out;
    for (int i = 0; i < n; i++) {
        if ((cnt[i] = d_aggs_view(a, aggs[i], NULL, 1, &jv->tabs[i], &vis[i])) < 0)
            goto out;
        const d_agg *ag = &a->p->aggs[aggs[i]];
        /* a key this aggregation lacks prints its value as 0, as DTrace's zero-filled data */
        int64_t z = d_atab_add(&jv->zeros, (uint16_t)aggs[i], (const uint8_t *)"", 0, 0, ag->nbuckets);
        if (z < 0)
            goto out;
    }
    for (int i = 0; i < n; i++)
        for (int e = 0; e < cnt[i]; e++) {
            const d_aent *x = vis[i][e];
            uint32_t h = rowhash(x->key, x->klen);
            int64_t r = d_atab_find(&keys, 0, x->key, x->klen, h);
            if (r < 0) {
                if ((r = d_atab_add(&keys, 0, x->key, x->klen, h, 0)) < 0)
                    goto out;
                d_aent **nr = realloc(jv->cells, ((size_t)r + 1) * (size_t)n * sizeof *nr);
                if (!nr)
                    goto out;
                jv->cells = nr;
                for (int k = 0; k < n; k++)
                    nr[(size_t)r * n + k] = &jv->zeros.e[k];
            }
            jv->cells[(size_t)r * n + i] = vis[i][e];
        }
    jv->nrows = (int)keys.n;
    if (!(jv->rows = malloc(((size_t)jv->nrows + 1) * sizeof *jv->rows)))
        goto out;
    for (int r = 0; r < jv->nrows; r++)
        jv->rows[r] = &jv->cells[(size_t)r * n];
    joinctx j = { .n = n, .keysort = opt && opt->sortkey, .rev = opt && opt->sortrev,
                  .pos = opt && opt->sortpos > 0 && opt->sortpos < n ? opt->sortpos : 0 };
    for (int i = 0; i < n; i++)
        j.s[i] = (sortctx){a, &a->p->aggs[aggs[i]], a->hdr[aggs[i]], 0, 0,
                           opt && opt->keypos > 0 ? opt->keypos : 0, 1};
    qsort_r(jv->rows, (size_t)jv->nrows, sizeof *jv->rows, rowcmp, &j);
    rc = 0;
out:
    for (int i = 0; vis && i < n; i++)
        free(vis[i]);
    free(vis);
    free(cnt);
    d_atab_free(&keys);
    if (rc < 0)
        d_join_free(jv);
    return rc;
}

void d_join_free(d_join *jv)
{
    for (int i = 0; i < jv->n; i++)
        d_atab_free(&jv->tabs[i]);
    d_atab_free(&jv->zeros);
    free(jv->cells);
    free(jv->rows);
    memset(jv, 0, sizeof *jv);
}

int d_aggs_walk(d_aggs *a, int agg, d_aggs_entry_fn fn, void *ctx)
{
    const d_agg *ag = &a->p->aggs[agg];
    if (ag->fn != HVT_DIF_AGG_COUNT && ag->fn != HVT_DIF_AGG_SUM)
        return -1;
    d_atab t;
    d_aent **es;
    d_aggopt opt = { 0 };
    int n = d_aggs_view(a, agg, &opt, 0, &t, &es);
    if (n < 0) {
        d_atab_free(&t);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        d_value k[HVT_DIF_TUPLE_MAX];
        int nk = d_agg_key_values(ag, es[i]->key, es[i]->klen, k, 0);
        fn(ctx, k, nk, es[i]->v[0] / (int64_t)(es[i]->normal ? es[i]->normal : 1));
    }
    free(es);
    d_atab_free(&t);
    return 0;
}
