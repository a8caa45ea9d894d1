/* step_fast_asm.c - the constants and offsets step_fast.asm uses (hv_asm.h: compiled with -S,
 * never linked): struct step_fast (the encoder's members too, inside it), icache_entry and
 * rec_enc's predictor entries, the record format's tags, the VMCS fields the fast path reads. */
#include "hv_asm.h"
#include "step_cpu.h"
#include "vmx_arch.h"
#include "hvt_trace_format.h"

/* The fast path unstamps both ways of a set in straight-line code. */
_Static_assert(ICACHE_WAYS == 2, "step_fast.asm handles two ways per set");
/* It counts a record and an instruction with one 64-bit add. */
_Static_assert(__builtin_offsetof(struct rec_enc, ninsns) == __builtin_offsetof(struct rec_enc, nrecords) + 4,
               "step_fast.asm: nrecords then ninsns");

#define F(name, member) HV_ASM_OFFSET(name, struct step_fast, member)
#define IC(name, member) HV_ASM_OFFSET(name, struct icache_entry, member)
/* The encoder's members from the same base: the encoder lives inside struct step_fast. */
#define E(name, member) \
    HV_ASM_CONST(name, __builtin_offsetof(struct step_fast, enc_store) + __builtin_offsetof(struct rec_enc, member))
#define PRED(name, member) \
    HV_ASM_CONST(name, __builtin_offsetof(struct rec_enc, pred[0].member) - __builtin_offsetof(struct rec_enc, pred[0]))

void step_fast_asm_constants(void);
void step_fast_asm_constants(void)
{
    HV_ASM_CONST(VMCS_GUEST_CR3, VMCS_GUEST_CR3);
    HV_ASM_CONST(VMCS_GUEST_IDTR, VMCS_GUEST_IDTR_BASE);
    HV_ASM_CONST(VMCS_GUEST_RSP, VMCS_GUEST_RSP);
    HV_ASM_CONST(VMCS_GUEST_RIP, VMCS_GUEST_RIP);
    HV_ASM_CONST(VMCS_GUEST_RFLAGS, VMCS_GUEST_RFLAGS);

    F(F_LEFT, left); F(F_TASK_SLOT, task_slot);
    F(F_TASK_LAST, task_last); F(F_ICACHE, icache); F(F_P_IC, p_ic);
    F(F_SELF, self); F(F_CHUNK, chunk_store); F(F_FILL, fill); F(F_LEN_LIMIT, len_limit); F(F_FAST_STEPS, fast_steps); F(F_MISSES, wregs_misses);
    F(F_FGEN_USER, fgen_user); F(F_MISS_RIP, miss_rip); F(F_MISS_MASK, miss_mask);
    F(F_DECLINES, declines); F(F_DELTA, delta);

    IC(IC_RIP, rip); IC(IC_LO, lo); IC(IC_HI, hi); IC(IC_MLO, mlo); IC(IC_MHI, mhi);
    IC(IC_HPTR, hptr); IC(IC_NEXT, next); IC(IC_ID, id); IC(IC_CAND, cand); IC(IC_FGEN, fgen);
    IC(IC_PSTAMP, pstamp); IC(IC_SLOT, slot); IC(IC_FLAGS, flags); IC(IC_HANDLER, handler);
    IC(IC_LINK, link); IC(IC_HPTR2, hptr2); IC(IC_LO2, lo2); IC(IC_MLO2, mlo2);
    HV_ASM_CONST(FGEN_CROSS_BIT, __builtin_ctz(FGEN_CROSS));
    HV_ASM_CONST(FGEN_HI_BIT, __builtin_ctz(FGEN_HI));
    HV_ASM_CONST(FGEN_PENDING_BIT, __builtin_ctz(FGEN_PENDING));
    HV_ASM_CONST(FGEN_GEN_MASK, ~FGEN_FLAGS);   /* (%c takes no constant of bit 31) */
    HV_ASM_CONST(ICACHE_SHIFT, ICACHE_SHIFT);
    HV_ASM_CONST(PRED_SLOTS, HVT_PRED_SLOTS);
    HV_ASM_CONST(PRED_HASH_SHIFT, HVT_PRED_HASH_SHIFT);
    HV_ASM_CONST(ICACHE_SETS, ICACHE_SETS);
    HV_ASM_CONST(SET_SHIFT, ICACHE_SHIFT + __builtin_ctz(ICACHE_WAYS));
    HV_ASM_CONST(FGEN_KERNEL, FGEN_KERNEL);

    E(E_LEN, len); E(E_EXPECTED, expected_rip);
    E(E_REGS, regs); E(E_NRECORDS, nrecords);
    E(E_PSTAMP, pstamp); E(E_PRED, pred); E(E_NINSNS, ninsns);
    E(E_RUN_AT, run_at); E(E_REP_AT, rep_at); E(E_LAST_RIP, last_rip); E(E_LAST_OK, last_ok);
    E(E_REP_RIP, rep_rip); E(E_REP_NREC, rep_nrec); E(E_LMASK, lmask); E(E_LDELTA, ldelta);
    HV_ASM_CONST(REC_RUN_BYTES, REC_RUN_BYTES);
    HV_ASM_CONST(HVT_RUN_MAX, HVT_RUN_MAX);
    HV_ASM_CONST(TAG_RUN, HVT_TAG_MARKER | HVT_MARK_RUN);
    HV_ASM_CONST(TAG_REPEAT, HVT_TAG_MARKER | HVT_MARK_REPEAT);
    HV_ASM_CONST(E_PRED_SHIFT, __builtin_ctz(sizeof(((struct rec_enc *)0)->pred[0])));
    PRED(PRED_RIP, rip); PRED(PRED_ID, id); PRED(PRED_VALID, valid);

    HV_ASM_CONST(HVT_INSN_RIP, HVT_INSN_RIP);
    HV_ASM_CONST(HVT_INSN_CODE, HVT_INSN_CODE);
    HV_ASM_CONST(HVT_INSN_CR3, HVT_INSN_CR3);
    HV_ASM_CONST(HVT_INSN_REGS, HVT_INSN_REGS);
    HV_ASM_CONST(HVT_INSN_RFLAGS, HVT_INSN_RFLAGS);
    HV_ASM_CONST(HVT_INSN_SHORT, HVT_INSN_SHORT);
    HV_ASM_CONST(HVT_SHORT_RFLAGS, HVT_SHORT_RFLAGS);
    HV_ASM_CONST(HVT_SHORT_U32, HVT_SHORT_U32);
    HV_ASM_CONST(HVT_RFLAGS_ARITH, HVT_RFLAGS_ARITH);
    HV_ASM_CONST(HVT_RFLAGS_WIDE, HVT_RFLAGS_WIDE);
    HV_ASM_CONST(REG_RFLAGS, HVT_REG_RFLAGS);
    HV_ASM_CONST(CAND_ALL, CAND_ALL);

    HV_ASM_CONST(FD_LEFT, FD_LEFT); 
    HV_ASM_CONST(FD_TASK, FD_TASK); HV_ASM_CONST(FD_MISS, FD_MISS); HV_ASM_CONST(FD_GEN, FD_GEN);
    HV_ASM_CONST(FD_BYTES, FD_BYTES); HV_ASM_CONST(FD_ROOM, FD_ROOM);
}
