/*
 * d_pfcheck: printf( ) and printa( ) formats checked against their arguments the way DTrace
 * checks them: the same conversion table (flags - + space # 0 ' ? @, widths and
 * precisions with *, length modifiers h hh l ll L w), the same prototypes and the same
 * messages. hvtrace has no floating-point values, so %e %f %g and their kin are refused,
 * as is %k (no stack values). hh is an extension (DTrace has no %hhd).
 */
#include "d_int.h"
#include <ctype.h>
#include <string.h>

enum { CK_ADDR = 1, CK_KADDR, CK_CSI, CK_DINT, CK_XINT, CK_STR, CK_TIME, CK_TYPE, CK_XSIZE, CK_FP, CK_STACK, CK_WSTR, CK_PCT };

typedef struct {
    const char *name;
    int check;
    const char *proto;
    uint8_t size, uns;      /* CK_TYPE: the exact integer; CK_XSIZE: the size, any sign */
} pfconv;

static const char p_xint[] = "char, short, int, long, or long long";
static const char p_csi[] = "char, short, or int";
static const char p_addr[] = "pointer or integer";
static const char p_cstr[] = "char [] or string (or use stringof)";

static const pfconv convs[] = {
    {"a", CK_KADDR, p_addr, 0, 0}, {"A", CK_KADDR, p_addr, 0, 0}, {"c", CK_CSI, p_csi, 0, 0},
    {"C", CK_CSI, p_csi, 0, 0}, {"d", CK_DINT, p_xint, 0, 0}, {"i", CK_DINT, p_xint, 0, 0},
    {"e", CK_FP, 0, 0, 0}, {"E", CK_FP, 0, 0, 0}, {"f", CK_FP, 0, 0, 0}, {"F", CK_FP, 0, 0, 0},
    {"g", CK_FP, 0, 0, 0}, {"G", CK_FP, 0, 0, 0}, {"Le", CK_FP, 0, 0, 0}, {"LE", CK_FP, 0, 0, 0},
    {"Lf", CK_FP, 0, 0, 0}, {"Lg", CK_FP, 0, 0, 0}, {"LG", CK_FP, 0, 0, 0},
    {"hd", CK_TYPE, "short", 2, 0}, {"hi", CK_TYPE, "short", 2, 0}, {"ho", CK_TYPE, "unsigned short", 2, 1},
    {"hu", CK_TYPE, "unsigned short", 2, 1}, {"hx", CK_XSIZE, "short", 2, 0}, {"hX", CK_XSIZE, "short", 2, 0},
    {"hhd", CK_TYPE, "char", 1, 0}, {"hhi", CK_TYPE, "char", 1, 0}, {"hho", CK_TYPE, "unsigned char", 1, 1},
    {"hhu", CK_TYPE, "unsigned char", 1, 1}, {"hhx", CK_XSIZE, "char", 1, 0}, {"hhX", CK_XSIZE, "char", 1, 0},
    {"k", CK_STACK, "stack", 0, 0}, {"K", CK_STACK, "stack", 0, 0}, {"lc", CK_TYPE, "int", 4, 0}, {"wc", CK_TYPE, "int", 4, 0},
    {"ld", CK_TYPE, "long", 8, 0}, {"li", CK_TYPE, "long", 8, 0}, {"lo", CK_TYPE, "unsigned long", 8, 1},
    {"lu", CK_TYPE, "unsigned long", 8, 1}, {"lx", CK_XSIZE, "long", 8, 0}, {"lX", CK_XSIZE, "long", 8, 0},
    {"lld", CK_TYPE, "long long", 8, 0}, {"lli", CK_TYPE, "long long", 8, 0},
    {"llo", CK_TYPE, "unsigned long long", 8, 1}, {"llu", CK_TYPE, "unsigned long long", 8, 1},
    {"llx", CK_XSIZE, "long long", 8, 0}, {"llX", CK_XSIZE, "long long", 8, 0},
    {"ls", CK_WSTR, "wchar_t []", 0, 0}, {"ws", CK_WSTR, "wchar_t []", 0, 0},
    {"o", CK_XINT, p_xint, 0, 0}, {"p", CK_ADDR, p_addr, 0, 0}, {"s", CK_STR, p_cstr, 0, 0},
    {"S", CK_STR, p_cstr, 0, 0}, {"T", CK_TIME, "int64_t", 0, 0}, {"u", CK_XINT, p_xint, 0, 0},
    {"x", CK_XINT, p_xint, 0, 0}, {"X", CK_XINT, p_xint, 0, 0}, {"Y", CK_TIME, "int64_t", 0, 0},
    {"%", CK_PCT, "void", 0, 0}};

