/* unit_dconsume_agg: aggregations of the D consumer: merging per-CPU snapshots for every
 * aggregating function, DTrace's printing of each (quantize, lquantize and llquantize
 * distributions written out by hand from DTrace's rules), printa() formats, normalize, trunc,
 * clear, sort options, snapshot generations and what dtrace prints at the end. */
#include "unit_dconsume.h"

enum { A_C, A_S, A_MN, A_MX, A_AV, A_SD, A_Q, A_LQ, A_LLQ, A_E, A_K8, A_K16, A_SYM, A_TWO, A_J, NAGG };

static d_agg aggs[NAGG] = {
    [A_C] = {"c", HVT_DIF_AGG_COUNT, 1, {{D_V_STR, 0}}, {0}, 1},
    [A_S] = {"s", HVT_DIF_AGG_SUM, 1, {{D_V_INT, 8}}, {0}, 1},
    [A_MN] = {"mn", HVT_DIF_AGG_MIN, 0, {{0}}, {0}, 1},
    [A_MX] = {"mx", HVT_DIF_AGG_MAX, 0, {{0}}, {0}, 1},
    [A_AV] = {"av", HVT_DIF_AGG_AVG, 0, {{0}}, {0}, 2},
    [A_SD] = {"sd", HVT_DIF_AGG_STDDEV, 0, {{0}}, {0}, 4},
    [A_Q] = {"q", HVT_DIF_AGG_QUANTIZE, 0, {{0}}, {0}, 127},
    [A_LQ] = {"lq", HVT_DIF_AGG_LQUANTIZE, 0, {{0}}, {0, 10, 2}, 8},          /* 1 header slot */
    [A_LLQ] = {"llq", HVT_DIF_AGG_LLQUANTIZE, 0, {{0}}, {10, 0, 2, 10}, 58},  /* 1 header slot */
    [A_E] = {"e", HVT_DIF_AGG_COUNT, 0, {{0}}, {0}, 1},
    [A_K8] = {"k8", HVT_DIF_AGG_SUM, 1, {{D_V_INT, 1}}, {0}, 1},
    [A_K16] = {"k16", HVT_DIF_AGG_SUM, 1, {{D_V_INT, 2}}, {0}, 1},
    [A_SYM] = {"sym", HVT_DIF_AGG_COUNT, 1, {{D_V_KSYM, 8}}, {0}, 1},
    [A_TWO] = {"two", HVT_DIF_AGG_SUM, 2, {{D_V_STR, 0}, {D_V_INT, 4}}, {0}, 1},
    [A_J] = {"j", HVT_DIF_AGG_COUNT, 1, {{D_V_INT, 8}}, {0}, 1},
};

static d_probe probes[] = {{1, "dtrace", "", "", "BEGIN"}, {2, "dtrace", "", "", "END"}};
static d_val V8 = {D_V_INT, 8};
static d_action end_acts[] = {
    ACT(D_ACT_PRINTF, "normalized data:\n", -1, 0, NULL),
    ACT(D_ACT_NORMALIZE, NULL, A_S, 1, &V8),
    ACT(D_ACT_PRINTA, NULL, A_S, 0, NULL),
    ACT(D_ACT_DENORMALIZE, NULL, A_S, 0, NULL),
    ACT(D_ACT_CLEAR, NULL, A_S, 0, NULL),
    ACT(D_ACT_TRUNC, NULL, A_S, 1, &V8),
};
static d_clause clauses[] = {CLAUSE("END", 6, end_acts)};

static dprog prog(void)
{
    dprog p = {0};
    p.nclauses = 1, p.clauses = clauses;
    p.naggs = NAGG, p.aggs = aggs;
    p.nprobes = 2, p.probes = probes;
    return p;
}

/* key builders */
static rbuf K;
static const rbuf *k0(void) { K.n = 0; return &K; }
static const rbuf *ks(const char *s) { K.n = 0; rb_s(&K, s); return &K; }
static const rbuf *ki(int64_t v) { K.n = 0; rb_i(&K, v); return &K; }
static const rbuf *ksi(const char *s, int64_t v) { K.n = 0; rb_s(&K, s); rb_i(&K, v); return &K; }

/* one snapshot of a CPU: its records, then begin/add/end */
static rbuf S;
static void add1(uint16_t agg, uint16_t cpu, const rbuf *k, int64_t v) { rb_agg(&S, agg, cpu, k, &v, 1); }
static int snap(d_consumer *c, unsigned cpu, uint64_t gen)
{
    int rc = d_consume_snap_begin(c, cpu, gen);
    if (!rc)
        rc = d_consume_snap_add(c, cpu, gen, S.b, S.n);
    if (!rc)
        rc = d_consume_snap_end(c, cpu, gen);
    S.n = 0;
    return rc;
}

