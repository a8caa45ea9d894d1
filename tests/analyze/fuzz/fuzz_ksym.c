/* libFuzzer target: the kallsyms finder/decoder over arbitrary image bytes, then lookups. */
#include "ksym.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    util_err_quiet = 1;
    ksym_table t;
    if (ksym_parse("fuzz", data, size, &t) == 0) {
        uint64_t off, sum = 0;
        for (uint32_t i = 0; i < t.count; i++) {
            sum += strlen(ksym_name(&t, i));
            int64_t s = ksym_lookup(&t, t.syms[i].addr + 1, &off);
            sum += (uint64_t)s + off;
        }
        if (t.count) ksym_find(&t, ksym_name(&t, t.count - 1));
        (void)sum;
        ksym_free(&t);
    }
    return 0;
}
