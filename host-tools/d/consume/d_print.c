/* d_print.c - printing a checked record as dtrace(1M)'s chew()/chewrec() and
 * libdtrace's dt_consume_cpu(), dt_flowindent(), dt_handle_err() and drop handlers do. */
#include "d_consume_priv.h"
#include <stdlib.h>
#include <string.h>

/* --- printing --- */

static void print_trace(d_consumer *c, const d_value *v)
{
    char s[512];
    int q = c->quiet;
    switch (v->type) {
    case D_V_STR:         /* rawbytes: the recorded bytes even when they read as text */
        if (c->rawbytes)
            d_print_rawbytes(c->out, v->s, v->slen, c->strsize);
        else
            d_print_bytes(c->out, v->s, v->slen, c->strsize, -33, q);
        return;
    case D_V_KSYM:        /* sym()/func(): DTrace prints these the same under -q */
        d_sym2str(&c->cfg.sym, (uint64_t)v->i, 0, s, sizeof s);
        d_out_printf(c->out, "  %-50s", s);
        return;
    case D_V_INT:         /* dtrace-utils' dt_print_trace: signed by the C type, its widths */
        switch (v->size) {
        case 1: d_out_printf(c->out, q ? "%d" : " %3d", (int8_t)v->i); return;
        case 2: d_out_printf(c->out, q ? "%d" : " %5d", (int16_t)v->i); return;
        case 4: d_out_printf(c->out, q ? "%d" : " %10d", (int32_t)v->i); return;
        default: d_out_printf(c->out, q ? "%lld" : " %19lld", (long long)v->i); return;
        }
    default:              /* unsigned integers and pointers */
        switch (v->size) {
        case 1: d_out_printf(c->out, q ? "%u" : " %3u", (uint8_t)v->i); return;
        case 2: d_out_printf(c->out, q ? "%u" : " %5u", (uint16_t)v->i); return;
        case 4: d_out_printf(c->out, q ? "%u" : " %10u", (uint32_t)v->i); return;
        default: d_out_printf(c->out, q ? "%llu" : " %20llu", (unsigned long long)v->i); return;
        }
    }
}

static void print_stack(d_consumer *c, const struct hvt_drec *r, const dact *d, int user, int frames)
{
    uint64_t pcs[STACK_FRAMES];
    int max = frames > 0 && frames < STACK_FRAMES ? frames : STACK_FRAMES;
    int n = c->cfg.unwind ? c->cfg.unwind(c->cfg.unwind_ctx, r, user, d->rsp, d->blob, d->bloblen, pcs, max) : 0;
    d_out_puts(c->out, "\n");
    for (int i = 0; i < n && i < max && pcs[i]; i++) {
        char s[512];
        d_addr2str(&c->cfg.sym, pcs[i], user, s, sizeof s);
        d_out_pad(c->out, c->stackindent);
        d_out_puts(c->out, s);
        d_out_puts(c->out, "\n");
    }
}

/* ustack(): the pcs the hypervisor recorded, as DTrace's dt_print_ustack prints them: a newline,
 * then each up to the first 0, indented, through the symbolizer (user: none here, so 0x...) */
static void print_ustack(d_consumer *c, const dact *d, int frames)
{
    d_out_puts(c->out, "\n");
    for (uint32_t i = 0; i < d->bloblen && (frames <= 0 || i < (uint32_t)frames); i++) {
        uint64_t pc;
        memcpy(&pc, d->blob + 8 * i, 8);
        if (!pc)
            break;
        char s[512];
        d_addr2str(&c->cfg.sym, pc, 1, s, sizeof s);
        d_out_pad(c->out, c->stackindent);
        d_out_puts(c->out, s);
        d_out_puts(c->out, "\n");
    }
}

static int opt_on(const d_value *v)
{
    if (!v || v->type != D_V_STR)
        return 1;
    static const char *const off[] = {"0", "no", "false", "off", "unset"};
    for (size_t i = 0; i < sizeof off / sizeof *off; i++)
        if (v->slen == strlen(off[i]) && !memcmp(v->s, off[i], v->slen))
            return 0;
    return 1;
}

static void setopt(d_consumer *c, const d_action *a, const d_value *v, int nv)
{
    const char *o = a->fmt ? a->fmt : "";
    const d_value *val = nv > 0 ? &v[0] : NULL;
    int num = val && val->type != D_V_STR ? (int)val->i : 0;
    if (!strcmp(o, "quiet")) c->quiet = opt_on(val);
    else if (!strcmp(o, "flowindent")) c->flowindent = opt_on(val);
    else if (!strcmp(o, "aggsortkey")) c->aopt.sortkey = opt_on(val);
    else if (!strcmp(o, "aggsortrev")) c->aopt.sortrev = opt_on(val);
    else if (!strcmp(o, "aggzoom")) c->aopt.zoom = opt_on(val);
    else if (!strcmp(o, "rawbytes")) c->rawbytes = c->aopt.rawbytes = opt_on(val);
    else if (!strcmp(o, "stackindent")) {
        char n[24] = "";
        if (val && val->type == D_V_STR && val->slen < sizeof n) {
            memcpy(n, val->s, val->slen);
            c->stackindent = (int)strtol(n, NULL, 0);
        }
        if (c->stackindent < 0 || c->stackindent > 1024)
            c->stackindent = 14;
    }
    else if (!strcmp(o, "aggsortkeypos") || !strcmp(o, "aggsortpos")) {
        char n[24] = "";                   /* the value is a string: "2" */
        if (val && val->type == D_V_STR && val->slen < sizeof n) {
            memcpy(n, val->s, val->slen);
            num = (int)strtol(n, NULL, 0);
        }
        *(o[7] == 'k' ? &c->aopt.keypos : &c->aopt.sortpos) = num < 0 ? 0 : num;
    }
}

