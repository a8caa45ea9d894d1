/* stable: DTrace's stable providers (proc, sched, lockstat) as dtrace-utils builds them: each
 * probe a set of rows, each row one underlying probe (an sdt tracepoint, an fbt or syscall
 * probe) with a condition and the stable probe's arguments written as D over the underlying
 * probe's own (arg0.., args[]), with psinfo_t / lwpsinfo_t by cast (the D compiler's
 * translators, host-tools/d/compile/d_xlate.c).
 *
 * Contract:
 *  - stable_rows() is the table, in provider and probe order; rows of one probe are
 *    consecutive. A row with `fallback` set is used only when none of the rows without it for
 *    the same probe matches a probe of the kernel (another kernel's way to the same event).
 *  - The D compiler compiles a clause on a stable probe once per row it uses, on the row's
 *    underlying probes, with the condition as a predicate ahead of the clause's own and
 *    args[i] / argI replaced by the row's expressions; probeprov.. probename are the stable
 *    probe's. The hypervisor sees only the underlying probes.
 *  - The probe list names each stable probe PROV:vmlinux::NAME (dtrace-utils' module) after
 *    every other probe (probe_list_add_stable).
 * Nothing here reads a kernel: which rows a kernel can take is the probe list's business.
 */
#ifndef HVT_STABLE_H
#define HVT_STABLE_H
#include <stddef.h>

#define STABLE_MAXARGS 4

typedef struct stable_row_s {
    const char *prov, *name;           /* proc, exec-success */
    const char *under;                 /* the underlying probe description */
    const char *pred;                  /* D over the underlying probe's arguments, or NULL */
    const char *args[STABLE_MAXARGS];  /* args[i] as D over the underlying probe's arguments */
    const char *types[STABLE_MAXARGS]; /* their types as dtrace -lv prints them */
    int fallback;                      /* see above; consecutive fallback rows are one choice */
    /* State kept between two probes (lockstat: the lock at a function's entry for its
     * return). A helper row runs its `set` assignments (D, over the underlying probe's
     * arguments, under its pred) at its probe whenever the program uses any row of the same
     * stable probe, with no clause of the user's; a row's `clear` assignments run at its probe
     * after every clause of the program. The thread-local variables they use are STABLE_VARS. */
    int helper;
    const char *set[2], *clear[2];
} stable_row;

/* The thread-locals helper rows keep (uint64_t each, declared by the compiler when a program
 * uses a row that needs them) */
#define STABLE_VARS { "__ls_lock", "__ls_btime", "__ls_bfrom", "__ls_stime", "__ls_rel", "__ls_slock", \
                      "__ls_srel", "__ls_sslock", "__ls_sstime", NULL }

const stable_row *stable_rows(size_t *n);
/* The rows of PROV:NAME: the index of the first and the count (0 if none). */
size_t stable_find(const char *prov, const char *name, size_t *first);
/* Is prov one of the stable providers? */
int stable_is_provider(const char *prov);
#endif
