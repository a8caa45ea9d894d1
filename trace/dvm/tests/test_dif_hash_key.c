/* test_dif_hash_key.c - the D state's hash of program-controlled keys (aggregation keys,
 * associative arrays, thread-locals) is keyed per load (dif_env.hash_key, trace/dvm/): keys
 * chosen to share one chain under one load's key spread out under another's, so a user feeding
 * keys to an administrator's program cannot build long chains without knowing the key. */
#include <stdio.h>
#include <string.h>
#include "dif.h"
#include "dif_impl.h"
#include "dif_asm.h"
#include "check.h"


static size_t no_read(void *ctx, uint64_t va, void *buf, size_t len, int user) { return 0; }

static struct dif_state *load(uint8_t *img, void *mem, size_t cap, uint64_t key)
{
    struct dif_env env = { .read = no_read, .hash_key = key };
    struct dif_state *st = 0;
    return dif_state_init(&st, mem, cap, img, 2, &env) == DIF_OK ? st : 0;
}

int main(void)
{
    a_new();
    a_agg(HVT_DIF_AGG_COUNT, 1, HVT_DIF_T_INT, 0, 0, 0, 0, 0, 1);
    a_i(HVT_DIF_OP_TCLR, 0, 0, 0, 0);
    a_end();
    a_probe(1, 1, 0);
    size_t len;
    uint8_t *img = a_build(&len);
    struct dif_verr e = { -1, -1, -1, "" };
    CHECK(dif_verify(img, len, &e) == DIF_OK, "image verifies: %s", e.reason);
    size_t cap = dif_state_size(img, 2);
    void *m1 = aligned_alloc(64, (cap + 63) & ~(size_t)63), *m2 = aligned_alloc(64, (cap + 63) & ~(size_t)63);
    struct dif_state *a = load(img, m1, cap, 0x0123456789abcdefull), *b = load(img, m2, cap, 0xfedcba9876543210ull);
    CHECK(a && b, "two loads");
    if (!a || !b)
        return 1;
    /* 64 keys that share one bucket of 1024 under load a (found by search, as an attacker
     * who knew the key would) */
    uint64_t keys[64];
    unsigned n = 0, want = dif_key_hash(a, 0, &(uint64_t){0}, 8) & 1023;
    for (uint64_t k = 1; n < 64 && k < (1ull << 32); k++)
        if ((dif_key_hash(a, 0, &k, 8) & 1023) == want)
            keys[n++] = k;
    CHECK(n == 64, "64 colliding keys under load a's key");
    /* under load b's key they spread: no bucket gets more than a few */
    unsigned counts[1024] = {0}, worst = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned bkt = dif_key_hash(b, 0, &keys[i], 8) & 1023;
        if (++counts[bkt] > worst)
            worst = counts[bkt];
    }
    CHECK(worst <= 4, "under another load's key the longest chain is %u of 64", worst);
    /* the same load hashes the same key the same way (lookups find what was inserted) */
    uint64_t k = 42;
    CHECK(dif_key_hash(a, 7, &k, 8) == dif_key_hash(a, 7, &k, 8), "deterministic within a load");
    CHECK(dif_key_hash(a, 7, &k, 8) != dif_key_hash(b, 7, &k, 8), "differs between loads");
    free(img);
    free(m1);
    free(m2);
    return check_summary("test_dif_hash_key");
}
