/* hvt_abi.c - the guest-visible and wire ABI constants the Python scripts use (the fuzz seed
 * generators), for build/gen/hvt_abi.py (tools/gen.mk): compiled with -S, never linked; each
 * "->NAME value" line of the output becomes "NAME = value" (tools/gen-asm-inc.sh), as the
 * assembly's constants do (vmm/include/hv_asm.h). %P rather than hv_asm.h's %c: it also takes
 * 64-bit immediates (HVT_HC_MAGIC). Values come out signed: HVT_PROBE_NOWAIT (bit 63) is
 * negative in Python; mask it (% 2**64) where it is used as unsigned. */
#include "hvt_hypercall.h"
#include "hvt_stream.h"

#define ABI_CONST(name, value) __asm__ volatile("\n.ascii \"->" name " %P0\"" :: "i"((long long)(value)))
#define C(name) ABI_CONST(#name, name)       /* #name here: before a macro's expansion */

void hvt_abi_constants(void);
void hvt_abi_constants(void)
{
    C(HVT_HC_MAGIC);
    C(HVT_HC_VERSION);
    C(HVT_HC_HV_RANGE);
    C(HVT_HC_MARK);
    C(HVT_HC_PROBE);
    C(HVT_HC_CMD);
    C(HVT_HC_OK);
    C(HVT_HC_EINVAL);
    C(HVT_HC_EBUSY);
    C(HVT_HC_ENOSYS);

    C(HVT_HC_PROBE_DISARM_LOG);
    C(HVT_HC_PROBE_ARM_CFG);
    C(HVT_HC_PROBE_STATS);
    C(HVT_HC_PROBE_ARM_SPECS);
    C(HVT_HC_PROBE_DISARM);
    C(HVT_HC_PROBE_LOAD_D);
    C(HVT_PROBE_SPECS_MAX);
    C(HVT_PROBE_NOWAIT);
    C(HVT_PROBE_KIND_ENTRY);
    C(HVT_PROBE_KIND_RETURN);
    C(HVT_PROBE_KIND_ADDR);
    C(HVT_PROBE_KIND_PROFILE);
    C(HVT_PROBE_KIND_TICK);
    C(HVT_PROBE_KIND_ARGS);
    C(HVT_PROBE_F_SDT);
    C(HVT_PROBE_KIND_MODINFO);
    C(HVT_PROBE_KIND_MODHOOK);
    C(HVT_PROBE_F_MODULE);
    C(HVT_PROBE_F_RECORD);
    C(HVT_MODHOOK_LOAD);
    C(HVT_MODHOOK_FREE);
    C(HVT_PROBE_F_LINKTIME);
    ABI_CONST("HVT_PROBE_SPEC_SIZE", sizeof(struct hvt_probe_spec));

    C(HVT_HC_CMD_TAKE);
    C(HVT_HC_CMD_READ);
    C(HVT_HC_CMD_STARTED);
    C(HVT_HC_CMD_MAY_RUN);
    C(HVT_HC_CMD_EXITED);
    C(HVT_HC_CMD_READ_LEN);

    C(HVT_STREAM_MAGIC);
    C(HVT_STREAM_VERSION);
    C(HVT_STREAM_TAG_LEN);
    C(HVT_STREAM_DEFAULT_PORT);
    C(HVT_CPU_NONE);
    ABI_CONST("HVT_MSG_HDR_SIZE", sizeof(struct hvt_msg_hdr));
    C(HVT_MSG_WELCOME);
    C(HVT_MSG_ACK);
    C(HVT_MSG_CTL_REQ);
    C(HVT_CTL_PING);
    C(HVT_CTL_STATUS);
    C(HVT_CTL_TRACE_STATUS);
}