static const char *printa(d_consumer *c, int agg, const char *fmt)
{
    static char err[256];
    d_out_reset(&g_out);
    d_aggopt opt = {0};
    if (d_aggs_printa(d_consume_aggs(c), &g_out, agg, fmt, &opt, err, sizeof err) < 0)
        return err;
    return g_out.buf;
}

/* A keyless record of nb values, zero but v[at[i]] = val[i]. (One array reused for several
 * records with memset and constant stores in between is what GCC 12.2 -O2 gets wrong: its RTL
 * dead-store pass drops the stores before the inlined copy; built here, nothing to drop.) */
static void vrec(uint16_t agg, uint16_t cpu, uint32_t nb, int n, const int *at, const int64_t *val)
{
    int64_t v[HVT_DIF_QUANT_BUCKETS] = {0};
    for (int i = 0; i < n; i++)
        v[at[i]] = val[i];
    rb_agg(&S, agg, cpu, k0(), v, nb);
}

static void load_two_cpus(d_consumer *c)
{
    /* CPU 0 */
    add1(A_C, 0, ks("bash"), 3), add1(A_C, 0, ks("sshd"), 1);
    add1(A_S, 0, ki(1), 10), add1(A_S, 0, ki(2), -5);
    add1(A_MN, 0, k0(), 5), add1(A_MX, 0, k0(), 5);
    rb_agg(&S, A_AV, 0, k0(), (int64_t[]){2, 11}, 2);
    rb_agg(&S, A_SD, 0, k0(), (int64_t[]){4, 14, 52, 0}, 4);  /* 2 4 4 4 */
    vrec(A_Q, 0, 127, 3, (int[]){63, 64, 65}, (int64_t[]){1, 1, 1});                    /* 0 1 2 */
    vrec(A_LQ, 0, 8, 3, (int[]){0, 1, 3}, (int64_t[]){12345, 1, 1});                    /* header, -1, 3 */
    vrec(A_LLQ, 0, 58, 3, (int[]){0, 1 + 33, 1 + 42}, (int64_t[]){777, 1, 1});          /* header, 5, 50 */
    add1(A_SYM, 0, ki((int64_t)0xffffffff81001014ull), 2);
    expect_int("snapshot cpu 0", snap(c, 0, 1), 0);
    /* CPU 1 */
    add1(A_C, 1, ks("bash"), 2), add1(A_C, 1, ks("init"), 7);
    add1(A_S, 1, ki(1), 5);
    add1(A_MN, 1, k0(), -3), add1(A_MX, 1, k0(), -3);
    rb_agg(&S, A_AV, 1, k0(), (int64_t[]){1, 5}, 2);
    rb_agg(&S, A_SD, 1, k0(), (int64_t[]){4, 26, 180, 0}, 4); /* 5 5 7 9 */
    vrec(A_Q, 1, 127, 3, (int[]){65, 66, 73}, (int64_t[]){1, 1, 1});                    /* 3 4 1000 */
    vrec(A_LQ, 1, 8, 3, (int[]){0, 3, 7}, (int64_t[]){12345, 1, 1});                    /* header, 3, 50 */
    vrec(A_LLQ, 1, 58, 3, (int[]){0, 1 + 56, 1 + 33}, (int64_t[]){777, 1, 1});          /* header, 5000, 5 */
    add1(A_SYM, 1, ki((int64_t)0xffffffff81001020ull), 3), add1(A_SYM, 1, ki((int64_t)0xffffffff81002005ull), 1);
    expect_int("snapshot cpu 1", snap(c, 1, 1), 0);
}

