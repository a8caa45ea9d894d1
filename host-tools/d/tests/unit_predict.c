/*
 * unit_predict: the probe effect's model (host-tools/d/d_predict.h) without a guest: the
 * calibration table's syntax and its errors, the counts of a firing of compiled programs
 * (classes, clauses, the predicate apart, the aggregating function by its aggregation), the
 * price by phase and the fallbacks, the counting run's rate and the slowdown, checked against
 * a workload made of numbers, and hvt -e's report. Last line: "N passed, N failed".
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"
#include "d_compile.h"
#include "d_predict.h"
#include "desc_fields.h"
#include "util.h"
#include "dif.h"
#include "dif_impl.h"

static const struct { uint32_t id; const char *p, *m, *f, *n; } probes[] = {
    {10, "fbt", "kernel", "vfs_read", "entry"}, {100, "syscall", "kernel", "read", "entry"},
    {102, "syscall", "kernel", "write", "entry"}};

static int field(const char *pat, const char *s) { return !pat[0] || util_glob(pat, s); }

/* desc's four fields (fewer given: the last ones), each matched as a glob */
static int resolve(void *ctx, const char *desc, d_probe_sink *sink, char *err, size_t errlen)
{
    (void)ctx;
    char f[4][DESC_FIELD_MAX];
    if (desc_fields(desc, f, err, errlen))
        return -1;
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        if (field(f[0], probes[i].p) && field(f[1], probes[i].m) && field(f[2], probes[i].f) &&
            field(f[3], probes[i].n))
            d_probe_add(sink, probes[i].id, probes[i].p, probes[i].m, probes[i].f, probes[i].n);
    return 0;
}

static int compile(const char *src, dprog *p)
{
    d_options o = {0};
    o.resolve = resolve;
    o.begin_id = 1;
    o.end_id = 2;
    o.error_id = 3;
    o.err = stderr;
    memset(p, 0, sizeof *p);
    int rc = d_compile("test.d", src, strlen(src), &o, p);
    CHECK(rc == 0, "compiles: %s", src);
    return rc;
}

/* The model of the image's probe with this id. */
static int model_of(const dprog *p, uint32_t id, struct d_model *m)
{
    const struct hvt_dif_hdr *h = (const struct hvt_dif_hdr *)p->image;
    const struct hvt_dif_probe *pr = (const struct hvt_dif_probe *)(p->image + h->off_probes);
    char err[200] = "";
    for (uint32_t i = 0; i < h->nprobes; i++)
        if (pr[i].id == id) {
            int rc = d_model_probe(p->image, p->image_len, i, m, err, sizeof err);
            CHECK(rc == 0, "model of probe %u: %s", id, err);
            return rc;
        }
    CHECK(0, "probe %u is not in the image", id);
    return -1;
}

static const char *const table =
    "# a table as bench/predict-cal.py writes it\n"
    "exit=200\nlookup=150\n\ndfire=100\nclause=50   # per clause\nop_insn=20\nop_builtin=30\r\n"
    "op_builtin_str=100\nop_tpush=80\nagg_count=300\nagg_quantize=400\ntsc_khz=1000000\nsysargs=500\n";

