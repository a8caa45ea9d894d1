/* util: small shared helpers for the host tools.
 * Contract: every parse error is reported as "FILE: offset 0xN: message" through util_err(),
 * never by crashing; functions that can fail return -1 (or NULL) after reporting. Byte readers
 * are little-endian and bounds-checked by their callers. */
#ifndef HVT_UTIL_H
#define HVT_UTIL_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *data;
    size_t len;
} util_buf;

/* Set to silence util_err (the fuzzers do: they feed millions of bad inputs). */
extern int util_err_quiet;
/* Report an error about `file` at byte `offset` (printf-style message) on stderr. */
void util_err(const char *file, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Read a whole file; returns 0 or -1 (error reported). */
int util_read_file(const char *path, util_buf *out);
/* Write a whole file atomically (temp + rename); returns 0 or -1. */
int util_write_file(const char *path, const void *data, size_t len);
/* mkdir -p; returns 0 or -1. */
int util_mkdirs(const char *path);
void util_buf_free(util_buf *b);

static inline uint16_t util_le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint32_t util_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t util_le64(const uint8_t *p)
{
    return (uint64_t)util_le32(p) | (uint64_t)util_le32(p + 4) << 32;
}
/* Does [off, off+len) fit in a buffer of size `size`? (overflow-safe) */
static inline int util_fits(size_t size, uint64_t off, uint64_t len)
{
    return off <= size && len <= size - off;
}
/* 2^64 / golden ratio: multiplier for Fibonacci hashing of integer keys. */
#define UTIL_GOLDEN64 0x9e3779b97f4a7c15ull
/* Glob match (*, ?, [..]) of a whole string, via fnmatch. */
int util_glob(const char *pattern, const char *s);
/* Monotonic seconds. */
double util_now(void);
/* Format a reason into err (errlen bytes; nothing when err is NULL) and return -1: the error
 * path of parsers that say why they refused their input. */
int util_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif
