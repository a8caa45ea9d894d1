/*
 * hvt_probe.h - probe firings as the hypervisor reports them and the host reads them: one
 * definition for both sides (trace/probe/probe.c writes them, host-tools/probes reads them).
 *
 * A firing of a probe armed with HVT_PROBE_F_RECORD (DTrace's default action: report every
 * firing) is one struct hvt_probe_fire. Each CPU collects them and hands them on in blocks, in
 * the order they fired on that CPU, when its buffer fills, at its first exit one poll period
 * (trace.h TRACE_POLL_TICKS of host TSC, well under a second) after the first one it holds,
 * and at a disarm: over the stream as HVT_MSG_PROBE
 * messages (include/hvt_stream.h) when the hypervisor has one, else as
 *     HVT-FIREB <cpu> <count> <bytes>\n<bytes of count records>\n
 * on the hypervisor's debug port (the log a Bochs run keeps as e9.log). Counts per probe and
 * per process name are kept for every probe, recorded or not (HVT-PROBE lines at disarm).
 * Nothing is dropped silently: records the stream had to drop (a failed link) are counted in
 * struct hvt_probe_status.records_lost, and records = received + lost once every CPU has
 * handed its records on.
 */
#ifndef HVT_PROBE_H_SHARED
#define HVT_PROBE_H_SHARED
#include <stdint.h>

#define HVT_PROBE_COMM_LEN 16

struct hvt_probe_fire {
    uint32_t id;                   /* the probe's id, as the host numbered it when arming */
    uint16_t cpu;
    uint16_t kind;                 /* 1 entry, 2 return, 3 address, 4 profile, 5 tick
                                      (struct hvt_probe_spec) */
    uint64_t tsc;                  /* the guest's TSC at the firing */
    uint64_t pc;                   /* the probe's site; profile, tick: the guest's RIP */
    uint32_t pid, tid;             /* the current task's tgid and pid (0: unknown) */
    uint64_t arg[6];               /* entry, address: RDI RSI RDX RCX R8 R9 (the C arguments);
                                      return: hvt_probe_return_args() */
    char comm[HVT_PROBE_COMM_LEN]; /* the process name, NUL-padded */
};
_Static_assert(sizeof(struct hvt_probe_fire) == 96, "wire size");

#define HVT_FIREB_TAG "HVT-FIREB "

/* A return probe's arguments, as records and D programs see them. A system call's return
 * (armed with HVT_PROBE_F_SYSARGS) is DTrace's: arg0 = arg1 = the return value, so that
 * `sum(arg0)` at syscall::read:return adds up the bytes read. Any other return (fbt) keeps
 * the site's offset in the function in arg0 and the return value (RAX) in arg1, as DTrace's
 * fbt does. One definition for the engine and the host's fake hypervisor, so both fill
 * them alike. */
static inline void hvt_probe_return_args(int syscall, uint64_t site_off, uint64_t rax, uint64_t arg[6])
{
    arg[0] = syscall ? rax : site_off;
    arg[1] = rax;
    arg[2] = arg[3] = arg[4] = arg[5] = 0;
}

/* errno at a return probe: Linux returns -1 .. -4095 (its MAX_ERRNO) for errors, so a return
 * value there is -errno; anything else leaves errno 0. */
#define HVT_PROBE_ERRNO_MAX 4095u
static inline uint64_t hvt_probe_return_errno(uint64_t rax)
{
    return rax >= (uint64_t)-HVT_PROBE_ERRNO_MAX ? -rax : 0;
}

/*
 * A firing with a stack (profile-N and tick-N samples, and probes armed with
 * HVT_PROBE_F_STACK): struct hvt_probe_sample, then stack_len bytes of the guest's stack from
 * rsp upwards, then zeros up to a multiple of 8. The kernel stack is copied up to the top of
 * its 16 KiB-aligned stack area, at most HVT_PROBE_STACK_MAX bytes; a user stack (the sample
 * hit user mode) HVT_PROBE_USTACK_MAX bytes. The host unwinds kernel stacks with the image's
 * ORC tables (host-tools/stacks). Samples travel as HVT_MSG_PROBE_STACK messages (several
 * samples of one CPU each), or on the debug port as
 *     HVT-STACKB <cpu> <count> <bytes>\n<bytes>\n
 */
