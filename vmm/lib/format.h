/* format.h - printf-style formatting into a bounded buffer (never overruns; always NUL-ends
 * when n > 0; returns the length the full output would have had). */
#ifndef HVT_FORMAT_H
#define HVT_FORMAT_H
#include <stdarg.h>
#include <stddef.h>
int hv_vsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
#endif