static void merge_and_print(void)
{
    dprog p = prog();
    d_consumer *c = mk(&p);
    load_two_cpus(c);
    expect("count", printa(c, A_C, NULL),
           "\n"
           "  sshd                                                              1\n"
           "  bash                                                              5\n"
           "  init                                                              7\n");
    expect("sum", printa(c, A_S, NULL), "\n                2               -5\n                1               15\n");
    expect("min", printa(c, A_MN, NULL), "\n               -3\n");
    expect("max", printa(c, A_MX, NULL), "\n                5\n");
    expect("avg", printa(c, A_AV, NULL), "\n                5\n");
    expect("stddev", printa(c, A_SD, NULL), "\n                2\n");
    expect("quantize 0 1 2 3 4 1000", printa(c, A_Q, NULL),
           "\n"
           "\n"
           "           value  ------------- Distribution ------------- count    \n"
           "              -1 |                                         0        \n"
           "               0 |@@@@@@@                                  1        \n"
           "               1 |@@@@@@@                                  1        \n"
           "               2 |@@@@@@@@@@@@@                            2        \n"
           "               4 |@@@@@@@                                  1        \n"
           "               8 |                                         0        \n"
           "              16 |                                         0        \n"
           "              32 |                                         0        \n"
           "              64 |                                         0        \n"
           "             128 |                                         0        \n"
           "             256 |                                         0        \n"
           "             512 |@@@@@@@                                  1        \n"
           "            1024 |                                         0        \n"
           "\n");
    expect("lquantize(x, 0, 10, 2) of -1 3 3 50", printa(c, A_LQ, NULL),
           "\n"
           "\n"
           "           value  ------------- Distribution ------------- count    \n"
           "             < 0 |@@@@@@@@@@                               1        \n"
           "               0 |                                         0        \n"
           "               2 |@@@@@@@@@@@@@@@@@@@@                     2        \n"
           "               4 |                                         0        \n"
           "               6 |                                         0        \n"
           "               8 |                                         0        \n"
           "           >= 10 |@@@@@@@@@@                               1        \n"
           "\n");
    expect("llquantize(x, 10, 0, 2, 10) of 5 5 50 5000", printa(c, A_LLQ, NULL),
           "\n"
           "\n"
           "           value  ------------- Distribution ------------- count    \n"
           "               4 |                                         0        \n"
           "               5 |@@@@@@@@@@@@@@@@@@@@                     2        \n"
           "               6 |                                         0        \n"
           "               7 |                                         0        \n"
           "               8 |                                         0        \n"
           "               9 |                                         0        \n"
           "              10 |                                         0        \n"
           "              20 |                                         0        \n"
           "              30 |                                         0        \n"
           "              40 |                                         0        \n"
           "              50 |@@@@@@@@@@                               1        \n"
           "              60 |                                         0        \n"
           "              70 |                                         0        \n"
           "              80 |                                         0        \n"
           "              90 |                                         0        \n"
           "             100 |                                         0        \n"
           "             200 |                                         0        \n"
           "             300 |                                         0        \n"
           "             400 |                                         0        \n"
           "             500 |                                         0        \n"
           "             600 |                                         0        \n"
           "             700 |                                         0        \n"
           "             800 |                                         0        \n"
           "             900 |                                         0        \n"
           "         >= 1000 |@@@@@@@@@@                               1        \n"
           "\n");
    expect("sym() keys merge by symbol", printa(c, A_SYM, NULL),
           "\n"
           "  vmlinux`vfs_read                                                  1\n"
           "  vmlinux`do_sys_open                                               5\n");
    expect("empty", printa(c, A_E, NULL), "\n");
    /* printa formats: keys in order, %@ for the value (count unsigned, the others signed) */
    expect("printa %-10s %@5u", printa(c, A_C, "%-10s %@5u\n"), "sshd           1\nbash           5\ninit           7\n");
    expect("printa %@d of sum", printa(c, A_S, "%d=%@d %@x;"), "2=-5 fffffffffffffffb;1=15 f;");
    expect("printa avg", printa(c, A_AV, "avg %@d, "), "avg 5, ");
    expect("printa stddev", printa(c, A_SD, "[%@8d]"), "[       2]");
    expect("printa min max", printa(c, A_MN, "%@i"), "-3");
    expect("printa quantize", printa(c, A_LQ, "lq:%@d|"),
           "lq:\n"
           "           value  ------------- Distribution ------------- count    \n"
           "             < 0 |@@@@@@@@@@                               1        \n"
           "               0 |                                         0        \n"
           "               2 |@@@@@@@@@@@@@@@@@@@@                     2        \n"
           "               4 |                                         0        \n"
           "               6 |                                         0        \n"
           "               8 |                                         0        \n"
           "           >= 10 |@@@@@@@@@@                               1        \n"
           "|");
    expect("printa too many keys", printa(c, A_S, "%d %d %@d"), "conversion #2 (%d) has no value");
    expect("printa %@s", printa(c, A_S, "%@s"), "%@s cannot print an aggregation's value");
    d_consume_free(c);
}

/* stddev's sum of squares passes 2^64 on one CPU and in the merge: carried, then DTrace's
 * arithmetic: 4e9 4e9 6e9 6e9 -> 1e9 */
