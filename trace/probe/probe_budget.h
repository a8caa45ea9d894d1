/*
 * probe_budget.h - how much guest code one arming request may make the probe engine decode:
 * an HVT_HC_PROBE hypercall (RBX = 4, up to HVT_PROBE_SPECS_MAX specs) or one host
 * HVT_CTL_PROBE_ARM command. A return probe decodes its whole function (up to
 * PROBE_RETURN_SPAN_MAX bytes) inside the exit, so without a cap one request could keep a CPU
 * in VMX root for as long as decoding a gigabyte takes.
 *
 * Contract (pure: no state, no hypervisor call):
 *  - probe_spec_cost(sp): bytes the engine may decode to arm sp: a return probe's span
 *    (capped at PROBE_RETURN_SPAN_MAX: longer ones are refused without decoding), a module
 *    probe's PROBE_MODULE_SPEC_COST, else one instruction.
 *  - probe_budget_take(&left, sp, first): whether sp may still be armed in this request; if so
 *    its cost is taken from left. The request's first spec is always taken (a request always
 *    makes progress: one spec costs at most PROBE_RETURN_SPAN_MAX <= PROBE_DECODE_MAX); a later
 *    one only if its cost fits what is left. A request that stops early says so (the
 *    hypercall: HVT_HC_EBUSY with RCX = specs taken; the host command: specs_taken below the
 *    batch, no error) and the caller sends the rest again.
 */
#ifndef HVT_PROBE_BUDGET_H
#define HVT_PROBE_BUDGET_H
#include <stdint.h>
#include <stdbool.h>
#include "hvt_hypercall.h"

#define PROBE_RETURN_SPAN_MAX (1u << 20)   /* a function's extent, at most (return probes) */
#define PROBE_DECODE_MAX      (1u << 20)   /* bytes decoded per request, at most */
/* A module probe reads the module list and the module's symbols (24 bytes and a name each)
 * instead of decoding: counted as 64 KiB, so one request looks up at most 16. */
#define PROBE_MODULE_SPEC_COST (1u << 16)

uint64_t probe_spec_cost(const struct hvt_probe_spec *sp);
bool     probe_budget_take(uint64_t *left, const struct hvt_probe_spec *sp, bool first);

#endif
