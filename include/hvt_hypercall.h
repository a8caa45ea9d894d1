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
};

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
#define HVT_PROBE_PERIOD_MIN  10000u      /* profile/tick: fewer TSC ticks between samples are refused */
#define HVT_PROBE_SPECS_MAX 1024
#define HVT_PROBE_NOWAIT    (1ull << 63)

/* A process name (at most 16 bytes, up to its NUL) as a 64-bit key: FNV-1a, never 0 (a spec
 * has room for 8 bytes, a name needs 16; two names that collide are 2^-64 apart). */
static inline uint64_t hvt_comm_hash(const char *name, unsigned max)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned i = 0; i < max && i < 16 && name[i]; i++)
        h = (h ^ (uint8_t)name[i]) * 0x100000001b3ull;
    return h ? h : 1;
}

#define HVT_HC_OK        0
#define HVT_HC_ENOSYS    (-38) /* unknown function */
#define HVT_HC_EINVAL    (-22)
#define HVT_HC_EBUSY     (-16) /* not now (MARK: the link is down) */

#endif