static void stddev_128(void)
{
    unsigned __int128 sq0 = (unsigned __int128)4000000000ull * 4000000000ull + (unsigned __int128)6000000000ull * 6000000000ull;
    int64_t a[4] = {2, 10000000000LL, (int64_t)(uint64_t)sq0, (int64_t)(uint64_t)(sq0 >> 64)};
    int64_t b[4] = {2, 10000000000LL, (int64_t)(uint64_t)sq0, (int64_t)(uint64_t)(sq0 >> 64)};
    d_agg_merge(HVT_DIF_AGG_STDDEV, a, b, 4);
    expect_int("stddev 128-bit hi", a[3], (int64_t)(uint64_t)((sq0 * 2) >> 64));
    expect_int("stddev 128-bit", (long long)d_agg_stddev(a, 1), 1000000000);
    expect_int("stddev normalized", (long long)d_agg_stddev(a, 1000), 1000000);
    expect_int("stddev of nothing", (long long)d_agg_stddev((int64_t[]){0, 0, 0, 0}, 1), 0);
    /* negative values: the average is truncated toward zero, as C and DTrace do: -1 -2 -> 0 */
    expect_int("stddev negative", (long long)d_agg_stddev((int64_t[]){2, -3, 5, 0}, 1), 1);
    int64_t m[1] = {5};
    d_agg_merge(HVT_DIF_AGG_MIN, m, (int64_t[]){INT64_MIN}, 1);
    expect_int("min INT64_MIN", m[0], INT64_MIN);
    d_agg_merge(HVT_DIF_AGG_MAX, m, (int64_t[]){INT64_MAX}, 1);
    expect_int("max INT64_MAX", m[0], INT64_MAX);
}

static void keys_and_signs(void)
{
    dprog p = prog();
    d_consumer *c = mk(&p);
    for (int k = -2; k <= 2; k++) {
        add1(A_K8, 0, ki((int8_t)k), k);
        add1(A_K16, 0, ki((int16_t)k), k);
    }
    add1(A_TWO, 0, ksi("a", 3), 1), add1(A_TWO, 0, ksi("b", 1), 2), add1(A_TWO, 0, ksi("a", 1), 3);
    vrec(A_Q, 0, 127, 2, (int[]){64, 65}, (int64_t[]){-2, 3});   /* negative increments: bars both ways */
    snap(c, 0, 1);
    /* DTrace sorts integer keys as unsigned numbers of their size (tst.signedkeys) */
    d_aggopt opt = {1, 0, 0, 0};
    char err[128];
    d_out_reset(&g_out);
    d_aggs_printa(d_consume_aggs(c), &g_out, A_K8, NULL, &opt, err, sizeof err);
    d_aggs_printa(d_consume_aggs(c), &g_out, A_K16, NULL, &opt, err, sizeof err);
    expect("aggsortkey, 1- and 2-byte keys", g_out.buf,
           "\n"
           "   0                0\n"
           "   1                1\n"
           "   2                2\n"
           " 254               -2\n"
           " 255               -1\n"
           "\n"
           "     0                0\n"
           "     1                1\n"
           "     2                2\n"
           " 65534               -2\n"
           " 65535               -1\n");
    opt.keypos = 1;
    d_out_reset(&g_out);
    d_aggs_printa(d_consume_aggs(c), &g_out, A_TWO, NULL, &opt, err, sizeof err);
    expect("aggsortkeypos=1", g_out.buf,
           "\n"
           "  a                                                         1                3\n"
           "  b                                                         1                2\n"
           "  a                                                         3                1\n");
    opt = (d_aggopt){0, 1, 0, 0};
    d_out_reset(&g_out);
    d_aggs_printa(d_consume_aggs(c), &g_out, A_TWO, "%s %d %@d\n", &opt, err, sizeof err);
    expect("aggsortrev", g_out.buf, "a 1 3\nb 1 2\na 3 1\n");
    expect("quantize of negative counts", printa(c, A_Q, NULL),
           "\n"
           "\n"
           "           value  ------------- Distribution ------------- count    \n"
           "               0                     |                     0        \n"
           "               1             @@@@@@@@|                     -2       \n"
           "               2                     |@@@@@@@@@@@@         3        \n"
           "               4                     |                     0        \n"
           "\n");
    d_consume_free(c);
}

/* normalize() in a clause, then what dtrace prints at the end (DTrace's tst.normalize: sums of
 * i * 100 for i < 20 keyed by i % 5, normalized by 5) */
