/* x86_len.c - instruction length decoder for 64-bit mode (SDM Vol. 2, 2.1-2.3, A.3). */
#include "x86_len.h"
#include <stdbool.h>

enum imm { I0 = 0, IB = 1, IW = 2, IZ = 3, IV = 4, I_IWIB = 5, I_MOFFS = 6 };

static uint8_t imm_1byte(uint8_t op)
{
    if (op < 0x40) {
        unsigned lo = op & 7;
        if (lo == 4) return IB;
        if (lo == 5) return IZ;
        return I0;
    }
    switch (op) {
    case 0x68: case 0x69: case 0x81: case 0xa9: case 0xc7: case 0xe8: case 0xe9: return IZ;
    case 0x6a: case 0x6b: case 0x80: case 0x82: case 0x83: case 0xa8: case 0xc0: case 0xc1:
    case 0xc6: case 0xcd: case 0xd4: case 0xd5: case 0xe0: case 0xe1: case 0xe2: case 0xe3:
    case 0xe4: case 0xe5: case 0xe6: case 0xe7: case 0xeb:
        return IB;
    case 0xc2: case 0xca: return IW;
    case 0xc8: return I_IWIB;
    case 0xa0: case 0xa1: case 0xa2: case 0xa3: return I_MOFFS;
    }
    if (op >= 0x70 && op <= 0x7f) return IB;
    if (op >= 0xb0 && op <= 0xb7) return IB;
    if (op >= 0xb8 && op <= 0xbf) return IV;
    return I0;
}

static bool has_modrm_1byte(uint8_t op)
{
    if (op < 0x40)
        return (op & 7) < 4;
    switch (op) {
    case 0x62: case 0x63: case 0x69: case 0x6b: case 0xc0: case 0xc1: case 0xc4: case 0xc5:
    case 0xc6: case 0xc7: case 0xd0: case 0xd1: case 0xd2: case 0xd3: case 0xf6: case 0xf7:
    case 0xfe: case 0xff:
        return true;
    }
    if (op >= 0x80 && op <= 0x8f) return true;
    if (op >= 0xd8 && op <= 0xdf) return true;    /* x87 */
    return false;
}

static bool has_modrm_0f(uint8_t op)
{
    switch (op) {
    case 0x04: case 0x05: case 0x06: case 0x07: case 0x08: case 0x09: case 0x0a: case 0x0b:
    case 0x0c: case 0x0e: case 0x30: case 0x31: case 0x32: case 0x33: case 0x34: case 0x35:
    case 0x36: case 0x37: case 0x77: case 0xa0: case 0xa1: case 0xa2: case 0xa8: case 0xa9:
    case 0xaa:
        return false;
    }
    if (op >= 0x80 && op <= 0x8f) return false;   /* jcc rel32 */
    if (op >= 0xc8 && op <= 0xcf) return false;   /* bswap */
    return true;
}

static bool has_ib_0f(uint8_t op)
{
    switch (op) {
    case 0x70: case 0x71: case 0x72: case 0x73: case 0xa4: case 0xac: case 0xba: case 0xc2:
    case 0xc4: case 0xc5: case 0xc6: case 0x0f:
        return true;
    }
    return false;
}

/* Bytes of ModRM + SIB + displacement, starting at p (SDM 2.1.5, tables 2-2/2-3). */
static int modrm_len(const uint8_t *p, size_t n, bool force_reg)
{
    if (n < 1) return -1;
    uint8_t m = p[0], mod = m >> 6, rm = m & 7;
    if (force_reg || mod == 3) return 1;
    int len = 1;
    if (rm == 4) {
        if (n < 2) return -1;
        len++;
        if (mod == 0 && (p[1] & 7) == 5) len += 4;
    }
    if (mod == 0 && rm == 5) len += 4;
    else if (mod == 1) len += 1;
    else if (mod == 2) len += 4;
    return len;
}

unsigned x86_insn_len(const uint8_t *p, size_t n)
{
    if (n > X86_MAX_INSN_LEN) n = X86_MAX_INSN_LEN;
    size_t i = 0;
    bool opsize = false, adsize = false, rex_w = false;
    /* Legacy prefixes in any order (SDM 2.1.1) and REX (2.2.1): a REX counts only when it
     * comes right before the opcode; one followed by another prefix is ignored. */
    for (; i < n; i++) {
        uint8_t b = p[i];
        if ((b & 0xf0) == 0x40) { rex_w = b & 8; continue; }
        if (b == 0x66) opsize = true;
        else if (b == 0x67) adsize = true;
        else if (b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x36 || b == 0x3e ||
                 b == 0x26 || b == 0x64 || b == 0x65) ;
        else break;
        rex_w = false;
    }
    if (i >= n) return 0;
    uint8_t op = p[i++];
    int imm = 0;
    bool modrm = false, force_reg = false;
    if (op == 0xc4 || op == 0xc5 || op == 0x62) {
        /* VEX (C4 3-byte, C5 2-byte) and EVEX (62): always these in 64-bit mode (SDM 2.3.5,
         * 2.7.1). The map selects the opcode table; every opcode has ModRM except
         * VZEROUPPER/VZEROALL (map 0F, 77); map 0F3A always has an imm8. */
        unsigned map, payload = op == 0xc5 ? 1 : op == 0xc4 ? 2 : 3;
        if (i + payload >= n) return 0;
        map = op == 0xc5 ? 1 : (p[i] & (op == 0x62 ? 0x7 : 0x1f));
        i += payload;
        uint8_t vop = p[i++];
        if (map == 1 && vop == 0x77) return (unsigned)i;
        modrm = true;
        if (map == 3 || (map == 1 && has_ib_0f(vop))) imm = 1;
    } else if (op == 0x0f) {
        if (i >= n) return 0;
        uint8_t op2 = p[i++];
        if (op2 == 0x38 || op2 == 0x3a) {
            if (i >= n) return 0;
            i++;                                   /* the third opcode byte */
            modrm = true;
            imm = op2 == 0x3a ? 1 : 0;
        } else {
            modrm = has_modrm_0f(op2);
            force_reg = op2 >= 0x20 && op2 <= 0x23; /* MOV CR/DR: mod is ignored */
            if (has_ib_0f(op2)) imm = 1;
            if (op2 >= 0x80 && op2 <= 0x8f) imm = 4;
        }
    } else {
        modrm = has_modrm_1byte(op);
        switch (imm_1byte(op)) {
        case IB: imm = 1; break;
        case IW: imm = 2; break;
        case IZ: imm = (opsize && op != 0xe8 && op != 0xe9) ? 2 : 4; break;
        case IV: imm = rex_w ? 8 : opsize ? 2 : 4; break;
        case I_IWIB: imm = 3; break;
        case I_MOFFS: imm = adsize ? 4 : 8; break;
        }
    }
    if (modrm) {
        int ml = modrm_len(p + i, n - i, force_reg);
        if (ml < 0) return 0;
        /* F6/F7 /0 and /1 (TEST) carry an immediate; the other forms don't. */
        if ((op == 0xf6 || op == 0xf7) && ((p[i] >> 3) & 7) < 2)
            imm = op == 0xf6 ? 1 : (opsize ? 2 : 4);
        i += (size_t)ml;
    }
    i += (size_t)imm;
    if (i > X86_MAX_INSN_LEN) return 0;
    return i <= n ? (unsigned)i : 0;
}
