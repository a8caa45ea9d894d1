/*
 * unit_d: the D compiler (host-tools/d/compile/d_compile.h) without a guest: the exact instructions
 * of small programs, error messages (file:line:col, the source line, a caret), the image
 * layout include/hvt_dif.h defines, aggregations' buckets, probe resolution, options and
 * macros, the disassembly, never crashing on mangled input, and with the pinned 6.1 cloud
 * kernel's BTF (SKIP when it is not in the cache) typed args[] and member loads at the offsets
 * BTF gives. Built with D_WITH_VERIFIER, every image it compiles must also pass the
 * hypervisor's verifier (trace/dvm/dif_verify.c). Last line: "N passed, N failed".
 */
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "d_compile.h"
#include "desc_fields.h"
#include "kimg.h"
#include "ksym.h"
#include "probe_list.h"
#include "util.h"


/* ---- a fake kernel's probes ---- */
static const struct { uint32_t id; const char *p, *m, *f, *n; } probes[] = {
    {10, "fbt", "kernel", "vfs_read", "entry"}, {11, "fbt", "kernel", "vfs_read", "return"},
    {12, "fbt", "kernel", "vfs_write", "entry"}, {13, "fbt", "kernel", "vfs_write", "return"},
    {14, "fbt", "kernel", "do_sys_open", "entry"}, {15, "fbt", "kernel", "do_sys_open", "return"},
    {100, "syscall", "kernel", "read", "entry"}, {101, "syscall", "kernel", "read", "return"},
    {102, "syscall", "kernel", "write", "entry"}, {103, "syscall", "kernel", "openat", "entry"},
    {201, "profile", "", "", "tick-1s"},
    {300, "io", "vmlinux", "", "start"}, {301, "io", "vmlinux", "", "done"},
    {302, "io", "vmlinux", "", "wait-start"}, {303, "io", "vmlinux", "", "wait-done"}};

static int field(const char *pat, const char *s) { return !pat[0] || util_glob(pat, s); }

static int resolve(void *ctx, const char *desc, d_probe_sink *sink, char *err, size_t errlen)
{
    (*(int *)ctx)++;
    char f[4][DESC_FIELD_MAX];
    if (desc_fields(desc, f, err, errlen))
        return -1;
    if (!strcmp(f[3], "tick-0")) {
        snprintf(err, errlen, "invalid rate");
        return -1;
    }
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        if (field(f[0], probes[i].p) && field(f[1], probes[i].m) && field(f[2], probes[i].f) && field(f[3], probes[i].n))
            d_probe_add(sink, probes[i].id, probes[i].p, probes[i].m, probes[i].f, probes[i].n);
    return 0;
}

static int nresolve;
static d_options opts(void)
{
    d_options o = {0};
    o.resolve = resolve;
    o.resolve_ctx = &nresolve;
    o.begin_id = 1;
    o.end_id = 2;
    o.error_id = 3;
    return o;
}

typedef struct {
    dprog p;
    int rc;
    char *err;
    size_t errlen;
} res;

#ifdef D_WITH_VERIFIER
#include "dif.h"
#include "check.h"
/* Every image compiled here must pass the hypervisor's own verifier (trace/dvm/dif_verify.c). */
static void verify(const char *src, const dprog *p)
{
    void *img = aligned_alloc(8, (p->image_len + 7) & ~(size_t)7);
    memcpy(img, p->image, p->image_len);
    struct dif_verr e = {0};
    int rc = dif_verify(img, p->image_len, &e);
    CHECK(rc == 0, "the verifier refuses %s: clause %d insn %d item %d: %s", src, e.clause, e.insn, e.item,
          e.reason ? e.reason : "?");
    free(img);
}
#else
static void verify(const char *src, const dprog *p) { (void)src, (void)p; }
#endif

static res comp_o(const char *src, d_options o)
{
    res r;
    FILE *f = open_memstream(&r.err, &r.errlen);
    o.err = f;
    r.rc = d_compile("test.d", src, strlen(src), &o, &r.p);
    fclose(f);
    if (r.rc == 0) verify(src, &r.p);
    return r;
}
static res comp(const char *src) { return comp_o(src, opts()); }
static void res_free(res *r)
{
    dprog_free(&r->p);
    free(r->err);
}

/* ---- the image ---- */
static const struct hvt_dif_hdr *hdr(const dprog *p) { return (const struct hvt_dif_hdr *)p->image; }
static const struct hvt_dif_insn *code(const dprog *p, int c, uint32_t *n)
{
    const struct hvt_dif_hdr *h = hdr(p);
    const struct hvt_dif_clause *cl = (const void *)(p->image + h->off_clauses);
    *n = cl[c].count;
    return (const struct hvt_dif_insn *)(p->image + h->off_insns) + cl[c].first;
}
static int32_t stroff(const dprog *p, const char *s)
{
    const struct hvt_dif_hdr *h = hdr(p);
    const char *t = (const char *)p->image + h->off_strtab;
    for (uint32_t o = 0; o < h->strtab_len; o += (uint32_t)strlen(t + o) + 1)
        if (!strcmp(t + o, s)) return (int32_t)o;
    return -1;
}

typedef struct { uint8_t op, rd, ra, rb; int32_t imm; } I;
#define OP(o) HVT_DIF_OP_##o
#define V(v) HVT_DIF_V_##v

static void check_code_o(int line, const char *src, d_options o, int clause, const I *want, int n)
{
    res r = comp_o(src, o);
    if (r.rc) {
        CHECK(0, "line %d: does not compile:\n%s", line, r.err);
        res_free(&r);
        return;
    }
    uint32_t got;
    const struct hvt_dif_insn *c = code(&r.p, clause, &got);
    int ok = got == (uint32_t)n;
    for (int i = 0; ok && i < n; i++)
        ok = c[i].op == want[i].op && c[i].rd == want[i].rd && c[i].ra == want[i].ra && c[i].rb == want[i].rb &&
             c[i].imm == want[i].imm;
    CHECK(ok, "line %d: code of %s differs", line, src);
    if (!ok) {
        dprog_dump(stdout, &r.p);
        for (int i = 0; i < n; i++)
            printf("  want %d: op %u rd %u ra %u rb %u imm %d\n", i, want[i].op, want[i].rd, want[i].ra, want[i].rb, want[i].imm);
    }
    res_free(&r);
}
#define CODE(src, ...)                                                                   \
    do {                                                                                 \
        const I w_[] = {__VA_ARGS__};                                                    \
        check_code_o(__LINE__, src, opts(), 0, w_, (int)(sizeof w_ / sizeof w_[0]));     \
    } while (0)

/* "hvt: test.d:LINE:COL: error: MSG...", then the source line, then a caret under COL */
static void check_err_o(int tl, const char *src, d_options o, int line, int col, const char *msg)
{
    res r = comp_o(src, o);
    char head[128];
    snprintf(head, sizeof head, "hvt: test.d:%d:%d: error: ", line, col);
    char *at = r.err ? strstr(r.err, head) : NULL;
    CHECK(r.rc == -1, "line %d: compiled: %s", tl, src);
    CHECK(at && !strncmp(at + strlen(head), msg, strlen(msg)), "line %d: want \"%s%s\", got:\n%s", tl, head, msg,
          r.err ? r.err : "");
    if (at) {
        /* the source line, then the caret */
        const char *s = src;
        for (int i = 1; i < line && s; i++) s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL;
        size_t sl = s ? strcspn(s, "\n") : 0;
        char want[1024];
        int k = snprintf(want, sizeof want, "\n%.*s\n", (int)sl, s ? s : "");
        for (int i = 0; i < col - 1 && k < 1000; i++) want[k++] = s && s[i] == '\t' ? '\t' : ' ';
        snprintf(want + k, sizeof want - (size_t)k, "^\n");
        CHECK(strstr(at, want) != NULL, "line %d: no caret line for %d:%d in:\n%s", tl, line, col, r.err);
    }
    res_free(&r);
}
#define ERR(src, line, col, msg) check_err_o(__LINE__, src, opts(), line, col, msg)

/* ---- layer 1: lexer and parser ---- */
static void test_syntax(void)
{
    const char *ok[] = {
        "BEGIN { }",
        "BEGIN { trace(1) }",
        "BEGIN {}",
        "BEGIN",
        "BEGIN, END { trace(1); ; ; }",
        "/* c */ BEGIN // line\n{ /* in */ trace(1); // x\n}",
        "#!/usr/sbin/dtrace -s\n#pragma D option quiet\nBEGIN { }",
        "syscall::read:entry, syscall::write:entry /arg0 / 2 == 1/ { trace(arg0 / 2); }",
        "fbt::vfs_*:entry { trace(probefunc); }",
        "fbt::vfs_re[a-z]d:entry { }",
        ":::BEGIN { }",
        "dtrace:::END { }",
        "BEGIN { x = 0x10 + 010 + 10u + 10l + 10ul + 10LL + 'a' + '\\n' + '\\0'; }",
        "BEGIN { s = \"a\\tb\\n\\\"q\\\"\\x41\\101\"; }",
        "BEGIN { x = 1; x += 1; x -= 1; x *= 2; x /= 2; x %= 3; x &= 1; x |= 2; x ^= 3; x <<= 1; x >>= 1; }",
        "BEGIN { x = 1 ? 2 : 3; y = 1 || 0 ^^ 1 && 0; z = (1 | 2) ^ (3 & 4); w = 1 << 2 >> 1; }",
        "BEGIN { x = -1; y = ~x; z = !x; w = +x; x++; x--; ++x; --x; }",
        "BEGIN { x = sizeof (int); y = sizeof (long long); z = sizeof x; }",
        "BEGIN { if (arg0) trace(1); else trace(2); if (arg1) { trace(3); } else if (arg2) { trace(4); } }",
        "int x; self string s; this int t; int a[string, int];\nBEGIN { x = 1; a[\"k\", 2] = x; }",
        "inline int N = 5 * 2;\nBEGIN { trace(N + 1); }",
        "BEGIN { trace((char)1); trace((unsigned short)1); trace((uint64_t)1); trace((void *)0); }",
        "BEGIN { x = 1, y = 2; }",
        "BEGIN { @ = count(); @b[1] = count(); @a[\"x\", 1] = sum(2); }",
        "profile:::tick-1s { exit(0); }",
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        res r = comp(ok[i]);
        CHECK(r.rc == 0, "does not compile: %s\n%s", ok[i], r.err);
        res_free(&r);
    }
    /* options and pragmas reach the dprog and the header */
    res r = comp("#pragma D option quiet\n#pragma D option strsize=512\n#pragma D option bufsize=4m\n"
                 "#pragma D option switchrate=10hz\n#pragma D option aggsortkey\nBEGIN { }");
    CHECK(r.rc == 0 && r.p.quiet && hdr(&r.p)->strsize == 513 && hdr(&r.p)->bufsize == 4u << 20 &&
          r.p.switchrate_ns == 100000000 && r.p.aggsortkey, "pragmas: %s", r.err);
    res_free(&r);
    /* strsize is DTrace's: the characters of a string (the header's counts its NUL too), 2 to
     * 1023; a longer string constant is cut at strsize characters (dtrace-utils' strlen/
     * tst.capped-sizw.d: strlen("123456789") is 5 at strsize=5), not refused */
    r = comp("#pragma D option strsize=5\nBEGIN { trace(strlen(\"123456789\")); trace(\"abc\"); }");
    CHECK(r.rc == 0 && hdr(&r.p)->strsize == 6 && stroff(&r.p, "12345") >= 0 &&
          stroff(&r.p, "123456789") < 0 && stroff(&r.p, "abc") >= 0, "strsize=5: constants cut at 5: %s", r.err);
    res_free(&r);
    r = comp("#pragma D option strsize=1023\nBEGIN { }");
    CHECK(r.rc == 0 && hdr(&r.p)->strsize == HVT_DIF_STRSIZE_MAX, "strsize=1023: the hypervisor's most: %s", r.err);
    res_free(&r);
    /* aggsortkeypos is a key index, not a flag */
    r = comp("#pragma D option aggsortkeypos=2\n#pragma D option aggsortpos=3\nBEGIN { }");
    CHECK(r.rc == 0 && r.p.aggsortkeypos == 2 && r.p.aggsortpos == 3, "aggsortkeypos=2: %d %s",
          r.p.aggsortkeypos, r.err);
    res_free(&r);
    r = comp("#pragma D option aggsortkeypos=-1\nBEGIN { }");
    CHECK(r.rc != 0, "aggsortkeypos=-1 accepted");
    res_free(&r);
    d_options o = opts();
    const char *x[] = {"quiet", "dynvarsize=1k", "aggrate=1ms", "flowindent"};
    o.xopts = x;
    o.nxopts = 4;
    r = comp_o("BEGIN { }", o);
    CHECK(r.rc == 0 && r.p.quiet && r.p.flowindent && hdr(&r.p)->dynvarsize == 1024 && r.p.aggrate_ns == 1000000,
          "-x options: %s", r.err);
    res_free(&r);
    /* macros: $1 an integer, $$2 a string, $3 an identifier, $target */
    const char *args[] = {"42", "bash", "foo"};
    o = opts();
    o.macro_args = args;
    o.nmacro_args = 3;
    o.target_pid = 777;
    r = comp_o("BEGIN { foo = 1; trace($1 + $target); trace($$2); trace($3); }", o);
    CHECK(r.rc == 0 && r.p.nmacro_args == 3 && !strcmp(r.p.macro_args[1], "bash") && stroff(&r.p, "bash") > 0,
          "macros: %s", r.err);
    if (r.rc == 0) {
        uint32_t n;
        const struct hvt_dif_insn *c = code(&r.p, 0, &n);
        CHECK(n > 3 && c[3].op == OP(LDI) && c[3].imm == 42 + 777, "$1 + $target folded to %d", c[3].imm);
    }
    res_free(&r);
    /* a probe description with a macro: syscall::$$1:entry */
    const char *rd[] = {"read"};
    o = opts();
    o.macro_args = rd;
    o.nmacro_args = 1;
    r = comp_o("syscall::$1:entry { }", o);
    CHECK(r.rc == 0 && r.p.nprobes == 1 && r.p.probes[0].id == 100, "macro in a description: %s", r.err);
    res_free(&r);
}

