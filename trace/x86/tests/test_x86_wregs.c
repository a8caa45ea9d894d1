/* test_x86_wregs.c - trace/x86/x86_wregs.c against capstone: for every instruction of the .text of
 * the ELF files given (linear sweep), the general registers capstone says it writes (explicit
 * and implicit, cs_regs_access) must be in x86_insn_wregs()'s mask; plus hand-picked cases
 * with exact masks. A miss would put a wrong register value in a trace, so any is a failure.
 * Also prints how often the answer is "all" (the fast path then compares every register). */
#include "elf_sweep.h"
#include "x86_wregs.h"
#include "check.h"

static size_t n_all, n_insn, n_bits, corrected, n_noflags;

/* capstone's eflags bits that write a flag (modify, set, reset, leave undefined). */
static const uint64_t flag_writes =
    X86_EFLAGS_MODIFY_AF | X86_EFLAGS_MODIFY_CF | X86_EFLAGS_MODIFY_SF | X86_EFLAGS_MODIFY_ZF |
    X86_EFLAGS_MODIFY_PF | X86_EFLAGS_MODIFY_OF | X86_EFLAGS_MODIFY_TF | X86_EFLAGS_MODIFY_IF |
    X86_EFLAGS_MODIFY_DF | X86_EFLAGS_MODIFY_NT | X86_EFLAGS_MODIFY_RF | X86_EFLAGS_RESET_OF |
    X86_EFLAGS_RESET_CF | X86_EFLAGS_RESET_DF | X86_EFLAGS_RESET_IF | X86_EFLAGS_RESET_SF |
    X86_EFLAGS_RESET_AF | X86_EFLAGS_RESET_TF | X86_EFLAGS_RESET_NT | X86_EFLAGS_RESET_PF |
    X86_EFLAGS_SET_CF | X86_EFLAGS_SET_DF | X86_EFLAGS_SET_IF | X86_EFLAGS_UNDEFINED_OF |
    X86_EFLAGS_UNDEFINED_SF | X86_EFLAGS_UNDEFINED_ZF | X86_EFLAGS_UNDEFINED_PF |
    X86_EFLAGS_UNDEFINED_AF | X86_EFLAGS_UNDEFINED_CF | X86_EFLAGS_RESET_RF | X86_EFLAGS_RESET_ZF |
    X86_EFLAGS_SET_OF | X86_EFLAGS_SET_SF | X86_EFLAGS_SET_ZF | X86_EFLAGS_SET_AF |
    X86_EFLAGS_SET_PF | X86_EFLAGS_RESET_0F | X86_EFLAGS_RESET_AC;

/* x86_insn_wflags() must say "may write" for every instruction capstone lists as writing a flag,
 * and for the ones whose flags capstone 4.0.2 does not list but the SDM says are written. */
static void check_flags(const char *what, const cs_insn *in, const uint8_t *b, size_t n)
{
    bool writes = (in->detail->x86.eflags & flag_writes) != 0;
    bool got = x86_insn_wflags(b, n);
    if (!got) n_noflags++;
    if (!writes || got) { check_passed++; return; }
    check_failed++;
    if (check_failed <= 30) {
        printf("FAIL %s: %s %s: capstone writes flags %#lx, ours says no; bytes:", what, in->mnemonic,
               in->op_str, (unsigned long)(in->detail->x86.eflags & flag_writes));
        for (size_t i = 0; i < in->size; i++) printf(" %02x", b[i]);
        printf("\n");
    }
}

/* capstone register -> GPR number (SDM order), -1 for any other register. */
static int gpr_of(csh cs, unsigned reg)
{
    static const char *names[16][5] = {
        { "rax", "eax", "ax", "al", "ah" }, { "rcx", "ecx", "cx", "cl", "ch" },
        { "rdx", "edx", "dx", "dl", "dh" }, { "rbx", "ebx", "bx", "bl", "bh" },
        { "rsp", "esp", "sp", "spl" }, { "rbp", "ebp", "bp", "bpl" },
        { "rsi", "esi", "si", "sil" }, { "rdi", "edi", "di", "dil" },
        { "r8", "r8d", "r8w", "r8b" }, { "r9", "r9d", "r9w", "r9b" },
        { "r10", "r10d", "r10w", "r10b" }, { "r11", "r11d", "r11w", "r11b" },
        { "r12", "r12d", "r12w", "r12b" }, { "r13", "r13d", "r13w", "r13b" },
        { "r14", "r14d", "r14w", "r14b" }, { "r15", "r15d", "r15w", "r15b" },
    };
    const char *n = cs_reg_name(cs, reg);
    if (!n) return -1;
    for (int g = 0; g < 16; g++)
        for (int k = 0; k < 5 && names[g][k]; k++)
            if (!strcmp(n, names[g][k])) return g;
    return -1;
}

