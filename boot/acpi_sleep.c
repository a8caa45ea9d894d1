/* acpi_sleep.c - see acpi_sleep.h. */
#include "acpi_sleep.h"

#define ACPI_HDR_LEN     36u
#define ACPI_HDR_CSUM    9u
#define AML_NAME_OP      0x08
#define AML_PACKAGE_OP   0x12
#define AML_ROOT_CHAR    '\\'
#define AML_ZERO_OP      0x00
#define AML_ONE_OP       0x01
#define AML_ONES_OP      0xff
#define AML_BYTE_PREFIX  0x0a
#define AML_WORD_PREFIX  0x0b
#define AML_DWORD_PREFIX 0x0c
#define SLP_TYP_MASK     7u

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The block's own length, checked against what the caller has. */
static long block_len(const uint8_t *t, size_t len)
{
    if (len < ACPI_HDR_LEN)
        return -1;
    uint32_t l = rd32(t + 4);
    return l < ACPI_HDR_LEN || l > len ? -1 : (long)l;
}

/* One data object (20.2.3 "Data Objects Encoding": the integer forms): its value in *v and its
 * size, or 0 if it is not one of them or runs past end. */
static size_t aml_int(const uint8_t *p, const uint8_t *end, uint32_t *v)
{
    if (p >= end)
        return 0;
    switch (*p) {
    case AML_ZERO_OP: *v = 0; return 1;
    case AML_ONE_OP:  *v = 1; return 1;
    case AML_ONES_OP: *v = 0xffffffffu; return 1;
    case AML_BYTE_PREFIX:
        if (end - p < 2) return 0;
        *v = p[1]; return 2;
    case AML_WORD_PREFIX:
        if (end - p < 3) return 0;
        *v = (uint32_t)p[1] | (uint32_t)p[2] << 8; return 3;
    case AML_DWORD_PREFIX:
        if (end - p < 5) return 0;
        *v = rd32(p + 1); return 5;
    }
    return 0;
}

/* At p: NameOp ['\'] "_Sx_" PackageOp? Returns x and the NameSeg's offset, or -1. */
static int sleep_name_at(const uint8_t *p, const uint8_t *end, const uint8_t **seg)
{
    if (*p != AML_NAME_OP)
        return -1;
    const uint8_t *s = p + 1;
    if (s < end && *s == AML_ROOT_CHAR)
        s++;
    if (end - s < 6 || s[0] != '_' || s[1] != 'S' || s[2] < '0' || s[2] > '5' || s[3] != '_' ||
        s[4] != AML_PACKAGE_OP)
        return -1;
    *seg = s;
    return s[2] - '0';
}

/* The package after the NameSeg: PkgLength (20.2.4: the lead byte's bits 7:6 count the bytes
 * that follow it), NumElements, SLP_TYPa, SLP_TYPb. */
static int sleep_values(const uint8_t *seg, const uint8_t *end, uint8_t *a, uint8_t *b)
{
    const uint8_t *p = seg + 5;
    if (p >= end)
        return -1;
    p += 1 + (*p >> 6);
    if (p >= end || *p < 2)
        return -1;                          /* NumElements: both types must be there */
    p++;
    uint32_t va, vb;
    size_t n = aml_int(p, end, &va);
    if (!n)
        return -1;
    size_t m = aml_int(p + n, end, &vb);
    if (!m)
        return -1;
    *a = (uint8_t)(va & SLP_TYP_MASK);
    *b = (uint8_t)(vb & SLP_TYP_MASK);
    return 0;
}

int acpi_sleep_scan(const uint8_t *table, size_t len, struct acpi_sleep_info *info)
{
    long l = block_len(table, len);
    if (l < 0)
        return -1;
    const uint8_t *end = table + l, *seg;
    int found = 0;
    for (const uint8_t *p = table + ACPI_HDR_LEN; p < end; p++) {
        int x = sleep_name_at(p, end, &seg);
        uint8_t a, b;
        if (x < 0 || sleep_values(seg, end, &a, &b))
            continue;
        info->present |= (uint8_t)(1u << x);
        info->typ_a[x] = a;
        info->typ_b[x] = b;
        found++;
    }
    return found;
}

int acpi_sleep_hide(uint8_t *table, size_t len, uint8_t mask)
{
    long l = block_len(table, len);
    if (l < 0)
        return -1;
    uint8_t *end = table + l;
    const uint8_t *seg;
    int renamed = 0;
    for (uint8_t *p = table + ACPI_HDR_LEN; p < end; p++) {
        int x = sleep_name_at(p, end, &seg);
        if (x < 0 || !(mask & (1u << x)))
            continue;
        uint8_t a, b;
        if (sleep_values(seg, end, &a, &b))
            continue;                       /* not a sleep package: leave it */
        table[seg - table] = 'X';
        renamed++;
    }
    if (renamed) {
        uint8_t sum = 0;
        table[ACPI_HDR_CSUM] = 0;
        for (long i = 0; i < l; i++)
            sum = (uint8_t)(sum + table[i]);
        table[ACPI_HDR_CSUM] = (uint8_t)(0 - sum);
    }
    return renamed;
}
