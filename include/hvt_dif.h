/*
 * hvt_dif.h - the D intermediate format: the bytecode the host's D compiler (host-tools/d)
 * emits and the hypervisor verifies and runs at every firing of a probe (trace/dvm/dif_*.c), and
 * the records those programs produce. One definition for both sides.
 *
 * The model is DTrace's: a program is a list of clauses (one per `probe-descriptions
 * /predicate/ { actions }` after the host has expanded the descriptions); each armed probe
 * names the clauses it runs, in program order. A clause is one straight-line function with
 * forward branches only, so its run time is bounded by its length (and a whole firing by the
 * interpreter's budget: HVT_DIF_F_BUDGET). It runs on the CPU that
 * fired, in the VM exit, and either ends (RET) or faults (a guest load the page tables do not
 * map, a division by zero, a string or tuple too long): a fault ends that clause, throws away
 * what it recorded and makes an HVT_DREC_ERROR record instead; the guest never notices.
 *
 * Values: 16 registers of 64 bits. A register holds an integer or a string; strings are
 * handles to NUL-terminated buffers of at most strsize bytes in the executing CPU's scratch
 * (string constants, copyinstr, execname, string variables). The verifier tracks which
 * registers hold what, so an integer is never used as a string; the interpreter checks every
 * handle again before it uses it.
 *
 * Output: a clause's data-recording actions append to one record in its CPU's principal
 * buffer; the record is kept only if the clause reaches RET having recorded something. Each
 * action starts with ACT <action index in the clause> so the host can decode the values that
 * follow with its own description of the action (format string, types: never sent to the
 * hypervisor). Values: an integer is 8 bytes, a string is u16 length + bytes (no NUL), then
 * zeros to a multiple of 8.
 *
 * A loaded program (the image the host sends with HVT_CTL_D_LOAD) is:
 *   struct hvt_dif_hdr
 *   struct hvt_dif_clause[nclauses]    each: its code's range in insns[]
 *   struct hvt_dif_insn[ninsns]
 *   uint64_t consts[nconsts]           LDC's 64-bit constants
 *   struct hvt_dif_var[nvars]          globals, thread-locals, associative arrays
 *   struct hvt_dif_agg[naggs]          aggregations
 *   struct hvt_dif_probe[nprobes]      for each probe id the program is armed on: its clauses
 *   uint16_t probe_clauses[nprobe_clauses]
 *   char strtab[strtab_len]            string constants and probe names, NUL-terminated
 * every section 8-byte aligned, offsets in the header; probes[] sorted by id, ascending, no id
 * twice (the hypervisor finds a firing probe's entry by binary search). The hypervisor checks
 * all of it (dif_verify in trace/dvm/dif_verify.c) before it arms anything.
 */
#ifndef HVT_DIF_H
#define HVT_DIF_H
#include <stdint.h>

#define HVT_DIF_MAGIC      0x31464944u   /* "DIF1" */
#define HVT_DIF_NREGS      16
#define HVT_DIF_MAX_INSNS  8192          /* per clause */
#define HVT_DIF_MAX_IMAGE  (4u << 20)   /* a whole image: room for 65536 probes (28 bytes each,
                                            2 per clause entry, their names) */
#define HVT_DIF_STRSIZE_MAX 1024         /* largest strsize the hypervisor accepts */
#define HVT_DIF_TUPLE_MAX  8             /* keys in a tuple (associative array, aggregation) */
#define HVT_DIF_KEY_MAX    512           /* bytes of an encoded tuple */
#define HVT_DIF_SCRATCH_STRS 8           /* string buffers a clause can hold at once */
#define HVT_DIF_NSPEC_MAX  1024          /* most speculations (nspec) the hypervisor accepts */
#define HVT_DIF_USTACK_MAX 1024          /* most frames of one ustack() */
#define HVT_DIF_ARRAY_MAX  (1u << 20)    /* most elements of one scalar array */
#define HVT_DIF_STACKKEY_MAX 48          /* most frames of a stack key (TKSTACK, TUSTACK) */

