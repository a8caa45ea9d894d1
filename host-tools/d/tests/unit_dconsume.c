/* unit_dconsume: the D consumer on hand-made programs and records (no compiler, no guest).
 * printf() conversions against the C library (DTrace hands its rebuilt formats to it), its
 * DTrace-only rules, %a/%A with a fake symbolizer, the default output, -q, -F, errors, drops,
 * malformed records; aggregations are in unit_dconsume_agg.c. Expected texts are written out
 * by hand from the formats DTrace's consumer and dtrace(1M) print with. */
#include "unit_dconsume.h"
#include <limits.h>
#include <stdlib.h>
#include <time.h>

d_out g_out, g_err;

/* --- printf --- */

static const char *pf(const char *fmt, const d_value *v, int nv, int *used)
{
    static d_out o;
    static char err[256];
    d_out_reset(&o);
    int n = d_printf_format(&o, fmt, v, nv, &g_fake_sym, NULL, NULL, err, sizeof err);
    if (used)
        *used = n;
    if (n < 0)
        return err;
    return o.buf ? o.buf : "";
}

static d_value iv(int64_t x, int type, int size) { return (d_value){(uint8_t)type, (uint8_t)size, x, NULL, 0, 0}; }
static d_value sv(const char *s) { return (d_value){D_V_STR, 0, 0, s, strlen(s), 0}; }

/* Every flag set, width and precision (but 0, which DTrace drops) over each integer
 * conversion and value, against snprintf with the same C format. */
static void printf_vs_libc(void)
{
    static const char *const flagset = "0-+ #";
    static const int widths[] = {0, 1, 5, 20, 25}, precs[] = {-1, 1, 3, 20};
    static const int64_t vals[] = {0, 1, -1, 42, -42, 255, 256, 65535, 65536, INT32_MAX, INT32_MIN,
                                   (int64_t)UINT32_MAX, INT64_MAX, INT64_MIN, (int64_t)UINT64_MAX - 1};
    static const char convs[] = "diuoxX";
    int bad = 0, total = 0;
    for (int sz = 4; sz <= 8; sz += 4)
        for (int t = D_V_INT; t <= D_V_UINT; t++)
            for (size_t ci = 0; ci < sizeof convs - 1; ci++)
                for (int fs = 0; fs < 32; fs++)
                    for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++)
                        for (size_t pi = 0; pi < sizeof precs / sizeof *precs; pi++) {
                            char flags[8] = "", dfmt[64], cfmt[64], want[128];
                            for (int b = 0, k = 0; b < 5; b++)
                                if (fs & (1 << b))
                                    flags[k++] = flagset[b], flags[k] = 0;
                            char c = convs[ci];
                            if (strchr(flags, '#') && strchr("diu", c))
                                continue;     /* undefined in C */
                            char w[16] = "", p[16] = "";
                            if (widths[wi]) snprintf(w, sizeof w, "%d", widths[wi]);
                            if (precs[pi] > 0) snprintf(p, sizeof p, ".%d", precs[pi]);
                            /* %d prints as the value's signedness */
                            char cc = c == 'd' ? (t == D_V_INT ? 'i' : 'u') : c;
                            int sgn = cc == 'i';
                            snprintf(dfmt, sizeof dfmt, "[%%%s%s%s%c]", flags, w, p, c);
                            for (size_t vi = 0; vi < sizeof vals / sizeof *vals; vi++) {
                                int64_t x = vals[vi];
                                if (sz == 8) {
                                    snprintf(cfmt, sizeof cfmt, "[%%%s%s%sll%c]", flags, w, p, cc);
                                    if (sgn) snprintf(want, sizeof want, cfmt, (long long)x);
                                    else snprintf(want, sizeof want, cfmt, (unsigned long long)x);
                                } else {
                                    snprintf(cfmt, sizeof cfmt, "[%%%s%s%s%c]", flags, w, p, cc);
                                    if (sgn) snprintf(want, sizeof want, cfmt, (int)(int32_t)x);
                                    else snprintf(want, sizeof want, cfmt, (unsigned)(uint32_t)x);
                                }
                                d_value v = iv(x, t, sz);
                                const char *got = pf(dfmt, &v, 1, NULL);
                                total++;
                                if (strcmp(got, want)) {
                                    if (bad++ < 5)
                                        fprintf(stderr, "FAIL printf %s (type %d size %d) of %lld: got %s want %s\n",
                                                dfmt, t, sz, (long long)x, got, want);
                                }
                            }
                        }
    check_passed += total - bad;
    check_failed += bad;
    printf("printf vs libc: %d comparisons, %d differ\n", total, bad);
}

static void printf_rules(void)
{
    d_value v;
    /* strings: width, precision, left; %.0s keeps the whole string (DTrace drops .0) */
    d_value s = sv("hello world");
    expect("%s", pf("<%s>", &s, 1, NULL), "<hello world>");
    expect("%.5s", pf("<%.5s>", &s, 1, NULL), "<hello>");
    expect("%-15s", pf("<%-15s>", &s, 1, NULL), "<hello world    >");
    expect("%15.3s", pf("<%15.3s>", &s, 1, NULL), "<            hel>");
    expect("%.0s", pf("<%.0s>", &s, 1, NULL), "<hello world>");
    char want[64];
    snprintf(want, sizeof want, "<%.4s|%-6.2s|%8s>", "hello world", "hello world", "hello world");
    d_value s3[3] = {s, s, s};
    expect("%s vs libc", pf("<%.4s|%-6.2s|%8s>", s3, 3, NULL), want);
    /* DTrace-only: %.0d prints 0 (the precision is dropped), 0 after - cancels the - */
    v = iv(0, D_V_INT, 8);
    expect("%.0d of 0", pf("%.0d", &v, 1, NULL), "0");
    v = iv(42, D_V_INT, 4);
    expect("%-05d", pf("[%-05d]", &v, 1, NULL), "[00042]");
    expect("%0-5d", pf("[%0-5d]", &v, 1, NULL), "[42   ]");
    /* %d follows signedness, %i is signed, sizes cut */
    v = iv(-1, D_V_UINT, 8);
    expect("%d of uint64 -1", pf("%d", &v, 1, NULL), "18446744073709551615");
    expect("%i of uint64 -1", pf("%i", &v, 1, NULL), "-1");
    v = iv(-1, D_V_UINT, 4);
    expect("%d of uint32 -1", pf("%d", &v, 1, NULL), "4294967295");
    v = iv(-1, D_V_INT, 2);
    expect("%x of short -1", pf("%x", &v, 1, NULL), "ffff");
    expect("%d of short -1", pf("%d", &v, 1, NULL), "-1");
    v = iv(200, D_V_INT, 1);
    expect("%d of char 200", pf("%d", &v, 1, NULL), "-56");
    v = iv(INT64_MIN, D_V_INT, 8);
    expect("%d INT64_MIN", pf("%d", &v, 1, NULL), "-9223372036854775808");
    expect("%+25d INT64_MIN", pf("%+25d", &v, 1, NULL), "     -9223372036854775808");
    v = iv(70000, D_V_INT, 4);
    expect("%hd", pf("%hd", &v, 1, NULL), "4464");
    v = iv(0x1ff, D_V_INT, 4);
    expect("%hhx", pf("%hhx", &v, 1, NULL), "ff");
    v = iv(-5, D_V_INT, 8);
    expect("%lld %ld %li", pf("%lld %ld %li", (d_value[]){v, v, v}, 3, NULL), "-5 -5 -5");
    /* %c, %p (hex without 0x), %%, %? (width 16) */
    v = iv('A', D_V_INT, 1);
    expect("%c", pf("[%c%3c%-3c]", (d_value[]){v, v, v}, 3, NULL), "[A  AA  ]");
    v = iv((int64_t)0xffffffff81001014ull, D_V_PTR, 8);
    expect("%p", pf("%p", &v, 1, NULL), "ffffffff81001014");
    expect("%#p", pf("%#p", &v, 1, NULL), "0xffffffff81001014");
    v = iv(0x1234, D_V_PTR, 8);
    expect("%?p", pf("[%?p]", &v, 1, NULL), "[            1234]");
    expect("%%", pf("100%% %d%%", (d_value[]){iv(5, D_V_INT, 4)}, 1, NULL), "100% 5%");
    /* * width and precision come from values, width first; negative width is left */
    d_value dv[3] = {iv(-6, D_V_INT, 4), iv(3, D_V_INT, 4), iv(42, D_V_INT, 8)};
    expect("%*.*d", pf("[%*.*d]", dv, 3, NULL), "[042   ]");
    d_value ds[3] = {iv(8, D_V_INT, 4), iv(2, D_V_INT, 4), sv("abcdef")};
    expect("%*.*s", pf("[%*.*s]", ds, 3, NULL), "[      ab]");
    int used;
    pf("%d %s", (d_value[]){iv(1, D_V_INT, 8), sv("x")}, 2, &used);
    expect_int("values used", used, 2);
    /* %a: module`func+off, module`func, module`0xaddr, 0xaddr; %A: user; widths apply */
    d_value a[4] = {iv((int64_t)0xffffffff81001014ull, D_V_PTR, 8), iv((int64_t)0xffffffff81002000ull, D_V_PTR, 8),
                    iv((int64_t)0xffffffffc0001234ull, D_V_PTR, 8), iv(0x1234, D_V_PTR, 8)};
    expect("%a", pf("%a|%a|%a|%a", a, 4, NULL),
           "vmlinux`do_sys_open+0x14|vmlinux`vfs_read|ext4`0xffffffffc0001234|0x1234");
    expect("%-30a", pf("[%-30a][%28a]", a, 2, NULL),
           "[vmlinux`do_sys_open+0x14      ][            vmlinux`vfs_read]");
    d_value u[2] = {iv(0x7f0000001010, D_V_PTR, 8), iv(0x400000, D_V_PTR, 8)};
    expect("%A", pf("%A %A", u, 2, NULL), "libc.so.6`malloc+0x10 0x400000");
    d_out o;
    d_out_buf(&o);
    d_printf_format(&o, "%a", a, 1, NULL, NULL, NULL, NULL, 0);
    expect("%a without symbolizer", o.buf, "0xffffffff81001014");
    d_out_free(&o);
    /* %Y: walltimestamp as DTrace prints it */
    setenv("TZ", "UTC", 1);
    tzset();
    v = iv(86400LL * 365 * 1000000000LL + 3723000000000LL, D_V_INT, 8);
    expect("%Y", pf("%Y", &v, 1, NULL), "1971 Jan  1 01:02:03");
    /* %T: RFC 822 as DTrace's pfprint_time822 (strftime "%a, %d %b %G %T %Z"), width applies */
    d_value t = iv(1700000000000000000LL, D_V_INT, 8);
    expect("%T", pf("[%T]", &t, 1, NULL), "[Tue, 14 Nov 2023 22:13:20 UTC]");
    expect("%-32T", pf("[%-32T]", &t, 1, NULL), "[Tue, 14 Nov 2023 22:13:20 UTC   ]");
    /* %S: C escapes, and the string's NUL (DTrace escapes the whole record) */
    expect("%S", pf("[%S]", (d_value[]){sv("a b\t\n\"\\\x01\x7f\xff~")}, 1, NULL),
           "[a b\\t\\n\\\"\\\\\\001\\177\\377~\\0]");
    expect("%12S", pf("[%12S]", (d_value[]){sv("ab\n")}, 1, NULL), "[      ab\\n\\0]");
    /* %C: the character, or its escape; the value cut to its size first */
    d_value cs[5] = {iv(65, D_V_INT, 4), iv(10, D_V_INT, 4), iv(0, D_V_INT, 1), iv(0x1ff, D_V_INT, 4),
                     iv(' ', D_V_INT, 1)};
    expect("%C", pf("%C|%C|%C|%C|%3C", cs, 5, NULL), "A|\\n|\\0|\\377|   ");
    expect("%S integer", pf("%S", &t, 1, NULL), "conversion #1 (%S) is given an integer");
    /* length modifiers on integers */
    d_value lm[4] = {iv(-1, D_V_INT, 2), iv(-1, D_V_INT, 1), iv(255, D_V_INT, 8), iv(3, D_V_INT, 4)};
    expect("%hx %hhx %lx %i", pf("%hx %hhx %lx %i", lm, 4, NULL), "ffff ff ff 3");
    /* formats that do not fit their values: an error, not garbage */
    pf("%d %d", &v, 1, &used);
    expect_int("too few values", used, -1);
    expect("too few values: why", pf("%d %d", &v, 1, NULL), "conversion #2 (%d) has no value");
    expect("string for %d", pf("%d", (d_value[]){sv("x")}, 1, NULL), "conversion #1 (%d) is given a string");
    expect("integer for %s", pf("%s", &v, 1, NULL), "conversion #1 (%s) is given an integer");
    expect("unknown conversion", pf("%q", &v, 1, NULL), "format conversion #1 is undefined: %q");
    expect("%k of an integer", pf("%k", &v, 1, NULL), "conversion #1 (%k) is given a value that is not a stack");
    {   /* %k of a stack key: a newline, then each frame up to the first 0, indented, through the
           conversion's width; a stack under another conversion is refused */
        uint64_t fr[3] = { 0x401000, 0x402000, 0 };
        d_value st = { D_V_USTACK, 3, (int64_t)hvt_dif_sk_word(2, 3, HVT_DIF_SK_USER, 0, 0), (const char *)fr, 3, 4 };
        expect("%k", pf("a%-10k|", &st, 1, NULL), "a\n    0x401000  \n    0x402000  \n|");
        expect("%d of a stack", pf("%d", &st, 1, NULL), "conversion #1 (%d) is given a stack");
    }
    expect("% at the end", pf("abc%", &v, 1, NULL), "format conversion #1 name expected before end of format string");
    expect("%5%", pf("%5%", &v, 1, NULL), "format conversion #1 cannot be combined with other flags: %%");
    expect("%@ outside printa", pf("%@d", &v, 1, NULL), "conversion #1: %@ outside printa()");
}

/* --- records --- */

static d_val V8 = {D_V_INT, 8}, V4 = {D_V_INT, 4}, V2 = {D_V_INT, 2}, V1 = {D_V_INT, 1}, VS = {D_V_STR, 0},
             VU8 = {D_V_UINT, 8}, VK = {D_V_KSYM, 8};
static d_action acts0[] = {
    ACT(D_ACT_TRACE, NULL, -1, 1, &V8),  ACT(D_ACT_TRACE, NULL, -1, 1, &V4),   ACT(D_ACT_TRACE, NULL, -1, 1, &V2),
    ACT(D_ACT_TRACE, NULL, -1, 1, &V1),  ACT(D_ACT_TRACE, NULL, -1, 1, &VS),
    ACT(D_ACT_PRINTF, "x=%d s=%s\n", -1, 2, ((d_val[]){{D_V_INT, 8}, {D_V_STR, 0}})),
    ACT(D_ACT_EXIT, NULL, -1, 1, &V4),   ACT(D_ACT_TRACE, NULL, -1, 1, &VK),   ACT(D_ACT_TRACE, NULL, -1, 1, &VU8),
    ACT(D_ACT_USTACK, NULL, -1, 0, NULL),
};
static d_action acts1[] = {ACT(D_ACT_DEFAULT, NULL, -1, 0, NULL)};
static d_action acts2[] = {ACT(D_ACT_SETOPT, "quiet", -1, 0, NULL), ACT(D_ACT_STACK, NULL, -1, 0, NULL),
                           ACT(D_ACT_PRINTF, "%d and %d\n", -1, 1, &V8), ACT(D_ACT_STOP, NULL, -1, 0, NULL)};
