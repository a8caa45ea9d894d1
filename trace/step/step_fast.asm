; step_fast.asm - the MTF fast path: one single-step of the plain case, entered by vmm/'s exit
; stub with only RAX saved, its context at the FS base (hv_exit.h hv_mtf_fast_register has the
; register contract).
;
; Under tracing every guest instruction is a VM exit, so this is where hvtrace spends its
; time, and it is written to be counted: every instruction here is one per traced instruction.
; The plain case: the pending instruction retired normally and the next one is known - or,
; missing from the decoded cache, is decoded into it by the full step's decoder, called from
; here (f.fill). Every condition that needs more - the full step's own reasons (f.left:
; polling, a due timer deadline, a pending SYSCALL, INT n, MOV to CR3 or LIDT, triggers), a
; task switch, an instruction the decoder cannot read or leaves to the full step, changed code
; bytes, a full chunk - declines before anything the full step relies on changes (a decoded
; entry is the decoder's own, as the full step would have made it), and the full step
; (step.c) handles the same exit.
;
; The record it writes is rec_insn()'s (rec_enc.h) for the same state, field for field:
; tag, [RIP delta], [code id], [register mask, deltas], [RFLAGS field], or the short
; record of a straight-line instruction that changed one register (HVT_INSN_SHORT; a 32-bit value
; whose delta would take five bytes as its four, HVT_SHORT_U32). A REP string instruction's
; iteration that changed the registers as its last record did is one more on a REPEAT marker
; (rec_insn()'s REC_CAND_REP choice, the same way). Never a CR3 field: the full step lets
; the fast path go on only once the encoder's CR3 is the one it accepts (step.c
; fast_prepare), so the record that carries a new CR3 is the full step's. In the FLOW
; record mode (its own entry, step_fast_entry_flow) no register is compared: an instruction
; the decoder predicts whole is one more count on the last RUN (or REPEAT) marker, the rest
; are records without register fields - rec_insn()'s FLOW choices, the same way. The registers
; compared are the pending instruction's write set (x86_wregs.h; RFLAGS as register 16), or
; all of them on the first record of a chunk and with checkregs=on. The decoder's code-id
; predictor is mirrored by a stamp in the decoded-cache entry of the same slot (step_cpu.h).
;
bits 64
default rel

; Constants and the offsets of struct step_fast, icache_entry and rec_enc: generated from C
; (step_fast_asm.c, vmm/include/hv_asm.h).
%include "step_fast_asm.inc"

; The context (struct step_fast, the encoder inside it) is at the FS base: vmm/ loads it at
; every VM exit from the VMCS (hv_set_mtf_fast), so no register holds it. The host unit test
; uses GS instead (the C library's threads own FS there).
%ifdef HOST_TEST
%define SEG gs
%else
%define SEG fs
%endif
; The chunk being written is inside the context too (struct step_fast chunk_store): a record's
; place is its offset in it (the encoder's len), reached as REC(offset).
%define REC(x) [SEG:x + F_CHUNK]

; The guest's registers this code saves, where pass 1 finds them (vmm/ pushed RAX).
%define G_R9   [rsp]
%define G_R8   [rsp + 8]
%define G_RDI  [rsp + 16]
%define G_RBX  [rsp + 24]
%define G_RDX  [rsp + 32]
%define G_RAX  [rsp + 40]

; A guest register from the VMCS (clobbers %3, rax unless named). The host unit test (trace/step/tests/
; test_step_fast.c, HOST_TEST) reads a VMCS in memory instead and supplies its own
; hv_fast_resume / hv_fast_decline.
%ifdef HOST_TEST
extern test_vmcs
%include "step_fast_test.inc"          ; TV_*: trace/step/tests/step_fast_test.h, generated
%macro GUEST_READ 2-3 rax
    mov %3, 0x5a5a5a5a                  ; clobbered, as VMREAD's field operand is
    mov %1, [rel test_vmcs + TV_%2]
%endmacro
%else
%macro GUEST_READ 2-3 rax
    mov %3, VMCS_GUEST_%2
    vmread %1, %3
%endmacro
%endif

; rax: zigzag (SDM-independent: the format's signed varint); rbx is clobbered.
%macro ZIGZAG 0
    lea rbx, [rax + rax]
    sar rax, 63
    xor rax, rbx
%endmacro
; Append rax as a varint at r9. One byte inline; longer ones out of line.
%macro VARINT 0
    cmp rax, 0x7f
    ja %%long
    mov REC(r9), al
    inc r9
%%back:
[section .text.cold]
%%long:
    call varint_long
    jmp %%back
__SECT__
%endmacro
; The same, inside the cold section (VARINT's section switch would return to .text).
%macro VARINT_COLD 0
    call varint_any
%endmacro

; Pass 1, one routine per register: compare the value in rax with the decoder's; if it
; changed, keep the delta (rax) for pass 2, update the decoder's value, set its bit in edx;
; unchanged: on to %2.
%macro REG_CHANGED 2
    sub rax, [SEG:E_REGS + %1 * 8]
    jz %2
    add [SEG:E_REGS + %1 * 8], rax
    mov [SEG:F_DELTA + %1 * 8], rax
    bts edx, %1
%endmacro
; ... and on to %2 either way.
%macro REG_CMP 2
    REG_CHANGED %1, %2
    jmp %2
%endmacro
; Where pass 1 finds guest register %1 (vmm/ pushed RAX; we pushed five more).
%define SRC_0  G_RAX
%define SRC_1  rcx
%define SRC_2  G_RDX
%define SRC_3  G_RBX
%define SRC_5  rbp
%define SRC_6  rsi
%define SRC_7  G_RDI
%define SRC_8  G_R8
%define SRC_9  G_R9
%define SRC_10 r10
%define SRC_11 r11
%define SRC_12 r12
%define SRC_13 r13
%define SRC_14 r14
%define SRC_15 r15
; Guest register %1 (RFLAGS as 16) into rax: from a saved slot, a register, or the VMCS.
%macro REG_LOAD 1
%if %1 == 4
    GUEST_READ rax, RSP
%elif %1 == 16
    GUEST_READ rax, RFLAGS
%else
    mov rax, SRC_%1
%endif
%endmacro
; Register %1's compare, continuing at %2.
%macro REG_ANY 2
    REG_LOAD %1
    REG_CMP %1, %2
%endmacro

; A REP string instruction's compare: as REG_CMP, and a delta other than its last record's
; (E_LDELTA, then updated) sets bit 31 of edx.
%macro REG_CMP_REP 2
    REG_CHANGED %1, %2
    cmp rax, [SEG:E_LDELTA + %1 * 8]
    je %2
    mov [SEG:E_LDELTA + %1 * 8], rax
    bts edx, 31
    jmp %2
%endmacro
%macro REG_ANY_REP 2
    REG_LOAD %1
    REG_CMP_REP %1, %2
%endmacro

; The RFLAGS field at r9 (the encoder holds the new value, F_DELTA the change): one byte of the
; six arithmetic flags that changed, packed by a table, or HVT_RFLAGS_WIDE and the zigzag delta
; (RFLAGS_XOR_FIELD, from the bits that changed). Clobbers rax, rbx, rdx.
%macro RFLAGS_FIELD 0
    mov rdx, [SEG:E_REGS + REG_RFLAGS * 8]
    mov rax, rdx
    sub rax, [SEG:F_DELTA + REG_RFLAGS * 8]
    xor rdx, rax
    RFLAGS_XOR_FIELD
%endmacro

; FLOW: one more on the RUN or REPEAT marker whose offset is at encoder member %1 if it is the
; last thing written and below its maximum count, else on to %2 (a new marker). Clobbers
; rbx, rdx.
%macro COUNT_ONE 2
    mov rbx, [SEG:%1]
    lea rdx, [rbx + REC_RUN_BYTES]
    cmp rdx, [SEG:E_LEN]
    jne %2
    cmp word REC(rbx + 1), HVT_RUN_MAX
    je %2
    inc word REC(rbx + 1)
%endmacro

extern hv_fast_resume, hv_fast_decline

; The plain path's own record for the common instruction: one general register %1 in its
; write set (and RFLAGS, %2 = HVT_SHORT_RFLAGS, when that changed too), the register changed,
; straight on from the last record and its code id predicted - the short record, written here
; with its tag known. rax holds the register's delta and, with %2, rdx the RFLAGS bits that
; changed (the new value already the decoder's). Anything else (a RIP or code-id field) is the
; generic record's, from .checked, with the mask (%3) and the deltas where it expects them.
%macro SHORT_OR_GENERIC 3
    STRAIGHT_PREDICTED %%generic
    ZIGZAG
    cmp rax, 1 << 28
    jae %%big
    mov byte REC(rdi), HVT_INSN_SHORT | %1 | %2
    lea r9, [rdi + 1]
    VARINT
%%value:
    SHORT_RFLAGS %2
%%big:
    ; (32-bit code's usual case) a delta of five bytes or more: a 32-bit value as its four.
    FITS_U32 %1, %%wide
    mov byte REC(rdi), HVT_INSN_SHORT | HVT_SHORT_U32 | %1 | %2
    mov REC(rdi + 1), ebx
    lea r9, [rdi + 5]
    SHORT_RFLAGS %2
[section .text.cold]
%%wide:
    mov byte REC(rdi), HVT_INSN_SHORT | %1 | %2
    lea r9, [rdi + 1]
    VARINT_COLD
    jmp %%value
%%generic:
    mov [SEG:F_DELTA + %1 * 8], rax
%if %2
    RFLAGS_DELTA
    mov [SEG:F_DELTA + REG_RFLAGS * 8], rax
%endif
    mov edx, %3
    jmp .checked
__SECT__
%endmacro
; The short record's end: its RFLAGS field (%1 = HVT_SHORT_RFLAGS), then the record's end.
%macro SHORT_RFLAGS 1
%if %1
    RFLAGS_XOR_FIELD
%endif
    RECORD_END 0
%endmacro
; A record written up to r9: the encoder's length and counts (the record clock follows the
; count: rec_tsc), then back to the guest. %1: the path (2: FLOW, whose REPEAT needs the RIP).
; Written out where a record ends, not jumped to: that jump would be one more instruction
; on every step.
%macro RECORD_END 1
    mov [SEG:E_LEN], r9
%if %1 == 2
    mov rax, [r8 + IC_RIP]
    mov [SEG:E_LAST_RIP], rax
    mov dword [SEG:E_LAST_OK], 1
%endif
    mov rax, 0x100000001                ; nrecords++, ninsns++
    add [SEG:E_NRECORDS], rax
    inc qword [SEG:F_FAST_STEPS]
    RESTORE
    jmp hv_fast_resume
%endmacro
; Register %1's new value (the decoder's; %1 a number or a register holding it) in ebx if it
; fits in 32 bits (HVT_SHORT_U32), else on to %2.
%macro FITS_U32 2
    mov ebx, [SEG:E_REGS + %1 * 8]
    cmp rbx, [SEG:E_REGS + %1 * 8]
    jne %2
%endmacro
; Straight on from the last record (no RIP field) and the code id predicted (none), else on to
; %1 (the generic record, which checks both again); the decoder's next RIP then set.
; Clobbers rbx only.
%macro STRAIGHT_PREDICTED 1
    mov rbx, [r8 + IC_RIP]
    cmp rbx, [SEG:E_EXPECTED]
    jne %1
    mov ebx, [SEG:E_PSTAMP]
    cmp ebx, [r8 + IC_PSTAMP]
    jne %1
    mov rbx, [r8 + IC_NEXT]
    mov [SEG:E_EXPECTED], rbx
%endmacro
; The RFLAGS field at r9 from the bits that changed (rdx; the decoder holds the new value):
; RFLAGS_FIELD's, the six arithmetic flags packed in a byte, else HVT_RFLAGS_WIDE and the delta.
%macro RFLAGS_XOR_FIELD 0
    test rdx, ~HVT_RFLAGS_ARITH
    jnz %%wide
    movzx eax, byte [abs rflags_pack + rdx]
    mov REC(r9), al
    inc r9
%%back:
[section .text.cold]
%%wide:
    mov byte REC(r9), HVT_RFLAGS_WIDE
    inc r9
    RFLAGS_DELTA
    ZIGZAG
    call varint_any
    jmp %%back
__SECT__
%endmacro
; rax: RFLAGS' delta from the decoder's new value and the changed bits in rdx. Clobbers rbx.
%macro RFLAGS_DELTA 0
    mov rax, [SEG:E_REGS + REG_RFLAGS * 8]
    mov rbx, rax
    xor rbx, rdx
    sub rax, rbx
%endmacro
; General register %1 against the decoder's: unchanged, on to %2; changed, the decoder takes
; the new value and rax holds the delta.
%macro REG_DELTA 2
    REG_LOAD %1
    sub rax, [SEG:E_REGS + %1 * 8]
    jz %2
    add [SEG:E_REGS + %1 * 8], rax
%endmacro
; Write set {%1}: unchanged, a record without registers; changed, SHORT_OR_GENERIC.
%macro ONE_REG 1
.one_ %+ %1:
    REG_DELTA %1, .h_none
    SHORT_OR_GENERIC %1, 0, 1 << %1
%endmacro
; Write set {%1, RFLAGS}: %1 unchanged, RFLAGS compared alone (.one_16); else RFLAGS too,
; then SHORT_OR_GENERIC.
%macro PAIR_REG 1
.pair_ %+ %1:
    REG_DELTA %1, .one_16
    GUEST_READ rdx, RFLAGS, rbx
    mov rbx, rdx
    xor rdx, [SEG:E_REGS + REG_RFLAGS * 8]
    jz %%same_flags
    mov [SEG:E_REGS + REG_RFLAGS * 8], rbx
    SHORT_OR_GENERIC %1, HVT_SHORT_RFLAGS, (1 << %1) | (1 << REG_RFLAGS)
%%same_flags:
    SHORT_OR_GENERIC %1, 0, 1 << %1
%endmacro

; The 8 bytes at the entry's host pointer [rdx + %1] plus %4 against [rdx + %2] under the mask
; [rdx + %3]: rax (and ZF) 0 when they are equal.
%macro BYTES_DIFF 4
    mov rax, [rdx + %1]
    mov rax, [rax + %4]
    xor rax, [rdx + %2]
    and rax, [rdx + %3]
%endmacro
; eax, an entry's generation: usable here (the kernel's, or this process's) on to %1, else %2.
; Falls through to what follows when it is the kernel's.
%macro GEN_USABLE 2
    cmp eax, [SEG:F_FGEN_USER]
    je %1
    cmp eax, FGEN_KERNEL
    jne %2
%endmacro
; The code id predicted (the entry carries the encoder's stamp), else on to %1. Clobbers rbx.
%macro PREDICTED 1
    mov ebx, [SEG:E_PSTAMP]
    cmp ebx, [r8 + IC_PSTAMP]
    jne %1
%endmacro
; A new RUN or REPEAT marker (tag %1) at rdi with count 1, its offset in encoder member %2; on
; to %3.
%macro NEW_MARKER 3
    mov byte REC(rdi), %1
    mov word REC(rdi + 1), 1
    mov [SEG:%2], rdi
    add rdi, REC_RUN_BYTES
    mov [SEG:E_LEN], rdi
    inc dword [SEG:E_NRECORDS]
    jmp %3
%endmacro
; An instruction counted on a marker, no record of its own (rax: its RIP): the decoder's
; expectations and the counts (the record clock follows the count: rec_tsc), then back to
; the guest.
%macro COUNTED 0
    mov [SEG:E_LAST_RIP], rax
    mov rax, [r8 + IC_NEXT]
    mov [SEG:E_EXPECTED], rax
    inc dword [SEG:E_NINSNS]
    inc qword [SEG:F_FAST_STEPS]
    RESTORE
    jmp hv_fast_resume
%endmacro

; FLOW: room for one more record, rdi its tag byte (else the step is declined).
%macro FLOW_ROOM 0
    mov rdi, [SEG:E_LEN]
    cmp rdi, [SEG:F_LEN_LIMIT]
    ja .flow_no_room
%endmacro

; The registers the path saves on entry, restored.
%macro RESTORE 0
    pop r9
    pop r8
    pop rdi
    pop rbx
    pop rdx
%endmacro
; Decline label .d_%1: count reason %2, then decline.
%macro DECLINE 2
.d_%1:
    inc qword [SEG:F_DECLINES + %2 * 8]
    jmp .decline
%endmacro

; The whole path; %1: 0 plain, 1 checkregs, 2 FLOW; %2: its register table.
%macro FAST_PATH 2
    push rdx
    push rbx
    push rdi
    push r8
    push r9
    ; The full step's permission: counts down to its next turn (and 0 stays declined).
    sub dword [SEG:F_LEFT], 1
    jbe .d_left
    ; CR3 and IDTR are those the full step saw: in 64-bit mode only MOV to CR3 and LIDT load
    ; them (no task switches: SDM Vol. 3, 8.7 "Task Management in 64-bit Mode"), and their
    ; entries carry FGEN_PENDING (P_CTX), so the full step sees each one retire. The current
    ; task changes only in kernel code: a pending instruction of this process's user code
    ; (CPL 3: the kernel runs none of its code at user addresses) needs no check either. (A
    ; kernel that ran its code there would mislead only its own trace: every host pointer the
    ; path uses stays one into guest memory.)
    mov r8, [SEG:F_P_IC]
    mov eax, [r8 + IC_FGEN]
    cmp eax, [SEG:F_FGEN_USER]
    je .same_context
    ; Same task (a switch needs its SWITCH marker).
    mov rax, [SEG:F_TASK_SLOT]
    mov rax, [rax]
    cmp rax, [SEG:F_TASK_LAST]
    jne .d_task
.same_context:
    ; The instruction at RIP: decoded before (icache), usable here (fgen), bytes unchanged.
    ; Found through the pending instruction's link (what ran after it last time) or hashed.
    GUEST_READ rbx, RIP
    mov rdx, [r8 + IC_LINK]
    cmp rbx, [rdx + IC_RIP]
    je .found
    mov rdx, rbx
    shr rdx, PRED_HASH_SHIFT
    xor edx, ebx
    and edx, ICACHE_SETS - 1
    shl edx, SET_SHIFT
    add rdx, [SEG:F_ICACHE]
    cmp rbx, [rdx + IC_RIP]
    jne .way1
.hashed:
    mov [r8 + IC_LINK], rdx
.found:
    mov eax, [rdx + IC_FGEN]
    GEN_USABLE .gen_ok, .d_gen
.gen_ok:
    ; Its bytes in the window's first 8 (the rest: FGEN_HI, FGEN_CROSS at .d_gen).
    BYTES_DIFF IC_HPTR, IC_LO, IC_MLO, 0
    jnz .d_bytes
    ; Room in the chunk for one more record (the full step sends a full one). FLOW asks
    ; only where it writes one (FLOW_ROOM): a count on the last marker needs none.
%if %1 != 2
    mov rdi, [SEG:E_LEN]
    cmp rdi, [SEG:F_LEN_LIMIT]
    ja .d_room                          ; rdi: this record's tag byte (its offset)
%endif

    ; --- Taken: from here on the step is ours. ---
    ; r8: the pending instruction, recorded now; RIP's becomes pending (one whose retirement
    ; is the full step's, FGEN_PENDING, has set the full step's turn at .d_gen).
    mov [SEG:F_P_IC], rdx
%if %1 == 2
    ; FLOW: predicted whole (its code id in the decoder's predictor: CR3 and tick do not
    ; change on this path)
    ; and straight on from the last instruction: one more on the last RUN marker.
    mov rax, [r8 + IC_RIP]
    PREDICTED .flow_record
    cmp rax, [SEG:E_EXPECTED]
    jne .flow_repeat
    COUNT_ONE E_RUN_AT, .run_new
.flow_counted:
    COUNTED
%else
    ; Pass 1 over the registers the pending instruction may have written: the decoded
    ; entry's own routine for its write set (one register, one and RFLAGS - which write the
    ; common short record themselves, SHORT_OR_GENERIC -, RFLAGS alone, none) or the generic
    ; loop; checkregs=on compares all of them. edx gathers the changed registers' mask: a
    ; routine that needs it clears it first.
%if %1 == 1
    xor edx, edx
    mov r9d, CAND_ALL
    jmp .reg_next
%else
    jmp [r8 + IC_HANDLER]
.h_generic:
    xor edx, edx
    mov r9d, [r8 + IC_CAND]
    jmp .reg_next
    ; Write set {RFLAGS} (CMP, TEST, ...): unchanged, as none; changed, the record of RFLAGS
    ; alone written here when straight on and predicted (else the generic record).
.one_16:
    GUEST_READ rax, RFLAGS
    mov rdx, rax
    xor rdx, [SEG:E_REGS + REG_RFLAGS * 8]
    jz .h_none
    mov [SEG:E_REGS + REG_RFLAGS * 8], rax
    STRAIGHT_PREDICTED .flags_generic
    mov byte REC(rdi), HVT_INSN_RFLAGS
    lea r9, [rdi + 1]
    RFLAGS_XOR_FIELD
    RECORD_END 0
    ; Write set {} (Jcc, MOV to memory, ...): straight on and predicted, a tag alone.
.h_none:
    STRAIGHT_PREDICTED .none_generic
    mov byte REC(rdi), 0
    lea r9, [rdi + 1]
    RECORD_END 0
%assign i 0
%rep 16
    ONE_REG i
    PAIR_REG i
%assign i i+1
%endrep
    ; A REP string instruction: its write set compared (and its deltas against its last
    ; record's), then a REPEAT count or a record.
.h_rep:
    xor edx, edx
    mov r9d, [r8 + IC_CAND]
.rrep_next:
    bsf ebx, r9d
    jz .rep_done
    btr r9d, ebx
    jmp [abs rep_table + rbx * 8]
%assign i 0
%rep 17
.rrep_ %+ i:
    REG_ANY_REP i, .rrep_next
%assign i i+1
%endrep
.rep_done:
    ; One more on the REPEAT marker if this instruction's record (or its REPEAT) is the last
    ; thing written, the code id is predicted, and every register changed as
    ; in that record.
    btr edx, 31
    jc .rep_record
    mov eax, [SEG:E_NRECORDS]
    cmp eax, [SEG:E_REP_NREC]
    jne .rep_record
    mov rax, [r8 + IC_RIP]
    cmp rax, [SEG:E_REP_RIP]
    jne .rep_record
    cmp edx, [SEG:E_LMASK]
    jne .rep_record
    PREDICTED .rep_record
    COUNT_ONE E_REP_AT, .rep_new
.rep_counted:
    mov eax, [SEG:E_NRECORDS]
    mov [SEG:E_REP_NREC], eax
    mov rax, [r8 + IC_RIP]
    COUNTED
.rep_new:
    NEW_MARKER TAG_REPEAT, E_REP_AT, .rep_counted
.rep_record:
    ; A record: what a REPEAT of it would repeat.
    mov [SEG:E_LMASK], edx
    mov rax, [r8 + IC_RIP]
    mov [SEG:E_REP_RIP], rax
    mov eax, [SEG:E_NRECORDS]
    inc eax
    mov [SEG:E_REP_NREC], eax
    jmp .regs_done
%endif
.reg_next:
    bsf ebx, r9d
    jz .regs_done
    btr r9d, ebx
    jmp [abs %2 + rbx * 8]
%assign i 0
%rep 17
.reg_ %+ i:
    REG_ANY i, .reg_next
%assign i i+1
%endrep
.regs_done:
%endif
%if %1 == 1
    ; checkregs=on compared every register: count a change outside the write set.
    mov eax, [r8 + IC_CAND]
    not eax
    and eax, edx
    jnz .missed
%endif
.checked:
    ; The record: tag at REC(rdi), fields from r9 on (offsets in the chunk).
    mov byte REC(rdi), 0
    lea r9, [rdi + 1]
    mov rax, [r8 + IC_RIP]
    sub rax, [SEG:E_EXPECTED]
    jnz .f_rip
.rip_done:
    mov rax, [r8 + IC_NEXT]
    mov [SEG:E_EXPECTED], rax
    mov eax, [SEG:E_PSTAMP]
    cmp eax, [r8 + IC_PSTAMP]
    jne .f_code
.code_done:
    ; Straight on (no field so far) with one general register changed: the short record,
    ; the register in the tag, no mask.
    movzx eax, dx
    cmp byte REC(rdi), 0
    jne .long
    test eax, eax
    jz .long
    lea ebx, [rax - 1]
    test ebx, eax
    jnz .long
    bsf r8d, eax
    mov eax, r8d
    or eax, HVT_INSN_SHORT
    test edx, 1 << REG_RFLAGS
    jz .short_tag
    or eax, HVT_SHORT_RFLAGS
.short_tag:
    mov REC(rdi), al
    mov rax, [SEG:F_DELTA + r8 * 8]
    ZIGZAG
    cmp rax, 1 << 28
    jae .short_big
    VARINT
.short_value:
    test edx, 1 << REG_RFLAGS
    jz .fields_done
    RFLAGS_FIELD
    jmp .fields_done
.short_big:
    ; A delta of five bytes or more: a 32-bit value as its four (HVT_SHORT_U32).
    FITS_U32 r8, .short_wide
    mov REC(r9), ebx
    add r9, 4
    or byte REC(rdi), HVT_SHORT_U32
    jmp .short_value
.short_wide:
    VARINT_COLD
    jmp .short_value
.long:
    test edx, 1 << REG_RFLAGS
    jz .rf_tagged
    or byte REC(rdi), HVT_INSN_RFLAGS
.rf_tagged:
    movzx edx, dx                       ; the general registers' mask
    test edx, edx
    jz .regs_written
    or byte REC(rdi), HVT_INSN_REGS
    mov eax, edx
    VARINT
.delta_next:
    bsf r8d, edx
    btr edx, r8d
    mov rax, [SEG:F_DELTA + r8 * 8]
    ZIGZAG
    VARINT
    test edx, edx
    jnz .delta_next
.regs_written:
    test byte REC(rdi), HVT_INSN_RFLAGS
    jz .fields_done
    RFLAGS_FIELD
.fields_done:
    RECORD_END %1

; --- the less common paths ---
[section .text.cold]
%if %1 == 2
; FLOW, not straight on: the same instruction again (a REP string iteration, a jump to
; itself) is one more on the last REPEAT marker; anything else a record without registers.
.flow_repeat:
    cmp dword [SEG:E_LAST_OK], 0
    je .flow_record
    cmp rax, [SEG:E_LAST_RIP]
    jne .flow_record
    COUNT_ONE E_REP_AT, .rep_new
    jmp .flow_counted
.rep_new:
    FLOW_ROOM
    NEW_MARKER TAG_REPEAT, E_REP_AT, .flow_counted
.run_new:
    FLOW_ROOM
    NEW_MARKER TAG_RUN, E_RUN_AT, .flow_counted
.flow_record:
    FLOW_ROOM
    xor edx, edx
    jmp .checked
; No room for what FLOW writes: the decline leaves the pending instruction as it was.
.flow_no_room:
    mov [SEG:F_P_IC], r8
    jmp .d_room
%endif
%if %1 == 1
.missed:
    cmp qword [SEG:F_MISSES], 0
    jne .counted
    mov [SEG:F_MISS_MASK], rax
    mov rax, [r8 + IC_RIP]
    mov [SEG:F_MISS_RIP], rax
.counted:
    inc qword [SEG:F_MISSES]
    jmp .checked
%endif
%if %1 == 0
.none_generic:
    xor edx, edx
    jmp .regs_done
.flags_generic:
    RFLAGS_DELTA
    mov [SEG:F_DELTA + REG_RFLAGS * 8], rax
    mov edx, 1 << REG_RFLAGS
    jmp .checked
%endif
.way1:
    add rdx, 1 << ICACHE_SHIFT
    cmp rbx, [rdx + IC_RIP]
    je .hashed
    ; Not in the cache: decoded into it by the full step's own decoder (f.fill, C),
    ; and on as if found; NULL leaves the exit to the full step. The C code may clobber what
    ; the SysV ABI lets it: of the guest's registers still live here, RCX, RSI, R10 and R11
    ; (RBP and R12-R15 it keeps); of ours, R8. The stack is 16-byte aligned at the call (host
    ; RSP is, and 12 quadwords are on it with the pad).
    push rcx
    push rsi
    push r8
    push r10
    push r11
    sub rsp, 8
    mov rdi, [SEG:F_SELF]
    mov rsi, rbx
    call [rdi + F_FILL]
    add rsp, 8
    pop r11
    pop r10
    pop r8
    pop rsi
    pop rcx
    test rax, rax
    jz .d_miss
    mov rdx, rax
    jmp .hashed
.f_rip:
    or byte REC(rdi), HVT_INSN_RIP
    ZIGZAG
    VARINT_COLD
    jmp .rip_done
; The decoder's predictor does not hold this id for this RIP: send it, and mirror the
; decoder (its slot is this entry's set % PRED_SLOTS; the other entries that share it lose
; their stamps).
.f_code:
    or byte REC(rdi), HVT_INSN_CODE
    mov eax, [r8 + IC_ID]
    VARINT_COLD
    movzx eax, word [r8 + IC_SLOT]
    and eax, PRED_SLOTS - 1
    mov rbx, rax
    shl rbx, SET_SHIFT
    add rbx, [SEG:F_ICACHE]
%assign k 0
%rep ICACHE_SETS / PRED_SLOTS
    mov dword [rbx + k * (PRED_SLOTS << SET_SHIFT) + IC_PSTAMP], 0
    mov dword [rbx + k * (PRED_SLOTS << SET_SHIFT) + (1 << ICACHE_SHIFT) + IC_PSTAMP], 0
%assign k k+1
%endrep
    shl eax, E_PRED_SHIFT
    add rax, [SEG:F_SELF]
    add rax, E_PRED
    mov rbx, [r8 + IC_RIP]
    mov [rax + PRED_RIP], rbx
    mov ebx, [r8 + IC_ID]
    mov [rax + PRED_ID], ebx
    mov dword [rax + PRED_VALID], 1
    mov eax, [SEG:E_PSTAMP]
    mov [r8 + IC_PSTAMP], eax
    jmp .code_done
.d_left:
    mov dword [SEG:F_LEFT], 0
    inc qword [SEG:F_DECLINES + FD_LEFT * 8]
    jmp .decline
    DECLINE task, FD_TASK
    DECLINE miss, FD_MISS
.d_gen:
    ; A usable generation with flags: an instruction whose retirement needs the full step
    ; (FGEN_PENDING: SYSCALL's marker, INT n's event) makes the next exit its turn - a
    ; decline below changes nothing the full step does not set again; its bytes in the
    ; window's second 8 (FGEN_HI) and in the next page (FGEN_CROSS) are compared here, the
    ; first 8 as any other's.
    mov ebx, eax
    and eax, FGEN_GEN_MASK
    cmp eax, ebx
    je .d_gen_count
    GEN_USABLE .flagged, .d_gen_count
.flagged:
    bt ebx, FGEN_PENDING_BIT
    jnc .no_pending
    mov dword [SEG:F_LEFT], 1
.no_pending:
    bt ebx, FGEN_HI_BIT
    jnc .no_hi
    BYTES_DIFF IC_HPTR, IC_HI, IC_MHI, 8
    jnz .d_bytes
.no_hi:
    bt ebx, FGEN_CROSS_BIT
    jnc .gen_ok
    BYTES_DIFF IC_HPTR2, IC_LO2, IC_MLO2, 0
    jnz .d_bytes
    jmp .gen_ok
.d_gen_count:
    inc qword [SEG:F_DECLINES + FD_GEN * 8]
    jmp .decline
    DECLINE bytes, FD_BYTES
    DECLINE room, FD_ROOM
.decline:
    RESTORE
    jmp hv_fast_decline

__SECT__
%endmacro

section .text
global step_fast_entry, step_fast_entry_check, step_fast_entry_flow, step_fast_handlers
; hv_mtf_fast: the plain path, and the checkregs=on one (trace_main.c chooses).
step_fast_entry:
    FAST_PATH 0, reg_table
step_fast_entry_check:
    FAST_PATH 1, reg_table_check
step_fast_entry_flow:
    FAST_PATH 2, reg_table

; rax as a varint at r9, r9 advanced; clobbers rax.
varint_any:
    cmp rax, 0x7f
    ja varint_long
    mov REC(r9), al
    inc r9
    ret
varint_long:
    mov REC(r9), al
    or byte REC(r9), 0x80
    inc r9
    shr rax, 7
    cmp rax, 0x7f
    ja varint_long
    mov REC(r9), al
    inc r9
    ret
__SECT__

section .rodata
align 8
reg_table:
%assign i 0
%rep 17
    dq step_fast_entry.reg_ %+ i
%assign i i+1
%endrep
reg_table_check:
%assign i 0
%rep 17
    dq step_fast_entry_check.reg_ %+ i
%assign i i+1
%endrep
; The plain path's pass-1 routines by write set (step_cpu.h FAST_H_*): none, generic, one
; register (0-16, RFLAGS 16), one general register and RFLAGS (0-15).
step_fast_handlers:
    dq step_fast_entry.h_none, step_fast_entry.h_generic
%assign i 0
%rep 17
    dq step_fast_entry.one_ %+ i
%assign i i+1
%endrep
%assign i 0
%rep 16
    dq step_fast_entry.pair_ %+ i
%assign i i+1
%endrep
    dq step_fast_entry.h_rep
rep_table:
%assign i 0
%rep 17
    dq step_fast_entry.rrep_ %+ i
%assign i i+1
%endrep
; The RFLAGS field's packing of the six arithmetic flags' change (hvt_rflags_pack), indexed by
; the change itself (only those six bits set).
rflags_pack:
%assign i 0
%rep HVT_RFLAGS_ARITH + 1
    db (i & 1) | ((i >> 1) & 2) | ((i >> 2) & 4) | ((i >> 3) & 0x18) | ((i >> 6) & 0x20)
%assign i i+1
%endrep

section .note.GNU-stack noalloc noexec nowrite progbits