static void test_cal(void)
{
    struct d_cal c;
    char err[200] = "";
    CHECK(d_cal_parse(table, &c, err, sizeof err) == 0, "the table parses: %s", err);
    CHECK(c.v[D_CAL_EXIT] == 200 && c.v[D_CAL_CLAUSE] == 50 && c.v[D_CAL_OP_BUILTIN] == 30 &&
          c.v[D_CAL_AGG_QUANTIZE] == 400, "values: exit %g clause %g builtin %g quantize %g",
          c.v[D_CAL_EXIT], c.v[D_CAL_CLAUSE], c.v[D_CAL_OP_BUILTIN], c.v[D_CAL_AGG_QUANTIZE]);
    CHECK(c.tsc_khz == 1e6, "tsc_khz %g", c.tsc_khz);
    CHECK((c.have & 1u << D_CAL_AGG_QUANTIZE) && !(c.have & 1u << D_CAL_AGG_SUM) &&
          !(c.have & 1u << D_CAL_OP_TVAR), "have: the keys given only (%x)", c.have);
    static const struct { const char *text, *msg; } bad[] = {
        {"exit=1\nfoo=2\n", "line 2: unknown key foo"},
        {"exit=1\n\nlookup=-3\n", "line 3: lookup: not a number >= 0: -3"},
        {"exit=x\n", "line 1: exit: not a number >= 0: x"},
        {"exit=1e999\n", "line 1: exit: not a number >= 0: 1e999"},
        {"exit=nan\n", "line 1: exit: not a number >= 0: nan"},
        {"exit=1\nexit=2\n", "line 2: exit given twice"},
        {"exit 1\n", "line 1: not key=value: exit 1"},
        {"tsc_khz=1\ntsc_khz=2\n", "line 2: tsc_khz given twice"},
        {"exit=\n", "line 1: exit: not a number >= 0: "},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        int rc = d_cal_parse(bad[i].text, &c, err, sizeof err);
        CHECK(rc == -1 && !strcmp(err, bad[i].msg), "refused with '%s': got %d '%s'", bad[i].msg, rc, err);
    }
    CHECK(d_cal_parse("", &c, err, sizeof err) == 0 && !c.have, "an empty table parses, empty");
    char used[256];
    CHECK(d_cal_load("/nonexistent/probecost.cal", &c, used, sizeof used, err, sizeof err) == -1 &&
          strstr(err, "/nonexistent/probecost.cal: cannot read"), "a missing file: %s", err);
    setenv("HVT_PROBECOST_CAL", "/nonexistent/env.cal", 1);
    d_cal_load(NULL, &c, used, sizeof used, err, sizeof err);
    CHECK(!strcmp(used, "/nonexistent/env.cal"), "NULL: $HVT_PROBECOST_CAL (%s)", used);
    unsetenv("HVT_PROBECOST_CAL");
    setenv("XDG_CONFIG_HOME", "/nonexistent/xdg", 1);
    d_cal_load(NULL, &c, used, sizeof used, err, sizeof err);
    CHECK(!strcmp(used, "/nonexistent/xdg/hvtrace/probecost.cal"), "then XDG_CONFIG_HOME (%s)", used);
    for (unsigned k = 0; k < D_CAL_KEYS; k++) {        /* every fallback chain ends */
        enum d_cal_key f = (enum d_cal_key)k;
        unsigned steps = 0;
        while (d_cal_fallback(f) != f && steps++ < D_CAL_KEYS)
            f = d_cal_fallback(f);
        CHECK(steps < D_CAL_KEYS && (f == D_CAL_OP_INSN || f == (enum d_cal_key)k),
              "%s falls back to op_insn or is required (ends at %s)", d_cal_name((enum d_cal_key)k), d_cal_name(f));
    }
}

