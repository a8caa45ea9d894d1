; step_fast_harness.asm - runs trace/step/step_fast.asm (assembled with HOST_TEST) on the host, the
; way vmm/'s exit stub enters it (hv_hooks.h contract), for trace/step/tests/test_step_fast.c.
;
; int fast_run(uint64_t regs[16], void *entry)
;   regs: the guest's general registers in SDM order (slot 4, RSP, is the VMCS's: ignored);
;   the policy's context is the GS base (the test sets it: step_fast.asm's HOST_TEST form
;   reads it through GS where the hypervisor's reads FS);
;   returns 1 if the path resumed the guest, 0 if it declined, plus HARNESS_BAD_STACK if the
;   stack was not as it found it; regs[] receives the registers as the path left them.
bits 64
default rel
%define VCPU_MARK 0x7663707500000001      ; stands for the struct vcpu * at host RSP
%define HARNESS_BAD_STACK 0x100

section .bss
saved_rsp: resq 1
regs_ptr:  resq 1
result:    resq 1

section .text
global fast_run, hv_fast_resume, hv_fast_decline
fast_run:
    push rbx
    push rbp
    push r12
    push r13
    push r14
    push r15
    mov [regs_ptr], rdi
    mov [saved_rsp], rsp
    mov rax, VCPU_MARK
    push rax                            ; [host RSP]: the vcpu pointer
    push qword [rdi + 0 * 8]            ; what the stub pushes: guest RAX
    mov rax, rsi
    mov rcx, [rdi + 1 * 8]
    mov rdx, [rdi + 2 * 8]
    mov rbx, [rdi + 3 * 8]
    mov rbp, [rdi + 5 * 8]
    mov rsi, [rdi + 6 * 8]
    mov r8, [rdi + 8 * 8]
    mov r9, [rdi + 9 * 8]
    mov r10, [rdi + 10 * 8]
    mov r11, [rdi + 11 * 8]
    mov r12, [rdi + 12 * 8]
    mov r13, [rdi + 13 * 8]
    mov r14, [rdi + 14 * 8]
    mov r15, [rdi + 15 * 8]
    mov rdi, [rdi + 7 * 8]
    jmp rax

hv_fast_resume:
    mov qword [result], 1
    jmp back
hv_fast_decline:
    mov qword [result], 0
back:
    push rdi
    mov rdi, [regs_ptr]
    mov [rdi + 1 * 8], rcx
    mov [rdi + 2 * 8], rdx
    mov [rdi + 3 * 8], rbx
    mov [rdi + 5 * 8], rbp
    mov [rdi + 6 * 8], rsi
    mov [rdi + 8 * 8], r8
    mov [rdi + 9 * 8], r9
    mov [rdi + 10 * 8], r10
    mov [rdi + 11 * 8], r11
    mov [rdi + 12 * 8], r12
    mov [rdi + 13 * 8], r13
    mov [rdi + 14 * 8], r14
    mov [rdi + 15 * 8], r15
    pop qword [rdi + 7 * 8]
    pop qword [rdi + 0 * 8]             ; guest RAX as the stub restores it
    pop rax
    mov rdx, VCPU_MARK
    cmp rax, rdx
    jne .bad
    cmp rsp, [saved_rsp]
    je .ok
.bad:
    or qword [result], HARNESS_BAD_STACK
.ok:
    mov rsp, [saved_rsp]
    pop r15
    pop r14
    pop r13
    pop r12
    pop rbp
    pop rbx
    mov rax, [result]
    ret

section .note.GNU-stack noalloc noexec nowrite progbits