struct hvt_dif_insn {
    uint8_t op;                  /* HVT_DIF_OP_* */
    uint8_t rd, ra, rb;          /* registers 0..15 (unused ones 0) */
    int32_t imm;                 /* immediate, branch target (insn index in the clause), id */
};
_Static_assert(sizeof(struct hvt_dif_insn) == 8, "wire size");

enum hvt_dif_op {
    HVT_DIF_OP_NOP = 0,
    HVT_DIF_OP_RET,              /* end the clause; keep its record if it made one */
    HVT_DIF_OP_LDI,              /* rd = (int64) imm */
    HVT_DIF_OP_LDC,              /* rd = consts[imm] */
    HVT_DIF_OP_MOV,              /* rd = ra (integer or string) */
    /* integer arithmetic: rd = ra OP rb; division by zero faults (HVT_DIF_F_DIVZERO) */
    HVT_DIF_OP_ADD, HVT_DIF_OP_SUB, HVT_DIF_OP_MUL,
    HVT_DIF_OP_UDIV, HVT_DIF_OP_SDIV, HVT_DIF_OP_UREM, HVT_DIF_OP_SREM,
    HVT_DIF_OP_AND, HVT_DIF_OP_OR, HVT_DIF_OP_XOR,
    HVT_DIF_OP_SHL, HVT_DIF_OP_SHR, HVT_DIF_OP_SAR,  /* count taken mod 64 */
    HVT_DIF_OP_ADDI,             /* rd = ra + imm */
    HVT_DIF_OP_NEG, HVT_DIF_OP_NOT, HVT_DIF_OP_LNOT, /* rd = -ra, ~ra, !ra */
    HVT_DIF_OP_SEXT,             /* rd = ra sign-extended from imm bytes (1, 2, 4) */
    HVT_DIF_OP_ZEXT,             /* rd = ra zero-extended from imm bytes (1, 2, 4) */
    /* comparisons: rd = 1 or 0 */
    HVT_DIF_OP_EQ, HVT_DIF_OP_NE,
    HVT_DIF_OP_LT, HVT_DIF_OP_LE, HVT_DIF_OP_LTU, HVT_DIF_OP_LEU,
    HVT_DIF_OP_SCMP,             /* strings: rd = -1, 0 or 1 as strcmp(ra, rb) */
    /* control: imm is an insn index in this clause greater than this one */
    HVT_DIF_OP_JMP, HVT_DIF_OP_BZ, HVT_DIF_OP_BNZ,   /* BZ/BNZ test ra */
    /* guest memory, through the safe guest-memory path: a fault ends the clause */
    HVT_DIF_OP_LDG,              /* rd = guest[ra], imm = HVT_DIF_LD_* size and sign */
    HVT_DIF_OP_STRG,             /* rd = string copied from guest address ra (copyinstr,
                                    stringof): up to strsize-1 bytes, NUL ends it; imm 0 (kernel
                                    address) or HVT_DIF_LD_USER (copyinstr) */
    HVT_DIF_OP_VAR,              /* rd = built-in imm (HVT_DIF_V_*) */
    HVT_DIF_OP_SCONST,           /* rd = the string at strtab[imm] */
    HVT_DIF_OP_STRLEN,           /* rd = strlen(ra) */
    HVT_DIF_OP_STRJOIN,          /* rd = ra . rb (truncated at strsize-1) */
    HVT_DIF_OP_BASENAME,         /* rd = basename(ra) */
    /* variables; imm = index in vars[], whose kind and type must match the op */
    HVT_DIF_OP_LDGV, HVT_DIF_OP_STGV,   /* global scalar: rd = v / v = ra */
    HVT_DIF_OP_LDTV, HVT_DIF_OP_STTV,   /* thread-local (self->): keyed by the current tid */
    HVT_DIF_OP_LDLV, HVT_DIF_OP_STLV,   /* clause-local (this->): live for one firing */
    HVT_DIF_OP_TPUSH,            /* append ra to the tuple being built (integer or string);
                                    LDAV, STAV and AGG use the tuple and leave it as it is */
    HVT_DIF_OP_TCLR,             /* empty the tuple (each clause starts with it empty) */
    HVT_DIF_OP_LDAV, HVT_DIF_OP_STAV,   /* associative array var imm, key = the tuple; a load
                                           of a missing key gives 0 / ""; storing 0 deletes */
    /* recording (the principal buffer): EMIT, STACK and EXIT only after an ACT */
    HVT_DIF_OP_ACT,              /* begin action imm (0..65535, index in the host's list) */
    HVT_DIF_OP_EMIT,             /* append ra (integer: 8 bytes; string: len + bytes) */
    HVT_DIF_OP_STACK,            /* append the kernel stack: u32 bytes, u32 0, rsp, the bytes,
                                    zeros to a multiple of 8 (at most imm bytes, 1 ..
                                    HVT_PROBE_STACK_MAX) */
    /* aggregations: key = the tuple, agg = aggs[imm] */
    HVT_DIF_OP_AGG,              /* aggregate value ra (count: ra unused, 0; rb unused: the
                                    quantizations' weight is AGGW's) */
    HVT_DIF_OP_AGGCLR,           /* every key's value of @imm to zero (hvt's clear() does not
                                    use it: the host clears its sum of the snapshots, which
                                    are deltas: see hvt_stream.h struct hvt_dagg_part) */
    HVT_DIF_OP_EXIT,             /* exit(ra): appends ra like EMIT (after the exit action's
                                    ACT) and marks the program as exiting; the host ends the
                                    run */
    HVT_DIF_OP_TRACER,           /* the instruction tracer: imm HVT_DIF_TRACER_STEP starts
                                    recording every instruction, HVT_DIF_TRACER_UNSTEP ends it
                                    (step() / unstep(); the whole system: every CPU) */
    /* speculation (DTrace's speculative buffers; hdr.nspec of them, hdr.specsize bytes per
       CPU each) */
    HVT_DIF_OP_SPECNEW,          /* rd = speculation(): a free speculation's id 1..nspec, or 0
                                    (none free: counted, HVT_DREC_SPECUNAVAIL or SPECBUSY) */
    HVT_DIF_OP_SPECULATE,        /* speculate(ra): this clause's record goes to speculation ra
                                    instead of the principal buffer (before any ACT, once); ra 0
                                    or not active: the record is dropped silently; ra > nspec
                                    faults ILLOP */
    HVT_DIF_OP_COMMIT,           /* commit(ra): speculation ra's records go to the principal
                                    buffers (each CPU's to its own), then it is free again; not
                                    after an ACT or a SPECULATE; ra 0 or not active: nothing */
    HVT_DIF_OP_DISCARD,          /* discard(ra): speculation ra's records are dropped, then it
                                    is free again */
    HVT_DIF_OP_USTACK,           /* append the user stack (ustack()): the user RIP, then the
                                    return addresses found by following the user frame
                                    pointers from the user RBP: u32 count, u32 0, then count
                                    u64 (at most imm, 1 .. HVT_DIF_USTACK_MAX); count 0 when
                                    the thread has no user registers to start from */
    HVT_DIF_OP_AGGW,             /* aggregate value ra with weight rb, key = the tuple, agg =
                                    aggs[imm], a quantize, lquantize or llquantize: its bucket
                                    gains rb instead of 1 (DTrace's increment argument; any
                                    int64, negative too, adding as unsigned) */
    HVT_DIF_OP_TKSTACK,          /* append the kernel stack to the tuple being built, as a key
                                    of type HVT_DIF_T_STACK (stack(N) as a key): at most imm
                                    frames (1 .. HVT_DIF_STACKKEY_MAX), unwound in the
                                    hypervisor with the kernel's own ORC tables (the image's
                                    struct hvt_dif_korc, required) from the firing's registers */
    HVT_DIF_OP_TUSTACK,          /* the same for the user stack (ustack(N) as a key): the user
                                    pc and the frame-pointer chain's return addresses, as
                                    USTACK finds them */
    HVT_DIF_OP_STRGR,            /* rd = the guest bytes [ra, rb) as one string, each NUL
                                    but a last one made a space, at most strsize-1 bytes
                                    (rb <= ra: ""); imm as STRG's (HVT_DIF_LD_USER): a
                                    process's argument list, mm->arg_start .. arg_end, as
                                    psinfo_t's pr_psargs */
    HVT_DIF_OP_LDSA,             /* rd = element ra of the scalar array vars[imm] (a GLOBAL or
                                    LOCAL variable with nelem > 0: `int a[5];`, `this int
                                    a[5];`); an index >= nelem (unsigned) faults BADINDEX, arg
                                    the index */
    HVT_DIF_OP_STSA,             /* element ra of the scalar array vars[imm] = rb (checked as
                                    LDSA) */
    HVT_DIF_OP_CHKIDX,           /* ra >= imm (unsigned; imm >= 1) faults BADINDEX, arg ra: a
                                    non-constant index into a kernel array of imm elements, as
                                    dtrace-utils checks it */
    HVT_DIF_OP__COUNT
};

