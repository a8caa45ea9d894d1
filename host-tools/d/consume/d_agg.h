/*
 * d_agg.h - the host's copy of a D program's aggregations: the latest complete snapshot of
 * every CPU, merged across CPUs when printed; the host-side actions on them (trunc,
 * normalize, denormalize, clear); their printing the way DTrace prints them.
 *
 * Contract:
 *  - A snapshot is every aggregation of one CPU at one time: snap_begin(cpu, gen), then runs
 *    of struct hvt_dagg_rec (snap_add), then snap_end(cpu, gen). Its values are what the CPU
 *    aggregated since its previous snapshot (the hypervisor resets what it sends, as DTrace's
 *    buffer switch does): the host's copy of a CPU is their sum, each snap_add run added as
 *    soon as it is checked whole (a bad run is left out and reported). A begin whose
 *    generation is not newer than the CPU's last one is refused; a newer begin ends an
 *    unfinished one.
 *  - Every record is checked (aggregation index, the CPU, lengths, nbuckets, the key against
 *    the aggregation's key types, strings at most strsize-1 bytes, zero padding); a bad record
 *    spoils its snapshot, which is then refused at its end. Keys made by sym() (D_V_KSYM) are
 *    moved to the start of their symbol, as DTrace merges them by symbol.
 *  - d_agg_merge() is the one place that combines two value vectors (per-CPU layouts of
 *    include/hvt_dif.h): count, sum, avg [count, sum], stddev [count, sum, sumsq lo, hi] (128
 *    bits, carried) and the quantizations add; min and max keep the extreme.
 *  - Bucket layouts: quantize has DTrace's 127 buckets; lquantize levels+2 and llquantize
 *    DTrace's count of buckets, computed from the parameters; slots before them (nbuckets is
 *    larger) are a header the printing ignores.
 *  - trunc(@a, n) keeps the n largest (n < 0: smallest; 0: none) and removes the others, as
 *    DTrace: their sums go back to a new key's values and they stay hidden until a snapshot
 *    changes them (then they show what came since, a smaller max too). clear() zeros the host's sum (min
 *    and max back to INT64_MAX / INT64_MIN, as a new key starts): later snapshots add to it;
 *    what trunc() removed stays removed until it changes from zero. normalize() applies to the entries that exist when it runs, as in DTrace.
 *  - Printing (d_aggs_printa, d_aggs_print_rest) follows DTrace: sorted by value then key
 *    (options below), keys " %16lld" / " %8d" / " %5d" / " %3d" by size and "  %-50s" for
 *    strings, values " %16lld", quantize/lquantize/llquantize distributions with one zero row
 *    around the used range; a printa() format gets the keys in order and %@ for the value.
 */
#ifndef HVT_D_AGG_H
#define HVT_D_AGG_H
#include "dprog.h"
#include "d_format.h"

typedef struct d_aggs d_aggs;

typedef struct {
    int sortkey;          /* aggsortkey: by key first */
    int sortrev;          /* aggsortrev: reversed (aggregations too, as DTrace) */
    int keypos;           /* aggsortkeypos: the key sorted on first */
    int sortpos;          /* aggsortpos: printa() of several: the aggregation sorted on first */
    int zoom;             /* aggzoom: a distribution's largest bar is 95% of its width */
    int rawbytes;         /* rawbytes: string keys as hex dumps */
} d_aggopt;

/* strsize: bytes of a string value with its NUL (the image's), 0: 256. */
d_aggs *d_aggs_new(const dprog *p, uint32_t strsize, const d_symbolizer *sy);
void d_aggs_free(d_aggs *a);
/* 0 when the program describes aggregation agg inconsistently (nbuckets too small for its
 * function, parameters DTrace would refuse, too many keys): its records are all refused. */
int d_aggs_usable(const d_aggs *a, int agg);

/* 0, or -1 with a reason in why. */
int d_aggs_snap_begin(d_aggs *a, unsigned cpu, uint64_t gen, char *why, size_t whylen);
int d_aggs_snap_add(d_aggs *a, unsigned cpu, uint64_t gen, const void *recs, size_t len,
                    char *why, size_t whylen);
int d_aggs_snap_end(d_aggs *a, unsigned cpu, uint64_t gen, char *why, size_t whylen);

void d_aggs_clear(d_aggs *a, int agg);
void d_aggs_trunc(d_aggs *a, int agg, int64_t n);
void d_aggs_normalize(d_aggs *a, int agg, uint64_t n);      /* n 0 counts as 1 */
void d_aggs_denormalize(d_aggs *a, int agg);

/* printa(@agg) (fmt NULL) or printa(fmt, @agg): 0, or -1 with the reason in err. Marks the
 * aggregation printed. */
int d_aggs_printa(d_aggs *a, d_out *o, int agg, const char *fmt, const d_aggopt *opt,
                  char *err, size_t errlen);
/* printa(fmt, @agg, @x[0], ...): DTrace's joined walk: one line per key of any of them, each
 * %@ taking the next aggregation's value (0 where it lacks the key); sorted on the values of
 * aggregation sortpos, then the others in order, then the key (aggsortkey: the key first).
 * n 0: as d_aggs_printa. Marks them all printed. */
int d_aggs_printa_joined(d_aggs *a, d_out *o, int agg, const int *x, int n, const char *fmt,
                         const d_aggopt *opt, char *err, size_t errlen);
/* At the end: every aggregation not printed by printa(), in DTrace's order. */
int d_aggs_print_rest(d_aggs *a, d_out *o, const d_aggopt *opt);

/* Every visible entry of a count() or sum() aggregation agg (merged across CPUs, normalized),
 * its keys decoded (d_value: stacks as d_print_stack_key takes them), in DTrace's printing
 * order: fn(ctx, keys, nkeys, value). 0, or -1 (not a count or sum, out of memory). For
 * folded stacks and flame graphs from @[stack()] = count(). */
typedef void (*d_aggs_entry_fn)(void *ctx, const d_value *keys, int nkeys, int64_t value);
int d_aggs_walk(d_aggs *a, int agg, d_aggs_entry_fn fn, void *ctx);

/* The merge of one key's values: dst op= src. */
void d_agg_merge(uint8_t fn, int64_t *dst, const int64_t *src, uint32_t nb);
/* stddev() of [count, sum, sumsq lo, sumsq hi] under normalization `normal`, as DTrace
 * computes it (integer square root of avg(x^2) - avg(x)^2, 128-bit). */
uint64_t d_agg_stddev(const int64_t *v, uint64_t normal);

#endif
