/* test_gmem.c - guest page walks and bounded copies (vmm/gmem.c) over a fake guest RAM. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gmem.h"
#include "cpu.h"
#include "check.h"


#define RAM_SIZE (8u << 20)             /* guest RAM: GPA [0, 8 MiB) */
static uint8_t *ram;
static void *map_gpa(uint64_t gpa) { return gpa < RAM_SIZE ? ram + gpa : NULL; }
static const struct gmem_ops ops = { map_gpa };

static uint64_t next_table = 0x100000;
static uint64_t *tbl(uint64_t gpa) { return (uint64_t *)(ram + gpa); }
static uint64_t new_table(void) { uint64_t t = next_table; next_table += 4096; return t; }

#define P 1ull
#define W 2ull
#define U 4ull
#define PS 0x80ull
#define A 0x20ull
#define D 0x40ull
static uint64_t inner_flags = P | W | U;  /* the flags of the intermediate entries map() makes */
/* Map va -> gpa with a page of 4K (level 0), 2M (1) or 1G (2) in a 4-level tree at cr3. */
static void map(uint64_t cr3, uint64_t va, uint64_t gpa, int level, uint64_t flags)
{
    uint64_t t = cr3;
    for (int l = 3; l > level; l--) {
        uint64_t *e = &tbl(t)[(va >> (12 + 9 * l)) & 511];
        if (!*e) *e = new_table() | inner_flags;
        t = *e & 0x000ffffffffff000ull;
    }
    tbl(t)[(va >> (12 + 9 * level)) & 511] = gpa | flags | (level ? PS : 0);
}

int main(void)
{
    ram = calloc(1, RAM_SIZE);
    gmem_set_ops(&ops);
    uint64_t cr3 = new_table();
    struct gmem_paging pg = { CR0_PG | CR0_PE, cr3, CR4_PAE, EFER_LMA | EFER_LME | EFER_NXE };
    map(cr3, 0xffffffff81000000ull, 0x400000, 0, P | W);           /* kernel 4K page */
    map(cr3, 0xffffffff81001000ull, 0x402000, 0, P);                /* next VA, other GPA */
    map(cr3, 0x400000, 0x600000, 1, P | W | U);                     /* user 2 MiB page */
    map(cr3, 0x7f0000000000ull, 0x40000000, 2, P | U);              /* 1 GiB beyond RAM */
    strcpy((char *)ram + 0x400ffe, "AB");
    strcpy((char *)ram + 0x402000, "CDEF");
    strcpy((char *)ram + 0x600123, "user");

    struct gmem_xlat x;
    /* accessed/dirty: ad_set only when a write would set none of them */
    uint64_t cr3ad = new_table();
    inner_flags = P | W | U | A;
    map(cr3ad, 0xffffc90000000000ull, 0x500000, 0, P | W | A | D);    /* a stack page, as Linux maps it */
    map(cr3ad, 0xffffc90000001000ull, 0x501000, 0, P | W | A);        /* clean */
    inner_flags = P | W | U;
    map(cr3ad, 0xffffc90040000000ull, 0x502000, 0, P | W | A | D);    /* an upper level not accessed */
    struct gmem_paging pgad = { CR0_PG | CR0_PE, cr3ad, CR4_PAE, EFER_LMA | EFER_LME | EFER_NXE };
    CHECK(gmem_walk(&pgad, 0xffffc90000000008ull, &x) == GMEM_OK && x.ad_set && x.writable, "A+D everywhere: ad_set");
    CHECK(gmem_walk(&pgad, 0xffffc90000001008ull, &x) == GMEM_OK && !x.ad_set, "leaf not dirty: !ad_set");
    CHECK(gmem_walk(&pgad, 0xffffc90040000008ull, &x) == GMEM_OK && !x.ad_set, "an upper level without A: !ad_set");
    CHECK(gmem_walk(&pg, 0xffffffff81000ffeull, &x) == GMEM_OK && x.gpa == 0x400ffe && x.page_shift == 12,
          "4K walk gpa %llx", (unsigned long long)x.gpa);
    CHECK(gmem_walk(&pg, 0x400123, &x) == GMEM_OK && x.gpa == 0x600123 && x.page_shift == 21 && x.user,
          "2M walk");
    CHECK(gmem_walk(&pg, 0x7f0000001000ull, &x) == GMEM_OK && x.gpa == 0x40001000 && x.page_shift == 30,
          "1G walk");
    CHECK(gmem_walk(&pg, 0x800000000000ull, &x) == GMEM_ENONCANONICAL, "non-canonical");
    CHECK(gmem_walk(&pg, 0x1000, &x) == GMEM_ENOTPRESENT, "not present");
    char buf[8] = {0};
    /* A copy across a page boundary whose two VA pages map to non-adjacent GPAs. */
    CHECK(gmem_read_gva(&pg, 0xffffffff81000ffeull, buf, 6) == 6 && !memcmp(buf, "ABCDEF", 6),
          "cross-page copy '%.6s'", buf);
    CHECK(gmem_read_gva(&pg, 0xffffffff81001ffeull, buf, 8) == 2, "copy stops at a missing page");
    CHECK(gmem_read_gva(&pg, 0x7f0000000000ull, buf, 8) == 0, "GPA outside RAM: nothing copied");
    CHECK(gmem_read_gva(&pg, 0x400123, buf, 5) == 5 && !strcmp(buf, "user"), "user read");
    struct gmem_paging off = { 0, 0, 0, 0 };
    CHECK(gmem_read_gva(&off, 0x402000, buf, 4) == 4 && !memcmp(buf, "CDEF", 4), "paging off: identity");
    return check_summary("test_gmem");
}
