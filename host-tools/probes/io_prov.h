/* io_prov: DTrace's stable io provider on the kernel's block tracepoints, as dtrace-utils
 * builds it (libdtrace/dt_prov_io.c):
 *   io:vmlinux::start       sdt block_bio_queue (a bio is queued)
 *   io:vmlinux::done        sdt block_bio_complete (bio-based drivers: brd, md, ...) and
 *                           block_rq_complete (blk-mq requests: the request's bio; a request
 *                           without one - a flush - is skipped by the clause's predicate)
 *   io:vmlinux::wait-start  fbt::submit_bio_wait:entry (its bio)
 *   io:vmlinux::wait-done   its returns (D keeps the entry's bio in a thread-local for them:
 *                           host-tools/d/compile/d_xlate.c)
 * Every io probe but wait-done has arguments arg0 = arg1 = the struct bio *, arg2 = 0 (dtrace-utils' struct
 * file *, always 0 on Linux): the sdt recipes are rewritten per site (block_bio_complete's
 * second argument; block_rq_complete's request read at struct request's bio, from BTF) so
 * that the hypervisor computes the bio at every site. D reads args[0..2] as bufinfo_t,
 * devinfo_t and fileinfo_t (host-tools/d/compile/d_xlate.c).
 * Contract: probe_list_add_io(l, t, btf, io, err) appends the four probes (after the sdt
 * ones: t must be added first and outlive l, io too); a probe whose underlying tracepoint is
 * not offered keeps its id with the reason (never matches). 0, or -1 on no memory. */
#ifndef HVT_IO_PROV_H
#define HVT_IO_PROV_H
#include "sdt.h"
#include "btf.h"
#include "probe_list.h"

typedef struct {
    sdt_point pt[2];            /* start, done: the rewritten sites */
    char *why[4];               /* owned refusal reasons */
} io_table;

int  probe_list_add_io(probe_list *l, const sdt_table *t, const btf_info *btf, io_table *io,
                       char *err, size_t errlen);
void io_free(io_table *io);
/* A recipe whose argument 0 is the bio: from rule src of r (REG or LEA: plus disp, then a
 * load of 8 bytes at + load_off when load is set); arg1 the same, arg2 the constant 0.
 * 0, or -1 when the rule is neither. For io_prov's tests. */
int  io_recipe(const uint64_t r[3], unsigned src, int load, int32_t load_off, uint64_t out[3]);

#endif
