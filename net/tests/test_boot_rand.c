/* test_boot_rand.c - the boot id's hardware randomness (vmm/hv_rand.c, net/boot_rand.c) on the host: RDSEED
 * first, RDRAND next, each retried; a machine without either gives nothing, and a keyed
 * (authenticated) stream is then refused rather than started on a guessable boot id. */
#include <stdio.h>
#include <string.h>
#include "boot_rand.h"
#include "hv_rand.h"
#include "check.h"


/* A fake instruction: fails 'fail_first' times, then succeeds with a counter. */
struct fake { int present, fail_first, calls; uint64_t next; };
static struct fake seed, rnd;
static bool fake_step(struct fake *f, uint64_t *v)
{
    f->calls++;
    if (f->fail_first > 0) { f->fail_first--; return false; }
    *v = f->next++;
    return true;
}
static bool fake_rdseed(uint64_t *v) { return fake_step(&seed, v); }
static bool fake_rdrand(uint64_t *v) { return fake_step(&rnd, v); }

static unsigned run(int seed_present, int seed_fail, int rnd_present, int rnd_fail, uint64_t out[BOOT_RAND_WORDS])
{
    seed = (struct fake){ seed_present, seed_fail, 0, 0x5eed0000 };
    rnd = (struct fake){ rnd_present, rnd_fail, 0, 0x7a7d0000 };
    struct hv_rand_src s = { seed_present ? fake_rdseed : 0, rnd_present ? fake_rdrand : 0 };
    memset(out, 0, BOOT_RAND_WORDS * sizeof out[0]);
    return hv_rand_gather(&s, out, BOOT_RAND_WORDS);
}

int main(void)
{
    uint64_t w[BOOT_RAND_WORDS];
    CHECK(run(1, 0, 1, 0, w) == BOOT_RAND_WORDS && w[0] == 0x5eed0000 && rnd.calls == 0, "RDSEED first");
    CHECK(run(1, HV_RAND_RETRIES - 1, 0, 0, w) == BOOT_RAND_WORDS, "RDSEED retried up to %d times", HV_RAND_RETRIES);
    CHECK(run(1, 1000, 1, 0, w) == BOOT_RAND_WORDS && w[0] == 0x7a7d0000, "RDSEED exhausted: RDRAND");
    CHECK(run(0, 0, 1, HV_RAND_RETRIES - 1, w) == BOOT_RAND_WORDS, "RDRAND retried");
    CHECK(run(0, 0, 1, 1000, w) == 0 && rnd.calls <= HV_RAND_RETRIES * BOOT_RAND_WORDS, "RDRAND failing: nothing, bounded tries (%d)", rnd.calls);
    CHECK(run(0, 0, 0, 0, w) == 0, "no hardware RNG: nothing");
    /* the policy: authenticated stream needs all words; an unauthenticated one may go on */
    CHECK(!boot_rand_may_start(true, 0), "auth on, no RNG: refused");
    CHECK(!boot_rand_may_start(true, BOOT_RAND_WORDS - 1), "auth on, too little: refused");
    CHECK(boot_rand_may_start(true, BOOT_RAND_WORDS), "auth on, RNG: started");
    CHECK(boot_rand_may_start(false, 0), "auth off: started (and said so)");
    return check_summary("test_boot_rand");
}
