/*
 * hvt_hypercall.h - the guest-visible hypercall ABI of hvtrace (shared by the hypervisor and
 * the guest tools).
 *
 * Contract:
 *  - A guest detects hvtrace with the VERSION hypercall, catching the fault it raises where
 *    hvtrace is absent (#UD on bare metal: SIGILL in a process; another hypervisor may raise
 *    #GP). By default the guest's CPUID is the bare CPU's (no hypervisor bit); with
 *    `advertise = on` in hvtrace.cfg, leaf 1 ECX bit 31 ("hypervisor present") is set and
 *    leaf 0x40000000 returns EAX = highest hypervisor leaf, EBX:ECX:EDX = HVT_CPUID_SIGNATURE
 *    (12 bytes, NUL padded).
 *  - A hypercall is VMCALL with RAX = HVT_HC_MAGIC | function, arguments in RBX, RCX, RDX.
 *    On return RAX holds a status (HVT_HC_OK or a negative HVT_HC_E*), results are in RBX,
 *    RCX, RDX; all other registers are preserved.
 *  - Who may call: VERSION from any privilege level; HV_RANGE from kernel mode only (in a
 *    self-test boot, hvtrace.cfg selftest = on, also from the guest's root); MARK, PROBE and
 *    CMD from kernel mode or a process whose effective uid is 0 (the trace option hc_user=
 *    changes that: none = kernel mode only, all = anyone). Any other caller gets #UD, as
 *    VMCALL gives on bare metal (SIGILL in a process); refusals are counted.
 *  - A VMCALL whose RAX does not carry HVT_HC_MAGIC gets #UD, as on bare metal.
 *  - PROBE and CMD take an operation in RBX (enum hvt_hc_probe_op, enum hvt_hc_cmd_op below):
 *    an operation not listed there gets HVT_HC_EINVAL. These names are the ABI's one
 *    definition: the Python scripts read them from build/gen/hvt_abi.py (tools/hvt_abi.c).
 */
#ifndef HVT_HYPERCALL_H
#define HVT_HYPERCALL_H
#include <stdint.h>

#define HVT_CPUID_LEAF_BASE      0x40000000u
#define HVT_CPUID_LEAF_MAX       0x40000001u
/* 12 bytes in EBX, ECX, EDX order. */
#define HVT_CPUID_SIGNATURE      "hvtrace-vmm\0"
/* Leaf 0x40000001: EAX = HVT_VERSION (same encoding as the VERSION hypercall). */

#define HVT_VERSION_MAJOR        0
#define HVT_VERSION_MINOR        1
#define HVT_VERSION_PATCH        0
#define HVT_VERSION              ((HVT_VERSION_MAJOR << 16) | (HVT_VERSION_MINOR << 8) | HVT_VERSION_PATCH)
#define HVT_HC_ABI_REVISION      1

#define HVT_HC_MAGIC             0x4856545200000000ull /* "HVTR" in the high half */
#define HVT_HC_MAGIC_MASK        0xffffffff00000000ull
#define HVT_HC_FUNC_MASK         0x00000000ffffffffull

#define HVT_HC_RANGE_PANIC       0x70616e6963ull   /* "panic" */

enum hvt_hc_func {
    HVT_HC_VERSION  = 0, /* out: RBX = HVT_VERSION, RCX = HVT_HC_ABI_REVISION */
    HVT_HC_HV_RANGE = 1, /* out: RBX = hypervisor memory base (phys), RCX = size in bytes,
                            RDX = canary qword kept (8-byte aligned, repeated) in that memory:
                            the guest must never be able to read it. In a self-test boot
                            only, in: RBX = HVT_HC_RANGE_PANIC makes the hypervisor take its
                            fatal path (make test-fatal), RCX = how: 0 as any panic, 1 the
                            other CPUs stopped by NMI alone (no INIT round), 2 a second
                            panic inside the path (before the hooks); elsewhere RBX is
                            ignored */
    HVT_HC_MARK     = 2, /* in: RBX = mark id; reserved for trace start/stop marks. A start
                            mark while the trace's link has failed returns HVT_HC_EBUSY and
                            starts nothing (its records could only be dropped): retry later */
    HVT_HC_PROBE    = 3, /* the probe engine: RBX = enum hvt_hc_probe_op */
    HVT_HC_CMD      = 4, /* the guest tool's agent (hvt -c; include/hvt_stream.h HVT_CTL_D_CMD):
                            RBX = enum hvt_hc_cmd_op, RCX = the command's seq, RDX = the
                            argument. HVT_HC_EINVAL: another seq or the wrong state. Nothing is
                            written to guest memory. */
};