static void test_model(void)
{
    dprog p;
    struct d_model m;
    char err[200];
    if (compile("fbt::vfs_read:entry { @[execname] = count(); }", &p) == 0 && model_of(&p, 10, &m) == 0) {
        CHECK(m.n[D_CAL_EXIT] == 1 && m.n[D_CAL_LOOKUP] == 1 && m.n[D_CAL_DFIRE] == 1 && m.n[D_CAL_CLAUSE] == 1,
              "a firing: one exit, lookup, walk and clause");
        CHECK(m.n[D_CAL_OP_BUILTIN_STR] == 1 && m.n[D_CAL_OP_TPUSH] == 1 && m.n[D_CAL_AGG_COUNT] == 1 &&
              m.n[D_CAL_OP_INSN] == 1 && m.n[D_CAL_OP_BUILTIN] == 0,
              "execname, its push, the count, the RET: str %g tpush %g count %g insn %g builtin %g",
              m.n[D_CAL_OP_BUILTIN_STR], m.n[D_CAL_OP_TPUSH], m.n[D_CAL_AGG_COUNT], m.n[D_CAL_OP_INSN],
              m.n[D_CAL_OP_BUILTIN]);
        double pred = 0;
        for (unsigned k = 0; k < D_CAL_KEYS; k++)
            pred += m.pred[k];
        CHECK(pred == 0, "no predicate, nothing counted in one (%g)", pred);

        CHECK(d_model_probe(p.image, p.image_len, 99, &m, err, sizeof err) == -1 && strstr(err, "the image has"),
              "a probe index past the image's: %s", err);
        CHECK(d_model_probe(p.image, 64, 0, &m, err, sizeof err) == -1 && !strcmp(err, "not a D image"),
              "a truncated image: %s", err);
        uint8_t *bad = malloc(p.image_len);
        memcpy(bad, p.image, p.image_len);
        ((struct hvt_dif_hdr *)bad)->off_insns = (uint32_t)p.image_len;   /* its code past the end */
        CHECK(d_model_probe(bad, p.image_len, 0, &m, err, sizeof err) == -1, "code out of the image: %s", err);
        free(bad);
        dprog_free(&p);
    }
    if (compile("fbt::vfs_read:entry /pid == 5/ { @ = quantize(arg2); }", &p) == 0 && model_of(&p, 10, &m) == 0) {
        CHECK(m.pred[D_CAL_OP_BUILTIN] == 1 && m.n[D_CAL_OP_BUILTIN] == 2,
              "pid in the predicate, arg2 in the body (pred %g of %g)", m.pred[D_CAL_OP_BUILTIN],
              m.n[D_CAL_OP_BUILTIN]);
        CHECK(m.pred[D_CAL_OP_INSN] == 3 && m.n[D_CAL_OP_INSN] == 4,
              "ldi, eq, bz in the predicate, the RET after (pred %g of %g)", m.pred[D_CAL_OP_INSN],
              m.n[D_CAL_OP_INSN]);
        CHECK(m.n[D_CAL_AGG_QUANTIZE] == 1 && m.n[D_CAL_AGG_COUNT] == 0, "the aggregation priced as quantize");
        dprog_free(&p);
    }
    if (compile("fbt::vfs_read:entry { @a = sum(arg0); } fbt::vfs_read:entry, syscall::read:entry "
                "{ self->x = 1; @b[arg1, probefunc] = lquantize(arg2, 0, 10, 1); } BEGIN { @c = count(); }", &p) == 0 &&
        model_of(&p, 10, &m) == 0) {
        CHECK(m.n[D_CAL_CLAUSE] == 2 && m.n[D_CAL_DFIRE] == 1 && m.nclauses == 2, "two clauses, one walk");
        CHECK(m.n[D_CAL_AGG_SUM] == 1 && m.n[D_CAL_AGG_LQUANTIZE] == 1 && m.n[D_CAL_AGG_COUNT] == 0,
              "sum and lquantize, not BEGIN's count");
        CHECK(m.n[D_CAL_OP_TVAR] == 1 && m.n[D_CAL_OP_TPUSH] == 2 && m.n[D_CAL_OP_BUILTIN_STR] == 1,
              "self->x, two keys, probefunc (tvar %g tpush %g str %g)", m.n[D_CAL_OP_TVAR], m.n[D_CAL_OP_TPUSH],
              m.n[D_CAL_OP_BUILTIN_STR]);
        CHECK(m.n[D_CAL_SYSARGS] == 0, "an fbt probe reads no system call's arguments");
        struct d_model r;
        if (model_of(&p, 100, &r) == 0) {
            CHECK(r.n[D_CAL_CLAUSE] == 1 && r.n[D_CAL_AGG_SUM] == 0 && r.n[D_CAL_AGG_LQUANTIZE] == 1,
                  "syscall::read:entry runs the second clause only");
            CHECK(r.n[D_CAL_SYSARGS] == 1, "a system call's entry reads the user's arguments");
            struct d_cal c;
            double ph[HVT_PH_COUNT];
            uint32_t est;
            d_cal_parse(table, &c, err, sizeof err);
            c.have &= ~(1u << D_CAL_SYSARGS);
            CHECK(d_model_cost(&c, &r, ph, &est, err, sizeof err) == -1 &&
                  !strcmp(err, "the calibration table has no sysargs"), "without sysargs: %s", err);
        }
        dprog_free(&p);
    }
}

static double sum_of(const double ph[HVT_PH_COUNT])
{
    double s = 0;
    for (unsigned i = 0; i < HVT_PH_COUNT; i++)
        s += ph[i];
    return s;
}

