/*
 * bochs-fixed-time.c - LD_PRELOAD shim that makes Bochs runs reproducible.
 * Bochs 3.0 seeds the generator behind its RDRAND/RDSEED with srand(time(NULL))
 * (cpu/init.cc), so the guest's randomness - and with it KASLR, hash seeds and the number of
 * instructions Linux needs to reach init (measured: 2.00e9 or 2.07e9 depending on the second
 * Bochs started) - changes from run to run. This shim answers time() with a fixed value
 * (HVT_BOCHS_TIME, default 946684800 = 2000-01-01, the same as bochsrc's clock time0).
 * Only time() is replaced: gettimeofday/clock_gettime (Bochs's ips display) are untouched.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <time.h>

#define BOCHS_FIXED_TIME_DEFAULT 946684800LL

time_t time(time_t *out)
{
    const char *s = getenv("HVT_BOCHS_TIME");
    time_t v = (time_t)(s ? strtoll(s, NULL, 10) : BOCHS_FIXED_TIME_DEFAULT);
    if (out) *out = v;
    return v;
}
