/*
 * x86_len.h - length of one x86-64 instruction (64-bit mode), from its bytes alone.
 *
 * Why: the monitor trap flag tells us where the guest is, not how long the instruction it is
 * about to run is; the trace records each instruction's bytes once (the code dictionary) and
 * predicts the next RIP as rip + length, so the hypervisor needs lengths without a full
 * decoder. Intel SDM Vol. 2 ch. 2 (instruction format) and appendix A (opcode maps).
 * Contract: x86_insn_len() returns 1..15, or 0 when the bytes given (n of them) end before the
 * instruction does, or it would exceed 15 bytes. Undefined opcodes get the length of their
 * prefixes + opcode (the guest takes #UD there). Checked against capstone by a host test.
 */
#ifndef HVT_X86_LEN_H
#define HVT_X86_LEN_H
#include <stddef.h>
#include <stdint.h>

#define X86_MAX_INSN_LEN 15
unsigned x86_insn_len(const uint8_t *p, size_t n);

#endif
