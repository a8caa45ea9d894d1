; vmx_stub.asm - VM-exit entry point and host exception stubs.
; On VM exit the CPU loads RIP = vmx_exit_stub and RSP = VMCS host RSP (SDM 28.5.1); the
; per-CPU stack holds the vcpu pointer at [host RSP]. We save the guest's general registers
; in SDM GPR order (see struct guest_regs), call the C dispatcher, restore, and VMRESUME.
; MTF exits of a CPU whose policy enabled the fast path jump to the policy's raw handler
; (hv_exit.h hv_mtf_fast_register) with only RAX saved and the policy's context as the FS
; base: under single-stepping that is every exit, so the path saves no more than it must and
; counts every instruction.
bits 64
; Constants and struct vcpu offsets: generated from C (vmm_asm.c, vmm/include/hv_asm.h).
%include "vmm_asm.inc"
default rel
section .text

; The guest's general registers back from the stack (struct guest_regs; RSP lives in the VMCS),
; then VM entry. Falls through when VMRESUME fails.
%macro RESTORE_AND_RESUME 0
    pop rax
    pop rcx
    pop rdx
    pop rbx
    add rsp, 8
    pop rbp
    pop rsi
    pop rdi
    pop r8
    pop r9
    pop r10
    pop r11
    pop r12
    pop r13
    pop r14
    pop r15
    vmresume
%endmacro

extern vmx_exit_dispatch
extern vmx_resume_failed
extern host_exception
extern hv_mtf_fast

global vmx_exit_stub, hv_fast_resume, hv_fast_decline
vmx_exit_stub:
    ; The fast gate: an MTF exit of a CPU whose fast path is on and not blocked goes to the
    ; policy's handler, its context in the FS base the VM exit loaded (SDM 28.5.2 "Loading
    ; Host Segment and Descriptor-Table Registers"; hv_set_mtf_fast sets it). GS is the
    ; vcpu's (vcpu_current), so the gate's word needs no register.
    cmp word [gs:VCPU_FAST_MTF_OFFSET], FAST_MTF_GO
    jne vmx_exit_full
    push rax
    mov eax, VMCS_EXIT_REASON
    vmread rax, rax
    cmp eax, EXIT_MTF
    jne vmx_exit_full_rax
    jmp [hv_mtf_fast]
hv_fast_resume:                 ; the handler took the exit: the guest goes on
    pop rax
    vmresume
    jmp vmx_resume_fail
hv_fast_decline:                ; the handler left the exit to the full dispatch
vmx_exit_full_rax:
    pop rax
