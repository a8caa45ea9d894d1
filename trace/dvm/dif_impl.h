/*
 * dif_impl.h - the D interpreter's internals, shared by trace/dif_*.c only (dif.h is the
 * contract). The state lives in the caller's memory, laid out by dif_state.c:
 *   struct dif_state | var_off[nvars] | dif_cpu[ncpus] | globals | dynvar hash + chunks |
 *   per CPU: principal buffer, aggregation hash + entries, scratch strings, this-> values and
 *   their generations, speculation parts + speculative buffers
 *   then the speculations (dif_spec[nspec])
 * each part 64-byte aligned (CPUs' data on separate cache lines).
 */
#ifndef HVT_DIF_IMPL_H
#define HVT_DIF_IMPL_H
#include "dif.h"
#include "hv_api.h"

/* A spinlock on __atomic builtins: the module takes no lock from the caller. */
struct dif_lock { uint32_t v; };
static inline void dif_lock(struct dif_lock *l)
{
    while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&l->v, __ATOMIC_RELAXED))
            __asm__ volatile("pause");
}
static inline void dif_unlock(struct dif_lock *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELEASE); }
static inline bool dif_trylock(struct dif_lock *l)
{
    return !__atomic_load_n(&l->v, __ATOMIC_RELAXED) &&
           !__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE);
}

/* String handles: a tag no small integer has, the kind, the index. */
#define DIF_H_TAG      0xd1f5000000000000ull
#define DIF_H_TAGMASK  0xffff000000000000ull
#define DIF_H_SCRATCH  (1ull << 40)
#define DIF_H_STRTAB   (2ull << 40)
#define DIF_H_EXEC     (3ull << 40)     /* the firing's execname, read in place */
#define DIF_H_KINDMASK (0xffull << 40)
#define DIF_H_IDXMASK  0xffffffffull

/* Run-time register types (defense in depth: the verifier already proved them). */
#define DIF_RT_NONE 0
#define DIF_RT_INT  HVT_DIF_T_INT
#define DIF_RT_STR  HVT_DIF_T_STR

#define DIF_AGG_LAST 8              /* dif_cpu.agg_last's slots (a power of two) */
struct dif_cpu {
    struct dif_lock buf_lock;       /* principal buffer, scratch, this->, tuple */
    struct dif_lock agg_lock;       /* this CPU's aggregations */
    uint8_t *buf;
    uint32_t buf_size, buf_head, buf_tail;
    uint32_t notified;              /* notify() called since the last drain */
    uint64_t drops;                 /* under buf_lock */
    uint64_t aggdrops;              /* atomic */
    /* aggregations: hash heads (entry offset + 1), entries bump-allocated, never freed */
    uint32_t *agg_hash;
    uint32_t agg_nhash;             /* power of two */
    uint8_t *agg;
    uint32_t agg_size, agg_used;
    /* the entry each aggregation (by index modulo DIF_AGG_LAST) last updated here, offset + 1
     * (0: none): a probe's firings mostly repeat their key, so the next update compares it
     * there before hashing it (entries never move or go during a load) */
    uint32_t agg_last[DIF_AGG_LAST];
    /* scratch strings: DIF_SCRATCH_STRS buffers of strsize bytes */
    char *scratch;
    uint16_t scratch_len[HVT_DIF_SCRATCH_STRS];
    /* this-> variables: a value is set for this firing iff its generation is the current */
    uint8_t *locals;
    uint32_t *local_gen;
    uint32_t gen;
    /* the tuple being built (TPUSH): encoded keys */
    uint32_t tuple_len, tuple_n;
    uint8_t tuple_types[HVT_DIF_TUPLE_MAX];
    uint64_t tuple[HVT_DIF_KEY_MAX / 8];
    const struct hvt_dif_probe *last_probe; /* the last one fired here (a probe fires in runs) */
    uint8_t last_lean;              /* st->lean of last_probe */
    /* this CPU's part of each speculation (nspec of them, under buf_lock) and the speculative
       drops of committed speculations not reported yet (under buf_lock) */
    struct dif_specbuf *spec;
    uint64_t specdrops;
} __attribute__((aligned(64)));

