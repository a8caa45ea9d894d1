/*
 * gen_e9 - a synthetic debug-port trace log (the "HVT-META" and "HVT-CHUNK" lines trace/sink.c
 * prints when no NIC is up) for the collector's host tests: the same input then goes to
 * hvt-import (file) and through fake_hv to hvtrace-collector (network), and the two trace files
 * must be equal byte for byte.
 *
 *   gen_e9 [--cpus N] [--insns N] [--windows N] [--chunk-kb N] [--open-end] [--seed N]
 *          [--mode full|flow|regs --regs MASK] OUT
 *
 * Records are encoded by the host trace writer (trace_writer.c) into a scratch trace file with
 * small chunks (each fits one HVT_MSG_TRACE batch); its chunk payloads, decompressed, become the
 * lines. Control flow is valid for hvt-check: each CPU walks a fixed code region of
 * non-branching instructions in order, and only an EVENT marker (an "interrupt") moves it
 * elsewhere; windows are framed by START/STOP markers (--open-end: the last window stays open,
 * as when tracing is stopped from the host), with SWITCH, SYSCALL and TIME markers in between.
 * --mode records in that record mode (format version 3; regs: the HVT_REG_* bits of MASK), so
 * the collector's batch check sees RUN markers and MODE restatements.
 */
#define _GNU_SOURCE
#include "trace_writer.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define GEN_REGION_BASE  0xffffffff81000000ull
#define GEN_REGION_INSNS 4096
#define GEN_LSTAR        0xffffffff81c00080ull
#define GEN_CR3          0x1234000ull
#define GEN_SLICE        997               /* instructions per CPU turn */

static const struct { uint8_t len, b[5]; } gen_insns[] = {
    { 1, { 0x90 } },                           /* nop */
    { 3, { 0x48, 0x89, 0xd8 } },               /* mov rax, rbx */
    { 4, { 0x48, 0x83, 0xc0, 0x01 } },         /* add rax, 1 */
    { 5, { 0xb8, 0x11, 0x22, 0x33, 0x44 } },   /* mov eax, imm32 */
    { 5, { 0x48, 0x8d, 0x44, 0x24, 0x08 } },   /* lea rax, [rsp + 8] */
    { 5, { 0x0f, 0x1f, 0x44, 0x00, 0x00 } },   /* nop dword [rax + rax] */
};
#define GEN_KINDS (sizeof gen_insns / sizeof gen_insns[0])

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

/* The region ends with "jmp base" so the walk wraps around as valid control flow. */
struct region { uint64_t rip[GEN_REGION_INSNS]; uint8_t len[GEN_REGION_INSNS], b[GEN_REGION_INSNS][5]; };

struct gen_cpu { unsigned pos; uint64_t tsc, regs[HVT_NREGS]; };

static int emit_insn(tw_writer *w, unsigned cpu, struct gen_cpu *g, const struct region *r)
{
    tw_insn in = { .rip = r->rip[g->pos], .tsc = ++g->tsc, .cr3 = GEN_CR3,
                   .code = r->b[g->pos], .code_len = r->len[g->pos] };
    g->regs[HVT_REG_RAX] += rnd() % 3;         /* small register changes, as real code makes */
    if (rnd() % 8 == 0) g->regs[HVT_REG_RFLAGS] ^= 0x40;
    memcpy(in.regs, g->regs, sizeof in.regs);
    g->pos = (g->pos + 1) % GEN_REGION_INSNS;
    return tw_insn_add(w, cpu, &in);
}

/* Part of a window on one CPU: n instructions with markers in between. */
static int run(tw_writer *w, unsigned cpu, struct gen_cpu *g, const struct region *r, uint64_t n)
{
    int rc = 0;
    for (uint64_t i = 0; i < n && !rc; i++) {
        uint64_t x = rnd() % 1000;
        if (x == 0) {                            /* an interrupt: may land anywhere */
            rc |= tw_event(w, cpu, 32 + rnd() % 200, HVT_EV_EXTINT, -1);
            g->pos = (unsigned)(rnd() % GEN_REGION_INSNS);
        } else if (x == 1) {
            rc |= tw_syscall(w, cpu, rnd() % 400);
        } else if (x == 2) {
            g->tsc += 1000 + rnd() % 5000;       /* time jumps, as dilation resyncs do */
            rc |= tw_time(w, cpu, g->tsc);
        }
        rc |= emit_insn(w, cpu, g, r);
    }
    return rc;
}

/* One window on every CPU: START, slices of each CPU's instructions in turn (so chunks of
 * different CPUs interleave, as they do from the hypervisor), STOP unless left open. */
static int window(tw_writer *w, unsigned cpus, struct gen_cpu *g, const struct region *r, uint64_t per_cpu,
                  int leave_open)
{
    int rc = 0;
    for (unsigned c = 0; c < cpus; c++) {
        g[c].tsc += 100000;                      /* time passes between windows */
        g[c].pos = (unsigned)(rnd() % GEN_REGION_INSNS);
        rc |= tw_startstop(w, c, 1, HVT_REASON_HYPERCALL);
        rc |= tw_switch(w, c, 100 + c, 100 + c, "gen-worker", GEN_CR3);
    }
    for (uint64_t done = 0; done < per_cpu && !rc; done += GEN_SLICE) {
        uint64_t n = per_cpu - done < GEN_SLICE ? per_cpu - done : GEN_SLICE;
        for (unsigned c = 0; c < cpus; c++)
            rc |= run(w, c, &g[c], r, n);
    }
    for (unsigned c = 0; c < cpus && !leave_open; c++)
        rc |= tw_startstop(w, c, 0, HVT_REASON_HYPERCALL);
    return rc;
}