vmx_exit_full:
    push r15
    push r14
    push r13
    push r12
    push r11
    push r10
    push r9
    push r8
    push rdi
    push rsi
    push rbp
    push 0                      ; slot 4: guest RSP lives in the VMCS
    push rbx
    push rdx
    push rcx
    push rax
    mov rsi, [rsp + 16*8]       ; struct vcpu * stored at host RSP
    rdtsc                       ; when the exit reached us: hv_exit_tsc() (time dilation)
    shl rdx, 32
    or rax, rdx
    mov [rsi + VCPU_EXIT_TSC_OFFSET], rax
    ; A CPU whose TSC-deadline timer runs on host time while its guest's time is dilated must
    ; not let it fire while the hypervisor runs (that time is not the guest's): disarm it; the
    ; policy re-arms it, moved by this exit's ticks.
    test byte [rsi + VCPU_DILATE_OFFSET], HV_DILATE_DISARM
    jz .timed
    mov ecx, MSR_IA32_TSC_DEADLINE
    xor eax, eax
    xor edx, edx
    wrmsr
.timed:
    mov rdi, rsp                ; struct guest_regs *
    call vmx_exit_dispatch      ; RSP is 16-byte aligned here (host RSP is)
    jmp .dilate
.stamp:
    ; Not dilated: when this exit ends, for a module's accounting of whole exits
    ; (hv_last_entry_tsc); hv_exit_untimed() measures what follows. Out of the dilated path's
    ; line, which must stay the sequence each CPU's dilate_fixed measures (dilate_calib.h).
    rdtsc
    shl rdx, 32
    or rax, rdx
    mov [rsi + VCPU_ENTRY_TSC_OFFSET], rax
    RESTORE_AND_RESUME                  ; its own copy: no jump between the stamp and VM entry
    jmp vmx_resume_fail
.dilate:
    ; Time dilation (hv_set_dilation): take every tick of this exit out of the guest's TSC,
    ; measured here, at the last possible moment, so the untimed rest is a fixed instruction
    ; sequence: TSC offset -= now - exit_tsc + dilate_fixed (SDM 25.6.5), dilate_fixed being
    ; this CPU's measure of that sequence (dilate_calib.h), which keeps 'now' for it.
    ; Entered by a jump: Bochs's RDTSC does not count the instructions of the current
    ; trace-cache trace before it, so what precedes it in its trace must be one sequence
    ; whatever path led here (measured: a path that fell through lost its one tick).
    mov rsi, [rsp + 16*8]
    test byte [rsi + VCPU_DILATE_OFFSET], HV_DILATE_TSC
    jz .stamp
    rdtsc
    shl rdx, 32
    or rax, rdx
    mov [rsi + VCPU_RESUME_TSC_OFFSET], rax
    sub rax, [rsi + VCPU_EXIT_TSC_OFFSET]
    add rax, [rsi + VCPU_DILATE_FIXED_OFFSET]
    mov edx, VMCS_TSC_OFFSET
    vmread rcx, rdx
    sub rcx, rax
    vmwrite rdx, rcx
.resume:
    RESTORE_AND_RESUME
vmx_resume_fail:
    ; VMRESUME failed (SDM 31.4: VMfailValid with an error number in the VMCS).
    mov rdi, [rsp]
    call vmx_resume_failed
.hang:
    hlt
    jmp .hang

; int vmx_launch(void): returns only if VMLAUNCH failed.
global vmx_launch
vmx_launch:
    vmlaunch
    mov eax, -1
    ret

; int msr_safe_read(uint32_t msr, uint64_t *val) / int msr_safe_write(uint32_t msr, uint64_t val)
; RDMSR/WRMSR that return -1 instead of faulting when the MSR does not exist: the #GP lands
; in host_exception, which resumes at the matching *_fault label (msr_fixup in vmx_exit.c).
global msr_safe_read, msr_safe_write, msr_read_insn, msr_read_fault, msr_write_insn, msr_write_fault
msr_safe_read:
    mov ecx, edi
msr_read_insn:
    rdmsr
    shl rdx, 32
    or rax, rdx
    mov [rsi], rax
    xor eax, eax
    ret
msr_read_fault:
    mov eax, -1
    ret
msr_safe_write:
    mov ecx, edi
    mov rax, rsi
    mov rdx, rsi
    shr rdx, 32
msr_write_insn:
    wrmsr
    xor eax, eax
    ret
msr_write_fault:
    mov eax, -1
    ret

; Host IDT stubs: exceptions in the hypervisor are bugs; report and stop. NMI is special:
; it belongs to the guest, so host_exception marks it for re-injection and we IRETQ.
%macro EXC_NOERR 1
global host_exc_%1
host_exc_%1:
    push 0
    push %1
    jmp exc_common
%endmacro
%macro EXC_ERR 1
global host_exc_%1
host_exc_%1:
    push %1
    jmp exc_common
%endmacro

EXC_NOERR 0
EXC_NOERR 1
EXC_NOERR 2
EXC_NOERR 3
EXC_NOERR 4
EXC_NOERR 5
EXC_NOERR 6
EXC_NOERR 7
EXC_ERR   8
EXC_NOERR 9
EXC_ERR   10
EXC_ERR   11
EXC_ERR   12
EXC_ERR   13
EXC_ERR   14
EXC_NOERR 15
EXC_NOERR 16
EXC_ERR   17
EXC_NOERR 18
EXC_NOERR 19
EXC_NOERR 20
EXC_ERR   21
EXC_NOERR 22
EXC_NOERR 23
EXC_NOERR 24
EXC_NOERR 25
EXC_NOERR 26
EXC_NOERR 27
EXC_NOERR 28
EXC_ERR   29
EXC_ERR   30
EXC_NOERR 31
EXC_NOERR 32   ; any external interrupt (the host runs with IF=0: should never happen)

exc_common:
    ; stack: vector, error code, RIP, CS, RFLAGS, RSP, SS
    push rbx
    push rax
    push rcx
    push rdx
    push rsi
    push rdi
    push r8
    push r9
    push r10
    push r11
    lea rdi, [rsp + 10*8]        ; -> vector, errcode, iret frame
    mov rbx, rsp
    and rsp, -16
    call host_exception         ; returns only for NMI
    mov rsp, rbx
    pop r11
    pop r10
    pop r9
    pop r8
    pop rdi
    pop rsi
    pop rdx
    pop rcx
    pop rax
    pop rbx
    add rsp, 16
    iretq

global host_exc_table
section .rodata
host_exc_table:
%assign i 0
%rep 33
    dq host_exc_ %+ i
%assign i i+1
%endrep
section .note.GNU-stack noalloc noexec nowrite progbits
