/*
 * test_hvstatus.c - host unit test of the trace status's appended fields, end to end on the
 * host side: trace/trace_ctl.c (built -DHVT_HOST, as fake_hv runs it) answers STATUS with
 * the whole struct, trace_ctl_refusals() fills the per-function refusal counts (saturating)
 * and their total, and the collector's printer (host-tools/collector/coll_hvstatus.c) turns
 * the reply into the key=value lines `hvt trace status --hv` shows; a reply of the first
 * layout's 64 bytes (an older hypervisor) prints "not-reported".
 * Prints failed checks and "test_hvstatus: N passed, N failed".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "trace_ctl.h"
#include "coll_hvstatus.h"
#include "check.h"


static uint64_t refused_model(unsigned f)
{
    return f == 3 ? 7 : f == 4 ? 0x100000005ull : f == 15 ? 1 : 0;
}
static void counters(struct hvt_trace_status *st)
{
    st->chunks_sent = 9;
    st->iommu = HVT_IOMMU_NO_DMAR;
    st->iommu_units_on = 0;
    st->iommu_units = 0;
    trace_ctl_refusals(st, refused_model);
}
static const struct trace_ctl_ops ops = { .counters = counters };

int main(void)
{
    trace_ctl_set_ops(&ops);
    uint8_t out[HVT_CTL_MAX_DATA];
    uint32_t len = 0;
    int rc = trace_ctl_handle(HVT_CTL_TRACE_STATUS, NULL, 0, out, &len);
    CHECK(rc == HVT_CTL_OK && len == sizeof(struct hvt_trace_status) && len == 144,
          "STATUS: rc %d, %u bytes", rc, len);
    struct hvt_trace_status st;
    memcpy(&st, out, sizeof st);
    CHECK(st.chunks_sent == 9 && st.iommu == HVT_IOMMU_NO_DMAR, "counters filled the reply");
    CHECK(st.hc_refused[3] == 7 && st.hc_refused[4] == UINT32_MAX && st.hc_refused[15] == 1 &&
          st.hc_refused[0] == 0, "per function, saturating: %u %u %u", st.hc_refused[3],
          st.hc_refused[4], st.hc_refused[15]);
    CHECK(st.hc_refused_total == 7 + 0x100000005ull + 1, "total %llu", (unsigned long long)st.hc_refused_total);

    char txt[512];
    coll_hvstatus_format(txt, sizeof txt, &st, len);
    const char *want = "hv_iommu=no-DMAR\nhv_iommu_units_on=0\nhv_iommu_units=0\n"
                       "hv_hc_refused_total=4294967309\nhv_hc_refused=3:7,4:4294967295,15:1\n";
    CHECK(!strcmp(txt, want), "printed:\n%s", txt);
    printf("%s", txt);

    st.iommu = HVT_IOMMU_PARTIAL;
    st.iommu_units_on = 1;
    st.iommu_units = 2;
    memset(st.hc_refused, 0, sizeof st.hc_refused);
    st.hc_refused_total = 0;
    coll_hvstatus_format(txt, sizeof txt, &st, len);
    CHECK(!strcmp(txt, "hv_iommu=partial\nhv_iommu_units_on=1\nhv_iommu_units=2\n"
                       "hv_hc_refused_total=0\nhv_hc_refused=none\n"), "printed:\n%s", txt);
    st.iommu = 99;
    coll_hvstatus_format(txt, sizeof txt, &st, len);
    CHECK(!strncmp(txt, "hv_iommu=unknown\n", 17), "unknown state: %s", txt);
    coll_hvstatus_format(txt, sizeof txt, &st, HVT_TRACE_STATUS_V1_LEN);
    CHECK(!strcmp(txt, "hv_iommu=not-reported\n"), "older hypervisor: %s", txt);
    char small[24];
    size_t n = coll_hvstatus_format(small, sizeof small, &st, len);
    CHECK(n == sizeof small - 1 && strlen(small) == n, "cut at the buffer: %zu", n);
    return check_summary("test_hvstatus");
}
