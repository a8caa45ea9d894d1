/*
 * format.c - hv_vsnprintf: a small printf for the hypervisor log. Supports %s %c %d %i %u %x
 * %X %p %%, the l/ll/z length modifiers, a field width and '0'/'-' flags. No floating point
 * (the hypervisor has no FPU state of its own).
 */
#include "hv_api.h"
#include "format.h"

struct out { char *buf; size_t n, pos; };

static void put(struct out *o, char c)
{
    if (o->pos + 1 < o->n)
        o->buf[o->pos] = c;
    o->pos++;
}

static void put_num(struct out *o, uint64_t v, unsigned base, bool neg, int width, char pad,
                    bool left, bool upper)
{
    char tmp[24];
    int len = 0;
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        tmp[len++] = digits[v % base];
        v /= base;
    } while (v);
    int total = len + (neg ? 1 : 0);
    if (!left && pad == '0' && neg)
        put(o, '-');
    if (!left)
        for (int i = total; i < width; i++)
            put(o, pad);
    if (neg && !(pad == '0' && !left))
        put(o, '-');
    while (len)
        put(o, tmp[--len]);
    if (left)
        for (int i = total; i < width; i++)
            put(o, ' ');
}

int hv_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
    struct out o = { buf, n, 0 };
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            put(&o, *fmt);
            continue;
        }
        fmt++;
        bool left = false;
        char pad = ' ';
        int width = 0, lng = 0;
        for (;; fmt++) {
            if (*fmt == '-') left = true;
            else if (*fmt == '0') pad = '0';
            else break;
        }
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (*fmt++ - '0');
        while (*fmt == 'l' || *fmt == 'z') {
            lng++;
            fmt++;
        }
        switch (*fmt) {
        case 'd': case 'i': {
            int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
            put_num(&o, v < 0 ? (uint64_t)-v : (uint64_t)v, 10, v < 0, width, pad, left, false);
            break;
        }
        case 'u':
            put_num(&o, lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 10, false, width, pad, left, false);
            break;
        case 'x': case 'X':
            put_num(&o, lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 16, false, width, pad, left, *fmt == 'X');
            break;
        case 'p':
            put(&o, '0'); put(&o, 'x');
            put_num(&o, (uint64_t)(uintptr_t)va_arg(ap, void *), 16, false, 16, '0', false, false);
            break;
        case 'c':
            put(&o, (char)va_arg(ap, int));
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s) s = "(null)";
            int len = (int)strlen(s);
            if (!left) for (int i = len; i < width; i++) put(&o, ' ');
            while (*s) put(&o, *s++);
            if (left) for (int i = len; i < width; i++) put(&o, ' ');
            break;
        }
        case '%':
            put(&o, '%');
            break;
        case '\0':
            fmt--;
            break;
        default:
            put(&o, '%');
            put(&o, *fmt);
        }
    }
    if (n)
        buf[o.pos < n ? o.pos : n - 1] = '\0';
    return (int)o.pos;
}

int hv_snprintf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = hv_vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return r;
}