/* HVT_HC_PROBE's operations (RBX); their arguments in RCX and RDX. */
enum hvt_hc_probe_op {
    HVT_HC_PROBE_DISARM_LOG = 0, /* disarm every probe and log their counts */
    HVT_HC_PROBE_ARM_CFG    = 1, /* arm the boot configuration's probes (trace option probe=):
                                    RCX = mask of the ones to arm, bit i-1 for probe i, 0 = all;
                                    out RBX = sites armed, RAX < 0 when none could be (RCX =
                                    the first failing probe's index) */
    HVT_HC_PROBE_STATS      = 2, /* log the engine's counters: out RBX = firings, RCX = VM exits
                                    the engine caused, RDX = of them EPT ones */
    HVT_HC_PROBE_ARM_SPECS  = 4, /* arm RDX (| HVT_PROBE_NOWAIT) probes described by the struct
                                    hvt_probe_spec array at guest virtual address RCX (runtime
                                    kernel addresses): out RBX = sites armed, RCX = specs taken;
                                    RAX = HVT_HC_EBUSY when the call stopped early to bound its
                                    work (return probes decode their function: 1 MiB of code per
                                    call at most), without waiting for the CPUs: call again with
                                    the rest */
    HVT_HC_PROBE_DISARM     = 5, /* disarm every probe without logging */
    HVT_HC_PROBE_LOAD_D     = 6, /* load the D program image (include/hvt_dif.h) of RDX bytes at
                                    guest virtual address RCX, verified whole (probes must be
                                    disarmed): out RBX = 0 or HVT_D_E* (include/hvt_stream.h);
                                    probes armed with HVT_PROBE_F_ACTION then run it */
    HVT_HC_PROBE_COST       = 7, /* the per-phase accounting (include/hvt_probe.h): RCX = 0 off,
                                    1 on; RCX = 2 + phase (enum hvt_probe_phase): out RBX = that
                                    phase's ticks, RCX = firings timed, both summed over the
                                    probes armed now; RCX = 2 + HVT_PH_COUNT: out RBX, RCX = of
                                    the firings timed, those in another task than their CPU's
                                    last one and those of another probe id (struct
                                    hvt_probe_cost newtask, switched) */
};

/* HVT_HC_CMD's operations (RBX), in the order the agent makes them for one command. */
enum hvt_hc_cmd_op {
    HVT_HC_CMD_TAKE    = 1, /* take the posted command: out RBX = seq, RCX = its bytes
                               (RAX = HVT_HC_EBUSY: none posted) */
    HVT_HC_CMD_READ    = 2, /* read its text: RDX = offset: out RBX, RCX, RDX = the
                               HVT_HC_CMD_READ_LEN bytes there (zeros past the end) */
    HVT_HC_CMD_STARTED = 3, /* started and held before exec: RDX = its pid */
    HVT_HC_CMD_MAY_RUN = 4, /* may it run? out RBX = enum hvt_hc_cmd_answer */
    HVT_HC_CMD_EXITED  = 5, /* exited: RDX = its wait status */
};
enum hvt_hc_cmd_answer { HVT_HC_CMD_HOLD = 0, HVT_HC_CMD_GO = 1, HVT_HC_CMD_CANCELLED = 2 };
#define HVT_HC_CMD_READ_LEN 24

