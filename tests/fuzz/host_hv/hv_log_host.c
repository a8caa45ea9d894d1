/* hv_log_host.c - the hypervisor's logging and panic for host fuzz targets (see hv_api.h):
 * quiet unless HVT_FUZZ_VERBOSE is set; a panic is a finding (abort). */
#include <stdio.h>
#include <stdlib.h>

bool hv_host_verbose(void)
{
    static int verbose = -1;
    if (verbose < 0)
        verbose = getenv("HVT_FUZZ_VERBOSE") != NULL;
    return verbose;
}

void hv_vlog(const char *fmt, va_list ap)
{
    if (hv_host_verbose())
        vfprintf(stderr, fmt, ap);
}

void hv_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hv_vlog(fmt, ap);
    va_end(ap);
}

void hv_log_lock(void) {}
void hv_log_unlock(void) {}

int hv_snprintf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return r;
}

void hv_panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hv_panic: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    abort();
}
