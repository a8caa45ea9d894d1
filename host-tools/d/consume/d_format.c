/* d_format.c - see d_format.h. The conversion rules follow DTrace's libdtrace (its printf
 * parser and the pfprint_* routines), which rebuilds a C format per conversion and hands it
 * to the C library: so do we, so widths, flags and precisions behave exactly as there. */
#include "d_format.h"
#include "util.h"
#include "dprog.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --- output --- */

void d_out_file(d_out *o, FILE *f)
{
    memset(o, 0, sizeof *o);
    o->f = f;
}

void d_out_buf(d_out *o) { memset(o, 0, sizeof *o); }

void d_out_reset(d_out *o)
{
    o->len = 0;
    if (o->buf)
        o->buf[0] = 0;
    o->err = 0;
}

void d_out_free(d_out *o)
{
    free(o->buf);
    o->buf = NULL;
    o->len = o->cap = 0;
}

static int grow(d_out *o, size_t need)
{
    if (o->len + need + 1 <= o->cap)
        return 0;
    size_t cap = o->cap ? o->cap : 256;
    while (cap < o->len + need + 1)
        cap *= 2;
    char *nb = realloc(o->buf, cap);
    if (!nb) {
        o->err = ENOMEM;
        return -1;
    }
    o->buf = nb;
    o->cap = cap;
    return 0;
}

void d_out_write(d_out *o, const char *s, size_t n)
{
    if (!n)
        return;
    if (o->f) {
        if (fwrite(s, 1, n, o->f) != n)
            o->err = errno ? errno : EIO;
        return;
    }
    if (grow(o, n) < 0)
        return;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
    o->buf[o->len] = 0;
}

void d_out_puts(d_out *o, const char *s) { d_out_write(o, s, strlen(s)); }

static void d_out_vprintf(d_out *o, const char *fmt, va_list ap)
{
    if (o->f) {
        if (vfprintf(o->f, fmt, ap) < 0)
            o->err = errno ? errno : EIO;
        return;
    }
    va_list aq;
    va_copy(aq, ap);
    size_t room = o->cap > o->len ? o->cap - o->len : 0;
    int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, aq);
    va_end(aq);
    if (n < 0) {
        o->err = EINVAL;
        return;
    }
    if ((size_t)n >= room) {
        if (grow(o, (size_t)n) < 0)
            return;
        vsnprintf(o->buf + o->len, o->cap - o->len, fmt, ap);
    }
    o->len += (size_t)n;
}

void d_out_printf(d_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    d_out_vprintf(o, fmt, ap);
    va_end(ap);
}

void d_out_pad(d_out *o, int n)
{
    static const char sp[] = "                                                                ";
    while (n > 0) {
        int k = n < (int)sizeof sp - 1 ? n : (int)sizeof sp - 1;
        d_out_write(o, sp, (size_t)k);
        n -= k;
    }
}

/* --- strings --- */

static int printable(char c)
{
    unsigned char u = (unsigned char)c;
    return (u >= 0x20 && u < 0x7f) || (u >= '\t' && u <= '\r') || u == '\b' || u == '\a';
}

static char byte_at(const char *s, size_t len, size_t i) { return i < len ? s[i] : 0; }

void d_print_bytes(d_out *o, const char *s, size_t len, size_t nbytes, int width, int quiet)
{
    if (nbytes < len)
        nbytes = len;
    if (!nbytes)
        return;
    size_t i = 0;
    while (i < len && printable(s[i]))
        i++;
    if (i == len && len > 0) {
        char stack[256], *t = len < sizeof stack ? stack : malloc(len + 1);
        if (!t) {
            o->err = ENOMEM;
            return;
        }
        memcpy(t, s, len);
        t[len] = 0;
        if (len == nbytes)             /* no NUL fits: DTrace prints it so even under -q */
            d_out_printf(o, "  %-*s", width < 0 ? -width : width, t);
        else if (quiet)
            d_out_puts(o, t);
        else
            d_out_printf(o, " %s%*s", width < 0 ? " " : "", width, t);
        if (t != stack)
            free(t);
        return;
    }
    /* not a string to DTrace (an empty one included): the bytes, 16 a row */
    d_print_rawbytes(o, s, len, nbytes);
}