static void test_cost(void)
{
    struct d_cal c;
    char err[200] = "";
    d_cal_parse(table, &c, err, sizeof err);
    dprog p;
    struct d_model m;
    double ph[HVT_PH_COUNT];
    uint32_t est;
    if (compile("fbt::vfs_read:entry { @[execname] = count(); }", &p) == 0 && model_of(&p, 10, &m) == 0) {
        CHECK(d_model_cost(&c, &m, ph, &est, err, sizeof err) == 0 && !est, "priced: %s", err);
        CHECK(ph[HVT_PH_EXIT] == 200 && ph[HVT_PH_LOOKUP] == 150 && ph[HVT_PH_CLAUSES] == 150 &&
              ph[HVT_PH_PREDICATE] == 0 && ph[HVT_PH_INSNS] == 100 && ph[HVT_PH_BUILTINS] == 100 &&
              ph[HVT_PH_SUBR] == 0 && ph[HVT_PH_AGG] == 300 && ph[HVT_PH_RECORD] == 0,
              "by phase: %g %g %g %g %g %g %g %g %g", ph[0], ph[1], ph[2], ph[3], ph[4], ph[5], ph[6], ph[7], ph[8]);
        CHECK(sum_of(ph) == 1000, "1000 ticks a firing (%g)", sum_of(ph));
        dprog_free(&p);
    }
    if (compile("fbt::vfs_read:entry /pid == 5/ { @ = quantize(arg2); }", &p) == 0 && model_of(&p, 10, &m) == 0) {
        CHECK(d_model_cost(&c, &m, ph, &est, err, sizeof err) == 0, "priced: %s", err);
        CHECK(ph[HVT_PH_PREDICATE] == 30 + 3 * 20 && ph[HVT_PH_BUILTINS] == 30 && ph[HVT_PH_INSNS] == 20 &&
              ph[HVT_PH_AGG] == 400, "the predicate apart: pred %g builtins %g insns %g agg %g",
              ph[HVT_PH_PREDICATE], ph[HVT_PH_BUILTINS], ph[HVT_PH_INSNS], ph[HVT_PH_AGG]);
        /* without quantize's cost: priced as count, and said */
        struct d_cal c2 = c;
        c2.have &= ~(1u << D_CAL_AGG_QUANTIZE);
        /* (a predicate: the interpreter's, which this table does not price: said too) */
        CHECK(d_model_cost(&c2, &m, ph, &est, err, sizeof err) == 0 && ph[HVT_PH_AGG] == 300 &&
              est == (1u << D_CAL_AGG_QUANTIZE | 1u << D_CAL_INTERP),
              "quantize priced as count (agg %g, estimated %x)", ph[HVT_PH_AGG], est);
        c2.have &= ~(1u << D_CAL_AGG_COUNT);
        CHECK(d_model_cost(&c2, &m, ph, &est, err, sizeof err) == 0 && ph[HVT_PH_AGG] == 20,
              "then as a plain instruction (agg %g)", ph[HVT_PH_AGG]);
        c2.have &= ~(1u << D_CAL_OP_INSN);
        CHECK(d_model_cost(&c2, &m, ph, &est, err, sizeof err) == -1 &&
              !strcmp(err, "the calibration table has no op_insn"), "without op_insn: %s", err);
        c2 = c;
        c2.have &= ~(1u << D_CAL_EXIT);
        CHECK(d_model_cost(&c2, &m, ph, &est, err, sizeof err) == -1 &&
              !strcmp(err, "the calibration table has no exit"), "without exit: %s", err);
        dprog_free(&p);
    }
}

/* A workload made of numbers: its own time T0, F firings of C ticks each traced, each of
 * plain ticks while counted. The counting run's rate and the model's slowdown must give the
 * traced time over T0 exactly. */
static void test_rate(void)
{
    const double t0 = 5e6, f = 2000, c = 1000, plain = 350;
    double tc = t0 + f * plain, t1 = t0 + f * c;
    double r = d_predict_rate(f, tc, plain);
    CHECK(fabs(r - f / t0) < 1e-15, "the rate is per tick of the workload alone (%g)", r);
    CHECK(fabs(d_predict_slowdown(r, c) - t1 / t0) < 1e-12, "slowdown %g, the traced time over T0 %g",
          d_predict_slowdown(r, c), t1 / t0);
    CHECK(d_predict_rate(f, f * plain, plain) == -1, "a counting run of firings alone: no rate");
    CHECK(d_predict_rate(f, 100, plain) == -1, "less time than its firings: no rate");
    CHECK(d_predict_rate(0, 100, plain) == 0 && d_predict_slowdown(0, c) == 1, "no firing, no slowdown");
}

