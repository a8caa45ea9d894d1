/* d_consume.c - see d_consume.h: setup, the walk of records and the aggregation entry points.
 * Checking a record is d_records.c's, printing it d_print.c's. */
#include "d_consume_priv.h"
#include "hvt_probe.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* --- setup --- */

static int probe_cmp(const void *a, const void *b, void *ctx)
{
    const dprog *p = ctx;
    uint32_t x = p->probes[*(const int *)a].id, y = p->probes[*(const int *)b].id;
    return x < y ? -1 : x > y;
}

/* For the sort below: each entry's DTrace probe id is in its epid field until numbered */
static int epid_clause_cmp(const void *a, const void *b)
{
    const depid *x = a, *y = b;
    if (x->clause != y->clause)
        return x->clause < y->clause ? -1 : 1;
    return x->epid < y->epid ? -1 : x->epid > y->epid;
}

/* DTrace numbers its enabled probes (EPIDs) clause by clause, each clause's probes by DTrace id
 * (BEGIN, END, ERROR first), as the hypervisor's epid:
 * the image lists, per probe (by id), the clauses it runs. */
static void build_epids(d_consumer *c)
{
    const dprog *p = c->p;
    struct hvt_dif_hdr h;
    if (!p->image || p->image_len < sizeof h)
        return;
    memcpy(&h, p->image, sizeof h);
    uint64_t pe = (uint64_t)h.off_probes + (uint64_t)h.nprobes * sizeof(struct hvt_dif_probe);
    uint64_t ce = (uint64_t)h.off_probe_clauses + (uint64_t)h.nprobe_clauses * 2;
    if (h.magic != HVT_DIF_MAGIC || pe > p->image_len || ce > p->image_len || !h.nprobe_clauses)
        return;
    depid *e = calloc(h.nprobe_clauses, sizeof *e);
    if (!e)
        return;
    uint32_t n = 0;
    for (uint32_t i = 0; i < h.nprobes; i++) {
        struct hvt_dif_probe pr;
        memcpy(&pr, p->image + h.off_probes + i * sizeof pr, sizeof pr);
        for (uint32_t j = 0; j < pr.nclauses && (uint64_t)pr.clauses + j < h.nprobe_clauses && n < h.nprobe_clauses; j++) {
            uint16_t cl;
            memcpy(&cl, p->image + h.off_probe_clauses + ((uint64_t)pr.clauses + j) * 2, 2);
            e[n++] = (depid){pr.id, cl, d_dtrace_id_of(c, pr.id)};
        }
    }
    qsort(e, n, sizeof *e, epid_clause_cmp);
    for (uint32_t i = 0; i < n; i++)
        e[i].epid = i + 1;
    qsort(e, n, sizeof *e, d_epid_cmp);
    c->epids = e;
    c->nepids = n;
}

d_consumer *d_consume_new(const dprog *p, const d_consume_cfg *cfg)
{
    d_consumer *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->p = p;
    c->cfg = *cfg;
    c->out = cfg->out;
    c->err = cfg->err;
    c->strsize = 256;
    if (p->image && p->image_len >= sizeof(struct hvt_dif_hdr)) {
        struct hvt_dif_hdr h;
        memcpy(&h, p->image, sizeof h);
        if (h.magic == HVT_DIF_MAGIC && h.strsize >= 2 && h.strsize <= HVT_DIF_STRSIZE_MAX)
            c->strsize = h.strsize;
    }
    c->quiet = p->quiet;
    c->flowindent = p->flowindent;
    c->aopt = (d_aggopt){p->aggsortkey, p->aggsortrev, p->aggsortkeypos, p->aggsortpos, p->aggzoom, p->rawbytes};
    c->rawbytes = p->rawbytes;
    c->stackindent = p->stackindent_set ? p->stackindent : 14;   /* DTrace's default */
    c->aggs = d_aggs_new(p, c->strsize, &cfg->sym);
    c->probe_by_id = malloc(((size_t)p->nprobes + 1) * sizeof *c->probe_by_id);
    if (!c->aggs || !c->probe_by_id) {
        d_consume_free(c);
        return NULL;
    }
    for (int i = 0; i < p->nprobes; i++)
        c->probe_by_id[i] = i;
    qsort_r(c->probe_by_id, (size_t)p->nprobes, sizeof *c->probe_by_id, probe_cmp, (void *)p);
    build_epids(c);
    for (int i = 0; i < p->naggs; i++)
        if (!d_aggs_usable(c->aggs, i))
            d_say(c, "@%s: %u values do not fit its function and parameters: its records will be refused",
                  p->aggs[i].name ? p->aggs[i].name : "", p->aggs[i].nbuckets);
    return c;
}

void d_consume_free(d_consumer *c)
{
    if (!c)
        return;
    d_aggs_free(c->aggs);
    free(c->probe_by_id);
    free(c->epids);
    free(c->flow);
    free(c->vals);
    free(c->acts);
    free(c);
}

