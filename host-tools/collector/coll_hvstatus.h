/*
 * coll_hvstatus.h - the hypervisor's trace status fields that came after the first layout
 * (include/hvt_stream.h struct hvt_trace_status: the IOMMU state, refused hypercalls), as
 * the key=value lines `hvt trace status --hv` shows.
 *
 * Contract: coll_hvstatus_format() writes, NUL-terminated into out[0..cap):
 *     hv_iommu=NAME            on | partial | FAILED | no-DMAR | unknown
 *     hv_iommu_units_on=N
 *     hv_iommu_units=N
 *     hv_hc_refused_total=N
 *     hv_hc_refused=F:N,F:N... only the function numbers with refusals ("none" when none)
 * when data_len covers the whole struct, and only "hv_iommu=not-reported\n" for a reply of
 * an older hypervisor (data_len < sizeof the struct). Returns the length written (cut at
 * cap - 1). Pure: host-tested by trace/tests/test_hvstatus.c.
 */
#ifndef HVT_COLL_HVSTATUS_H
#define HVT_COLL_HVSTATUS_H
#include <stddef.h>
#include <stdint.h>
#include "hvt_stream.h"

size_t coll_hvstatus_format(char *out, size_t cap, const struct hvt_trace_status *t, uint32_t data_len);
const char *coll_hvstatus_iommu_name(uint32_t state);

#endif
