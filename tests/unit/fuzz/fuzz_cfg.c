/*
 * fuzz_cfg.c - libFuzzer target for the loader's configuration parser, boot/cfg.c: cfg_parse()
 * reads hvtrace.cfg from the ESP, text anyone with access to that partition can write. Then the
 * trace= value it kept goes through trace_opts_parse() (trace/trace_opts.c), as the hypervisor
 * does with it at boot: the whole path an edited config file takes.
 * Checks beyond "no crash, no sanitizer report": every string field the parser fills stays
 * NUL-terminated inside its buffer, and the report callback gets line numbers that exist.
 */
#include "cfg.h"
#include "trace_opts.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct lines { unsigned max, reports; };

static void report(void *ctx, unsigned line, const char *message)
{
    struct lines *l = ctx;
    if (line == 0 || line > l->max || !message || !message[0])
        abort();                         /* a report must name a real line and say something */
    l->reports++;
}

static void terminated(const char *s, size_t cap)
{
    if (!memchr(s, 0, cap))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cfg c;
    cfg_defaults(&c);
    struct lines l = { 1, 0 };
    for (size_t i = 0; i < size; i++)
        l.max += data[i] == '\n';
    unsigned bad = cfg_parse(&c, (const char *)data, size, report, &l);
    if (bad != l.reports)
        abort();                         /* the count returned is the count reported */
    terminated(c.kernel, sizeof c.kernel);
    terminated(c.initrd, sizeof c.initrd);
    terminated(c.cmdline, sizeof c.cmdline);
    terminated(c.trace, sizeof c.trace);
    terminated(c.net, sizeof c.net);
    static struct trace_opts o;
    char err[256];
    err[0] = 0;
    if (trace_opts_parse(c.trace, &o, err, sizeof err) != 0)
        terminated(err, sizeof err);
    return 0;
}
