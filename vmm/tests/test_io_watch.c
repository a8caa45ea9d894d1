/*
 * test_io_watch.c - host unit test of io_watch_fast (vmm/io_watch.h): every width and direction
 * of the two watched ports and their neighbours, string forms, and ports a module took: only
 * CONFIG_ADDRESS dwords and keyboard-controller status reads skip the full dispatch; every
 * access that could be a reset request (a byte at 0xCF9, a write to 0x64) does not.
 */
#include <stdio.h>
#include "io_watch.h"
#include "check.h"

int main(void)
{
    unsigned fast = 0, bad = 0;
    for (unsigned port = 0x60; port < 0x68; port++)
        for (unsigned size = 1; size <= 4; size *= 2)
            for (int in = 0; in < 2; in++)
                for (int str = 0; str < 2; str++)
                    for (int mod = 0; mod < 2; mod++) {
                        bool f = io_watch_fast((uint16_t)port, size, in, str, mod);
                        fast += f;
                        bad += f && !(port == 0x64 && size == 1 && in && !str && !mod);
                    }
    for (unsigned port = 0xcf8; port < 0xd00; port++)
        for (unsigned size = 1; size <= 4; size *= 2)
            for (int in = 0; in < 2; in++)
                for (int str = 0; str < 2; str++)
                    for (int mod = 0; mod < 2; mod++) {
                        bool f = io_watch_fast((uint16_t)port, size, in, str, mod);
                        fast += f;
                        bad += f && !(port == 0xcf8 && size == 4 && !str && !mod);
                    }
    CHECK(bad == 0, "%u accesses taken at once that could be a reset or a module's", bad);
    CHECK(fast == 3, "taken at once: 0x64 status reads, 0xCF8 dword reads and writes (%u)", fast);
    CHECK(!io_watch_fast(0xcf9, 1, false, false, false), "a byte to 0xCF9: the full dispatch (reset check)");
    CHECK(!io_watch_fast(0x64, 1, false, false, false), "a command to 0x64: the full dispatch (reset check)");
    CHECK(!io_watch_fast(0xcf8, 4, false, false, true), "0xCF8 where a module hides a device: its handler");
    CHECK(!io_watch_fast(0xcf8, 2, false, false, false), "a word at 0xCF8 (covers 0xCF9): the full dispatch");
    return check_summary("test_io_watch");
}