/* A probe spec's kind (bits 7:0 of struct hvt_probe_spec.kind). */
enum hvt_probe_kind {
    HVT_PROBE_KIND_ENTRY   = 1, /* the entry of the function at lo */
    HVT_PROBE_KIND_RETURN  = 2, /* its return sites in [lo, hi) */
    HVT_PROBE_KIND_ADDR    = 3, /* the instruction at lo */
    HVT_PROBE_KIND_PROFILE = 4, /* a sample on every CPU every lo TSC ticks of guest time */
    HVT_PROBE_KIND_TICK    = 5, /* the same on one CPU (CPU 0) */
    HVT_PROBE_KIND_ARGS    = 6, /* not a probe: the argument recipe of the HVT_PROBE_F_SDT spec
                                   just before it (same id), words 0 and 1 in lo and hi */
    HVT_PROBE_KIND_MODINFO = 7, /* not a probe: where the kernel keeps its loaded modules (the
                                   `modules` list head in lo, link-time with
                                   HVT_PROBE_F_LINKTIME) and struct module's layout in hi
                                   (HVT_MODINFO_*); before any HVT_PROBE_F_MODULE spec */
    HVT_PROBE_KIND_MODHOOK = 8, /* not a probe for the host: the hypervisor's own entry probe on
                                   the kernel's module load path (hi = HVT_MODHOOK_LOAD: lo =
                                   do_init_module(struct module *)) or unload path (hi =
                                   HVT_MODHOOK_FREE: lo = free_module(struct module *)) */
};
enum { HVT_MODHOOK_LOAD = 0, HVT_MODHOOK_FREE = 1 };
/* HVT_PROBE_KIND_MODINFO's hi: byte offsets in struct module, 12 bits each (a field at 4096
 * or beyond cannot be described, and the host refuses such a kernel), and the state field's
 * offset / 4 in the top 4 bits: list (struct list_head), name (char[]), kallsyms (struct
 * mod_kallsyms *), the core text's base (void *) and size (unsigned int). */
#define HVT_MODINFO_LIST(h)     ((unsigned)((h) >> 0) & 0xfffu)
#define HVT_MODINFO_NAME(h)     ((unsigned)((h) >> 12) & 0xfffu)
#define HVT_MODINFO_KALLSYMS(h) ((unsigned)((h) >> 24) & 0xfffu)
#define HVT_MODINFO_BASE(h)     ((unsigned)((h) >> 36) & 0xfffu)
#define HVT_MODINFO_SIZE(h)     ((unsigned)((h) >> 48) & 0xfffu)
#define HVT_MODINFO_STATE(h)    (((unsigned)((h) >> 60) & 0xfu) * 4u)
#define HVT_MODINFO_PACK(list, name, kallsyms, base, size, state) \
    ((uint64_t)(list) | (uint64_t)(name) << 12 | (uint64_t)(kallsyms) << 24 | \
     (uint64_t)(base) << 36 | (uint64_t)(size) << 48 | (uint64_t)((state) / 4) << 60)

/* One probe for HVT_HC_PROBE_ARM_SPECS (and the host's HVT_CTL_PROBE_ARM): kind = enum
 * hvt_probe_kind | flags below. lo and hi are runtime addresses, or link-time ones (the
 * vmlinuz's) with HVT_PROBE_F_LINKTIME: the hypervisor slides them. Profile and tick samples
 * always carry the stack. */
struct hvt_probe_spec {
    uint32_t id;
    uint32_t kind;
    uint64_t lo, hi;
};
#define HVT_PROBE_KIND_MASK   0xffu
#define HVT_PROBE_F_LINKTIME  (1u << 8)
#define HVT_PROBE_F_RECORD    (1u << 9)   /* report every firing (include/hvt_probe.h) */
#define HVT_PROBE_F_STACK     (1u << 10)  /* ... with the stack (struct hvt_probe_sample) */
#define HVT_PROBE_F_SYSARGS   (1u << 12)  /* a system call's probe. Entry of a __x64_sys_
                                             wrapper: the arguments are the user's, from the
                                             pt_regs its RDI points to; return: arg0 = arg1 =
                                             the return value (hvt_probe_return_args) */
#define HVT_PROBE_F_USER      (1u << 11)  /* kind 3 in one process: lo = its user address,
                                             hi = its pid (tgid); armed once it runs */
#define HVT_PROBE_F_COMM      (1u << 13)  /* with HVT_PROBE_F_USER: hi = hvt_comm_hash() of a
                                             process name instead of a pid; armed in the first
                                             process of that name that runs with lo mapped, and
                                             in that process only */
#define HVT_PROBE_F_ACTION    (1u << 14)  /* run the loaded D program's clauses for this id at
                                             each firing (trace/dvm/d_runtime.c), instead of a record;
                                             profile/tick with HVT_PROBE_F_STACK: and its sample
                                             too (the same firings through both paths) */
#define HVT_PROBE_F_SDT       (1u << 15)  /* kind 3 at a static tracepoint's site (the jump
                                             label's NOP or JMP): the arguments are computed by
                                             a recipe (below); hi is recipe word 2, and the next
                                             spec of the same request must be its
                                             HVT_PROBE_KIND_ARGS record */
