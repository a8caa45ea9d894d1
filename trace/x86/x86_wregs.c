/* x86_wregs.c - general registers an instruction may write (see x86_wregs.h). Opcode maps:
 * SDM Vol. 2, appendix A (tables, group encodings A-6). */
#include "x86_wregs.h"
#include <stdbool.h>

#define ALL X86_WREGS_ALL
enum {
    RAX = 1u << 0, RCX = 1u << 1, RDX = 1u << 2, RBX = 1u << 3, RSP = 1u << 4, RBP = 1u << 5,
    RSI = 1u << 6, RDI = 1u << 7, R11 = 1u << 11,
};

struct insn {
    bool rex, byte;        /* a REX prefix; a byte-sized register operand */
    bool rep;              /* an F2/F3 prefix */
    unsigned rex_b, rex_r;
    bool modrm_ok, modrm_used;
    unsigned mod, reg, rm, grp;   /* ModRM fields (reg/rm extended by REX), grp = bits 5:3 */
};

/* Register n; without REX a byte operand 4-7 is AH, CH, DH, BH (SDM 3.4.1.1): both. */
static unsigned reg_bit(const struct insn *x, unsigned n)
{
    unsigned m = 1u << n;
    if (x->byte && !x->rex && n >= 4 && n < 8)
        m |= 1u << (n - 4);
    return m;
}
/* The ModRM operands; using them marks the instruction as having one. */
static unsigned w_reg(struct insn *x) { x->modrm_used = true; return reg_bit(x, x->reg); }
static unsigned w_rm(struct insn *x) { x->modrm_used = true; return x->mod == 3 ? reg_bit(x, x->rm) : 0; }
static unsigned grp(struct insn *x) { x->modrm_used = true; return x->grp; }
static unsigned mod(struct insn *x) { x->modrm_used = true; return x->mod; }