#define HVT_PROBE_STACK_MAX  8192u
#define HVT_PROBE_USTACK_MAX 1024u
#define HVT_STACKB_TAG "HVT-STACKB "
struct hvt_probe_sample {
    struct hvt_probe_fire fire;
    uint64_t rsp, rbp;             /* the guest's at the sample */
    uint64_t rdi, rdx, r10, r13;   /* the registers ORC entries of entry code may be based on */
    uint16_t cs;                   /* the guest's CS selector: CPL = cs & 3 */
    uint16_t flags;                /* 0 (reserved) */
    uint32_t stack_len;            /* stack bytes that follow (0: not readable) */
};
_Static_assert(sizeof(struct hvt_probe_sample) == 152, "wire size");

/* A firing's hypervisor time split into the phases of DTrace's performance model, counted per
 * probe while the accounting is on (HVT_HC_PROBE_COST, HVT_CTL_PROBE_COST): TSC ticks (in
 * Bochs, instructions). */
enum hvt_probe_phase {
    HVT_PH_EXIT = 0,     /* the VM exit and entry: vmm/'s stub and dispatch, the per-exit polls,
                            the displaced instruction emulated or stepped over */
    HVT_PH_LOOKUP,       /* the probe found by its address, the process that fired it, counts */
    HVT_PH_CLAUSES,      /* the enabling walk: the D program's probe entry, each clause's setup
                            and end (none for a probe without a D action) */
    HVT_PH_PREDICATE,    /* a clause's predicate: its code up to the branch to its RET */
    HVT_PH_INSNS,        /* the other D instructions (arithmetic, variables, loads, keys) */
    HVT_PH_BUILTINS,     /* built-in variables (execname, pid, args, timestamp, ...) */
    HVT_PH_SUBR,         /* subroutines: strings, copyin, stacks as keys, speculations */
    HVT_PH_AGG,          /* aggregation updates */
    HVT_PH_RECORD,       /* records: trace()/printf() data, the firing record, their commit */
    HVT_PH_COUNT
};
#define HVT_PH_NAMES { "exit", "lookup", "clauses", "predicate", "insns", "builtins", "subr", \
                       "agg", "record" }

/* HVT_CTL_PROBE_COST's argument, and its reply: the probes armed now by id (a return probe's
 * sites together), their firings timed and the ticks of each phase, as many as fit the reply
 * (total: how many ids there are). Counts start at 0 when a probe is armed. */
enum { HVT_PROBE_COST_OFF = 0, HVT_PROBE_COST_ON = 1, HVT_PROBE_COST_GET = 2 };
struct hvt_probe_cost_head {
    uint32_t on;                   /* the accounting is on */
    uint32_t n, total;             /* entries that follow; ids armed */
    uint32_t pad;
};
struct hvt_probe_cost {
    uint32_t id, sites;
    uint64_t fires;
    uint64_t ticks[HVT_PH_COUNT];
    /* of the firings: in another task than their CPU's last timed firing (the task's name and
     * ids found anew); of another probe id than it (a key made of the probe's name changes).
     * What the performance model (hvt -e) takes from a counting run besides its rate. */
    uint64_t newtask, switched;
};
_Static_assert(sizeof(struct hvt_probe_cost_head) == 16, "wire size");
_Static_assert(sizeof(struct hvt_probe_cost) == 104, "wire size");

/* Reply data of the HVT_CTL_PROBE_* commands. The counters run from the hypervisor's start. */
#define HVT_CTL_PROBE_SPECS 42     /* specs in one ARM request (HVT_CTL_MAX_DATA / 24) */
struct hvt_probe_status {
    uint32_t specs_taken;          /* ARM: this request's specs accepted, in order */
    int32_t  error;                /* ARM: why the next one was not (HVT_PROBE_E*), or 0 */
    uint32_t sites_armed;          /* ARM: probe sites this request armed */
    uint32_t armed;                /* probe sites armed now (after the command) */
    uint64_t fires;                /* firings, recorded or not */
    uint64_t records;              /* firing records and samples made (ARM: before it armed) */
    uint64_t records_lost;         /* of them, dropped by the stream (a failed link) */
    uint64_t exits;                /* VM exits the engine caused (#BP, step-over MTF, EPT) */
    uint64_t ept_exits;            /* of them, EPT violations (the guest touching probed pages) */
    int64_t  slide;                /* the kernel's KASLR slide (runtime - link-time), 0 unknown */
};
_Static_assert(sizeof(struct hvt_probe_status) == 64, "wire size");
#define HVT_PROBE_ENOMEM  (-1)     /* no room for another probe or shadow page */
#define HVT_PROBE_EFAULT  (-2)     /* the address is not mapped kernel text */
#define HVT_PROBE_ENOSITE (-3)     /* a return probe found no return site */
#define HVT_PROBE_EINVAL  (-4)     /* a malformed spec (kind, range, link-time before KASLR is known) */

#endif