#define HVT_PROBE_F_MODULE    (1u << 16)  /* kind 1 (entry) or 2 (return: the function's
                                             extent is its symbol's size) in a loadable module:
                                             lo = hvt_name_hash() of the module's name, hi = of
                                             the function's; armed in the module as loaded now
                                             and whenever it is loaded again, disarmed when it
                                             is unloaded (needs HVT_PROBE_KIND_MODINFO first).
                                             Kind 3 with HVT_PROBE_F_SDT: a tracepoint's site in
                                             that function, followed by two ARGS records: recipe
                                             words 0 and 1, then (kind ARGS | F_MODULE) word 2
                                             in lo and the site's byte offset in the function
                                             in hi */
#define HVT_PROBE_PERIOD_MIN  10000u      /* profile/tick: fewer TSC ticks between samples are refused */
#define HVT_PROBE_SPECS_MAX 1024
#define HVT_PROBE_NOWAIT    (1ull << 63)
/* How many HVT_PROBE_KIND_ARGS records follow spec s in its request: 1 after a tracepoint's
 * site, 2 after one in a module, else 0. A request (or a batch of one) never splits them. */
static inline unsigned hvt_probe_spec_records(const struct hvt_probe_spec *s)
{
    return !(s->kind & HVT_PROBE_F_SDT) ? 0 : (s->kind & HVT_PROBE_F_MODULE) ? 2 : 1;
}
/* The largest n <= max such that the first n specs of s[0..total) do not end inside a
 * tracepoint's records (at least 1 when max >= 1: a lone head is refused where it is armed). */
static inline uint64_t hvt_probe_spec_batch(const struct hvt_probe_spec *s, uint64_t total, uint64_t max)
{
    uint64_t n = max < total ? max : total;
    for (uint64_t i = 0; i < n;) {
        uint64_t step = 1 + hvt_probe_spec_records(&s[i]);
        if (i + step > n)
            return i ? i : n;
        i += step;
    }
    return n;
}

/*
 * A static tracepoint's argument recipe. At the tracepoint's site the arguments are not in the
 * argument registers yet: the out-of-line block the site jumps to when the tracepoint is on
 * computes them from the registers and the stack the site has. The host decodes that block
 * (host-tools/probes/sdt.c) into one rule per argument, which the hypervisor applies to the
 * guest's registers at the site:
 *   REG   the register                 LEA   the register + disp
 *   LOAD  the (1 << size) bytes at [register + disp], read through the kernel's page tables
 *   IMM   disp                         SITE  the site's runtime address + disp (an address in
 *                                            the kernel image: slid with it)
 *   NZ    1 if the register's low (1 << size) bytes differ from disp's, else 0 (TEST r,r or
 *         CMP r,imm then SETNE)
 *   Z     the opposite (then SETE)
 *   PCPU  the (1 << size) bytes at this CPU's per-CPU base + disp (a %gs: load: `current`),
 *         the base being the guest's GS base, which a CPU in the kernel has (0 if not a
 *         kernel address)
 * then (all but NZ and Z) cut to (1 << size) bytes and sign- or zero-extended. Registers are
 * numbered as x86 encodes them (0 RAX, 1 RCX, 2 RDX, 3 RBX, 4 RSP, 5 RBP, 6 RSI, 7 RDI, 8-15
 * R8-R15). Each rule is HVT_SDT_ARG_BITS bits: op 4, reg 4, size 2, sign 1, disp 27 (two's
 * complement);
 * rule i starts at bit i * HVT_SDT_ARG_BITS of the 192-bit word string w[0] | w[1] << 64 |
 * w[2] << 128. Unused rules and the two top bits are 0. hvt_sdt_arg_get() checks one rule
 * (the hypervisor checks every rule of every recipe it is given).
 */
enum hvt_sdt_op { HVT_SDT_NONE = 0, HVT_SDT_REG, HVT_SDT_LEA, HVT_SDT_LOAD, HVT_SDT_IMM, HVT_SDT_SITE,
                  HVT_SDT_NZ, HVT_SDT_Z, HVT_SDT_PCPU };
