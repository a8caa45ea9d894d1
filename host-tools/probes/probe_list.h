/* probe_list: the probes one kernel offers, named the DTrace way (provider:module:function:name),
 * built from the kernel's own symbols (ksym, from the vmlinuz).
 * Contract: probe_list_build() numbers every probe deterministically for one kernel build:
 *   fbt:kernel:F:entry and fbt:kernel:F:return for every text function F (by address), then
 *   syscall:kernel:N:entry and :return for every 64-bit system call N (its __x64_sys_N).
 * A function that cannot be probed safely keeps its ids but carries the reason (listed with
 * -v); it never matches a description. Addresses are link-time; [lo, hi) is the function's
 * extent (up to the next symbol). probe_desc_match() matches DTrace descriptions with globs:
 * "p:m:f:n", "m:f:n", "f:n" or "n" (missing fields on the left match anything).
 * profile:::profile-N and profile:::tick-N are added on demand (probe_list_add_profile).
 * sdt:GROUP::EVENT (static tracepoints) are added by probe_list_add_sdt. */
#ifndef HVT_PROBE_LIST_H
#define HVT_PROBE_LIST_H
#include <stddef.h>
#include <stdint.h>
#include "ksym.h"
#include "sdt.h"
#include "stable.h"
#include "hvt_hypercall.h"

enum { PL_ENTRY = 1, PL_RETURN = 2, PL_ADDR = 3, PL_PROFILE = 4, PL_TICK = 5 };  /* struct hvt_probe_spec kinds */
#define PL_STABLE 0x80                            /* a stable provider's probe (stable.h): no spec of
                                                     its own, the D compiler uses its rows' probes */

/* Sites of one of the kernel's tracepoints in one module's code (kmod_sdt.h): armed with the
 * kernel's sites whenever the module is loaded. */
struct probe_modsite {
    const struct kmod_sdt_s *m;
    const struct sdt_point_s *p;                  /* the module's view of the tracepoint */
    const struct hvt_probe_spec *modpre;          /* kmod_layout's specs */
    struct probe_modsite *next;
};

typedef struct {
    uint32_t id;
    const char *provider, *module, *function, *name;
    uint8_t kind;
    uint64_t lo, hi;                              /* link-time; profile, tick: lo = period in ns */
    const char *unsafe;                           /* why it cannot be probed, or NULL */
    char *own;                                    /* a name this list allocated (profile, tick, addr) */
    uint32_t pid;                                 /* addr:pid<N>:: a user address of process N */
    uint8_t by_comm;                              /* addr:NAME:: of the first process so named */
    const sdt_point *sdt;                         /* sdt:GROUP::EVENT: the tracepoint (kind PL_ADDR,
                                                     one spec and its recipe per site) */
    const struct stable_row_s *stable;            /* PL_STABLE: its first row that is no helper
                                                     (stable.h): its argument types */
    uint8_t modprobe;                             /* fbt:MODULE:F:entry in a loadable module
                                                     (kmod.h): found by name in the guest */
    const struct hvt_probe_spec *modpre;          /* ... after these 3 specs (kmod_layout) */
    const struct kmod_sdt_s *modsdt;              /* with sdt: a module's own tracepoint
                                                     (kmod_sdt.h): its sites by function and
                                                     offset, its types in modsdt->btf */
    struct probe_modsite *msites;                 /* sdt: the kernel's tracepoint's sites in
                                                     modules (owned by the list) */
    const char *builtin;                          /* fbt:kernel:F built from these modules'
                                                     objects (kbuiltin.h), space-separated: the
                                                     module field matches them too */
} probe_desc;

typedef struct {
    probe_desc *p;
    size_t n;
    struct hvt_probe_spec *modpre;                /* kmod_layout's specs, when modules are listed */
    struct kmod_sdt_s **modsdt;                   /* the modules' own tracepoints (kmod_sdt.h) */
    size_t nmodsdt;
    void (*modsdt_free)(struct kmod_sdt_s *);     /* (kmod_sdt_free, set by who adds them) */
    char *builtin_pool;                           /* the builtin names' strings (kbuiltin.h) */
} probe_list;

int  probe_list_build(const ksym_table *syms, probe_list *out);
void probe_list_free(probe_list *l);
/* sdt:GROUP::EVENT for every tracepoint of t (by address of its struct tracepoint), after the
 * fbt and syscall probes: t must outlive l. A tracepoint whose sites are not all readable keeps
 * its id with the reason (sdt.h). Returns 0, or -1 on no memory. bpftrace's
 * tracepoint:GROUP:EVENT names the same probe (probe_desc_match). */
int  probe_list_add_sdt(probe_list *l, const sdt_table *t);
/* proc:vmlinux::NAME and sched:vmlinux::NAME (stable.h), after every probe l has: each keeps
 * its id; one for which no row's underlying probe is in l is listed with the reason and never
 * matches. Call it after the sdt probes, before any added on demand. 0, or -1 on no memory. */
int  probe_list_add_stable(probe_list *l);
/* Does probe d match description 'desc' (DTrace syntax, globs)? */
int  probe_desc_match(const probe_desc *d, const char *desc);
/* Does 'desc' name d, probeable or not (hvt -lv lists the others with their reason)? */
int  probe_desc_names(const probe_desc *d, const char *desc);
/* Is 'desc' well formed (at most 4 fields)? 0 or -1. */
int  probe_desc_check(const char *desc);
/* DTrace's profile provider makes its probes on demand: if 'desc' names one -
 * [profile:[:]:]profile-N or tick-N, N a rate (per second, or with the suffix hz) or a period
 * (suffix ns, us, ms, s, sec, m, min, h, hour, d, day) - append it to l (a new id) and return 1;
 * 0 if desc is no such name (or it is already listed); -1 on a rate of 0 or no memory. */
int  probe_list_add_profile(probe_list *l, const char *desc);
/* The addr provider, also on demand: addr:kernel:SYMBOL+OFF: or addr:kernel:0xADDRESS: (link
 * time; module may be empty) probes one instruction. It must start an instruction: the
 * function is decoded from its start (bytes of k) and an offset inside an instruction is
 * refused with the reason in err. addr:pid<N>:0xADDRESS: probes a user-space instruction of
 * process N only (the hypervisor decodes it when it arms it: the host has no copy of the
 * program). addr:NAME:0xADDRESS: does the same in the first process named NAME (its comm) that
 * runs with the address mapped. 1 added, 0 not an addr description, -1 refused. */
int  probe_list_add_addr(probe_list *l, const ksym_table *syms, const kimg *k, const char *desc,
                         char *err, size_t errlen);
/* The same; *id = the probe of that instruction, added or already listed (under whichever
 * name first made it: SYM+OFF or 0xADDRESS), 0 when desc is no addr description. */
int  probe_list_add_addr_id(probe_list *l, const ksym_table *syms, const kimg *k, const char *desc,
                            uint32_t *id, char *err, size_t errlen);

/* syscall:::return probes whose __x64_sys_ wrapper tail-calls the implementation (jmp to a
 * function start) are moved to that function's return sites, where RAX is the system call's
 * return value (the compat wrapper reaching the same function then fires them too).
 * Returns how many were moved. */
int  probe_list_follow_tail(probe_list *l, const ksym_table *syms, const kimg *k, char **descs, int nd);

#endif