static void normalize_trunc_clear(void)
{
    dprog p = prog();
    p.quiet = 1;
    d_consumer *c = mk(&p);
    for (int i = 0; i < 20; i++) {
        rbuf k = {0};
        rb_i(&k, i % 5);
        /* i < 10 on CPU 0, the rest on CPU 1: one record per key and CPU */
        if (i % 10 < 5) {
            int64_t s = (int64_t)(i % 5) * 200 + (i < 10 ? 500 : 2500);   /* i and i + 5 */
            rb_agg(&S, A_S, i < 10 ? 0 : 1, &k, &s, 1);
        }
        if (i == 4)
            snap(c, 0, 1);
        if (i == 14)
            snap(c, 1, 1);
    }
    rbuf r = {0};
    rb_rec(&r, HVT_DREC_DATA, 0, 2, 0), rb_act(&r, 0), rb_act(&r, 1), rb_i(&r, 5), rb_end(&r);
    d_consume_record(c, r.b, r.n);
    d_consume_end(c);
    expect("normalize (tst.normalize)", g_out.buf,
           "normalized data:\n"
           "\n"
           "                0              600\n"
           "                1              680\n"
           "                2              760\n"
           "                3              840\n"
           "                4              920\n");
    /* denormalize */
    r.n = 0;
    rb_rec(&r, HVT_DREC_DATA, 0, 2, 0), rb_act(&r, 3), rb_end(&r);
    d_consume_record(c, r.b, r.n);
    expect("denormalize", printa(c, A_S, "%d:%@d "), "0:3000 1:3400 2:3800 3:4200 4:4600 ");
    /* trunc(@s, 2) keeps the two largest; trunc(@s, -1) the smallest of those */
    r.n = 0;
    rb_rec(&r, HVT_DREC_DATA, 0, 2, 0), rb_act(&r, 5), rb_i(&r, 2), rb_end(&r);
    d_consume_record(c, r.b, r.n);
    expect("trunc 2", printa(c, A_S, "%d:%@d "), "3:4200 4:4600 ");
    r.n = 0;
    rb_rec(&r, HVT_DREC_DATA, 0, 2, 0), rb_act(&r, 5), rb_i(&r, -1), rb_end(&r);
    d_consume_record(c, r.b, r.n);
    expect("trunc -1", printa(c, A_S, "%d:%@d "), "3:4200 ");
    /* a removed key comes back with what it gained since, not normalized */
    r.n = 0;
    rb_rec(&r, HVT_DREC_DATA, 0, 2, 0), rb_act(&r, 1), rb_i(&r, 100), rb_end(&r);
    d_consume_record(c, r.b, r.n);
    for (int k = 0; k < 5; k++)    /* snapshots are deltas: what CPU 0 added since */
        add1(A_S, 0, ki(k), k == 1 ? 7 : k == 3 ? 42 : 0);
    snap(c, 0, 2);
    expect("trunc then new data", printa(c, A_S, "%d:%@d "), "1:7 3:42 ");
    /* trunc(@s): all gone until they change */
    r.n = 0;
    rb_rec(&r, HVT_DREC_DATA, 0, 2, 0), rb_act(&r, 5), rb_i(&r, 0), rb_end(&r);
    d_consume_record(c, r.b, r.n);
    expect("trunc all", printa(c, A_S, "%d:%@d "), "");
    for (int k = 0; k < 5; k++)
        add1(A_S, 0, ki(k), k == 0 ? 1 : 0);
    snap(c, 0, 3);
    expect("trunc all, one changes", printa(c, A_S, "%d:%@d "), "0:1 ");
    /* clear(): the host's copy is zeroed, removed keys stay removed */
    r.n = 0;
    rb_rec(&r, HVT_DREC_DATA, 0, 2, 0), rb_act(&r, 4), rb_end(&r);
    d_consume_record(c, r.b, r.n);
    expect("clear", printa(c, A_S, "%d:%@d "), "0:0 ");
    for (int k = 0; k < 5; k++)    /* what came after the clear */
        add1(A_S, 0, ki(k), k == 2 ? 9 : 0);
    snap(c, 0, 4);
    expect("after clear", printa(c, A_S, "%d:%@d "), "0:0 2:9 ");
    expect("no complaint", g_err.buf, "");
    d_consume_free(c);
}

