/*
 * d_agg_priv.h - what d_agg.c (storage, merging), d_aggview.c (views, sorting, host-side
 * actions) and d_aggprint.c (printing) share. Not for other files.
 *
 * Contract: a d_atab maps (aggregation, canonical key bytes) to a value vector; the merged
 * view of an aggregation (d_aggs_view) is a table of its visible entries after trunc() and the
 * entries sorted the way DTrace walks them.
 */
#ifndef HVT_D_AGG_PRIV_H
#define HVT_D_AGG_PRIV_H
#include "d_agg.h"

typedef struct {
    uint16_t agg;
    uint32_t klen;
    uint32_t hash;
    uint32_t next;        /* chain: index + 1, 0 ends it */
    uint8_t *key;         /* canonical encoding (zero padding, sym() keys at their symbol) */
    int64_t *v;           /* the aggregation's nbuckets values */
    uint64_t normal;      /* meta table: normalize()'s factor (1: none) */
    int64_t *base;        /* meta table: trunc() removed it: hidden while the merged values
                             are these (a new key's), or NULL */
} d_aent;

typedef struct {
    d_aent *e;
    uint32_t n, cap;
    uint32_t *head;
    uint32_t nhead;
} d_atab;

typedef struct {
    uint64_t gen, pgen;
    int have, pending, bad;
    d_atab cur, pend;
} d_acpu;

struct d_aggs {
    const dprog *p;
    d_symbolizer sy;
    uint32_t strsize;
    d_acpu *cpu;
    uint32_t ncpu;
    d_atab meta;
    uint8_t *printed;     /* per aggregation: printa() printed it */
    uint32_t *hdr;        /* per aggregation: slots before the buckets */
    int zoom;             /* the printing under way is under aggzoom (d_aggopt) */
    int rawbytes;         /* ... and rawbytes */
};

/* The visible entries of aggregation agg, merged across CPUs, in `t` (caller frees with
 * d_atab_free); sorted into *out (t's entries; caller frees the array). mode: 0 DTrace's
 * printing order under opt, 1 value then key ascending (trunc), 2 the same descending. */
int d_aggs_view(d_aggs *a, int agg, const d_aggopt *opt, int mode, d_atab *t, d_aent ***out);
void d_atab_free(d_atab *t);

/* printa() of several aggregations: one row per key in any of them, rows[r][i] the entry of
 * aggregation i (a zero one where it lacks the key), sorted as DTrace's joined walk. */
#define D_JOIN_MAX 16
typedef struct {
    int n, nrows;
    d_aent ***rows;
    d_aent **cells;
    d_atab tabs[D_JOIN_MAX];
    d_atab zeros;
} d_join;
int d_aggs_joined(d_aggs *a, const int *aggs, int n, const d_aggopt *opt, d_join *jv);
void d_join_free(d_join *jv);
/* The entry of (agg, key) with hash h (d_agg_hash), or -1. */
int64_t d_atab_find(const d_atab *t, uint16_t agg, const uint8_t *k, uint32_t klen, uint32_t h);
/* A new entry with nb zero values (nb 0: none); its index, or -1 (out of memory). */
int64_t d_atab_add(d_atab *t, uint16_t agg, const uint8_t *k, uint32_t klen, uint32_t h, uint32_t nb);
/* v -= base (values trunc() remembered): 1 when nothing happened since (the entry stays
 * hidden); min and max are compared, not subtracted. hdr: slots before the buckets. */
int d_agg_since(uint8_t fn, int64_t *v, const int64_t *base, uint32_t nb, uint32_t hdr);
/* The meta entry of a key (created on demand); NULL when out of memory. */
d_aent *d_aggs_meta(d_aggs *a, const d_aent *e);
/* Decode a canonical key into values (strings point into the key). Returns the count. */
int d_agg_key_values(const d_agg *ag, const uint8_t *key, uint32_t klen, d_value *v, int stackindent);
/* The stack indent of a program (its stackindent option, else DTrace's 14). */
static inline int d_agg_stackindent(const dprog *p) { return p->stackindent_set ? p->stackindent : 14; }
/* Buckets of a quantization (DTrace's count), 0 for the other functions. */
uint32_t d_agg_buckets(const d_agg *ag);

#endif
