/*
 * hv_rand.h - hardware random words, for secrets the guest must not guess (the stream's boot
 * id, the D hash key of each load).
 *
 * Contract:
 *  - hv_rand_words(out, n) fills up to n words from this CPU's RDSEED, RDRAND where RDSEED keeps
 *    failing (each as CPUID says it exists), and returns how many it filled, stopping at the
 *    first word it cannot get (0: the CPU has neither instruction).
 *  - hv_rand_gather(src, out, n) is the same over instructions given as callbacks (0: absent),
 *    each tried up to HV_RAND_RETRIES times per word (Intel, "Intel Digital Random Number
 *    Generator (DRNG) Software Implementation Guide", "Retry Recommendations": ten RDRAND
 *    attempts). Pure: the host test fails them at will.
 */
#ifndef HV_RAND_H
#define HV_RAND_H
#include <stdint.h>
#include <stdbool.h>

#define HV_RAND_RETRIES 10

struct hv_rand_src {
    bool (*rdseed)(uint64_t *v);   /* one attempt; false: no value this time (CF = 0) */
    bool (*rdrand)(uint64_t *v);
};

unsigned hv_rand_gather(const struct hv_rand_src *s, uint64_t *out, unsigned n);
unsigned hv_rand_words(uint64_t *out, unsigned n);

#endif