static void generations(void)
{
    dprog p = prog();
    d_consumer *c = mk(&p);
    add1(A_MX, 0, k0(), 5);
    snap(c, 0, 5);
    expect("gen 5", printa(c, A_MX, "%@d"), "5");
    add1(A_MX, 0, k0(), 100);
    d_consume_snap_begin(c, 0, 6);
    d_consume_snap_add(c, 0, 6, S.b, S.n);
    S.n = 0;
    expect("a part counts once it is whole, before its snapshot ends", printa(c, A_MX, "%@d"), "100");
    expect_int("stale begin", d_consume_snap_begin(c, 0, 4), -1);
    d_consume_snap_begin(c, 0, 7);
    add1(A_MX, 0, k0(), 200);
    d_consume_snap_add(c, 0, 7, S.b, S.n);
    S.n = 0;
    expect_int("end of a dropped snapshot", d_consume_snap_end(c, 0, 6), -1);
    expect("parts add up", printa(c, A_MX, "%@d"), "200");
    expect_int("end 7", d_consume_snap_end(c, 0, 7), 0);
    expect("gen 7", printa(c, A_MX, "%@d"), "200");
    /* CPUs replace their own snapshots only */
    add1(A_MX, 1, k0(), 50);
    snap(c, 1, 1);
    expect("two CPUs", printa(c, A_MX, "%@d"), "200");
    /* a bad record spoils its part */
    d_consume_snap_begin(c, 0, 8);
    rb_agg(&S, A_MX, 0, k0(), (int64_t[]){1, 2}, 2);
    d_consume_snap_add(c, 0, 8, S.b, S.n);
    S.n = 0;
    expect_int("bad snapshot end", d_consume_snap_end(c, 0, 8), -1);
    expect("bad part kept out", printa(c, A_MX, "%@d"), "200");
    expect("generation messages", g_err.buf,
           "hvt: aggregation snapshot: snapshot 4 of CPU 0 is not newer than 5\n"
           "hvt: aggregation snapshot: end of snapshot 6 of CPU 0 that did not begin\n"
           "hvt: malformed aggregation record from CPU 0 (@mx: 2 values, the program has 1)\n"
           "hvt: aggregation snapshot: snapshot 8 of CPU 0 had bad records: that part was left out\n");
    d_consume_free(c);
}

/* Which buffers need a snapshot before they are consumed: those with a record of a clause
 * that prints or changes an aggregation */
static void uses_aggs(void)
{
    static d_action plain[] = {ACT(D_ACT_PRINTF, "x\n", -1, 0, NULL)};
    static d_action clr[] = {ACT(D_ACT_PRINTF, "x\n", -1, 0, NULL), ACT(D_ACT_CLEAR, NULL, A_S, 0, NULL)};
    static d_clause two[] = {CLAUSE("END", 1, plain), CLAUSE("END", 2, clr)};
    dprog p = prog();
    p.nclauses = 2, p.clauses = two;
    d_consumer *c = mk(&p);
    rbuf r = {0};
    rb_rec(&r, HVT_DREC_DATA, 0, 2, 0), rb_act(&r, 0), rb_end(&r);
    rb_rec(&r, HVT_DREC_DROPS, 0, 2, 0), rb_end(&r);
    expect_int("printf and drops: no snapshot needed", d_consume_buffer_uses_aggs(c, r.b, r.n), 0);
    rb_rec(&r, HVT_DREC_DATA, 0, 2, 1), rb_act(&r, 0), rb_act(&r, 1), rb_end(&r);
    expect_int("a clear() record after them: a snapshot first", d_consume_buffer_uses_aggs(c, r.b, r.n), 1);
    r.n = 0;
    rb_rec(&r, HVT_DREC_DATA, 0, 2, 0), rb_act(&r, 0), rb_end(&r);
    p.clauses = clauses, p.nclauses = 1;     /* the END clause: printa() and the others */
    expect_int("printa()", d_consume_buffer_uses_aggs(c, r.b, r.n), 1);
    d_consume_free(c);
}

/* printa(fmt, @s, @j): one line per key of either, 0 where one lacks it, sorted on the first's
 * value (aggsortpos: the given one's), then the other's, then the key (aggsortkey: first) */
static const char *printa2(d_consumer *c, const char *fmt, const d_aggopt *opt)
{
    static char err[256];
    int x = A_J;
    d_out_reset(&g_out);
    if (d_aggs_printa_joined(d_consume_aggs(c), &g_out, A_S, &x, 1, fmt, opt, err, sizeof err) < 0)
        return err;
    return g_out.buf;
}

static void joined(void)
{
    dprog p = prog();
    d_consumer *c = mk(&p);
    add1(A_S, 0, ki(1), 10), add1(A_S, 0, ki(2), -5), add1(A_J, 0, ki(2), 4);
    snap(c, 0, 1);
    add1(A_J, 1, ki(3), 1), add1(A_S, 1, ki(5), 0), add1(A_J, 1, ki(5), 1);
    snap(c, 1, 1);
    d_aggopt o = {0};
    expect("joined", printa2(c, "%d %@d %@d|", &o), "2 -5 4|3 0 1|5 0 1|1 10 0|");
    o.sortpos = 1;
    expect("joined, aggsortpos=1", printa2(c, "%d %@d %@d|", &o), "1 10 0|3 0 1|5 0 1|2 -5 4|");
    o.sortpos = 0, o.sortkey = 1;
    expect("joined, aggsortkey", printa2(c, "%d %@d %@d|", &o), "1 10 0|2 -5 4|3 0 1|5 0 1|");
    o.sortrev = 1;
    expect("joined, aggsortkey aggsortrev", printa2(c, "%d %@d %@d|", &o), "5 0 1|3 0 1|2 -5 4|1 10 0|");
    o = (d_aggopt){0};
    expect("one %@ more than the aggregations", printa2(c, "%d %@d %@d %@d|", &o),
           "%@ #3: printa() has 2 aggregations");
    char err[64];
    d_out_reset(&g_out);
    int x = A_C;
    expect_int("keys unlike", d_aggs_printa_joined(d_consume_aggs(c), &g_out, A_S, &x, 1, "%d", &o, err, sizeof err), -1);
    d_consume_end(c);
    expect("both printed: nothing at the end", g_out.buf, "\n");
    d_consume_free(c);
}