#define HVT_DIF_TRACER_STEP   1
#define HVT_DIF_TRACER_UNSTEP 2
#define HVT_DIF_TRACER_STOP   3          /* stop(): the tracer stops for good: later step()s of
                                            this program do nothing (the trace ends there) */

/* LDG sizes */
#define HVT_DIF_LD_SIZE_MASK 0x0f        /* 1, 2, 4 or 8 bytes */
#define HVT_DIF_LD_SIGNED    0x10        /* sign-extend */
#define HVT_DIF_LD_USER      0x20        /* the address is in user space (copyin): walk the
                                            current process's page tables */

/* Built-in variables (VAR). Strings: EXECNAME, PROBEPROV/MOD/FUNC/NAME. ARG6..9, PPID, UID,
 * VTIMESTAMP and STACKDEPTH have no value in the hypervisor: the verifier refuses them (the
 * host reads arg6..9 from the stack, ppid, uid and gid through CURTHREAD and BTF). */
enum hvt_dif_var_builtin {
    HVT_DIF_V_ARG0 = 0,          /* ..ARG5 = 5: fbt entry: the C arguments (RDI RSI RDX RCX
                                    R8 R9); return: arg0 = offset, arg1 = rv; syscall: the
                                    user's arguments; profile: arg0 = kernel pc or 0, arg1 =
                                    user pc or 0. ARG6..9: refused (the host reads them at
                                    [REGS_SP + 8..] at fbt entry, else uses 0) */
    HVT_DIF_V_PID = 10, HVT_DIF_V_TID, HVT_DIF_V_PPID, HVT_DIF_V_UID,
    HVT_DIF_V_CPU, HVT_DIF_V_TIMESTAMP, HVT_DIF_V_VTIMESTAMP, HVT_DIF_V_WALLTIMESTAMP,
    HVT_DIF_V_CURTHREAD, HVT_DIF_V_ERRNO, HVT_DIF_V_EPID, HVT_DIF_V_ID,
    HVT_DIF_V_EXECNAME, HVT_DIF_V_PROBEPROV, HVT_DIF_V_PROBEMOD, HVT_DIF_V_PROBEFUNC,
    HVT_DIF_V_PROBENAME, HVT_DIF_V_REGS_PC, HVT_DIF_V_REGS_SP, HVT_DIF_V_STACKDEPTH,
    HVT_DIF_V__COUNT
};
/* The integer built-ins the hypervisor's lean path reads (trace/dvm/dif_lean.c), which the
 * host's probe-effect model (host-tools/d/d_predict.c) must tell apart the same way: the
 * firing's arguments and what the runtime fills for every firing, and the CPU. */