/* ---- layer 2: exact code ---- */
static void test_code(void)
{
    CODE("BEGIN { trace(1 + 2); }", {OP(ACT), 0, 0, 0, 0}, {OP(LDI), 0, 0, 0, 3}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { x = 1; }", {OP(LDI), 0, 0, 0, 1}, {OP(STGV), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("syscall::read:entry /pid == 42/ { self->ts = timestamp; }", {OP(VAR), 0, 0, 0, V(PID)},
         {OP(LDI), 1, 0, 0, 42}, {OP(EQ), 0, 0, 1, 0}, {OP(BZ), 0, 0, 0, 6}, {OP(VAR), 0, 0, 0, V(TIMESTAMP)},
         {OP(STTV), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* a clause starts with an empty tuple: no TCLR before its first TPUSH */
    CODE("BEGIN { @c[execname] = count(); }", {OP(VAR), 0, 0, 0, V(EXECNAME)},
         {OP(TPUSH), 0, 0, 0, 0}, {OP(AGG), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { x = (char)300; trace((unsigned char)-1); }", {OP(LDI), 0, 0, 0, 44}, {OP(STGV), 0, 0, 0, 0},
         {OP(ACT), 0, 0, 0, 0}, {OP(LDI), 0, 0, 0, 255}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* int arithmetic keeps C's 32-bit result */
    CODE("BEGIN { x = 5; y = x + 1; }", {OP(LDI), 0, 0, 0, 5}, {OP(STGV), 0, 0, 0, 0}, {OP(LDGV), 0, 0, 0, 0},
         {OP(ADDI), 0, 0, 0, 1}, {OP(SEXT), 0, 0, 0, 4}, {OP(STGV), 0, 0, 0, 1}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { trace(arg0 * arg1); }", {OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(VAR), 1, 0, 0, (HVT_DIF_V_ARG0 + 1)},
         {OP(MUL), 0, 0, 1, 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* unsigned comparison */
    CODE("BEGIN { trace(timestamp < 5); }", {OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(TIMESTAMP)},
         {OP(LDI), 1, 0, 0, 5}, {OP(LTU), 0, 0, 1, 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* > is < with its operands swapped */
    CODE("BEGIN { trace(arg0 > 1); }", {OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(LDI), 1, 0, 0, 1},
         {OP(LT), 0, 1, 0, 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* && as a value */
    CODE("BEGIN { trace(arg0 && arg1); }", {OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(LNOT), 0, 0, 0, 0},
         {OP(LNOT), 0, 0, 0, 0}, {OP(BZ), 0, 0, 0, 8}, {OP(VAR), 1, 0, 0, (HVT_DIF_V_ARG0 + 1)}, {OP(LNOT), 0, 1, 0, 0},
         {OP(LNOT), 0, 0, 0, 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* a predicate with ||: the first true test jumps into the body */
    CODE("BEGIN /arg0 == 1 || arg1 == 2/ { exit(0); }", {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(LDI), 1, 0, 0, 1},
         {OP(EQ), 0, 0, 1, 0}, {OP(BNZ), 0, 0, 0, 8}, {OP(VAR), 0, 0, 0, (HVT_DIF_V_ARG0 + 1)}, {OP(LDI), 1, 0, 0, 2},
         {OP(EQ), 0, 0, 1, 0}, {OP(BZ), 0, 0, 0, 11}, {OP(ACT), 0, 0, 0, 0}, {OP(LDI), 0, 0, 0, 0},
         {OP(EXIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("syscall::openat:entry { trace(copyinstr(arg1)); }", {OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, (HVT_DIF_V_ARG0 + 1)},
         {OP(STRG), 0, 0, 0, HVT_DIF_LD_USER}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { @l = lquantize(arg0, 0, 100, 10); }", {OP(VAR), 0, 0, 0, V(ARG0)},
         {OP(AGG), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { self->x = 1; self->x++; }", {OP(LDI), 0, 0, 0, 1}, {OP(STTV), 0, 0, 0, 0}, {OP(LDTV), 0, 0, 0, 0},
         {OP(ADDI), 0, 0, 0, 1}, {OP(SEXT), 0, 0, 0, 4}, {OP(STTV), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* pointer arithmetic scales by the pointee, *p loads it with its size and sign */
    CODE("BEGIN { p = (int *)arg0; trace(*(p + 2)); }", {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(STGV), 0, 0, 0, 0},
         {OP(ACT), 0, 0, 0, 0}, {OP(LDGV), 0, 0, 0, 0}, {OP(ADDI), 0, 0, 0, 8},
         {OP(LDG), 0, 0, 0, 4 | HVT_DIF_LD_SIGNED}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { trace(((unsigned short *)arg0)[arg1]); }", {OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0)},
         {OP(VAR), 1, 0, 0, (HVT_DIF_V_ARG0 + 1)}, {OP(LDI), 2, 0, 0, 1}, {OP(SHL), 1, 1, 2, 0}, {OP(ADD), 0, 0, 1, 0},
         {OP(LDG), 0, 0, 0, 2}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* copyin( ) reads user memory in place */
    CODE("syscall::read:entry { trace(*(int *)copyin(arg1, 4)); }", {OP(ACT), 0, 0, 0, 0},
         {OP(VAR), 0, 0, 0, (HVT_DIF_V_ARG0 + 1)}, {OP(LDG), 0, 0, 0, 4 | HVT_DIF_LD_SIGNED | HVT_DIF_LD_USER},
         {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("syscall::read:entry { p = (char *)copyin(arg1, 8); trace(stringof(p)); }", {OP(VAR), 0, 0, 0, (HVT_DIF_V_ARG0 + 1)},
         {OP(STGV), 0, 0, 0, 0}, {OP(ACT), 0, 0, 0, 0}, {OP(LDGV), 0, 0, 0, 0}, {OP(STRG), 0, 0, 0, HVT_DIF_LD_USER},
         {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { stack(); }", {OP(ACT), 0, 0, 0, 0}, {OP(STACK), 0, 0, 0, 8192}, {OP(RET), 0, 0, 0, 0});
    /* ustack(): the frames asked for (option ustackframes by default) go to the hypervisor */
    CODE("BEGIN { ustack(); }", {OP(ACT), 0, 0, 0, 0}, {OP(USTACK), 0, 0, 0, 20}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { ustack(3, 100); }", {OP(ACT), 0, 0, 0, 0}, {OP(USTACK), 0, 0, 0, 3}, {OP(RET), 0, 0, 0, 0});
    /* the quantizations' increment: AGGW, value then weight */
    CODE("BEGIN { @a = quantize(1, 2); }", {OP(LDI), 0, 0, 0, 1}, {OP(LDI), 1, 0, 0, 2},
         {OP(AGGW), 0, 0, 1, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { @a = lquantize(1, 0, 10, 1, 3); }", {OP(LDI), 0, 0, 0, 1}, {OP(LDI), 1, 0, 0, 3},
         {OP(AGGW), 0, 0, 1, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { @a = llquantize(1, 10, 0, 2, 10, -4); }", {OP(LDI), 0, 0, 0, 1}, {OP(LDI), 1, 0, 0, -4},
         {OP(AGGW), 0, 0, 1, 0}, {OP(RET), 0, 0, 0, 0});
    /* clear() is the host's (its sum of the snapshots): only the action is recorded */
    CODE("BEGIN { @a = count(); clear(@a); }", {OP(AGG), 0, 0, 0, 0},
         {OP(ACT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { a[1, \"k\"] = 5; trace(a[1, \"k\"]); }", {OP(LDI), 0, 0, 0, 5}, {OP(LDI), 1, 0, 0, 1},
         {OP(SCONST), 2, 0, 0, 14}, {OP(TPUSH), 0, 1, 0, 0}, {OP(TPUSH), 0, 2, 0, 0},
         {OP(STAV), 0, 0, 0, 0}, {OP(ACT), 0, 0, 0, 0}, {OP(LDI), 0, 0, 0, 1}, {OP(SCONST), 1, 0, 0, 14},
         {OP(TCLR), 0, 0, 0, 0}, {OP(TPUSH), 0, 0, 0, 0}, {OP(TPUSH), 0, 1, 0, 0}, {OP(LDAV), 0, 0, 0, 0},
         {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* a big constant goes to the pool */
    CODE("BEGIN { trace(0x123456789); }", {OP(ACT), 0, 0, 0, 0}, {OP(LDC), 0, 0, 0, 0}, {OP(EMIT), 0, 0, 0, 0},
         {OP(RET), 0, 0, 0, 0});
    /* if / else */
    CODE("BEGIN { if (arg0) x = 1; else x = 2; }", {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(BZ), 0, 0, 0, 5},
         {OP(LDI), 0, 0, 0, 1}, {OP(STGV), 0, 0, 0, 0}, {OP(JMP), 0, 0, 0, 7}, {OP(LDI), 0, 0, 0, 2},
         {OP(STGV), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* the default action of an empty clause */
    CODE("BEGIN { }", {OP(ACT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* a string ternary joins in one register */
    {
        res r = comp("BEGIN { a = arg0 > 1 ? \"big\" : \"small\"; }");
        int32_t big = stroff(&r.p, "big"), small = stroff(&r.p, "small");
        res_free(&r);
        I w[] = {{OP(VAR), 0, 0, 0, V(ARG0)}, {OP(LDI), 1, 0, 0, 1}, {OP(LT), 0, 1, 0, 0}, {OP(BZ), 0, 0, 0, 6},
                 {OP(SCONST), 0, 0, 0, big}, {OP(JMP), 0, 0, 0, 7}, {OP(SCONST), 0, 0, 0, small},
                 {OP(STGV), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "BEGIN { a = arg0 > 1 ? \"big\" : \"small\"; }", opts(), 0, w, 9);
        r = comp("BEGIN { trace(execname == \"bash\"); trace(probefunc < \"m\"); }");
        int32_t bash = stroff(&r.p, "bash"), m = stroff(&r.p, "m");
        res_free(&r);
        I w2[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(EXECNAME)}, {OP(SCONST), 1, 0, 0, bash},
                  {OP(SCMP), 0, 0, 1, 0}, {OP(LNOT), 0, 0, 0, 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(ACT), 0, 0, 0, 1},
                  {OP(VAR), 0, 0, 0, V(PROBEFUNC)}, {OP(SCONST), 1, 0, 0, m}, {OP(SCMP), 0, 0, 1, 0},
                  {OP(LDI), 1, 0, 0, 0}, {OP(LT), 0, 0, 1, 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "BEGIN { trace(execname == \"bash\"); trace(probefunc < \"m\"); }", opts(), 0, w2, 14);
    }
    /* strjoin, strlen, basename, stringof */
    CODE("BEGIN { trace(strlen(strjoin(execname, probename))); }", {OP(ACT), 0, 0, 0, 0},
         {OP(VAR), 0, 0, 0, V(EXECNAME)}, {OP(VAR), 1, 0, 0, V(PROBENAME)}, {OP(STRJOIN), 0, 0, 1, 0},
         {OP(STRLEN), 0, 0, 0, 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { trace(basename(stringof(arg0))); }", {OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0)},
         {OP(STRG), 0, 0, 0, 0}, {OP(BASENAME), 0, 0, 0, 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* this-> and a conversion on assignment */
    CODE("BEGIN { this->c = (char)arg0; }", {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(SEXT), 0, 0, 0, 1},
         {OP(STLV), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { trace(-(unsigned int)arg0); }", {OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0)},
         {OP(ZEXT), 0, 0, 0, 4}, {OP(NEG), 0, 0, 0, 0}, {OP(ZEXT), 0, 0, 0, 4}, {OP(EMIT), 0, 0, 0, 0},
         {OP(RET), 0, 0, 0, 0});
    /* actions' value types */
    res r = comp("BEGIN { printf(\"%d %s %a %p %*d\\n\", (short)1, execname, arg0, arg1, 5, 6); trace((uint8_t)1); "
                 "exit(1); setopt(\"quiet\", \"1\"); trunc(@a, 3); } BEGIN { @a = count(); }");
    CHECK(r.rc != 0, "trunc of an aggregation defined later is refused");
    res_free(&r);
    r = comp("BEGIN { @a = count(); } END { printf(\"%d %s %a %p %*d\\n\", (short)1, execname, arg0, arg1, 5, 6); "
             "trace((uint8_t)1); exit(1); setopt(\"quiet\", \"1\"); trunc(@a, 3); normalize(@a, 2); denormalize(@a); "
             "printa(@a); printa(\"%@u\\n\", @a); stack(5); ustack(); }");
    CHECK(r.rc == 0, "actions: %s", r.err);
    if (r.rc == 0) {
        const d_clause *c = &r.p.clauses[1];
        CHECK(c->nacts == 11, "11 actions, %d", c->nacts);
        const d_action *a = c->acts;
        CHECK(a[0].kind == D_ACT_PRINTF && a[0].nargs == 6 && a[0].args[0].type == D_V_INT && a[0].args[0].size == 2 &&
              a[0].args[1].type == D_V_STR && a[0].args[2].type == D_V_KSYM && a[0].args[3].type == D_V_INT &&
              a[0].args[4].type == D_V_INT && a[0].args[4].size == 4 && !strcmp(a[0].fmt, "%d %s %a %p %*d\n"),
              "printf values");
        CHECK(a[1].kind == D_ACT_TRACE && a[1].nargs == 1 && a[1].args[0].type == D_V_UINT && a[1].args[0].size == 1, "trace");
        CHECK(a[2].kind == D_ACT_EXIT && a[2].nargs == 1, "exit");
        CHECK(a[3].kind == D_ACT_SETOPT && !strcmp(a[3].fmt, "quiet") && a[3].nargs == 1 && a[3].args[0].type == D_V_STR,
              "setopt");
        CHECK(a[4].kind == D_ACT_TRUNC && a[4].agg == 0 && a[4].nargs == 1, "trunc");
        CHECK(a[5].kind == D_ACT_NORMALIZE && a[5].agg == 0 && a[5].nargs == 1, "normalize");
        CHECK(a[6].kind == D_ACT_DENORMALIZE && a[6].agg == 0 && a[6].nargs == 0, "denormalize");
        CHECK(a[7].kind == D_ACT_PRINTA && a[7].agg == 0 && !a[7].fmt, "printa");
        CHECK(a[8].kind == D_ACT_PRINTA && !strcmp(a[8].fmt, "%@u\n"), "printa fmt");
        CHECK(a[9].kind == D_ACT_STACK && a[9].frames == 5, "stack(5)");
        CHECK(a[10].kind == D_ACT_USTACK && a[10].frames == 20, "ustack()");
        CHECK(c->nstmts == 11 && c->stmt_pc && c->stmt_pc[0] == 0 && c->pred_end == 0, "statement pcs");
        /* every action's code starts with its ACT, in order */
        uint32_t n;
        const struct hvt_dif_insn *ins = code(&r.p, 1, &n);
        int k = 0;
        for (uint32_t i = 0; i < n; i++)
            if (ins[i].op == OP(ACT)) CHECK(ins[i].imm == k++, "ACT %d out of order", ins[i].imm);
        CHECK(k == 11, "11 ACTs, %d", k);
    }
    res_free(&r);
    /* stop(), step(), unstep() drive the instruction tracer: not destructive, no -w */
    r = comp("BEGIN { stop(); step(); unstep(); }");
    CHECK(r.rc == 0 && !(hdr(&r.p)->flags & HVT_DIF_HF_DESTRUCTIVE) && r.p.clauses[0].acts[0].kind == D_ACT_STOP &&
          r.p.clauses[0].acts[1].kind == D_ACT_STEP && r.p.clauses[0].acts[2].kind == D_ACT_UNSTEP, "stop: %s", r.err);
    {
        int tr[3], n = 0;
        uint32_t ni;
        const struct hvt_dif_insn *ti = code(&r.p, 0, &ni);
        for (uint32_t i = 0; i < ni && n < 3; i++)
            if (ti[i].op == OP(TRACER)) tr[n++] = ti[i].imm;
        CHECK(n == 3 && tr[0] == HVT_DIF_TRACER_STOP && tr[1] == HVT_DIF_TRACER_STEP && tr[2] == HVT_DIF_TRACER_UNSTEP,
              "TRACER imms %d", n);
    }
    res_free(&r);
    /* the predicate's end */
    r = comp("BEGIN /arg0/ { trace(1); trace(2); }");
    CHECK(r.rc == 0 && r.p.clauses[0].pred_end == 2 && r.p.clauses[0].nstmts == 2 && r.p.clauses[0].stmt_pc[1] == 5,
          "pred_end %u", r.rc ? 0 : r.p.clauses[0].pred_end);
    res_free(&r);
}

/* ---- aggregations ---- */
/* built-ins lowered by the compiler, thread-local associative arrays, pointers in variables */
static void test_vars(void)
{
    /* arg6.. and caller at fbt entry: stack slots; at other probes arg6.. are 0 */
    {
        I w[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(REGS_SP)}, {OP(ADDI), 0, 0, 0, 8}, {OP(LDG), 0, 0, 0, 8},
                 {OP(EMIT), 0, 0, 0, 0}, {OP(ACT), 0, 0, 0, 1}, {OP(VAR), 0, 0, 0, V(REGS_SP)}, {OP(ADDI), 0, 0, 0, 32},
                 {OP(LDG), 0, 0, 0, 8}, {OP(EMIT), 0, 0, 0, 0}, {OP(ACT), 0, 0, 0, 2},
                 {OP(VAR), 0, 0, 0, V(REGS_SP)}, {OP(LDG), 0, 0, 0, 8}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "fbt::vfs_*:entry { trace(arg6); trace(arg9); trace(caller); }", opts(), 0, w,
                     (int)(sizeof w / sizeof w[0]));
    }
    CODE("syscall::read:entry, fbt::vfs_read:return { trace(arg7); }", {OP(ACT), 0, 0, 0, 0}, {OP(LDI), 0, 0, 0, 0},
         {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("syscall::read:return { trace(caller); }", {OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(REGS_SP)},
         {OP(LDG), 0, 0, 0, 8}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* self->a[k]: the array "self->a" keyed by (tid, k) */
    {
        res r = comp("syscall::read:entry { self->a[arg0, \"x\"] = 3; trace(self->a[arg0, \"x\"]); }");
        uint32_t n = 0;
        const struct hvt_dif_insn *c = r.rc ? NULL : code(&r.p, 0, &n);
        const struct hvt_dif_hdr *h = r.rc ? NULL : hdr(&r.p);
        const struct hvt_dif_var *v = h ? (const void *)(r.p.image + h->off_vars) : NULL;
        CHECK(c && h->nvars == 1 && v[0].kind == HVT_DIF_VK_ASSOC && v[0].nkeys == 3 && v[0].key_types[0] == HVT_DIF_T_INT &&
              v[0].key_types[2] == HVT_DIF_T_STR && (int32_t)v[0].name == stroff(&r.p, "self->a"),
              "self->a[k, s] is \"self->a\"[tid, k, s]: %s", r.err);
        int tids = 0, stav = 0, ldav = 0;
        for (uint32_t i = 0; c && i < n; i++) {
            tids += c[i].op == OP(VAR) && c[i].imm == V(TID);
            stav += c[i].op == OP(STAV);
            ldav += c[i].op == OP(LDAV);
        }
        CHECK(tids == 2 && stav == 1 && ldav == 1, "self->a: tid pushed for the store and the load (%d %d %d)", tids, stav, ldav);
        res_free(&r);
    }
    {
        /* declared: self int a[string] is "self->a"[tid, string] too */
        res r = comp("self int a[string];\nsyscall::read:entry { trace(self->a[\"x\"]); self->a[execname]++; }");
        const struct hvt_dif_hdr *h = r.rc ? NULL : hdr(&r.p);
        const struct hvt_dif_var *v = h ? (const void *)(r.p.image + h->off_vars) : NULL;
        CHECK(h && h->nvars == 1 && v[0].kind == HVT_DIF_VK_ASSOC && v[0].nkeys == 2 && v[0].key_types[0] == HVT_DIF_T_INT &&
              v[0].key_types[1] == HVT_DIF_T_STR && (int32_t)v[0].name == stroff(&r.p, "self->a"),
              "self int a[string] is \"self->a\"[tid, string]: %s", r.err);
        res_free(&r);
    }
    ERR("self int a[int, int, int, int, int, int, int, int];\nBEGIN { }", 1, 10, "self->a[ ]: at most 7 keys");
    ERR("self int a[string];\nBEGIN { trace(self->a[1]); }", 2, 23, "self->a[ ] key #1 is incompatible with prototype");
    /* scalar arrays: int a[5] global and this-> (LDSA/STSA, the index in a register), self int
     * a[5] the associative array "self->a"[tid, index] with its index checked (CHKIDX 5) */
    CODE("int a[5];\nBEGIN { a[arg0] = 7; trace(a[2]); }", {OP(LDI), 0, 0, 0, 7}, {OP(VAR), 1, 0, 0, V(ARG0)},
         {OP(STSA), 0, 1, 0, 0}, {OP(ACT), 0, 0, 0, 0}, {OP(LDI), 0, 0, 0, 2}, {OP(LDSA), 0, 0, 0, 0},
         {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("this int a[3];\nBEGIN { this->a[1]++; }", {OP(LDI), 0, 0, 0, 1}, {OP(LDSA), 1, 0, 0, 0},
         {OP(ADDI), 1, 1, 0, 1}, {OP(SEXT), 1, 1, 0, 4}, {OP(STSA), 0, 0, 1, 0}, {OP(RET), 0, 0, 0, 0});
    {
        res r = comp("int a[5]; this string s[4]; self int t[6];\nBEGIN { self->t[arg1] = 1; trace(self->t[5]); }");
        uint32_t n = 0;
        const struct hvt_dif_insn *c = r.rc ? NULL : code(&r.p, 0, &n);
        const struct hvt_dif_hdr *h = r.rc ? NULL : hdr(&r.p);
        const struct hvt_dif_var *v = h ? (const void *)(r.p.image + h->off_vars) : NULL;
        CHECK(c && h->nvars == 3 && v[0].kind == HVT_DIF_VK_GLOBAL && v[0].nelem == 5 && v[1].kind == HVT_DIF_VK_LOCAL &&
              v[1].type == HVT_DIF_T_STR && v[1].nelem == 4 && v[2].kind == HVT_DIF_VK_ASSOC && v[2].nkeys == 2 &&
              (int32_t)v[2].name == stroff(&r.p, "self->t"), "arrays: the variables' kinds and counts: %s", r.err);
        int chk = 0;
        for (uint32_t i = 0; c && i < n; i++) chk += c[i].op == OP(CHKIDX) && c[i].imm == 6;
        CHECK(chk == 2, "self int t[6]: both indexes checked against 6 (%d)", chk);
        res_free(&r);
    }
    /* `self x;` and `this x;` with no type declare an int (dtrace-utils' scalars/tst.self.d,
     * lvar/tst.default_int.d) */
    {
        res r = comp("self x;\nthis y, z;\nBEGIN { self->x = 1; this->y = 2; trace(self->x + this->y); }");
        const struct hvt_dif_hdr *h = r.rc ? NULL : hdr(&r.p);
        const struct hvt_dif_var *v = h ? (const void *)(r.p.image + h->off_vars) : NULL;
        CHECK(h && h->nvars == 3 && v[0].kind == HVT_DIF_VK_THREAD && v[0].type == HVT_DIF_T_INT &&
              v[1].kind == HVT_DIF_VK_LOCAL && v[2].kind == HVT_DIF_VK_LOCAL, "self x; this y, z;: ints: %s", r.err);
        res_free(&r);
    }
    /* DTrace's errors (arrays/err.D_ARR_BOUNDS.*, err.D_DECL_ARR*, err.D_ARR_BADREF.bad.d) */
    ERR("int a[5];\nBEGIN { trace(a[5]); }", 2, 16, "index outside array bounds: 5, max is 5");
    ERR("int a[5];\nBEGIN { a[5] = 0; }", 2, 10, "index outside array bounds: 5, max is 5");
    ERR("int a[5];\nBEGIN { a[-1] = 0; }", 2, 10, "index outside array bounds: 18446744073709551615, max is 5");
    ERR("this int a[2];\nBEGIN { this->a[2]++; }", 2, 16, "index outside array bounds: 2, max is 2");
    ERR("self int a[2];\nBEGIN { self->a[7] = 1; }", 2, 16, "index outside array bounds: 7, max is 2");
    ERR("int a[];\nBEGIN { }", 1, 7, "array declaration requires array dimension or tuple signature: a");
    ERR("int a[-7];\nBEGIN { }", 1, 7, "positive integral constant expression or tuple signature expected as array declaration subscript");
    ERR("int a[arg0];\nBEGIN { }", 1, 7, "positive integral constant expression or tuple signature expected as array declaration subscript");
    ERR("int x[88294967295];\nBEGIN { }", 1, 7, "array dimension too big");
    ERR("int x[2000000];\nBEGIN { }", 1, 7, "array dimension too big for hvtrace: at most 1048576 elements");
    ERR("int x[5];\nBEGIN { x[1, 2] = 1; }", 2, 10, "cannot access scalar x as an associative array");
    ERR("int a[5];\nBEGIN { trace(((int *)a)[1]); }", 2, 23, "a is a scalar array: use its elements (a[i]); the address of a D variable is not supported by hvtrace (its pointers are guest addresses)");
    ERR("this int a[5];\nBEGIN { this->a = 1; }", 2, 9, "this->a is a scalar array: use its elements (this->a[i]); the address of a D variable is not supported by hvtrace (its pointers are guest addresses)");
    ERR("int a[5];\nint a[6];\nBEGIN { }", 2, 5, "identifier redeclared: a");
    /* this->p[i], self->p[i]: *(p + i) */
    CODE("BEGIN { this->p = (short *)arg0; trace(this->p[3]); }", {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(STLV), 0, 0, 0, 0},
         {OP(ACT), 0, 0, 0, 0}, {OP(LDLV), 0, 0, 0, 0}, {OP(ADDI), 0, 0, 0, 6}, {OP(LDG), 0, 0, 0, 2 | HVT_DIF_LD_SIGNED},
         {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { self->p = (long *)arg0; trace(self->p[2]); }", {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(STTV), 0, 0, 0, 0},
         {OP(ACT), 0, 0, 0, 0}, {OP(LDTV), 0, 0, 0, 0}, {OP(ADDI), 0, 0, 0, 16}, {OP(LDG), 0, 0, 0, 8},
         {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
}

static void test_aggs(void)
{
    res r = comp("BEGIN { @c = count(); @s[1] = sum(arg0); @mi[\"a\", 2] = min(1); @ma = max(1); @av = avg(1); "
                 "@sd = stddev(1); @q = quantize(1); @l = lquantize(1, 0, 100, 10); @l2 = lquantize(1, -10, 10); "
                 "@ll = llquantize(1, 10, 0, 6, 20); @ll2 = llquantize(1, 2, 0, 4, 2); }");
    CHECK(r.rc == 0, "aggregations: %s", r.err);
    if (r.rc == 0) {
        const struct hvt_dif_agg *a = (const void *)(r.p.image + hdr(&r.p)->off_aggs);
        static const uint32_t nb[] = {1, 1, 1, 1, 2, 4, HVT_DIF_QUANT_BUCKETS, 12, 22, 255, 13};
        static const uint8_t fn[] = {HVT_DIF_AGG_COUNT, HVT_DIF_AGG_SUM, HVT_DIF_AGG_MIN, HVT_DIF_AGG_MAX, HVT_DIF_AGG_AVG,
                                     HVT_DIF_AGG_STDDEV, HVT_DIF_AGG_QUANTIZE, HVT_DIF_AGG_LQUANTIZE, HVT_DIF_AGG_LQUANTIZE,
                                     HVT_DIF_AGG_LLQUANTIZE, HVT_DIF_AGG_LLQUANTIZE};
        CHECK(hdr(&r.p)->naggs == 11 && r.p.naggs == 11, "11 aggregations");
        for (int i = 0; i < 11; i++) {
            CHECK(a[i].nbuckets == nb[i] && r.p.aggs[i].nbuckets == nb[i], "agg %d: %u buckets, want %u", i, a[i].nbuckets, nb[i]);
            CHECK(a[i].fn == fn[i] && r.p.aggs[i].fn == fn[i], "agg %d fn", i);
        }
        CHECK(a[7].p[0] == 0 && a[7].p[1] == 100 && a[7].p[2] == 10 && a[8].p[2] == 1, "lquantize params");
        CHECK(a[9].p[0] == 10 && a[9].p[1] == 0 && a[9].p[2] == 6 && a[9].p[3] == 20, "llquantize params");
        CHECK(a[2].nkeys == 2 && a[2].key_types[0] == HVT_DIF_T_STR && a[2].key_types[1] == HVT_DIF_T_INT &&
              r.p.aggs[2].keys[0].type == D_V_STR && r.p.aggs[2].keys[1].type == D_V_INT, "keys");
        CHECK(!strcmp(r.p.aggs[0].name, "c") && stroff(&r.p, "mi") == (int32_t)a[2].name, "names");
    }
    res_free(&r);
    /* dtrace-utils' layout: 2 * (high - low + 1) * (steps - steps/factor) + 3 buckets, up to
     * factor^(high+1) = 2^63 (it fits 64 bits unsigned); 2^64 is its overflow error */
    r = comp("BEGIN { @a = llquantize(arg0, 2, 0, 62, 2); }");
    CHECK(r.rc == 0 && r.p.aggs[0].nbuckets == 129, "llquantize at 64 bits: %s", r.err);
    res_free(&r);
    r = comp("BEGIN { @a = llquantize(arg0, 10, 2, 2, 5); }");
    CHECK(r.rc == 0 && r.p.aggs[0].nbuckets == 13, "llquantize low = high, steps < factor: %s", r.err);
    res_free(&r);
    r = comp("BEGIN { @a = llquantize(arg0, 2, 0, 63, 2); }");
    CHECK(r.rc == -1 && strstr(r.err, "llquantize( ) argument #3 (high magnitude) will cause overflow of 64 bits"),
          "llquantize overflow: %s", r.err);
    res_free(&r);
    r = comp("BEGIN { @ = count(); }");
    CHECK(r.rc == 0 && r.p.naggs == 1 && !strcmp(r.p.aggs[0].name, "") && r.p.aggs[0].nkeys == 0, "anonymous @");
    res_free(&r);
}

/* ---- errors ---- */
static void test_errors(void)
{
    ERR("BEGIN { trace(foo); }", 1, 15, "failed to resolve foo: Unknown variable name");
    ERR("BEGIN { x = 1; x = \"a\"; }", 1, 18, "operands have incompatible types: \"int\" = \"string\"");
    ERR("BEGIN {\n\tprintf(\"%d\\n\", \"str\");\n}", 2, 17,
        "printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %d\n\t prototype: char, short, "
        "int, long, or long long\n\t  argument: string");
    ERR("BEGIN { printf(\"%d %d\\n\", 1); }", 1, 16,
        "printf( ) prototype mismatch: conversion #2 (%d) is missing a corresponding value argument");
    ERR("BEGIN { printf(\"%d\\n\", 1, 2); }", 1, 27, "printf( ) prototype mismatch: only 1 arguments required by this format string");
    ERR("BEGIN { printf(\"%s\\n\", arg0); }", 1, 24, "printf( ) argument #2 is incompatible with conversion #1 prototype:\n"
        "\tconversion: %s\n\t prototype: char [] or string (or use stringof)\n\t  argument: int64_t");
    ERR("BEGIN { printf(\"%f\\n\", 1); }", 1, 16, "format conversion #1 (%f) is not supported: hvtrace has no floating-point values");
    ERR("BEGIN { printf(\"%z\\n\", 1); }", 1, 16, "format conversion #1 is undefined: %z");
    ERR("BEGIN { printf(\"%..d\\n\", 1); }", 1, 16, "format conversion #1 has more than one '.' specified");
    ERR("BEGIN { printf(\"%ld\\n\", 1); }", 1, 25, "printf( ) argument #2 is incompatible with conversion #1 prototype:\n"
        "\tconversion: %ld\n\t prototype: long");
    ERR("BEGIN { printf(\"%@d\\n\", 1); }", 1, 16, "%@ conversion requires an aggregation and is not for use with printf( )");
    ERR("BEGIN { printf(\"\"); }", 1, 16, "printf( ) format string is empty");
    ERR("BEGIN { printf(execname); }", 1, 16, "printf( ) argument #1 is incompatible with prototype:\n\tprototype: string "
        "constant\n\t argument: string");
    ERR("BEGIN { @a = count(1); }", 1, 14, "count( ) prototype mismatch: 1 arg passed, 0 expected");
    ERR("BEGIN { @a = sum(); }", 1, 14, "sum( ) prototype mismatch: 0 args passed, 1 expected");
    ERR("BEGIN { @a = lquantize(1); }", 1, 14, "lquantize( ) prototype mismatch: 1 arg passed, at least 3 expected");
    ERR("BEGIN { @a = lquantize(1, 0, 10, 0); }", 1, 34, "lquantize( ) argument #3 must be a non-zero positive integer constant");
    ERR("BEGIN { @a = lquantize(1, 10, 0, 1); }", 1, 14, "lquantize( ) base (argument #1) must be less than limit (argument #2)");
    ERR("BEGIN { @a = lquantize(1, arg0, 10); }", 1, 27, "lquantize( ) argument #1 must be an integer constant");
    ERR("BEGIN { @a = lquantize(1, 0, 100000, 1); }", 1, 14, "lquantize( ) step (argument #3) too small: number of quantization levels must be a 16-bit quantity");
    ERR("BEGIN { @a = lquantize(1, 0, 10000, 1); }", 1, 14, "lquantize( ) has 10002 buckets: hvtrace keeps at most 1024");
    /* dtrace-utils' llquantize errors (aggs/err.D_LLQUANT_*.d) */
    ERR("BEGIN { @a = llquantize(1, 1, 0, 6, 20); }", 1, 28, "llquantize( ) argument #1 must be an unsigned 16-bit quantity greater than or equal to 2");
    ERR("BEGIN { @a = llquantize(1, 10, 3, 2, 20); }", 1, 35, "llquantize( ) argument #3 (high magnitude) must be at least argument #2 (low magnitude)");
    ERR("BEGIN { @a = llquantize(1, 10, 0, 6, 0); }", 1, 38, "llquantize( ) argument #4 must be a non-zero positive integer constant");
    ERR("BEGIN { @a = llquantize(1, 10, 0, 6, 7); }", 1, 28, "llquantize() argument #4 (steps) must evenly divide argument #1 (factor) when steps<factor");
    ERR("BEGIN { @a = llquantize(1, 10, 0, 6, 15); }", 1, 28, "llquantize() argument #4 (steps) must be a multiple of argument #1 (factor) when steps>factor");
    ERR("BEGIN { @a = llquantize(1, 10, 0, 6, 30); }", 1, 28, "llquantize() argument #4 (steps) must evenly divide the square of argument #1 (factor) when steps>factor and lmag==0");
    ERR("BEGIN { @a = llquantize(1, 10, 1, 6, 300); }", 1, 28, "llquantize() argument #4 (steps) must evenly divide pow(argument #1 (factor), lmag (argument #2) + 1) when steps>factor and lmag>0");
    ERR("BEGIN { @a = llquantize(1, 10, 0, 6, 70000); }", 1, 38, "llquantize( ) argument #4 must be an unsigned 16-bit quantity");
    ERR("BEGIN { @a = quantize(1, \"x\"); }", 1, 26, "quantize( ) argument #2 is incompatible with prototype");
    ERR("BEGIN { @a = lquantize(1, 0, 10, 1, \"x\"); }", 1, 37, "lquantize( ) argument #5 is incompatible with prototype");
    ERR("BEGIN { @a = count(); @a = sum(1); }", 1, 26, "aggregation redefined: @a\n\t current: @a = sum( )\n\tprevious: @a = count( ) : line 1");
    ERR("BEGIN { @a[1] = count(); @a[\"x\"] = count(); }", 1, 29, "@a[ ] key #1 is incompatible with prototype:\n\tprototype: int\n\t      key: string");
    ERR("BEGIN { @a[1] = count(); @a[1, 2] = count(); }", 1, 29, "@a[ ] prototype mismatch: 2 keys passed, 1 expected");
    ERR("BEGIN { a[1] = 1; a[\"x\"] = 2; }", 1, 21, "a[ ] key #1 is incompatible with prototype:\n\tprototype: int\n\t      key: string");
    ERR("BEGIN { @a = 1; }", 1, 12, "@a must be assigned the result of an aggregating function");
    ERR("BEGIN { @a = lquantize(1, 0, 10); @a = lquantize(1, 0, 20); }", 1, 40, "lquantize( ) limit (argument #2) doesn't match previous declaration: expected 10, found 20");
    ERR("END { printa(@nope); }", 1, 14, "undefined aggregation: @nope");
    /* printa() of several aggregations: a format, alike keys, one %@ per aggregation at most */
    ERR("BEGIN { @a[1] = count(); @b[1] = sum(2); } END { printa(@a, @b); }", 1, 61,
        "printa( ) of more than one aggregation needs a format string in hvtrace");
    ERR("BEGIN { @a[1] = count(); @b[\"x\"] = sum(2); } END { printa(\"%d %@d %@d\", @a, @b); }", 1, 77,
        "printa( ) argument #3 is incompatible with argument #2: key signature of @b differs from @a");
    ERR("BEGIN { @a[1] = count(); @b[1] = sum(2); } END { printa(\"%d %@d %@d %@d\", @a, @b); }", 1, 57,
        "printa( ) conversion #4 (%@d): 2 aggregations, this is %@ #3");
    ERR("BEGIN { @a[1] = count(); @b[1] = sum(2); } END { printa(\"%d %@s\", @a, @b); }", 1, 57,
        "printa( ) aggregating action is incompatible with conversion #2");
    {
        res r = comp("BEGIN { @a[1] = count(); @b[1] = sum(2); @c[3] = max(1); } END { printa(\"%d %@d %@d\", @a, @b, @c); }");
        const d_action *pa = r.rc == 0 ? &r.p.clauses[1].acts[0] : NULL;
        CHECK(pa && pa->kind == D_ACT_PRINTA && pa->agg == 0 && pa->nxaggs == 2 && pa->xaggs[0] == 1 &&
              pa->xaggs[1] == 2, "printa of three: %s", r.err);
        res_free(&r);
    }
    ERR("BEGIN { clear(1); }", 1, 15, "clear( ) argument #1 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int");
    ERR("BEGIN { x = @a; }", 1, 13, "aggregation @a may only be used as @a[keys] = func(...)");
    ERR("BEGIN { trace(*arg0); }", 1, 15, "cannot dereference non-pointer type");
    ERR("BEGIN { trace(execname + 1); }", 1, 24, "operator + requires operands of arithmetic type");
    ERR("BEGIN { trace(1 / 0); }", 1, 17, "expression contains division by zero");
    ERR("BEGIN { pid = 1; }", 1, 9, "operator = can only be applied to a writable variable");
    ERR("BEGIN { foo(1); }", 1, 9, "undefined function name: foo");
    ERR("BEGIN { x = trace(1); }", 1, 13, "trace( ) is an action: it may only be used as a statement");
    ERR("BEGIN { x = count(); }", 1, 13, "count( ) is an aggregating function");
    ERR("BEGIN { x = strlen(arg0); }", 1, 20, "strlen( ) argument #1 is incompatible with prototype:\n\tprototype: string\n\t argument: int64_t");
    ERR("BEGIN { x = strjoin(\"a\"); }", 1, 13, "strjoin( ) prototype mismatch: 1 arg passed, 2 expected");
    ERR("BEGIN { exit(\"a\"); }", 1, 14, "exit( ) argument #1 is incompatible with prototype:\n\tprototype: integer\n\t argument: string");
    ERR("BEGIN { trace(arg0 ? \"a\" : 1); }", 1, 20, "operator ?: operands must have compatible types");
    ERR("BEGIN { trace(arg0->x); }", 1, 19, "operator -> must be applied to a pointer");
    ERR("BEGIN { trace(args[12]); }", 1, 20, "args[12]: the hypervisor gives the probes' arguments 0 to 9");
    ERR("BEGIN { trace(args[arg0]); }", 1, 20, "args[ ] argument #1 is incompatible with prototype:\n\tprototype: integer constant");
    ERR("BEGIN { trace(this->y); }", 1, 15, "this->y has not yet been declared or assigned");
    ERR("BEGIN { trace(self->y); }", 1, 15, "self->y has not yet been declared or assigned");
    ERR("BEGIN { x += 1; }", 1, 9, "x has not yet been declared or assigned");
    ERR("BEGIN /execname/ { }", 1, 8, "predicate result must be of scalar type");
    ERR("BEGIN { if (execname) trace(1); }", 1, 13, "if( ) condition must be of scalar type");
    ERR("BEGIN { trace(1 +); }", 1, 18, "syntax error near \")\"");
    ERR("BEGIN { trace(1) trace(2); }", 1, 18, "syntax error near \"trace\": expected ';'");
    ERR("BEGIN { trace(\"abc); }", 1, 15, "unterminated string literal");
    ERR("BEGIN { trace(\"abc\n\"); }", 1, 15, "newline encountered in string literal");
    ERR("BEGIN { /* abc }", 1, 9, "end-of-file encountered before matching */");
    ERR("BEGIN { /* a /* b */ }", 1, 14, "/* encountered inside a comment");
    ERR("BEGIN { trace(09); }", 1, 15, "constant 09 contains invalid digit 9");
    ERR("BEGIN { trace(1.5); }", 1, 15, "floating-point constants are not permitted");
    ERR("BEGIN { trace(''); }", 1, 15, "empty character constant");
    ERR("BEGIN { trace(99999999999999999999); }", 1, 15, "constant 99999999999999999999 results in integer overflow");
    ERR("BEGIN { trace($3); }", 1, 15, "macro argument $3 is not defined");
    ERR("BEGIN { trace($target); }", 1, 15, "macro variable $target is not defined");
    ERR("#pragma D option foo=1\nBEGIN { }", 1, 18, "failed to set option 'foo' to '1': Invalid option name");
    ERR("#pragma D option strsize=5000\nBEGIN { }", 1, 18, "failed to set option 'strsize' to '5000': Invalid value for specified option");
    ERR("#pragma D option strsize=1024\nBEGIN { }", 1, 18, "failed to set option 'strsize' to '1024': Invalid value for specified option (2 to 1023 bytes)");
    ERR("#pragma D frobnicate\nBEGIN { }", 1, 11, "invalid D pragma: frobnicate");
    ERR("#include <stdio.h>\nBEGIN { }", 1, 2, "invalid control directive: #include");
    ERR("BEGIN { trace(1); } }", 1, 21, "syntax error near \"}\"");
    ERR("BEGIN { x = \"a\" + 1; }", 1, 17, "operator + requires operands of arithmetic type");
    ERR("BEGIN { x = (string)1; }", 1, 13, "invalid cast expression: \"int\" to \"string\"");
    ERR("BEGIN { x = &pid; }", 1, 13, "unacceptable operand for unary & operator");
    ERR("BEGIN { y = 1; x = &y; }", 1, 20, "cannot take address of dynamic variable");
    ERR("BEGIN { trace(sizeof (struct file)); }", 1, 30, "failed to resolve type struct file: no kernel type information");
    ERR("BEGIN { trace(substr(\"ab\", 1)); }", 1, 15, "substr( ) is not supported by hvtrace");
    ERR("BEGIN { trace(caller); }", 1, 15, "caller is known to hvtrace at fbt and syscall probes only, and this clause "
        "matches dtrace:::BEGIN (use stack())");
    ERR("profile:::tick-1s { trace(caller); }", 1, 27, "caller is known to hvtrace at fbt and syscall probes only");
    ERR("BEGIN { trace(vtimestamp); }", 1, 15, "vtimestamp is not supported by hvtrace (the hypervisor does not "
        "account per-thread on-CPU time");
    ERR("BEGIN { trace(stackdepth); }", 1, 15, "stackdepth is not supported by hvtrace (the kernel stack is unwound");
    ERR("BEGIN { x = ucaller; }", 1, 13, "built-in variable ucaller is not supported by hvtrace");
    ERR("fbt::vfs_read:entry, syscall::read:entry { trace(arg6); }", 1, 50, "arg6 is read from the stack at fbt entry "
        "probes only, and this clause also matches syscall:kernel:read:entry");
    ERR("fbt::vfs_read:entry, fbt::vfs_read:return { trace(arg9); }", 1, 51, "arg9 is read from the stack at fbt entry "
        "probes only, and this clause also matches fbt:kernel:vfs_read:return");
    ERR("BEGIN { trace(ppid); }", 1, 15, "ppid is read from the kernel's struct task_struct: it needs the kernel's types");
    ERR("BEGIN { trace(gid); }", 1, 15, "gid is read from the kernel's struct task_struct");
    ERR("BEGIN { uid = 1; }", 1, 9, "operator = can only be applied to a writable variable");
    ERR("BEGIN { x = 1; trace(x[1]); }", 1, 23, "operator [ ] cannot be applied to a value of type \"int\"");
    ERR("int x;\nint x[string];\nBEGIN { }", 2, 5, "identifier redeclared: x");
    ERR("BEGIN { trace(self->a[1]); }", 1, 22, "self->a has not yet been declared or assigned");
    ERR("BEGIN { self->a[1] = 2; trace(self->a[1, 2]); }", 1, 39, "self->a[ ] prototype mismatch: 2 keys passed, 1 expected");
    ERR("BEGIN { self->a[1] = 2; trace(self->a[\"s\"]); }", 1, 39, "self->a[ ] key #1 is incompatible with prototype");
    ERR("BEGIN { self->a[1, 2, 3, 4, 5, 6, 7, 8] = 2; }", 1, 38, "self->a[ ]: at most 7 keys");
    ERR("BEGIN { this->a[1] = 2; }", 1, 16, "clause-local associative arrays are not supported by hvtrace");
    ERR("BEGIN { trace(this->a[1]); }", 1, 22, "clause-local associative arrays are not supported by hvtrace");
    ERR("BEGIN { this->p = (char *)arg0; this->p[1] = 2; }", 1, 40, "operator = can only be applied to a writable variable");
    ERR("BEGIN { this->x = 1; trace(this->x[1]); }", 1, 35, "operator [ ] cannot be applied to a value of type \"int\"");
    /* the expression too complex for 16 registers: a chain with side effects keeps its order */
    {
        char src[4096] = "BEGIN { a[0] = 1; trace(";
        for (int i = 0; i < 20; i++) strcat(src, "a[0] + (");
        strcat(src, "1");
        for (int i = 0; i < 20; i++) strcat(src, ")");
        strcat(src, "); }");
        res r = comp(src);
        CHECK(r.rc == -1 && strstr(r.err, "expression too complex: it needs more than 16 registers"), "too complex: %s", r.err);
        res_free(&r);
    }
    /* several errors in one run, each with its place */
    {
        res r = comp("BEGIN { trace(foo); }\nEND { x = ; }\nBEGIN { printf(\"%d\", \"s\"); }\n");
        CHECK(r.rc == -1 && strstr(r.err, "test.d:1:15:") && strstr(r.err, "test.d:2:11:") && strstr(r.err, "test.d:3:22:"),
              "three errors: %s", r.err);
        res_free(&r);
    }
    /* self-> in BEGIN is fine */
    {
        res r = comp("BEGIN { self->x = 1; } END { trace(self->x); }");
        CHECK(r.rc == 0, "self-> in BEGIN: %s", r.err);
        res_free(&r);
    }
}

/* ---- probes ---- */
static void test_probes(void)
{
    res r = comp("foo:bar:baz:qux { }");
    CHECK(r.rc == -1 && r.err && !strcmp(r.err, "hvt: invalid probe specifier foo:bar:baz:qux: probe description "
                                                "foo:bar:baz:qux does not match any probes\n"), "no match: %s", r.err);
    res_free(&r);
    d_options o = opts();
    o.allow_zero_matches = 1;
    r = comp_o("foo:bar:baz:qux { } BEGIN { }", o);
    CHECK(r.rc == 0 && r.p.nprobes == 1, "-Z: %s", r.err);
    res_free(&r);
    r = comp("profile:::tick-0 { }");
    CHECK(r.rc == -1 && strstr(r.err, "test.d:1:1: error: invalid probe description \"profile:::tick-0\": invalid rate"),
          "resolver's error: %s", r.err);
    res_free(&r);
    r = comp("a:b:c:d:e { }");
    CHECK(r.rc == -1 && strstr(r.err, "Overspecified probe description"), "5 fields: %s", r.err);
    res_free(&r);
    /* probes sorted by id, each clause once per probe, clauses in program order */
    r = comp("syscall::read:*, syscall::read:entry, fbt::vfs_read:entry { }\n"
             "END { }\nfbt::vfs_read:entry { }\nBEGIN { }\ndtrace:::BEGIN { }");
    CHECK(r.rc == 0, "probes: %s", r.err);
    if (r.rc == 0) {
        const struct hvt_dif_hdr *h = hdr(&r.p);
        const struct hvt_dif_probe *p = (const void *)(r.p.image + h->off_probes);
        const uint16_t *pc = (const void *)(r.p.image + h->off_probe_clauses);
        uint32_t want_id[] = {1, 2, 10, 100, 101};
        CHECK(h->nprobes == 5 && r.p.nprobes == 5, "5 probes, %u", h->nprobes);
        for (int i = 0; i < 5 && i < (int)h->nprobes; i++) CHECK(p[i].id == want_id[i] && r.p.probes[i].id == want_id[i], "probe %d id %u", i, p[i].id);
        CHECK(p[0].nclauses == 2 && pc[p[0].clauses] == 3 && pc[p[0].clauses + 1] == 4, "BEGIN runs clauses 3, 4");
        CHECK(p[2].nclauses == 2 && pc[p[2].clauses] == 0 && pc[p[2].clauses + 1] == 2, "vfs_read runs clauses 0, 2");
        CHECK(p[3].nclauses == 1 && pc[p[3].clauses] == 0, "read:entry once");
        CHECK(!strcmp((const char *)r.p.image + h->off_strtab + p[3].func, "read") &&
              !strcmp((const char *)r.p.image + h->off_strtab + p[3].name, "entry") && !strcmp(r.p.probes[3].prov, "syscall"),
              "names");
        CHECK(h->begin_probe == 1 && h->end_probe == 2 && h->error_probe == 0, "reserved ids");
        CHECK(!strcmp(r.p.clauses[0].where, "syscall::read:*,syscall::read:entry,fbt::vfs_read:entry") && r.p.clauses[1].line == 2,
              "where");
    }
    res_free(&r);
    /* the layout: 8-byte aligned sections in order, inside the image */
    r = comp("BEGIN { x = 1; s = \"str\"; self->t = 2; this->l = 3; a[\"k\"] = 4; @c[1] = count(); trace(0x1234567890); }");
    CHECK(r.rc == 0, "layout: %s", r.err);
    if (r.rc == 0) {
        const struct hvt_dif_hdr *h = hdr(&r.p);
        uint32_t offs[] = {h->off_clauses, h->off_insns, h->off_consts, h->off_vars, h->off_aggs, h->off_probes,
                           h->off_probe_clauses, h->off_strtab};
        size_t sizes[] = {h->nclauses * sizeof(struct hvt_dif_clause), h->ninsns * sizeof(struct hvt_dif_insn),
                          h->nconsts * 8ul, h->nvars * sizeof(struct hvt_dif_var), h->naggs * sizeof(struct hvt_dif_agg),
                          h->nprobes * sizeof(struct hvt_dif_probe), h->nprobe_clauses * 2ul, h->strtab_len};
        int ok = h->magic == HVT_DIF_MAGIC && h->size == r.p.image_len && offs[0] >= sizeof *h;
        for (int i = 0; i < 8; i++) {
            ok &= offs[i] % 8 == 0 && offs[i] + sizes[i] <= h->size;
            if (i) ok &= offs[i] >= offs[i - 1] + sizes[i - 1];
        }
        CHECK(ok, "sections");
        const struct hvt_dif_var *v = (const void *)(r.p.image + h->off_vars);
        CHECK(h->nvars == 5 && v[0].kind == HVT_DIF_VK_GLOBAL && v[0].type == HVT_DIF_T_INT && v[1].type == HVT_DIF_T_STR &&
              v[2].kind == HVT_DIF_VK_THREAD && v[3].kind == HVT_DIF_VK_LOCAL && v[4].kind == HVT_DIF_VK_ASSOC &&
              v[4].nkeys == 1 && v[4].key_types[0] == HVT_DIF_T_STR && (int32_t)v[1].name == stroff(&r.p, "s"), "vars");
        const uint64_t *c = (const void *)(r.p.image + h->off_consts);
        CHECK(h->nconsts == 1 && c[0] == 0x1234567890ull, "consts");
        CHECK(h->strsize == 257 && h->flags == 0 && r.p.image[h->off_strtab] == 0, "header");
    }
    res_free(&r);
    /* the resolver over a probe_list */
    probe_desc pd[] = {{.id = 1, .provider = "fbt", .module = "kernel", .function = "a_func", .name = "entry"},
                       {.id = 2, .provider = "fbt", .module = "kernel", .function = "b_func", .name = "entry"}};
    probe_list pl = {0};
    pl.p = malloc(sizeof pd);
    memcpy(pl.p, pd, sizeof pd);
    pl.n = 2;
    o = opts();
    o.resolve = d_resolve_probe_list;
    o.resolve_ctx = &pl;
    r = comp_o("fbt::*_func:entry { } profile:::tick-10ms { }", o);
    CHECK(r.rc == 0 && r.p.nprobes == 3 && r.p.probes[2].id == 3 && !strcmp(r.p.probes[2].name, "tick-10ms"),
          "probe_list resolver: %s", r.err);
    res_free(&r);
    /* '+' belongs to a probe description (the addr provider's SYM+OFF): the resolver gets it whole */
    r = comp_o("addr:kernel:a_func+5: { }", o);
    CHECK(r.rc != 0 && strstr(r.err, "addr:kernel:a_func+5: does not match any probes"),
          "SYM+OFF lexed as one description: %s", r.err);
    res_free(&r);
    probe_list_free(&pl);
}

/* ---- speculations: code, options, DTrace's order of actions (libdtrace's dt_stmt_append) ---- */
static void test_spec(void)
{
    CODE("BEGIN { self->s = speculation(); }", {OP(SPECNEW), 0, 0, 0, 0}, {OP(STTV), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { speculate(arg0); trace(1); }", {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(SPECULATE), 0, 0, 0, 0},
         {OP(ACT), 0, 0, 0, 0}, {OP(LDI), 0, 0, 0, 1}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    CODE("BEGIN { commit(1); discard(2); }", {OP(LDI), 0, 0, 0, 1}, {OP(COMMIT), 0, 0, 0, 0}, {OP(LDI), 0, 0, 0, 2},
         {OP(DISCARD), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0});
    /* nspec (DTrace's default 1) and specsize go into the header of a program that speculates;
     * one that does not asks for no speculative buffers */
    res r = comp("BEGIN { s = speculation(); }");
    CHECK(r.rc == 0 && hdr(&r.p)->nspec == 1 && hdr(&r.p)->specsize == 0, "nspec 1, the default specsize");
    res_free(&r);
    r = comp("#pragma D option nspec=4\n#pragma D option specsize=1k\nBEGIN { commit(1); }");
    CHECK(r.rc == 0 && hdr(&r.p)->nspec == 4 && hdr(&r.p)->specsize == 1024, "nspec 4, specsize 1k");
    res_free(&r);
    r = comp("#pragma D option nspec=4\n#pragma D option cleanrate=50hz\nBEGIN { trace(1); }");
    CHECK(r.rc == 0 && hdr(&r.p)->nspec == 0 && hdr(&r.p)->specsize == 0, "no speculation: no buffers");
    res_free(&r);
    ERR("#pragma D option nspec=1025\nBEGIN { trace(1); }", 1, 18,
        "failed to set option 'nspec' to '1025': Invalid value for specified option (0 to 1024)");
    ERR("#pragma D option specsize=8g\nBEGIN { trace(1); }", 1, 18,
        "failed to set option 'specsize' to '8g': Invalid value for specified option");
    /* the classic: speculate in an entry clause, commit or discard at return; every image
     * compiled here also passes the verifier */
    r = comp("syscall::read:entry { self->spec = speculation(); }\n"
             "syscall::read:entry /self->spec/ { speculate(self->spec); printf(\"%d\\n\", arg0); }\n"
             "syscall::read:return /self->spec && errno != 0/ { commit(self->spec); self->spec = 0; }\n"
             "syscall::read:return /self->spec/ { discard(self->spec); self->spec = 0; }\n"
             "syscall::read:entry { trace(1); discard(self->spec); }\n");
    CHECK(r.rc == 0, "the classic speculation program: %s", r.err);
    res_free(&r);
    ERR("BEGIN { trace(1); speculate(1); }", 1, 19, "speculate( ) may not follow data-recording action(s)");
    ERR("BEGIN { @a = count(); speculate(1); }", 1, 23, "speculate( ) may not follow data-recording action(s)");
    ERR("BEGIN { speculate(1); speculate(1); }", 1, 23, "speculate( ) may not follow speculate( )");
    ERR("BEGIN { commit(1); speculate(1); }", 1, 20, "speculate( ) may not follow commit( )");
    ERR("BEGIN { speculate(1); @a = count(); }", 1, 23, "aggregating actions may not follow speculate( )");
    ERR("BEGIN { commit(1); @a = count(); }", 1, 20, "aggregating actions may not follow commit( )");
    ERR("BEGIN { speculate(1); exit(0); }", 1, 23, "exit( ) may not follow speculate( )");
    ERR("BEGIN { speculate(1); stop(); }", 1, 23, "stop( ) may not follow speculate( ) in hvtrace");
    ERR("BEGIN { printf(\"x\"); commit(1); }", 1, 22, "commit( ) may not follow data-recording action(s)");
    ERR("BEGIN { commit(1); commit(1); }", 1, 20, "commit( ) may not follow commit( )");
    ERR("BEGIN { commit(1); trace(1); }", 1, 20, "data-recording actions may not follow commit( )");
    ERR("BEGIN { commit(1); exit(0); }", 1, 20, "data-recording actions may not follow commit( )");
    ERR("BEGIN { speculate(1); trace(1); commit(1); }", 1, 33, "commit( ) may not follow speculate( ) in hvtrace");
    {   /* clear( ) is a record the host acts on: speculated, it waits for the commit */
        res r = comp("BEGIN { @a = count(); } BEGIN { speculate(1); clear(@a); }");
        CHECK(r.rc == 0, "clear( ) after speculate( ): %s", r.err);
        res_free(&r);
    }
    ERR("BEGIN { speculate(1); step(); }", 1, 23, "step( ) may not follow speculate( ) in hvtrace");
    ERR("BEGIN { stop(); speculate(1); }", 1, 17, "speculate( ) may not follow data-recording action(s)");
    ERR("BEGIN { speculate(\"a\"); }", 1, 19, "speculate( ) argument #1 is incompatible with prototype:");
    ERR("BEGIN { commit(); }", 1, 9, "commit( ) prototype mismatch: 0 args passed, 1 expected");
    ERR("BEGIN { x = speculation(1); }", 1, 13, "speculation( ) prototype mismatch: 1 arg passed, 0 expected");
    ERR("BEGIN { x = speculate(1); }", 1, 13, "speculate( ) is an action: it may only be used as a statement");
    /* the order is per clause; discard( ) may come anywhere; an if's branches in source order */
    r = comp("BEGIN { trace(1); } BEGIN { speculate(1); trace(2); discard(1); trace(3); }\n"
             "BEGIN { if (arg0) { speculate(1); } trace(1); }");
    CHECK(r.rc == 0, "per clause, discard anywhere: %s", r.err);
    res_free(&r);
    ERR("BEGIN { if (arg0) { trace(1); } else { speculate(1); } }", 1, 40,
        "speculate( ) may not follow data-recording action(s)");
    /* -S shows the ops and the header's speculation options */
    r = comp("#pragma D option nspec=3\nBEGIN { s = speculation(); speculate(s); trace(1); } END { commit(s); }");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    dprog_dump(f, &r.p);
    fclose(f);
    CHECK(strstr(buf, "speculations: nspec 3, specsize 0 (default)\n") && strstr(buf, "specnew  r0") &&
          strstr(buf, "spec     r0") && strstr(buf, "commit   r0"), "dump:\n%s", buf);
    free(buf);
    res_free(&r);
}

/* ---- the disassembly ---- */
static void test_dump(void)
{
    res r = comp("BEGIN /arg0/ { @a[execname] = count(); self->x = 1; printf(\"%s\\n\", \"hi\"); }");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    dprog_dump(f, &r.p);
    fclose(f);
    CHECK(strstr(buf, "probe 1 dtrace:::BEGIN clauses 0\n") && strstr(buf, "agg 0 @a count keys 1 buckets 1") &&
          strstr(buf, "   0    1  bz       r0, -> ") && strstr(buf, "agg      @a[tuple], r0") &&
          strstr(buf, "sttv     self->x, r0") && strstr(buf, "sconst   r0, \"hi\"") &&
          strstr(buf, "action #0 printf \"%s\\n\" (string)"), "dump:\n%s", buf);
    free(buf);
    res_free(&r);
}

/* ---- mangled input never crashes ---- */
static void test_mangled(void)
{
    static const char *seeds[] = {
        "syscall::read:entry /pid == $1 && execname == \"bash\"/ { self->ts = timestamp; @c[execname] = count(); }",
        "BEGIN { printf(\"%d %s %-10.3x\\n\", arg0, probefunc, 3); x = arg0 ? \"a\" : \"b\"; a[1, \"x\"] += 2; }",
        "#pragma D option quiet\nBEGIN /* c */ { @l = lquantize(arg0, 0, 100, 10); printa(\"%@d\", @l); exit(0); }",
        "int x; inline int N = 3;\nEND { if (x > N) { trace(x); } else trace(-x); stack(); clear(@); }",
    };
    const char alphabet[] = "{}()[];,/*+-!~&|^<>=?:.@$\"'\\#\n 0123456789abcxyz_";
    uint64_t s = 0x9e3779b97f4a7c15ull;
    int crashes = 0;
    for (int it = 0; it < 4000; it++) {
        char buf[512];
        strcpy(buf, seeds[it % 4]);
        size_t n = strlen(buf);
        int muts = 1 + (int)(s % 6);
        for (int m = 0; m < muts; m++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            size_t at = (size_t)(s >> 33) % (n ? n : 1);
            int kind = (int)(s >> 20) % 3;
            char c = alphabet[(s >> 40) % (sizeof alphabet - 1)];
            if (kind == 0 && n) buf[at] = c;
            else if (kind == 1 && n < sizeof buf - 2) {
                memmove(buf + at + 1, buf + at, n - at + 1);
                buf[at] = c;
                n++;
            } else if (n) {
                memmove(buf + at, buf + at + 1, n - at);
                n--;
            }
        }
        d_options o = opts();
        FILE *f = fopen("/dev/null", "w");
        o.err = f;
        dprog p;
        int rc = d_compile("m.d", buf, n, &o, &p);
        fclose(f);
        if (rc == 0) {
            verify(buf, &p);
            dprog_free(&p);
        }
        else if (rc != -1) crashes++;
    }
    CHECK(crashes == 0, "mangled programs");
}

/* ---- with the kernel's BTF ---- */
static const btf_info *kbtf;

static uint32_t member_off(const char *sou, const char *m)
{
    btf_member bm;
    uint32_t id = btf_find_struct(kbtf, sou);
    if (!id || btf_member_find(kbtf, id, m, &bm) < 0) return UINT32_MAX;
    return (uint32_t)(bm.bit_offset / 8);
}

/* ---- stable providers (proc, sched) and translators, over a fake kernel's probes ---- */
static const struct { uint32_t id; const char *p, *m, *f, *n; } sprobes[] = {
    {300, "syscall", "kernel", "execve", "return"}, {301, "syscall", "kernel", "execveat", "return"},
    {302, "syscall", "kernel", "execve", "entry"}, {303, "syscall", "kernel", "execveat", "entry"},
    {304, "sdt", "sched", "", "sched_switch"}, {305, "fbt", "kernel", "finish_task_switch.isra.0", "entry"},
    {306, "sdt", "sched", "", "sched_process_fork"}, {307, "sdt", "sched", "", "sched_process_exit"},
    {308, "fbt", "kernel", "sched_tick", "entry"}, {309, "syscall", "kernel", "read", "entry"},
    {310, "fbt", "kernel", "alloc_bprm", "entry"}, {311, "fbt", "kernel", "mutex_lock", "entry"},
    {312, "fbt", "kernel", "mutex_lock", "return"}, {313, "fbt", "kernel", "schedule_preempt_disabled", "entry"},
    {314, "fbt", "kernel", "schedule_preempt_disabled", "return"}, {408, "lockstat", "vmlinux", "", "adaptive-acquire"},
    {409, "lockstat", "vmlinux", "", "adaptive-block"},
    {400, "proc", "vmlinux", "", "exec-success"}, {401, "proc", "vmlinux", "", "exec"},
    {402, "sched", "vmlinux", "", "on-cpu"}, {403, "sched", "vmlinux", "", "off-cpu"},
    {404, "proc", "vmlinux", "", "create"}, {405, "proc", "vmlinux", "", "exit"},
    {406, "sched", "vmlinux", "", "tick"}, {407, "sched", "vmlinux", "", "sleep"}};

static uint32_t shide; /* a probe the fake kernel does not have */
static int sresolve(void *ctx, const char *desc, d_probe_sink *sink, char *err, size_t errlen)
{
    (void)ctx, (void)err, (void)errlen;
    char f[4][256] = {"", "", "", ""}, g[4][256];
    int n = 0;
    for (const char *p = desc; n < 4; n++) {
        const char *c = strchr(p, ':');
        snprintf(g[n], sizeof g[n], "%.*s", (int)(c ? (size_t)(c - p) : strlen(p)), p);
        if (!c) break;
        p = c + 1;
    }
    n++;
    for (int i = 0; i < n && i < 4; i++) strcpy(f[4 - n + i], g[i]);
    for (size_t i = 0; i < sizeof sprobes / sizeof sprobes[0]; i++)
        if (sprobes[i].id != shide && field(f[0], sprobes[i].p) && field(f[1], sprobes[i].m) && field(f[2], sprobes[i].f) &&
            field(f[3], sprobes[i].n))
            d_probe_add(sink, sprobes[i].id, sprobes[i].p, sprobes[i].m, sprobes[i].f, sprobes[i].n);
    return 0;
}

/* the image's probes: "id:first-clause id:first-clause ..." */
static void probes_str(const dprog *p, char *buf, size_t n)
{
    const struct hvt_dif_hdr *h = hdr(p);
    const struct hvt_dif_probe *pr = (const void *)(p->image + h->off_probes);
    const uint16_t *pc = (const void *)(p->image + h->off_probe_clauses);
    size_t k = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < h->nprobes && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%u:%u", i ? " " : "", pr[i].id, pc[pr[i].clauses]);
}

/* the image's probes with all their clauses: "id:c,c id:c ..." */
static void probes_all(const dprog *p, char *buf, size_t n)
{
    const struct hvt_dif_hdr *h = hdr(p);
    const struct hvt_dif_probe *pr = (const void *)(p->image + h->off_probes);
    const uint16_t *pc = (const void *)(p->image + h->off_probe_clauses);
    size_t k = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < h->nprobes && k < n; i++)
        for (uint32_t j = 0; j < pr[i].nclauses && k < n; j++)
            k += (size_t)snprintf(buf + k, n - k, "%s%u", j ? "," : i ? " " : "", j ? pc[pr[i].clauses + j] : pr[i].id),
            k += j ? 0 : (size_t)snprintf(buf + k, n - k, ":%u", pc[pr[i].clauses]);
}

static void test_stable(d_options o)
{
    o.resolve = sresolve;
    uint32_t mm = member_off("task_struct", "mm"), as = member_off("mm_struct", "arg_start"),
             ae = member_off("mm_struct", "arg_end"), pid = member_off("task_struct", "pid"),
             tgid = member_off("task_struct", "tgid"), comm = member_off("task_struct", "comm");
    CHECK(mm != UINT32_MAX && as != UINT32_MAX && ae != UINT32_MAX && tgid != UINT32_MAX, "BTF members for psinfo_t");
    /* exec-success: syscall::execve:return and execveat's, when the return value is 0; pr_psargs is the
     * process's arg_start .. arg_end, read from its own memory (STRGR, user) */
    {
        const char *src = "proc:::exec-success { printf(\"%s\\n\", curpsinfo->pr_psargs); }";
        I w[] = {{OP(VAR), 0, 0, 0, V(ARG0) + 1}, {OP(LDI), 1, 0, 0, 0}, {OP(EQ), 0, 0, 1, 0}, {OP(BZ), 0, 0, 0, 17},
                 {OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(CURTHREAD)}, {OP(ADDI), 0, 0, 0, (int32_t)mm},
                 {OP(LDG), 0, 0, 0, 8}, {OP(ADDI), 0, 0, 0, (int32_t)as}, {OP(LDG), 0, 0, 0, 8},
                 {OP(VAR), 1, 0, 0, V(CURTHREAD)}, {OP(ADDI), 1, 1, 0, (int32_t)mm}, {OP(LDG), 1, 1, 0, 8},
                 {OP(ADDI), 1, 1, 0, (int32_t)ae}, {OP(LDG), 1, 1, 0, 8}, {OP(STRGR), 0, 0, 1, HVT_DIF_LD_USER},
                 {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, src, o, 0, w, 18);
        check_code_o(__LINE__, src, o, 1, w, 18);
        res r = comp_o(src, o);
        char ps[256] = "";
        if (!r.rc) probes_str(&r.p, ps, sizeof ps);
        CHECK(!r.rc && !strcmp(ps, "300:0 301:1"), "exec-success runs on execve:return (clause 0) and execveat:return (1): %s", ps);
        CHECK(!r.rc && r.p.nclauses == 2 && r.p.clauses[0].stable && r.p.clauses[0].stable->id == 400 &&
                  !strcmp(r.p.clauses[1].stable->name, "exec-success") && !strcmp(r.p.clauses[1].stable->prov, "proc"),
              "the clauses name the stable probe for the probe line");
        res_free(&r);
    }
    /* probename is the stable probe's; a clause on a stable and an ordinary probe runs on both */
    {
        res r = comp_o("proc:::exec-success, syscall::read:entry { trace(probename); }", o);
        char ps[256] = "";
        if (!r.rc) probes_str(&r.p, ps, sizeof ps);
        CHECK(!r.rc && !strcmp(ps, "300:1 301:2 309:0") && r.p.nclauses == 3 && !r.p.clauses[0].stable && r.p.clauses[1].stable,
              "stable and ordinary probes in one clause: %s %s", ps, r.err);
        uint32_t n;
        const struct hvt_dif_insn *c = r.rc ? NULL : code(&r.p, 1, &n);
        CHECK(c && n == 8 && c[5].op == OP(SCONST) && c[5].imm == stroff(&r.p, "exec-success"), "probename at a stable probe");
        c = r.rc ? NULL : code(&r.p, 0, &n);
        CHECK(c && c[1].op == OP(VAR) && c[1].imm == V(PROBENAME), "probename at an ordinary probe");
        res_free(&r);
    }
    /* exec: the kernel's copy of the file name at alloc_bprm (args[1]->name, at offset 0 of
     * struct filename; arg0 the pointer); where that is not a probe, execve's arg0 and
     * execveat's arg1 (the user address) */
    {
        CHECK(member_off("filename", "name") == 0, "struct filename's name at offset 0");
        I k[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0) + 1}, {OP(LDG), 0, 0, 0, 8},
                 {OP(STRG), 0, 0, 0, 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "proc:::exec { trace(args[0]); }", o, 0, k, 6);
        I a[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0) + 1}, {OP(LDG), 0, 0, 0, 8},
                 {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "proc:::exec { trace(arg0); }", o, 0, a, 5);
        res r = comp_o("proc:::exec { trace(arg0); }", o);
        char ps[256] = "";
        if (!r.rc) probes_str(&r.p, ps, sizeof ps);
        CHECK(!r.rc && !strcmp(ps, "310:0"), "exec at alloc_bprm alone: %s", ps);
        res_free(&r);
    }
    shide = 310;
    {
        I w0[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        I w1[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0) + 1}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "proc:::exec { trace(arg0); }", o, 0, w0, 4);
        check_code_o(__LINE__, "proc:::exec { trace(arg0); }", o, 1, w1, 4);
        I s1[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0) + 1}, {OP(STRG), 0, 0, 0, HVT_DIF_LD_USER},
                  {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "proc:::exec { trace(args[0]); }", o, 1, s1, 5);
    }
    shide = 0;
    /* off-cpu: the thread coming on is sched_switch's next (args[2]); create: the child (args[1]), a
     * process (pid == tgid) */
    {
        I w[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0) + 2}, {OP(ADDI), 0, 0, 0, (int32_t)pid},
                 {OP(LDG), 0, 0, 0, 4 | HVT_DIF_LD_SIGNED}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "sched:::off-cpu { trace(args[0]->pr_lwpid); }", o, 0, w, 6);
        I c[] = {{OP(VAR), 0, 0, 0, V(ARG0) + 1}, {OP(ADDI), 0, 0, 0, (int32_t)pid}, {OP(LDG), 0, 0, 0, 4 | HVT_DIF_LD_SIGNED},
                 {OP(VAR), 1, 0, 0, V(ARG0) + 1}, {OP(ADDI), 1, 1, 0, (int32_t)tgid}, {OP(LDG), 1, 1, 0, 4 | HVT_DIF_LD_SIGNED},
                 {OP(EQ), 0, 0, 1, 0}, {OP(BZ), 0, 0, 0, 13}, {OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0) + 1},
                 {OP(ADDI), 0, 0, 0, (int32_t)comm}, {OP(STRG), 0, 0, 0, 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "proc:::create { printf(\"%s\", args[0]->pr_fname); }", o, 0, c, 14);
    }
    /* sleep: sched_switch not preempted, prev_state set; the clause's own predicate after the row's */
    {
        res r = comp_o("sched:::sleep /pid == 5/ { @ = count(); }", o);
        uint32_t n;
        const struct hvt_dif_insn *c = r.rc ? NULL : code(&r.p, 0, &n);
        CHECK(c && n == 17 && c[0].op == OP(VAR) && c[0].imm == V(ARG0) && c[5].op == OP(VAR) && c[5].imm == V(ARG0) + 3 && c[11].imm == V(PID),
              "sleep reads sched_switch's preempt and prev_state first: %s", r.err);
        res_free(&r);
    }
    /* a row for another kernel: sched_tick where scheduler_tick is not (6.10+) */
    {
        res r = comp_o("sched:::tick { trace(args[1]->pr_pid); }", o);
        char ps[256] = "";
        if (!r.rc) probes_str(&r.p, ps, sizeof ps);
        CHECK(!r.rc && !strcmp(ps, "308:0"), "tick falls back to sched_tick: %s %s", ps, r.err);
        res_free(&r);
    }
    /* every translated member compiles and passes the verifier */
    {
        res r = comp_o("sched:::on-cpu { @[curpsinfo->pr_pid, curpsinfo->pr_ppid, curpsinfo->pr_pgid, curpsinfo->pr_sid,"
                       " curpsinfo->pr_uid, curpsinfo->pr_euid, curpsinfo->pr_gid, curpsinfo->pr_egid] = count();"
                       " @a[curpsinfo->pr_fname, curpsinfo->pr_nlwp, curpsinfo->pr_addr, curpsinfo->pr_dmodel,"
                       " curlwpsinfo->pr_lwpid, curlwpsinfo->pr_pri, curlwpsinfo->pr_onpro, curlwpsinfo->pr_state] = count();"
                       " @b[curlwpsinfo->pr_sname, curlwpsinfo->pr_name, curpsinfo->pr_psargs] = count(); }"
                       " proc:::exit { @c[args[0]] = count(); }", o);
        CHECK(!r.rc, "every translated member: %s", r.err);
        res_free(&r);
    }
    /* lockstat: the lock kept from mutex_lock's entry (hvtrace's own state clauses, once each),
     * the user's clauses at its return, then the resets after every clause of the program */
    {
        res r = comp_o("lockstat:::adaptive-acquire { @[args[0]] = count(); } lockstat:::adaptive-block { @b = sum(args[1]); }"
                       " fbt::mutex_lock:return { @r = count(); }", o);
        char ps[256] = "";
        if (!r.rc) probes_all(&r.p, ps, sizeof ps);
        CHECK(!r.rc && r.p.nclauses == 9 && !strcmp(ps, "311:3,4 312:0,1,2,7,8 313:5 314:6"),
              "lockstat's state and reset clauses: %s %s", ps, r.err);
        /* clause 3: self->__ls_lock = arg0 at mutex_lock's entry; the user's clause 0 reads it */
        uint32_t n;
        const struct hvt_dif_insn *c = r.rc ? NULL : code(&r.p, 3, &n);
        CHECK(c && n == 3 && c[0].op == OP(VAR) && c[0].imm == V(ARG0) && c[1].op == OP(STTV) && c[2].op == OP(RET),
              "adaptive-acquire's state clause");
        c = r.rc ? NULL : code(&r.p, 0, &n);
        CHECK(c && c[0].op == OP(LDTV) && c[4].op == OP(LDTV) && c[0].imm == c[4].imm, "adaptive-acquire's clause tests and reads the lock kept");
        CHECK(!r.rc && !r.p.clauses[3].stable && !r.p.clauses[3].nacts && r.p.clauses[0].stable, "hvtrace's clauses record nothing");
        res_free(&r);
    }
    check_err_o(__LINE__, "proc:::exec-success { trace(args[0]); }", o, 1, 33,
                "index 0 is out of range for proc:vmlinux::exec-success args[ ]");
    check_err_o(__LINE__, "proc:::create { trace(args[0]->pr_psargs); }", o, 1, 30,
                "pr_psargs is read from the memory of the process the CPU runs: hvtrace has it for curpsinfo");
    check_err_o(__LINE__, "sched:::off-cpu { trace(args[1]->pr_nope); }", o, 1, 32,
                "pr_nope is not a member of psinfo_t");
    check_err_o(__LINE__, "BEGIN { trace(__psargs(1, 2)); }", o, 1, 15, "");
    {
        d_options nb = o;
        nb.btf = NULL;
        check_err_o(__LINE__, "BEGIN { trace(curpsinfo->pr_pid); }", nb, 1, 15,
                    "curpsinfo is translated from the kernel's struct task_struct: it needs the kernel's types");
    }
}

/* a and b compile to the same code (clause c of each) */
static void same_code(int tl, const char *a, const char *b, d_options o, int c)
{
    res x = comp_o(a, o), y = comp_o(b, o);
    uint32_t nx = 0, ny = 0;
    const struct hvt_dif_insn *cx = x.rc ? NULL : code(&x.p, c, &nx), *cy = y.rc ? NULL : code(&y.p, c, &ny);
    CHECK(cx && cy && nx == ny && !memcmp(cx, cy, nx * sizeof *cx), "line %d: the same code (%u, %u insns): %s %s", tl,
          nx, ny, x.err ? x.err : "", y.err ? y.err : "");
    res_free(&x);
    res_free(&y);
}

/* translator declarations (DTrace's syntax) and xlate: each member is its expression over the
 * input, so a translated read compiles to the very code of the expression written out */
static void test_translators(d_options o)
{
    const char *tr = "translator struct mytask < struct task_struct *T > {\n"
                     "    pid = T->tgid;\n"
                     "    ppid = T->real_parent->tgid;\n"
                     "    name = T->comm;\n"
                     "};\n"
                     "translator struct mytask < struct file *F > { pid = F->f_owner.pid_type; ppid = 0; name = \"file\"; };\n";
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%sBEGIN { trace(xlate<struct mytask *>(curthread)->pid); trace(xlate<struct mytask>(curthread).ppid);"
             " trace(xlate<struct mytask *>(curthread)->name); }", tr);
    same_code(__LINE__, a, "BEGIN { trace(curthread->tgid); trace(curthread->real_parent->tgid); trace(curthread->comm); }", o, 0);
    /* chosen by the input's type */
    snprintf(a, sizeof a, "%sfbt::vfs_read:entry { trace(xlate<struct mytask *>(args[0])->pid); }", tr);
    same_code(__LINE__, a, "fbt::vfs_read:entry { trace(args[0]->f_owner.pid_type); }", o, 0);
    /* a name as the output type; a predicate and an aggregation key */
    same_code(__LINE__,
              "translator ids_t < struct task_struct *T > { uid = T->cred->uid.val; };\n"
              "syscall::read:entry /xlate<ids_t *>(curthread)->uid == 0/ { @[xlate<ids_t>(curthread).uid] = count(); }",
              "syscall::read:entry /curthread->cred->uid.val == 0/ { @[curthread->cred->uid.val] = count(); }", o, 0);
    /* DTrace's way of naming a translated current thread: an inline; translators of translators */
    same_code(__LINE__,
              "translator foo_t < struct task_struct *T > { a = T->pid; };\n"
              "inline foo_t *curfoo = xlate<foo_t *>(curthread);\n"
              "translator bar_t < struct task_struct *T > { f = xlate<foo_t *>(T)->a + 1; };\n"
              "BEGIN { trace(curfoo->a); trace(xlate<bar_t *>(curthread)->f); }",
              "BEGIN { trace(curthread->pid); trace(curthread->pid + 1); }", o, 0);
    /* hvtrace's own psinfo_t and lwpsinfo_t through xlate too */
    same_code(__LINE__, "BEGIN { trace(xlate<psinfo_t *>(curthread)->pr_ppid); }", "BEGIN { trace(curpsinfo->pr_ppid); }", o, 0);
    /* errors, at the use or in the declaration, with line and column */
    snprintf(a, sizeof a, "%sBEGIN { trace(xlate<struct mytask *>(curthread)->nope); }", tr);
    check_err_o(__LINE__, a, o, 7, 48, "nope is not a member of struct mytask (its translator from \"struct task_struct *\" at line 1)");
    snprintf(a, sizeof a, "%sBEGIN { trace(xlate<struct mytask *>(1)->pid); }", tr);
    check_err_o(__LINE__, a, o, 7, 15, "translator does not exist: struct mytask from \"int\"");
    check_err_o(__LINE__, "translator x_t < struct task_struct *T > {\n  a = T->nosuch;\n};\nBEGIN { trace(xlate<x_t *>(curthread)->a); }",
                o, 2, 8, "nosuch is not a member of struct task_struct");
    check_err_o(__LINE__, "translator x_t < struct task_struct *T > { a = 1; a = 2; };", o, 1, 51, "translator member a is defined twice");
    check_err_o(__LINE__, "translator x_t < struct task_struct *T > { a = 1; };\ntranslator x_t < struct task_struct *U > { a = 2; };", o,
                2, 12, "a translator to x_t from struct task_struct * is declared already (line 1)");
    check_err_o(__LINE__, "translator psinfo_t < struct task_struct *T > { a = 1; };", o, 1, 12, "psinfo_t is already a type");
    check_err_o(__LINE__, "translator struct file < struct task_struct *T > { a = 1; };", o, 1, 19, "struct file is already a type");
    check_err_o(__LINE__, "translator x_t < struct task_struct *T > { a = T->pid + ; };\nBEGIN { exit(0); }", o, 1, 57,
                "syntax error near \";\"");
    check_err_o(__LINE__, "translator x_t < struct task_struct *T > { a = T->pid; };\nBEGIN { trace(xlate<x_t>(curthread)->a); }", o,
                2, 36, "operator -> must be applied to a pointer: xlate<x_t> is a x_t");
    check_err_o(__LINE__, "BEGIN { trace(xlate<struct file *>(curthread)->f_pos); }", o, 1, 15,
                "xlate needs a translator's output type or a pointer to one: \"struct file *\" is neither");
    snprintf(a, sizeof a, "%sBEGIN { this->m = xlate<struct mytask *>(curthread); trace(this->m->pid); }", tr);
    check_err_o(__LINE__, a, o, 7, 67, "struct mytask has translators from several types");
    /* one error in a translator does not hide the next item's */
    {
        res r = comp_o("translator x_t < struct task_struct *T > { a = T->pid + ; };\nBEGIN { trace(nosuchvar); }", o);
        CHECK(r.rc && r.err && strstr(r.err, "test.d:2:") && !strstr(r.err, "expected a probe description"),
              "after a translator's error, the next clause is compiled (no error at its ';'): %s", r.err);
        res_free(&r);
    }
    /* a pointer kept in a variable: its one translator */
    snprintf(b, sizeof b, "translator y_t < struct task_struct *T > { p = T->tgid; };\n"
                          "BEGIN { this->m = xlate<y_t *>(curthread); trace(this->m->p); }");
    res r = comp_o(b, o);
    CHECK(!r.rc, "a translated pointer in a clause variable: %s", r.err);
    res_free(&r);
}

static void test_btf(void)
{
    const char *path = getenv("HVT_D_KERNEL");
    char pat[512];
    glob_t g = {0};
    if (!path || !*path) {
        const char *cache = getenv("HVT_CACHE"), *home = getenv("HOME");
        if (cache && *cache) snprintf(pat, sizeof pat, "%s/kernels/*/root/boot/vmlinuz-6.1.0-50-cloud-amd64", cache);
        else snprintf(pat, sizeof pat, "%s/.cache/hvtrace/kernels/*/root/boot/vmlinuz-6.1.0-50-cloud-amd64", home ? home : "");
        if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc) path = g.gl_pathv[0];
    }
    kimg k;
    btf_info b;
    const uint8_t *blob;
    size_t len;
    if (!path || kimg_load(&k, path) < 0) {
        printf("SKIP BTF checks: no pinned 6.1.0-50-cloud kernel in the cache\n");
        globfree(&g);
        return;
    }
    if (btf_find_blob(&k, &blob, &len) < 0 || btf_parse(&b, path, blob, len) < 0) {
        CHECK(0, "no BTF in %s", path);
        kimg_free(&k);
        globfree(&g);
        return;
    }
    kbtf = &b;
    d_options o = opts();
    o.btf = &b;
    /* Kernel globals by name: the link address plus the slide, typed where BTF types them. */
    {
        ksym_table ks;
        if (ksym_extract(&k, &ks) == 0) {
            d_options g = o;
            g.ksyms = &ks;
            g.kslide = 0x1000000;
            int64_t j = ksym_find(&ks, "jiffies");
            CHECK(j >= 0, "jiffies in kallsyms");
            int32_t want = (int32_t)(ks.syms[j].addr + 0x1000000);
            I w[] = {{OP(ACT), 0, 0, 0, 0}, {OP(LDI), 0, 0, 0, want}, {OP(LDG), 0, 0, 0, 8}, {OP(EMIT), 0, 0, 0, 0},
                     {OP(RET), 0, 0, 0, 0}};
            check_code_o(__LINE__, "BEGIN { trace(*(unsigned long *)&`jiffies); }", g, 0, w, 5);
            check_code_o(__LINE__, "BEGIN { trace(*(unsigned long *)&vmlinux`jiffies); }", g, 0, w, 5);
            check_err_o(__LINE__, "BEGIN { trace(`jiffies); }", g, 1, 15,
                        "`jiffies has no type in the kernel's BTF: use its address, e.g. *(unsigned long *)&`jiffies");
            check_err_o(__LINE__, "BEGIN { trace(*(long *)&`no_such_symbol_hvt); }", g, 1, 25,
                        "failed to resolve `no_such_symbol_hvt: no such kernel symbol");
            check_err_o(__LINE__, "BEGIN { trace(*(long *)&ext4`jiffies); }", g, 1, 25,
                        "failed to resolve ext4`jiffies: only the kernel's own symbols");
            check_err_o(__LINE__, "BEGIN { trace(*(long *)&`current_task); }", g, 1, 25,
                        "`current_task is a per-CPU variable");
            d_options nok = o;
            check_err_o(__LINE__, "BEGIN { trace(*(long *)&`jiffies); }", nok, 1, 25,
                        "failed to resolve `jiffies: no kernel symbols (give --vmlinuz)");
            ksym_free(&ks);
        } else {
            CHECK(0, "no kallsyms in %s", path);
        }
    }
    uint32_t fpath = member_off("file", "f_path"), dentry = member_off("path", "dentry"), dname = member_off("dentry", "d_name"),
             qname = member_off("qstr", "name"), fpos = member_off("file", "f_pos"), comm = member_off("task_struct", "comm"),
             tpid = member_off("task_struct", "pid");
    CHECK(fpath != UINT32_MAX && dentry != UINT32_MAX && comm != UINT32_MAX, "BTF members");
    {
        I w[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(ADDI), 0, 0, 0, (int32_t)(fpath + dentry)},
                 {OP(LDG), 0, 0, 0, 8}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "fbt::vfs_read:entry { trace(args[0]->f_path.dentry); }", o, 0, w, 6);
    }
    {
        I w[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(ADDI), 0, 0, 0, (int32_t)(fpath + dentry)},
                 {OP(LDG), 0, 0, 0, 8}, {OP(ADDI), 0, 0, 0, (int32_t)(dname + qname)}, {OP(LDG), 0, 0, 0, 8},
                 {OP(STRG), 0, 0, 0, 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "fbt::vfs_read:entry { printf(\"%s\", stringof(args[0]->f_path.dentry->d_name.name)); }", o,
                     0, w, 9);
    }
    {
        /* curthread->comm is a char[16]: a string where one is wanted */
        I w[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(CURTHREAD)}, {OP(ADDI), 0, 0, 0, (int32_t)comm},
                 {OP(STRG), 0, 0, 0, 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(ACT), 0, 0, 0, 1}, {OP(VAR), 0, 0, 0, V(CURTHREAD)},
                 {OP(ADDI), 0, 0, 0, (int32_t)tpid}, {OP(LDG), 0, 0, 0, 4 | HVT_DIF_LD_SIGNED}, {OP(EMIT), 0, 0, 0, 0},
                 {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "BEGIN { printf(\"%s\", curthread->comm); trace(curthread->pid); }", o, 0, w, 11);
    }
    {
        /* a cast, and a narrow typed argument sign-extended */
        I w[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(ARG0)}, {OP(ADDI), 0, 0, 0, (int32_t)fpos},
                 {OP(LDG), 0, 0, 0, 8 | 0}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "BEGIN { trace(((struct file *)arg0)->f_pos); }", o, 0, w, 6);
        if (btf_find_struct(&b, "file")) {
            res r = comp_o("fbt::do_sys_open:entry { trace(args[0]); trace(args[2]); }", o);
            uint32_t n = 0;
            const struct hvt_dif_insn *c = r.rc ? NULL : code(&r.p, 0, &n);
            CHECK(c && n >= 3 && c[1].op == OP(VAR) && c[2].op == OP(SEXT) && c[2].imm == 4, "int args[0]: %s", r.err);
            res_free(&r);
        }
    }
    {
        /* the io provider: args[i]->m through dtrace-utils' io.d translators from the bio in arg0,
         * behind an implicit arg0 != 0 */
        uint32_t it = member_off("bio", "bi_iter"), sz = member_off("bvec_iter", "bi_size");
        res r = comp_o("io:::start { trace(args[0]->b_bcount); }", o);
        uint32_t n = 0;
        const struct hvt_dif_insn *c = r.rc ? NULL : code(&r.p, 0, &n);
        int addi = 0, bz = 0;
        for (uint32_t i = 0; c && i < n; i++) {
            addi |= c[i].op == OP(ADDI) && c[i].imm == (int32_t)(it + sz) && i + 1 < n && c[i + 1].op == OP(LDG) &&
                    (c[i + 1].imm & 0xf) == 4;
            bz |= c[i].op == OP(BZ) && !addi;
        }
        CHECK(c && addi && bz, "io:::start args[0]->b_bcount: a 4-byte load at bio + %u after a branch on arg0: %s",
              it + sz, r.err ? r.err : "");
        res_free(&r);
        r = comp_o("io:::done /args[0]->b_flags & B_WRITE/ { @[args[1]->dev_statname, args[1]->dev_major] = "
                   "sum(args[0]->b_bcount); trace(args[2]->fi_name); trace(args[0]->b_edev); }", o);
        CHECK(r.rc == 0, "bufinfo_t, devinfo_t, fileinfo_t members and B_WRITE: %s", r.err ? r.err : "");
        res_free(&r);
        check_err_o(__LINE__, "io:::start { trace(args[0]->b_nope); }", o, 1, 27, "b_nope is not a member of bufinfo_t");
        check_err_o(__LINE__, "io:::start { trace(args[3]->b_flags); }", o, 1, 25,
                    "index 3 is out of range for io probes' args[ ] (3 arguments)");
        check_err_o(__LINE__, "io:::start, fbt::vfs_read:entry { trace(args[0]->b_flags); }", o, 1, 48,
                    "args[0] of io probes is a translated type: a clause cannot match io probes and others");
        /* wait-done: the bio its wait-start kept in a thread-local, by two implicit clauses */
        r = comp_o("io:::wait-done { @ = sum(args[0]->b_bcount); }", o);
        CHECK(r.rc == 0 && r.p.nclauses == 3 && r.p.clauses[1].where && !strcmp(r.p.clauses[1].where, "io:::wait-start") &&
              !strcmp(r.p.clauses[2].where, "io:::wait-done"),
              "io:::wait-done: its clause, then the implicit wait-start and wait-done ones (%d clauses): %s", r.p.nclauses,
              r.err ? r.err : "");
        res_free(&r);
        r = comp_o("io:::start { @[probename] = count(); }", o);
        CHECK(r.rc == 0 && r.p.nclauses == 1, "no wait-done: no implicit clause: %s", r.err ? r.err : "");
        res_free(&r);
        check_err_o(__LINE__, "io:::wait-start, io:::wait-done { trace(args[0]->b_bcount); }", o, 1, 48,
                    "args[0] of io:::wait-done comes from its wait-start: a clause reading it cannot match other io probes");
    }
    {
        res r = comp_o("BEGIN { trace(sizeof (struct file)); trace(offsetof(struct file, f_pos)); }", o);
        uint32_t n = 0;
        const struct hvt_dif_insn *c = r.rc ? NULL : code(&r.p, 0, &n);
        CHECK(c && c[1].imm == (int32_t)btf_type_size(&b, btf_find_struct(&b, "file")) && c[4].imm == (int32_t)fpos,
              "sizeof, offsetof: %s", r.err);
        res_free(&r);
    }
    {
        /* typed args through a variable; a bitfield */
        res r = comp_o("fbt::vfs_read:entry { self->f = args[0]; } fbt::vfs_read:return /self->f/ { trace(self->f->f_pos); "
                       "trace(args[1]); trace(curthread->in_execve); }", o);
        CHECK(r.rc == 0 && r.p.clauses[1].acts[1].args[0].type == D_V_INT && r.p.clauses[1].acts[1].args[0].size == 8 &&
              r.p.clauses[1].acts[2].args[0].type == D_V_UINT, "typed return value, bitfield: %s", r.err);
        res_free(&r);
    }
    {
        /* ppid, uid, gid: DTrace's translators, through the kernel's types */
        uint32_t rp = member_off("task_struct", "real_parent"), tgid = member_off("task_struct", "tgid"),
                 cred = member_off("task_struct", "cred"), uid = member_off("cred", "uid"), gid = member_off("cred", "gid");
        CHECK(rp != UINT32_MAX && cred != UINT32_MAX && uid != UINT32_MAX, "BTF members of ppid, uid");
        I w[] = {{OP(ACT), 0, 0, 0, 0}, {OP(VAR), 0, 0, 0, V(CURTHREAD)}, {OP(ADDI), 0, 0, 0, (int32_t)rp},
                 {OP(LDG), 0, 0, 0, 8}, {OP(ADDI), 0, 0, 0, (int32_t)tgid}, {OP(LDG), 0, 0, 0, 4 | HVT_DIF_LD_SIGNED},
                 {OP(EMIT), 0, 0, 0, 0}, {OP(ACT), 0, 0, 0, 1}, {OP(VAR), 0, 0, 0, V(CURTHREAD)},
                 {OP(ADDI), 0, 0, 0, (int32_t)cred}, {OP(LDG), 0, 0, 0, 8}, {OP(ADDI), 0, 0, 0, (int32_t)uid},
                 {OP(LDG), 0, 0, 0, 4}, {OP(EMIT), 0, 0, 0, 0}, {OP(ACT), 0, 0, 0, 2}, {OP(VAR), 0, 0, 0, V(CURTHREAD)},
                 {OP(ADDI), 0, 0, 0, (int32_t)cred}, {OP(LDG), 0, 0, 0, 8}, {OP(ADDI), 0, 0, 0, (int32_t)gid},
                 {OP(LDG), 0, 0, 0, 4}, {OP(EMIT), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
        check_code_o(__LINE__, "BEGIN { trace(ppid); trace(uid); trace(gid); }", o, 0, w, (int)(sizeof w / sizeof w[0]));
    }
    check_err_o(__LINE__, "fbt::vfs_read:entry { trace(args[0]->nope); }", o, 1, 36, "nope is not a member of struct file");
    check_err_o(__LINE__, "fbt::vfs_read:entry { trace(args[5]); }", o, 1, 29,
                "index 5 is out of range for fbt:kernel:vfs_read:entry args[ ]");
    check_err_o(__LINE__, "fbt::vfs_read:entry, fbt::do_sys_open:entry { trace(args[0]); }", o, 1, 53,
                "args[0] has different types in the probes this clause matches");
    check_err_o(__LINE__, "BEGIN { trace(curthread.pid); }", o, 1, 24,
                "operator . cannot be applied to type \"struct task_struct *\"; must be applied to a struct or union");
    check_err_o(__LINE__, "BEGIN { trace(((int *)arg0)->x); }", o, 1, 28,
                "operator -> cannot be applied to pointer to type \"int\"; must be applied to a struct or union pointer");
    check_err_o(__LINE__, "BEGIN { trace((struct nosuch *)arg0); }", o, 1, 23, "failed to resolve type struct nosuch: Unknown type name");
    /* a kernel array indexed by a variable: checked (CHKIDX 16, comm's 16 bytes); by a constant: not */
    {
        res r = comp_o("BEGIN { trace(curthread->comm[arg0]); trace(curthread->comm[3]); }", o);
        uint32_t n = 0;
        const struct hvt_dif_insn *c = r.rc ? NULL : code(&r.p, 0, &n);
        int chk = 0;
        for (uint32_t i = 0; c && i < n; i++) chk += c[i].op == OP(CHKIDX) ? (c[i].imm == 16 ? 1 : 100) : 0;
        CHECK(chk == 1, "curthread->comm[arg0]: one CHKIDX 16 (%d): %s", chk, r.err);
        res_free(&r);
    }
    check_err_o(__LINE__, "BEGIN { trace(curthread->comm[16]); }", o, 1, 30, "index outside array bounds: 16, max is 16");
    check_err_o(__LINE__, "BEGIN { printf(\"%d\", curthread->comm); }", o, 1, 22,
                "printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %d");
    {
        /* wildcards over probes with the same args[0] type are fine; an enum constant */
        res r = comp_o("fbt::vfs_*:entry { trace(args[0]->f_pos); trace(TASK_COMM_LEN); }", o);
        CHECK(r.rc == 0 || strstr(r.err, "TASK_COMM_LEN"), "wildcard args: %s", r.err);
        res_free(&r);
    }
    test_stable(o);
    test_translators(o);
    btf_free(&b);
    kimg_free(&k);
    globfree(&g);
}


/* ---- stack keys: compile, verify, run in the VM with a fake unwinder, print ---- */
#ifdef D_WITH_VERIFIER
#include "d_agg.h"
/* a descriptor the verifier accepts (the VM never reads through it here: kstack is faked) */
static const struct hvt_dif_korc fake_korc = { .ip_table = 0xffffffff82000000ull, .entries = 0xffffffff82400000ull,
                                               .count = 100, .layout = 1, .nranges = 1,
                                               .range = { { 0xffffffff81000000ull, 0xffffffff81e00000ull } } };
static d_options kopts(void)
{
    d_options o = opts();
    o.korc = &fake_korc;
    return o;
}
static const uint64_t kpcs[] = { 0xffffffff81001010ull, 0xffffffff81002020ull, 0xffffffff81003030ull, 0xffffffff81004040ull };
static unsigned kdepth = 4;          /* frames the fake unwinder finds this firing */
static unsigned fake_kstack(void *ctx, uint64_t *pcs, unsigned max, uint32_t *exact, bool *from_user)
{
    unsigned n = 0;
    for (; n < kdepth && n < max; n++) pcs[n] = kpcs[n];
    *exact = 1;
    *from_user = kdepth == 4 && max >= 4;    /* the unwind reached the user registers */
    return n;
}
static size_t no_read(void *ctx, uint64_t va, void *buf, size_t len, int user) { return 0; }
static int fake_sym(void *ctx, uint64_t addr, int user, d_sym *s)
{
    static const char *const names[] = { "leaf_fn", "mid_fn", "vfs_read", "ksys_read" };
    if (user || addr < 0xffffffff81001000ull || addr >= 0xffffffff81005000ull) return 0;
    s->module = "vmlinux";
    s->name = names[(addr - 0xffffffff81001000ull) >> 12];
    s->off = addr & 0xfff;
    return 1;
}

/* Compile src (BEGIN clauses), fire BEGIN with each depth in depths[] (frames the fake unwinder
 * finds), and print the aggregations the way the consumer does at the end. */
static char *run_print(const char *src, const unsigned *depths, int nd)
{
    res r = comp_o(src, kopts());
    CHECK(r.rc == 0, "%s: %s", src, r.err);
    if (r.rc) {
        res_free(&r);
        return strdup("");
    }
    void *img = aligned_alloc(8, (r.p.image_len + 7) & ~(size_t)7);
    memcpy(img, r.p.image, r.p.image_len);
    struct dif_env env = { .read = no_read, .kstack = fake_kstack };
    size_t sz = dif_state_size(img, 1);
    void *mem = aligned_alloc(64, (sz + 63) & ~(size_t)63);
    struct dif_state *st;
    CHECK(dif_state_init(&st, mem, sz, img, 1, &env) == DIF_OK, "state");
    for (int i = 0; i < nd; i++) {
        kdepth = depths[i];
        struct dif_firing f = { 0 };
        CHECK(dif_fire(st, 0, 1, &f) >= 1, "BEGIN fires");
    }
    static uint8_t buf[1 << 16];
    uint32_t cursor = 0;
    long n = dif_agg_snapshot(st, 0, buf, sizeof buf, &cursor);
    d_symbolizer sy = { fake_sym, NULL };
    d_aggs *a = d_aggs_new(&r.p, 256, &sy);
    char why[200] = "";
    CHECK(n > 0 && d_aggs_snap_begin(a, 0, 1, why, sizeof why) == 0 && d_aggs_snap_add(a, 0, 1, buf, (size_t)n, why, sizeof why) == 0 &&
          d_aggs_snap_end(a, 0, 1, why, sizeof why) == 0, "%s: snapshot: %ld bytes: %s", src, n, why);
    d_out o;
    d_out_buf(&o);
    d_aggopt opt = { 0 };
    int printa = 0;
    for (int c = 0; c < r.p.nclauses; c++)          /* printa( ) in an END-less test: print it */
        for (int k = 0; k < r.p.clauses[c].nacts; k++)
            if (r.p.clauses[c].acts[k].kind == D_ACT_PRINTA) {
                char err[200] = "";
                printa = 1;
                CHECK(d_aggs_printa(a, &o, r.p.clauses[c].acts[k].agg, r.p.clauses[c].acts[k].fmt, &opt, err, sizeof err) == 0,
                      "printa: %s", err);
            }
    if (!printa)
        d_aggs_print_rest(a, &o, &opt);
    char *out = strdup(o.buf ? o.buf : "");
    d_out_free(&o);
    d_aggs_free(a);
    free(mem);
    free(img);
    res_free(&r);
    return out;
}

static void test_stack_keys(void)
{
    /* the code: TKSTACK/TUSTACK in the key's place, the default depths and stack(N) */
    const I w1[] = {{OP(TKSTACK), 0, 0, 0, 20}, {OP(AGG), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
    check_code_o(__LINE__, "BEGIN { @[stack()] = count(); }", kopts(), 0, w1, 3);
    const I w2[] = {{OP(VAR), 0, 0, 0, V(PID)}, {OP(TKSTACK), 0, 0, 0, 5}, {OP(TPUSH), 0, 0, 0, 0}, {OP(TUSTACK), 0, 0, 0, 7},
                    {OP(AGG), 0, 0, 0, 0}, {OP(RET), 0, 0, 0, 0}};
    check_code_o(__LINE__, "BEGIN { @[stack(5), pid, ustack(7)] = count(); }", kopts(), 0, w2, 6);
    d_options o = kopts();
    const char *x[] = { "stackframes=9" };
    o.xopts = x, o.nxopts = 1;
    const I w3[] = {{OP(TKSTACK), 0, 0, 0, 9}, {OP(AGG), 0, 0, 0, 0}, {OP(LDI), 0, 0, 0, 1}, {OP(TCLR), 0, 0, 0, 0},
                    {OP(TKSTACK), 0, 0, 0, 9}, {OP(AGG), 0, 0, 0, 1}, {OP(RET), 0, 0, 0, 0}};
    check_code_o(__LINE__, "BEGIN { @a[stack()] = count(); @b[stack()] = sum(1); }", o, 0, w3, 7);
    res r = comp_o("BEGIN { @[stack(), ustack(3)] = count(); }", kopts());
    CHECK(r.rc == 0, "stack keys: %s", r.err);
    if (r.rc == 0) {
        const struct hvt_dif_hdr *h = hdr(&r.p);
        const struct hvt_dif_agg *a = (const void *)(r.p.image + h->off_aggs);
        CHECK(h->off_korc && !memcmp(r.p.image + h->off_korc, &fake_korc, sizeof fake_korc), "the image carries the ORC tables");
        CHECK(a[0].nkeys == 2 && a[0].key_types[0] == HVT_DIF_T_STACK && a[0].key_types[1] == HVT_DIF_T_STACK &&
              r.p.aggs[0].keys[0].type == D_V_KSTACK && r.p.aggs[0].keys[0].size == 20 &&
              r.p.aggs[0].keys[1].type == D_V_USTACK && r.p.aggs[0].keys[1].size == 3, "stack key types");
        /* the verifier's refusals: no tables, a bad depth, a stack key in an associative array */
        void *img = aligned_alloc(8, (r.p.image_len + 7) & ~(size_t)7);
        struct dif_verr e;
        memcpy(img, r.p.image, r.p.image_len);
        ((struct hvt_dif_hdr *)img)->off_korc = 0;
        CHECK(dif_verify(img, r.p.image_len, &e) != 0 && !strcmp(e.reason, "kernel stack key without the kernel's ORC tables"),
              "no ORC tables: %s", e.reason);
        uint32_t n;
        code(&r.p, 0, &n);
        for (int bad = 0; bad < 3; bad++) {
            memcpy(img, r.p.image, r.p.image_len);
            struct hvt_dif_insn *c = (struct hvt_dif_insn *)((uint8_t *)img + h->off_insns);
            c[0].imm = bad == 0 ? 0 : bad == 1 ? HVT_DIF_STACKKEY_MAX + 1 : -1;
            CHECK(dif_verify(img, r.p.image_len, &e) != 0 && !strcmp(e.reason, "bad stack key depth"), "depth %d: %s", c[0].imm,
                  e.reason);
        }
        memcpy(img, r.p.image, r.p.image_len);
        ((struct hvt_dif_agg *)((uint8_t *)img + h->off_aggs))[0].key_types[1] = HVT_DIF_T_INT;
        CHECK(dif_verify(img, r.p.image_len, &e) != 0 && !strcmp(e.reason, "tuple does not match the keys"), "key type: %s",
              e.reason);
        memcpy(img, r.p.image, r.p.image_len);
        ((struct hvt_dif_korc *)((uint8_t *)img + h->off_korc))->layout = 9;
        CHECK(dif_verify(img, r.p.image_len, &e) != 0 && !strcmp(e.reason, "unknown ORC layout"), "korc: %s", e.reason);
        free(img);
    }
    res_free(&r);
    r = comp_o("BEGIN { x[1] = 1; } BEGIN { @[stack()] = count(); printa(\"%k %@d\\n\", @); }", kopts());
    CHECK(r.rc == 0, "printa %%k: %s", r.err);
    res_free(&r);
    check_err_o(__LINE__, "BEGIN { @[stack(49)] = count(); }", kopts(), 1, 17,
                "stack(49) as a key: the hypervisor keeps at most 48 frames of a stack key");
    check_err_o(__LINE__, "BEGIN { @[stack(0)] = count(); }", kopts(), 1, 17, "stack( ) argument #1 must be a non-zero positive");
    check_err_o(__LINE__, "BEGIN { @[stack(arg0)] = count(); }", kopts(), 1, 17, "stack( ) argument #1 must be a non-zero positive");
    check_err_o(__LINE__, "BEGIN { x[stack()] = 1; }", kopts(), 1, 11, "stack( ) as an associative array key is not supported");
    ERR("BEGIN { @[stack()] = count(); }", 1, 11, "stack( ) as a key needs the kernel's ORC tables");
    check_err_o(__LINE__, "BEGIN { @[stack()] = count(); @[stack(4)] = count(); }", kopts(), 1, 33,
                "@[ ] key #1 is incompatible with prototype:\n\tprototype: stack(20)\n\t      key: stack(4)");
    check_err_o(__LINE__, "BEGIN { @[stack()] = count(); printa(\"%d %@d\\n\", @); }", kopts(), 1, 38,
                "printa( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %d");
    check_err_o(__LINE__, "BEGIN { @[pid] = count(); printa(\"%k %@d\\n\", @); }", kopts(), 1, 34,
                "printa( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %k");

    /* run: two firings of the 4-frame stack, one of a 2-frame one: DTrace's printing (frames
     * on their own lines, 14 spaces in, then the value), sorted by value */
    unsigned d1[] = { 4, 2, 4 };
    char *out = run_print("BEGIN { @[stack()] = count(); }", d1, 3);
    const char *want1 = "\n"
                        "              vmlinux`leaf_fn+0x10\n"
                        "              vmlinux`mid_fn+0x20\n"
                        "                1\n"
                        "\n"
                        "              vmlinux`leaf_fn+0x10\n"
                        "              vmlinux`mid_fn+0x20\n"
                        "              vmlinux`vfs_read+0x30\n"
                        "              vmlinux`ksys_read+0x40\n"
                        "                2\n";
    CHECK(!strcmp(out, want1), "@[stack()] printed:\n%s\nwant:\n%s", out, want1);
    free(out);
    unsigned d2[] = { 4, 4, 3 };
    out = run_print("BEGIN { @[stack(3)] = count(); printa(\"%k|%@d\\n\", @); }", d2, 3);
    const char *want2 = "\n"
                        "              vmlinux`leaf_fn+0x10\n"
                        "              vmlinux`mid_fn+0x20\n"
                        "              vmlinux`vfs_read+0x30\n"
                        "|3\n";
    CHECK(!strcmp(out, want2), "printa %%k (3 frames of 4 and of 3 are one key):\n%s\nwant:\n%s", out, want2);
    free(out);
}
#else
static void test_stack_keys(void) {}
#endif

int main(void)
{
    test_syntax();
    test_code();
    test_vars();
    test_aggs();
    test_errors();
    test_probes();
    test_spec();
    test_dump();
    test_mangled();
    test_btf();
    test_stack_keys();
    return check_summary("unit_d");
}