/* Snapshots are deltas (the hypervisor resets what it sends): the host adds them up per CPU
 * and key; clear() zeroes that sum (min and max back to their start) and later deltas add to
 * it, so what was aggregated before a clear() is printed by the printa() before it. */
static void deltas_and_clear(void)
{
    dprog p = prog();
    d_consumer *c = mk(&p);
    add1(A_C, 0, ks("a"), 3), add1(A_MN, 0, k0(), 5), add1(A_MX, 0, k0(), 5);
    snap(c, 0, 1);
    add1(A_C, 0, ks("a"), 2), add1(A_C, 0, ks("b"), 1), add1(A_MN, 0, k0(), 4), add1(A_MX, 0, k0(), 9);
    snap(c, 0, 2);
    add1(A_C, 1, ks("a"), 10);
    snap(c, 1, 3);
    expect("counts add up over snapshots and CPUs", printa(c, A_C, "%s:%@d "), "b:1 a:15 ");
    expect("min over the snapshots", printa(c, A_MN, "%@d"), "4");
    expect("max over the snapshots", printa(c, A_MX, "%@d"), "9");
    d_aggs_clear(d_consume_aggs(c), A_C);
    d_aggs_clear(d_consume_aggs(c), A_MN);
    d_aggs_clear(d_consume_aggs(c), A_MX);
    expect("cleared count", printa(c, A_C, "%s:%@d "), "a:0 b:0 ");
    expect("cleared min", printa(c, A_MN, "%@d"), "9223372036854775807");
    expect("cleared max", printa(c, A_MX, "%@d"), "-9223372036854775808");
    add1(A_C, 0, ks("b"), 4), add1(A_MN, 0, k0(), 7), add1(A_MX, 0, k0(), 6);
    snap(c, 0, 4);
    add1(A_C, 1, ks("a"), 1), add1(A_MN, 1, k0(), INT64_MAX), add1(A_MX, 1, k0(), INT64_MIN);
    snap(c, 1, 5);
    expect("after clear: only what came since", printa(c, A_C, "%s:%@d "), "a:1 b:4 ");
    expect("min after clear", printa(c, A_MN, "%@d"), "7");
    expect("max after clear", printa(c, A_MX, "%@d"), "6");
    /* trunc() removes: the key comes back with what comes after, a smaller max too */
    d_aggs_trunc(d_consume_aggs(c), A_MX, 0);
    expect("max truncated", printa(c, A_MX, "%@d"), "");
    add1(A_MX, 0, k0(), INT64_MIN);
    snap(c, 0, 6);
    expect("max truncated, nothing new", printa(c, A_MX, "%@d"), "");
    add1(A_MX, 1, k0(), 2);
    snap(c, 1, 7);
    expect("max truncated, then 2", printa(c, A_MX, "%@d"), "2");
    expect("no complaint", g_err.buf, "");
    d_consume_free(c);
}

