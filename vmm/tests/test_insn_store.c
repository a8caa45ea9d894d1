/*
 * test_insn_store.c - host unit test of vmm/insn_store.c (the MOV-store length the write-
 * dropping EPT pages skip by), against encodings written out from the SDM's tables (with
 * the AT&T form each stands for), including the forms Linux's ECAM and MMIO accessors
 * compile to; every truncation of each must give 0, and so must non-stores, register
 * destinations, LOCK/REP and misplaced REX prefixes.
 * Prints failed checks and "test_insn_store: N passed, N failed".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdbool.h>
#include "insn_store.h"
#include "check.h"


struct c { const char *what; unsigned len; uint8_t b[15]; };
static const struct c stores[] = {
    { "mov %eax,(%rdx)", 2, { 0x89, 0x02 } },
    { "mov %ax,(%rdx)", 3, { 0x66, 0x89, 0x02 } },
    { "mov %al,(%rdx)", 2, { 0x88, 0x02 } },
    { "mov %rax,(%rdi)", 3, { 0x48, 0x89, 0x07 } },
    { "mov %r8d,0x10(%r9)", 4, { 0x45, 0x89, 0x41, 0x10 } },
    { "mov %eax,0x1000(%rbx)", 6, { 0x89, 0x83, 0x00, 0x10, 0x00, 0x00 } },
    { "mov %eax,(%rsp)", 3, { 0x89, 0x04, 0x24 } },
    { "mov %eax,0x8(%rsp,%rcx,4)", 4, { 0x89, 0x44, 0x8c, 0x08 } },
    { "mov %eax,0x12345678(,%rcx,4)", 7, { 0x89, 0x04, 0x8d, 0x78, 0x56, 0x34, 0x12 } },
    { "mov %eax,0x10(%rip)", 6, { 0x89, 0x05, 0x10, 0, 0, 0 } },
    { "movl $0x1,(%rax)", 6, { 0xc7, 0x00, 1, 0, 0, 0 } },
    { "movw $0x1,(%rax)", 5, { 0x66, 0xc7, 0x00, 1, 0 } },
    { "movq $0x1,0x8(%rax)", 8, { 0x48, 0xc7, 0x40, 0x08, 1, 0, 0, 0 } },
    { "movb $0x1,0x100(%rax,%rbx)", 8, { 0xc6, 0x84, 0x18, 0, 1, 0, 0, 1 } },
    { "mov %eax,%fs:(%rdx)", 3, { 0x64, 0x89, 0x02 } },
    { "mov %eax,(%edx) (67h)", 3, { 0x67, 0x89, 0x02 } },
    { "movabs %eax,0xfed90000", 9, { 0xa3, 0, 0, 0xd9, 0xfe, 0, 0, 0, 0 } },
    { "mov %eax,0xfed90000 (67h A3)", 6, { 0x67, 0xa3, 0, 0, 0xd9, 0xfe } },
    { "movw $0x1,(%rax) REX.W cancels 66", 8, { 0x66, 0x48, 0xc7, 0x00, 1, 0, 0, 0 } },
};
static const struct c others[] = {
    { "mov %eax,%edx (register)", 0, { 0x89, 0xc2 } },
    { "mov (%rdx),%eax (load)", 0, { 0x8b, 0x02 } },
    { "lock mov (invalid)", 0, { 0xf0, 0x89, 0x02 } },
    { "rep stos", 0, { 0xf3, 0xab } },
    { "add %eax,(%rdx)", 0, { 0x01, 0x02 } },
    { "C7 /1 (not MOV)", 0, { 0xc7, 0x08, 1, 0, 0, 0 } },
    { "movnti %eax,(%rdx)", 0, { 0x0f, 0xc3, 0x02 } },
    { "REX then prefix", 0, { 0x48, 0x66, 0x89, 0x02 } },
};

/* What each store writes, read off its AT&T form: width, and the source register (SDM
 * numbering, 0 rax .. 15 r15; hi: bits 15:8 of it) or the immediate, sign-extended. */
