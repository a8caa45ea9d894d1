/* fake_hv_d.h - fake_hv's D engine (fake_hv_d.c): the hypervisor's own VM behind the D control
 * commands, fired by synthetic firings. */
#ifndef FAKE_HV_D_H
#define FAKE_HV_D_H
#include <stdbool.h>
#include <stdint.h>
#include "stream_core.h"
#include "hvt_stream.h"

void fake_d_setup(uint64_t nfires, unsigned ncpus);
/* HVT_CTL_D_LOAD / HVT_CTL_D_RUN; HVT_CTL_ENOSYS for the others. */
int  fake_d_ctl(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out, uint32_t *out_len);
bool fake_d_arm(uint32_t id, uint32_t kind); /* a probe armed with HVT_PROBE_F_ACTION (its spec's kind) */
void fake_d_disarm(void);
bool fake_d_armed(void);
bool fake_d_done(void);                  /* a program was loaded and then unloaded */
/* Enqueue what is due (BEGIN's records, a batch of firings, END and a snapshot): true if
 * something was enqueued. */
bool fake_d_produce(struct stream_core *sc);
/* BEGIN's records sent from inside the request, ahead of its reply (the order another CPU of
 * the hypervisor can give them): what a reader must not miss. */
void fake_d_stream(struct stream_core *sc);

#endif
