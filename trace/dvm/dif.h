/*
 * dif.h - D programs in the hypervisor: the verifier and the interpreter of the bytecode of
 * include/hvt_dif.h, and the state a loaded program runs with (buffers, variables,
 * aggregations).
 *
 * Contract.
 * The caller provides:
 *  - the image: in hypervisor memory, 8-byte aligned, that nothing changes once dif_verify()
 *    accepted it (it is used in place: copy it out of any buffer the host or the guest can
 *    write before verifying it);
 *  - memory for the state: dif_state_size() bytes, 64-byte aligned (the per-CPU blocks are
 *    cache-line aligned), zeroed or not (never-freed hypervisor pages are fine: nothing here
 *    frees or grows);
 *  - a struct dif_env: function pointers to read guest memory and capture a stack, and an
 *    optional notification (no hypervisor function is called by name: only memcpy, memmove,
 *    memset, memcmp of the freestanding library, and these);
 *  - at each firing a struct dif_firing: the built-in variables' values, execname, and the
 *    ctx the callbacks receive (e.g. the guest's paging and registers of this exit).
 * Functions:
 *  dif_verify()        checks everything in an image before anything uses it: the layout,
 *                      every instruction, register types along the forward-only control flow,
 *                      tuples, variables, aggregations, probes (the list is at dif_verify.c's
 *                      top). On failure it says which clause, instruction and why.
 *  dif_state_size()    bytes of state a verified image needs for ncpus CPUs (state_size and
 *                      state_init trust the image: verify it first), from its header's
 *                      options (0 = default): bufsize (principal buffer per CPU, default
 *                      DIF_DEF_BUFSIZE), aggsize (aggregation space per CPU, hash table
 *                      included, default DIF_DEF_AGGSIZE), dynvarsize (thread-local and
 *                      associative array space shared by all CPUs, hash table included,
 *                      default DIF_DEF_DYNVARSIZE), nspec speculations of specsize bytes per
 *                      CPU each (default DIF_DEF_SPECSIZE; the verifier keeps nspec <=
 *                      HVT_DIF_NSPEC_MAX and nspec * specsize <= DIF_OPT_MAX), plus scratch
 *                      strings, this-> variables and globals.
 *  dif_state_init()    lays the state out in the caller's memory; DIF_ENOMEM if it is smaller
 *                      than dif_state_size() says (nothing else is touched then).
 *  dif_fire()          runs every clause of a probe id (binary search of the image's sorted
 *                      probe table) in program order on one CPU; this-> variables live across
 *                      those clauses. Each clause that reaches RET having run an ACT leaves one
 *                      HVT_DREC_DATA record in the CPU's principal buffer; a fault leaves an
 *                      HVT_DREC_ERROR record instead (and fires the program's ERROR probe, if
 *                      it has one, after the clauses, for up to DIF_ERROR_FIRES faults, with
 *                      DTrace's arguments but arg2 the clause index: arg1 epid, arg2 clause,
 *                      arg3 pc, arg4 fault, arg5 address; ERROR's own faults only make
 *                      records); a record that does not fit the buffer ends its clause (its
 *                      variable and aggregation updates so far stay) and counts a drop, as
 *                      does an error record that does not fit. BEGIN, END and ERROR are
 *                      probe ids like any other (the header names them): the caller fires
 *                      BEGIN and END itself. A probe whose clauses only aggregate takes a
 *                      lean path (dif_lean.c) with the same results; one whose clauses read
 *                      only arguments, the CPU and execname takes thin firings too (the
 *                      caller fills four fields of struct dif_firing, not all of it).
 *                      A firing that uses up its budget (env budget units: an instruction is
 *                      one, a string op, a guest copy, a tuple key or a stack one per byte; or
 *                      env deadline clock ticks) ends there: its clause leaves one
 *                      HVT_DREC_ERROR record, fault HVT_DIF_F_BUDGET, arg which budget, and
 *                      its later clauses do not run; the ERROR probe then runs on a fresh
 *                      budget of the same size (all its runs of that firing share it).
 *  dif_drain()         copies a CPU's records out (whole records, oldest first), preceded by
 *                      one HVT_DREC_DROPS / DYNDROPS / AGGDROPS / SPECDROPS / SPECBUSY /
 *                      SPECUNAVAIL record for each counter that is not zero (which it then
 *                      resets): no loss is silent.
 *  dif_agg_snapshot()  serializes a CPU's aggregation entries (struct hvt_dagg_rec, key, value
 *                      slots) into a caller buffer, resumable through a cursor; dif_agg_part()
 *                      the same as one message, taking the values out (deltas).
 *  dif_exiting()       whether a clause ran exit() and completed, and the status. From then
 *                      on dif_fire() runs only END's clauses (dtrace-utils' DRAINING): no
 *                      later clause of the exiting firing, no other probe's.
 *  dif_probe_find()    a probe id's entry in a verified image (NULL: not in it).
 * Semantics worth knowing (DTrace's unless said):
 *  - Global scalars have fixed storage in the state (never dropped); integers are atomic
 *    64-bit loads and stores, strings are copied under the variable lock.
 *  - Dynamic variables (self->, associative arrays) share one hash space of fixed-size chunks
 *    (chunk = the largest key + value of the program's such variables): a store that finds no
 *    free chunk counts a dynamic variable drop; storing 0 (or "") deletes the entry; loading
 *    a missing entry gives 0 (or ""). Thread-locals are keyed by (tid, variable).
 *  - Aggregations are per CPU (no lock shared by CPUs on the update path); a key that finds no
 *    room counts an aggregation drop. clear(@a) (AGGCLR) zeroes @a's values on every CPU, each
 *    under that CPU's aggregation lock (min and max go back to INT64_MAX / INT64_MIN); keys stay.
 *    (hvt's compiler does not emit AGGCLR: D's clear() clears the host's sum, as DTrace's does,
 *    so that what was aggregated before it can still be printed.)
 *  - Strings are handles into this CPU's scratch string buffers (HVT_DIF_SCRATCH_STRS of
 *    strsize bytes; a buffer is free again once no register holds it) or into the strtab;
 *    every use checks the handle and the register's run-time type: BADSTR otherwise.
 *  - STACK reserves 16 + imm bytes of the record, then calls env->stack().
 *  - TKSTACK appends a stack key (hvt_dif.h's encoding) of env->kstack's pcs; TUSTACK one of
 *    the user pc and return addresses USTACK would record.
 *  - USTACK records the user pc (env->uregs) and the return addresses of the frame-pointer
 *    chain from the user fp: each frame's 16 bytes [saved fp, return address] read as user
 *    memory; the walk ends at imm frames, a read that faults (no fault: the stack is just
 *    shorter), a zero return address, or a next frame that is not above this one (8-aligned,
 *    below the user top): so it ends on any garbage the guest left.
 *  - Built-in values come from struct dif_firing as the caller filled them: the header's
 *    tsc_khz is the caller's business (e.g. converting timestamps), not the interpreter's.
 *  - Division (and remainder) by zero faults DIVZERO; INT64_MIN / -1 gives INT64_MIN, % -1 0.
 *  - Speculations (dif_spec.c): SPECNEW takes a free one (id 1..nspec) or gives 0 and counts a
 *    failed speculation, "busy" if one was being committed or discarded, else "unavailable".
 *    After SPECULATE id the clause's record goes to this CPU's buffer of that speculation (id
 *    0 or one not active: the record is dropped silently; id > nspec faults ILLOP); a record
 *    that does not fit counts a speculative drop, reported only if the speculation is
 *    committed. COMMIT/DISCARD (id 0 or not active: nothing; id > nspec: ILLOP) end it: every
 *    CPU's records move to that CPU's principal buffer (their tsc the commit's; a record
 *    that does not fit is a drop) or are dropped. The committing CPU does its own part and
 *    that of every CPU whose buffer lock is free; the others do theirs when their firing
 *    ends, at their next firing or at their next drain. The speculation is busy until then,
 *    free afterwards (ids recycle).
 *    COMMIT faults ILLOP after an ACT (it appends to the principal buffer); SPECULATE does after
 *    an ACT or a SPECULATE.
 * Safety promises:
 *  - dif_verify() reads nothing outside [image, image+len) and runs in time linear in len. It
 *    uses a static work area of HVT_DIF_MAX_INSNS words under its own lock (callers on several
 *    CPUs wait for each other).
 *  - For a verified image, dif_fire() runs in time bounded by its budget: at most twice
 *    env budget units (the clauses, then the ERROR probe's), the work between two looks at
 *    the budget being one instruction (O(strsize + HVT_DIF_KEY_MAX + probe stack) plus a hash
 *    chain walk, which is not counted; a stack key's unwind: at most HVT_DIF_STACKKEY_MAX
 *    frames, each a bounded table search, charged per frame asked for); and, with a clock, by the deadline plus one chunk
 *    (DIF_BUDGET_CHUNK units) per budget. The checks cost a counter decrement per
 *    instruction. Reads and writes nothing
 *    outside the image (read only), the state memory and its own stack (about 1 KiB deep),
 *    touches guest memory only through env->read, and never faults the
 *    hypervisor: every register, index, branch target and string handle is checked again at
 *    run time (a failed check is an ILLOP or BADSTR fault, not a wild access).
 *  - No floating point, no 128-bit division.
 * Concurrency: dif_fire() may run on every CPU at once, each with its own cpu index; it is not
 *  reentrant on one CPU. Locks (spinlocks on __atomic builtins, held for bounded work): per CPU,
 *  the buffer lock (held for a whole firing, and by dif_drain; it guards the CPU's principal
 *  and speculative buffers) and the aggregation lock (one update, one clear, one snapshot);
 *  shared, the variable lock (string globals, dynamic variables). Integer globals are plain
 *  atomic 64-bit loads and stores; speculation states change by compare-and-swap. Order:
 *  buffer lock first; the other two are never held together; another CPU's buffer lock is
 *  only ever tried (commit: never waited for), so no two CPUs wait for each other. env->read, env->stack and env->kstack run with this
 *  CPU's buffer lock held (they must not call back into this module); env->notify with no
 *  lock held.
 */
