/* d_aggprint.c - printing aggregations as DTrace's consumer does (dt_print_aggs,
 * dt_print_quantize, dt_print_lquantize, dt_print_llquantize, printa formats): the same
 * columns, the same bars (40 '@' for the whole, rounded to nearest), the same zero rows. */
#include "d_agg_priv.h"
#include <stdlib.h>
#include <string.h>

#define QBUCKETS 127
#define QZERO    63

static int64_t qval(int i)
{
    return i < QZERO ? -((int64_t)1 << (QZERO - 1 - i)) : i == QZERO ? 0 : (int64_t)1 << (i - QZERO - 1);
}

static uint64_t uabs(int64_t v) { return v < 0 ? -(uint64_t)v : (uint64_t)v; }

/* A distribution's scale: the bars are parts of the whole (DTrace's total of |bucket|), or,
 * under aggzoom, the largest bucket is DTRACE_AGGZOOM_MAX (0.95) of the bar's length. */
#define AGGZOOM_MAX 0.95
typedef struct {
    unsigned __int128 total;   /* sum of |bucket| */
    long double ztotal;        /* aggzoom: max |bucket| / AGGZOOM_MAX, as DTrace computes it */
    int zoom, pos, neg;
} bars;

/* The bar's length: round(|val| * len / total), exactly; under aggzoom DTrace's own long
 * double arithmetic, so the rounding at a half matches its bars. */
static unsigned depth(int64_t val, unsigned len, const bars *b)
{
    if (b->zoom) {
        if (b->ztotal == 0)
            return 0;
        long double f = (long double)uabs(val) * len / b->ztotal;
        unsigned d = (unsigned)(f + 0.5);
        return d > len ? len : d;
    }
    if (!b->total)
        return 0;
    unsigned __int128 n = (unsigned __int128)uabs(val) * len * 2 + b->total;
    unsigned __int128 d = n / (b->total * 2);
    return d > len ? len : (unsigned)d;
}

static void quantline(d_out *o, int64_t val, uint64_t normal, const bars *b)
{
    static const char ats[] = "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@";
    static const char sp[] = "                                        ";
    long long shown = (long long)(val / (int64_t)normal);
    if (!b->neg) {
        unsigned d = b->pos ? depth(val, 40, b) : 0;
        d_out_printf(o, "|%s%s %-9lld\n", ats + 40 - d, sp + d, shown);
    } else if (!b->pos) {
        unsigned d = depth(val, 40, b);
        d_out_printf(o, "%s%s| %-9lld\n", sp + d, ats + 40 - d, shown);
    } else {                  /* both signs: half bars either side of a center line */
        unsigned d = depth(val, 20, b);
        if (val <= 0)
            d_out_printf(o, "%s%s|%*s %-9lld\n", sp + 20 + d, ats + 40 - d, 20, "", shown);
        else
            d_out_printf(o, "%20s|%s%s %-9lld\n", "", ats + 40 - d, sp + 20 + d, shown);
    }
}

static void range_total(const int64_t *d, int first, int last, int zoom, bars *b)
{
    b->total = 0;
    b->ztotal = 0;
    b->zoom = zoom;
    b->pos = b->neg = 0;
    for (int i = first; i <= last; i++) {
        b->pos |= d[i] > 0;
        b->neg |= d[i] < 0;
        b->total += uabs(d[i]);
        long double z = (long double)uabs(d[i]) * (1 / AGGZOOM_MAX);
        if (b->ztotal < z)
            b->ztotal = z;
    }
}

static void header(d_out *o)
{
    d_out_printf(o, "\n%16s %41s %-9s\n", "value", "------------- Distribution -------------", "count");
}

