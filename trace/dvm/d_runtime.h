/*
 * d_runtime.h - D programs on the probe engine: the host loads a verified program (dif.h), arms
 * probes with HVT_PROBE_F_ACTION, and every firing of those probes runs the program's clauses
 * for that probe id on the CPU that fired, in its exit. Records go out as HVT_MSG_D_REC
 * messages, aggregation snapshots as HVT_MSG_D_AGG (include/hvt_stream.h).
 *
 * Contract:
 *  - dprobe_init() once at the policy's start (registers the probe engine's action).
 *  - dprobe_ctl_handle(): the host's HVT_CTL_D_LOAD and HVT_CTL_D_RUN, inside the transport's
 *    poll (it neither sends nor waits for the link: BEGIN, END and snapshots are run by the
 *    first CPU to exit afterwards, dprobe_poll). A load is staged part by part, copied out of
 *    the receive path, verified whole (dif_verify) and only then used; it is refused while
 *    probes are armed, and waits for CPUs still inside a firing of the old program.
 *  - Loads are serialized: the host's parts and the guest's hypercall (dprobe_load_guest)
 *    share one try-lock, and a load that finds it held gets HVT_D_EBUSY. An image is copied
 *    into a buffer only the loader writes (never the one the live program runs from),
 *    verified there and published by a pointer swap; a part that adds nothing (e.g. a
 *    zero-length one after a complete load) is refused (HVT_D_EORDER).
 *  - dprobe_poll() at every exit: that CPU's records go out once they are one poll period old
 *    (or its buffer is half full), and pending BEGIN/END/snapshots run.
 *  - Nothing is lost silently: records the link dropped are counted (records_lost), the VM's
 *    own drops arrive as HVT_DREC_DROPS/DYNDROPS/AGGDROPS records.
 *  - Built-ins this layer supplies: args (entry/address: registers; return: offset and
 *    value; syscall: the user's), pid, tid, execname, curthread, errno (return probes: -rv
 *    for rv in [-4095, -1]), timestamp (guest TSC; nanoseconds when the image says the TSC
 *    rate), regs pc/sp. ppid, uid, walltimestamp and arg6..9 read 0 (not known here).
 */
#ifndef HVT_DPROBE_H
#define HVT_DPROBE_H
#include <stdint.h>
#include "hv_guest.h"

int  dprobe_init(void);
int  dprobe_ctl_handle(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out,
                       uint32_t *out_len);
void dprobe_poll(struct guest_regs *g);
/* A whole image in guest memory (the guest tool's hypercall): as the host's LOAD, in one go.
 * 0, or HVT_D_E*. */
int  dprobe_load_guest(uint64_t va, uint32_t len);
void dprobe_flush_all(void);               /* at power-off: every CPU's records */

#endif