#ifndef HVT_TRACE_DIF_H
#define HVT_TRACE_DIF_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "hvt_dif.h"
#include "kunwind.h"

#define DIF_OK        0
#define DIF_EINVAL  (-1)        /* a malformed image or argument */
#define DIF_ENOMEM  (-2)        /* the memory given is smaller than dif_state_size() */
#define DIF_ENOPROBE (-3)       /* dif_fire: the probe id is not in the program */
#define DIF_ESMALL  (-4)        /* the caller's buffer cannot hold the next record */
#define DIF_ETHIN   (-5)        /* dif_fire: a thin firing of a probe that reads more */

#define DIF_DEF_BUFSIZE    (256u << 10)
#define DIF_DEF_AGGSIZE    (256u << 10)
#define DIF_DEF_DYNVARSIZE (1u << 20)
#define DIF_OPT_MAX        (64u << 20)   /* largest bufsize, aggsize, dynvarsize accepted; and
                                            the most bytes of the scalar arrays (globals) */
#define DIF_LOCALS_MAX     (1u << 20)    /* most bytes of this-> scalar arrays (per CPU) */
#define DIF_DEF_SPECSIZE   (32u << 10)   /* DTrace's default specsize */
#define DIF_ERROR_FIRES    4              /* faults of one firing that fire the ERROR probe */
#define DIF_DEF_BUDGET     (256u << 10)   /* units of one firing (struct dif_env budget) */
#define DIF_BUDGET_CHUNK   4096u          /* units between two looks at the budget and clock */

