/*
 * hv_transport.h - what a tracing policy needs of a transport, and nothing more: the image
 * (hv_image.c) hands the transport layer's table to the policy layer, so neither names the
 * other and a build without a transport is simply an empty table.
 *
 * Contract:
 *  - Every member may be NULL (no transport linked in, or none configured): the policy then
 *    uses its fallback (the debug port) and has no host control.
 *  - send() enqueues one sequenced stream message of 'type' (include/hvt_stream.h) from CPU
 *    'cpu'; it returns 0 when accepted, HV_TRANSPORT_LINK_FAILED when the link has failed (the
 *    message is dropped and counted by the transport: it reports the loss once the link is
 *    back), another negative value when it cannot carry the message at all. A slow link makes
 *    it wait: nothing is dropped silently.
 *  - The control handler runs inside the transport's poll with its lock held: it must not
 *    call send() and must not wait; it fills the reply in 'out'.
 */
#ifndef HVT_HV_TRANSPORT_H
#define HVT_HV_TRANSPORT_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define HV_TRANSPORT_LINK_FAILED (-2)

typedef int (*hv_transport_ctl_fn)(uint16_t cmd, const uint8_t *args, uint32_t len,
                                   uint8_t *out, uint32_t *out_len);

struct hv_transport {
    bool (*active)(void);
    int  (*send)(unsigned cpu, uint16_t type, const void *data, size_t len);
    bool (*link_failed)(void);
    void (*set_ctl_handler)(hv_transport_ctl_fn fn);
};

#endif
