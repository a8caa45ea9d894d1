/* libFuzzer target: the hypervisor's verifier on any bytes; an image it accepts is run (all of
 * its probes, 2 CPUs, a fake guest memory with holes), drained and snapshotted, as the
 * hypervisor would. Nothing may crash, read out of bounds or loop. */
#include "dif.h"
#include <stdlib.h>
#include <string.h>

static size_t fake_read(void *ctx, uint64_t va, void *out, size_t len, int user)
{
    (void)ctx; (void)user;
    static const char page[4096] = "a guest string";
    if (va < 0x10000 || va >= 0x10000 + sizeof page)
        return 0;
    size_t n = 0x10000 + sizeof page - va < len ? 0x10000 + sizeof page - va : len;
    memcpy(out, page + (va - 0x10000), n);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0;
    uint8_t *img = aligned_alloc(8, (size + 8) & ~(size_t)7);
    memcpy(img, data, size);
    struct dif_verr e;
    if (dif_verify(img, size, &e) == DIF_OK) {
        size_t need = dif_state_size(img, 2);
        void *mem = need <= (64u << 20) ? aligned_alloc(64, (need + 63) & ~(size_t)63) : NULL;
        struct dif_env env = { .read = fake_read };
        struct dif_state *st;
        if (mem && dif_state_init(&st, mem, need, img, 2, &env) == DIF_OK) {
            const struct hvt_dif_hdr *h = (const void *)img;
            const struct hvt_dif_probe *pr = (const void *)(img + h->off_probes);
            static uint8_t buf[1 << 16];
            for (uint32_t i = 0; i < h->nprobes && i < 64; i++)
                for (unsigned cpu = 0; cpu < 2; cpu++) {
                    struct dif_firing f = { .tsc = i, .execname = "fuzz", .execname_max = 16 };
                    f.v[HVT_DIF_V_ARG0] = 0x10000 + i;
                    f.v[HVT_DIF_V_ARG0 + 1] = i;
                    dif_fire(st, cpu, pr[i].id, &f);
                }
            for (unsigned cpu = 0; cpu < 2; cpu++) {
                while (dif_drain(st, cpu, buf, sizeof buf) > 0)
                    ;
                uint32_t cur = 0;
                while (dif_agg_snapshot(st, cpu, buf, sizeof buf, &cur) > 0)
                    ;
            }
        }
        free(mem);
    }
    free(img);
    return 0;
}