/* Why dif_verify() refused an image: clause and insn (index in the clause) or -1; item is the
 * var, agg or probe index a section error is about (else -1); reason a static string. */
struct dif_verr {
    int clause, insn, item;
    const char *reason;
};

/* What the hypervisor lends the interpreter. ctx is the firing's (struct dif_firing). A NULL
 * read makes every guest access fault. */
struct dif_env {
    /* Copy len bytes of guest virtual memory at va (user: walk the current process's tables,
     * else the kernel's); returns bytes copied, fewer when a page is not mapped (a fault). */
    size_t (*read)(void *ctx, uint64_t va, void *buf, size_t len, int user);
    /* The kernel stack of the firing: up to max bytes from its stack pointer into buf; *rsp =
     * that stack pointer; returns bytes copied. NULL: stacks are empty. */
    size_t (*stack)(void *ctx, void *buf, size_t max, uint64_t *rsp);
    /* Optional: CPU cpu's buffer passed half full or dropped a record (once until its next
     * drain): a hint to drain soon. Called with no lock held. */
    void (*notify)(void *env_ctx, unsigned cpu);
    /* Optional: step() / unstep() (HVT_DIF_TRACER_*), ctx the firing's; called with this
     * CPU's buffer lock held: it may only post a request. False: the request is refused (a
     * step() with every thread slot of the tracer taken): the firing gets an error record,
     * fault HVT_DIF_F_STEPREFUSED. NULL: they do nothing. */
    bool (*tracer)(void *ctx, int what);
    /* Optional: the firing thread's user registers, where a user stack walk starts: *pc its
     * user RIP, *fp its user RBP (the CPU's own when the probe fired in user mode, those the
     * kernel saved at its entry otherwise); false when there are none (a kernel thread, an
     * interrupt). NULL: user stacks are empty. Frames are read with read(..., user 1). */
    bool (*uregs)(void *ctx, uint64_t *pc, uint64_t *fp);
    void *env_ctx;
    /* A secret the loader draws afresh for every load (hardware randomness): every hash of a
     * key the program's input controls (aggregation keys, associative arrays, thread-locals)
     * is keyed with it, so whoever feeds keys to a program cannot pick ones that share a
     * chain. */
    uint64_t hash_key;
    /* The per-firing budget (a firing runs in a VM exit, with its CPU's buffer lock held):
     * budget units (0: DIF_DEF_BUDGET), one per instruction of each clause run (charged as
     * the clause starts: branches only go forward) plus one per byte a string op,
     * a guest copy or a key walks; and, with clock, at most deadline ticks of it (0: none)
     * from the first check (after DIF_BUDGET_CHUNK units: a short firing never reads it). */
    uint64_t (*clock)(void *env_ctx);
    uint64_t budget;
    uint64_t deadline;
    /* Optional: the kernel stack of the firing as return addresses (TKSTACK, a stack() key):
     * at most max pcs, leaf first; *exact bit i: pcs[i] is an exact pc; *from_user: the
     * unwind reached the registers saved at an entry from user mode. Returns the pcs written
     * (0: none, e.g. the probe fired in user mode). NULL: kernel stack keys are empty. */
    unsigned (*kstack)(void *ctx, uint64_t *pcs, unsigned max, uint32_t *exact, bool *from_user);
};

