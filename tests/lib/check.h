#ifndef HVT_CHECK_H
#define HVT_CHECK_H
/* check.h - the one check facility of hvtrace's host unit tests (header only).
 * Contract:
 *   CHECK(cond, fmt, ...)  one check: counted passed when cond holds, else counted failed and
 *                          printed as "FAIL file:line: message"; without fmt the message is
 *                          cond's own text. fmt is a string literal.
 *   check_passed, check_failed  the two counters, one pair per test binary (every file that
 *                          includes this header counts into it); a test with its own notion of
 *                          a check (a whole replay, a sweep) adds to them directly.
 *   check_summary(name)    prints "NAME: N passed, M failed" and returns the exit status: 0
 *                          when nothing failed, else 1. tests/run.py counts a test's checks
 *                          from that line, so it is the test's last line of output. */
#include <stdarg.h>
#include <stdio.h>

/* Weak so a test of several files shares one pair without a file that owns them. */
__attribute__((weak)) long check_passed, check_failed;

__attribute__((format(printf, 4, 5), unused))
static void check_fail_at(const char *file, int line, const char *cond, const char *fmt, ...)
{
    check_failed++;
    printf("FAIL %s:%d:", file, line);
    if (!fmt[1]) {              /* fmt is just the " " CHECK puts in front: no message given */
        printf(" %s\n", cond);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
}

/* The " " in front joins a literal fmt, and leaves a one-character fmt when there is none. */
#define CHECK(cond, ...)                                                              \
    do {                                                                              \
        if (cond)                                                                     \
            check_passed++;                                                           \
        else                                                                          \
            check_fail_at(__FILE__, __LINE__, #cond, " " __VA_ARGS__);                \
    } while (0)

__attribute__((unused))
static int check_summary(const char *name)
{
    printf("%s: %ld passed, %ld failed\n", name, check_passed, check_failed);
    fflush(stdout);
    return check_failed ? 1 : 0;
}

#endif
