/*
 * hv_asm.h - C constants for the assembly, generated instead of copied (the way Linux's and
 * KVM's asm-offsets work). A module's *_asm.c file lists the constants and structure offsets
 * its .asm needs with HV_ASM_CONST / HV_ASM_OFFSET; the build compiles that file with -S and
 * turns every "->NAME value" line of the output into "%define NAME value" in a generated
 * include (tools/gen-asm-inc.sh), which the .asm %includes. A constant changed in C changes
 * the assembly with it; a hand-written copy in a .asm is refused by tests/layering.
 */
#ifndef HVT_HV_ASM_H
#define HVT_HV_ASM_H

#define HV_ASM_CONST(name, value) \
    __asm__ volatile("\n.ascii \"->" #name " %c0\"" :: "i"((long long)(value)))
#define HV_ASM_OFFSET(name, type, member) HV_ASM_CONST(name, __builtin_offsetof(type, member))

#endif