static unsigned one_byte(struct insn *x, uint8_t op)
{
    if (op < 0x40) {
        unsigned form = op & 7, cmp = (op >> 3) == 7;       /* 38-3D: CMP writes no register */
        x->byte = !(op & 1);
        if (form > 5 || op == 0x0f)
            return ALL;                                      /* invalid in 64-bit mode */
        if (cmp)
            return 0;
        return form < 2 ? w_rm(x) : form < 4 ? w_reg(x) : RAX;
    }
    if (op >= 0x50 && op <= 0x57) return RSP;                               /* PUSH r */
    if (op >= 0x58 && op <= 0x5f) return RSP | (1u << ((op & 7) | x->rex_b << 3));  /* POP r */
    if (op >= 0x70 && op <= 0x7f) return 0;                                 /* Jcc */
    if (op >= 0x90 && op <= 0x97) return RAX | (1u << ((op & 7) | x->rex_b << 3));  /* XCHG/NOP */
    if (op >= 0xb0 && op <= 0xbf) {                                         /* MOV r, imm */
        x->byte = op < 0xb8;
        return reg_bit(x, (op & 7) | x->rex_b << 3);
    }
    if (op >= 0xd8 && op <= 0xdf) return RAX;              /* x87: only FNSTSW AX writes a GPR */
    x->byte = op == 0x80 || op == 0x84 || op == 0x86 || op == 0x88 || op == 0x8a || op == 0xc0 ||
              op == 0xc6 || op == 0xd0 || op == 0xd2 || op == 0xf6 || op == 0xfe;
    switch (op) {
    case 0x63: case 0x69: case 0x6b: case 0x8a: case 0x8b: case 0x8d:
        return w_reg(x);                               /* MOVSXD, IMUL r,r/m,imm, MOV r,r/m, LEA */
    case 0x68: case 0x6a: case 0x9c: case 0x9d: case 0xc2: case 0xc3: case 0xca: case 0xcb:
    case 0xcf: case 0xe8:
        return RSP;                                    /* PUSH imm, PUSHF, POPF, RET, IRET, CALL */
    case 0x80: case 0x81: case 0x83:
        return grp(x) == 7 ? 0 : w_rm(x);              /* group 1: /7 is CMP */
    case 0x84: case 0x85: case 0x8e: case 0x9b: case 0x9e: case 0xa2: case 0xa3: case 0xa8:
    case 0xa9: case 0xe3: case 0xe6: case 0xe7: case 0xe9: case 0xeb: case 0xee: case 0xef:
    case 0xf4: case 0xf5: case 0xf8: case 0xf9: case 0xfa: case 0xfb: case 0xfc: case 0xfd:
        return 0;         /* TEST, MOV Sreg, FWAIT, SAHF, MOV moffs, JRCXZ, OUT, JMP, HLT, flags */
    case 0x86: case 0x87:
        return w_rm(x) | w_reg(x);                     /* XCHG */
    case 0x88: case 0x89: case 0x8c: case 0xc0: case 0xc1: case 0xd0: case 0xd1: case 0xd2:
    case 0xd3:
        return w_rm(x);                                /* MOV r/m,r, MOV r/m,Sreg, shifts */
    case 0x8f:
        return grp(x) == 0 ? RSP | w_rm(x) : ALL;     /* POP r/m */
    case 0x98: case 0x9f: case 0xa0: case 0xa1: case 0xd7: case 0xe4: case 0xe5: case 0xec:
    case 0xed:
        return RAX;                                    /* CBW.., LAHF, MOV A,moffs, XLAT, IN */
    case 0x99:
        return RDX;                                    /* CWD/CDQ/CQO */
    case 0xa4: case 0xa5: case 0xa6: case 0xa7:
        return RSI | RDI | RCX;                        /* MOVS, CMPS (RCX with REP) */
    case 0xaa: case 0xab: case 0xae: case 0xaf:
        return RDI | RCX;                              /* STOS, SCAS */
    case 0xac: case 0xad:
        return RSI | RCX | RAX;                        /* LODS */
    case 0xc6: case 0xc7:
        return grp(x) == 0 ? w_rm(x) : ALL;           /* MOV r/m,imm; /7 XBEGIN/XABORT */
    case 0xc8: case 0xc9:
        return RSP | RBP;                              /* ENTER, LEAVE */
    case 0xe0: case 0xe1: case 0xe2:
        return RCX;                                    /* LOOPcc */
    case 0xf6: case 0xf7:                              /* group 3 */
        return grp(x) < 2 ? 0 : grp(x) < 4 ? w_rm(x) : RAX | RDX;
    case 0xfe:                                         /* group 4: INC/DEC r/m8 */
        return grp(x) < 2 ? w_rm(x) : ALL;
    case 0xff:                                         /* group 5 */
        if (grp(x) < 2) return w_rm(x);                /* INC, DEC */
        if (grp(x) == 2 || grp(x) == 3 || grp(x) == 6) return RSP;   /* CALL, CALLF, PUSH */
        if (grp(x) == 4 || grp(x) == 5) return 0;      /* JMP, JMPF */
        return ALL;
    }
    return ALL;           /* INS/OUTS, INT, undefined in 64-bit mode, ... */
}