/*
 * Speculations (DTrace's): one state word per speculation, gen << 32 | DIF_SPEC_*, changed by
 * compare-and-swap only, so an id's activations can be told apart. FREE -> ACTIVE
 * (speculation()), ACTIVE -> ENDING (commit() or discard() won the race: it sets left and tsc)
 * -> COMMITTING / DISCARDING, which every CPU then "cleans" under its own buffer lock (its part
 * of the records moved to its principal buffer, or dropped); the last one makes it FREE.
 * speculation() counts "busy" when it finds none FREE but one ENDING, COMMITTING or
 * DISCARDING, "unavailable" otherwise.
 */
#define DIF_SPEC_FREE       0u
#define DIF_SPEC_ACTIVE     1u
#define DIF_SPEC_ENDING     2u
#define DIF_SPEC_COMMITTING 3u
#define DIF_SPEC_DISCARDING 4u
struct dif_spec {
    uint64_t sw;                    /* gen << 32 | state (atomic) */
    uint32_t left;                  /* CPUs that have not cleaned it yet (atomic) */
    uint32_t pad;
    uint64_t tsc;                   /* commit()'s firing: the committed records' tsc */
};
static inline uint32_t dif_spec_state(uint64_t sw) { return (uint32_t)sw; }
static inline uint32_t dif_spec_gen(uint64_t sw) { return (uint32_t)(sw >> 32); }

/* One speculation's records on one CPU: buf[0 .. tail), appended by that CPU's speculated
 * clauses, moved or dropped when that CPU cleans the speculation. */
struct dif_specbuf {
    uint8_t *buf;
    uint32_t tail;
    uint32_t cleaned;               /* the last activation (gen) this CPU cleaned */
    uint64_t drops;                 /* records of this activation that did not fit */
};

/* A lean clause's instruction decoded for its run (dif_lean.c; dif_lean.h runs them): what
 * the instruction leaves to do at a firing, the rest decided at load. */
enum dif_lean_kind {
    DIF_LK_END,                     /* RET */
    DIF_LK_LDI,                     /* reg[rd] = x */
    DIF_LK_ARG,                     /* reg[rd] = argument x (0..5) */
    DIF_LK_VAR,                     /* reg[rd] = the firing's v[x] */
    DIF_LK_CPU,                     /* reg[rd] = the firing CPU */
    DIF_LK_TCLR,                    /* the key tuple emptied */
    DIF_LK_TPUSH,                   /* reg[ra] appended to it */
    DIF_LK_TPUSH_EXEC,              /* execname appended */
    DIF_LK_TKSTACK,                 /* a kernel stack of x frames appended */
    DIF_LK_COUNT,                   /* count() of aggregation x with the tuple as its key */
    DIF_LK_QUANT,                   /* quantize(reg[ra]) */
    DIF_LK_QUANTW,                  /* quantize(reg[ra], reg[rb]) */
    DIF_LK_AGG,                     /* the other functions (dif_agg_apply): value reg[ra] */
    DIF_LK_AGGW,                    /* the same, weight reg[rb] */
    DIF_LK__COUNT
};
struct dif_lean_op {
    uint8_t k;                      /* enum dif_lean_kind */
    uint8_t rd, ra, rb;             /* registers, < HVT_DIF_NREGS */
    int32_t x;
};

struct dif_state {
    const struct hvt_dif_hdr *hdr;
    const struct hvt_dif_clause *clauses;
    const struct hvt_dif_insn *insns;
    const uint64_t *consts;
    const struct hvt_dif_var *vars;
    const struct hvt_dif_agg *aggs;
    const struct hvt_dif_probe *probes;
    const uint16_t *probe_clauses;
    const uint32_t *epids;          /* DTrace's enabled probe id of each probe_clauses[] entry */
    const char *strtab;
    uint32_t strsize;
    unsigned ncpus;
    struct dif_env env;
    struct dif_cpu *cpus;
    struct dif_varpos { uint32_t off, idx; } *varpos; /* GLOBAL: offset in globals; LOCAL:
                                       offset in locals, index in local_gen */
    uint8_t *globals;
    uint32_t nlocals;
    struct dif_lock var_lock;       /* string globals, dynamic variables */
    /* dynamic variables: hash heads (chunk index + 1), chunks, a free list */
    uint32_t *dyn_hash;
    uint32_t dyn_nhash;             /* power of two (0: the program has none) */
    uint8_t *dyn;
    uint32_t dyn_chunk, dyn_nchunks, dyn_next, dyn_free;
    uint64_t dyndrops;              /* atomic */
    /* speculations */
    struct dif_spec *specs;
    uint32_t nspec, specsize;       /* specsize: bytes of one speculative buffer (8-multiple) */
    uint32_t spec_pending;          /* speculations COMMITTING or DISCARDING (atomic) */
    uint64_t specbusy, specunavail; /* failed speculation()s (atomic) */
    uint32_t exited;
    int64_t exit_status;
    const uint8_t *lean;            /* per probe: its clauses take dif_lean.c's path */
    const struct dif_lean_op *lean_ops; /* a lean clause's ops at its first instruction's index */
    bool thin;                      /* dif_thin() */
};

