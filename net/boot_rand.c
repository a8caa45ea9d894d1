/* boot_rand.c - boot_rand.h: hardware randomness for the boot id, with retries. */
#include "boot_rand.h"

static bool try_n(bool (*insn)(uint64_t *), uint64_t *v)
{
    if (!insn)
        return false;
    for (int i = 0; i < BOOT_RAND_RETRIES; i++)
        if (insn(v))
            return true;
    return false;
}

unsigned boot_rand_gather(const struct boot_rand_src *s, uint64_t *out, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (!try_n(s->rdseed, &out[i]) && !try_n(s->rdrand, &out[i]))
            return i;
    return n;
}

bool boot_rand_may_start(bool auth, unsigned gathered)
{
    return !auth || gathered >= BOOT_RAND_WORDS;
}
