/*
 * boot_rand.h - the hardware randomness in the boot id. The session key and every AEAD nonce
 * of a boot derive from its boot id (docs/stream-protocol.md "Session"), so two boots must
 * never share one: a boot id made from the TSC, the MAC and the configuration alone can repeat
 * or be guessed. The words come from hv_rand_words() (vmm/include/hv_rand.h).
 *
 * Contract:
 *  - boot_rand_may_start(): an authenticated stream starts only with all BOOT_RAND_WORDS words
 *    gathered; an unauthenticated one (no key, or auth=off) starts anyway, as before.
 */
#ifndef HVT_BOOT_RAND_H
#define HVT_BOOT_RAND_H
#include <stdbool.h>

#define BOOT_RAND_WORDS 4

bool boot_rand_may_start(bool auth, unsigned gathered);

#endif
