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

unsigned insn_store_len(const uint8_t *p, size_t n)
{
    bool opsize = false, addrsize = false, rex_w = false;
    unsigned i = 0;
    while (i < n && i < MAX_INSN && is_legacy_prefix(p[i], &opsize, &addrsize))
        i++;
    if (i < n && (p[i] & 0xf0) == 0x40) {       /* REX, right before the opcode */
        rex_w = p[i] & 8;
        i++;
    }
    if (i >= n)
        return 0;
    uint8_t op = p[i++];
    unsigned reg = 0, m, imm = 0;
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
    return len <= MAX_INSN && len <= n ? len : 0;
}
