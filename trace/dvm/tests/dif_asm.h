/* dif_asm.h - a tiny assembler of D images (include/hvt_dif.h) for the host tests of the
 * verifier, the interpreter and the loader: a_new(), clauses of a_i() instructions ended by
 * a_end(), a_var/a_agg/a_probe tables, a_build() the image (aligned_alloc'd, the caller frees).
 * Header-only (static), one image under construction per test program (A). */
#ifndef HVT_TEST_DIF_ASM_H
#define HVT_TEST_DIF_ASM_H
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "hvt_dif.h"


struct asmb {
    struct hvt_dif_hdr hdr;
    struct hvt_dif_clause clauses[64];
    uint32_t nclauses, clause_start;
    bool open;
    struct hvt_dif_insn *insns;
    uint32_t ninsns, insn_cap;
    uint64_t consts[64];
    uint32_t nconsts;
    struct hvt_dif_var vars[64];
    uint32_t nvars;
    struct hvt_dif_agg aggs[64];
    uint32_t naggs;
    struct hvt_dif_probe *probes;
    uint32_t nprobes, probe_cap;
    uint16_t *pcl;
    uint32_t npcl, pcl_cap;
    char *strtab;
    uint32_t strtab_len, strtab_cap;
    uint32_t pstr[4];
};
static struct asmb A;

static inline void *grow(void *p, uint32_t *cap, uint32_t need, size_t esz)
{
    if (need <= *cap)
        return p;
    while (*cap < need)
        *cap = *cap ? *cap * 2 : 64;
    return realloc(p, *cap * esz);
}

static inline uint32_t a_str(const char *s)
{
    uint32_t n = (uint32_t)strlen(s) + 1, off = A.strtab_len;
    A.strtab = grow(A.strtab, &A.strtab_cap, A.strtab_len + n, 1);
    memcpy(A.strtab + off, s, n);
    A.strtab_len += n;
    return off;
}

static inline void a_new(void)
{
    free(A.insns); free(A.probes); free(A.pcl); free(A.strtab);
    memset(&A, 0, sizeof(A));
    A.hdr.magic = HVT_DIF_MAGIC;
    A.hdr.strsize = 64;
    A.hdr.bufsize = 64 << 10;
    A.hdr.aggsize = 64 << 10;
    A.hdr.dynvarsize = 64 << 10;
    a_str("");
}

static inline void a_begin(void) { A.clause_start = A.ninsns; A.open = true; }
static inline int a_i(int op, int rd, int ra, int rb, int32_t imm)
{
    if (!A.open)
        a_begin();
    A.insns = grow(A.insns, &A.insn_cap, A.ninsns + 1, sizeof(*A.insns));
    A.insns[A.ninsns++] = (struct hvt_dif_insn){ (uint8_t)op, (uint8_t)rd, (uint8_t)ra, (uint8_t)rb, imm };
    return (int)(A.ninsns - 1 - A.clause_start);
}
/* Ends the clause (a RET appended unless raw) and returns its index. */
static inline uint32_t a_end_raw(void)
{
    A.clauses[A.nclauses] = (struct hvt_dif_clause){ A.clause_start, A.ninsns - A.clause_start };
    A.open = false;
    return A.nclauses++;
}
static inline uint32_t a_end(void) { a_i(HVT_DIF_OP_RET, 0, 0, 0, 0); return a_end_raw(); }
static inline int a_here(void) { return (int)(A.ninsns - A.clause_start); }
static inline void a_patch(int at, int32_t target) { A.insns[A.clause_start + at].imm = target; }

