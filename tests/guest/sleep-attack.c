/*
 * sleep-attack PORT TYPE - guest root asks the chipset for a sleep state itself: writes SLP_EN
 * with SLP_TYP = TYPE to the ACPI PM1a control port PORT (the test init passes the FADT's port
 * and the test platform's S3 type), first as one 16-bit write, then as a byte write to the
 * register's high byte (PORT + 1). Under hvtrace both must be refused (the machine would leave
 * the hypervisor behind in S3): the program gets past each and says so. Root only (iopl).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>

#define SLP_EN (1u << 13)

int main(int argc, char **argv)
{
    if (argc != 3) { fprintf(stderr, "usage: sleep-attack PORT TYPE\n"); return 2; }
    uint16_t port = (uint16_t)strtoul(argv[1], NULL, 0);
    unsigned typ = (unsigned)strtoul(argv[2], NULL, 0) & 7;
    if (iopl(3)) { perror("sleep-attack: iopl"); return 2; }
    uint16_t v = inw(port);
    uint16_t w = (uint16_t)((v & ~(7u << 10)) | typ << 10 | SLP_EN);
    printf("sleep-attack: PM1a_CNT %#x = %#x, writing %#x (SLP_TYP %u, SLP_EN)\n", port, v, w, typ);
    fflush(stdout);
    outw(w, port);
    printf("sleep-attack: past the 16-bit write\n");
    fflush(stdout);
    outb((uint8_t)(w >> 8), (uint16_t)(port + 1));
    printf("sleep-attack: past the byte write to %#x: still running\n", port + 1);
    return 0;
}
