/* rand_regs.h - the unit tests' random numbers (xorshift64, fixed seed unless given) and
 * register changes of every size, for the encoder tests (test_rec_enc, test_step_fast). */
#ifndef HVT_TEST_RAND_REGS_H
#define HVT_TEST_RAND_REGS_H
#include <stdint.h>
#include "hvt_trace_format.h"

static uint64_t rng = 88172645463325252ull;
static inline uint64_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

/* A register change of a random size: small deltas, pointers, full 64-bit values, negatives,
 * 32-bit values (a 32-bit operation's, bit 31 often set), arithmetic flags flipped (RFLAGS's
 * one-byte form). */
static inline uint64_t change(uint64_t v)
{
    switch (rnd() % 7) {
    case 0: return v + 1 + rnd() % 8;
    case 1: return v - 1 - rnd() % 300;
    case 2: return 0xffff888000000000ull | (rnd() & 0xffffffffffull);
    case 3: return rnd();
    case 4: return rnd() & 0xffffffffull;
    case 5: return v ^ hvt_rflags_unpack(1 + (unsigned)(rnd() % 63));
    default: return v ^ (1ull << (rnd() % 64));
    }
}

#endif
