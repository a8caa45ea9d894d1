/* elf_sweep.h - for the decoder tests (test_x86_len, test_x86_wregs): run capstone over the
 * .text of an ELF file (linear sweep, resyncing a byte at a time over data) and hand each
 * instruction to a check with the bytes from its start to the section's end (at most 15).
 * Prints "PATH: N instructions"; a file that cannot be read is skipped with a line. */
#ifndef HVT_ELF_SWEEP_H
#define HVT_ELF_SWEEP_H
#include <capstone/capstone.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*elf_sweep_fn)(const char *path, csh cs, const cs_insn *insn, const uint8_t *bytes, size_t avail);

static void elf_sweep(const char *path, csh cs, elf_sweep_fn fn)
{
    FILE *f = fopen(path, "rb");
    if (!f) { printf("skip %s\n", path); return; }
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc(sz);
    if (fread(buf, 1, sz, f) != (size_t)sz) { fclose(f); free(buf); return; }
    fclose(f);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
    Elf64_Shdr *sh = (Elf64_Shdr *)(buf + eh->e_shoff);
    const char *strs = (const char *)buf + sh[eh->e_shstrndx].sh_offset;
    size_t count = 0;
    for (int s = 0; s < eh->e_shnum; s++) {
        if (strcmp(strs + sh[s].sh_name, ".text")) continue;
        const uint8_t *code = buf + sh[s].sh_offset;
        size_t left = sh[s].sh_size;
        uint64_t addr = sh[s].sh_addr;
        cs_insn *insn = cs_malloc(cs);
        while (left) {
            const uint8_t *p = code;
            if (!cs_disasm_iter(cs, &code, &left, &addr, insn)) {
                code = p + 1; left--; addr++;           /* data in text: resync */
                continue;
            }
            size_t avail = (size_t)(code - p) + left;
            fn(path, cs, insn, p, avail < 15 ? avail : 15);
            count++;
        }
        cs_free(insn, 1);
    }
    printf("%s: %zu instructions\n", path, count);
    free(buf);
}
#endif