enum { F_AGG = 1, F_DYNW = 2, F_DYNP = 4 };
typedef struct {
    const pfconv *conv;
    int flags;
    char name[8];
} pfspec;

/* The next conversion at or after *pos; 0 when there is none. n counts conversions. */
static int next_conv(d_cc *cc, const d_node *at, const char *fmt, size_t *pos, int n, pfspec *out)
{
    const char *p = strchr(fmt + *pos, '%');
    if (!p) return 0;
    memset(out, 0, sizeof *out);
    int dot = 0, digits = 0;
    size_t nl = 0;
    for (;;) {
        char c = *++p;
        if (isdigit((unsigned char)c)) {
            if (!(dot == 0 && digits == 0 && c == '0')) {
                while (isdigit((unsigned char)p[1])) p++;
                digits++;
            }
            continue;
        }
        switch (c) {
        case '#': case '+': case '-': case ' ': case '\'': case '?': continue;
        case '@': out->flags |= F_AGG; continue;
        case '*': {
            int f = dot ? F_DYNP : F_DYNW;
            if (out->flags & f)
                d_fail(cc, at->line, at->col, "format conversion #%d has more than one '*' specified for the output %s", n,
                       dot ? "precision" : "width");
            out->flags |= f;
            continue;
        }
        case '.':
            if (dot++) d_fail(cc, at->line, at->col, "format conversion #%d has more than one '.' specified", n);
            digits = 0;
            continue;
        case '$': d_fail(cc, at->line, at->col, "format conversion #%d uses unsupported positional format (%%n$)", n);
        case '%':
            if (p[-1] != '%')
                d_fail(cc, at->line, at->col, "format conversion #%d cannot be combined with other format flags: %%%%", n);
            break;
        case 0: d_fail(cc, at->line, at->col, "format conversion #%d name expected before end of format string", n);
        case 'h': case 'l': case 'L': case 'w':
            if (nl < sizeof out->name - 2) out->name[nl++] = c;
            continue;
        default: break;
        }
        out->name[nl++] = c;
        out->name[nl] = 0;
        break;
    }
    *pos = (size_t)(p - fmt) + 1;
    for (size_t i = 0; i < sizeof convs / sizeof convs[0]; i++)
        if (!strcmp(convs[i].name, out->name)) out->conv = &convs[i];
    if (!out->conv) d_fail(cc, at->line, at->col, "format conversion #%d is undefined: %%%s", n, out->name);
    if (out->conv->check == CK_FP)
        d_fail(cc, at->line, at->col, "format conversion #%d (%%%s) is not supported: hvtrace has no floating-point values", n,
               out->name);
    return 1;
}

static int check(d_cc *cc, const pfconv *c, int tid)
{
    const d_type *t = d_ty(cc, tid);
    int isint = d_ty_is_int(cc, tid);
    switch (c->check) {
    case CK_ADDR: return isint || t->kind == TY_PTR;
    case CK_KADDR: return isint || t->kind == TY_PTR;
    case CK_CSI: return isint && t->size <= 4;
    case CK_DINT: case CK_XINT: return isint;
    case CK_STR: return t->kind == TY_STR || d_ty_is_chararray(cc, tid);
    case CK_TIME: return isint && t->size == 8;
    case CK_TYPE: return isint && t->size == c->size && t->uns == c->uns;
    case CK_STACK: return t->kind == TY_STACK;   /* printa( ) of a stack( ) / ustack( ) key */
    case CK_XSIZE: return isint && t->size == c->size;
    default: return 0;
    }
}

static _Noreturn void mismatch(d_cc *cc, const d_node *at, const char *func, const char *vname, int i, const pfspec *s,
                               const char *argty)
{
    at = d_node_start(at);
    d_fail(cc, at->line, at->col,
           "%s( ) %s is incompatible with conversion #%d prototype:\n\tconversion: %%%s\n\t prototype: %s\n\t  argument: %s",
           func, vname, i, s->name, s->conv->proto, argty);
}