void d_print_rawbytes(d_out *o, const char *s, size_t len, size_t nbytes)
{
    if (nbytes < len)
        nbytes = len;
    if (!nbytes)
        return;
    const int margin = 5;
    d_out_printf(o, "\n%*s      ", margin, "");
    for (int j = 0; j < 16; j++)
        d_out_printf(o, "  %c", "0123456789abcdef"[j]);
    d_out_puts(o, "  0123456789abcdef\n");
    for (size_t r = 0; r < nbytes; r += 16) {
        size_t j;
        d_out_printf(o, "%*s%5zx:", margin, "", r);
        for (j = r; j < r + 16 && j < nbytes; j++)
            d_out_printf(o, " %02x", (unsigned char)byte_at(s, len, j));
        for (; j % 16; j++)
            d_out_puts(o, "   ");
        d_out_puts(o, "  ");
        for (j = r; j < r + 16 && j < nbytes; j++) {
            char c = byte_at(s, len, j);
            d_out_printf(o, "%c", c < ' ' || c > '~' ? '.' : c);
        }
        d_out_puts(o, "\n");
    }
}

/* --- symbols --- */

static int lookup(const d_symbolizer *sy, uint64_t addr, int user, d_sym *s)
{
    memset(s, 0, sizeof *s);
    return sy && sy->fn && sy->fn(sy->ctx, addr, user, s) == 1 && s->module;
}

void d_addr2str(const d_symbolizer *sy, uint64_t addr, int user, char *buf, size_t n)
{
    d_sym s;
    if (!lookup(sy, addr, user, &s))
        snprintf(buf, n, "0x%llx", (unsigned long long)addr);
    else if (!s.name)
        snprintf(buf, n, "%s`0x%llx", s.module, (unsigned long long)addr);
    else if (s.off)
        snprintf(buf, n, "%s`%s+0x%llx", s.module, s.name, (unsigned long long)s.off);
    else
        snprintf(buf, n, "%s`%s", s.module, s.name);
}

void d_sym2str(const d_symbolizer *sy, uint64_t addr, int user, char *buf, size_t n)
{
    d_sym s;
    if (!lookup(sy, addr, user, &s))
        snprintf(buf, n, "0x%llx", (unsigned long long)addr);
    else if (!s.name)
        snprintf(buf, n, "%s`0x%llx", s.module, (unsigned long long)addr);
    else
        snprintf(buf, n, "%s`%s", s.module, s.name);
}

uint64_t d_sym_start(const d_symbolizer *sy, uint64_t addr, int user)
{
    d_sym s;
    return lookup(sy, addr, user, &s) && s.name ? addr - s.off : addr;
}

/* --- conversions --- */

/* The C format of a conversion: flags in DTrace's order, width, precision (only if > 0: DTrace
 * drops a zero precision), then the C conversion. */
static void cfmt(const d_pfspec *sp, const char *conv, char *f, size_t n)
{
    size_t k = 0;
    f[k++] = '%';
    if (sp->flags & D_PF_ALT) f[k++] = '#';
    if (sp->flags & D_PF_ZPAD) f[k++] = '0';
    if (sp->flags & D_PF_LEFT) f[k++] = '-';
    if (sp->flags & D_PF_SPOS) f[k++] = '+';
    if (sp->flags & D_PF_GROUP) f[k++] = '\'';
    if (sp->flags & D_PF_SPACE) f[k++] = ' ';
    if (sp->width)
        k += (size_t)snprintf(f + k, n - k, "%d", sp->width);
    if (sp->prec > 0)
        k += (size_t)snprintf(f + k, n - k, ".%d", sp->prec);
    snprintf(f + k, n - k, "%s", conv);
}

/* The value as its C type of `size` bytes would hold it, widened back to 64 bits. */
static int64_t at_size(int64_t v, int size, int is_signed)
{
    switch (size) {
    case 1: return is_signed ? (int64_t)(int8_t)v : (int64_t)(uint8_t)v;
    case 2: return is_signed ? (int64_t)(int16_t)v : (int64_t)(uint16_t)v;
    case 4: return is_signed ? (int64_t)(int32_t)v : (int64_t)(uint32_t)v;
    default: return v;
    }
}