static void bad_agg_records(void)
{
    dprog p = prog();
    struct {
        const char *why;
        int agg, cpu;
        const char *s;
        int64_t cut;
    } cases[] = {
        {"@c: key #1: string of 300 bytes, strsize is 256", A_C, 0, NULL, 0},
        {"aggregation record of CPU 1 in the snapshot of CPU 0", A_C, 1, "x", 0},
        {"aggregation index 99 is not the program's", 99, 0, "x", 0},
        {"@c: key of 16 bytes is too short for its 1 key(s)", A_C, 0, "", 1},
        {"@c: key #1: padding is not zero", A_C, 0, "ab", 2},
        {"@c: a key twice in one snapshot", A_C, 0, "x", 3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        d_consumer *c = mk(&p);
        char big[301];
        memset(big, 'a', 300), big[300] = 0;
        rbuf k = {0};
        rb_s(&k, cases[i].s ? cases[i].s : big);
        if (cases[i].cut == 1)
            memcpy(k.b, &(uint16_t){20}, 2), rb_i(&k, 0);
        if (cases[i].cut == 2)
            k.b[5] = 1;
        int64_t one = 1;
        rb_agg(&S, (uint16_t)cases[i].agg, (uint16_t)cases[i].cpu, &k, &one, 1);
        if (cases[i].cut == 3)
            rb_agg(&S, (uint16_t)cases[i].agg, (uint16_t)cases[i].cpu, &k, &one, 1);
        d_consume_snap_begin(c, 0, 1);
        expect_int(cases[i].why, d_consume_snap_add(c, 0, 1, S.b, S.n), -1);
        S.n = 0;
        char want[256];
        snprintf(want, sizeof want, "hvt: malformed aggregation record from CPU 0 (%s)\n", cases[i].why);
        expect(cases[i].why, g_err.buf, want);
        d_consume_free(c);
    }
}

/* The end of a run: a newline, then the aggregations printa() did not print, by index; an
 * empty one prints nothing; no blank line between aggregations (dtrace prints none). */
static void end_of_run(void)
{
    dprog p = prog();
    d_consumer *c = mk(&p);
    load_two_cpus(c);
    rbuf r = {0};
    rb_rec(&r, HVT_DREC_DATA, 0, 2, 0), rb_act(&r, 2), rb_end(&r);
    d_consume_record(c, r.b, r.n);
    expect("printa in a clause", g_out.buf,
           "CPU     ID                    FUNCTION:NAME\n"
           "  0      2                             :END \n"
           "                2               -5\n"
           "                1               15\n"
           "\n");
    d_out_reset(&g_out);
    for (int a = A_AV; a <= A_LLQ; a++)
        d_aggs_printa(d_consume_aggs(c), &g_out, a, "", NULL, NULL, 0);
    d_out_reset(&g_out);
    d_consume_end(c);
    expect("end", g_out.buf,
           "\n"
           "  sshd                                                              1\n"
           "  bash                                                              5\n"
           "  init                                                              7\n"
           "               -3\n"
           "                5\n"
           "  vmlinux`vfs_read                                                  1\n"
           "  vmlinux`do_sys_open                                               5\n");
    d_consume_free(c);
    p.aggsortrev = 1;
    c = mk(&p);
    load_two_cpus(c);
    for (int a = A_S; a <= A_LLQ; a++)
        if (a != A_MX)
            d_aggs_printa(d_consume_aggs(c), &g_out, a, "", NULL, NULL, 0);
    d_out_reset(&g_out);
    d_consume_end(c);
    expect("end, aggsortrev", g_out.buf,
           "\n"
           "  vmlinux`do_sys_open                                               5\n"
           "  vmlinux`vfs_read                                                  1\n"
           "                5\n"
           "  init                                                              7\n"
           "  bash                                                              5\n"
           "  sshd                                                              1\n");
    d_consume_free(c);
}

/* An aggregation the program describes wrongly: said once, its records refused. */
static void bad_layouts(void)
{
    d_agg bad[3] = {
        {.name = "q", .fn = HVT_DIF_AGG_QUANTIZE, .nbuckets = 100},
        {.name = "lq", .fn = HVT_DIF_AGG_LQUANTIZE, .p = {10, 0, 1}, .nbuckets = 12},
        {.name = "s", .fn = HVT_DIF_AGG_SUM, .nbuckets = 2},
    };
    dprog p = prog();
    p.naggs = 3, p.aggs = bad;
    d_consumer *c = mk(&p);
    expect("bad layouts", g_err.buf,
           "hvt: @q: 100 values do not fit its function and parameters: its records will be refused\n"
           "hvt: @lq: 12 values do not fit its function and parameters: its records will be refused\n"
           "hvt: @s: 2 values do not fit its function and parameters: its records will be refused\n");
    d_out_reset(&g_err);
    rb_agg(&S, 2, 0, k0(), (int64_t[]){1, 2}, 2);
    d_consume_snap_begin(c, 0, 1);
    expect_int("bad layout refused", d_consume_snap_add(c, 0, 1, S.b, S.n), -1);
    S.n = 0;
    expect("bad layout why", g_err.buf, "hvt: malformed aggregation record from CPU 0 (aggregation index 2 is not the program's)\n");
    d_consume_free(c);
}

void test_aggs(void)
{
    bad_layouts();
    merge_and_print();
    stddev_128();
    keys_and_signs();
    normalize_trunc_clear();
    generations();
    deltas_and_clear();
    uses_aggs();
    joined();
    bad_agg_records();
    end_of_run();
}