/* DTrace's flow kinds and, for a return, whether the next record is another clause of it. */
enum { FLOW_NONE, FLOW_ENTRY, FLOW_RETURN };

static int ends_with_word(const char *n, const char *w)
{
    size_t ln = strlen(n), lw = strlen(w);
    return ln >= lw && !strcmp(n + ln - lw, w) && (ln == lw || n[ln - lw - 1] == '-');
}

static void heading_and_prefix(d_consumer *c, const struct hvt_drec *r, const d_probe *pr,
                               const struct hvt_drec *next)
{
    if (!c->heading) {
        if (c->flowindent)
            d_out_printf(c->out, "%3s %-41s\n", "CPU", "FUNCTION");
        else if (!c->quiet)
            d_out_printf(c->out, "%3s %6s %32s\n", "CPU", "ID", "FUNCTION:NAME");
        c->heading = 1;
    }
    if (!c->flowindent) {
        if (!c->quiet) {
            char name[512];
            snprintf(name, sizeof name, "%s:%s", pr->func, pr->name);
            d_out_printf(c->out, "%3d %6d %32s ", r->cpu, (int)d_dtrace_id_of(c, r->probe), name);
        }
        return;
    }
    dflow *f = d_flow_of(c, r->cpu);
    dflow none = {0};
    if (!f)
        f = &none;
    int sys = !strcmp(pr->prov, "syscall"), flow = FLOW_NONE;
    const char *prefix = "| ";
    if (ends_with_word(pr->name, "entry")) {
        flow = FLOW_ENTRY;
        /* the same probe again from another clause: not a deeper call */
        if (f->have_last && (f->last_probe != r->probe || f->last_clause != r->clause) && f->last_probe == r->probe)
            flow = FLOW_NONE;
    } else if (ends_with_word(pr->name, "return")) {
        flow = FLOW_RETURN;
        /* another clause of this probe follows: only the last one returns */
        if (next && next->type == HVT_DREC_DATA && next->probe == r->probe && next->clause != r->clause)
            flow = FLOW_NONE;
    }
    if (flow == FLOW_ENTRY)
        prefix = sys ? " => " : " -> ";
    else if (flow == FLOW_RETURN)
        prefix = sys ? " <= " : " <- ";
    if (flow == FLOW_RETURN && f->indent > 0)
        f->indent -= 2;
    char name[600];
    if (flow == FLOW_NONE)
        snprintf(name, sizeof name, "%*s%s%s:%s", f->indent, "", prefix, pr->func, pr->name);
    else
        snprintf(name, sizeof name, "%*s%s%s", f->indent, "", prefix, pr->func);
    d_out_printf(c->out, "%3d %-41s ", r->cpu, name);
    if (flow == FLOW_ENTRY)
        f->indent += 2;
    f->have_last = 1;
    f->last_probe = r->probe;
    f->last_clause = r->clause;
}