void d_pf_int(d_out *o, const d_pfspec *sp, int64_t v, int size, int is_signed)
{
    char f[64];
    if (sp->len == 'h')
        size = 2;
    else if (sp->len == 'H')
        size = 1;
    if (size != 1 && size != 2 && size != 4)
        size = 8;
    int sgn;
    const char *conv;
    switch (sp->conv) {
    case 'd': sgn = is_signed; conv = sgn ? "lli" : "llu"; break;
    case 'i': sgn = 1; conv = "lli"; break;
    case 'c': sgn = 1; conv = "c"; break;
    case 'o': sgn = 0; conv = "llo"; break;
    case 'x': case 'p': sgn = 0; conv = "llx"; break;
    case 'X': sgn = 0; conv = "llX"; break;
    default: sgn = 0; conv = "llu"; break;
    }
    v = at_size(v, size, sgn);
    cfmt(sp, conv, f, sizeof f);
    if (sp->conv == 'c')
        d_out_printf(o, f, (int)v);
    else if (sgn)
        d_out_printf(o, f, (long long)v);
    else
        d_out_printf(o, f, (unsigned long long)v);
}

static void pf_str(d_out *o, const d_pfspec *sp, const char *s)
{
    char f[64];
    cfmt(sp, "s", f, sizeof f);
    d_out_printf(o, f, s);
}

/* %Y: "2024 Jan  2 03:04:05", local time, as DTrace turns ctime()'s text around */
static void pf_time(d_out *o, const d_pfspec *sp, int64_t ns)
{
    time_t sec = (time_t)(ns / 1000000000);
    char src[64], buf[32];
    struct tm tm;
    if (!localtime_r(&sec, &tm) || !asctime_r(&tm, src) || strlen(src) < 24) {
        pf_str(o, sp, "?");
        return;
    }
    memcpy(buf, src + 20, 4);
    memcpy(buf + 4, src + 3, 16);
    buf[20] = 0;
    pf_str(o, sp, buf);
}

/* %T: RFC 822 ("Tue, 14 Nov 2023 22:13:20 UTC"), local time: DTrace's pfprint_time822 format,
 * ISO year (%G) included */
static void pf_time822(d_out *o, const d_pfspec *sp, int64_t ns)
{
    time_t sec = (time_t)(ns / 1000000000);
    struct tm tm;
    char buf[64];
    if (!localtime_r(&sec, &tm) || !strftime(buf, sizeof buf, "%a, %d %b %G %T %Z", &tm)) {
        pf_str(o, sp, "?");
        return;
    }
    pf_str(o, sp, buf);
}

/* %S and %C: the bytes with C escapes as DTrace's strchr2esc makes them (\0 \a \b \f \n \r
 * \t \v \" \\, other bytes outside '!'..'~' but space as 3 octal digits), stopping after the
 * first NUL it escapes. */
static void pf_estr(d_out *o, const d_pfspec *sp, const char *s, size_t n)
{
    char stack[256], *t = n * 4 + 1 <= sizeof stack ? stack : malloc(n * 4 + 1), *q = t;
    if (!t) {
        o->err = ENOMEM;
        return;
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        switch (c) {
        case '\0': *q++ = '\\'; *q++ = '0'; break;
        case '\a': *q++ = '\\'; *q++ = 'a'; break;
        case '\b': *q++ = '\\'; *q++ = 'b'; break;
        case '\f': *q++ = '\\'; *q++ = 'f'; break;
        case '\n': *q++ = '\\'; *q++ = 'n'; break;
        case '\r': *q++ = '\\'; *q++ = 'r'; break;
        case '\t': *q++ = '\\'; *q++ = 't'; break;
        case '\v': *q++ = '\\'; *q++ = 'v'; break;
        case '"': *q++ = '\\'; *q++ = '"'; break;
        case '\\': *q++ = '\\'; *q++ = '\\'; break;
        case ' ': *q++ = c; break;
        default:
            if (c < '!' || c > '~') {
                *q++ = '\\';
                *q++ = (char)(((c >> 6) & 3) + '0');
                *q++ = (char)(((c >> 3) & 7) + '0');
                *q++ = (char)((c & 7) + '0');
            } else {
                *q++ = c;
            }
        }
        if (c == '\0')
            break;
    }
    *q = 0;
    pf_str(o, sp, t);
    if (t != stack)
        free(t);
}

static int is_int(const d_value *v) { return v->type != D_V_STR; }
static int is_signed_type(const d_value *v) { return v->type == D_V_INT; }


