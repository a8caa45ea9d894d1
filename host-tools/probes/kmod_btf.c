/* kmod_btf.c - several modules' types over the kernel's, as one BTF (see kmod_btf.h). */
#include "kmod_btf.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* BTF kinds (include/uapi/linux/btf.h) whose record's third word is a type id */
static int refers(unsigned kind)
{
    return kind == 2 || (kind >= 8 && kind <= 14) || kind == 17 || kind == 18;
}

static uint32_t rd(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static void wr(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }

/* One split record (len bytes at r) moved past the splits before it: its type ids from the
 * kernel's count on by dt, its string offsets past the kernel's strings by ds. */
static int move_record(uint8_t *r, size_t len, uint32_t nbase, uint32_t dt, uint32_t sbase, uint32_t ds)
{
#define TY(p) do { uint32_t t_ = rd(p); if (t_ >= nbase) wr(p, t_ + dt); } while (0)
#define ST(p) do { uint32_t s_ = rd(p); if (s_ >= sbase) wr(p, s_ + ds); } while (0)
    if (len < 12)
        return -1;
    uint32_t info = rd(r + 4), vlen = info & 0xffff, kind = (info >> 24) & 0x1f;
    ST(r);
    if (refers(kind))
        TY(r + 8);
    uint8_t *x = r + 12;
    size_t need = kind == 1 ? 4 : kind == 3 ? 12 : kind == 4 || kind == 5 ? 12u * vlen : kind == 6 ? 8u * vlen
                : kind == 13 ? 8u * vlen : kind == 14 ? 4 : kind == 15 ? 12u * vlen : kind == 17 ? 4
                : kind == 19 ? 12u * vlen : 0;
    if (len != 12 + need)
        return -1;                         /* not the record this kind has */
    for (uint32_t i = 0; i < (kind == 3 ? 1 : vlen); i++) {
        switch (kind) {
        case 3: TY(x); TY(x + 4); break;                          /* array: elem, index type */
        case 4: case 5: ST(x + 12 * i); TY(x + 12 * i + 4); break; /* members */
        case 6: ST(x + 8 * i); break;                              /* enumerators */
        case 19: ST(x + 12 * i); break;
        case 13: ST(x + 8 * i); TY(x + 8 * i + 4); break;         /* parameters */
        case 15: TY(x + 12 * i); break;                           /* a section's variables */
        default: break;
        }
    }
    return 0;
#undef TY
#undef ST
}

int kmod_btfs_read(const char *const *paths, const char *const *names, int n, const btf_info *kbtf,
                   kmod_btfs *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t tcap = 0, scap = 0, tlen = 0, slen = 0;
    uint8_t *types = NULL;
    char *strs = NULL;
    int rc = -1;
    if (!(out->r = calloc((size_t)(n > 0 ? n : 1), sizeof *out->r))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    uint32_t next_id = kbtf->ntypes;
    for (int k = 0; k < n; k++) {
        kmod_btf one;
        char e2[300];
        if (kmod_btf_read(paths[k], kbtf, &one, e2, sizeof e2)) {
            snprintf(err, errlen, "%s", e2);
            goto out;
        }
        const uint8_t *st = one.btf.types + kbtf->types_len;
        size_t stl = one.btf.types_len - kbtf->types_len, ssl = one.btf.strs_len - kbtf->strs_len;
        if (tlen + stl > tcap) {
            tcap = (tlen + stl) * 2;
            uint8_t *nt = realloc(types, tcap);
            if (!nt) { kmod_btf_free(&one); snprintf(err, errlen, "out of memory"); goto out; }
            types = nt;
        }
        if (slen + ssl > scap) {
            scap = (slen + ssl) * 2;
            char *ns = realloc(strs, scap);
            if (!ns) { kmod_btf_free(&one); snprintf(err, errlen, "out of memory"); goto out; }
            strs = ns;
        }
        memcpy(types + tlen, st, stl);
        memcpy(strs + slen, one.btf.strs + kbtf->strs_len, ssl);
        /* each record of this split: ids and strings past the splits before it */
        for (uint32_t id = kbtf->ntypes; id < one.btf.ntypes; id++) {
            size_t a = one.btf.type_off[id], b = id + 1 < one.btf.ntypes ? one.btf.type_off[id + 1] : one.btf.types_len;
            if (a < kbtf->types_len || b < a ||
                move_record(types + tlen + (a - kbtf->types_len), b - a, kbtf->ntypes, next_id - kbtf->ntypes,
                            (uint32_t)kbtf->strs_len, (uint32_t)slen)) {
                snprintf(err, errlen, "%s: BTF type %u is not laid out as its kind says", paths[k], id);
                kmod_btf_free(&one);
                goto out;
            }
        }
        snprintf(out->r[k].name, sizeof out->r[k].name, "%s", names[k]);
        out->r[k].lo = next_id;
        next_id += one.btf.ntypes - kbtf->ntypes;
        out->r[k].hi = next_id;
        tlen += stl;
        slen += ssl;
        kmod_btf_free(&one);
    }
    size_t tt = kbtf->types_len + tlen, ss = kbtf->strs_len + slen, len = 24 + tt + ss;
    uint8_t *b = malloc(len);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    memcpy(b, kbtf->blob, 8);              /* magic, version, flags (the header rewritten) */
    uint32_t h[5] = { 24, 0, (uint32_t)tt, (uint32_t)tt, (uint32_t)ss };
    memcpy(b + 4, h, sizeof h);
    memcpy(b + 24, kbtf->types, kbtf->types_len);
    if (tlen)
        memcpy(b + 24 + kbtf->types_len, types, tlen);
    memcpy(b + 24 + tt, kbtf->strs, kbtf->strs_len);
    if (slen)
        memcpy(b + 24 + tt + kbtf->strs_len, strs, slen);
    out->blob = b;
    out->n = n;
    if (btf_parse(&out->btf, "modules", b, len) || out->btf.ntypes != next_id) {
        snprintf(err, errlen, "the modules' types do not parse as one");
        goto out;
    }
    rc = 0;
out:
    free(types);
    free(strs);
    if (rc)
        kmod_btfs_free(out);
    return rc;
}

void kmod_btfs_free(kmod_btfs *m)
{
    btf_free(&m->btf);
    free(m->blob);
    free(m->r);
    memset(m, 0, sizeof *m);
}