/* X86_CLASS_REPSTR exactly when capstone sees a REP/REPNE prefix on a one-byte string opcode
 * (capstone parses the prefixes and REX on its own). */
static size_t n_repstr, n_ctx;
static void check_class(const char *what, const cs_insn *in, const uint8_t *b)
{
    const cs_x86 *x = &in->detail->x86;
    uint8_t op = x->opcode[0];
    bool str = x->opcode[1] == 0 && ((op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf) ||
                                     (op >= 0x6c && op <= 0x6f));
    bool want = str && (x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE);
    unsigned cls = x86_insn_class(b, in->size);                          /* its exact length */
    bool got = (cls & X86_CLASS_REPSTR) != 0;
    n_repstr += got;
    /* X86_CLASS_CTX exactly for capstone's MOV to a control register and LIDT. */
    bool want_ctx = !strcmp(in->mnemonic, "lidt") ||
                    (x->opcode[0] == 0x0f && x->opcode[1] == 0x22 && !strcmp(in->mnemonic, "mov"));
    bool got_ctx = (cls & X86_CLASS_CTX) != 0;
    n_ctx += got_ctx;
    if (want == got && want_ctx == got_ctx) { check_passed++; return; }
    check_failed++;
    if (check_failed <= 30)
        printf("FAIL %s: %s %s: capstone REP string %d CR/IDTR load %d, ours %d %d\n", what, in->mnemonic,
               in->op_str, want, want_ctx, got, got_ctx);
}