/* Parse one conversion after its '%' (DTrace's grammar: flags, digits, '.', '*', '?', '@' in
 * any order until the conversion letter). *pp ends on the letter. */
static int parse(const char **pp, d_pfspec *sp, int n, char *err, size_t errlen)
{
    const char *p = *pp;
    int digits = 0, dot = 0;
    char len[3] = {0};
    int nlen = 0;
    memset(sp, 0, sizeof *sp);
    for (;;) {
        char c = *++p;
        switch (c) {
        case '0': case '1': case '2': case '3': case '4':
        case '5': case '6': case '7': case '8': case '9': {
            if (!dot && !digits && c == '0') {
                sp->flags |= D_PF_ZPAD;
                sp->flags &= ~D_PF_LEFT;
                continue;
            }
            int v = 0;
            for (; isdigit((unsigned char)*p); p++)
                v = v < 100000 ? v * 10 + (*p - '0') : v;
            p--;
            if (dot) sp->prec = v;
            else sp->width = v;
            digits++;
            continue;
        }
        case '#': sp->flags |= D_PF_ALT; continue;
        case '+': sp->flags |= D_PF_SPOS; continue;
        case ' ': sp->flags |= D_PF_SPACE; continue;
        case '\'': sp->flags |= D_PF_GROUP; continue;
        case '@': sp->flags |= D_PF_AGG; continue;
        case '?': sp->width = 16; continue;
        case '-':
            sp->flags |= D_PF_LEFT;
            sp->flags &= ~D_PF_ZPAD;
            continue;
        case '*': {
            int f = dot ? D_PF_DYNP : D_PF_DYNW;
            if (sp->flags & f)
                return util_fail(err, errlen, "format conversion #%d has more than one '*'", n);
            sp->flags |= f;
            continue;
        }
        case '.':
            if (dot++)
                return util_fail(err, errlen, "format conversion #%d has more than one '.'", n);
            digits = 0;
            continue;
        case 'h': case 'l':
            if (nlen < 2)
                len[nlen++] = c;
            continue;
        case '%':
            if (p[-1] == '%') {
                sp->conv = '%';
                *pp = p;
                return 0;
            }
            return util_fail(err, errlen, "format conversion #%d cannot be combined with other flags: %%%%", n);
        case '\0':
            return util_fail(err, errlen, "format conversion #%d name expected before end of format string", n);
        default:
            if (!strchr("diuoxXcspaAYTSCkK", c))
                return util_fail(err, errlen, "format conversion #%d is undefined: %%%s%c", n, len, c);
            if (nlen && !strchr("diuoxXc", c))
                return util_fail(err, errlen, "format conversion #%d is undefined: %%%s%c", n, len, c);
            if (!strcmp(len, "h")) sp->len = 'h';
            else if (!strcmp(len, "hh")) sp->len = 'H';
            else if (!strcmp(len, "l")) sp->len = 'l';
            else if (!strcmp(len, "ll")) sp->len = 'q';
            else if (nlen) return util_fail(err, errlen, "format conversion #%d is undefined: %%%s%c", n, len, c);
            sp->conv = c;
            *pp = p;
            return 0;
        }
    }
}

/* A `*` argument: an integer of the value's size, as a C int (DTrace's dt_printf_getint). */
static int dyn_int(const d_value *v, int nv, int *k, int *out)
{
    if (*k >= nv || !is_int(&v[*k]))
        return -1;
    *out = (int)at_size(v[*k].i, v[*k].size, 1);
    (*k)++;
    return 0;
}