static inline int hvt_dif_lean_int_var(int32_t id)
{
    if (id >= HVT_DIF_V_ARG0 && id < HVT_DIF_V_ARG0 + 6)
        return 1;
    switch (id) {
    case HVT_DIF_V_PID: case HVT_DIF_V_TID: case HVT_DIF_V_CURTHREAD: case HVT_DIF_V_TIMESTAMP:
    case HVT_DIF_V_WALLTIMESTAMP: case HVT_DIF_V_ERRNO: case HVT_DIF_V_REGS_PC:
    case HVT_DIF_V_REGS_SP: case HVT_DIF_V_CPU:
        return 1;
    }
    return 0;
}

struct hvt_dif_clause {
    uint32_t first, count;       /* its insns: insns[first .. first+count); clauses' ranges
                                    in clause order, disjoint */
};

/* Variable kinds and types */
#define HVT_DIF_VK_GLOBAL  1
#define HVT_DIF_VK_THREAD  2
#define HVT_DIF_VK_LOCAL   3
#define HVT_DIF_VK_ASSOC   4
#define HVT_DIF_T_INT      1
#define HVT_DIF_T_STR      2
#define HVT_DIF_T_STACK    3             /* a key only (aggregations): a stack, encoded as
                                            below */
/* A stack key's encoding: one header word, then depth u64 frames, leaf first, those past the
 * frames found 0 (a fixed width for a given depth, so equal stacks are equal keys):
 *  bits  0..7   frames found (<= depth)
 *  bits  8..15  depth (the words that follow: 1 .. HVT_DIF_STACKKEY_MAX)
 *  bits 16..19  HVT_DIF_SK_KERNEL or HVT_DIF_SK_USER
 *  bit  20      kernel: the unwind reached the pt_regs the kernel saved at entry from user mode
 *  bits 32..63  kernel: bit i set when frame i is an exact pc (the leaf, or the pc an
 *               interrupt or exception frame saved), not a return address */
