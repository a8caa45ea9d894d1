/* util: what every pass of the D compiler uses (d_int.h): the compilation's arena, error
 * reporting with line:col and caret, the identifiers and inlines the parser must know, and
 * the options (#pragma D option, -x). The pass order is d_compile.c's. */
#include "d_int.h"
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- memory: one arena per compilation, freed at once ---- */
typedef struct d_blk {
    struct d_blk *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} d_blk;

_Noreturn void d_nomem(d_cc *cc)
{
    fprintf(cc->err, "hvt: %s: out of memory\n", cc->file);
    cc->nerrors++;
    longjmp(cc->top, 1);
}

void *d_alloc(d_cc *cc, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    d_blk *b = cc->arena;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        d_blk *nb = malloc(sizeof *nb + cap);
        if (!nb) d_nomem(cc);
        nb->used = 0;
        nb->cap = cap;
        /* a big block goes behind the current one so the current one keeps filling */
        if (b && n > 65536) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            cc->arena = nb;
        }
        b = nb;
    }
    void *p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

void d_arena_free(d_cc *cc)
{
    for (d_blk *b = cc->arena, *nb; b; b = nb) {
        nb = b->next;
        free(b);
    }
    cc->arena = NULL;
}

char *d_strndup(d_cc *cc, const char *s, size_t n)
{
    char *p = d_alloc(cc, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *d_sprintf(d_cc *cc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = d_alloc(cc, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

void *d_grow(d_cc *cc, void *p, int *cap, int need, size_t elem)
{
    if (need <= *cap) return p;
    int nc = *cap ? *cap : 8;
    while (nc < need) {
        if (nc > (1 << 28)) d_nomem(cc);
        nc *= 2;
    }
    void *np = realloc(p, (size_t)nc * elem);
    if (!np) d_nomem(cc);
    memset((char *)np + (size_t)*cap * elem, 0, (size_t)(nc - *cap) * elem);
    *cap = nc;
    return np;
}

/* ---- errors: "hvt: FILE:LINE:COL: error: MSG", the line, a caret ---- */
static void show_line(d_cc *cc, int line, int col)
{
    if (line < 1 || line > cc->nlines) return;
    size_t s = cc->lines[line - 1], e = s, at = s + (col > 0 ? (size_t)col - 1 : 0);
    while (e < cc->len && cc->src[e] != '\n') e++;
    /* a very long line: the 200 bytes around the column */
    const char *pre = "", *post = "";
    if (e - s > 200) {
        size_t from = at > s + 100 ? at - 100 : s;
        if (from > s) s = from, pre = "...";
        if (e > s + 200) e = s + 200, post = "...";
    }
    fputs(pre, cc->err);
    for (size_t i = s; i < e; i++) {
        unsigned char c = (unsigned char)cc->src[i];
        fputc(c == '\t' || c >= 0x20 ? c : ' ', cc->err);
    }
    fprintf(cc->err, "%s\n%s", post, *pre ? "   " : "");
    /* keep tabs so the caret lines up whatever the terminal's tab width */
    for (size_t i = s; i < e && i < at; i++) fputc(cc->src[i] == '\t' ? '\t' : ' ', cc->err);
    fputs("^\n", cc->err);
}

static void verror(d_cc *cc, int line, int col, const char *fmt, va_list ap)
{
    char msg[2048];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && msg[n - 1] == '\n') msg[--n] = 0;
    if (line > 0)
        fprintf(cc->err, "hvt: %s:%d:%d: error: %s\n", cc->file, line, col, msg);
    else
        fprintf(cc->err, "hvt: %s: error: %s\n", cc->file, msg);
    show_line(cc, line, col);
    if (++cc->nerrors >= cc->max_errors) {
        fprintf(cc->err, "hvt: %s: too many errors, stopping\n", cc->file);
        longjmp(cc->top, 1);
    }
}

void d_error(d_cc *cc, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(cc, line, col, fmt, ap);
    va_end(ap);
}

_Noreturn void d_fail(d_cc *cc, int line, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(cc, line, col, fmt, ap);
    va_end(ap);
    longjmp(cc->jb ? *cc->jb : cc->top, 1);
}

/* ---- identifiers the parser saw used as variables (DTrace lets them shadow type names) ---- */
int d_ident_seen(d_cc *cc, const char *name)
{
    for (int i = 0; i < cc->nidents; i++)
        if (!strcmp(cc->idents[i], name)) return 1;
    return 0;
}

void d_ident_add(d_cc *cc, const char *name)
{
    if (cc->nidents >= D_MAX_VARS || d_ident_seen(cc, name)) return; /* only a hint for casts */
    cc->idents = d_grow(cc, cc->idents, &cc->capidents, cc->nidents + 1, sizeof *cc->idents);
    cc->idents[cc->nidents++] = name;
}

/* ---- inlines, by name: the parser asks before it takes a name as a cast's type ---- */
d_inline *d_inline_find(d_cc *cc, const char *name)
{
    for (int i = 0; i < cc->ninls; i++)
        if (!strcmp(cc->inls[i].name, name)) return &cc->inls[i];
    return NULL;
}

/* ---- options: #pragma D option and -x, DTrace's names and value syntax ---- */
static int parse_size(const char *v, uint64_t *out)
{
    char *end;
    if (!v || !isdigit((unsigned char)*v)) return -1;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 0);
    if (errno) return -1;
    uint64_t mul = 1;
    switch (tolower((unsigned char)*end)) {
    case 0: break;
    case 'k': mul = 1ull << 10; end++; break;
    case 'm': mul = 1ull << 20; end++; break;
    case 'g': mul = 1ull << 30; end++; break;
    case 't': mul = 1ull << 40; end++; break;
    default: return -1;
    }
    if (*end || (n && mul > UINT64_MAX / n)) return -1;
    *out = n * mul;
    return 0;
}

static int parse_rate(const char *v, uint64_t *out)
{
    static const struct { const char *s; uint64_t mul; } sfx[] = {
        {"ns", 1}, {"nsec", 1}, {"us", 1000}, {"usec", 1000}, {"ms", 1000000}, {"msec", 1000000},
        {"s", 1000000000ull}, {"sec", 1000000000ull}, {"m", 60000000000ull}, {"min", 60000000000ull},
        {"h", 3600000000000ull}, {"hour", 3600000000000ull}, {"d", 86400000000000ull},
        {"day", 86400000000000ull}, {"hz", 0}};
    char *end;
    if (!v || !isdigit((unsigned char)*v)) return -1;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 0);
    if (errno) return -1;
    if (!*end) { *out = n; return 0; }   /* a bare number is nanoseconds, as in DTrace */
    for (size_t i = 0; i < sizeof sfx / sizeof sfx[0]; i++) {
        if (strcasecmp(end, sfx[i].s)) continue;
        if (!sfx[i].mul) *out = n ? 1000000000ull / n : 0;
        else if (n > UINT64_MAX / sfx[i].mul) return -1;
        else *out = n * sfx[i].mul;
        return 0;
    }
    return -1;
}

/* Options accepted that change nothing a program's results depend on: timing (statusrate,
 * cleanrate), things hvt never does (resize buffers, resolve user symbols, jstack, print()),
 * and the compiler's own diagnostics and linking. Anything that would change what a program
 * reports is either done (d_setopt below, or the consumer) or refused (refused_opts). */
static const char *const ignored_opts[] = {
    "statusrate", "cleanrate", "jstackframes", "jstackstrsize", "noresolve", "quietresize",
    "verbose", "strip", "nolibs", "pspec", "unodefs", "udefs", "maxframes", "lockmem", "printsize",
    "bpflog", "bpflogsize", "stdc", "version", "amin", "linkmode", "linktype",
    "core", "iregs", "tree", "tregs", "debug", "disasm", NULL};

/* DTrace options hvt does not do, with what it does instead: refused, never accepted and
 * ignored (a program asking for them would get other results than it asked for). A value
 * given here is the one value that is hvt's own behaviour, and is accepted. */
static const struct { const char *name, *ok, *why; } refused_opts[] = {
    {"cpu", NULL, "every CPU is traced; use a predicate on cpu"},
    {"aggpack", NULL, "distributions print vertically"},
    {"bufpolicy", "switch", "the principal buffers are switch buffers, bufpolicy=switch"},
    {"bufresize", "manual", "buffers are never resized, a load that cannot get them fails: bufresize=manual"},
    {"grabanon", NULL, "there is no anonymous tracing"},
    {"temporal", NULL, "records print in each CPU's order as they arrive"},
    {"droptags", NULL, "drops are reported without tags"},
    {"errtags", NULL, "errors are reported without tags"},
    {"scratchsize", NULL, "the scratch space has a fixed size"},
    {"evaltime", "exec", "hvt -c traces the command from its exec, evaltime=exec"},
    {NULL, NULL, NULL}};

const char *d_opt_refused(const char *name)
{
    for (int i = 0; refused_opts[i].name; i++)
        if (!strcmp(refused_opts[i].name, name) && !refused_opts[i].ok)
            return refused_opts[i].why;
    return NULL;
}

int d_setopt(d_cc *cc, const char *name, const char *val, int line, int col)
{
    uint64_t v = 0;
    int bad = 0;
    if (!strcmp(name, "quiet") || !strcmp(name, "flowindent") || !strcmp(name, "destructive") ||
        !strcmp(name, "defaultargs") || !strcmp(name, "zdefs") || !strcmp(name, "argref") ||
        !strncmp(name, "aggsort", 7)) {
        int on = 1;
        long num = 1;                      /* aggsortpos, aggsortkeypos: a number, not a flag */
        if (val) {
            char *end;
            num = strtol(val, &end, 0);
            on = num != 0;
            bad = !*val || *end || ((!strcmp(name, "aggsortpos") || !strcmp(name, "aggsortkeypos")) &&
                                    (num < 0 || num > INT32_MAX));
        }
        if (!bad && !strncmp(name, "aggsort", 7)) {
            if (!strcmp(name, "aggsortkey")) cc->aggsortkey = on;
            else if (!strcmp(name, "aggsortrev")) cc->aggsortrev = on;
            else if (!strcmp(name, "aggsortpos")) cc->aggsortpos = (int)num;
            else if (!strcmp(name, "aggsortkeypos")) cc->aggsortkeypos = (int)num;
            else bad = -1;
        } else if (!bad) {
            if (name[0] == 'q') cc->quiet = on;
            else if (name[0] == 'f') cc->flowindent = on;
            else if (name[0] == 'd' && name[1] == 'e' && name[2] == 's') cc->destructive = on;
            else if (name[0] == 'd') cc->defaultargs = on;
            else if (name[0] == 'a') cc->argref = on;
            else cc->zdefs = on;
        }
    } else if (!strcmp(name, "bufsize") || !strcmp(name, "aggsize") || !strcmp(name, "dynvarsize") ||
               !strcmp(name, "strsize")) {
        bad = parse_size(val, &v) || v > UINT32_MAX;
        if (!bad && name[0] == 's' && (v < 2 || v > HVT_DIF_STRSIZE_MAX - 1)) bad = 1; /* + its NUL */
        if (!bad) {
            if (name[0] == 'b') cc->bufsize = (uint32_t)v;
            else if (name[0] == 'a') cc->aggsize = (uint32_t)v;
            else if (name[0] == 'd') cc->dynvarsize = (uint32_t)v;
            else cc->strsize = (uint32_t)v;
        }
    } else if (!strcmp(name, "switchrate") || !strcmp(name, "aggrate")) {
        bad = parse_rate(val, &v);
        if (!bad) *(name[0] == 's' ? &cc->switchrate_ns : &cc->aggrate_ns) = v;
    } else if (!strcmp(name, "nspec") || !strcmp(name, "specsize")) {
        /* the hypervisor bounds nspec * specsize per CPU too (its verifier says so) */
        bad = parse_size(val, &v) || v > (name[0] == 'n' ? HVT_DIF_NSPEC_MAX : UINT32_MAX);
        if (!bad) *(name[0] == 'n' ? &cc->nspec : &cc->specsize) = (uint32_t)v;
    } else if (!strcmp(name, "stackframes") || !strcmp(name, "ustackframes")) {
        bad = parse_size(val, &v) || v == 0 || v > 1024;
        if (!bad) *(name[0] == 's' ? &cc->stackframes : &cc->ustackframes) = (int)v;
    } else if (!strcmp(name, "aggzoom") || !strcmp(name, "rawbytes")) {
        long num = 1;
        if (val) {
            char *end;
            num = strtol(val, &end, 0);
            bad = !*val || *end;
        }
        if (!bad) *(name[0] == 'a' ? &cc->aggzoom : &cc->rawbytes) = num != 0;
    } else if (!strcmp(name, "stackindent")) {
        bad = parse_size(val, &v) || v > 1024;
        if (!bad) {
            cc->stackindent = (int)v;
            cc->stackindent_set = 1;
        }
    } else {
        for (int i = 0; refused_opts[i].name; i++) {
            if (strcmp(refused_opts[i].name, name)) continue;
            if (refused_opts[i].ok && val && !strcmp(val, refused_opts[i].ok)) return 0;
            if (val) d_error(cc, line, col, "option %s=%s is not supported by hvtrace: %s", name, val, refused_opts[i].why);
            else d_error(cc, line, col, "option %s is not supported by hvtrace: %s", name, refused_opts[i].why);
            return -1;
        }
        int known = 0;
        for (int i = 0; ignored_opts[i]; i++)
            if (!strcmp(ignored_opts[i], name)) known = 1;
        if (!known) {
            if (val) d_error(cc, line, col, "failed to set option '%s' to '%s': Invalid option name", name, val);
            else d_error(cc, line, col, "failed to set option '%s': Invalid option name", name);
            return -1;
        }
    }
    if (bad < 0) {
        d_error(cc, line, col, "failed to set option '%s': Invalid option name", name);
        return -1;
    }
    if (bad) {
        const char *hint = !strcmp(name, "strsize") ? " (2 to 1023 bytes)" : !strcmp(name, "nspec") ? " (0 to 1024)" : "";
        if (val) d_error(cc, line, col, "failed to set option '%s' to '%s': Invalid value for specified option%s", name, val, hint);
        else d_error(cc, line, col, "failed to set option '%s': Invalid value for specified option%s", name, hint);
        return -1;
    }
    return 0;
}
