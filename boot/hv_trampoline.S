/*
 * hv_trampoline.S - crossing from the loader into the hypervisor image and back.
 *
 * The hypervisor is linked in the top 2 GiB and only mapped by its own page tables, which
 * also identity-map all physical memory, so this code (in the loader, identity mapped by the
 * firmware too) keeps running across the CR3 switch. SysV ABI.
 *
 *   long hvl_call_hv(void *fn, uint64_t hv_cr3, void *a0, void *a1)
 *       call fn(a0, a1) under the hypervisor's page tables, interrupts off; return its value.
 *   long hvl_virtualize(void *entry_cpu, uint64_t hv_cr3, void *bi, struct hvt_cpu_launch *l)
 *       record where this CPU resumes as a guest (label 1 below: this very stack, CR3 and
 *       RFLAGS), then call entry_cpu(bi, l). On success the CPU reappears at 1 as a guest and
 *       we return 0; on failure entry_cpu returns its negative error, which we return.
 */
#define LAUNCH_RIP    0
#define LAUNCH_RSP    8
#define LAUNCH_CR3    16
#define LAUNCH_RFLAGS 24
#define RFLAGS_IF     0x200

    .text
    .globl hvl_call_hv
hvl_call_hv:
    push %rbp
    mov %rsp, %rbp
    push %r12
    push %r13
    pushfq
    cli
    mov %cr3, %r12
    mov %rsi, %cr3
    mov %rdi, %rax
    mov %rdx, %rdi
    mov %rcx, %rsi
    and $-16, %rsp
    call *%rax
    mov %r12, %cr3
    lea -24(%rbp), %rsp
    popfq
    pop %r13
    pop %r12
    pop %rbp
    ret

    .globl hvl_virtualize
hvl_virtualize:
    push %rbp
    push %rbx
    push %r12
    push %r13
    push %r14
    push %r15
    pushfq
    cli
    mov (%rsp), %rax
    and $~RFLAGS_IF, %rax            /* resume with interrupts still off; popfq restores */
    mov %rax, LAUNCH_RFLAGS(%rcx)
    mov %cr3, %r12
    mov %r12, LAUNCH_CR3(%rcx)
    lea 1f(%rip), %rax
    mov %rax, LAUNCH_RIP(%rcx)
    mov %rsp, LAUNCH_RSP(%rcx)
    mov %rsp, %r13
    mov %rsi, %cr3
    mov %rdi, %rax
    mov %rdx, %rdi
    mov %rcx, %rsi
    and $-16, %rsp
    call *%rax                        /* returns only on failure */
    mov %r12, %cr3
    mov %r13, %rsp
    movslq %eax, %rax
    jmp 2f
1:  /* Here as a guest: RSP and CR3 are the recorded ones; other registers are not. */
    xor %eax, %eax
2:  popfq
    pop %r15
    pop %r14
    pop %r13
    pop %r12
    pop %rbx
    pop %rbp
    ret

/* The hypervisor image, embedded in hvtrace.efi. */
    .section .rodata
    .balign 16      /* not 4096: a page-aligned .data breaks the PE conversion (OVMF crashed in Print) */
    .globl hvl_image_start, hvl_image_end
hvl_image_start:
    .incbin HV_IMAGE_PATH
hvl_image_end:
    .section .note.GNU-stack,"",@progbits