struct v { const char *what; unsigned len; uint8_t b[15]; unsigned size; int reg; bool hi; uint64_t imm; };
static const struct v values[] = {
    { "mov %eax,(%rdx)", 2, { 0x89, 0x02 }, 4, 0, false, 0 },
    { "mov %ax,(%rdx)", 3, { 0x66, 0x89, 0x02 }, 2, 0, false, 0 },
    { "mov %al,(%rdx)", 2, { 0x88, 0x02 }, 1, 0, false, 0 },
    { "mov %ecx,(%rdx)", 2, { 0x89, 0x0a }, 4, 1, false, 0 },
    { "mov %rax,(%rdi)", 3, { 0x48, 0x89, 0x07 }, 8, 0, false, 0 },
    { "mov %r8d,0x10(%r9)", 4, { 0x45, 0x89, 0x41, 0x10 }, 4, 8, false, 0 },
    { "mov %r15w,(%rax)", 4, { 0x66, 0x44, 0x89, 0x38 }, 2, 15, false, 0 },
    { "mov %ah,(%rdx)", 2, { 0x88, 0x22 }, 1, 0, true, 0 },
    { "mov %bh,(%rdx)", 2, { 0x88, 0x3a }, 1, 3, true, 0 },
    { "mov %spl,(%rdx) (REX: not ah)", 3, { 0x40, 0x88, 0x22 }, 1, 4, false, 0 },
    { "mov %dil,(%rdx)", 3, { 0x40, 0x88, 0x3a }, 1, 7, false, 0 },
    { "mov %r10b,(%rdx)", 3, { 0x44, 0x88, 0x12 }, 1, 10, false, 0 },
    { "mov %esp,(%rdx)", 2, { 0x89, 0x22 }, 4, 4, false, 0 },
    { "movl $0x1,(%rax)", 6, { 0xc7, 0x00, 1, 0, 0, 0 }, 4, -1, false, 1 },
    { "movw $0xfffe,(%rax)", 5, { 0x66, 0xc7, 0x00, 0xfe, 0xff }, 2, -1, false, 0xfffe },
    { "movb $0x80,0x100(%rax,%rbx)", 8, { 0xc6, 0x84, 0x18, 0, 1, 0, 0, 0x80 }, 1, -1, false, 0x80 },
    { "movq $-2,0x8(%rax)", 8, { 0x48, 0xc7, 0x40, 0x08, 0xfe, 0xff, 0xff, 0xff }, 8, -1, false,
      0xfffffffffffffffeull },
    { "movw $0x1,(%rax) REX.W cancels 66", 8, { 0x66, 0x48, 0xc7, 0x00, 1, 0, 0, 0 }, 8, -1, false, 1 },
    { "movabs %eax,0xfed90000", 9, { 0xa3, 0, 0, 0xd9, 0xfe, 0, 0, 0, 0 }, 4, 0, false, 0 },
    { "movabs %al,0xfed90000", 9, { 0xa2, 0, 0, 0xd9, 0xfe, 0, 0, 0, 0 }, 1, 0, false, 0 },
    { "movabs %rax,0xfed90000", 10, { 0x48, 0xa3, 0, 0, 0xd9, 0xfe, 0, 0, 0, 0 }, 8, 0, false, 0 },
    { "mov %ax,0xfed90000 (66 67 A3)", 7, { 0x66, 0x67, 0xa3, 0, 0, 0xd9, 0xfe }, 2, 0, false, 0 },
};

static void test_values(void)
{
    uint64_t regs[16];
    for (unsigned i = 0; i < 16; i++)
        regs[i] = 0x0807060504030201ull + i * 0x1010101010101010ull;
    for (unsigned i = 0; i < sizeof values / sizeof values[0]; i++) {
        const struct v *c = &values[i];
        uint64_t mask = c->size == 8 ? ~0ull : (1ull << (8 * c->size)) - 1;
        uint64_t want = c->reg < 0 ? c->imm & mask : ((c->hi ? regs[c->reg] >> 8 : regs[c->reg]) & mask);
        struct insn_store st;
        unsigned got = insn_store_decode(c->b, c->len, &st);
        uint64_t val = got ? insn_store_value(&st, regs) : 0;
        CHECK(got == c->len && st.size == c->size && val == want,
              "%s: len %u size %u value %#llx, want %u %u %#llx", c->what, got, got ? st.size : 0,
              (unsigned long long)val, c->len, c->size, (unsigned long long)want);
    }
}

int main(void)
{
    test_values();
    for (unsigned i = 0; i < sizeof stores / sizeof stores[0]; i++) {
        const struct c *c = &stores[i];
        unsigned got = insn_store_len(c->b, c->len);
        CHECK(got == c->len, "%s: %u, want %u", c->what, got, c->len);
        uint8_t more[15 + 4];
        memset(more, 0x90, sizeof more);
        memcpy(more, c->b, c->len);
        CHECK(insn_store_len(more, sizeof more) == c->len, "%s followed by NOPs", c->what);
        for (unsigned n = 0; n < c->len; n++)
            CHECK(insn_store_len(c->b, n) == 0, "%s cut to %u bytes", c->what, n);
    }
    for (unsigned i = 0; i < sizeof others / sizeof others[0]; i++)
        CHECK(insn_store_len(others[i].b, 15) == 0, "%s: %u", others[i].what,
              insn_store_len(others[i].b, 15));
    /* 13 prefixes make a 15-byte store, the longest legal instruction; 14 make 16: refused. */
    uint8_t longest[16];
    memset(longest, 0x2e, sizeof longest);
    longest[13] = 0x89; longest[14] = 0x02;
    CHECK(insn_store_len(longest, 15) == 15, "13 prefixes: %u", insn_store_len(longest, 15));
    memset(longest, 0x2e, sizeof longest);
    longest[14] = 0x89; longest[15] = 0x02;
    CHECK(insn_store_len(longest, 16) == 0, "14 prefixes (16 bytes): %u", insn_store_len(longest, 16));
    return check_summary("test_insn_store");
}