static unsigned two_byte(struct insn *x, uint8_t op)
{
    if (op >= 0x40 && op <= 0x4f) return w_reg(x);                    /* CMOVcc */
    if (op >= 0x80 && op <= 0x8f) return 0;                            /* Jcc */
    if (op >= 0x90 && op <= 0x9f) { x->byte = true; return w_rm(x); }  /* SETcc */
    if (op >= 0xc8 && op <= 0xcf) return 1u << ((op & 7) | x->rex_b << 3);   /* BSWAP */
    if (op >= 0x18 && op <= 0x1f) return w_rm(x);      /* hint NOPs, ENDBR; F3 0F 1E /1 RDSSP */
    /* SSE/MMX register forms with an XMM/MMX destination write no GPR. */
    if ((op >= 0x10 && op <= 0x17) || (op >= 0x28 && op <= 0x2b) || (op >= 0x2e && op <= 0x2f) ||
        (op >= 0x51 && op <= 0x7f && op != 0x78 && op != 0x79 && op != 0x7e) || op == 0xc2 || op == 0xc4 ||
        op == 0xc6 || (op >= 0xd0 && op <= 0xfe && op != 0xd7))
        return 0;
    switch (op) {
    case 0x00:                                         /* group 6: SLDT, STR write r/m */
        return grp(x) < 2 ? w_rm(x) : 0;
    case 0x01:                                         /* group 7 */
        /* Memory forms (SGDT, LIDT, INVLPG, ...) write no GPR; register forms include
         * RDTSCP (RAX, RDX, RCX), XGETBV, RDPKRU, ENCLS/ENCLU (RAX-RDX), SMSW r. */
        return mod(x) == 3 ? RAX | RBX | RCX | RDX | w_rm(x) : 0;
    case 0x02: case 0x03: case 0x2c: case 0x2d: case 0x50: case 0xaf: case 0xb2: case 0xb4:
    case 0xb5: case 0xb6: case 0xb7: case 0xb8: case 0xbc: case 0xbd: case 0xbe: case 0xbf:
    case 0xc5: case 0xd7:
        return w_reg(x);   /* LAR, LSL, CVT*2SI, MOVMSK, IMUL, LSS/LFS/LGS, MOVZX/SX, POPCNT,
                              BSF/BSR, PEXTRW, PMOVMSKB */
    case 0x05:
        return RCX | R11;                              /* SYSCALL */
    case 0x06: case 0x08: case 0x09: case 0x0b: case 0x0d: case 0x30: case 0x77: case 0xa3:
    case 0xb9: case 0xff:
        return 0;                     /* CLTS, INVD, WBINVD, UD2, PREFETCHW, WRMSR, EMMS, BT, UD */
    case 0x20: case 0x21:
        x->modrm_used = true;
        return reg_bit(x, x->rm);                      /* MOV r, CR/DR (mod ignored) */
    case 0x22: case 0x23:
        return 0;
    case 0x31: case 0x32: case 0x33:
        return RAX | RDX;                              /* RDTSC, RDMSR, RDPMC */
    case 0x7e:
        return w_rm(x);                                /* MOVD/MOVQ r/m, mm/xmm */
    case 0xa0: case 0xa1: case 0xa8: case 0xa9:
        return RSP;                                    /* PUSH/POP FS/GS */
    case 0xa2:
        return RAX | RBX | RCX | RDX;                  /* CPUID */
    case 0xa4: case 0xa5: case 0xab: case 0xac: case 0xad: case 0xb3: case 0xbb:
        return w_rm(x);                                /* SHLD, SHRD, BTS, BTR, BTC */
    case 0xae:                                         /* group 15: RDFSBASE/RDGSBASE r */
        return mod(x) == 3 ? w_rm(x) : 0;
    case 0xb0: case 0xb1:
        x->byte = op == 0xb0;
        return w_rm(x) | RAX;                          /* CMPXCHG */
    case 0xba:                                         /* group 8: BT, BTS, BTR, BTC imm */
        return grp(x) == 4 ? 0 : grp(x) > 4 ? w_rm(x) : ALL;
    case 0xc0: case 0xc1:
        x->byte = op == 0xc0;
        return w_rm(x) | w_reg(x);                     /* XADD */
    case 0xc3:
        return 0;                                      /* MOVNTI m, r */
    case 0xc7:                                         /* group 9: CMPXCHG8B/16B, RDRAND, ... */
        return RAX | RDX | w_rm(x);
    }
    return ALL;   /* SYSRET, SYSENTER, 0F 38 / 0F 3A, VMX, undefined, ... */
}

/* Prefixes, REX, opcode and ModRM (SDM 2.1.1, 2.2.1): false if the bytes end first, or the
 * opcode is one of the maps and encodings the tables here do not cover. */
