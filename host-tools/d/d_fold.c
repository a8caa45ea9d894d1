/* d_fold.c - folded stacks and flame graphs from a stack-keyed aggregation. See d_fold.h. */
#include "d_fold.h"
#include "flame.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int d_fold_pick(const dprog *p)
{
    for (int i = 0; i < p->naggs; i++) {
        const d_agg *a = &p->aggs[i];
        if (a->fn != HVT_DIF_AGG_COUNT && a->fn != HVT_DIF_AGG_SUM)
            continue;
        for (int k = 0; k < a->nkeys; k++)
            if (a->keys[k].type == D_V_KSTACK || a->keys[k].type == D_V_USTACK)
                return i;
    }
    return -1;
}

/* Frames of one line: the keys' frames, each a name of at most NAME bytes. */
#define FOLD_MAX (HVT_DIF_TUPLE_MAX * (HVT_DIF_STACKKEY_MAX + 1))
#define NAME 160
struct fold {
    flame *fl;
    const ksym_table *syms;
    int64_t slide;
    int failed;
    char names[FOLD_MAX][NAME];
    const char *frames[FOLD_MAX];
};

static const char *kname(struct fold *f, char *buf, uint64_t pc, int exact)
{
    uint64_t off, link = pc - (uint64_t)f->slide - (exact ? 0 : 1);
    int64_t i = f->syms ? ksym_lookup(f->syms, link, &off) : -1;
    if (i < 0)
        snprintf(buf, NAME, "0x%" PRIx64, pc);
    else
        snprintf(buf, NAME, "%s", ksym_name(f->syms, (uint32_t)i));
    return buf;
}

static void fold_entry(void *ctx, const d_value *k, int nk, int64_t value)
{
    struct fold *f = ctx;
    int n = 0;
    if (value <= 0)
        return;
    for (int i = 0; i < nk; i++) {
        const d_value *v = &k[i];
        if (v->type == D_V_KSTACK || v->type == D_V_USTACK) {
            uint64_t w = (uint64_t)v->i;
            int user = v->type == D_V_USTACK;
            if (!user && (w & HVT_DIF_SK_FROM_USER) && n < FOLD_MAX)
                f->frames[n++] = "[user]";
            for (size_t j = v->slen; j-- > 0 && n < FOLD_MAX;) {
                uint64_t pc;
                memcpy(&pc, v->s + 8 * j, 8);
                int exact = j == 0 || (j < 32 && (hvt_dif_sk_exact(w) >> j) & 1);
                if (user)
                    snprintf(f->names[n], NAME, "0x%" PRIx64, pc);
                else
                    kname(f, f->names[n], pc, exact);
                f->frames[n] = f->names[n];
                n++;
            }
            continue;
        }
        if (n == FOLD_MAX)
            break;
        if (v->type == D_V_STR)
            snprintf(f->names[n], NAME, "%.*s", (int)(v->slen < NAME - 1 ? v->slen : NAME - 1), v->s);
        else if (v->type == D_V_KSYM)
            kname(f, f->names[n], (uint64_t)v->i, 1);
        else if (v->type == D_V_PTR)
            snprintf(f->names[n], NAME, "0x%" PRIx64, (uint64_t)v->i);
        else if (v->type == D_V_UINT)
            snprintf(f->names[n], NAME, "%" PRIu64, (uint64_t)v->i);
        else
            snprintf(f->names[n], NAME, "%" PRId64, v->i);
        f->frames[n] = f->names[n];
        n++;
    }
    if (flame_add(f->fl, f->frames, n, (uint64_t)value) < 0)
        f->failed = 1;
}

int d_fold_write(d_aggs *a, const dprog *p, int agg, const ksym_table *syms, int64_t slide, const char *path,
                 int svg)
{
    struct fold *f = calloc(1, sizeof *f);
    if (!f || !(f->fl = flame_new())) {
        free(f);
        fprintf(stderr, "hvt: out of memory\n");
        return -1;
    }
    f->syms = syms;
    f->slide = slide;
    int rc = d_aggs_walk(a, agg, fold_entry, f);
    FILE *out = rc == 0 && !f->failed ? fopen(path, "w") : NULL;
    if (out) {
        char title[128];
        snprintf(title, sizeof title, "hvtrace @%s", p->aggs[agg].name);
        rc = svg ? flame_write_svg(f->fl, out, title) : flame_write_folded(f->fl, out);
        if (fclose(out) != 0)
            rc = -1;
    } else {
        rc = -1;
    }
    if (rc < 0)
        fprintf(stderr, "hvt: writing %s from @%s: %s\n", path, p->aggs[agg].name,
                f->failed ? "a stack did not fold" : strerror(errno));
    else
        fprintf(stderr, "hvt: %s written from @%s (%zu distinct stacks, %llu samples)\n", path,
                p->aggs[agg].name, flame_stacks(f->fl), (unsigned long long)flame_total(f->fl));
    flame_free(f->fl);
    free(f);
    return rc;
}
