/* boot_rand.c - boot_rand.h: whether the boot id's randomness allows the stream to start. */
#include "boot_rand.h"

bool boot_rand_may_start(bool auth, unsigned gathered)
{
    return !auth || gathered >= BOOT_RAND_WORDS;
}