#define HVT_DIF_SK_KERNEL  1
#define HVT_DIF_SK_USER    2
#define HVT_DIF_SK_FROM_USER (1u << 20)
static inline uint64_t hvt_dif_sk_word(uint32_t n, uint32_t depth, uint32_t kind, uint32_t flags,
                                       uint32_t exact)
{
    return (uint64_t)(n & 0xff) | (uint64_t)(depth & 0xff) << 8 | (uint64_t)(kind & 0xf) << 16 |
           (flags & HVT_DIF_SK_FROM_USER) | (uint64_t)exact << 32;
}
static inline uint32_t hvt_dif_sk_n(uint64_t w) { return (uint32_t)w & 0xff; }
static inline uint32_t hvt_dif_sk_depth(uint64_t w) { return (uint32_t)(w >> 8) & 0xff; }
static inline uint32_t hvt_dif_sk_kind(uint64_t w) { return (uint32_t)(w >> 16) & 0xf; }
static inline uint32_t hvt_dif_sk_exact(uint64_t w) { return (uint32_t)(w >> 32); }
struct hvt_dif_var {
    uint8_t kind, type;          /* HVT_DIF_VK_*, HVT_DIF_T_* (the value's) */
    uint8_t nkeys;               /* ASSOC: keys in its tuple */
    uint8_t pad;
    union {
        uint8_t key_types[HVT_DIF_TUPLE_MAX]; /* ASSOC: HVT_DIF_T_* of each key */
        uint32_t nelem;          /* GLOBAL, LOCAL: 0 a scalar; else a scalar array of nelem
                                    elements (1 .. HVT_DIF_ARRAY_MAX) of the type, each
                                    zero at first (LOCAL: at each firing), read and written by
                                    LDSA/STSA only (key_types[4..7] zero) */
    };
    uint32_t name;               /* strtab offset (for error messages) */
};
_Static_assert(sizeof(struct hvt_dif_var) == 16, "wire size");