/* The image's kernel ORC descriptor as the unwinder's tables, every address moved by slide
 * (the verifier checks it with slide 0; the runtime checks it again with the real one). */
static inline void dif_korc_tables(const struct hvt_dif_korc *k, uint64_t slide,
                                   struct kunwind_tables *t)
{
    t->ip_table = k->ip_table + slide;
    t->entries = k->entries + slide;
    t->count = k->count;
    t->layout = k->layout;
    t->lookup = k->lookup ? k->lookup + slide : 0;
    t->lookup_words = k->lookup_words;
    t->lookup_start = k->lookup_start + slide;
    t->lookup_end = k->lookup_end + slide;
    t->nranges = k->nranges;
    for (unsigned i = 0; i < KUNWIND_RANGES; i++) {
        t->range_start[i] = i < k->nranges ? k->range[i][0] + slide : 0;
        t->range_end[i] = i < k->nranges ? k->range[i][1] + slide : 0;
    }
}

/* One firing. v[] is indexed by HVT_DIF_V_* for the integer built-ins (ARG0..5, PID, TID,
 * TIMESTAMP, WALLTIMESTAMP, CURTHREAD, ERRNO, REGS_PC, REGS_SP; the verifier refuses ARG6..9,
 * PPID, UID, VTIMESTAMP and STACKDEPTH, so they need no value); CPU, EPID (DTrace's enabled
 * probe id: clause by clause, each clause's probes by ascending id, from 1) and ID (the probe
 * id; BEGIN, END and ERROR as DTrace's 1, 2 and 3) are the interpreter's own,
 * PROBEPROV/MOD/FUNC/NAME come from the probe table. */