int d_printf_format(d_out *o, const char *fmt, const d_value *v, int nv, const d_symbolizer *sy,
                    d_pf_agg_fn agg, void *agg_ctx, char *err, size_t errlen)
{
    int k = 0, n = 0;
    const char *q = fmt, *p;
    if (err && errlen)
        err[0] = 0;
    while ((p = strchr(q, '%'))) {
        d_out_write(o, q, (size_t)(p - q));
        d_pfspec sp;
        n++;
        if (parse(&p, &sp, n, err, errlen) < 0)
            return -1;
        q = p + 1;
        if (sp.conv == '%') {
            d_out_write(o, "%", 1);
            continue;
        }
        int w = sp.width, pr = sp.prec;
        if ((sp.flags & D_PF_DYNW) && dyn_int(v, nv, &k, &w) < 0)
            return util_fail(err, errlen, "conversion #%d: no integer for its '*' width", n);
        if ((sp.flags & D_PF_DYNP) && dyn_int(v, nv, &k, &pr) < 0)
            return util_fail(err, errlen, "conversion #%d: no integer for its '*' precision", n);
        if (w < 0) {
            sp.flags |= D_PF_LEFT;
            w = w == -2147483647 - 1 ? 2147483647 : -w;
        }
        sp.width = w;
        sp.prec = pr > 0 ? pr : 0;
        if (sp.flags & D_PF_AGG) {
            if (!agg)
                return util_fail(err, errlen, "conversion #%d: %%@ outside printa()", n);
            if (agg(agg_ctx, o, &sp, err, errlen) < 0)
                return -1;
            continue;
        }
        if (k >= nv)
            return util_fail(err, errlen, "conversion #%d (%%%c) has no value", n, sp.conv);
        const d_value *a = &v[k++];
        if (sp.conv == 'S') {
            if (a->type != D_V_STR)
                return util_fail(err, errlen, "conversion #%d (%%S) is given an integer", n);
            /* DTrace escapes the whole strsize-byte record: the string, then its NUL as \0 */
            char stack[256], *s = a->slen < sizeof stack ? stack : malloc(a->slen + 1);
            if (!s)
                return util_fail(err, errlen, "out of memory");
            memcpy(s, a->s, a->slen);
            s[a->slen] = 0;
            pf_estr(o, &sp, s, a->slen + 1);
            if (s != stack)
                free(s);
            continue;
        }
        if (sp.conv == 's') {
            if (a->type != D_V_STR)
                return util_fail(err, errlen, "conversion #%d (%%s) is given an integer", n);
            char stack[256], *s = a->slen < sizeof stack ? stack : malloc(a->slen + 1);
            if (!s)
                return util_fail(err, errlen, "out of memory");
            memcpy(s, a->s, a->slen);
            s[a->slen] = 0;
            pf_str(o, &sp, s);
            if (s != stack)
                free(s);
            continue;
        }
        int stk = a->type == D_V_KSTACK || a->type == D_V_USTACK;
        if (sp.conv == 'k' || sp.conv == 'K' || stk) {
            if (!stk || (sp.conv != 'k' && sp.conv != 'K'))
                return util_fail(err, errlen, "conversion #%d (%%%c) is given %s", n, sp.conv,
                                 stk ? "a stack" : "a value that is not a stack");
            d_print_stack_key(o, sy, a, &sp);
            continue;
        }
        if (!is_int(a))
            return util_fail(err, errlen, "conversion #%d (%%%c) is given a string", n, sp.conv);
        if (sp.conv == 'a' || sp.conv == 'A') {
            char s[512];
            uint64_t addr = (uint64_t)at_size(a->i, a->size, 0);
            d_addr2str(sy, addr, sp.conv == 'A', s, sizeof s);
            pf_str(o, &sp, s);
        } else if (sp.conv == 'Y') {
            pf_time(o, &sp, a->i);
        } else if (sp.conv == 'T') {
            pf_time822(o, &sp, a->i);
        } else if (sp.conv == 'C') {
            /* the value as a char of its own size (DTrace's pfprint_echr) */
            char ch = (char)at_size(a->i, a->size ? a->size : 8, 1);
            pf_estr(o, &sp, &ch, 1);
        } else {
            d_pf_int(o, &sp, a->i, a->size ? a->size : 8, is_signed_type(a));
        }
    }
    d_out_puts(o, q);
    return k;
}

void d_print_stack_key(d_out *o, const d_symbolizer *sy, const d_value *v, const void *spec)
{
    const d_pfspec *sp = spec;
    int user = v->type == D_V_USTACK;
    d_out_puts(o, "\n");
    for (size_t i = 0; i < v->slen; i++) {
        uint64_t pc;
        memcpy(&pc, v->s + 8 * i, 8);
        if (!pc)
            break;
        char s[512];
        d_addr2str(sy, pc, user, s, sizeof s);
        d_out_pad(o, v->indent);
        if (sp)
            pf_str(o, sp, s);
        else
            d_out_puts(o, s);
        d_out_puts(o, "\n");
    }
}
