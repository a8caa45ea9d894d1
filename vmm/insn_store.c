/* insn_store.c - length of a MOV store (contract and SDM sections in insn_store.h). */
#include <stdbool.h>
#include "insn_store.h"

#define MAX_INSN 15u

static bool is_legacy_prefix(uint8_t b, bool *opsize, bool *addrsize)
{
    switch (b) {
    case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
        return true;                    /* segment overrides */
    case 0x66:
        *opsize = true;
        return true;
    case 0x67:
        *addrsize = true;
        return true;
    default:
        return false;                   /* LOCK (F0) and REP (F2/F3) are not MOV's */
    }
}

/* Bytes of ModR/M, SIB and displacement at p[i]; 0 for a register operand or too few bytes.
 * 64-bit mode always uses the 32-bit forms (with or without 67h): mod 00 rm 101 is
 * RIP-relative disp32, rm 100 brings a SIB whose base 101 under mod 00 is disp32. */
static unsigned modrm_len(const uint8_t *p, size_t n, unsigned i, unsigned *reg)
{
    if (i >= n)
        return 0;
    uint8_t m = p[i];
    unsigned mod = m >> 6, rm = m & 7, len = 1;
    *reg = (m >> 3) & 7;
    if (mod == 3)
        return 0;
    if (rm == 4) {
        if (i + 1 >= n)
            return 0;
        len++;
        if (mod == 0 && (p[i + 1] & 7) == 5)
            len += 4;
    } else if (mod == 0 && rm == 5) {
        len += 4;
    }
    len += mod == 1 ? 1 : mod == 2 ? 4 : 0;
    return len;
}

static uint64_t imm_le(const uint8_t *p, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

unsigned insn_store_decode(const uint8_t *p, size_t n, struct insn_store *s)
{
    bool opsize = false, addrsize = false, rex = false, rex_w = false, rex_r = false;
    unsigned i = 0;
    *s = (struct insn_store){ 0 };
    while (i < n && i < MAX_INSN && is_legacy_prefix(p[i], &opsize, &addrsize))
        i++;
    if (i < n && (p[i] & 0xf0) == 0x40) {       /* REX, right before the opcode */
        rex = true;
        rex_w = p[i] & 8;
        rex_r = p[i] & 4;
        i++;
    }
    if (i >= n)
        return 0;
    uint8_t op = p[i++];
    unsigned reg = 0, m, imm = 0;
    bool byte = op == 0x88 || op == 0xc6 || op == 0xa2;
    s->size = byte ? 1 : rex_w ? 8 : opsize ? 2 : 4;
    switch (op) {
    case 0x88: case 0x89:
        m = modrm_len(p, n, i, &reg);
        break;
    case 0xc6: case 0xc7:
        m = modrm_len(p, n, i, &reg);
        if (reg != 0)
            return 0;                   /* C6/C7 with reg != 0: not MOV */
        imm = op == 0xc6 ? 1 : opsize && !rex_w ? 2 : 4;
        break;
    case 0xa2: case 0xa3:               /* MOV moffs, AL/eAX: the offset is address-sized */
        m = addrsize ? 4 : 8;
        break;
    default:
        return 0;
    }
    if (m == 0)
        return 0;
    unsigned len = i + m + imm;
    if (len > MAX_INSN || len > n)
        return 0;
    if (imm) {
        uint64_t v = imm_le(p + i + m, imm);
        if (imm == 4 && s->size == 8 && (v & 0x80000000u))
            v |= 0xffffffff00000000ull;  /* imm32 sign-extended to 64 bits */
        s->imm = true;
        s->value = v;
    } else if (op == 0xa2 || op == 0xa3) {
        s->reg = 0;                     /* AL / AX / EAX / RAX */
    } else {
        s->reg = reg | (rex_r ? 8u : 0u);
        s->high8 = byte && !rex && reg >= 4;
        if (s->high8)
            s->reg = reg - 4;
    }
    return len;
}

unsigned insn_store_len(const uint8_t *p, size_t n)
{
    struct insn_store s;
    return insn_store_decode(p, n, &s);
}

uint64_t insn_store_value(const struct insn_store *s, const uint64_t regs[16])
{
    uint64_t mask = s->size >= 8 ? ~0ull : (1ull << (8 * s->size)) - 1;
    if (s->imm)
        return s->value & mask;
    uint64_t v = regs[s->reg & 15];
    return (s->high8 ? v >> 8 : v) & mask;
}
