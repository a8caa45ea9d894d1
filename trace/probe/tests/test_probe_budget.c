/* test_probe_budget.c - the decode work one arming request may cost (trace/probe/probe_budget.c):
 * the worst request, 1024 return probes each spanning 1 MiB (a gigabyte decoded inside one
 * HVT_HC_PROBE exit), must stop once PROBE_DECODE_MAX bytes are spent, always take its first
 * spec, and be completed by requests for the rest; entry probes (one instruction each) all fit
 * one request. */
#include <stdio.h>
#include "probe_budget.h"
#include "check.h"


static struct hvt_probe_spec specs[HVT_PROBE_SPECS_MAX];

/* Requests as the guest tool sends them (the rest after an early stop) until every spec is
 * taken: how many requests, and the most one decoded. */
static void run(unsigned n, unsigned *requests, uint64_t *worst)
{
    unsigned at = 0;
    *requests = 0;
    *worst = 0;
    while (at < n && *requests < 10 * n) {
        uint64_t left = PROBE_DECODE_MAX, cost = 0;
        unsigned taken = 0;
        for (; at + taken < n; taken++) {
            if (!probe_budget_take(&left, &specs[at + taken], taken == 0))
                break;
            cost += probe_spec_cost(&specs[at + taken]);
        }
        at += taken;
        ++*requests;
        if (cost > *worst)
            *worst = cost;
        if (!taken)
            break;                         /* no progress: the loop would never end */
    }
    CHECK(at == n, "only %u of %u specs ever taken", at, n);
}

int main(void)
{
    const uint64_t text = 0xffffffff81000000ull;
    unsigned req;
    uint64_t worst;
    for (unsigned i = 0; i < HVT_PROBE_SPECS_MAX; i++)
        specs[i] = (struct hvt_probe_spec){ i + 1, 2, text, text + (1u << 20) };
    run(HVT_PROBE_SPECS_MAX, &req, &worst);
    CHECK(worst <= PROBE_DECODE_MAX, "1024 return probes of 1 MiB: one request decodes %llu bytes (cap %u)",
          (unsigned long long)worst, PROBE_DECODE_MAX);
    CHECK(req == HVT_PROBE_SPECS_MAX, "1024 return probes of 1 MiB: %u requests, want one each", req);

    for (unsigned i = 0; i < HVT_PROBE_SPECS_MAX; i++)
        specs[i] = (struct hvt_probe_spec){ i + 1, 2, text, text + (400u << 10) };
    run(HVT_PROBE_SPECS_MAX, &req, &worst);
    CHECK(worst <= PROBE_DECODE_MAX && req == 512, "400 KiB functions: %u requests (want 512, two each), worst %llu",
          req, (unsigned long long)worst);

    for (unsigned i = 0; i < HVT_PROBE_SPECS_MAX; i++)
        specs[i] = (struct hvt_probe_spec){ i + 1, 1, text + 16 * i, 0 };
    run(HVT_PROBE_SPECS_MAX, &req, &worst);
    CHECK(req == 1, "1024 entry probes: %u requests, want 1", req);

    /* a span past the limit costs the limit (it is refused without decoding) */
    struct hvt_probe_spec big = { 1, 2, 0xffff800000000000ull, 0xffff800000000000ull + (1ull << 40) };
    CHECK(probe_spec_cost(&big) == PROBE_RETURN_SPAN_MAX, "a 1 TiB span costs %llu",
          (unsigned long long)probe_spec_cost(&big));
    /* the first spec of a request is taken whatever is left */
    uint64_t left = 0;
    CHECK(probe_budget_take(&left, &specs[0], true), "the first spec refused");
    return check_summary("test_probe_budget");
}