static bool decode_head(const uint8_t *p, size_t n, struct insn *x, bool *two, uint8_t *opc)
{
    size_t i = 0;
    if (n > 15) n = 15;
    /* A REX counts only right before the opcode. */
    for (; i < n; i++) {
        uint8_t b = p[i];
        if ((b & 0xf0) == 0x40) {
            x->rex = true;
            x->rex_b = b & 1;
            x->rex_r = (b >> 2) & 1;
            continue;
        }
        if (b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e ||
            b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65) {
            x->rep |= b == 0xf2 || b == 0xf3;
            x->rex = false;
            x->rex_b = x->rex_r = 0;
            continue;
        }
        break;
    }
    if (i >= n)
        return false;
    uint8_t op = p[i++];
    *two = op == 0x0f;
    if (*two) {
        if (i >= n)
            return false;
        op = p[i++];
        if (op == 0x38 || op == 0x3a || op == 0x0f)
            return false;                              /* three-byte maps, 3DNow! */
    } else if (op == 0xc4 || op == 0xc5 || op == 0x62) {
        return false;                                  /* VEX, EVEX (BMI writes GPRs) */
    }
    if (i < n) {
        uint8_t m = p[i];
        x->modrm_ok = true;
        x->mod = m >> 6;
        x->grp = (m >> 3) & 7;
        x->reg = x->grp | x->rex_r << 3;
        x->rm = (m & 7) | x->rex_b << 3;
    }
    *opc = op;
    return true;
}

static unsigned wregs_of(struct insn *x, bool two, uint8_t op)
{
    unsigned w = two ? two_byte(x, op) : one_byte(x, op);
    /* A form that uses ModRM needs it present; without it, claim nothing. */
    return x->modrm_used && !x->modrm_ok ? ALL : w;
}

unsigned x86_insn_wregs(const uint8_t *p, size_t n)
{
    bool wflags;
    return x86_insn_writes(p, n, &wflags);
}

/* Instructions that leave RFLAGS alone (SDM Vol. 2, each one's "Flags Affected": "None"):
 * data moves, stack operations other than POPF, branches, calls and returns other than IRET,
 * LOOPcc, CMOVcc/SETcc, conversions, port I/O, CPUID, RDTSC, SSE moves. Anything else is
 * taken to write it. A REP string instruction writes RF: stepped (or interrupted) between
 * iterations, the CPU sets RFLAGS.RF until the last one (SDM 6.8.3 "Resuming string
 * instructions"; seen under MTF in Bochs: RF set after the first iteration of REP STOSQ). */
static bool wflags_of(const struct insn *xp, bool two, uint8_t op)
{
    const struct insn x = *xp;
    if (two) {
        if ((op >= 0x40 && op <= 0x4f) || (op >= 0x80 && op <= 0x9f) || (op >= 0xc8 && op <= 0xcf) ||
            (op >= 0x10 && op <= 0x1f) || (op >= 0x28 && op <= 0x29) || op == 0x2b ||
            (op >= 0x50 && op <= 0x7f) || (op >= 0xd0 && op <= 0xfe))
            return false;  /* CMOVcc, Jcc, SETcc, BSWAP, SSE moves/hints/NOPs, SSE arithmetic */
        switch (op) {
        case 0x31: case 0xa0: case 0xa1: case 0xa2: case 0xa8: case 0xa9: case 0xb6: case 0xb7:
        case 0xbe: case 0xbf: case 0xc3:
            return false;  /* RDTSC, PUSH/POP FS/GS, CPUID, MOVZX/MOVSX, MOVNTI */
        }
        return true;
    }
    if (x.rep && ((op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf) || (op >= 0x6c && op <= 0x6f)))
        return true;
    if ((op >= 0x50 && op <= 0x5f) || (op >= 0x70 && op <= 0x7f) || (op >= 0x86 && op <= 0x8c) ||
        (op >= 0x90 && op <= 0x99) || (op >= 0xa0 && op <= 0xa5) || (op >= 0xb0 && op <= 0xbf) ||
        (op >= 0xe0 && op <= 0xe9))
        return false;      /* PUSH/POP, Jcc, XCHG/MOV/LEA, NOP/XCHG/CBW/CWD, MOV moffs, MOVS,
                              MOV imm, LOOPcc/JRCXZ, IN/OUT, CALL, JMP */
    switch (op) {
    case 0x63: case 0x68: case 0x6a: case 0x8d: case 0x8e: case 0x9b: case 0x9c: case 0x9f:
    case 0xaa: case 0xab: case 0xac: case 0xad: case 0xc2: case 0xc3: case 0xc8: case 0xc9:
    case 0xd7: case 0xeb: case 0xec: case 0xed: case 0xee: case 0xef:
        return false;      /* MOVSXD, PUSH imm, LEA, MOV Sreg, FWAIT, PUSHF, LAHF, STOS, LODS,
                              RET, ENTER, LEAVE, XLAT, JMP, IN/OUT DX */
    case 0x8f:
        return !(x.modrm_ok && x.grp == 0);            /* POP r/m */
    case 0xc6: case 0xc7:
        return !(x.modrm_ok && x.grp == 0);            /* MOV r/m, imm */
    case 0xff:                                         /* group 5: CALL, JMP, PUSH */
        return !(x.modrm_ok && x.grp >= 2 && x.grp <= 6);
    }
    return true;
}