static void print_quantize(d_out *o, const int64_t *d, uint64_t normal, int zoom)
{
    int first = 0, last = QBUCKETS - 1;
    bars b;
    while (first < QBUCKETS - 1 && !d[first])
        first++;
    if (first == QBUCKETS - 1 && !d[first]) {
        /* nothing (cleared, or only negative increments cancelling): the rows around 0. A
         * count only in the top bucket (2^62 and up) is a count: its row and the one below,
         * as dtrace-utils prints it. */
        first = QZERO - 1;
        last = QZERO + 1;
    } else {
        if (first > 0)
            first--;
        while (last > 0 && !d[last])
            last--;
        if (last < QBUCKETS - 1)
            last++;
    }
    range_total(d, first, last, zoom, &b);
    header(o);
    for (int i = first; i <= last; i++) {
        d_out_printf(o, "%16lld ", (long long)qval(i));
        quantline(o, d[i], normal, &b);
    }
}

static void print_lquantize(d_out *o, const d_agg *ag, const int64_t *d, uint64_t normal, int zoom)
{
    int64_t base = ag->p[0], step = ag->p[2], levels = (ag->p[1] - ag->p[0]) / ag->p[2];
    int64_t first = 0, last = levels + 1;
    bars b;
    while (first <= levels + 1 && !d[first])
        first++;
    if (first > levels + 1) {
        first = 0;
        last = levels + 1 < 2 ? levels + 1 : 2;
    } else {
        if (first > 0)
            first--;
        while (last > 0 && !d[last])
            last--;
        if (last < levels + 1)
            last++;
    }
    range_total(d, (int)first, (int)last, zoom, &b);
    header(o);
    for (int64_t i = first; i <= last; i++) {
        char c[48];
        if (i == 0) {
            snprintf(c, sizeof c, "< %lld", (long long)base);
            d_out_printf(o, "%16s ", c);
        } else if (i == levels + 1) {
            snprintf(c, sizeof c, ">= %lld", (long long)(base + levels * step));
            d_out_printf(o, "%16s ", c);
        } else {
            d_out_printf(o, "%16lld ", (long long)(base + (i - 1) * step));
        }
        quantline(o, d[i], normal, &b);
    }
}

/* dtrace-utils' dt_print_llquantize: the symmetric buckets (include/hvt_dif.h), those from the
 * first to the last with a count and one more each side, each labelled by its lower bound
 * (its magnitude for the negative ones); the underflow bucket is "0" when low is 0, else
 * "< factor^low" ("abs() < factor^low" when a negative bucket shows); with low 0 and steps >
 * factor, order 0's steps/factor-wide buckets are labelled 2 .. factor and those without a
 * label (never filled) are skipped, the ends taking a neighbour's label as dtrace-utils'
 * ghost-bin rule does. */
