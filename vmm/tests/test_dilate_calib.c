/*
 * test_dilate_calib.c - host unit test of dilate_calib.h: the untimed ticks of an exit are the
 * smallest of the measured round trips (noise only adds); too few samples, or a smallest one
 * no exit could take (the guest ran in between), leave the fallback.
 */
#include <stdio.h>
#include "dilate_calib.h"
#include "check.h"

int main(void)
{
    bool cal;
    struct dilate_calib c = {0};
    CHECK(dilate_calib_result(&c, 35, &cal) == 35 && !cal, "no samples: the fallback");
    /* Bochs-like: the same instruction count every time */
    for (unsigned i = 0; i < DILATE_CALIB_EXITS - 1; i++)
        dilate_calib_add(&c, 35);
    CHECK(dilate_calib_result(&c, 99, &cal) == 35 && cal, "constant samples: that value");
    /* real-CPU-like: a floor with jitter and an interrupt's worth on top of some */
    struct dilate_calib r = {0};
    const uint64_t s[] = {1412, 1398, 1405, 9120, 1396, 1401, 1399, 25000, 1397, 1400};
    for (unsigned i = 0; i < sizeof s / sizeof s[0]; i++)
        dilate_calib_add(&r, s[i]);
    CHECK(dilate_calib_result(&r, 35, &cal) == 1396 && cal && r.max == 25000, "jitter: the smallest, 1396");
    /* too few */
    struct dilate_calib f = {0};
    for (unsigned i = 0; i < DILATE_CALIB_MIN_OK - 1; i++)
        dilate_calib_add(&f, 500);
    CHECK(dilate_calib_result(&f, 35, &cal) == 35 && !cal, "%u samples: too few, the fallback", DILATE_CALIB_MIN_OK - 1);
    dilate_calib_add(&f, 500);
    CHECK(dilate_calib_result(&f, 35, &cal) == 500 && cal, "%u samples: enough", DILATE_CALIB_MIN_OK);
    /* absurd: the timer did not fire before the guest ran */
    struct dilate_calib a = {0};
    for (unsigned i = 0; i < DILATE_CALIB_EXITS; i++)
        dilate_calib_add(&a, DILATE_CALIB_MAX + 1 + i);
    CHECK(dilate_calib_result(&a, 35, &cal) == 35 && !cal, "every sample beyond the bound: the fallback");
    return check_summary("test_dilate_calib");
}
