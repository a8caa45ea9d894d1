/*
 * fuzz_trace_opts.c - libFuzzer target for the tracer's option parser, trace/trace_opts.c:
 * trace_opts_parse() takes the trace= text of hvtrace.cfg (untrusted: whoever can write the
 * ESP) and, through hvt, the command line. The input is the option text (NUL-terminated by the
 * harness, as the loader hands it over).
 * Checks beyond "no crash, no sanitizer report": a refusal always explains itself in a
 * terminated message; an accepted text stays within the table sizes it declares.
 */
#include "trace_opts.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;                        /* config values are bounded (CFG_OPT_MAX) */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = 0;
    static struct trace_opts o;
    char err[256];
    memset(err, 0x55, sizeof err);
    int r = trace_opts_parse(text, &o, err, sizeof err);
    if (r != 0 && (!memchr(err, 0, sizeof err) || !err[0]))
        abort();
    if (r == 0 && (o.nrange > TRACE_MAX_RANGES || o.nstop_at > TRACE_MAX_STOP_AT ||
                   o.nprobe > TRACE_MAX_PROBES || !memchr(o.comm, 0, sizeof o.comm)))
        abort();
    free(text);
    return 0;
}