static void check_insn(const char *what, csh cs, const cs_insn *in, const uint8_t *b, size_t n)
{
    cs_regs rr, rw;
    uint8_t nr = 0, nw = 0;
    check_flags(what, in, b, n);
    check_class(what, in, b);
    if (cs_regs_access(cs, in, rr, &nr, rw, &nw) != CS_ERR_OK) return;
    unsigned want = 0;
    for (int k = 0; k < nw; k++) {
        int g = gpr_of(cs, rw[k]);
        if (g >= 0) want |= 1u << g;
    }
    /* capstone 4.0.2's lists say two instructions write the accumulator that only read it
     * (SDM Vol. 2: TEST "the result is discarded"; CWD/CDQ/CQO write (E/R)DX only): the
     * A8/A9 forms of TEST and CWD/CDQ/CQO. Exactly those are corrected here. */
    if ((!strcmp(in->mnemonic, "test") && (in->detail->x86.opcode[0] == 0xa8 || in->detail->x86.opcode[0] == 0xa9)) ||
        !strcmp(in->mnemonic, "cwd") || !strcmp(in->mnemonic, "cdq") || !strcmp(in->mnemonic, "cqo")) {
        want &= ~1u;
        corrected++;
    }
    unsigned got = x86_insn_wregs(b, n);
    n_insn++;
    if (got == X86_WREGS_ALL) n_all++;
    else n_bits += (unsigned)__builtin_popcount(got);
    if (!(want & ~got)) { check_passed++; return; }
    check_failed++;
    if (check_failed <= 30) {
        printf("FAIL %s: %s %s: capstone writes %#x, ours %#x; bytes:", what, in->mnemonic, in->op_str, want, got);
        for (size_t i = 0; i < in->size; i++) printf(" %02x", b[i]);
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    csh cs;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) return 2;
    cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
    /* Exact masks where the table's choices matter (bit n = GPR n: 0 RAX, 1 RCX, 2 RDX, ...). */
    struct { const char *name; uint8_t b[15]; size_t n; unsigned want; } cases[] = {
        { "add rax,rbx", { 0x48, 0x01, 0xd8 }, 3, 1u << 0 },
        { "cmp rax,rbx", { 0x48, 0x39, 0xd8 }, 3, 0 },
        { "mov esi,eax (no byte alias)", { 0x89, 0xc6 }, 2, 1u << 6 },
        { "mov ah,al (ah is rax)", { 0x88, 0xc4 }, 2, (1u << 4) | (1u << 0) },
        { "mov spl,al (REX: spl)", { 0x40, 0x88, 0xc4 }, 3, 1u << 4 },
        { "mov r9,[rax]", { 0x4c, 0x8b, 0x08 }, 3, 1u << 9 },
        { "mov [rax],r9", { 0x4c, 0x89, 0x08 }, 3, 0 },
        { "mul rcx", { 0x48, 0xf7, 0xe1 }, 3, (1u << 0) | (1u << 2) },
        { "rep movsb", { 0xf3, 0xa4 }, 2, (1u << 1) | (1u << 6) | (1u << 7) },
        { "push rbp", { 0x55 }, 1, 1u << 4 },
        { "pop r12", { 0x41, 0x5c }, 2, (1u << 4) | (1u << 12) },
        { "call rel32", { 0xe8, 0, 0, 0, 0 }, 5, 1u << 4 },
        { "ret", { 0xc3 }, 1, 1u << 4 },
        { "jne", { 0x75, 0x10 }, 2, 0 },
        { "syscall", { 0x0f, 0x05 }, 2, (1u << 1) | (1u << 11) },
        { "rdtsc", { 0x0f, 0x31 }, 2, (1u << 0) | (1u << 2) },
        { "cmpxchg [rdi],rsi", { 0x48, 0x0f, 0xb1, 0x37 }, 4, 1u << 0 },
        { "xchg r8,rax (41 90)", { 0x41, 0x90 }, 2, (1u << 0) | (1u << 8) },
        { "REX then 66: REX ignored", { 0x41, 0x66, 0x89, 0xc0 }, 4, 1u << 0 },
        { "sysret: all", { 0x48, 0x0f, 0x07 }, 3, X86_WREGS_ALL },
        { "vex andn: all", { 0xc4, 0xe2, 0x78, 0xf2, 0xc1 }, 5, X86_WREGS_ALL },
        { "truncated: all", { 0x48 }, 1, X86_WREGS_ALL },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned got = x86_insn_wregs(cases[i].b, cases[i].n);
        if (got == cases[i].want) { check_passed++; continue; }
        check_failed++;
        printf("FAIL %s: got %#x want %#x\n", cases[i].name, got, cases[i].want);
    }
    /* RFLAGS, exactly: 1 = may write. */
    struct { const char *name; uint8_t b[15]; size_t n; bool want; } fcases[] = {
        { "add rax,rbx", { 0x48, 0x01, 0xd8 }, 3, true },
        { "cmp rax,rbx", { 0x48, 0x39, 0xd8 }, 3, true },
        { "mov r9,[rax]", { 0x4c, 0x8b, 0x08 }, 3, false },
        { "lea rax,[rbx+8]", { 0x48, 0x8d, 0x43, 0x08 }, 4, false },
        { "push rbp", { 0x55 }, 1, false },
        { "jne", { 0x75, 0x10 }, 2, false },
        { "call rel32", { 0xe8, 0, 0, 0, 0 }, 5, false },
        { "ret", { 0xc3 }, 1, false },
        { "inc dword [rax] (ff /0)", { 0xff, 0x00 }, 2, true },
        { "call [rax] (ff /2)", { 0xff, 0x10 }, 2, false },
        { "popf", { 0x9d }, 1, true },
        { "cli", { 0xfa }, 1, true },
        { "cld", { 0xfc }, 1, true },
        { "iretq", { 0x48, 0xcf }, 2, true },
        { "syscall", { 0x0f, 0x05 }, 2, true },
        { "stac (0f 01 cb)", { 0x0f, 0x01, 0xcb }, 3, true },
        { "cmovne", { 0x48, 0x0f, 0x45, 0xc1 }, 4, false },
        { "sete al", { 0x0f, 0x94, 0xc0 }, 3, false },
        { "mov cr3,rax (flags undefined)", { 0x0f, 0x22, 0xd8 }, 3, true },
        { "movsq: no", { 0x48, 0xa5 }, 2, false },
        { "rep movsq: RF between iterations", { 0xf3, 0x48, 0xa5 }, 3, true },
        { "rep stosq: RF between iterations", { 0xf3, 0x48, 0xab }, 3, true },
        { "endbr64: no", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, false },
        { "vex andn: may", { 0xc4, 0xe2, 0x78, 0xf2, 0xc1 }, 5, true },
        { "truncated: may", { 0x48 }, 1, true },
    };
    for (size_t i = 0; i < sizeof fcases / sizeof fcases[0]; i++) {
        bool got = x86_insn_wflags(fcases[i].b, fcases[i].n);
        if (got == fcases[i].want) { check_passed++; continue; }
        check_failed++;
        printf("FAIL flags %s: got %d want %d\n", fcases[i].name, got, fcases[i].want);
    }
    /* REP string instructions, exactly. */
    struct { const char *name; uint8_t b[15]; size_t n; bool want; } rcases[] = {
        { "rep movsb", { 0xf3, 0xa4 }, 2, true },
        { "rep movsq", { 0xf3, 0x48, 0xa5 }, 3, true },
        { "repne scasb", { 0xf2, 0xae }, 2, true },
        { "rep stosd, 67 prefix", { 0x67, 0xf3, 0xab }, 3, true },
        { "fs rep movsb", { 0x64, 0xf3, 0xa4 }, 3, true },
        { "rep insb", { 0xf3, 0x6c }, 2, true },
        { "movsq: no", { 0x48, 0xa5 }, 2, false },
        { "endbr64: no", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, false },
        { "pause (f3 90): no", { 0xf3, 0x90 }, 2, false },
        { "sse movsd (f2 0f 10): no", { 0xf2, 0x0f, 0x10, 0xc1 }, 4, false },
        { "rep then REX then REX: no", { 0xf3, 0x48, 0x48, 0xa5 }, 4, false },
    };
    /* CR3 and IDTR loads, exactly. */
    struct { const char *name; uint8_t b[15]; size_t n; bool want; } ccases[] = {
        { "mov cr3, rax", { 0x0f, 0x22, 0xd8 }, 3, true },
        { "mov cr3, rdi (REX.B)", { 0x41, 0x0f, 0x22, 0xdf }, 4, true },
        { "mov cr8, rax (REX.R)", { 0x44, 0x0f, 0x22, 0xc0 }, 4, true },
        { "lidt [rax]", { 0x0f, 0x01, 0x18 }, 3, true },
        { "lidt [rsp+8]", { 0x0f, 0x01, 0x5c, 0x24, 0x08 }, 5, true },
        { "mov rax, cr3: no", { 0x0f, 0x20, 0xd8 }, 3, false },
        { "lgdt [rax]: no", { 0x0f, 0x01, 0x10 }, 3, false },
        { "sidt [rax]: no", { 0x0f, 0x01, 0x08 }, 3, false },
        { "vmrun (0f 01 d8): no", { 0x0f, 0x01, 0xd8 }, 3, false },
        { "swapgs: no", { 0x0f, 0x01, 0xf8 }, 3, false },
    };
    for (size_t i = 0; i < sizeof ccases / sizeof ccases[0]; i++) {
        bool got = (x86_insn_class(ccases[i].b, ccases[i].n) & X86_CLASS_CTX) != 0;
        if (got == ccases[i].want) { check_passed++; continue; }
        check_failed++;
        printf("FAIL class %s: got %d want %d\n", ccases[i].name, got, ccases[i].want);
    }
    for (size_t i = 0; i < sizeof rcases / sizeof rcases[0]; i++) {
        bool got = (x86_insn_class(rcases[i].b, rcases[i].n) & X86_CLASS_REPSTR) != 0;
        if (got == rcases[i].want) { check_passed++; continue; }
        check_failed++;
        printf("FAIL class %s: got %d want %d\n", rcases[i].name, got, rcases[i].want);
    }
    for (int i = 1; i < argc; i++)
        elf_sweep(argv[i], cs, check_insn);
    cs_close(&cs);
    if (n_insn)
        printf("x86_wregs: %zu instructions, %.2f%% 'all', %.2f registers on average otherwise, "
               "%zu capstone lists corrected (TEST A8/A9, CWD/CDQ/CQO); %.1f%% leave RFLAGS alone\n",
               n_insn, 100.0 * n_all / n_insn, n_insn > n_all ? (double)n_bits / (n_insn - n_all) : 0.0,
               corrected, 100.0 * n_noflags / n_insn);
    if (n_insn)
        printf("x86_wregs: %zu REP string instructions, %zu CR or IDTR loads\n", n_repstr, n_ctx);
    return check_summary("test_x86_wregs");
}