#define HVT_SDT_ARGS      5        /* RSI RDX RCX R8 R9 after the tracepoint's void *__data */
#define HVT_SDT_ARG_BITS  38
#define HVT_SDT_DISP_BITS 27
struct hvt_sdt_arg { uint8_t op, reg, size, sign; int32_t disp; };   /* size: log2 of bytes */

static inline uint64_t hvt_sdt_bits(const uint64_t w[3], unsigned at, unsigned n)
{
    uint64_t v = w[at / 64] >> (at % 64);
    if (at % 64 && at % 64 + n > 64)
        v |= w[at / 64 + 1] << (64 - at % 64);
    return n == 64 ? v : v & ((1ull << n) - 1);
}
static inline void hvt_sdt_arg_put(uint64_t w[3], unsigned i, const struct hvt_sdt_arg *a)
{
    uint64_t v = (uint64_t)(a->op & 15) | (uint64_t)(a->reg & 15) << 4 | (uint64_t)(a->size & 3) << 8 |
                 (uint64_t)(a->sign & 1) << 10 |
                 ((uint64_t)(uint32_t)a->disp & ((1ull << HVT_SDT_DISP_BITS) - 1)) << 11;
    unsigned at = i * HVT_SDT_ARG_BITS;
    w[at / 64] |= v << (at % 64);
    if (at % 64 + HVT_SDT_ARG_BITS > 64)
        w[at / 64 + 1] |= v >> (64 - at % 64);
}
/* Rule i of a recipe: 0, or -1 when it is malformed (an op past PCPU, a NONE with bits set,
 * a REG with a displacement, an NZ or Z with a sign, an IMM, SITE or PCPU naming a register). */
static inline int hvt_sdt_arg_get(const uint64_t w[3], unsigned i, struct hvt_sdt_arg *a)
{
    uint64_t v = hvt_sdt_bits(w, i * HVT_SDT_ARG_BITS, HVT_SDT_ARG_BITS);
    uint32_t d = (uint32_t)(v >> 11) & ((1u << HVT_SDT_DISP_BITS) - 1);
    a->op = v & 15;
    a->reg = (v >> 4) & 15;
    a->size = (v >> 8) & 3;
    a->sign = (v >> 10) & 1;
    a->disp = (int32_t)(d << (32 - HVT_SDT_DISP_BITS)) >> (32 - HVT_SDT_DISP_BITS);
    if (a->op > HVT_SDT_PCPU || (a->op == HVT_SDT_NONE && v) || (a->op == HVT_SDT_REG && a->disp) ||
        ((a->op == HVT_SDT_NZ || a->op == HVT_SDT_Z) && a->sign) ||
        ((a->op == HVT_SDT_IMM || a->op == HVT_SDT_SITE || a->op == HVT_SDT_PCPU) && a->reg))
        return -1;
    return 0;
}
/* The whole recipe: 0, or -1 if a rule or the unused top bits are malformed. */
static inline int hvt_sdt_recipe_check(const uint64_t w[3])
{
    struct hvt_sdt_arg a;
    for (unsigned i = 0; i < HVT_SDT_ARGS; i++)
        if (hvt_sdt_arg_get(w, i, &a))
            return -1;
    return w[2] >> (HVT_SDT_ARGS * HVT_SDT_ARG_BITS - 128) ? -1 : 0;
}

/* A process name (at most 16 bytes, up to its NUL) as a 64-bit key: FNV-1a, never 0 (a spec
 * has room for 8 bytes, a name needs 16; two names that collide are 2^-64 apart). */
static inline uint64_t hvt_comm_hash(const char *name, unsigned max)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned i = 0; i < max && i < 16 && name[i]; i++)
        h = (h ^ (uint8_t)name[i]) * 0x100000001b3ull;
    return h ? h : 1;
}

/* A module's or a function's name (up to its NUL, at most max bytes) as a 64-bit key: FNV-1a,
 * never 0. The hypervisor hashes the names it reads in guest memory the same way. */
static inline uint64_t hvt_name_hash(const char *name, unsigned max)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned i = 0; i < max && name[i]; i++)
        h = (h ^ (uint8_t)name[i]) * 0x100000001b3ull;
    return h ? h : 1;
}

#define HVT_HC_OK        0
#define HVT_HC_ENOSYS    (-38) /* unknown function */
#define HVT_HC_EINVAL    (-22)
#define HVT_HC_EBUSY     (-16) /* not now (MARK: the link is down) */

#endif
