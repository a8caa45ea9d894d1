/* d_records.c - what the consumer knows of a record (d_consume_priv.h): its probe, its DTrace
 * ids, its CPU's flow state, the check of its body before anything is printed; and d_say, the
 * consumer's own messages. Used by d_consume.c and d_print.c; calls neither. */
#include "d_consume_priv.h"
#include "hvt_probe.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void d_say(d_consumer *c, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    d_out_puts(c->err, "hvt: ");
    d_out_puts(c->err, buf);
    d_out_puts(c->err, "\n");
}

const d_probe *d_probe_of(const d_consumer *c, uint32_t id)
{
    int lo = 0, hi = c->p->nprobes - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const d_probe *pr = &c->p->probes[c->probe_by_id[mid]];
        if (pr->id == id)
            return pr;
        if (pr->id < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

int d_epid_cmp(const void *a, const void *b)
{
    const depid *x = a, *y = b;
    if (x->probe != y->probe)
        return x->probe < y->probe ? -1 : 1;
    return x->clause < y->clause ? -1 : x->clause > y->clause;
}

uint32_t d_epid_of(const d_consumer *c, uint32_t probe, uint16_t clause)
{
    depid k = {probe, clause, 0};
    const depid *e = c->nepids ? bsearch(&k, c->epids, c->nepids, sizeof k, d_epid_cmp) : NULL;
    return e ? e->epid : (uint32_t)clause + 1;
}

uint32_t d_dtrace_id_of(const d_consumer *c, uint32_t probe)
{
    struct hvt_dif_hdr h;
    if (!probe || !c->p->image || c->p->image_len < sizeof h)
        return probe;
    memcpy(&h, c->p->image, sizeof h);
    if (probe == h.begin_probe) return 1;
    if (probe == h.end_probe) return 2;
    if (probe == h.error_probe) return 3;
    return probe;
}

dflow *d_flow_of(d_consumer *c, unsigned cpu)
{
    if (cpu >= c->nflow) {
        dflow *n = realloc(c->flow, (cpu + 1) * sizeof *n);
        if (!n)
            return NULL;
        memset(n + c->nflow, 0, (cpu + 1 - c->nflow) * sizeof *n);
        c->flow = n;
        c->nflow = cpu + 1;
    }
    return &c->flow[cpu];
}

/* --- decoding: the whole record is checked before anything is printed --- */

static int reserve(d_consumer *c, uint32_t nv, uint32_t na)
{
    if (nv > c->vcap) {
        uint32_t cap = nv < 64 ? 64 : nv * 2;
        d_value *n = realloc(c->vals, cap * sizeof *n);
        if (!n)
            return -1;
        c->vals = n;
        c->vcap = cap;
    }
    if (na > c->acap) {
        uint32_t cap = na < 16 ? 16 : na * 2;
        dact *n = realloc(c->acts, cap * sizeof *n);
        if (!n)
            return -1;
        c->acts = n;
        c->acap = cap;
    }
    return 0;
}

static int bad(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

static int zeros(const uint8_t *p, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* The actions of a DATA record's body: their count, or -1 with why. */
int d_decode(d_consumer *c, const d_clause *cl, const uint8_t *b, uint32_t len, char *why, size_t wn)
{
    uint32_t at = 0, nv = 0;
    int na = 0;
    while (at < len) {
        uint16_t ai;
        if (len - at < 8)
            return bad(why, wn, "action header cut at byte %u", HDR + at);
        memcpy(&ai, b + at, 2);
        if (!zeros(b + at + 2, 6))
            return bad(why, wn, "action header at byte %u is not zero-padded", HDR + at);
        if (ai >= cl->nacts)
            return bad(why, wn, "action index %u, the clause has %d", ai, cl->nacts);
        const d_action *a = &cl->acts[ai];
        at += 8;
        if (reserve(c, nv + (uint32_t)(a->nargs > 0 ? a->nargs : 0), (uint32_t)na + 1) < 0)
            return bad(why, wn, "out of memory");
        dact *d = &c->acts[na++];
        *d = (dact){ai, (int)nv, 0, NULL, 0, 0};
        if (a->kind == D_ACT_USTACK) {      /* u32 count, u32 0, count user pcs */
            uint32_t n, z;
            if (len - at < 8)
                return bad(why, wn, "action #%u: user stack header cut", ai);
            memcpy(&n, b + at, 4);
            memcpy(&z, b + at + 4, 4);
            if (z || n > HVT_DIF_USTACK_MAX || (uint64_t)n * 8 > len - at - 8)
                return bad(why, wn, "action #%u: user stack of %u frames does not fit", ai, n);
            d->blob = b + at + 8;
            d->bloblen = n;
            at += 8 + 8 * n;
            continue;
        }
        if (a->kind == D_ACT_STACK) {
            uint32_t n, z;
            if (len - at < 16)
                return bad(why, wn, "action #%u: stack header cut", ai);
            memcpy(&n, b + at, 4);
            memcpy(&z, b + at + 4, 4);
            memcpy(&d->rsp, b + at + 8, 8);
            uint32_t tot = (n + 7u) & ~7u;
            if (z || n > HVT_PROBE_STACK_MAX || tot > len - at - 16)
                return bad(why, wn, "action #%u: stack of %u bytes does not fit", ai, n);
            d->blob = b + at + 16;
            d->bloblen = n;
            if (!zeros(b + at + 16 + n, tot - n))
                return bad(why, wn, "action #%u: stack padding is not zero", ai);
            at += 16 + tot;
            continue;
        }
        for (int k = 0; k < a->nargs; k++) {
            d_value *v = &c->vals[nv++];
            memset(v, 0, sizeof *v);
            v->type = a->args[k].type;
            v->size = a->args[k].size;
            if (v->type == D_V_STR) {
                uint16_t l;
                if (len - at < 2)
                    return bad(why, wn, "action #%u value %d: string length cut", ai, k + 1);
                memcpy(&l, b + at, 2);
                uint32_t tot = (2u + l + 7u) & ~7u;
                if (tot > len - at)
                    return bad(why, wn, "action #%u value %d: string of %u bytes past the record's end", ai,
                               k + 1, l);
                if (l >= c->strsize)
                    return bad(why, wn, "action #%u value %d: string of %u bytes, strsize is %u", ai, k + 1, l,
                               c->strsize);
                if (!zeros(b + at + 2 + l, tot - 2 - l))
                    return bad(why, wn, "action #%u value %d: string padding is not zero", ai, k + 1);
                v->s = (const char *)b + at + 2;
                v->slen = l;
                at += tot;
            } else {
                if (len - at < 8)
                    return bad(why, wn, "action #%u value %d: integer cut", ai, k + 1);
                memcpy(&v->i, b + at, 8);
                at += 8;
            }
        }
        d->nv = (int)nv - d->v0;
    }
    return na;
}