static uint32_t stmts0[] = {3, 10};
static d_clause clauses[] = {
    {.where = "fbt::do_sys_open:entry", .nacts = 10, .acts = acts0, .pred_end = 3, .nstmts = 2, .stmt_pc = stmts0},
    CLAUSE("BEGIN", 1, acts1),
    CLAUSE("fbt::do_sys_open:entry", 4, acts2),
};
/* BEGIN's id is hvt's own (as d_run gives it): printed as DTrace's 1 */
#define BEGIN_ID 0xffffff01u
static d_probe probes[] = {
    {5, "fbt", "kernel", "do_sys_open", "entry"},
    {10, "fbt", "kernel", "foo", "entry"}, {11, "fbt", "kernel", "foo", "return"},
    {12, "fbt", "kernel", "bar", "entry"}, {13, "fbt", "kernel", "bar", "return"},
    {20, "syscall", "kernel", "read", "entry"}, {21, "syscall", "kernel", "read", "return"},
    {BEGIN_ID, "dtrace", "", "", "BEGIN"},
};

/* An image with strsize 16 whose probes run: BEGIN clause 1, do_sys_open clauses 0 and 1;
 * DTrace's EPIDs: (clause 0, probe 5) 1, (clause 1, probe 1) 2, (clause 1, probe 5) 3. */
static uint8_t image[512];
static dprog prog(int quiet, int flow)
{
    struct hvt_dif_hdr h = {0};
    struct hvt_dif_probe pr[2] = {{5, 0, 2, 0, 0, 0, 0}, {BEGIN_ID, 2, 1, 0, 0, 0, 0}};
    uint16_t pc[3] = {0, 1, 1};
    h.magic = HVT_DIF_MAGIC;
    h.begin_probe = BEGIN_ID;
    h.strsize = 16;
    h.nprobes = 2;
    h.nprobe_clauses = 3;
    h.off_probes = (sizeof h + 7) & ~7u;
    h.off_probe_clauses = h.off_probes + sizeof pr;
    h.size = h.off_probe_clauses + sizeof pc;
    memcpy(image, &h, sizeof h);
    memcpy(image + h.off_probes, pr, sizeof pr);
    memcpy(image + h.off_probe_clauses, pc, sizeof pc);
    dprog p = {0};
    p.image = image, p.image_len = h.size;
    p.nclauses = 3, p.clauses = clauses;
    p.nprobes = sizeof probes / sizeof *probes, p.probes = probes;
    p.quiet = quiet, p.flowindent = flow;
    return p;
}

#define HEAD "CPU     ID                    FUNCTION:NAME\n"
#define L0_BEGIN "  0      1                           :BEGIN "
#define L1_OPEN "  1      5                do_sys_open:entry "

static int one(d_consumer *c, rbuf *r) { return d_consume_record(c, r->b + r->start, r->n - r->start); }

static int fake_unwind(void *ctx, const struct hvt_drec *r, int user, uint64_t rsp, const uint8_t *b, uint32_t n,
                       uint64_t *pcs, int max)
{
    (void)ctx, (void)r, (void)user, (void)b, (void)max;
    expect_int("unwind rsp", (long long)rsp, 0x1000);
    expect_int("unwind bytes", n, 12);
    pcs[0] = 0xffffffff81001014ull, pcs[1] = 0xffffffff81002000ull, pcs[2] = 0;
    return 3;
}

static void count_other(void *ctx, const struct hvt_drec *r, const d_action *a)
{
    (void)r;
    *(int *)ctx += a->kind == D_ACT_STOP;
}

