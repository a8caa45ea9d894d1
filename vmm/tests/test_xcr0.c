/*
 * test_xcr0.c - host unit test of xcr0_valid (vmm/xcr0.h): XCR0 values Linux sets on real
 * CPUs pass (0x7 client with AVX, 0x207 with PKRU, 0x2e7 AVX-512 server, 0x2ff with MPX, 0x602e7
 * Sapphire Rapids with AMX), and each value the SDM's XSETBV refuses is refused: the hypervisor
 * would otherwise run XSETBV on it and take the #GP itself.
 */
#include <stdio.h>
#include "xcr0.h"
#include "check.h"

int main(void)
{
    /* CPUID.(0DH,0):EDX:EAX of a CPU with everything up to AMX (bits 0-7, 9, 17, 18). */
    const uint64_t all = 0xff | (1ull << 9) | XCR0_TILECFG | XCR0_TILEDATA;
    const uint64_t good[] = { 0x3, 0x7, 0x207, 0x2e7, 0x2ff, 0x602e7 };
    for (unsigned i = 0; i < sizeof good / sizeof good[0]; i++)
        CHECK(xcr0_valid(0, good[i], all), "%#lx accepted", (unsigned long)good[i]);
    const struct { uint64_t v; const char *why; } bad[] = {
        { 0x0, "x87 clear" }, { 0x6, "x87 clear, SSE and AVX set" }, { 0x5, "AVX without SSE" },
        { 0xf, "MPX BNDREGS without BNDCSR" }, { 0x17, "MPX BNDCSR without BNDREGS" },
        { 0x27, "AVX-512 opmask alone" }, { 0x67, "two of AVX-512's three" },
        { 0xe3, "AVX-512 without AVX" }, { 0x20007, "AMX TILECFG without TILEDATA" },
        { 0x40007, "AMX TILEDATA without TILECFG" }, { 0x107, "bit 8 (supervisor PT state)" },
        { 1ull << 63 | 0x7, "bit 63" },
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK(!xcr0_valid(0, bad[i].v, all), "%#lx refused: %s", (unsigned long)bad[i].v, bad[i].why);
    CHECK(!xcr0_valid(0, 0x2e7, 0x7), "AVX-512 on a CPU without it refused");
    CHECK(!xcr0_valid(1, 0x7, all), "an XCR other than XCR0 refused");
    return check_summary("test_xcr0");
}
