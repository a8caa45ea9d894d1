/*
 * boot_rand.h - the hardware randomness in the boot id. The session key and every AEAD nonce
 * of a boot derive from its boot id (docs/stream-protocol.md "Session"), so two boots must
 * never share one: a boot id made from the TSC, the MAC and the configuration alone can repeat
 * or be guessed.
 *
 * Contract:
 *  - boot_rand_gather() takes RDSEED first, RDRAND where RDSEED keeps failing, each tried up to
 *    BOOT_RAND_RETRIES times per word (Intel, "Intel Digital Random Number Generator (DRNG)
 *    Software Implementation Guide", "Retry Recommendations": ten RDRAND attempts); it returns
 *    how many words it filled, stopping at the first it cannot. Pure: the instructions come as
 *    callbacks (0: the CPU does not have it), so the host test can fail them at will.
 *  - boot_rand_may_start(): an authenticated stream starts only with every word gathered; an
 *    unauthenticated one (no key, or auth=off) starts anyway, as before.
 */
#ifndef HVT_BOOT_RAND_H
#define HVT_BOOT_RAND_H
#include <stdint.h>
#include <stdbool.h>

#define BOOT_RAND_WORDS   4
#define BOOT_RAND_RETRIES 10

struct boot_rand_src {
    bool (*rdseed)(uint64_t *v);   /* one attempt; false: no value this time (CF = 0) */
    bool (*rdrand)(uint64_t *v);
};

unsigned boot_rand_gather(const struct boot_rand_src *s, uint64_t *out, unsigned n);
bool boot_rand_may_start(bool auth, unsigned gathered);

#endif
