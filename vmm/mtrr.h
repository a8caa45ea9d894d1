/*
 * mtrr.h - the firmware's memory types, read from the MTRRs (Intel SDM 12.11).
 *
 * Why: with EPT on, the processor ignores the MTRRs for guest accesses and uses the EPT
 * memory type instead (SDM 29.3.7.2), so the EPT must carry the types the MTRRs gave, or
 * device memory becomes write-back on real machines.
 * Contract: mtrr_read() snapshots the MSRs through the given reader (host-testable);
 * mtrr_type_range() returns the single memory type of an aligned power-of-two range, or
 * MTRR_MIXED when types differ inside it (the caller then uses smaller pages).
 */
#ifndef HVT_MTRR_H
#define HVT_MTRR_H
#include <stdint.h>
#include <stdbool.h>

#define MTRR_UC 0
#define MTRR_WC 1
#define MTRR_WT 4
#define MTRR_WP 5
#define MTRR_WB 6
#define MTRR_MIXED (-1)
#define MTRR_MAX_VAR 32
#define MTRR_FIXED_COUNT 88   /* 8 (64K) + 16 (16K) + 64 (4K) ranges below 1 MiB */

struct mtrr_state {
    bool enabled, fixed_enabled;
    uint8_t def_type;
    uint8_t fixed[MTRR_FIXED_COUNT];
    unsigned nvar;
    struct { uint64_t base, mask; bool valid; uint8_t type; } var[MTRR_MAX_VAR];
    uint64_t addr_mask;       /* physical-address bits implemented */
};

typedef uint64_t (*mtrr_rdmsr_fn)(uint32_t msr);
void mtrr_read(struct mtrr_state *m, mtrr_rdmsr_fn rdmsr, unsigned phys_bits);
int  mtrr_type_at(const struct mtrr_state *m, uint64_t addr);
int  mtrr_type_range(const struct mtrr_state *m, uint64_t base, uint64_t size);

#endif