int d_do_data(d_consumer *c, const struct hvt_drec *r, const uint8_t *body, const struct hvt_drec *next)
{
    char why[256];
    if (r->clause >= c->p->nclauses) {
        d_say(c, "malformed record from CPU %u (clause %u, the program has %d)", r->cpu, r->clause, c->p->nclauses);
        return D_CONSUME_BAD;
    }
    const d_probe *pr = d_probe_of(c, r->probe);
    if (!pr) {
        d_say(c, "malformed record from CPU %u (probe id %u is not one of the program's)", r->cpu, r->probe);
        return D_CONSUME_BAD;
    }
    const d_clause *cl = &c->p->clauses[r->clause];
    int na = d_decode(c, cl, body, r->len - HDR, why, sizeof why);
    if (na < 0) {
        d_say(c, "malformed record from CPU %u (%s)", r->cpu, why);
        return D_CONSUME_BAD;
    }
    int rc = D_CONSUME_OK;
    if (cl->stable) {                     /* the stable probe the clause was compiled for */
        struct hvt_drec sr = *r;
        sr.probe = cl->stable->id;
        heading_and_prefix(c, &sr, cl->stable, next);
    } else
        heading_and_prefix(c, r, pr, next);
    for (int i = 0; i < na; i++) {
        const dact *d = &c->acts[i];
        const d_action *a = &cl->acts[d->act];
        const d_value *v = c->vals + d->v0;
        char err[256];
        switch (a->kind) {
        case D_ACT_TRACE:
            for (int k = 0; k < d->nv; k++)
                print_trace(c, &v[k]);
            break;
        case D_ACT_PRINTF:
            if (d_printf_format(c->out, a->fmt ? a->fmt : "", v, d->nv, &c->cfg.sym, NULL, NULL, err, sizeof err) < 0 &&
                c->pf_errs++ < PF_ERRS_SHOWN)
                d_say(c, "printf() in clause %u (%s): %s", r->clause, cl->where ? cl->where : "?", err);
            break;
        case D_ACT_PRINTA:
            if (d_aggs_printa_joined(c->aggs, c->out, a->agg, a->xaggs, a->nxaggs, a->fmt, &c->aopt, err, sizeof err) < 0 &&
                c->pf_errs++ < PF_ERRS_SHOWN)
                d_say(c, "printa() in clause %u (%s): %s", r->clause, cl->where ? cl->where : "?", err);
            break;
        case D_ACT_STACK:
            print_stack(c, r, d, 0, a->frames);
            break;
        case D_ACT_USTACK:
            print_ustack(c, d, a->frames);
            break;
        case D_ACT_EXIT:
            c->exited = 1;
            c->status = d->nv > 0 ? (int)(uint32_t)v[0].i : 0;
            rc = D_CONSUME_EXIT;
            break;
        case D_ACT_CLEAR:
            d_aggs_clear(c->aggs, a->agg);
            break;
        case D_ACT_TRUNC:
            d_aggs_trunc(c->aggs, a->agg, d->nv > 0 ? v[0].i : 0);
            break;
        case D_ACT_NORMALIZE:
            d_aggs_normalize(c->aggs, a->agg, d->nv > 0 ? (uint64_t)v[0].i : 1);
            break;
        case D_ACT_DENORMALIZE:
            d_aggs_denormalize(c->aggs, a->agg);
            break;
        case D_ACT_SETOPT:
            setopt(c, a, v, d->nv);
            break;
        case D_ACT_DEFAULT:   /* the probe line alone */
            break;
        default:
            if (c->cfg.other)
                c->cfg.other(c->cfg.other_ctx, r, a);
            break;
        }
    }
    if (!c->quiet)
        d_out_puts(c->out, "\n");
    return rc;
}

static const char *fault_str(uint32_t f)
{
    switch (f) {
    case HVT_DIF_F_BADADDR: return "invalid address";
    case HVT_DIF_F_DIVZERO: return "divide-by-zero";
    case HVT_DIF_F_NOSCRATCH: return "out of scratch space";
    case HVT_DIF_F_TUPLE: return "tuple stack overflow";
    case HVT_DIF_F_BADSTR: case HVT_DIF_F_ILLOP: return "illegal operation";
    case HVT_DIF_F_BUDGET: return "firing budget exceeded";
    case HVT_DIF_F_BADINDEX: return "index out of bounds";
    case HVT_DIF_F_STEPREFUSED: return "step() refused (as many threads as can be stepped at once are)";
    default: return "unknown fault";
    }
}

int d_do_error(d_consumer *c, const struct hvt_drec *r)
{
    if (r->fault == HVT_DIF_F_BUFFULL) {     /* the record was lost: a drop to DTrace */
        d_say(c, "1 drop on CPU %u", r->cpu);
        return D_CONSUME_OK;
    }
    const d_probe *pr = d_probe_of(c, r->probe);
    if (!pr || r->clause >= c->p->nclauses) {
        d_say(c, "malformed record from CPU %u (error of probe %u clause %u: not the program's)", r->cpu, r->probe,
            r->clause);
        return D_CONSUME_BAD;
    }
    const d_clause *cl = &c->p->clauses[r->clause];
    char where[32], details[64] = "";
    if (cl->pred_end && r->pc < cl->pred_end) {
        snprintf(where, sizeof where, "predicate");
    } else {
        int k = 0;
        for (int i = 0; cl->stmt_pc && i < cl->nstmts; i++)
            k += cl->stmt_pc[i] <= r->pc;
        snprintf(where, sizeof where, "action #%d", k ? k : 1);
    }
    if (r->fault == HVT_DIF_F_BADADDR)
        snprintf(details, sizeof details, " (0x%llx)", (unsigned long long)r->arg);
    else if (r->fault == HVT_DIF_F_BADINDEX)   /* dtrace-utils: "index out of bounds (8)" */
        snprintf(details, sizeof details, " (%llu)", (unsigned long long)r->arg);
    else if (r->fault == HVT_DIF_F_BUDGET)   /* hvtrace's own: the firing ended here */
        snprintf(details, sizeof details, " (%s; later clauses skipped)",
                 r->arg == HVT_DIF_BUDGET_TIME ? "time" : "instructions");
    /* a clause compiled for a stable probe: that probe's name (the epid stays the pair's) */
    const d_probe *np = cl->stable ? cl->stable : pr;
    d_say(c, "error on enabled probe ID %u (ID %u: %s:%s:%s:%s): %s%s in %s at DIF offset %u",
        d_epid_of(c, r->probe, r->clause), d_dtrace_id_of(c, np->id), np->prov, np->mod, np->func, np->name, fault_str(r->fault),
        details, where, r->pc);
    return D_CONSUME_OK;
}