/* d_predict_report's output for p (table c or none), in *out; its return code. */
static int report(const dprog *p, const struct d_cal *c, double rate, int models, char **out)
{
    char *ebuf = NULL;
    size_t len = 0, elen = 0;
    *out = NULL;
    FILE *o = open_memstream(out, &len), *e = open_memstream(&ebuf, &elen);
    int rc = d_predict_report(o, e, p->image, p->image_len, c, c ? "t.cal" : NULL, rate, NULL, models);
    fclose(o);
    fclose(e);
    CHECK(rc == 0, "the report: %s", ebuf);
    free(ebuf);
    return rc;
}

static void test_report(void)
{
    struct d_cal c;
    char err[200] = "", *buf;
    d_cal_parse(table, &c, err, sizeof err);
    dprog p;
    /* BEGIN's arg0 makes the image read arguments: the system calls' entries then pay sysargs */
    if (compile("syscall::*:entry { @[probefunc] = count(); } BEGIN { @x = quantize(arg0); }", &p))
        return;
    report(&p, &c, 1e-4, 0, &buf);
    CHECK(strstr(buf, "syscall:kernel:read:entry") && strstr(buf, "syscall:kernel:write:entry") &&
          !strstr(buf, ":BEGIN"), "both probes listed, BEGIN not:\n%s", buf);
    /* exit 200 lookup 150 dfire 100 clause 50 sysargs 500 str 100 tpush 80 count 300 RET 20 */
    CHECK(strstr(buf, "cost_per_firing=1500.0 rate_per_tick=0.0001 predicted_slowdown=1.1500\n") != NULL,
          "the key=value line:\n%s", buf);
    free(buf);
    int rc = report(&p, NULL, -1, 1, &buf);
    CHECK(rc == 0 && strstr(buf, "model probe=syscall:kernel:read:entry exit=1 lookup=1 dfire=1 clause=1 sysargs=1 op_insn=1 "
                                 "op_tpush=1 op_builtin_str=1 agg_count=1 interp=1\n"), "the counts alone:\n%s", buf);
    free(buf);
    dprog_free(&p);
    /* an image that reads no argument: the engine computes none, so no sysargs */
    if (compile("syscall::read:entry { @[probefunc] = count(); }", &p))
        return;
    rc = report(&p, NULL, -1, 1, &buf);
    CHECK(rc == 0 && strstr(buf, "model probe=syscall:kernel:read:entry exit=1 lookup=1 dfire=1 clause=1 op_insn=1 "
                                 "op_tpush=1 op_builtin_str=1 agg_count=1 interp=1\n"), "no argument read, no sysargs:\n%s", buf);
    free(buf);
    dprog_free(&p);
}