struct dif_firing {
    void *ctx;                      /* handed to env->read and env->stack */
    uint64_t tsc;                   /* the records' tsc */
    uint64_t v[HVT_DIF_V__COUNT];
    const uint64_t *args;           /* ARG0..5 (6 values) if non-NULL, else v[ARG0..5] */
    const char *execname;           /* NULL: "" */
    size_t execname_max;            /* bytes of execname to look at for its NUL (e.g. 16) */
    /* Non-NULL: time the clauses by phase, adding TSC ticks to cost[HVT_PH_PREDICATE ..
     * HVT_PH_RECORD] (include/hvt_probe.h; the caller keeps the rest of the firing's time). */
    uint64_t *cost;
    /* A thin firing: only args (non-NULL), execname, execname_max and cost are set. dif_fire
     * runs it only for a probe whose clauses read nothing else (a lean probe reading
     * arguments, the CPU, execname and constants: dif_thin() says whether every probe of the
     * program is one), else runs nothing and returns DIF_ETHIN: fill in the rest, fire again. */
    bool thin;
};

struct dif_state;

int   dif_verify(const void *image, size_t len, struct dif_verr *err);
size_t dif_state_size(const void *image, unsigned ncpus);
int   dif_state_init(struct dif_state **out, void *mem, size_t mem_len, const void *image,
                     unsigned ncpus, const struct dif_env *env);
/* Clauses run (>= 0), DIF_ENOPROBE, DIF_ETHIN (f->thin: nothing run), or DIF_EINVAL (cpu out
 * of range). */
int   dif_fire(struct dif_state *st, unsigned cpu, uint32_t probe_id, const struct dif_firing *f);
/* Every probe of the program but BEGIN, END and ERROR takes thin firings (struct dif_firing). */
bool  dif_thin(const struct dif_state *st);
/* Bytes written to out (0: nothing pending), or DIF_EINVAL. Records that do not fit stay for
 * the next call. */
long  dif_drain(struct dif_state *st, unsigned cpu, void *out, size_t len);
/* Start with *cursor = 0 and call again while it returns > 0 (bytes written); 0: every entry
 * is out; DIF_ESMALL: the next entry alone does not fit len (the cursor stays); DIF_EINVAL. */
long  dif_agg_snapshot(struct dif_state *st, unsigned cpu, void *out, size_t len,
                       uint32_t *cursor);
/* One HVT_MSG_D_AGG payload of generation gen: struct hvt_dagg_part then what
 * dif_agg_snapshot() gives, except that every entry copied is reset (count 0, min INT64_MAX,
 * ...) in the same lock hold: the parts are the deltas since the previous part, which the host
 * adds up; the part that finds nothing left (or a cursor that cannot go on) is empty and
 * flagged HVT_DAGG_LAST. Bytes written (>= the header), or DIF_ESMALL when len
 * cannot hold the header. */
long  dif_agg_part(struct dif_state *st, unsigned cpu, uint32_t gen, void *out, size_t len,
                   uint32_t *cursor);
bool  dif_exiting(const struct dif_state *st, int64_t *status);
const struct hvt_dif_probe *dif_probe_find(const void *image, uint32_t id);

#endif
