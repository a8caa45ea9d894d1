/*
 * guest_cmd.h - a command line for the guest tool to run (hvt -c): a mailbox between the host's
 * HVT_CTL_D_CMD requests and the guest agent's HVT_HC_CMD hypercalls (include/hvt_stream.h,
 * include/hvt_hypercall.h).
 *
 * Contract:
 *  - One command at a time: POSTED -> TAKEN -> STARTED (the agent holds it before exec and
 *    says its pid) -> RUNNING (the host said go and the agent saw it) -> EXITED; CANCELLED
 *    (the host is done with it) from any of those. A new SET is refused while one is live.
 *  - The hypervisor only stores and hands over bytes and numbers: it never writes guest
 *    memory (the agent reads the text 24 bytes per hypercall), never interprets the text, and
 *    checks every state change (a hypercall for another seq or out of order is refused).
 *  - Guest-supplied numbers (pid, wait status) are reported as the agent said them: the
 *    guest is not trusted, so they are information for the host, never used here.
 *  - dcmd_ctl_handle() runs in the transport's poll; the hypercall on any CPU: one lock.
 */
#ifndef HVT_DCMD_H
#define HVT_DCMD_H
#include <stdint.h>
#include "hv_exit.h"

int dcmd_init(enum hv_hc_priv priv);   /* registers the hypercall for callers of priv: 0 or -1 */
int dcmd_ctl_handle(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out,
                    uint32_t *out_len);

#endif