/* hvt -e's options: the rate from --rate and --count-run, their errors. */
static void test_main(void)
{
    char path[] = "/tmp/unit_predict.XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        CHECK(0, "a temporary table");
        return;
    }
    fputs(table, f);
    fclose(f);
    dprog p;
    if (compile("fbt::vfs_read:entry { @[execname] = count(); }", &p)) {
        unlink(path);
        return;
    }
    static const struct { const char *run; double rate_s, khz; int rc; const char *said; } cases[] = {
        /* 1000 firings in 1,350,000 ticks, 350 each: 1,000,000 the workload's: 0.001 a tick */
        {"1000:1350000", -1, 0, 0, "cost_per_firing=1000.0 rate_per_tick=0.001 predicted_slowdown=2.0000"},
        /* 5000 a second at the table's 1 GHz: 5e-6 a tick */
        {NULL, 5000, 0, 0, "cost_per_firing=1000.0 rate_per_tick=5e-06 predicted_slowdown=1.0050"},
        /* --tsc-khz over the table's: 2 GHz */
        {NULL, 5000, 2000000, 0, "rate_per_tick=2.5e-06 predicted_slowdown=1.0025"},
        {NULL, -1, 0, 0, "cost_per_firing=1000.0\n"},
        {"1000:350000", -1, 0, 1, "leave no time to the workload at 350 ticks a firing"},
        {"1000", -1, 0, 2, "--count-run FIRES:TICKS[:OWN:NEWTASK:SWITCHED]: 1000"},
        {"1000:", -1, 0, 2, "--count-run FIRES:TICKS[:OWN:NEWTASK:SWITCHED]: 1000:"},
        {"1000:0", -1, 0, 2, "--count-run FIRES:TICKS[:OWN:NEWTASK:SWITCHED]: 1000:0"},
        {"-1:500", -1, 0, 2, "--count-run FIRES:TICKS[:OWN:NEWTASK:SWITCHED]: -1:500"},
        {"1:2x", -1, 0, 2, "--count-run FIRES:TICKS[:OWN:NEWTASK:SWITCHED]: 1:2x"},
        {"nan:5", -1, 0, 2, "--count-run FIRES:TICKS[:OWN:NEWTASK:SWITCHED]: nan:5"},
        /* a timed counting run: its own ticks as timed (350,000), the mix (no key here to change) */
        {"1000:1350000:350000:250:1000", -1, 0, 0, "cost_per_firing=1000.0 rate_per_tick=0.001 predicted_slowdown=2.0000"},
        {"1000:1350000:350000:250:1000", -1, 0, 0, "mix: 0.25 of the firings in a new task, 1 of another probe"},
        {"1000:1350000:350000:250", -1, 0, 2, "--count-run FIRES:TICKS[:OWN:NEWTASK:SWITCHED]: 1000:1350000:350000:250"},
        {"1000:1350000:1350000:0:0", -1, 0, 2, "FIRES:TICKS[:OWN:NEWTASK:SWITCHED]: 1000:1350000:1350000:0:0"},
        {"1000:1350000:350000:1001:0", -1, 0, 2, "FIRES:TICKS[:OWN:NEWTASK:SWITCHED]: 1000:1350000:350000:1001:0"},
        {"1000:1350000:350000:0:0:1", -1, 0, 2, "FIRES:TICKS[:OWN:NEWTASK:SWITCHED]: 1000:1350000:350000:0:0:1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *buf = NULL, *ebuf = NULL;
        size_t len = 0, elen = 0;
        FILE *o = open_memstream(&buf, &len), *e = open_memstream(&ebuf, &elen);
        int rc = d_predict_main(o, e, p.image, p.image_len, path, cases[i].rate_s, cases[i].run, cases[i].khz, 0);
        fclose(o);
        fclose(e);
        CHECK(rc == cases[i].rc && (strstr(buf, cases[i].said) || strstr(ebuf, cases[i].said)),
              "%s / %g a second: status %d (want %d), '%s' said: %s%s", cases[i].run ? cases[i].run : "-",
              cases[i].rate_s, rc, cases[i].rc, cases[i].said, buf, ebuf);
        free(buf);
        free(ebuf);
    }
    /* a table without the TSC's rate: --rate needs --tsc-khz */
    f = fopen(path, "w");
    fputs("exit=1\nlookup=1\ndfire=1\nclause=1\nop_insn=1\n", f);
    fclose(f);
    char *buf = NULL, *ebuf = NULL;
    size_t len = 0, elen = 0;
    FILE *o = open_memstream(&buf, &len), *e = open_memstream(&ebuf, &elen);
    int rc = d_predict_main(o, e, p.image, p.image_len, path, 100, NULL, 0, 0);
    fclose(o);
    fclose(e);
    CHECK(rc == 2 && strstr(ebuf, "give the TSC's rate"), "--rate without a TSC rate: %d %s", rc, ebuf);
    free(buf);
    free(ebuf);
    unlink(path);
    dprog_free(&p);
}

/* The lean path told from the interpreter as the hypervisor tells them (dif_lean.c), and each
 * aggregation update's key by what it is made of. */
