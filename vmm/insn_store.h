/*
 * insn_store.h - the length of a plain MOV store, the one instruction form that writes to a
 * page the hypervisor shows the guest read-only with writes dropped (hv_ept_drop_writes).
 * An EPT violation gives no instruction length (Intel SDM vol. 3C, 28.2.5 "Information for
 * VM Exits Due to Instruction Execution": the length is only saved for the exits listed
 * there), so the hypervisor decodes the faulting instruction itself to skip it. Encodings:
 * SDM vol. 2B "MOV - Move" (88 /r, 89 /r, C6 /0 ib, C7 /0 iw/id, A2/A3 moffs) and vol. 2A
 * 2.1 "Instruction Format", 2.2.1 "REX Prefixes", table 2-2 (32-bit ModR/M + SIB forms).
 *
 * Contract: insn_store_len(p, n) decodes 64-bit-mode bytes p[0..n) and returns the length
 * (1..15) when they are a MOV to memory (optional segment, operand-size, address-size
 * prefixes and one REX prefix), else 0: every other instruction (string stores, read-modify-
 * write, LOCK/REP, register destinations) and bytes that end too soon. Pure C, host-tested.
 * Linux's ECAM accessors (arch/x86/pci/mmconfig_64.c mmio_config_write*) and readl/writel
 * compile to exactly these forms.
 * insn_store_decode() also says what the store writes, for a hypervisor that performs the
 * store itself with some bytes held back (the bus numbers of a bridge's ECAM page): its width
 * (88/C6/A2: 1; 89/C7/A3: 8 with REX.W, else 2 with 66h, else 4) and its source, a register
 * (ModR/M reg with REX.R; for byte stores without a REX prefix, 4-7 are AH, CH, DH, BH: bits
 * 15:8 of registers 0-3, SDM vol. 2A 3.1.1.1 "Opcode Column", table 3-1) or the immediate
 * (C7 with REX.W: imm32 sign-extended to 64 bits). insn_store_value() gives the bytes written
 * from the guest's registers (SDM numbering 0 RAX .. 15 R15).
 */
#ifndef HVT_INSN_STORE_H
#define HVT_INSN_STORE_H
#include <stdint.h>
#include <stddef.h>

#include <stdbool.h>

struct insn_store {
    unsigned size;                /* bytes written: 1, 2, 4 or 8 */
    bool     imm;                 /* the value is 'value' (already sign-extended to size) */
    bool     high8;               /* the value is bits 15:8 of register 'reg' (AH..BH) */
    unsigned reg;                 /* else the register 0-15 */
    uint64_t value;
};

unsigned insn_store_len(const uint8_t *p, size_t n);
unsigned insn_store_decode(const uint8_t *p, size_t n, struct insn_store *s);
uint64_t insn_store_value(const struct insn_store *s, const uint64_t regs[16]);

#endif