static int consume(d_consumer *c, const uint8_t *rec, size_t len, const struct hvt_drec *next)
{
    struct hvt_drec r;
    if (len < HDR) {
        d_say(c, "malformed record (%zu bytes, shorter than a record header)", len);
        return D_CONSUME_BAD;
    }
    memcpy(&r, rec, HDR);
    if (r.len < HDR || r.len > len || r.len % 8) {
        d_say(c, "malformed record from CPU %u (length %u in %zu bytes)", r.cpu, r.len, len);
        return D_CONSUME_BAD;
    }
    switch (r.type) {
    case HVT_DREC_DATA:
        return d_do_data(c, &r, rec + HDR, next);
    case HVT_DREC_ERROR:
        return d_do_error(c, &r);
    case HVT_DREC_DROPS:
        d_say(c, "%llu drop%s on CPU %u", (unsigned long long)r.arg, r.arg > 1 ? "s" : "", r.cpu);
        return D_CONSUME_OK;
    case HVT_DREC_DYNDROPS:
        d_say(c, "%llu dynamic variable drop%s", (unsigned long long)r.arg, r.arg > 1 ? "s" : "");
        return D_CONSUME_OK;
    case HVT_DREC_AGGDROPS:                /* DTrace's wording for keys no buffer had room for */
        d_say(c, "%llu aggregation drop%s on CPU %u", (unsigned long long)r.arg,
              r.arg > 1 ? "s" : "", r.cpu);
        return D_CONSUME_OK;
    case HVT_DREC_SPECDROPS:               /* libdtrace's _dt_droptab wording */
        d_say(c, "%llu speculative drop%s", (unsigned long long)r.arg, r.arg > 1 ? "s" : "");
        return D_CONSUME_OK;
    case HVT_DREC_SPECBUSY: case HVT_DREC_SPECUNAVAIL:
        d_say(c, "%llu failed speculation%s %s", (unsigned long long)r.arg, r.arg > 1 ? "s" : "",
              r.type == HVT_DREC_SPECBUSY ? "(available buffer(s) still busy)"
                                         : "(no speculative buffer available)");
        return D_CONSUME_OK;
    default:
        d_say(c, "malformed record from CPU %u (type %u)", r.cpu, r.type);
        return D_CONSUME_BAD;
    }
}

int d_consume_record(d_consumer *c, const void *rec, size_t len)
{
    return consume(c, rec, len, NULL);
}

int d_consume_buffer(d_consumer *c, const void *buf, size_t len)
{
    const uint8_t *b = buf;
    int ret = D_CONSUME_OK;
    for (size_t at = 0; at < len;) {
        struct hvt_drec r, nx;
        if (len - at < HDR) {
            d_say(c, "malformed record (%zu bytes left, shorter than a record header)", len - at);
            return D_CONSUME_BAD;
        }
        memcpy(&r, b + at, HDR);
        if (r.len < HDR || r.len > len - at || r.len % 8) {
            d_say(c, "malformed record from CPU %u (length %u in %zu bytes): rest of the buffer skipped", r.cpu,
                r.len, len - at);
            return D_CONSUME_BAD;
        }
        const struct hvt_drec *next = NULL;
        if (len - at - r.len >= HDR) {
            memcpy(&nx, b + at + r.len, HDR);
            next = &nx;
        }
        if (consume(c, b + at, r.len, next) == D_CONSUME_EXIT)
            ret = D_CONSUME_EXIT;
        at += r.len;
    }
    return ret;
}

int d_consume_buffer_uses_aggs(const d_consumer *c, const void *buf, size_t len)
{
    const uint8_t *b = buf;
    for (size_t at = 0; len - at >= HDR;) {
        struct hvt_drec r;
        memcpy(&r, b + at, HDR);
        if (r.len < HDR || r.len > len - at)
            break;                         /* consuming it will say what is wrong */
        if (r.type == HVT_DREC_DATA && r.clause < c->p->nclauses) {
            const d_clause *cl = &c->p->clauses[r.clause];
            for (int i = 0; i < cl->nacts; i++)
                switch (cl->acts[i].kind) {
                case D_ACT_PRINTA: case D_ACT_CLEAR: case D_ACT_TRUNC: case D_ACT_NORMALIZE:
                case D_ACT_DENORMALIZE:
                    return 1;
                }
        }
        at += r.len;
    }
    return 0;
}

int d_consume_exit_status(const d_consumer *c, int *status)
{
    if (c->exited && status)
        *status = c->status;
    return c->exited;
}

int d_consume_snap_begin(d_consumer *c, unsigned cpu, uint64_t gen)
{
    char why[256];
    int rc = d_aggs_snap_begin(c->aggs, cpu, gen, why, sizeof why);
    if (rc < 0)
        d_say(c, "aggregation snapshot: %s", why);
    return rc;
}

int d_consume_snap_add(d_consumer *c, unsigned cpu, uint64_t gen, const void *recs, size_t len)
{
    char why[256];
    int rc = d_aggs_snap_add(c->aggs, cpu, gen, recs, len, why, sizeof why);
    if (rc < 0)
        d_say(c, "malformed aggregation record from CPU %u (%s)", cpu, why);
    return rc;
}

int d_consume_snap_end(d_consumer *c, unsigned cpu, uint64_t gen)
{
    char why[256];
    int rc = d_aggs_snap_end(c->aggs, cpu, gen, why, sizeof why);
    if (rc < 0)
        d_say(c, "aggregation snapshot: %s", why);
    return rc;
}

int d_consume_end(d_consumer *c)
{
    d_out_puts(c->out, "\n");
    return d_aggs_print_rest(c->aggs, c->out, &c->aopt);
}

int d_consume_quiet(const d_consumer *c) { return c->quiet; }
d_aggs *d_consume_aggs(d_consumer *c) { return c->aggs; }
