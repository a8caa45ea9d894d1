/* hv_rand.c - hardware random words (hv_rand.h). */
#include "hv_rand.h"
#include "x86_arch.h"

static bool try_n(bool (*insn)(uint64_t *), uint64_t *v)
{
    if (!insn)
        return false;
    for (int i = 0; i < HV_RAND_RETRIES; i++)
        if (insn(v))
            return true;
    return false;
}

unsigned hv_rand_gather(const struct hv_rand_src *s, uint64_t *out, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (!try_n(s->rdseed, &out[i]) && !try_n(s->rdrand, &out[i]))
            return i;
    return n;
}

/* One attempt each (SDM Vol. 2B RDRAND, RDSEED: CF = 1 when a value was returned). */
static bool rdrand64(uint64_t *v)
{
    unsigned char ok;
    __asm__ volatile("rdrand %0; setc %1" : "=r"(*v), "=qm"(ok));
    return ok;
}

static bool rdseed64(uint64_t *v)
{
    unsigned char ok;
    __asm__ volatile("rdseed %0; setc %1" : "=r"(*v), "=qm"(ok));
    return ok;
}

unsigned hv_rand_words(uint64_t *out, unsigned n)
{
    uint32_t a, b, c, d, max;
    __asm__ volatile("cpuid" : "=a"(max), "=b"(b), "=c"(c), "=d"(d) : "a"(0), "c"(0));
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
    struct hv_rand_src src = { 0, (c & CPUID_1_ECX_RDRAND) ? rdrand64 : 0 };
    if (max >= 7) {
        __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
        if (b & CPUID_7_EBX_RDSEED)
            src.rdseed = rdseed64;
    }
    return hv_rand_gather(&src, out, n);
}
