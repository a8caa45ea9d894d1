/* mode_trace: a small trace of real x86-64 code, written by the host trace writer in a chosen
 * record mode, for test-modes.sh (hvt-check and `hvt analyze` on every mode: same instructions,
 * same continuity, registers only where the mode carries them).
 *   mode_trace [--mode full|flow|regs=REG:...] [--then MODE] [--loops N] [--break] OUT
 * The program (user space at 0x401000) is walked by a tiny interpreter that knows its eleven
 * instructions: a REP STOSB of RCX iterations (each a step of its own: REPEAT in FLOW), a
 * counted loop (a Jcc taken 49 times), a call to a function with a frame (push/mov/pop/ret)
 * and a jump back to the start; a timer interrupt (EVENT, a kernel handler ending in IRETQ)
 * every 97 instructions and a SWITCH marker at the start. --break makes one call fall through
 * instead of entering the function: a continuity violation hvt-check must find in every mode.
 * --then switches to another mode halfway (mid-chunk). */
#include "trace_reader.h"
#include "trace_writer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MT_USER_CR3 0x5000000ull
#define MT_HANDLER  0xffffffff81001000ull
#define MT_STACK    0x7ffd0000f000ull
#define MT_TIMER    97                  /* an interrupt every this many instructions */

static const struct { uint64_t rip; uint8_t len, b[5]; } prog[] = {
    { 0x401000, 5, { 0xb9, 0x64, 0x00, 0x00, 0x00 } }, /* 0  mov ecx, 100 */
    { 0x401005, 2, { 0x31, 0xc0 } },                   /* 1  xor eax, eax */
    { 0x401007, 2, { 0xf3, 0xaa } },                   /* 2  rep stosb */
    { 0x401009, 3, { 0x83, 0xc0, 0x01 } },             /* 3  add eax, 1 */
    { 0x40100c, 3, { 0x83, 0xf8, 0x32 } },             /* 4  cmp eax, 50 */
    { 0x40100f, 2, { 0x75, 0xf8 } },                   /* 5  jne 0x401009 */
    { 0x401011, 5, { 0xe8, 0x0a, 0x00, 0x00, 0x00 } }, /* 6  call 0x401020 */
    { 0x401016, 2, { 0xeb, 0xe8 } },                   /* 7  jmp 0x401000 */
    { 0x401020, 1, { 0x55 } },                         /* 8  push rbp */
    { 0x401021, 3, { 0x48, 0x89, 0xe5 } },             /* 9  mov rbp, rsp */
    { 0x401024, 1, { 0x5d } },                         /* 10 pop rbp */
    { 0x401025, 1, { 0xc3 } },                         /* 11 ret */
};
static const uint8_t handler[2][2] = { { 0x90 }, { 0x48, 0xcf } };  /* nop; iretq */

static tw_writer *w;
static uint64_t regs[HVT_NREGS], tsc = 1000, ninsns;

static int put(uint64_t rip, const uint8_t *b, uint8_t len, uint64_t cr3)
{
    tw_insn in = { .rip = rip, .tsc = ++tsc, .cr3 = cr3, .code = b, .code_len = len };
    memcpy(in.regs, regs, sizeof regs);
    ninsns++;
    return tw_insn_add(w, 0, &in);
}

/* One instruction of the program at index i, executed; returns the next index. */
static int step(int i, int brk)
{
    int next = i + 1;
    switch (i) {
    case 0: regs[HVT_REG_RCX] = 100; break;
    case 1: regs[HVT_REG_RAX] = 0; regs[HVT_REG_RFLAGS] = 0x246; break;
    case 2: regs[HVT_REG_RCX]--; regs[HVT_REG_RDI]++; if (regs[HVT_REG_RCX]) next = 2; break;
    case 3: regs[HVT_REG_RAX]++; regs[HVT_REG_RFLAGS] = 0x202; break;
    case 4: regs[HVT_REG_RFLAGS] = regs[HVT_REG_RAX] == 50 ? 0x246 : 0x297; break;
    case 5: next = regs[HVT_REG_RAX] == 50 ? 6 : 3; break;
    case 6: if (brk) break; regs[HVT_REG_RSP] -= 8; next = 8; break;
    case 7: next = 0; break;
    case 8: regs[HVT_REG_RSP] -= 8; break;
    case 9: regs[HVT_REG_RBP] = regs[HVT_REG_RSP]; break;
    case 10: regs[HVT_REG_RBP] = 0; regs[HVT_REG_RSP] += 8; break;
    case 11: regs[HVT_REG_RSP] += 8; next = 7; break;
    }
    return next;
}

int main(int argc, char **argv)
{
    unsigned mode = HVT_MODE_FULL, then = HVT_MODE_COUNT;
    uint32_t mask = 0, then_mask = 0;
    int loops = 20, brk = 0;
    const char *out = NULL;
    char err[160];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mode") && i + 1 < argc) {
            if (tr_mode_parse(argv[++i], &mode, &mask, err, sizeof err)) { fprintf(stderr, "mode_trace: %s\n", err); return 2; }
        } else if (!strcmp(argv[i], "--then") && i + 1 < argc) {
            if (tr_mode_parse(argv[++i], &then, &then_mask, err, sizeof err)) { fprintf(stderr, "mode_trace: %s\n", err); return 2; }
        } else if (!strcmp(argv[i], "--loops") && i + 1 < argc) loops = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--break")) brk = 1;
        else if (argv[i][0] != '-' && !out) out = argv[i];
        else out = NULL, i = argc;
    }
    if (!out) {
        fprintf(stderr, "usage: mode_trace [--mode full|flow|regs=REG:...] [--then MODE] [--loops N] [--break] OUT\n");
        return 2;
    }
    hvt_trace_file_hdr h;
    memset(&h, 0, sizeof h);
    h.ncpus = 1;
    w = tw_open(out, &h, 1);
    if (!w || tw_set_mode(w, mode, mask)) return 1;
    tw_set_chunk_bytes(w, 2048);      /* many chunks: the mode restated at each */
    regs[HVT_REG_RSP] = MT_STACK;
    int rc = tw_startstop(w, 0, 1, HVT_REASON_USER) | tw_switch(w, 0, 42, 42, "modeloop", MT_USER_CR3);
    int i = 0;
    for (int loop = 0; loop < loops && !rc;) {
        rc |= put(prog[i].rip, prog[i].b, prog[i].len, MT_USER_CR3);
        int next = step(i, brk && loop == loops / 2 && i == 6);
        if (ninsns % MT_TIMER == 0) {    /* the interrupt arrives after this instruction */
            uint64_t sp = regs[HVT_REG_RSP];
            rc |= tw_event(w, 0, 236, HVT_EV_EXTINT, -1);
            regs[HVT_REG_RSP] = 0xffffc90000010f58ull;
            rc |= put(MT_HANDLER, handler[0], 1, MT_USER_CR3);
            rc |= put(MT_HANDLER + 1, handler[1], 2, MT_USER_CR3);
            regs[HVT_REG_RSP] = sp;
        }
        if (next == 0 && ++loop == loops / 2 && then < HVT_MODE_COUNT) rc |= tw_set_mode(w, then, then_mask);
        i = next;
    }
    rc |= tw_startstop(w, 0, 0, HVT_REASON_USER);
    if (rc || tw_close(w) != 0) { fprintf(stderr, "mode_trace: %s: write failed\n", out); return 1; }
    printf("mode_trace: %llu instructions\n", (unsigned long long)ninsns);
    return 0;
}
