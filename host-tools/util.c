/* util: see util.h. */
#include "util.h"
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int util_err_quiet;

void util_err(const char *file, uint64_t offset, const char *fmt, ...)
{
    if (util_err_quiet) return;
    va_list ap;
    fprintf(stderr, "hvt: %s: offset 0x%llx: ", file, (unsigned long long)offset);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

int util_read_file(const char *path, util_buf *out)
{
    out->data = NULL;
    out->len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "hvt: %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        fprintf(stderr, "hvt: %s: not a regular file\n", path);
        fclose(f);
        return -1;
    }
    size_t len = (size_t)st.st_size;
    uint8_t *d = malloc(len ? len : 1);
    if (!d || fread(d, 1, len, f) != len) {
        fprintf(stderr, "hvt: %s: read failed\n", path);
        free(d);
        fclose(f);
        return -1;
    }
    fclose(f);
    out->data = d;
    out->len = len;
    return 0;
}

int util_write_file(const char *path, const void *data, size_t len)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        fprintf(stderr, "hvt: %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    int ok = fwrite(data, 1, len, f) == len;
    ok &= fclose(f) == 0;
    if (!ok || rename(tmp, path) != 0) {
        fprintf(stderr, "hvt: %s: write failed\n", path);
        unlink(tmp);
        return -1;
    }
    return 0;
}

int util_mkdirs(const char *path)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = 0;
        if (mkdir(p, 0755) != 0 && errno != EEXIST) return -1;
        *s = '/';
    }
    return mkdir(p, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

void util_buf_free(util_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = 0;
}

int util_glob(const char *pattern, const char *s) { return fnmatch(pattern, s, 0) == 0; }

double util_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int util_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}
