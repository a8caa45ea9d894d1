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
 */
#ifndef HVT_INSN_STORE_H
#define HVT_INSN_STORE_H
#include <stdint.h>
#include <stddef.h>

unsigned insn_store_len(const uint8_t *p, size_t n);

#endif
