/*
 * xcr0.h - which XCR0 values XSETBV accepts.
 *
 * The guest's XSETBV always exits and the hypervisor executes it: a value the CPU refuses would
 * raise #GP in VMX root (a hypervisor crash) instead of in the guest. So it is checked first,
 * with the rules of SDM Vol. 2B "XSETBV" and Vol. 1 13.3 "Enabling the XSAVE Feature Set and
 * XSAVE-Enabled Features": only XCR0 (ECX = 0); bit 0 (x87) set; no bit the CPU does not
 * support for XCR0 (CPUID.(EAX=0DH,ECX=0):EDX:EAX); AVX only with SSE; MPX's two bits together;
 * AVX-512's three bits together, and only with AVX; AMX's two bits together.
 *
 * Contract: xcr0_valid(index, value, supported) is true when XSETBV would accept it. Pure
 * (host-tested).
 */
#ifndef HVT_XCR0_H
#define HVT_XCR0_H
#include <stdbool.h>
#include <stdint.h>
#include "x86_arch.h"

static inline bool xcr0_both_or_none(uint64_t v, uint64_t bits) { return (v & bits) == 0 || (v & bits) == bits; }

static inline bool xcr0_valid(uint32_t index, uint64_t v, uint64_t supported)
{
    const uint64_t avx512 = XCR0_OPMASK | XCR0_ZMM_HI256 | XCR0_HI16_ZMM;
    if (index != 0 || !(v & XCR0_X87) || (v & ~supported))
        return false;
    if ((v & XCR0_AVX) && !(v & XCR0_SSE))
        return false;
    if (!xcr0_both_or_none(v, XCR0_BNDREGS | XCR0_BNDCSR))
        return false;
    if (!xcr0_both_or_none(v, avx512) || ((v & avx512) && !(v & XCR0_AVX)))
        return false;
    return xcr0_both_or_none(v, XCR0_TILECFG | XCR0_TILEDATA);
}

#endif
