/* io_prov.c - the io provider (see io_prov.h). */
#include "io_prov.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int io_recipe(const uint64_t r[3], unsigned src, int load, int32_t load_off, uint64_t out[3])
{
    struct hvt_sdt_arg a, bio;
    out[0] = out[1] = out[2] = 0;
    if (src >= HVT_SDT_ARGS || hvt_sdt_arg_get(r, src, &a))
        return -1;
    if (!load) {
        bio = a;                           /* the bio as the tracepoint passes it */
    } else {
        /* a load of the request's bio: [reg + disp + off]; the request must be a whole
         * register (REG) or a register plus a displacement (LEA), uncut */
        if ((a.op != HVT_SDT_REG && a.op != HVT_SDT_LEA) || a.size != 3)
            return -1;
        int64_t d = (int64_t)a.disp + load_off;
        if (d >= (1 << (HVT_SDT_DISP_BITS - 1)) || d < -(1 << (HVT_SDT_DISP_BITS - 1)))
            return -1;
        bio = (struct hvt_sdt_arg){ .op = HVT_SDT_LOAD, .reg = a.reg, .size = 3, .sign = 0, .disp = (int32_t)d };
    }
    struct hvt_sdt_arg zero = { .op = HVT_SDT_IMM, .size = 3 };
    hvt_sdt_arg_put(out, 0, &bio);
    hvt_sdt_arg_put(out, 1, &bio);
    hvt_sdt_arg_put(out, 2, &zero);
    return hvt_sdt_recipe_check(out);
}

/* Append the sites of tracepoint p to io point q, each recipe rewritten; the reason on a
 * refusal (owned by io). */
static int take(io_table *io, sdt_point *q, const sdt_point *p, unsigned src, int load, int32_t off,
                char **why)
{
    if (!p || p->unsafe || !p->nsites) {
        if (!*why && asprintf(why, "its tracepoint %s is not offered: %s", p ? p->event : "(missing)",
                              p && p->unsafe ? p->unsafe : "no site") < 0)
            *why = NULL;
        return *why ? 0 : -1;
    }
    sdt_site *ns = realloc(q->sites, (q->nsites + p->nsites) * sizeof *ns);
    if (!ns)
        return -1;
    q->sites = ns;
    for (uint32_t i = 0; i < p->nsites; i++) {
        sdt_site s = p->sites[i];
        s.refused = NULL;
        if (io_recipe(p->sites[i].recipe, src, load, off, s.recipe)) {
            if (!*why && asprintf(why, "%s's argument at %llx is not a register the bio can be read from",
                                  p->event, (unsigned long long)s.site) < 0)
                *why = NULL;
            return *why ? 0 : -1;
        }
        q->sites[q->nsites++] = s;
    }
    (void)io;
    return 0;
}

int probe_list_add_io(probe_list *l, const sdt_table *t, const btf_info *btf, io_table *io,
                      char *err, size_t errlen)
{
    memset(io, 0, sizeof *io);
    uint32_t rq = btf ? btf_find_struct(btf, "request") : 0;
    btf_member m;
    int32_t bio_off = 0;
    if (rq && btf_member_find(btf, rq, "bio", &m) == 0 && m.bit_offset % 8 == 0)
        bio_off = (int32_t)(m.bit_offset / 8);
    else if (asprintf(&io->why[1], "struct request has no bio member in the kernel's BTF") < 0)
        goto nomem;
    static const char *const names[4] = { "start", "done", "wait-start", "wait-done" };
    for (int k = 0; k < 2; k++) {
        io->pt[k] = (sdt_point){ .event = (char *)names[k], .group = "vmlinux", .nargs = 3 };
        if (k == 0 && take(io, &io->pt[0], sdt_find(t, "block_bio_queue"), 0, 0, 0, &io->why[0]))
            goto nomem;
        if (k == 1 && !io->why[1] &&
            (take(io, &io->pt[1], sdt_find(t, "block_bio_complete"), 1, 0, 0, &io->why[1]) ||
             take(io, &io->pt[1], sdt_find(t, "block_rq_complete"), 0, 1, bio_off, &io->why[1])))
            goto nomem;
    }
    /* wait-start and wait-done: submit_bio_wait's entry, whose first argument is the bio, and
     * its returns (the D compiler keeps the bio from the entry in a thread-local) */
    const probe_desc *wait[2] = { NULL, NULL };
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->p[i].provider, "fbt") && !strcmp(l->p[i].module, "kernel") &&
            !strcmp(l->p[i].function, "submit_bio_wait") && (l->p[i].kind == PL_ENTRY || l->p[i].kind == PL_RETURN))
            wait[l->p[i].kind == PL_RETURN] = &l->p[i];
    for (int k = 0; k < 2; k++)
        if ((!wait[k] || wait[k]->unsafe) && asprintf(&io->why[2 + k], "no fbt probe on submit_bio_wait") < 0)
            goto nomem;
    probe_desc *np = realloc(l->p, (l->n + 4) * sizeof *np);
    if (!np)
        goto nomem;
    l->p = np;
    for (int k = 0; k < 4; k++) {
        probe_desc d = { .id = (uint32_t)l->n + 1, .provider = "io", .module = "vmlinux", .function = "",
                         .name = names[k], .unsafe = io->why[k] };
        if (k < 2) {
            d.kind = PL_ADDR;
            d.sdt = &io->pt[k];
            d.lo = io->pt[k].nsites ? io->pt[k].sites[0].site : 0;
            d.hi = d.lo + 1;
        } else {
            d.kind = k == 2 ? PL_ENTRY : PL_RETURN;
            d.lo = wait[k - 2] ? wait[k - 2]->lo : 0;
            d.hi = wait[k - 2] ? wait[k - 2]->hi : 0;
        }
        l->p[l->n++] = d;
    }
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    io_free(io);
    return -1;
}

void io_free(io_table *io)
{
    for (int k = 0; k < 2; k++)
        free(io->pt[k].sites);
    for (int k = 0; k < 4; k++)
        free(io->why[k]);
    memset(io, 0, sizeof *io);
}