/* A dynamic variable chunk's header; key (8-byte multiple) then value follow. */
struct dif_dyn_ent {
    uint32_t next;                  /* chunk index + 1 in its chain / the free list */
    uint32_t hash;
    uint16_t var;
    uint8_t kind;                   /* HVT_DIF_VK_THREAD or _ASSOC */
    uint8_t pad;
    uint16_t key_len, val_len;      /* val_len: 8 for an integer, the string's bytes */
};
#define DIF_DYN_HDR 16
_Static_assert(sizeof(struct dif_dyn_ent) == DIF_DYN_HDR, "dyn header");

/* An aggregation entry's header; key (8-byte multiple) then nbuckets int64 follow. */
struct dif_agg_ent {
    uint32_t next;                  /* entry offset + 1 in its chain */
    uint32_t hash;
    uint16_t agg, key_len;
    uint32_t nbuckets;
};
#define DIF_AGG_HDR 16
_Static_assert(sizeof(struct dif_agg_ent) == DIF_AGG_HDR, "agg header");

static inline uint32_t dif_round8(uint32_t n) { return (n + 7) & ~7u; }

#define DIF_QUANT_ZERO 63               /* quantize's bucket of 0 */
static inline uint32_t dif_quantize_bucket(int64_t v)
{
    if (v == 0)
        return DIF_QUANT_ZERO;
    if (v > 0) {
        unsigned k = 63 - (unsigned)__builtin_clzll((uint64_t)v);    /* floor(log2 v) */
        return k >= 62 ? HVT_DIF_QUANT_BUCKETS - 1 : DIF_QUANT_ZERO + 1 + k;
    }
    unsigned k = 63 - (unsigned)__builtin_clzll(-(uint64_t)v);        /* of |v|, 2^63 too */
    return k >= 62 ? 0 : DIF_QUANT_ZERO - 1 - k;
}

/* The values of the entry aggregation agg last updated on this CPU if its key is key (len
 * bytes, a multiple of 8), else NULL: compared before any hashing (dif_agg_apply does the
 * rest). Only the firing CPU itself calls it: agg_last changes only in its firings, and an
 * entry's header and key never change once made (clear and snapshots reset values only). */
static inline __attribute__((always_inline))
int64_t *dif_agg_last_vals(const struct dif_cpu *c, uint32_t agg,
                                         const uint64_t *key, uint32_t len)
{
    uint32_t off = c->agg_last[agg & (DIF_AGG_LAST - 1)];
    if (!off)
        return NULL;
    const struct dif_agg_ent *e = (const struct dif_agg_ent *)(c->agg + off - 1);
    if (e->agg != agg || e->key_len != len)
        return NULL;
    const uint64_t *k = (const uint64_t *)(e + 1);
    for (uint32_t i = 0; i < len / 8; i++)
        if (k[i] != key[i])
            return NULL;
    return (int64_t *)(k + len / 8);
}