bool x86_insn_wflags(const uint8_t *p, size_t n)
{
    bool wflags;
    (void)x86_insn_writes(p, n, &wflags);
    return wflags;
}

unsigned x86_insn_writes(const uint8_t *p, size_t n, bool *wflags)
{
    struct insn x = { 0 };
    bool two;
    uint8_t op;
    if (!decode_head(p, n, &x, &two, &op)) {
        *wflags = true;
        return ALL;
    }
    *wflags = wflags_of(&x, two, op);
    return wregs_of(&x, two, op);
}

#define OPC_0F        0x0f
#define OPC_SYSCALL   0x05                 /* 0F 05 */
#define OPC_MOV_TO_CR 0x22                 /* 0F 22 */
#define OPC_GRP7      0x01                 /* 0F 01: group 7 */
#define GRP7_LIDT     3                    /* its ModRM.reg for LIDT */
#define OPC_INT3      0xcc
#define OPC_INTN      0xcd
#define OPC_IRET      0xcf
#define REX_MASK      0xf0
#define REX_BASE      0x40

unsigned x86_insn_class(const uint8_t *p, size_t n)
{
    if (n == 0)
        return 0;
    if (n == 2 && p[0] == OPC_0F && p[1] == OPC_SYSCALL)
        return X86_CLASS_SYSCALL;
    if (p[0] == OPC_INT3 || p[0] == OPC_INTN)
        return X86_CLASS_SWINT;
    if (p[0] == OPC_IRET || (n == 2 && (p[0] & REX_MASK) == REX_BASE && p[1] == OPC_IRET))
        return X86_CLASS_IRET;
    /* REP string: legacy prefixes (one of them F2/F3), a REX prefix, then the opcode
     * (SDM Vol. 2, 2.1.1 "Instruction Prefixes"; REP in table A-2's string rows). */
    size_t i = 0;
    bool rep = false;
    for (; i < n; i++) {
        uint8_t b = p[i];
        if (b == 0xf2 || b == 0xf3)
            rep = true;
        else if (!(b == 0x66 || b == 0x67 || b == 0xf0 || b == 0x2e || b == 0x36 || b == 0x3e ||
                   b == 0x26 || b == 0x64 || b == 0x65))
            break;
    }
    if (i < n && (p[i] & REX_MASK) == REX_BASE)
        i++;
    /* MOV to CRn (0F 22 /r) and LIDT (0F 01 /3, memory operand): SDM Vol. 2, "MOV - Move
     * to/from Control Registers" and "LGDT/LIDT - Load Global/Interrupt Descriptor Table
     * Register"; 0F 01 /3 with mod = 11 encodes other instructions (VMRUN and its family). */
    if (i + 1 < n && p[i] == OPC_0F &&
        (p[i + 1] == OPC_MOV_TO_CR ||
         (p[i + 1] == OPC_GRP7 && i + 2 < n && (p[i + 2] >> 3 & 7) == GRP7_LIDT && p[i + 2] >> 6 != 3)))
        return X86_CLASS_CTX;
    if (rep && i + 1 == n && ((p[i] >= 0xa4 && p[i] <= 0xa7) || (p[i] >= 0xaa && p[i] <= 0xaf) ||
                              (p[i] >= 0x6c && p[i] <= 0x6f)))
        return X86_CLASS_REPSTR;
    return 0;
}
