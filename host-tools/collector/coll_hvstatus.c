/* coll_hvstatus.c - see coll_hvstatus.h. */
#include <stdarg.h>
#include <stdio.h>
#include "coll_hvstatus.h"

const char *coll_hvstatus_iommu_name(uint32_t state)
{
    switch (state) {
    case HVT_IOMMU_ON:      return "on";
    case HVT_IOMMU_PARTIAL: return "partial";
    case HVT_IOMMU_FAILED:  return "FAILED";
    case HVT_IOMMU_NO_DMAR: return "no-DMAR";
    default:                return "unknown";
    }
}

static void add(char *out, size_t cap, size_t *n, const char *fmt, ...)
{
    if (*n + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *n, cap - *n, fmt, ap);
    va_end(ap);
    if (k > 0)
        *n = *n + (size_t)k < cap ? *n + (size_t)k : cap - 1;
}

size_t coll_hvstatus_format(char *out, size_t cap, const struct hvt_trace_status *t, uint32_t data_len)
{
    size_t n = 0;
    if (cap == 0)
        return 0;
    out[0] = 0;
    if (data_len < sizeof *t) {
        add(out, cap, &n, "hv_iommu=not-reported\n");
        return n;
    }
    add(out, cap, &n, "hv_iommu=%s\nhv_iommu_units_on=%u\nhv_iommu_units=%u\nhv_hc_refused_total=%llu\n"
        "hv_hc_refused=", coll_hvstatus_iommu_name(t->iommu), t->iommu_units_on, t->iommu_units,
        (unsigned long long)t->hc_refused_total);
    unsigned listed = 0;
    for (unsigned f = 0; f < HVT_HC_REFUSED_FUNCS; f++)
        if (t->hc_refused[f])
            add(out, cap, &n, "%s%u:%u", listed++ ? "," : "", f, t->hc_refused[f]);
    add(out, cap, &n, "%s\n", listed ? "" : "none");
    return n;
}