/* Hash of a key of 8-byte words (keys are encoded 8-aligned). */
static inline uint32_t dif_hash(uint64_t seed, const uint64_t *key, uint32_t len)
{
    uint64_t h = (seed + 1) * 0x9e3779b97f4a7c15ull;
    for (uint32_t i = 0; i < len / 8; i++) {
        h = (h ^ key[i]) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return (uint32_t)(h ^ (h >> 29));
}

/* The hash of a program-controlled key in this load's state: keyed with the load's secret
 * (dif_env.hash_key), then mixed once more so that the bucket bits depend on all of it. */
static inline uint32_t dif_key_hash(const struct dif_state *st, uint64_t id, const uint64_t *key, uint32_t len)
{
    uint64_t k = st->env.hash_key;
    uint64_t h = dif_hash(k ^ id, key, len) ^ (k >> 32);
    h = (h ^ k) * 0xc4ceb9fe1a85ec53ull;
    return (uint32_t)(h >> 32);
}

/* Two encoded keys of len bytes (a multiple of 8) are equal: word compares, no call (a
 * firing compares one key per chain entry it passes). */
static inline bool dif_key_eq(const void *a, const void *b, uint32_t len)
{
    const uint8_t *x = a, *y = b;
    for (uint32_t i = 0; i + 8 <= len; i += 8) {
        uint64_t u, v;
        __builtin_memcpy(&u, x + i, 8);
        __builtin_memcpy(&v, y + i, 8);
        if (u != v)
            return false;
    }
    for (uint32_t i = len & ~7u; i < len; i++)
        if (x[i] != y[i])
            return false;
    return true;
}

/* Bytes before the first NUL of s, at most max; whole words first (s is readable up to max). */
static inline uint32_t dif_strnlen_fast(const char *s, uint32_t max)
{
    uint32_t n = 0;
    for (; n + 8 <= max; n += 8) {
        uint64_t w;
        __builtin_memcpy(&w, s + n, 8);
        uint64_t z = (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull;
        if (z)                          /* the lowest flagged byte is the first zero */
            return n + (uint32_t)__builtin_ctzll(z) / 8;
    }
    while (n < max && s[n])
        n++;
    return n;
}

/* One clause being run (dif_vm.c, dif_str.c). */
struct dif_run {
    struct dif_state *st;
    struct dif_cpu *c;
    const struct dif_firing *f;
    const uint64_t *args;           /* ARG0..9: the firing's, or the ERROR probe's */
    const struct hvt_dif_probe *probe;
    unsigned cpu;
    uint32_t clause, epid, pc;
    uint32_t rec_len;               /* bytes of this clause's record so far (0: no ACT yet) */
    uint32_t fault;                 /* HVT_DIF_F_* or 0 */
    union {                         /* (cleared and tested as one word) */
        struct {
            bool dropped;           /* the record did not fit the buffer */
            bool exit_pending;      /* exit() ran: takes effect if the clause completes */
            bool spec_void;         /* speculate() on no active speculation: the record is
                                       dropped silently at the end (DTrace's) */
        };
        uint32_t unusual;
    };
    uint32_t spec, spec_gen;        /* speculate()'s id (0: none) and its activation */
    int64_t exit_status;
    uint64_t fault_addr;
    uint64_t reg[HVT_DIF_NREGS];
    uint8_t rt[HVT_DIF_NREGS];      /* DIF_RT_* of each register */
    uint32_t given;                 /* scratch slots handed out in this clause (bit per slot) */
    /* The firing's budget (dif.h), kept across its clauses: left counts down by each clause's
     * length as it starts and per byte (dif_charge); below zero, dif_budget_more() looks at the total and the
     * clock. */
    int64_t left;                   /* units until the next look */
    uint64_t grant;                 /* units the last look gave */
    uint64_t spent;                 /* units used before the last look */
    uint64_t budget;                /* units of this firing (or of its ERROR runs) */
    uint64_t t0;                    /* the clock at the first look */
    bool clock_started;
    bool over;                      /* the budget ran out: the firing ends */
    bool exec16;                    /* execname has 16 bytes to read and fits a string value:
                                       a key made of it takes dif_vm.c's word path */
    /* Timing by phase (f->cost non-NULL): the phase being timed, since when; the clause's
     * predicate ends before insn pred_end (0: it has none). */
    unsigned ph;
    uint64_t ph_t;
    uint32_t pred_end;
};

/* Work proportional to n bytes (a string, a copy, a key): paid from the budget, looked at
 * by the next instruction. */
/* dif_vm.c: the budget's slow path; false (a BUDGET fault set) when it ran out. */
bool dif_budget_more(struct dif_run *r);
/* Charge n units (bytes a string op, a copy or a key walks); false (a BUDGET fault set, the
 * op must fail) when the budget ran out. */
static inline bool dif_charge(struct dif_run *r, uint64_t n)
{
    r->left -= (int64_t)n;
    return __builtin_expect(r->left >= 0, 1) || dif_budget_more(r);
}

static inline bool dif_fault(struct dif_run *r, uint32_t code, uint64_t addr)
{
    r->fault = code;
    r->fault_addr = addr;
    return false;
}

/* dif_str.c: string values. Each returns false after setting a fault. */
bool dif_str_get(struct dif_run *r, unsigned reg, const char **p, uint32_t *len);
/* A scratch buffer no register holds, its index in *slot; its bytes (strsize) returned. */
char *dif_scratch_alloc(struct dif_run *r, unsigned *slot);
/* rd = the scratch string just written to slot, len bytes (NUL added here). */
void dif_str_set(struct dif_run *r, unsigned rd, unsigned slot, uint32_t len);
void dif_str_set_strtab(struct dif_run *r, unsigned rd, uint32_t off);
bool dif_str_guest(struct dif_run *r, unsigned rd, uint64_t va, int user);
/* STRGR: the bytes [va, end) (at most strsize-1), NULs but a trailing one made spaces */
bool dif_str_guest_range(struct dif_run *r, unsigned rd, uint64_t va, uint64_t end, int user);
void dif_str_set_exec(struct dif_run *r, unsigned rd);
bool dif_str_join(struct dif_run *r, unsigned rd, unsigned ra, unsigned rb);
bool dif_str_basename(struct dif_run *r, unsigned rd, unsigned ra);
bool dif_str_cmp(struct dif_run *r, unsigned rd, unsigned ra, unsigned rb);
static inline uint32_t dif_slot_stride(const struct dif_state *st) { return dif_round8(st->strsize); }

/* dif_state.c: binary search of a probe table sorted by id */
const struct hvt_dif_probe *dif_probe_lookup(const struct hvt_dif_probe *p, uint32_t n,
                                             uint32_t id);

/* dif_agg.c */
/* Value slots of an aggregation as its function and parameters require; 0 and *why set
 * when the parameters are invalid. */
uint32_t dif_agg_nbuckets(const struct hvt_dif_agg *a, const char **why);
uint32_t dif_llquantize_bucket(int64_t factor, int64_t low, int64_t high, int64_t nsteps,
                               int64_t v);
/* w: the quantizations' bucket increment (AGGW's weight, else 1) */
void dif_agg_apply(struct dif_state *st, struct dif_cpu *c, uint32_t agg, const uint64_t *key,
                   uint32_t key_len, int64_t v, int64_t w);
void dif_agg_clear(struct dif_state *st, uint32_t agg);
size_t dif_agg_cpu_size(uint32_t aggsize, uint32_t *nhash);

/* dif_spec.c: speculations. Each is called with this CPU's buffer lock held. */
void dif_spec_new(struct dif_run *r, unsigned rd);
bool dif_spec_speculate(struct dif_run *r, uint64_t id);
bool dif_spec_end(struct dif_run *r, uint64_t id, bool commit);
/* The speculated clause's buffer, or NULL when its speculation was committed or discarded on
 * this CPU while the clause ran (its record is then dropped silently). */
struct dif_specbuf *dif_spec_live(struct dif_run *r);
/* This CPU's part of every speculation waiting to be committed or discarded. */
void dif_spec_clean_cpu(struct dif_state *st, unsigned cpu);
/* Where this clause's record is built: its base, tail and size */
static inline uint8_t *dif_spec_out(struct dif_run *r, uint32_t *tail, uint32_t *size)
{
    struct dif_specbuf *b = &r->c->spec[r->spec - 1];
    *tail = b->tail;
    *size = r->st->specsize;
    return b->buf;
}

/* dif_dyn.c: under st->var_lock, taken inside. Load: copies the value into val (at most
 * max bytes), returns its length (0: no entry). Store: len 0 deletes; false: no room. */
uint32_t dif_dyn_load(struct dif_state *st, uint8_t kind, uint16_t var, const uint64_t *key,
                      uint32_t key_len, void *val, uint32_t max);
bool dif_dyn_store(struct dif_state *st, uint8_t kind, uint16_t var, const uint64_t *key,
                   uint32_t key_len, const void *val, uint32_t len);
/* Chunk size the image's dynamic variables need (0: none) */
uint32_t dif_dyn_chunk_size(const struct hvt_dif_hdr *h, const struct hvt_dif_var *vars);
/* A GLOBAL or LOCAL variable's bytes of storage: one slot, or nelem of a scalar array */
static inline uint64_t dif_var_bytes(const struct hvt_dif_var *v, uint32_t strsize)
{
    uint64_t slot = v->type == HVT_DIF_T_STR ? dif_round8(strsize) : 8;
    return v->nelem ? slot * v->nelem : slot;
}

/* An execname key at k (k[0..2] written) from the 16 bytes at e: the length, the bytes before
 * the first NUL, zeros (the string key encoding: u16 length, bytes, zeros to a multiple of 8);
 * returns the length. Two word loads, no copy: the lowest flagged byte of z is the first zero,
 * and the mask keeps the bytes below it. */
static inline uint32_t dif_exec_key(const char *e, uint64_t *k)
{
    uint64_t w0, w1;
    __builtin_memcpy(&w0, e, 8);
    __builtin_memcpy(&w1, e + 8, 8);
    uint64_t z0 = (w0 - 0x0101010101010101ull) & ~w0 & 0x8080808080808080ull;
    uint64_t z1 = (w1 - 0x0101010101010101ull) & ~w1 & 0x8080808080808080ull;
    uint32_t len = 16;
    if (z0) {
        len = (uint32_t)__builtin_ctzll(z0) / 8;
        w0 &= ((z0 & -z0) >> 7) - 1;
        w1 = 0;
    } else if (z1) {
        len = 8 + (uint32_t)__builtin_ctzll(z1) / 8;
        w1 &= ((z1 & -z1) >> 7) - 1;
    }
    k[0] = len | w0 << 16;
    k[1] = w0 >> 48 | w1 << 16;
    k[2] = w1 >> 48;
    return len;
}

/* AGG / AGGW of aggregation idx (a) with the CPU's tuple as its key: count() and quantize()
 * with the key this CPU last updated in place, the rest by dif_agg_apply. */
static inline __attribute__((always_inline))
void dif_agg_update_fast(struct dif_state *st, struct dif_cpu *c, uint32_t idx,
                                       const struct hvt_dif_agg *a, int64_t v, int64_t w)
{
    int64_t *b;
    if ((a->fn == HVT_DIF_AGG_COUNT || a->fn == HVT_DIF_AGG_QUANTIZE) &&
        (b = dif_agg_last_vals(c, idx, c->tuple, c->tuple_len))) {
        bool count = a->fn == HVT_DIF_AGG_COUNT;
        uint32_t i = count ? 0 : dif_quantize_bucket(v);
        if (i < a->nbuckets) {
            dif_lock(&c->agg_lock);  /* a snapshot on another CPU takes values out */
            b[i] = (int64_t)((uint64_t)b[i] + (count ? 1 : (uint64_t)w));
            dif_unlock(&c->agg_lock);
        }
        return;
    }
    dif_agg_apply(st, c, idx, c->tuple, c->tuple_len, v, w);
}

/* dif_lean.c: the lean path of a firing (see there): once per load, lean[i] for probes[i]
 * (nprobes bytes of state) and each lean clause's ops (ops: one per instruction of the image,
 * a clause's at the index of its first); dif_lean.h runs them. */
void dif_lean_classify(struct dif_state *st, uint8_t *lean, struct dif_lean_op *ops);
#define DIF_LEAN      1             /* lean[i]: the probe's clauses are lean */
#define DIF_LEAN_EXEC 2             /* ... and read execname (the firing's 16-byte name) */
#define DIF_LEAN_THIN 4             /* ... and read no v[] and no stack: a thin firing will do */
/* Budget units of a stack key's kernel frame (a few dozen guest loads: the table search) */
#define DIF_KFRAME_UNITS 64

#endif