/* Aggregating functions */
enum hvt_dif_aggfn {
    HVT_DIF_AGG_COUNT = 1, HVT_DIF_AGG_SUM, HVT_DIF_AGG_MIN, HVT_DIF_AGG_MAX, HVT_DIF_AGG_AVG,
    HVT_DIF_AGG_STDDEV, HVT_DIF_AGG_QUANTIZE, HVT_DIF_AGG_LQUANTIZE, HVT_DIF_AGG_LLQUANTIZE
};
#define HVT_DIF_QUANT_BUCKETS 127        /* quantize: 0, +-1 .. +-2^62 as DTrace's 63+1+63 */
#define HVT_DIF_LQUANT_MAX    1024       /* lquantize/llquantize: at most this many buckets */
struct hvt_dif_agg {
    uint8_t fn;                  /* HVT_DIF_AGG_* */
    uint8_t nkeys;
    uint8_t key_types[HVT_DIF_TUPLE_MAX];
    uint8_t pad[6];              /* 0 (explicit: p[] is 8-aligned) */
    int64_t p[4];                /* lquantize: base, limit, step; llquantize: factor, low,
                                    high, nsteps; unused ones 0 */
    uint32_t name;               /* strtab offset ("" for @) */
    uint32_t nbuckets;           /* value slots (computed by the host, checked by the
                                    hypervisor): count, sum, min, max 1; avg 2; stddev 4;
                                    quantize 127; lquantize (limit-base)/step + 2;
                                    llquantize as DTrace's layout (below) */
};
_Static_assert(sizeof(struct hvt_dif_agg) == 56, "wire size");
/*
 * Value slots (int64 each, in the snapshot's order):
 *  count, sum, min, max: [0] (min starts at INT64_MAX, max at INT64_MIN)
 *  avg: [0] count, [1] sum
 *  stddev: [0] count, [1] sum, [2] low and [3] high 64 bits of the sum of squares (unsigned
 *      128-bit); the host computes sqrt(sumsq/count - (sum/count)^2)
 *  quantize: 127 buckets, DTrace's: bucket 63 holds 0; bucket 63+1+k (k = 0..62) holds
 *      [2^k, 2^(k+1)) (the last one everything >= 2^62); bucket 62-k holds (-2^(k+1), -2^k]
 *      (bucket 0 everything <= -2^62)
 *  lquantize(base, limit, step): levels = (limit-base)/step (rounded down, >= 1); [0] holds
 *      v < base, [1+i] holds base+i*step <= v < base+(i+1)*step, [levels+1] v >= base+
 *      levels*step. (DTrace's data has levels+3 words: the first one holds its parameters.)
 *  llquantize(factor, low, high, steps): dtrace-utils' symmetric layout: per = steps -
 *      steps/factor buckets for each order mag = low..high (its range [factor^mag,
 *      factor^(mag+1)) cut into steps of width factor^(mag+1)/steps, less the steps/factor
 *      below factor^mag); [0] v <= -factor^(high+1); then the negative orders, high down to
 *      low; [under = 1 + (high-low+1) * per] |v| < factor^low; the positive orders, low up to
 *      high; [2 * under] v >= factor^(high+1). nbuckets = 2 * (high-low+1) * per + 3.
 *      Parameters (dtrace-utils'): 2 <= factor, 0 <= low <= high, 1 <= steps, all below
 *      2^16; steps < factor divides factor; steps > factor is a multiple of factor that
 *      divides factor^(low+1) (factor^2 when low is 0); factor^(high+1) < 2^64.
 */

struct hvt_dif_probe {
    uint32_t id;                 /* the probe id (struct hvt_probe_spec id) */
    uint32_t clauses;            /* index of its first entry in probe_clauses[] */
    uint32_t nclauses;
    uint32_t prov, mod, func, name; /* strtab offsets: probeprov, probemod, probefunc, probename */
};
_Static_assert(sizeof(struct hvt_dif_probe) == 28, "wire size");