static void test_lean_keys(void)
{
    static const struct { const char *src; uint32_t lean; double keys[D_KEY_KINDS]; } cases[] = {
        {"fbt::vfs_read:entry { @[execname] = count(); }", 1, {0, 0, 1, 0, 0}},
        {"fbt::vfs_read:entry { @ = quantize(arg2); }", 1, {1, 0, 0, 0, 0}},
        {"fbt::vfs_read:entry { @[pid, cpu] = sum(arg2); }", 1, {0, 0, 1, 0, 0}},
        {"fbt::vfs_read:entry { @[probefunc] = count(); }", 0, {0, 1, 0, 0, 0}},
        {"fbt::vfs_read:entry { @[execname, probefunc] = count(); @n[arg2] = count(); }", 0, {0, 0, 0, 1, 1}},
        {"fbt::vfs_read:entry /pid == 5/ { @ = count(); }", 0, {1, 0, 0, 0, 0}},
        /* which name is the key depends on arg2: the firing's data */
        {"fbt::vfs_read:entry { @[arg2 > 0 ? probefunc : probename] = count(); }", 0, {0, 0, 0, 0, 1}},
        {"fbt::vfs_read:entry { @[probefunc == probename ? probefunc : probename] = count(); }", 0, {0, 1, 0, 0, 0}},
        {"fbt::vfs_read:entry { @[arg2 > 0 ? pid : 0] = count(); }", 0, {0, 0, 0, 0, 1}},
        {"fbt::vfs_read:entry { @[timestamp] = count(); }", 1, {0, 0, 0, 0, 1}},
        {"fbt::vfs_read:entry { @[execname] = count(); } fbt::vfs_read:entry { @x[probefunc] = count(); }", 1,
         {0, 1, 1, 0, 0}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dprog p;
        struct d_model m;
        if (compile(cases[i].src, &p))
            continue;
        if (model_of(&p, 10, &m) == 0) {
            bool same = true;
            for (unsigned k = 0; k < D_KEY_KINDS; k++)
                same &= m.keys[k] == cases[i].keys[k];
            CHECK(m.lean == cases[i].lean && m.n[D_CAL_INTERP] == m.nclauses - m.lean,
                  "%s: %u lean clause(s) (want %u), %g interpreted", cases[i].src, m.lean, cases[i].lean,
                  m.n[D_CAL_INTERP]);
            CHECK(same, "%s: keys const %g probe %g task %g both %g data %g", cases[i].src, m.keys[0], m.keys[1],
                  m.keys[2], m.keys[3], m.keys[4]);
        }
        dprog_free(&p);
    }
    /* an interpreted clause: interp once, its instructions by class as ever */
    dprog p;
    struct d_model m;
    if (compile("fbt::vfs_read:entry /pid == 5/ { @[probefunc] = count(); }", &p) == 0 && model_of(&p, 10, &m) == 0) {
        CHECK(m.n[D_CAL_INTERP] == 1 && m.pred[D_CAL_INTERP] == 0 && m.n[D_CAL_OP_BUILTIN_STR] == 1 &&
              m.pred[D_CAL_OP_BUILTIN] == 1, "interp %g (pred %g), probefunc %g, pid in the predicate %g",
              m.n[D_CAL_INTERP], m.pred[D_CAL_INTERP], m.n[D_CAL_OP_BUILTIN_STR], m.pred[D_CAL_OP_BUILTIN]);
        /* the mix: keynew from what the key is made of */
        struct d_mix mix = { 1, 0.25, 0.5 };
        d_model_mix(&m, &mix);
        CHECK(m.n[D_CAL_NEWTASK] == 0.25 && m.n[D_CAL_KEYNEW] == 0.5, "a probe's key changes with the probe: "
              "newtask %g keynew %g", m.n[D_CAL_NEWTASK], m.n[D_CAL_KEYNEW]);
        d_model_mix(&m, NULL);
        CHECK(m.n[D_CAL_NEWTASK] == 0 && m.n[D_CAL_KEYNEW] == 0, "no mix, none");
        m.keys[D_KEY_PROBE] = 0;
        m.keys[D_KEY_TASK] = 2;
        m.keys[D_KEY_BOTH] = 1;
        mix = (struct d_mix){ 1, 0.25, 0.875 };
        d_model_mix(&m, &mix);
        CHECK(m.n[D_CAL_KEYNEW] == 2 * 0.25 + 1, "two task keys and one of both (at most every firing): %g",
              m.n[D_CAL_KEYNEW]);
        /* priced: newtask in the lookup, keynew in the aggregation, interp in the walk */
        struct d_cal c;
        char err[200] = "";
        double ph[HVT_PH_COUNT];
        uint32_t est;
        d_cal_parse("exit=200\nlookup=150\ndfire=100\nclause=50\nop_insn=20\nop_builtin=30\nop_builtin_str=100\n"
                    "op_tpush=80\nagg_count=300\nnewtask=1000\nkeynew=400\ninterp=500\n", &c, err, sizeof err);
        mix = (struct d_mix){ 1, 0.25, 0.5 };
        d_model_probe(p.image, p.image_len, 0, &m, err, sizeof err);
        d_model_mix(&m, &mix);
        CHECK(d_model_cost(&c, &m, ph, &est, err, sizeof err) == 0 && !est && ph[HVT_PH_LOOKUP] == 150 + 250 &&
              ph[HVT_PH_AGG] == 300 + 200 && ph[HVT_PH_CLAUSES] == 100 + 50 + 500,
              "priced by phase: lookup %g agg %g clauses %g (estimated %x)", ph[HVT_PH_LOOKUP], ph[HVT_PH_AGG],
              ph[HVT_PH_CLAUSES], est);
    }
    dprog_free(&p);
}

/* The model's lean rule is the hypervisor's: each program's probes loaded as the hypervisor
 * loads them (trace/dvm, host build: dif_lean_classify), its verdict beside the model's. A
 * change to the lean path (dif_lean.c) that the model does not follow fails here. */
static size_t no_read(void *ctx, uint64_t va, void *buf, size_t len, int user)
{
    (void)ctx, (void)va, (void)buf, (void)len, (void)user;
    return 0;
}

static void test_lean_hv(void)
{
    static const char *const srcs[] = {
        "fbt::vfs_read:entry { @[execname] = count(); }",
        "fbt::vfs_read:entry { @ = quantize(arg2); }",
        "fbt::vfs_read:entry { @[pid, tid, cpu] = sum(arg2); @m = max(timestamp); }",
        "fbt::vfs_read:entry { @ = lquantize(arg2, 0, 100, 10, 3); }",
        "fbt::vfs_read:entry { @[probefunc] = count(); }",
        "fbt::vfs_read:entry { @[arg2 + 1] = count(); }",
        "fbt::vfs_read:entry { @[(arg0 + arg1 + arg2 + arg3 + arg4 + arg5 + pid + tid) & 7] = count(); }",
        "fbt::vfs_read:entry /pid == 5/ { @ = count(); }",
        "fbt::vfs_read:entry { @ = count(); trace(pid); }",
        "fbt::vfs_read:entry { x = 1; @ = count(); }",
        "fbt::vfs_read:entry { @[errno, walltimestamp, curthread] = count(); }",
        "fbt::vfs_read:entry { @[execname] = count(); } fbt::vfs_read:entry { @x[probefunc] = count(); }",
        "syscall::read:entry { @[arg2] = count(); }",
        "syscall::*:entry { @[probefunc] = count(); }",
    };
    for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++) {
        dprog p;
        if (compile(srcs[i], &p))
            continue;
        void *img = aligned_alloc(8, (p.image_len + 7) & ~(size_t)7);
        memcpy(img, p.image, p.image_len);
        struct dif_env env = { .read = no_read };
        size_t sz = dif_state_size(img, 1);
        void *mem = aligned_alloc(64, (sz + 63) & ~(size_t)63);
        struct dif_state *st;
        int rc = dif_state_init(&st, mem, sz, img, 1, &env);
        CHECK(rc == DIF_OK, "%s: loaded (%d)", srcs[i], rc);
        if (rc == DIF_OK) {
            const struct hvt_dif_hdr *h = (const struct hvt_dif_hdr *)p.image;
            for (uint32_t pi = 0; pi < h->nprobes; pi++) {
                struct d_model m;
                char err[200] = "";
                if (d_model_probe(p.image, p.image_len, pi, &m, err, sizeof err) || !m.nclauses)
                    continue;
                bool model_lean = m.lean == m.nclauses;
                CHECK(model_lean == !!st->lean[pi], "%s: probe %u: the model says %s, the hypervisor %s", srcs[i],
                      pi, model_lean ? "lean" : "interpreted", st->lean[pi] ? "lean" : "interpreted");
            }
        }
        free(mem);
        free(img);
        dprog_free(&p);
    }
}

int main(void)
{
    test_cal();
    test_model();
    test_lean_keys();
    test_lean_hv();
    test_cost();
    test_rate();
    test_report();
    test_main();
    return check_summary("unit_predict");
}
