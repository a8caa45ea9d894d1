/* string.c - the freestanding C library subset the hypervisor and lwIP need (hv_api.h). */
#include "hv_api.h"

/* Large copies and fills go a quadword per iteration: emulators (Bochs) count every iteration
 * of a repeated string instruction, so the ~14 MiB the hypervisor zeroes at start-up would
 * cost 8 times the work byte by byte; on real CPUs both forms are fast. */
#define STRING_BULK 64

void *memcpy(void *d, const void *s, size_t n)
{
    /* rep movsb: short, correct for any alignment, and fast on modern CPUs (ERMSB). */
    void *ret = d;
    if (n >= STRING_BULK) {
        size_t q = n / 8;
        n %= 8;
        __asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(q) :: "memory");
    }
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) :: "memory");
    return ret;
}

void *memmove(void *d, const void *s, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;
    if (dp == sp || n == 0)
        return d;
    if (dp < sp || dp >= sp + n)
        return memcpy(d, s, n);
    while (n--)                         /* overlapping, destination above: copy backwards */
        dp[n] = sp[n];
    return d;
}

void *memset(void *d, int c, size_t n)
{
    void *ret = d;
    if (n >= STRING_BULK) {
        size_t q = n / 8;
        n %= 8;
        __asm__ volatile("rep stosq" : "+D"(d), "+c"(q) : "a"(0x0101010101010101ull * (uint8_t)c) : "memory");
    }
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
    return ret;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] < y[i] ? -1 : 1;
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;
    while (s[n])
        n++;
    return n;
}

int strncmp(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
        if (x != y)
            return x < y ? -1 : 1;
        if (!x)
            return 0;
    }
    return 0;
}

int strcmp(const char *a, const char *b)
{
    return strncmp(a, b, (size_t)-1);
}

int atoi(const char *s)
{
    int sign = 1, v = 0;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '-' || *s == '+')
        sign = (*s++ == '-') ? -1 : 1;
    while (*s >= '0' && *s <= '9')
        v = v * 10 + (*s++ - '0');
    return sign * v;
}
