/* libFuzzer target: the BTF parser and every lookup the tools make on its result. */
#include "btf.h"

static void each(const btf_member *m, void *ctx) { *(uint64_t *)ctx += m->bit_offset + m->size; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    util_err_quiet = 1;
    btf_info b;
    if (btf_parse(&b, "fuzz", data, size) != 0) return 0;
    static const char *const structs[] = {"task_struct", "mm_struct", "pcpu_hot"};
    static const char *const fields[] = {"pid", "tgid", "comm", "mm", "pgd", "current_task"};
    uint64_t sum = 0;
    char buf[256];
    for (unsigned s = 0; s < 3; s++) {
        uint32_t id = btf_find_struct(&b, structs[s]);
        if (!id) continue;
        for (unsigned f = 0; f < 6; f++) {
            btf_member m;
            if (btf_member_find(&b, id, fields[f], &m) == 0) {
                btf_type_str(&b, m.type_id, buf, sizeof buf);
                sum += m.size;
            }
        }
        btf_members_each(&b, id, each, &sum);
    }
    for (uint32_t id = 1; id < b.ntypes && id < 4096; id++) {
        sum += btf_type_size(&b, id);
        btf_type_str(&b, id, buf, sizeof buf);
    }
    sum += (uint64_t)btf_has_var(&b, "current_task");
    (void)sum;
    btf_free(&b);
    return 0;
}