/* Print each CODE/RECORDS chunk of the scratch file as one debug-port line. */
static int dump_lines(const char *trace, FILE *out)
{
    FILE *f = fopen(trace, "rb");
    if (!f) { perror(trace); return -1; }
    hvt_trace_file_hdr fh;
    if (fread(&fh, sizeof fh, 1, f) != 1) return -1;
    uint8_t *pay = malloc(HVT_CHUNK_RAW_MAX), *raw = malloc(HVT_CHUNK_RAW_MAX);
    hvt_trace_chunk_hdr h;
    while (fread(&h, sizeof h, 1, f) == 1 && h.kind != HVT_CHUNK_INDEX) {
        if (h.payload_size > HVT_CHUNK_RAW_MAX || fread(pay, 1, h.payload_size, f) != h.payload_size)
            return -1;
        const uint8_t *p = pay;
        if (h.compression == HVT_COMP_ZSTD) {
            size_t n = ZSTD_decompress(raw, HVT_CHUNK_RAW_MAX, pay, h.payload_size);
            if (ZSTD_isError(n) || n != h.raw_size) return -1;
            p = raw;
        }
        fprintf(out, "HVT-CHUNK %u %u %u %u %u %llu %llu ", h.kind, h.cpu, h.nrecords, h.ninsns,
                h.first_code_id, (unsigned long long)h.first_tsc, (unsigned long long)h.last_tsc);
        for (uint32_t i = 0; i < h.raw_size; i++) fprintf(out, "%02x", p[i]);
        fputc('\n', out);
        if (rnd() % 4 == 0) fprintf(out, "hvtrace: cpu %u: an unrelated log line\n", h.cpu);
    }
    free(pay);
    free(raw);
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned cpus = 2, windows = 2, chunk_kb = 64;
    uint64_t insns = 200000;
    int open_end = 0;
    unsigned mode = HVT_MODE_FULL;
    uint32_t regmask = 0;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--cpus") && v) { cpus = (unsigned)atoi(v); i++; }
        else if (!strcmp(a, "--insns") && v) { insns = strtoull(v, NULL, 0); i++; }
        else if (!strcmp(a, "--windows") && v) { windows = (unsigned)atoi(v); i++; }
        else if (!strcmp(a, "--chunk-kb") && v) { chunk_kb = (unsigned)atoi(v); i++; }
        else if (!strcmp(a, "--seed") && v) { rng ^= strtoull(v, NULL, 0) * 0x9e3779b97f4a7c15ull; i++; }
        else if (!strcmp(a, "--open-end")) open_end = 1;
        else if (!strcmp(a, "--mode") && v) {
            mode = !strcmp(v, "full") ? HVT_MODE_FULL : !strcmp(v, "flow") ? HVT_MODE_FLOW
                 : !strcmp(v, "regs") ? HVT_MODE_REGS : HVT_MODE_COUNT;
            i++;
        } else if (!strcmp(a, "--regs") && v) { regmask = (uint32_t)strtoul(v, NULL, 0); i++; }
        else if (a[0] != '-' && !out) out = a;
        else out = NULL, i = argc;
    }
    if (!out || !cpus || cpus > 64 || !windows || !chunk_kb || chunk_kb > 1000 || mode >= HVT_MODE_COUNT) {
        fprintf(stderr, "usage: gen_e9 [--cpus N<=64] [--insns N] [--windows N] [--chunk-kb N<=1000] "
                        "[--open-end] [--seed N] [--mode full|flow|regs --regs MASK] OUT\n");
        return 2;
    }
    static struct region r;
    uint64_t a = GEN_REGION_BASE;
    for (unsigned i = 0; i < GEN_REGION_INSNS; i++) {
        unsigned k = (unsigned)(rnd() % GEN_KINDS);
        r.rip[i] = a;
        r.len[i] = gen_insns[k].len;
        memcpy(r.b[i], gen_insns[k].b, r.len[i]);
        if (i == GEN_REGION_INSNS - 1) {       /* jmp rel32 back to the start */
            int32_t rel = (int32_t)(GEN_REGION_BASE - (a + 5));
            r.len[i] = 5;
            r.b[i][0] = 0xe9;
            memcpy(&r.b[i][1], &rel, 4);
        }
        a += r.len[i];
    }
    char scratch[] = "/tmp/gen_e9.XXXXXX";
    int fd = mkstemp(scratch);
    if (fd < 0) { perror("mkstemp"); return 1; }
    close(fd);
    hvt_trace_file_hdr fh;
    memset(&fh, 0, sizeof fh);
    tw_writer *w = tw_open(scratch, &fh, 1);
    if (!w) return 1;
    tw_set_chunk_bytes(w, (size_t)chunk_kb * 1024);
    tw_set_mode(w, mode, regmask);
    static struct gen_cpu g[64];
    int rc = 0;
    uint64_t per = insns / cpus / windows;
    for (unsigned win = 0; win < windows; win++)
        rc |= window(w, cpus, g, &r, per, open_end && win == windows - 1);
    if (rc || tw_close(w) != 0) { fprintf(stderr, "gen_e9: trace writer failed\n"); return 1; }
    FILE *o = fopen(out, "w");
    if (!o) { perror(out); return 1; }
    fprintf(o, "hvtrace: synthetic log from gen_e9\nHVT-META lstar=%llx cpus=%u\n",
            (unsigned long long)GEN_LSTAR, cpus);
    rc = dump_lines(scratch, o);
    unlink(scratch);
    if (rc || fclose(o) != 0) { fprintf(stderr, "gen_e9: cannot write %s\n", out); return 1; }
    return 0;
}
