/* step.h - MTF stepping (step.c). Called from the hooks trace_main.c installs. */
#ifndef HVT_STEP_H
#define HVT_STEP_H
#include <stdbool.h>
#include <stdint.h>
#include "vcpu.h"

struct trace_stats { uint64_t steps, bytes; };
extern struct trace_stats trace_stats;

int  step_init(unsigned ncpu);
void step_request(bool on);
void step_post_exit(struct guest_regs *g, unsigned reason);
bool step_mtf_exit(struct guest_regs *g);
bool step_hlt_exit(struct guest_regs *g);
bool step_extint_exit(struct guest_regs *g);

#endif
