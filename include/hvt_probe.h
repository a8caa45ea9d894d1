/*
 * hvt_probe.h - probe firings as the hypervisor reports them and the host reads them: one
 * definition for both sides (trace/probe.c writes them, host-tools/probes reads them).
 *
 * A firing of a probe armed with HVT_PROBE_F_RECORD (DTrace's default action: report every
 * firing) is one struct hvt_probe_fire. Each CPU collects them and hands them on in blocks, in
 * the order they fired on that CPU, as
 *     HVT-FIREB <cpu> <count> <bytes>\n<bytes of count records>\n
 * on the hypervisor's debug port (the log a Bochs run keeps as e9.log). Counts per probe and
 * per process name are kept for every probe, recorded or not (HVT-PROBE lines at disarm).
 */
#ifndef HVT_PROBE_H_SHARED
#define HVT_PROBE_H_SHARED
#include <stdint.h>

#define HVT_PROBE_COMM_LEN 16

struct hvt_probe_fire {
    uint32_t id;                   /* the probe's id, as the host numbered it when arming */
    uint16_t cpu;
    uint16_t kind;                 /* 1 entry, 2 return, 3 address (struct hvt_probe_spec) */
    uint64_t tsc;                  /* the guest's TSC at the firing */
    uint64_t pc;                   /* the probe's site */
    uint32_t pid, tid;             /* the current task's tgid and pid (0: unknown) */
    uint64_t arg[6];               /* entry, address: RDI RSI RDX RCX R8 R9 (the C arguments);
                                      return: arg0 = the site's offset in the function,
                                      arg1 = RAX (the return value) */
    char comm[HVT_PROBE_COMM_LEN]; /* the process name, NUL-padded */
};
_Static_assert(sizeof(struct hvt_probe_fire) == 96, "wire size");

#define HVT_FIREB_TAG "HVT-FIREB "

#endif