void d_printf_check(d_cc *cc, const char *func, const char *fmt, const d_node *fmtnode, d_node **args, int nargs,
                    int foff, d_val *vals)
{
    if (!fmt[0]) d_fail(cc, fmtnode->line, fmtnode->col, "%s( ) format string is empty", func);
    size_t pos = 0;
    int j = 0;
    pfspec s;
    for (int i = 1; next_conv(cc, fmtnode, fmt, &pos, i, &s); i++) {
        if (s.conv->check == CK_PCT) continue;
        for (int dyn = 0; dyn < 2; dyn++) {
            if (!(s.flags & (dyn ? F_DYNW : F_DYNP))) continue;
            if (j >= nargs)
                d_fail(cc, fmtnode->line, fmtnode->col, "%s( ) prototype mismatch: conversion #%d (%%%s) is missing a "
                       "corresponding \"%s\" argument", func, i, s.name, dyn ? "*" : ".*");
            if (!d_ty_is_int(cc, args[j]->ty))
                d_fail(cc, d_node_start(args[j])->line, d_node_start(args[j])->col, "%s( ) argument #%d is incompatible with conversion #%d prototype:\n"
                       "\tconversion: %% %s %s\n\t prototype: int\n\t  argument: %s", func, j + foff + 1, i, dyn ? "*" : ".*",
                       s.name, d_ty_str(cc, args[j]->ty));
            d_val_of(cc, args[j]->ty, &vals[j]);
            j++;
        }
        if (s.flags & F_AGG) d_fail(cc, fmtnode->line, fmtnode->col, "%%@ conversion requires an aggregation and is not for use with %s( )", func);
        if (j >= nargs)
            d_fail(cc, fmtnode->line, fmtnode->col, "%s( ) prototype mismatch: conversion #%d (%%%s) is missing a corresponding "
                   "value argument", func, i, s.name);
        char vname[32];
        snprintf(vname, sizeof vname, "argument #%d", j + foff + 1);
        if (!check(cc, s.conv, args[j]->ty)) mismatch(cc, args[j], func, vname, i, &s, d_ty_str(cc, args[j]->ty));
        if (s.conv->check == CK_KADDR) vals[j] = (d_val){D_V_KSYM, 8};
        else if (s.conv->check == CK_STR) vals[j] = (d_val){D_V_STR, 0};
        else d_val_of(cc, args[j]->ty, &vals[j]);
        j++;
    }
    if (j < nargs)
        d_fail(cc, d_node_start(args[j])->line, d_node_start(args[j])->col, "%s( ) prototype mismatch: only %d arguments required by this format string",
               func, j);
}

void d_printa_check(d_cc *cc, const char *fmt, const d_node *fmtnode, const d_aggsym *agg)
{
    int g = 0;
    d_printa_check_n(cc, fmt, fmtnode, agg, &g, 1);
}

void d_printa_check_n(d_cc *cc, const char *fmt, const d_node *fmtnode, const d_aggsym *aggs, const int *gs, int ng)
{
    if (!fmt[0]) d_fail(cc, fmtnode->line, fmtnode->col, "printa( ) format string is empty");
    size_t pos = 0;
    int j = 0, nat = 0;
    pfspec s;
    const d_aggsym *agg = &aggs[gs[0]];
    for (int i = 1; next_conv(cc, fmtnode, fmt, &pos, i, &s); i++) {
        if (s.conv->check == CK_PCT) continue;
        if (s.flags & (F_DYNW | F_DYNP))
            d_fail(cc, fmtnode->line, fmtnode->col, "printa( ) conversion #%d (%%%s): a '*' width or precision needs a value "
                   "argument, and printa( ) has none", i, s.name);
        if (s.flags & F_AGG) {
            /* with several aggregations each %@ takes the next one's value */
            if (ng > 1 && nat >= ng)
                d_fail(cc, fmtnode->line, fmtnode->col, "printa( ) conversion #%d (%%@%s): %d aggregations, "
                       "this is %%@ #%d", i, s.name, ng, nat + 1);
            const d_aggsym *va = &aggs[gs[ng > 1 ? nat : 0]];
            int valty = va->fn == HVT_DIF_AGG_COUNT ? cc->t_u64 : cc->t_i64;
            nat++;
            /* the quantizations print their histogram whatever the conversion */
            if (va->fn < HVT_DIF_AGG_QUANTIZE && !check(cc, s.conv, valty))
                mismatch(cc, fmtnode, "printa", "aggregating action", i, &s, d_ty_str(cc, valty));
            continue;
        }
        if (j >= agg->nkeys)
            d_fail(cc, fmtnode->line, fmtnode->col, "printa( ) prototype mismatch: conversion #%d (%%%s) is missing a "
                   "corresponding value argument", i, s.name);
        char vname[32];
        snprintf(vname, sizeof vname, "argument #%d", j + 2);
        if (!check(cc, s.conv, agg->keys[j])) mismatch(cc, fmtnode, "printa", vname, i, &s, d_ty_str(cc, agg->keys[j]));
        j++;
    }
}