static inline uint32_t a_const(uint64_t v) { A.consts[A.nconsts] = v; return A.nconsts++; }
static inline uint32_t a_var(int kind, int type, int nkeys, int t0, int t1)
{
    struct hvt_dif_var *v = &A.vars[A.nvars];
    memset(v, 0, sizeof(*v));
    v->kind = (uint8_t)kind;
    v->type = (uint8_t)type;
    v->nkeys = (uint8_t)nkeys;
    if (nkeys > 0) v->key_types[0] = (uint8_t)t0;
    if (nkeys > 1) v->key_types[1] = (uint8_t)t1;
    v->name = a_str("v");
    return A.nvars++;
}
static inline uint32_t a_agg(int fn, int nkeys, int t0, int t1, int64_t p0, int64_t p1, int64_t p2,
                      int64_t p3, uint32_t nbuckets)
{
    struct hvt_dif_agg *a = &A.aggs[A.naggs];
    memset(a, 0, sizeof(*a));
    a->fn = (uint8_t)fn;
    a->nkeys = (uint8_t)nkeys;
    if (nkeys > 0) a->key_types[0] = (uint8_t)t0;
    if (nkeys > 1) a->key_types[1] = (uint8_t)t1;
    a->p[0] = p0; a->p[1] = p1; a->p[2] = p2; a->p[3] = p3;
    a->name = a_str("a");
    a->nbuckets = nbuckets;
    return A.naggs++;
}
static inline void a_probe(uint32_t id, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    A.probes = grow(A.probes, &A.probe_cap, A.nprobes + 1, sizeof(*A.probes));
    A.pcl = grow(A.pcl, &A.pcl_cap, A.npcl + (uint32_t)n + 1, sizeof(*A.pcl));
    struct hvt_dif_probe *p = &A.probes[A.nprobes++];
    memset(p, 0, sizeof(*p));
    p->id = id;
    p->clauses = A.npcl;
    p->nclauses = (uint32_t)n;
    for (int i = 0; i < n; i++)
        A.pcl[A.npcl++] = (uint16_t)va_arg(ap, int);
    if (!A.pstr[0]) {                /* one copy of the names for every probe */
        A.pstr[0] = a_str("fbt");
        A.pstr[1] = a_str("vmlinux");
        A.pstr[2] = a_str("do_sys_open");
        A.pstr[3] = a_str("entry");
    }
    p->prov = A.pstr[0];
    p->mod = A.pstr[1];
    p->func = A.pstr[2];
    p->name = A.pstr[3];
    va_end(ap);
}

static inline uint32_t al8(uint32_t n) { return (n + 7) & ~7u; }
static inline uint8_t *a_build(size_t *len)
{
    struct hvt_dif_hdr h = A.hdr;
    uint32_t o = al8(sizeof(h));
#define SEC(off, n, cnt, esz) do { h.off = o; h.n = cnt; o = al8(o + (cnt) * (uint32_t)(esz)); } while (0)
    SEC(off_clauses, nclauses, A.nclauses, sizeof(struct hvt_dif_clause));
    SEC(off_insns, ninsns, A.ninsns, sizeof(struct hvt_dif_insn));
    SEC(off_consts, nconsts, A.nconsts, 8);
    SEC(off_vars, nvars, A.nvars, sizeof(struct hvt_dif_var));
    SEC(off_aggs, naggs, A.naggs, sizeof(struct hvt_dif_agg));
    SEC(off_probes, nprobes, A.nprobes, sizeof(struct hvt_dif_probe));
    SEC(off_probe_clauses, nprobe_clauses, A.npcl, 2);
    SEC(off_strtab, strtab_len, A.strtab_len, 1);
    h.size = o;
    uint8_t *img = aligned_alloc(64, (o + 63) & ~63u);
    memset(img, 0, o);
    memcpy(img, &h, sizeof(h));
    memcpy(img + h.off_clauses, A.clauses, A.nclauses * sizeof(struct hvt_dif_clause));
    if (A.ninsns) memcpy(img + h.off_insns, A.insns, A.ninsns * sizeof(struct hvt_dif_insn));
    memcpy(img + h.off_consts, A.consts, A.nconsts * 8);
    memcpy(img + h.off_vars, A.vars, A.nvars * sizeof(struct hvt_dif_var));
    memcpy(img + h.off_aggs, A.aggs, A.naggs * sizeof(struct hvt_dif_agg));
    if (A.nprobes) memcpy(img + h.off_probes, A.probes, A.nprobes * sizeof(struct hvt_dif_probe));
    if (A.npcl) memcpy(img + h.off_probe_clauses, A.pcl, A.npcl * 2);
    memcpy(img + h.off_strtab, A.strtab, A.strtab_len);
    *len = o;
    return img;
}

/* op shorthands */
#define I0(op)              a_i(HVT_DIF_OP_##op, 0, 0, 0, 0)
#define I3(op, d, a, b)     a_i(HVT_DIF_OP_##op, d, a, b, 0)
#define I2(op, d, a)        a_i(HVT_DIF_OP_##op, d, a, 0, 0)
#define II(op, d, a, imm)   a_i(HVT_DIF_OP_##op, d, a, 0, imm)
#define LDI(d, v)           a_i(HVT_DIF_OP_LDI, d, 0, 0, v)
#define ACT(k)              a_i(HVT_DIF_OP_ACT, 0, 0, 0, k)
#define EMIT(r)             a_i(HVT_DIF_OP_EMIT, 0, r, 0, 0)
#define SCONST(d, s)        a_i(HVT_DIF_OP_SCONST, d, 0, 0, (int32_t)a_str(s))
#define TPUSH(r)            a_i(HVT_DIF_OP_TPUSH, 0, r, 0, 0)

#endif
