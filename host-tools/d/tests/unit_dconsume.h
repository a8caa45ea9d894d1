/* unit_dconsume.h - what the two halves of unit_dconsume share: checks, a fake symbolizer,
 * builders of records, aggregation snapshots and hand-made programs. */
#ifndef HVT_UNIT_DCONSUME_H
#define HVT_UNIT_DCONSUME_H
#include "d_consume.h"
#include <stdio.h>
#include <string.h>
#include "check.h"

/* dprog pieces by name (the structures grow as the compiler needs) */
#define ACT(k, f, ag, n, a) {.kind = (k), .fmt = (f), .agg = (ag), .nargs = (n), .args = (a)}
#define CLAUSE(w, n, a) {.where = (w), .nacts = (n), .acts = (a)}

static inline void expect(const char *what, const char *got, const char *want)
{
    got = got ? got : "";
    if (!strcmp(got, want)) {
        check_passed++;
        return;
    }
    check_failed++;
    fprintf(stderr, "FAIL %s\n--- want\n%s\n--- got\n%s\n---\n", what, want, got);
}

static inline void expect_int(const char *what, long long got, long long want)
{
    if (got == want) {
        check_passed++;
        return;
    }
    check_failed++;
    fprintf(stderr, "FAIL %s: got %lld, want %lld\n", what, got, want);
}

/* Symbols: do_sys_open at 0xffffffff81001000 (0x80 bytes), vfs_read at 0xffffffff81002000
 * (0x100), a module range without symbols above 0xffffffffc0000000; user: libc`malloc. */
static inline int fake_sym(void *ctx, uint64_t a, int user, d_sym *s)
{
    (void)ctx;
    if (user) {
        if (a >= 0x7f0000001000ull && a < 0x7f0000001100ull) {
            s->module = "libc.so.6", s->name = "malloc", s->off = a - 0x7f0000001000ull;
            return 1;
        }
        return 0;
    }
    if (a >= 0xffffffff81001000ull && a < 0xffffffff81001080ull) {
        s->module = "vmlinux", s->name = "do_sys_open", s->off = a - 0xffffffff81001000ull;
        return 1;
    }
    if (a >= 0xffffffff81002000ull && a < 0xffffffff81002100ull) {
        s->module = "vmlinux", s->name = "vfs_read", s->off = a - 0xffffffff81002000ull;
        return 1;
    }
    if (a >= 0xffffffffc0000000ull && a < 0xffffffffc0100000ull) {
        s->module = "ext4", s->name = NULL;
        return 1;
    }
    return 0;
}
static const d_symbolizer g_fake_sym = {fake_sym, NULL};

/* --- records --- */
typedef struct {
    uint8_t b[16384];
    uint32_t n, start;
} rbuf;

static inline void rb_put(rbuf *r, const void *p, uint32_t n)
{
    memcpy(r->b + r->n, p, n);
    r->n += n;
}

static inline void rb_rec(rbuf *r, uint16_t type, uint16_t cpu, uint32_t probe, uint16_t clause)
{
    struct hvt_drec h = {0};
    h.type = type, h.cpu = cpu, h.probe = probe, h.clause = clause;
    r->start = r->n;
    rb_put(r, &h, sizeof h);
}

static inline void rb_act(rbuf *r, uint16_t idx)
{
    uint8_t h[8] = {0};
    memcpy(h, &idx, 2);
    rb_put(r, h, 8);
}

static inline void rb_i(rbuf *r, int64_t v) { rb_put(r, &v, 8); }

static inline void rb_s(rbuf *r, const char *s)
{
    uint16_t l = (uint16_t)strlen(s);
    uint8_t z[8] = {0};
    rb_put(r, &l, 2);
    rb_put(r, s, l);
    rb_put(r, z, ((2u + l + 7u) & ~7u) - 2u - l);
}

/* Set the record's length (its bytes so far). */
static inline uint32_t rb_end(rbuf *r)
{
    uint32_t len = r->n - r->start;
    memcpy(r->b + r->start, &len, 4);
    return len;
}

static inline void rb_ctl(rbuf *r, uint16_t type, uint16_t cpu, uint32_t probe, uint16_t clause,
                          uint64_t arg, uint32_t pc, uint32_t fault)
{
    rb_rec(r, type, cpu, probe, clause);
    struct hvt_drec *h = (struct hvt_drec *)(r->b + r->start);
    h->arg = arg, h->pc = pc, h->fault = fault;
    rb_end(r);
}

/* An aggregation record: the key was built in kb (kb_i/kb_s), then the values. */
static inline void rb_agg(rbuf *r, uint16_t agg, uint16_t cpu, const rbuf *kb, const int64_t *v, uint32_t nv)
{
    struct hvt_dagg_rec h = {0};
    h.len = (uint32_t)sizeof h + kb->n + nv * 8;
    h.agg = agg, h.cpu = cpu, h.key_len = kb->n, h.nbuckets = nv;
    rb_put(r, &h, sizeof h);
    rb_put(r, kb->b, kb->n);
    rb_put(r, v, nv * 8);
}

/* The output of a consumer under test. */
extern d_out g_out, g_err;
static inline d_consumer *mk(const dprog *p)
{
    d_out_reset(&g_out);
    d_out_reset(&g_err);
    d_consume_cfg cfg = {&g_out, &g_err, g_fake_sym, NULL, NULL, NULL, NULL};
    return d_consume_new(p, &cfg);
}

void test_aggs(void);

#endif