static void records(void)
{
    dprog p = prog(0, 0);
    rbuf r = {0};
    /* a clause with no action: the heading, then the probe */
    d_consumer *c = mk(&p);
    rb_rec(&r, HVT_DREC_DATA, 0, BEGIN_ID, 1), rb_end(&r);
    expect_int("empty clause rc", one(c, &r), D_CONSUME_OK);
    expect("empty clause", g_out.buf, HEAD L0_BEGIN "\n");
    {
        /* a clause compiled for a stable probe: the probe line names it, not the probe that fired */
        d_probe st = {89586, "proc", "vmlinux", "", "exit"};
        clauses[1].stable = &st;
        d_consumer *cs = mk(&p);
        rbuf rs = {0};
        rb_rec(&rs, HVT_DREC_DATA, 0, BEGIN_ID, 1), rb_end(&rs);
        expect_int("stable probe line rc", one(cs, &rs), D_CONSUME_OK);
        expect("stable probe line", g_out.buf, HEAD "  0  89586                            :exit \n");
        d_out_reset(&g_err);
        rb_ctl(&rs, HVT_DREC_ERROR, 0, BEGIN_ID, 1, 0x10, 7, HVT_DIF_F_BADADDR);
        expect_int("stable probe error rc", one(cs, &rs), D_CONSUME_OK);
        expect("stable probe error", g_err.buf,
               "hvt: error on enabled probe ID 2 (ID 89586: proc:vmlinux::exit): invalid address (0x10) in action #1 at DIF offset 7\n");
        d_out_reset(&g_err);
        clauses[1].stable = NULL;
        d_consume_free(cs);
        d_out_reset(&g_out);
    }
    /* trace() of every size as dtrace-utils prints it (signed by the C type: " %19ld", " %10d",
     * " %5hd", " %3hhd"; unsigned " %20lu"...), a string, sym(), and the heading only once */
    rb_rec(&r, HVT_DREC_DATA, 1, 5, 0);
    rb_act(&r, 0), rb_i(&r, 42), rb_act(&r, 1), rb_i(&r, -1), rb_act(&r, 2), rb_i(&r, -1), rb_act(&r, 3), rb_i(&r, -2);
    rb_act(&r, 4), rb_s(&r, "bash"), rb_act(&r, 8), rb_i(&r, -1), rb_act(&r, 7), rb_i(&r, (int64_t)0xffffffff81001014ull);
    rb_end(&r);
    d_out_reset(&g_out);
    one(c, &r);
    expect("trace values", g_out.buf,
           L1_OPEN "                  42         -1    -1  -2  bash                              18446744073709551615"
                   "  vmlinux`do_sys_open                               \n");
    /* printf() after the probe: DTrace's blank line follows */
    rb_rec(&r, HVT_DREC_DATA, 1, 5, 0), rb_act(&r, 5), rb_i(&r, 7), rb_s(&r, "abc"), rb_end(&r);
    d_out_reset(&g_out);
    one(c, &r);
    expect("printf", g_out.buf, L1_OPEN "x=7 s=abc\n\n");
    /* the empty string is not a string to DTrace's trace(): its strsize bytes, dumped */
    rb_rec(&r, HVT_DREC_DATA, 1, 5, 0), rb_act(&r, 4), rb_s(&r, ""), rb_end(&r);
    d_out_reset(&g_out);
    one(c, &r);
    expect("trace empty string", g_out.buf,
           L1_OPEN "\n             0  1  2  3  4  5  6  7  8  9  a  b  c  d  e  f  0123456789abcdef\n"
                   "         0: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00  ................\n\n");
    /* exit(3) */
    rb_rec(&r, HVT_DREC_DATA, 1, 5, 0), rb_act(&r, 6), rb_i(&r, 3), rb_end(&r);
    d_out_reset(&g_out);
    int st = -1;
    expect_int("exit rc", one(c, &r), D_CONSUME_EXIT);
    expect_int("exit seen", d_consume_exit_status(c, &st), 1);
    expect_int("exit status", st, 3);
    expect("exit output", g_out.buf, L1_OPEN "\n");
    /* setopt("quiet") drops the record's own newline, as dtrace's setopt handler does */
    rb_rec(&r, HVT_DREC_DATA, 1, 5, 2), rb_act(&r, 0), rb_end(&r);
    d_out_reset(&g_out);
    one(c, &r);
    expect("setopt quiet", g_out.buf, L1_OPEN);
    expect_int("quiet now", d_consume_quiet(c), 1);
    d_consume_free(c);

    /* -q: the values only */
    dprog pq = prog(1, 0);
    c = mk(&pq);
    rb_rec(&r, HVT_DREC_DATA, 1, 5, 0);
    rb_act(&r, 0), rb_i(&r, 42), rb_act(&r, 1), rb_i(&r, -1), rb_act(&r, 2), rb_i(&r, -1), rb_act(&r, 4), rb_s(&r, "bash");
    rb_act(&r, 5), rb_i(&r, -7), rb_s(&r, "x"), rb_end(&r);
    one(c, &r);
    expect("quiet", g_out.buf, "42-1-1bashx=-7 s=x\n");   /* a short -1: %hd, as dtrace-utils */
    d_consume_free(c);

    /* stack(): frames from the unwinder, symbolized, indented 14 */
    d_out_reset(&g_out), d_out_reset(&g_err);
    d_consume_cfg cfg = {&g_out, &g_err, g_fake_sym, fake_unwind, NULL, NULL, NULL};
    c = d_consume_new(&p, &cfg);
    rb_rec(&r, HVT_DREC_DATA, 1, 5, 2), rb_act(&r, 1);
    uint32_t sh[2] = {12, 0};
    uint64_t rsp = 0x1000;
    uint8_t sb[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    rb_put(&r, sh, 8), rb_put(&r, &rsp, 8), rb_put(&r, sb, 16), rb_end(&r);
    one(c, &r);
    expect("stack", g_out.buf, HEAD L1_OPEN "\n              vmlinux`do_sys_open+0x14\n              vmlinux`vfs_read\n\n");
    d_consume_free(c);

    /* ustack(): the recorded user pcs up to the first 0, through the symbolizer as user
     * addresses (0x... without a symbol), indented 14, as DTrace's dt_print_ustack */
    d_out_reset(&g_out), d_out_reset(&g_err);
    c = d_consume_new(&p, &cfg);
    rb_rec(&r, HVT_DREC_DATA, 1, 5, 0), rb_act(&r, 9);
    uint32_t uh[2] = {3, 0};
    uint64_t upc[3] = {0x7f0000001010ull, 0x400000, 0};
    rb_put(&r, uh, 8), rb_put(&r, upc, 24), rb_end(&r);
    expect_int("ustack rc", one(c, &r), D_CONSUME_OK);
    expect("ustack", g_out.buf, HEAD L1_OPEN "\n              libc.so.6`malloc+0x10\n              0x400000\n\n");
    d_out_reset(&g_out);
    rb_rec(&r, HVT_DREC_DATA, 1, 5, 0), rb_act(&r, 9);
    uh[0] = 0;
    rb_put(&r, uh, 8), rb_end(&r);
    one(c, &r);
    expect("ustack with no frames", g_out.buf, L1_OPEN "\n\n");
    rb_rec(&r, HVT_DREC_DATA, 1, 5, 0), rb_act(&r, 9);
    uh[0] = 5;
    rb_put(&r, uh, 8), rb_put(&r, upc, 16), rb_end(&r);
    expect_int("ustack cut rc", one(c, &r), D_CONSUME_BAD);
    expect("ustack cut", g_err.buf, "hvt: malformed record from CPU 1 (action #9: user stack of 5 frames does not fit)\n");
    d_consume_free(c);

    /* a format that does not fit its values (the compiler's bug) is said, not guessed; the
     * actions the consumer does not carry out go to the caller */
    int others = 0;
    cfg.other = count_other, cfg.other_ctx = &others;
    d_out_reset(&g_out), d_out_reset(&g_err);
    c = d_consume_new(&p, &cfg);
    r.n = 0;
    rb_rec(&r, HVT_DREC_DATA, 1, 5, 2), rb_act(&r, 2), rb_i(&r, 1), rb_act(&r, 3), rb_end(&r);
    one(c, &r);
    expect("printf mismatch out", g_out.buf, HEAD L1_OPEN "1 and \n");
    expect("printf mismatch err", g_err.buf,
           "hvt: printf() in clause 2 (fbt::do_sys_open:entry): conversion #2 (%d) has no value\n");
    expect_int("other action", others, 1);
    d_consume_free(c);
}

static void flowindent(void)
{
    dprog p = prog(0, 1);
    rbuf r = {0};
    static const uint32_t seq[] = {20, 10, 12, 13, 11, 21};
    for (size_t i = 0; i < sizeof seq / sizeof *seq; i++)
        rb_rec(&r, HVT_DREC_DATA, 0, seq[i], 1), rb_end(&r);
    d_consumer *c = mk(&p);
    d_consume_buffer(c, r.b, r.n);
    expect("flowindent", g_out.buf,
           "CPU FUNCTION                                 \n"
           "  0  => read                                  \n"
           "  0    -> foo                                 \n"
           "  0      -> bar                               \n"
           "  0      <- bar                               \n"
           "  0    <- foo                                 \n"
           "  0  <= read                                  \n");
    /* two clauses on one probe: the second entry is not a deeper call, only the last return
     * returns; CPUs indent apart */
    r.n = 0;
    rb_rec(&r, HVT_DREC_DATA, 0, 10, 0), rb_end(&r);
    rb_rec(&r, HVT_DREC_DATA, 0, 10, 1), rb_end(&r);
    rb_rec(&r, HVT_DREC_DATA, 1, 12, 1), rb_end(&r);
    rb_rec(&r, HVT_DREC_DATA, 0, 11, 0), rb_end(&r);
    rb_rec(&r, HVT_DREC_DATA, 0, 11, 1), rb_end(&r);
    d_out_reset(&g_out);
    d_consume_buffer(c, r.b, r.n);
    expect("flowindent two clauses", g_out.buf,
           "  0  -> foo                                   \n"
           "  0   | foo:entry                             \n"
           "  1  -> bar                                   \n"
           "  0   | foo:return                            \n"
           "  0  <- foo                                   \n");
    d_consume_free(c);
    /* -F prints under -q too (dtrace does), without the record's newline */
    dprog pq = prog(1, 1);
    c = mk(&pq);
    r.n = 0;
    rb_rec(&r, HVT_DREC_DATA, 0, 10, 1), rb_end(&r);
    d_consume_buffer(c, r.b, r.n);
    expect("flowindent quiet", g_out.buf, "CPU FUNCTION                                 \n  0  -> foo                                   ");
    d_consume_free(c);
}

static void errors_and_drops(void)
{
    dprog p = prog(0, 0);
    rbuf r = {0};
    d_consumer *c = mk(&p);
    rb_ctl(&r, HVT_DREC_ERROR, 1, 5, 0, 0x10, 12, HVT_DIF_F_BADADDR);
    rb_ctl(&r, HVT_DREC_ERROR, 0, 5, 0, 0, 1, HVT_DIF_F_DIVZERO);
    rb_ctl(&r, HVT_DREC_ERROR, 0, 5, 1, 0, 4, HVT_DIF_F_NOSCRATCH);
    rb_ctl(&r, HVT_DREC_ERROR, 0, BEGIN_ID, 1, 0, 7, HVT_DIF_F_ILLOP);
    rb_ctl(&r, HVT_DREC_ERROR, 0, 5, 0, 0, 5, HVT_DIF_F_TUPLE);
    rb_ctl(&r, HVT_DREC_ERROR, 0, 5, 1, HVT_DIF_BUDGET_INSNS, 3, HVT_DIF_F_BUDGET);
    rb_ctl(&r, HVT_DREC_ERROR, 0, 5, 0, HVT_DIF_BUDGET_TIME, 2, HVT_DIF_F_BUDGET);
    rb_ctl(&r, HVT_DREC_ERROR, 1, 5, 0, 0, 12, HVT_DIF_F_STEPREFUSED);
    rb_ctl(&r, HVT_DREC_DROPS, 0, 0, 0, 1, 0, 0);
    rb_ctl(&r, HVT_DREC_DROPS, 3, 0, 0, 17, 0, 0);
    rb_ctl(&r, HVT_DREC_DYNDROPS, 0, 0, 0, 2, 0, 0);
    rb_ctl(&r, HVT_DREC_DYNDROPS, 0, 0, 0, 1, 0, 0);
    rb_ctl(&r, HVT_DREC_SPECDROPS, 1, 0, 0, 3, 0, 0);
    rb_ctl(&r, HVT_DREC_SPECDROPS, 0, 0, 0, 1, 0, 0);
    rb_ctl(&r, HVT_DREC_SPECUNAVAIL, 0, 0, 0, 4, 0, 0);
    rb_ctl(&r, HVT_DREC_SPECUNAVAIL, 0, 0, 0, 1, 0, 0);
    rb_ctl(&r, HVT_DREC_SPECBUSY, 1, 0, 0, 2, 0, 0);
    rb_ctl(&r, HVT_DREC_SPECBUSY, 1, 0, 0, 1, 0, 0);
    expect_int("errors rc", d_consume_buffer(c, r.b, r.n), D_CONSUME_OK);
    expect("errors", g_err.buf,
           "hvt: error on enabled probe ID 1 (ID 5: fbt:kernel:do_sys_open:entry): invalid address (0x10) in action #2 at DIF offset 12\n"
           "hvt: error on enabled probe ID 1 (ID 5: fbt:kernel:do_sys_open:entry): divide-by-zero in predicate at DIF offset 1\n"
           "hvt: error on enabled probe ID 3 (ID 5: fbt:kernel:do_sys_open:entry): out of scratch space in action #1 at DIF offset 4\n"
           "hvt: error on enabled probe ID 2 (ID 1: dtrace:::BEGIN): illegal operation in action #1 at DIF offset 7\n"
           "hvt: error on enabled probe ID 1 (ID 5: fbt:kernel:do_sys_open:entry): tuple stack overflow in action #1 at DIF offset 5\n"
           "hvt: error on enabled probe ID 3 (ID 5: fbt:kernel:do_sys_open:entry): firing budget exceeded (instructions; later clauses skipped) in action #1 at DIF offset 3\n"
           "hvt: error on enabled probe ID 1 (ID 5: fbt:kernel:do_sys_open:entry): firing budget exceeded (time; later clauses skipped) in predicate at DIF offset 2\n"
           "hvt: error on enabled probe ID 1 (ID 5: fbt:kernel:do_sys_open:entry): step() refused (as many threads as can be stepped at once are) in action #2 at DIF offset 12\n"
           "hvt: 1 drop on CPU 0\n"
           "hvt: 17 drops on CPU 3\n"
           "hvt: 2 dynamic variable drops\n"
           "hvt: 1 dynamic variable drop\n"
           "hvt: 3 speculative drops\n"
           "hvt: 1 speculative drop\n"
           "hvt: 4 failed speculations (no speculative buffer available)\n"
           "hvt: 1 failed speculation (no speculative buffer available)\n"
           "hvt: 2 failed speculations (available buffer(s) still busy)\n"
           "hvt: 1 failed speculation (available buffer(s) still busy)\n");
    expect("errors print no heading", g_out.buf, "");
    d_consume_free(c);
}

/* Each malformed record: reported, nothing printed, the next good one still printed. */
static void malformed(void)
{
    dprog p = prog(0, 0);
    struct {
        const char *what, *why;
        void (*build)(rbuf *);
    } cases[] = {
        {"truncated string length", "action #4 value 1: string of 200 bytes past the record's end", NULL},
        {"wrong action index", "action index 10, the clause has 10", NULL},
        {"length past the record", "length 4096 in 48 bytes", NULL},
        {"integer cut", "action #0 value 1: integer cut", NULL},
        {"string padding", "action #4 value 1: string padding is not zero", NULL},
        {"string over strsize", "action #4 value 1: string of 20 bytes, strsize is 16", NULL},
        {"unknown probe", "probe id 99 is not one of the program's", NULL},
        {"clause out of range", "clause 7, the program has 3", NULL},
        {"action header padding", "action header at byte 40 is not zero-padded", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rbuf r = {0};
        uint16_t l;
        switch (i) {
        case 0: rb_rec(&r, HVT_DREC_DATA, 2, 5, 0), rb_act(&r, 4), l = 200, rb_put(&r, &l, 2), rb_put(&r, "abcdef", 6); break;
        case 1: rb_rec(&r, HVT_DREC_DATA, 2, 5, 0), rb_act(&r, 10), rb_i(&r, 1); break;
        case 2: rb_rec(&r, HVT_DREC_DATA, 2, 5, 0), rb_act(&r, 0), rb_end(&r), rb_i(&r, 1); break;
        case 3: rb_rec(&r, HVT_DREC_DATA, 2, 5, 0), rb_act(&r, 0); break;
        case 4: rb_rec(&r, HVT_DREC_DATA, 2, 5, 0), rb_act(&r, 4), rb_s(&r, "abc"), r.b[r.n - 1] = 'x'; break;
        case 5: rb_rec(&r, HVT_DREC_DATA, 2, 5, 0), rb_act(&r, 4), rb_s(&r, "01234567890123456789"); break;
        case 6: rb_rec(&r, HVT_DREC_DATA, 2, 99, 0); break;
        case 7: rb_rec(&r, HVT_DREC_DATA, 2, 5, 7); break;
        case 8: rb_rec(&r, HVT_DREC_DATA, 2, 5, 0), rb_act(&r, 0), r.b[r.n - 3] = 1, rb_i(&r, 1); break;
        }
        if (i != 2)
            rb_end(&r);
        else
            memcpy(r.b + r.start, &(uint32_t){4096}, 4);
        d_consumer *c = mk(&p);
        int rc = d_consume_record(c, r.b, i == 2 ? 48 : r.n);
        char want[256];
        snprintf(want, sizeof want, "hvt: malformed record from CPU 2 (%s)\n", cases[i].why);
        expect_int(cases[i].what, rc, D_CONSUME_BAD);
        expect(cases[i].what, g_err.buf, want);
        expect(cases[i].what, g_out.buf, "");
        r.n = 0;
        rb_rec(&r, HVT_DREC_DATA, 0, BEGIN_ID, 1), rb_end(&r);
        one(c, &r);
        expect(cases[i].what, g_out.buf, HEAD L0_BEGIN "\n");
        d_consume_free(c);
    }
    /* a buffer whose last record is cut: the good ones before it print */
    rbuf r = {0};
    rb_rec(&r, HVT_DREC_DATA, 0, BEGIN_ID, 1), rb_end(&r);
    rb_rec(&r, HVT_DREC_DATA, 0, BEGIN_ID, 1), rb_i(&r, 0), rb_end(&r);
    d_consumer *c = mk(&p);
    expect_int("cut buffer rc", d_consume_buffer(c, r.b, r.n - 8), D_CONSUME_BAD);
    expect("cut buffer out", g_out.buf, HEAD L0_BEGIN "\n");
    expect("cut buffer err", g_err.buf, "hvt: malformed record from CPU 0 (length 48 in 40 bytes): rest of the buffer skipped\n");
    d_out_reset(&g_err);
    d_consume_record(c, r.b, 20);
    expect("short header", g_err.buf, "hvt: malformed record (20 bytes, shorter than a record header)\n");
    d_consume_free(c);
}

int main(void)
{
    d_out_buf(&g_out);
    d_out_buf(&g_err);
    printf_vs_libc();
    printf_rules();
    records();
    flowindent();
    errors_and_drops();
    malformed();
    test_aggs();
    d_out_free(&g_out);
    d_out_free(&g_err);
    return check_summary("unit_dconsume");
}
