/*
 * x86_wregs.h - which general registers one x86-64 instruction (64-bit mode) may write.
 *
 * Why: every traced instruction's record carries the registers that changed. Comparing all
 * sixteen at every step is most of a step's cost; an instruction writes one or two. The full
 * step decodes each distinct instruction once (cached with its bytes), and the fast path then
 * compares only those registers, and RFLAGS only if x86_insn_wflags() says it may change.
 * Contract: x86_insn_wregs() returns a mask over the SDM's GPR numbers (bit 0 RAX ... bit 15
 * R15) that is a superset of the registers the instruction can write, implicit ones included
 * (MUL's RDX, string instructions' RSI/RDI/RCX, CPUID, ...), or X86_WREGS_ALL when it is not
 * sure (VEX/EVEX, most three-byte opcodes, undefined ones, whatever this table leaves out).
 * Without a REX prefix a byte register operand numbered 4-7 may be AH/CH/DH/BH: both
 * registers are in the mask. Checked against capstone's register lists by a host test, and
 * at run time by the trace option checkregs (docs/hypervisor.md). SDM Vol. 2, appendix A.
 */
#ifndef HVT_X86_WREGS_H
#define HVT_X86_WREGS_H
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define X86_WREGS_ALL 0xffffu
unsigned x86_insn_wregs(const uint8_t *p, size_t n);
/* May the instruction change RFLAGS (any bit, IF and DF included)? false only when it is sure
 * it does not. Checked against capstone's eflags lists by the same host test. */
bool x86_insn_wflags(const uint8_t *p, size_t n);
/* Both at once, the bytes decoded once: x86_insn_wregs()'s mask, and x86_insn_wflags()'s
 * answer in *wflags (a decoded-cache fill needs both; the two above are this one's halves). */
unsigned x86_insn_writes(const uint8_t *p, size_t n, bool *wflags);

/* Instructions whose retirement a tracer must see for more than their register changes (SDM
 * Vol. 2: SYSCALL, INT3/INT n, IRET/IRETQ, MOV to CR3, LIDT), and REP string instructions: X86_CLASS_* flags
 * for the bytes of one instruction of length n (64-bit mode; 0 for everything else). */
#define X86_CLASS_SYSCALL 1u      /* 0F 05: the system call number is in RAX at retirement */
#define X86_CLASS_SWINT   2u      /* CC, CD ib: retires by delivering its vector */
#define X86_CLASS_IRET    4u      /* CF, REX CF: may load RFLAGS.RF */
#define X86_CLASS_REPSTR  8u      /* F2/F3 with MOVS, CMPS, STOS, LODS, SCAS, INS, OUTS: each
                                     iteration ends in a step of its own, and the plain ones
                                     change their registers alike each time */
#define X86_CLASS_CTX    16u      /* 0F 22 (MOV to a control register), 0F 01 /3 with a memory
                                     operand (LIDT): the only instructions that load CR3 or
                                     IDTR in 64-bit mode, where task switches do not exist */
unsigned x86_insn_class(const uint8_t *p, size_t n);

#endif
