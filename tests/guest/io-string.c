/*
 * io-string PORT - string I/O (INS/OUTS, with REP) on a port the hypervisor intercepts (the
 * test init passes the ACPI PM1a control port): the hypervisor must emulate each element as
 * the CPU would, never stop. Reads the port's 16-bit value, then: REP INSB of 3 bytes (the low
 * byte each time), REP INSW of 2 words, REP OUTSB of the same low byte twice (writes what is
 * already there), a REP with RCX = 0 (moves nothing), and the value again. Root only (iopl).
 * Exit 0 when every element and register came out as the CPU defines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>

int main(int argc, char **argv)
{
    if (argc != 2) { fprintf(stderr, "usage: io-string PORT\n"); return 2; }
    uint16_t port = (uint16_t)strtoul(argv[1], NULL, 0);
    if (iopl(3)) { perror("io-string: iopl"); return 2; }
    uint16_t w0 = inw(port);
    uint8_t b[4] = {0x5a, 0x5a, 0x5a, 0xa5};
    uint16_t wv[3] = {0x1234, 0x1234, 0xbeef};
    void *di = b;
    uint64_t cx = 3;
    __asm__ volatile("cld; rep insb" : "+D"(di), "+c"(cx) : "d"(port) : "memory");
    int ok = cx == 0 && di == b + 3 && b[0] == (uint8_t)w0 && b[1] == (uint8_t)w0 && b[2] == (uint8_t)w0 && b[3] == 0xa5;
    printf("io-string: rep insb x3 from %#x: %02x %02x %02x (%02x untouched), rcx %lu: %s\n", port, b[0], b[1], b[2],
           b[3], (unsigned long)cx, ok ? "ok" : "FAIL");
    int bad = !ok;
    di = wv; cx = 2;
    __asm__ volatile("cld; rep insw" : "+D"(di), "+c"(cx) : "d"(port) : "memory");
    ok = cx == 0 && wv[0] == w0 && wv[1] == w0 && wv[2] == 0xbeef;
    printf("io-string: rep insw x2: %04x %04x (%04x untouched): %s\n", wv[0], wv[1], wv[2], ok ? "ok" : "FAIL");
    bad += !ok;
    const void *si = b;
    cx = 2;
    __asm__ volatile("cld; rep outsb" : "+S"(si), "+c"(cx) : "d"(port) : "memory");
    ok = cx == 0 && si == b + 2;
    printf("io-string: rep outsb x2 (the value already there): rcx %lu: %s\n", (unsigned long)cx, ok ? "ok" : "FAIL");
    bad += !ok;
    si = b; cx = 0;
    __asm__ volatile("cld; rep outsb" : "+S"(si), "+c"(cx) : "d"(port) : "memory");
    ok = cx == 0 && si == b;
    printf("io-string: rep outsb with rcx 0 moved nothing: %s\n", ok ? "ok" : "FAIL");
    bad += !ok;
    uint16_t w1 = inw(port);
    printf("io-string: port %#x %04x before, %04x after: %s\n", port, w0, w1, w0 == w1 ? "ok" : "FAIL");
    bad += w0 != w1;
    return bad ? 1 : 0;
}
