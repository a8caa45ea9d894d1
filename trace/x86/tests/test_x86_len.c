/* test_x86_len.c - trace/x86/x86_len.c against capstone: every instruction of the .text of the
 * ELF files given (linear sweep; capstone's length is the oracle), plus hand-picked cases. */
#include "elf_sweep.h"
#include "x86_len.h"
#include "check.h"


static void check(const char *what, const uint8_t *b, size_t n, unsigned want)
{
    unsigned got = x86_insn_len(b, n);
    if (got == want) { check_passed++; return; }
    check_failed++;
    if (check_failed <= 30) {
        printf("FAIL %s: got %u want %u bytes:", what, got, want);
        for (size_t i = 0; i < (n < 15 ? n : 15); i++) printf(" %02x", b[i]);
        printf("\n");
    }
}

static void check_insn(const char *path, csh cs, const cs_insn *insn, const uint8_t *b, size_t n)
{
    (void)cs;
    check(path, b, n, insn->size);
}

int main(int argc, char **argv)
{
    csh cs;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) return 2;
    /* Hand-picked: MOV CR (mod ignored), VEX/EVEX, moffs, TEST imm, enter, truncation. */
    struct { const char *name; uint8_t b[15]; size_t n; unsigned len; } cases[] = {
        { "mov cr3,rax", { 0x0f, 0x22, 0xd8 }, 3, 3 },
        { "mov rax,cr4 (mod=0 encoding)", { 0x0f, 0x20, 0x20 }, 3, 3 },
        { "vmovdqu ymm0,[rax]", { 0xc5, 0xfe, 0x6f, 0x00 }, 4, 4 },
        { "vpshufd (vex, imm)", { 0xc5, 0xfd, 0x70, 0xc1, 0x1b }, 5, 5 },
        { "vzeroupper", { 0xc5, 0xf8, 0x77 }, 3, 3 },
        { "evex vmovdqu64", { 0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x44, 0x24, 0x01 }, 8, 8 },
        { "movabs rax,moffs", { 0x48, 0xa1, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, 10 },
        { "movabs rax,imm64", { 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8 }, 10, 10 },
        { "test byte [rax],1", { 0xf6, 0x00, 0x01 }, 3, 3 },
        { "not dword [rax]", { 0xf7, 0x10 }, 2, 2 },
        { "test ax,imm16", { 0x66, 0xf7, 0xc0, 1, 2 }, 5, 5 },
        { "enter", { 0xc8, 0x10, 0x00, 0x00 }, 4, 4 },
        { "call rel32 (66 ignored)", { 0x66, 0xe8, 1, 2, 3, 4 }, 6, 6 },
        { "syscall", { 0x0f, 0x05 }, 2, 2 },
        { "swapgs", { 0x0f, 0x01, 0xf8 }, 3, 3 },
        { "lea rip-relative", { 0x48, 0x8d, 0x05, 1, 2, 3, 4 }, 7, 7 },
        { "sib disp32 no base", { 0x8b, 0x04, 0x25, 1, 2, 3, 4 }, 7, 7 },
        { "truncated", { 0x48, 0x8d, 0x05, 1 }, 4, 0 },
        { "pshufb (0f38)", { 0x66, 0x0f, 0x38, 0x00, 0xc1 }, 5, 5 },
        { "palignr (0f3a imm)", { 0x66, 0x0f, 0x3a, 0x0f, 0xc1, 0x08 }, 6, 6 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check(cases[i].name, cases[i].b, cases[i].n, cases[i].len);
    for (int i = 1; i < argc; i++)
        elf_sweep(argv[i], cs, check_insn);
    cs_close(&cs);
    return check_summary("test_x86_len");
}