#define LLQ_CW 24
static void print_llquantize(d_out *o, const d_agg *ag, const int64_t *d, uint64_t normal, int zoom)
{
    int64_t factor = ag->p[0], lmag = ag->p[1], hmag = ag->p[2], steps = ag->p[3];
    int64_t sf = steps / factor, bin0 = 1 + (hmag - lmag + 1) * (steps - sf);
    int64_t nbins = (int64_t)d_agg_buckets(ag), first = 0, last = nbins - 1, pad = 0;
    bars b;
    while (first <= last && !d[first])
        first++;
    if (first > last) {
        first = last = bin0 + 1;     /* at least one bucket, so the output is not empty */
    } else {
        while (!d[last])
            last--;
    }
    range_total(d, (int)first, (int)last, zoom, &b);
    header(o);
    if (first > 0)
        first--;
    if (last < nbins - 1)
        last++;
    if (lmag == 0 && steps > factor)
        pad = sf;
    int64_t nlab = last - first + 1 + 2 * pad;
    char *c = calloc((size_t)nlab, LLQ_CW);
    if (!c)
        return;
#define LAB(I, ...) do { int64_t i_ = (I); if (i_ >= first - pad && i_ <= last + pad) \
        snprintf(c + LLQ_CW * (i_ - first + pad), LLQ_CW, __VA_ARGS__); } while (0)
    uint64_t scale = 1;
    for (int64_t k = 0; k < lmag; k++)
        scale *= (uint64_t)factor;
    if (scale == 1)
        LAB(bin0, "%d", 0);
    else if (first >= bin0)
        LAB(bin0, "< %llu", (unsigned long long)scale);
    else
        LAB(bin0, "abs() < %llu", (unsigned long long)scale);
    LAB(bin0 - 1, "-%llu", (unsigned long long)scale);
    LAB(bin0 + 1, "%llu", (unsigned long long)scale);
    int64_t mag = lmag, i = 1;
    if (lmag == 0 && steps > factor) {
        for (int64_t step = 2; step <= factor; step++) {
            i += sf;
            LAB(bin0 - i, "-%lld", (long long)step);
            LAB(bin0 + i, "%lld", (long long)step);
        }
        mag++;
    }
    uint64_t sc = 1;
    for (int64_t k = 0; k < mag + 1; k++)
        sc *= (uint64_t)factor;
    sc /= (uint64_t)steps;
    for (; mag <= hmag; mag++) {
        for (int64_t step = sf + 1; step <= steps; step++) {
            i++;
            LAB(bin0 - i, "-%llu", (unsigned long long)((uint64_t)step * sc));
            LAB(bin0 + i, "%llu", (unsigned long long)((uint64_t)step * sc));
        }
        sc *= (uint64_t)factor;
    }
    scale = 1;
    for (int64_t k = 0; k <= hmag; k++)
        scale *= (uint64_t)factor;
    LAB(0, "<= -%llu", (unsigned long long)scale);
    LAB(nbins - 1, ">= %llu", (unsigned long long)scale);
#undef LAB
    if (pad > 0) {                   /* the ghost-bin rule: an end without a label takes the nearest one's */
        char *f = c + LLQ_CW * pad, *l = c + LLQ_CW * (last - first + pad);
        int64_t k;
        if (!*f) {
            for (k = 1; k < pad && !f[-LLQ_CW * k]; k++)
                ;
            if (k < pad)
                memcpy(f, f - LLQ_CW * k, LLQ_CW);
        }
        if (!*l) {
            for (k = 1; k < pad && !l[LLQ_CW * k]; k++)
                ;
            if (k < pad)
                memcpy(l, l + LLQ_CW * k, LLQ_CW);
        }
    }
    for (int64_t k = first; k <= last; k++) {
        const char *lab = c + LLQ_CW * (k - first + pad);
        if (!*lab)
            continue;
        d_out_printf(o, "%16s ", lab);
        quantline(o, d[k], normal, &b);
    }
    free(c);
}

/* The distribution of a quantization, or 0 if fn is not one. */
static int print_dist(d_aggs *a, d_out *o, const d_agg *ag, int agg, const d_aent *e)
{
    const int64_t *d = e->v + a->hdr[agg];
    switch (ag->fn) {
    case HVT_DIF_AGG_QUANTIZE: print_quantize(o, d, e->normal, a->zoom); return 1;
    case HVT_DIF_AGG_LQUANTIZE: print_lquantize(o, ag, d, e->normal, a->zoom); return 1;
    case HVT_DIF_AGG_LLQUANTIZE: print_llquantize(o, ag, d, e->normal, a->zoom); return 1;
    default: return 0;
    }
}

static int64_t avg_of(const d_aent *e)
{
    return e->v[0] ? e->v[1] / (int64_t)e->normal / e->v[0] : 0;
}

