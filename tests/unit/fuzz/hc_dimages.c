/*
 * hc_dimages.c - fuzz_hypercall's D program images: `hc_dimages OUTDIR FILE...` compiles each
 * D program with the host's compiler (host-tools/d) and writes the image the hypervisor
 * loads (HVT_HC_PROBE_LOAD_D) to OUTDIR/<basename>.dif, after checking it with the hypervisor's own
 * verifier. Every probe description resolves to a probe of its own (ids from 1), so programs
 * written for the guest's kernel compile without its symbols. Programs that do not compile
 * are skipped (counted): the D tests' texts include deliberate errors.
 */
#include "d_compile.h"
#include "dif.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int resolve(void *ctx, const char *desc, d_probe_sink *sink, char *err, size_t errlen)
{
    unsigned *next = ctx;
    char f[4][64] = { "", "", "", "" };
    sscanf(desc, "%63[^:]:%63[^:]:%63[^:]:%63s", f[0], f[1], f[2], f[3]);
    d_probe_add(sink, (*next)++, f[0], f[1], f[2], f[3]);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned ok = 0, skipped = 0;
    FILE *devnull = fopen("/dev/null", "w");
    for (int i = 2; i < argc; i++) {
        FILE *in = fopen(argv[i], "r");
        static char text[1 << 16];
        size_t n = in ? fread(text, 1, sizeof text - 1, in) : 0;
        if (in)
            fclose(in);
        unsigned next = 1;
        d_options o = { .resolve = resolve, .resolve_ctx = &next, .begin_id = 100, .end_id = 101,
                        .error_id = 102, .err = devnull };
        dprog p;
        memset(&p, 0, sizeof p);
        struct dif_verr e;
        if (!n || d_compile(argv[i], text, n, &o, &p) != 0 || dif_verify(p.image, p.image_len, &e) != DIF_OK) {
            skipped++;
            continue;
        }
        const char *base = strrchr(argv[i], '/');
        char out[4096];
        snprintf(out, sizeof out, "%s/%s.dif", argv[1], base ? base + 1 : argv[i]);
        FILE *f = fopen(out, "wb");
        if (!f || fwrite(p.image, 1, p.image_len, f) != p.image_len || fclose(f) != 0) {
            perror(out);
            return 1;
        }
        dprog_free(&p);
        ok++;
    }
    printf("hc_dimages: %u images in %s, %u programs skipped\n", ok, argv[1], skipped);
    return ok ? 0 : 1;
}
