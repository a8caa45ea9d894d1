/* libFuzzer target: the D compiler on any text, with a fixed small probe list; every image it
 * accepts must pass the hypervisor's verifier (the compiler is not trusted, but it should
 * never hand over what the hypervisor refuses). */
#include "d_compile.h"
#include "dif.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int resolve(void *ctx, const char *desc, d_probe_sink *sink, char *err, size_t errlen)
{
    (void)ctx; (void)err; (void)errlen;
    static const char *const fns[] = { "vfs_read", "vfs_write", "do_sys_openat2" };
    for (unsigned i = 0; i < 3; i++) {
        char full[128];
        snprintf(full, sizeof full, "fbt:kernel:%s:entry", fns[i]);
        if (strstr(desc, fns[i]) || !strcmp(desc, "fbt:::entry") || strchr(desc, '*'))
            d_probe_add(sink, i + 1, "fbt", "kernel", fns[i], "entry");
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *devnull;
    if (!devnull)
        devnull = fopen("/dev/null", "w");
    d_options o = { .resolve = resolve, .begin_id = 100, .end_id = 101, .error_id = 102,
                    .err = devnull };
    dprog p;
    memset(&p, 0, sizeof p);
    if (d_compile("fuzz.d", (const char *)data, size, &o, &p) == 0) {
        struct dif_verr e;
        if (dif_verify(p.image, p.image_len, &e) != DIF_OK) {
            fprintf(stderr, "the verifier refused a compiled image: clause %d insn %d: %s\n",
                    e.clause, e.insn, e.reason);
            abort();
        }
        dprog_free(&p);
    }
    return 0;
}