/* A key the default way (dt_print_datum): integers by their size, strings "  %-50s". */
static void print_key(d_aggs *a, d_out *o, const d_value *v)
{
    char s[512];
    switch (v->type) {
    case D_V_STR:
        if (a->rawbytes)
            d_print_rawbytes(o, v->s, v->slen, a->strsize);
        else
            d_print_bytes(o, v->s, v->slen, a->strsize, -50, 0);
        return;
    case D_V_KSYM:
        d_sym2str(&a->sy, (uint64_t)v->i, 0, s, sizeof s);
        d_out_printf(o, "  %-50s", s);
        return;
    case D_V_KSTACK: case D_V_USTACK:      /* dt_print_stack: the frames on lines of their own */
        d_print_stack_key(o, &a->sy, v, NULL);
        return;
    default:
        switch (v->size) {
        case 1: d_out_printf(o, " %3d", (uint8_t)v->i); return;
        case 2: d_out_printf(o, " %5d", (uint16_t)v->i); return;
        case 4: d_out_printf(o, " %8d", (int)(uint32_t)v->i); return;
        default: d_out_printf(o, " %16lld", (long long)v->i); return;
        }
    }
}

static void print_entry(d_aggs *a, d_out *o, int agg, const d_aent *e)
{
    const d_agg *ag = &a->p->aggs[agg];
    d_value k[HVT_DIF_TUPLE_MAX];
    int nk = d_agg_key_values(ag, e->key, e->klen, k, d_agg_stackindent(a->p));
    for (int i = 0; i < nk; i++)
        print_key(a, o, &k[i]);
    if (!print_dist(a, o, ag, agg, e)) {
        if (ag->fn == HVT_DIF_AGG_AVG)
            d_out_printf(o, " %16lld", (long long)avg_of(e));
        else if (ag->fn == HVT_DIF_AGG_STDDEV)
            d_out_printf(o, " %16llu", (unsigned long long)d_agg_stddev(e->v, e->normal));
        else
            d_out_printf(o, " %16lld", (long long)(e->v[0] / (int64_t)e->normal));
    }
    d_out_puts(o, "\n");
}

typedef struct {
    d_aggs *a;
    const int *aggs;      /* the printa()'s aggregations */
    d_aent *const *es;    /* their entries for this key */
    int n, k;             /* how many; the next %@'s (one aggregation: every %@ is its) */
} aggval;

/* %@ of a printa() format: count is unsigned, the others signed (DTrace's agg types); the
 * quantizations print their distribution whatever the conversion says. */
static int printa_value(void *ctx, d_out *o, const d_pfspec *sp, char *err, size_t errlen)
{
    aggval *x = ctx;
    if (x->n > 1 && x->k >= x->n) {
        snprintf(err, errlen, "%%@ #%d: printa() has %d aggregations", x->k + 1, x->n);
        return -1;
    }
    int i = x->n > 1 ? x->k++ : 0;
    const d_agg *ag = &x->a->p->aggs[x->aggs[i]];
    const d_aent *e = x->es[i];
    if (print_dist(x->a, o, ag, x->aggs[i], e))
        return 0;
    if (!strchr("diuoxXc", sp->conv)) {
        snprintf(err, errlen, "%%@%c cannot print an aggregation's value", sp->conv);
        return -1;
    }
    switch (ag->fn) {
    case HVT_DIF_AGG_COUNT:
        d_pf_int(o, sp, (int64_t)((uint64_t)e->v[0] / e->normal), 8, 0);
        break;
    case HVT_DIF_AGG_AVG:
        d_pf_int(o, sp, avg_of(e), 8, 1);
        break;
    case HVT_DIF_AGG_STDDEV:
        d_pf_int(o, sp, (int64_t)d_agg_stddev(e->v, e->normal), 8, 1);
        break;
    default:
        d_pf_int(o, sp, e->v[0] / (int64_t)e->normal, 8, 1);
        break;
    }
    return 0;
}