struct hvt_dif_hdr {
    uint32_t magic, size;        /* HVT_DIF_MAGIC; the image's bytes */
    uint32_t strsize;            /* bytes of a string value, NUL included (option strsize) */
    uint32_t nclauses, ninsns, nconsts, nvars, naggs, nprobes, nprobe_clauses, strtab_len;
    uint32_t off_clauses, off_insns, off_consts, off_vars, off_aggs, off_probes,
             off_probe_clauses, off_strtab;
    uint32_t begin_probe, end_probe, error_probe; /* ids of BEGIN, END, ERROR (0: none) */
    uint32_t bufsize;            /* principal buffer per CPU, bytes (0: default) */
    uint32_t dynvarsize;         /* dynamic variable space, bytes (0: default) */
    uint32_t aggsize;            /* aggregation space per CPU, bytes (0: default) */
    uint32_t flags;              /* HVT_DIF_HF_*: */
    uint32_t tsc_khz;            /* the guest TSC's rate, set by the host when it knows it:
                                    timestamp is then nanoseconds (else ticks) */
    uint32_t nspec;              /* speculations (option nspec; 0: none may be made) */
    uint32_t specsize;           /* bytes of one speculation's buffer per CPU (option specsize) */
    uint32_t off_korc;           /* offset of the struct hvt_dif_korc (0: none; kernel stack
                                    keys need it) */
    int64_t walltime;            /* the host's CLOCK_REALTIME (ns since the epoch) as it sends
                                    the image; walltimestamp = walltime + (timestamp - timestamp
                                    when the hypervisor took the image); 0: walltimestamp is 0 */
};
_Static_assert(sizeof(struct hvt_dif_hdr) == 128, "wire size");
#define HVT_DIF_HF_DESTRUCTIVE 1u        /* -w given */

/* Where the running kernel keeps its ORC unwind tables (objtool's .orc_unwind_ip and
 * .orc_unwind, and the orc_lookup index its unwind_init() builds at boot), for TKSTACK. Link
 * addresses from the kernel image: the hypervisor adds the KASLR slide it learnt. It only
 * ever reads these through its checked guest loads: the guest can make its own stack keys
 * wrong, nothing more. */
#define HVT_DIF_KORC_RANGES 16
struct hvt_dif_korc {
    uint64_t ip_table;           /* .orc_unwind_ip: count s32, each relative to its own address */
    uint64_t entries;            /* .orc_unwind: count 6-byte entries */
    uint64_t lookup;             /* orc_lookup: lookup_words u32 (0: none) */
    uint64_t lookup_start, lookup_end;  /* _stext, _etext: the span orc_lookup indexes */
    uint32_t count;
    uint32_t lookup_words;
    uint32_t layout;             /* 1 (Linux <= 6.2), 2 (6.3), 3 (6.4+) */
    uint32_t nranges;            /* 1 .. HVT_DIF_KORC_RANGES */
    uint64_t range[HVT_DIF_KORC_RANGES][2];  /* the text the table covers: [start, end) */
};
_Static_assert(sizeof(struct hvt_dif_korc) == 312, "wire size");

/* --- records (the hypervisor -> the host) --- */

/* One clause's output, or an error, in a principal buffer: 8-byte aligned, len includes the
 * header. Data follows: actions (u16 action index, u16 0, u32 0 then values) for a clause. */
#define HVT_DREC_DATA  1
#define HVT_DREC_ERROR 2
#define HVT_DREC_DROPS 3                 /* records this CPU could not keep: arg = how many */
#define HVT_DREC_DYNDROPS 4              /* dynamic variable drops: arg = how many */
#define HVT_DREC_AGGDROPS 5              /* aggregation keys this CPU had no room for: arg */
#define HVT_DREC_SPECDROPS 6             /* speculative records that did not fit: arg */
#define HVT_DREC_SPECBUSY 7              /* speculation() with none free, one of them still
                                            being committed or discarded: arg */
#define HVT_DREC_SPECUNAVAIL 8           /* speculation() with none free (and none busy): arg */
struct hvt_drec {
    uint32_t len;                /* bytes, header included, multiple of 8 */
    uint16_t type;               /* HVT_DREC_* */
    uint16_t cpu;
    uint32_t probe;              /* probe id that fired */
    uint16_t clause;             /* clause index */
    uint16_t pad;
    uint64_t tsc;                /* guest TSC at the firing */
    uint64_t arg;                /* ERROR: the faulting address; DROPS: the count */
    uint32_t pc;                 /* ERROR: insn index in the clause */
    uint32_t fault;              /* ERROR: HVT_DIF_F_* */
};
_Static_assert(sizeof(struct hvt_drec) == 40, "wire size");