int d_aggs_printa(d_aggs *a, d_out *o, int agg, const char *fmt, const d_aggopt *opt,
                  char *err, size_t errlen)
{
    if (agg < 0 || agg >= a->p->naggs) {
        snprintf(err, errlen, "printa() of aggregation %d: the program has %d", agg, a->p->naggs);
        return -1;
    }
    d_atab t;
    d_aent **v;
    a->zoom = opt && opt->zoom;
    a->rawbytes = opt && opt->rawbytes;
    int n = d_aggs_view(a, agg, opt, 0, &t, &v), rc = 0;
    if (n < 0) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (!fmt)
        d_out_puts(o, "\n");
    for (int i = 0; i < n && !rc; i++) {
        if (!fmt) {
            print_entry(a, o, agg, v[i]);
            continue;
        }
        d_value k[HVT_DIF_TUPLE_MAX];
        const d_agg *ag = &a->p->aggs[agg];
        int nk = d_agg_key_values(ag, v[i]->key, v[i]->klen, k, d_agg_stackindent(a->p));
        aggval x = {a, &agg, &v[i], 1, 0};
        if (d_printf_format(o, fmt, k, nk, &a->sy, printa_value, &x, err, errlen) < 0)
            rc = -1;
    }
    a->printed[agg] = 1;
    free(v);
    d_atab_free(&t);
    return rc;
}

static int same_keys(const d_agg *x, const d_agg *y)
{
    if (x->nkeys != y->nkeys)
        return 0;
    for (int k = 0; k < x->nkeys && k < HVT_DIF_TUPLE_MAX; k++)
        if (x->keys[k].type != y->keys[k].type || x->keys[k].size != y->keys[k].size)
            return 0;
    return 1;
}

int d_aggs_printa_joined(d_aggs *a, d_out *o, int agg, const int *x, int n, const char *fmt,
                         const d_aggopt *opt, char *err, size_t errlen)
{
    if (n <= 0)
        return d_aggs_printa(a, o, agg, fmt, opt, err, errlen);
    int all[D_JOIN_MAX];
    if (!fmt || n + 1 > D_JOIN_MAX) {
        snprintf(err, errlen, "printa() of %d aggregations %s", n + 1, fmt ? "is too many" : "needs a format");
        return -1;
    }
    all[0] = agg;
    for (int i = 0; i < n; i++)
        all[i + 1] = x[i];
    for (int i = 0; i <= n; i++)
        if (all[i] < 0 || all[i] >= a->p->naggs || !same_keys(&a->p->aggs[all[i]], &a->p->aggs[agg])) {
            snprintf(err, errlen, "printa() of aggregation %d: not one with @%s's keys", all[i],
                     a->p->aggs[agg].name);
            return -1;
        }
    d_join jv;
    a->zoom = opt && opt->zoom;
    a->rawbytes = opt && opt->rawbytes;
    if (d_aggs_joined(a, all, n + 1, opt, &jv) < 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (int r = 0; r < jv.nrows && !rc; r++) {
        d_value k[HVT_DIF_TUPLE_MAX];
        const d_aent *e = jv.rows[r][0];
        /* the key of whichever aggregation has it: the zero entries have none */
        for (int i = 0; i <= n && !e->klen && a->p->aggs[agg].nkeys; i++)
            e = jv.rows[r][i];
        int nk = d_agg_key_values(&a->p->aggs[agg], e->key, e->klen, k, d_agg_stackindent(a->p));
        aggval xv = {a, all, jv.rows[r], n + 1, 0};
        if (d_printf_format(o, fmt, k, nk, &a->sy, printa_value, &xv, err, errlen) < 0)
            rc = -1;
    }
    for (int i = 0; i <= n; i++)
        a->printed[all[i]] = 1;
    d_join_free(&jv);
    return rc;
}

int d_aggs_print_rest(d_aggs *a, d_out *o, const d_aggopt *opt)
{
    int rev = opt && opt->sortrev;
    a->zoom = opt && opt->zoom;
    a->rawbytes = opt && opt->rawbytes;
    for (int j = 0; j < a->p->naggs; j++) {
        int agg = rev ? a->p->naggs - 1 - j : j;
        if (a->printed[agg])
            continue;
        d_atab t;
        d_aent **v;
        int n = d_aggs_view(a, agg, opt, 0, &t, &v);
        for (int i = 0; i < n; i++)
            print_entry(a, o, agg, v[i]);
        free(v);
        d_atab_free(&t);
        if (n < 0)
            return -1;
    }
    return 0;
}