/* faults (HVT_DREC_ERROR), named after DTrace's */
#define HVT_DIF_F_BADADDR   1            /* invalid address */
#define HVT_DIF_F_DIVZERO   2            /* divide-by-zero */
#define HVT_DIF_F_BADSTR    3            /* a string handle that is not one */
#define HVT_DIF_F_NOSCRATCH 4            /* out of scratch space */
#define HVT_DIF_F_TUPLE     5            /* tuple too long */
#define HVT_DIF_F_ILLOP     6            /* illegal operation */
#define HVT_DIF_F_BUFFULL   7            /* the record did not fit the buffer (counted as a drop) */
#define HVT_DIF_F_BUDGET    8            /* the firing ran out of its budget (hvtrace's own: DTrace
                                            has no loops, but an image can still ask for hours of
                                            work in one firing); it ends the whole firing, its
                                            later clauses do not run. arg: which budget: */
#define HVT_DIF_BUDGET_INSNS 1           /*   instructions (string and copy loops by their bytes) */
#define HVT_DIF_BUDGET_TIME  2           /*   the hypervisor's deadline (TSC ticks) */
#define HVT_DIF_F_BADINDEX  9            /* index out of bounds (LDSA, STSA, CHKIDX): arg the
                                            index */
#define HVT_DIF_F_STEPREFUSED 10         /* step() refused: as many threads as the tracer steps at
                                            once are stepped already (hvtrace's own) */

/* DTrace's fault numbers (its DTRACEFLT_* constants, which D programs compare ERROR's arg4
 * with): the ones hvt's faults are. The HVT_DIF_F_* codes above stay the wire's; ERROR's arg4
 * is hvt_dif_dtrace_fault() of them. */
#define HVT_DTRACEFLT_UNKNOWN   0
#define HVT_DTRACEFLT_BADADDR   1
#define HVT_DTRACEFLT_BADALIGN  2
#define HVT_DTRACEFLT_ILLOP     3
#define HVT_DTRACEFLT_DIVZERO   4
#define HVT_DTRACEFLT_NOSCRATCH 5
#define HVT_DTRACEFLT_KPRIV     6
#define HVT_DTRACEFLT_UPRIV     7
#define HVT_DTRACEFLT_TUPOFLOW  8
#define HVT_DTRACEFLT_BADSTACK  9
#define HVT_DTRACEFLT_BADSIZE   10
#define HVT_DTRACEFLT_BADINDEX  11
#define HVT_DTRACEFLT_LIBRARY   1000

static inline uint32_t hvt_dif_dtrace_fault(uint32_t f)
{
    switch (f) {
    case HVT_DIF_F_BADADDR: return HVT_DTRACEFLT_BADADDR;
    case HVT_DIF_F_DIVZERO: return HVT_DTRACEFLT_DIVZERO;
    case HVT_DIF_F_BADSTR: case HVT_DIF_F_ILLOP: return HVT_DTRACEFLT_ILLOP;
    case HVT_DIF_F_NOSCRATCH: return HVT_DTRACEFLT_NOSCRATCH;
    case HVT_DIF_F_TUPLE: return HVT_DTRACEFLT_TUPOFLOW;
    case HVT_DIF_F_BADINDEX: return HVT_DTRACEFLT_BADINDEX;
    default: return HVT_DTRACEFLT_UNKNOWN;
    }
}

/* Aggregation snapshot, sent per CPU: a run of these, 8-byte aligned: the key (encoded tuple:
 * each key an integer 8 bytes or a string u16 len + bytes padded to 8) then nbuckets int64. */
struct hvt_dagg_rec {
    uint32_t len;                /* bytes, header included */
    uint16_t agg;                /* aggregation index */
    uint16_t cpu;
    uint32_t key_len;            /* bytes of key */
    uint32_t nbuckets;
};
_Static_assert(sizeof(struct hvt_dagg_rec) == 16, "wire size");

#endif
