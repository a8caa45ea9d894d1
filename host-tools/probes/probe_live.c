/* probe_live.c - see probe_live.h. */
#include "probe_live.h"
#include "kmod.h"
#include "kmod_sdt.h"
#include <inttypes.h>
#include "client.h"
#include "hvt_stream.h"
#include "orc.h"
#include "follow.h"
#include "flame.h"
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LIVE_ANSWER_MAX (16u << 10)
#define LIVE_POLL_NS    100000000ull      /* re-read the chunk files every 100 ms */

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { (void)sig; g_stop = 1; }

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int probe_matches_any(const probe_desc *d, char **descs, int nd)
{
    for (int i = 0; i < nd; i++)
        if (probe_desc_match(d, descs[i]))
            return 1;
    return 0;
}

struct hvt_probe_spec probe_spec_of(const probe_desc *d, uint64_t tsc_khz, int stack)
{
    if (d->kind == PL_PROFILE || d->kind == PL_TICK) {
        /* ns x kHz / 10^6 = TSC ticks; the product needs more than 64 bits for days */
        unsigned __int128 t = (unsigned __int128)d->lo * tsc_khz / 1000000u;
        return (struct hvt_probe_spec){ .id = d->id, .kind = d->kind | HVT_PROBE_F_RECORD,
                                        .lo = t > UINT64_MAX ? UINT64_MAX : (uint64_t)t };
    }
    if (d->pid || d->by_comm)              /* a user address of one process */
        return (struct hvt_probe_spec){ .id = d->id, .lo = d->lo,
                                        .hi = d->by_comm ? hvt_comm_hash(d->module, 16) : d->pid,
                                        .kind = d->kind | HVT_PROBE_F_USER | HVT_PROBE_F_RECORD |
                                                (d->by_comm ? HVT_PROBE_F_COMM : 0) |
                                                (stack ? HVT_PROBE_F_STACK : 0) };
    return (struct hvt_probe_spec){ .id = d->id,
                                    .kind = d->kind | HVT_PROBE_F_LINKTIME | HVT_PROBE_F_RECORD |
                                            (stack ? HVT_PROBE_F_STACK : 0) |
                                            (!strcmp(d->provider, "syscall") ? HVT_PROBE_F_SYSARGS : 0),
                                    .lo = d->lo, .hi = d->kind == PL_RETURN ? d->hi : d->lo + 1 };
}

/* The module layout and hooks (kmod_layout's 3 specs) at the front of s, once. */
static void modpre_first(const struct hvt_probe_spec *pre, struct hvt_probe_spec *s, size_t *n)
{
    for (size_t i = 0; i < *n; i++)
        if ((s[i].kind & HVT_PROBE_KIND_MASK) == HVT_PROBE_KIND_MODINFO)
            return;
    memmove(s + 3, s, *n * sizeof *s);
    memcpy(s, pre, 3 * sizeof *s);
    *n += 3;
}

/* A tracepoint's sites in module m: each by its function and offset, with its recipe. */
static void module_sites(uint32_t id, const kmod_sdt *m, const sdt_point *p, uint32_t flags,
                         struct hvt_probe_spec *s, size_t *n)
{
    for (uint32_t i = 0; i < p->nsites; i++) {
        uint32_t off;
        const char *fn = kmod_sdt_site_fn(m, p, i, &off);
        const uint64_t *r = p->sites[i].recipe;
        if (!fn)
            continue;                      /* (a refused site makes the probe unsafe: not here) */
        s[(*n)++] = (struct hvt_probe_spec){ .id = id,
                                             .kind = HVT_PROBE_KIND_ADDR | HVT_PROBE_F_SDT | HVT_PROBE_F_MODULE | flags,
                                             .lo = hvt_name_hash(m->name, 64), .hi = hvt_name_hash(fn, 128) };
        s[(*n)++] = (struct hvt_probe_spec){ .id = id, .kind = HVT_PROBE_KIND_ARGS, .lo = r[0], .hi = r[1] };
        s[(*n)++] = (struct hvt_probe_spec){ .id = id, .kind = HVT_PROBE_KIND_ARGS | HVT_PROBE_F_MODULE,
                                             .lo = r[2], .hi = off };
    }
}

int probe_specs_add(const probe_desc *d, uint64_t tsc_khz, int stack, int action,
                    struct hvt_probe_spec **s, size_t *n, size_t *cap)
{
    size_t need = d->modsdt ? 3 + 3 * (size_t)d->sdt->nsites : d->sdt ? 2 * (size_t)d->sdt->nsites
                : d->modprobe ? 4 : 1;
    for (const struct probe_modsite *x = d->msites; x; x = x->next)
        need += 3 + 3 * (size_t)x->p->nsites;
    if (*n + need > *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        while (nc < *n + need)
            nc *= 2;
        struct hvt_probe_spec *ns = realloc(*s, nc * sizeof *ns);
        if (!ns)
            return -1;
        *s = ns;
        *cap = nc;
    }
    uint32_t mflags = action ? HVT_PROBE_F_ACTION : HVT_PROBE_F_RECORD | (stack ? HVT_PROBE_F_STACK : 0);
    if (d->modprobe) {                     /* the module layout and hooks once, first */
        modpre_first(d->modpre, *s, n);
        if (!d->modsdt) {
            (*s)[(*n)++] = kmod_spec(d, mflags);
            return 0;
        }
        module_sites(d->id, d->modsdt, d->sdt, mflags, *s, n);
        return 0;
    }
    for (const struct probe_modsite *x = d->msites; x; x = x->next) {
        modpre_first(x->modpre, *s, n);    /* the kernel's tracepoint's sites in modules */
        module_sites(d->id, x->m, x->p, mflags, *s, n);
    }
    struct hvt_probe_spec one = probe_spec_of(d, tsc_khz, stack);
    if (action)
        one.kind = (one.kind & ~HVT_PROBE_F_RECORD) | HVT_PROBE_F_ACTION;
    if (!d->sdt) {
        (*s)[(*n)++] = one;
        return 0;
    }
    for (uint32_t i = 0; i < d->sdt->nsites; i++) {
        const sdt_site *st = &d->sdt->sites[i];
        struct hvt_probe_spec h = one;
        h.kind |= HVT_PROBE_F_SDT;
        h.lo = st->site;
        h.hi = st->recipe[2];
        (*s)[(*n)++] = h;
        (*s)[(*n)++] = (struct hvt_probe_spec){ .id = d->id, .kind = HVT_PROBE_KIND_ARGS,
                                                .lo = st->recipe[0], .hi = st->recipe[1] };
    }
    return 0;
}

struct hvt_probe_spec *probe_specs_for(const probe_list *l, char **descs, int nd,
                                       uint64_t tsc_khz, int stack, size_t *n)
{
    size_t cap = 0;
    struct hvt_probe_spec *s = NULL;
    *n = 0;
    for (size_t i = 0; i < l->n; i++) {
        const probe_desc *d = &l->p[i];
        if (!probe_matches_any(d, descs, nd))
            continue;
        if (probe_specs_add(d, tsc_khz, stack, 0, &s, n, &cap)) {
            free(s);
            return NULL;
        }
    }
    if (!s)
        s = malloc(sizeof *s);             /* nothing matched: an empty list, not no memory */
    return s;
}

void probe_print_header(FILE *out) { fprintf(out, "%3s %6s %32s\n", "CPU", "ID", "FUNCTION:NAME"); }

void probe_print_fire(FILE *out, const probe_desc *d, const struct hvt_probe_fire *f, int args)
{
    char fn[320];
    snprintf(fn, sizeof fn, "%s:%s", d->function, d->name);
    fprintf(out, "%3u %6u %32s", f->cpu, f->id, fn);
    if (args && d->kind == PL_RETURN) {
        int64_t rv = (int64_t)f->arg[1];
        int sys = !strcmp(d->provider, "syscall");
        if (!sys)                          /* a system call's arg0 is its return value too */
            fprintf(out, " +0x%llx", (unsigned long long)f->arg[0]);
        fprintf(out, " rv=%lld", (long long)rv);
        if (sys && hvt_probe_return_errno(f->arg[1]))
            fprintf(out, " errno=%llu", (unsigned long long)hvt_probe_return_errno(f->arg[1]));
    } else if (args && d->sdt) {           /* the tracepoint's own arguments */
        for (int i = 0; i < d->sdt->nargs && i < HVT_SDT_ARGS; i++)
            fprintf(out, " 0x%llx", (unsigned long long)f->arg[i]);
    } else if (args && (d->kind == PL_ENTRY || d->kind == PL_ADDR)) {
        for (int i = 0; i < 6; i++)
            fprintf(out, " 0x%llx", (unsigned long long)f->arg[i]);
    }
    fputc('\n', out);
}

void probe_print_counts(FILE *out, const probe_list *l, const uint64_t *count)
{
    fprintf(out, "\n%-6s %-40s %s\n", "ID", "PROBE", "COUNT");
    for (size_t i = 0; i < l->n; i++)
        if (count[i + 1]) {
            char name[400];
            const probe_desc *d = &l->p[i];
            snprintf(name, sizeof name, "%s:%s:%s:%s", d->provider, d->module, d->function, d->name);
            fprintf(out, "%-6u %-40s %llu\n", d->id, name, (unsigned long long)count[i + 1]);
        }
}

typedef void (*sample_fn)(void *ctx, const struct hvt_probe_sample *s, const uint8_t *stack);
static sample_fn g_sample;             /* the samples' consumer (the follower's caller) */

struct live;
static void on_fire(void *ctx, const struct hvt_probe_fire *f);

/* The samples of one HVT_MSG_PROBE_STACK payload; false if it is malformed (the rest of it is
 * skipped and counted). */
static bool parse_samples(uint64_t *records, const uint8_t *pl, uint32_t len, void *ctx)
{
    for (uint32_t at = 0; at < len;) {
        struct hvt_probe_sample sm;
        if (len - at < sizeof sm)
            return false;
        memcpy(&sm, pl + at, sizeof sm);
        uint32_t padded = (sm.stack_len + 7u) & ~7u;
        if (sm.stack_len > HVT_PROBE_STACK_MAX || padded > len - at - sizeof sm)
            return false;
        (*records)++;
        if (g_sample)
            g_sample(ctx, &sm, pl + at + sizeof sm);
        at += (uint32_t)sizeof sm + padded;
    }
    return true;
}

struct live {
    const probe_list *l;
    char **descs;
    int nd;
    const struct probe_live_opts *o;
    uint64_t *count, foreign;
    /* stacks */
    flame *fl;
    orc_table orc;
    bool have_orc;
    int64_t slide;
    uint64_t samples, unwound, to_user, no_stack, ustacks;
    uint64_t records, bad;             /* firing records and samples read; malformed messages */
};

/* One stored message: firing records and samples go to on_fire / g_sample. */
static void on_msg(void *ctx, const struct hvt_msg_hdr *h, const uint8_t *pl)
{
    struct live *v = ctx;
    if (h->type == HVT_MSG_PROBE_STACK) {
        if (!parse_samples(&v->records, pl, h->len, ctx))
            v->bad++;
    } else if (h->type == HVT_MSG_PROBE) {
        if (h->len % sizeof(struct hvt_probe_fire)) {
            v->bad++;
            return;
        }
        for (size_t i = 0; i < h->len / sizeof(struct hvt_probe_fire); i++) {
            struct hvt_probe_fire f;
            memcpy(&f, pl + i * sizeof f, sizeof f);
            v->records++;
            on_fire(ctx, &f);
        }
    }
}

static void on_fire(void *ctx, const struct hvt_probe_fire *f)
{
    struct live *v = ctx;
    if (!v->l)                              /* reading stacks only (probe_stacks_from_dir) */
        return;
    if (!f->id || f->id > v->l->n || !probe_matches_any(&v->l->p[f->id - 1], v->descs, v->nd)) {
        v->foreign++;
        return;
    }
    v->count[f->id]++;
    if (!v->o->quiet)
        probe_print_fire(stdout, &v->l->p[f->id - 1], f, v->o->args);
}

/* A kernel address as "function" (link-time lookup; return addresses looked up at pc - 1). */
static const char *ksym_of(const struct live *v, uint64_t pc, bool exact, char *buf, size_t n)
{
    uint64_t off, link = pc - (uint64_t)v->slide - (exact ? 0 : 1);
    int64_t i = v->o->syms ? ksym_lookup(v->o->syms, link, &off) : -1;
    if (i < 0)
        snprintf(buf, n, "0x%llx", (unsigned long long)pc);
    else
        snprintf(buf, n, "%s", ksym_name(v->o->syms, (uint32_t)i));
    return buf;
}

#define LIVE_FRAMES 128

static void on_sample(void *ctx, const struct hvt_probe_sample *sm, const uint8_t *stack)
{
    struct live *v = ctx;
    on_fire(ctx, &sm->fire);
    v->samples++;
    if (!v->fl)
        return;
    char comm[HVT_PROBE_COMM_LEN + 1];
    memcpy(comm, sm->fire.comm, HVT_PROBE_COMM_LEN);
    comm[HVT_PROBE_COMM_LEN] = 0;
    static char names[LIVE_FRAMES][160];
    const char *frames[LIVE_FRAMES + 2];
    int nf = 0;
    frames[nf++] = comm[0] ? comm : "?";
    uint64_t pcs[LIVE_FRAMES];
    int n = 0;
    bool user = sm->cs & 3;
    orc_status st = { 0 };
    uint64_t pc = sm->fire.pc;              /* the guest's RIP: the sampled one or the probe's site */
    if (!user && v->have_orc && sm->stack_len) {
        uint64_t regs[ORC_PT_REGS_WORDS] = { 0 };
        regs[ORC_PT_BP / 8] = sm->rbp; regs[ORC_PT_DI / 8] = sm->rdi; regs[ORC_PT_DX / 8] = sm->rdx;
        regs[ORC_PT_R10 / 8] = sm->r10; regs[ORC_PT_R13 / 8] = sm->r13;
        regs[ORC_PT_IP / 8] = pc; regs[ORC_PT_SP / 8] = sm->rsp; regs[ORC_PT_CS / 8] = sm->cs;
        struct orc_regs r = { .rip = pc, .rsp = sm->rsp, .rbp = sm->rbp, .pt_regs = regs };
        n = orc_unwind(&v->orc, (uint64_t)v->slide, &r, sm->rsp, stack, sm->stack_len, pcs, LIVE_FRAMES, &st);
        v->unwound++;
    } else if (!user) {
        pcs[0] = pc;                       /* no stack or no tables: the leaf alone */
        n = 1;
        st.exact_mask = 1;
        v->no_stack++;
    }
    if (user || st.stop == ORC_STOP_USER) {
        frames[nf++] = "[user]";
        v->to_user += !user;
    }
    static char unames[LIVE_FRAMES][24];
    if (user && v->o->ustack && sm->stack_len) {
        /* user code has no ORC tables: frame pointers where the program keeps them; the
         * frames stay addresses (the host has no copy of the guest's programs) */
        uint64_t upcs[LIVE_FRAMES];
        int un = fp_unwind(pc, sm->rbp, sm->rsp, stack, sm->stack_len, upcs, LIVE_FRAMES);
        for (int i = un - 1; i >= 0 && nf < LIVE_FRAMES + 2; i--) {
            snprintf(unames[i], sizeof unames[i], "0x%" PRIx64, upcs[i]);
            frames[nf++] = unames[i];
        }
        v->ustacks++;
    }
    for (int i = n - 1; i >= 0 && nf < LIVE_FRAMES + 2; i--) {
        bool exact = i < 64 && (st.exact_mask >> i) & 1;
        frames[nf++] = ksym_of(v, pcs[i], exact || i == 0, names[i], sizeof names[i]);
    }
    flame_add(v->fl, frames, nf, 1);
}

static int arm(const struct probe_live_opts *o, const struct hvt_probe_spec *s, size_t n,
               char *ans, size_t cap)
{
    char path[] = "/tmp/hvt-probes-XXXXXX";
    int fd = mkstemp(path);             /* mode 0600: only this user (and the collector, ours) */
    if (fd < 0 || write(fd, s, n * sizeof *s) != (ssize_t)(n * sizeof *s)) {
        snprintf(ans, cap, "writing %s: %s", path, strerror(errno));
        if (fd >= 0) { close(fd); unlink(path); }
        return -1;
    }
    close(fd);
    char line[sizeof path + 16];
    snprintf(line, sizeof line, "probe arm %s", path);
    int rc = hvt_coll_ask(o->dir, o->sock, line, ans, cap);
    unlink(path);
    return rc;
}

static int write_flame(const flame *fl, const char *path, int svg)
{
    FILE *f = fopen(path, "w");
    int r = f ? (svg ? flame_write_svg(fl, f, "hvtrace profile") : flame_write_folded(fl, f)) : -1;
    if (f && fclose(f) != 0)
        r = -1;
    if (r < 0)
        fprintf(stderr, "hvt: writing %s: %s\n", path, strerror(errno));
    else
        fprintf(stderr, "hvt: %s written (%zu distinct stacks, %llu samples)\n", path,
                flame_stacks(fl), (unsigned long long)flame_total(fl));
    return r;
}

int probe_live_run(const probe_list *l, char **descs, int nd, const struct probe_live_opts *o)
{
    size_t n = 0;
    struct hvt_probe_spec *specs = NULL;
    char *ans = malloc(LIVE_ANSWER_MAX);
    struct live v = { .l = l, .descs = descs, .nd = nd, .o = o, .count = calloc(l->n + 1, sizeof(uint64_t)) };
    follow w = { 0 };
    char dir[4096] = "";
    int rc = 1;
    g_sample = on_sample;
    if (!ans || !v.count) {
        fprintf(stderr, "hvt: out of memory\n");
        goto out;
    }
    if (hvt_coll_ask(o->dir, o->sock, "status", ans, LIVE_ANSWER_MAX) != 0) {
        fprintf(stderr, "hvt: %s\n", ans);
        goto out;
    }
    if (!hvt_coll_val(ans, "dir", dir, sizeof dir) || !hvt_coll_uval(ans, "connected")) {
        fprintf(stderr, "hvt: no hypervisor is connected to the collector at %s\n", o->dir);
        goto out;
    }
    uint64_t khz = o->tsc_khz ? o->tsc_khz : hvt_coll_uval(ans, "tsc_khz");
    for (size_t i = 0; i < l->n; i++)
        if ((l->p[i].kind == PL_PROFILE || l->p[i].kind == PL_TICK) && !khz &&
            probe_matches_any(&l->p[i], descs, nd)) {
            fprintf(stderr, "hvt: the hypervisor's TSC rate is unknown: give --tsc-khz for %s\n", l->p[i].name);
            goto out;
        }
    if (!(specs = probe_specs_for(l, descs, nd, khz, o->stack, &n))) {
        fprintf(stderr, "hvt: out of memory\n");
        goto out;
    }
    if (o->folded || o->flame) {
        kimg k;
        char err[300];
        if (!o->vmlinuz || kimg_load(&k, o->vmlinuz) != 0) {
            fprintf(stderr, "hvt: stacks need the kernel image (--vmlinuz)\n");
            goto out;
        }
        if (orc_load_ex(&k, o->syms, ORC_LAYOUT_AUTO, &v.orc, err, sizeof err) == 0)
            v.have_orc = true;
        else
            fprintf(stderr, "hvt: no ORC tables (%s): stacks will hold the sampled function only\n", err);
        kimg_free(&k);
        if (!(v.fl = flame_new())) {
            fprintf(stderr, "hvt: out of memory\n");
            goto out;
        }
    }
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int r = arm(o, specs, n, ans, LIVE_ANSWER_MAX);
    uint64_t taken = hvt_coll_uval(ans, "probe_specs_taken");
    uint64_t sites = hvt_coll_uval(ans, "probe_sites_armed");
    if (r != 0 || taken != n) {
        char e[32];
        fprintf(stderr, "hvt: could not enable all probes: %llu of %zu taken, %llu sites armed (%s%s%s)\n",
                (unsigned long long)taken, n, (unsigned long long)sites, r ? ans : "hypervisor error ",
                r ? "" : hvt_coll_val(ans, "probe_error", e, sizeof e) ? e : "?",
                r ? "" : ": out of probe or shadow-page room or of the probe memory budget, which "
                         "hv_mem_mb sets (-1), unmapped text (-2), bad spec (-4)");
        if (r == 0 || taken)
            hvt_coll_ask(o->dir, o->sock, "probe disarm", ans, LIVE_ANSWER_MAX);
        goto out;
    }
    for (int i = 0; i < nd; i++) {
        size_t m = 0;
        for (size_t k = 0; k < l->n; k++)
            m += probe_desc_match(&l->p[k], descs[i]);
        fprintf(stderr, "hvt: description '%s' matched %zu probe%s\n", descs[i], m, m == 1 ? "" : "s");
    }
    v.slide = (int64_t)hvt_coll_uval(ans, "probe_slide");
    uint64_t rec0 = hvt_coll_uval(ans, "probe_records_before");
    uint64_t lost0 = hvt_coll_uval(ans, "probe_records_lost_before");
    if (follow_open(&w, dir, hvt_coll_uval(ans, "probe_stream_off")) < 0) {
        fprintf(stderr, "hvt: out of memory\n");
        goto out;
    }
    if (!o->quiet)
        probe_print_header(stdout);
    uint64_t t0 = now_ns();
    while (!g_stop && (o->duration_s <= 0 || now_ns() - t0 < (uint64_t)(o->duration_s * 1e9))) {
        if (follow_poll(&w, on_msg, &v) < 0)
            break;
        fflush(stdout);
        struct timespec ts = { 0, LIVE_POLL_NS };
        nanosleep(&ts, NULL);
    }
    /* End: disarm, then wait for what the CPUs still held. */
    r = hvt_coll_ask(o->dir, o->sock, "probe disarm", ans, LIVE_ANSWER_MAX);
    if (r != 0) {
        fprintf(stderr, "hvt: disarming failed: %s\n", ans);
        goto out;
    }
    uint64_t made = hvt_coll_uval(ans, "probe_records") - rec0;
    uint64_t lost = hvt_coll_uval(ans, "probe_records_lost") - lost0;
    uint64_t t1 = now_ns();
    while (v.records + lost < made && now_ns() - t1 < (uint64_t)(o->drain_s * 1e9)) {
        if (follow_poll(&w, on_msg, &v) < 0)
            break;
        struct timespec ts = { 0, LIVE_POLL_NS };
        nanosleep(&ts, NULL);
    }
    fflush(stdout);
    probe_print_counts(stdout, l, v.count);
    rc = 0;
    if (lost) {
        printf("hvt: %llu firing records lost on the link\n", (unsigned long long)lost);
        rc = 1;
    }
    if (v.records + lost < made) {
        printf("hvt: %llu firing records made but not received within %.0f s\n",
               (unsigned long long)(made - lost - v.records), o->drain_s);
        rc = 1;
    }
    if (v.bad) {
        printf("hvt: %llu malformed firing messages\n", (unsigned long long)v.bad);
        rc = 1;
    }
    if (v.foreign)
        printf("hvt: %llu firings of probes outside the descriptions\n", (unsigned long long)v.foreign);
    fprintf(stderr, "hvt: %llu firing records received, %llu made, %llu lost\n",
            (unsigned long long)v.records, (unsigned long long)made, (unsigned long long)lost);
    if (v.samples)
        fprintf(stderr, "hvt: %llu with a stack: %llu unwound (%llu from a system call or an "
                "interrupt of user code), %llu without a stack, %llu user stacks unwound\n",
                (unsigned long long)v.samples, (unsigned long long)v.unwound,
                (unsigned long long)v.to_user, (unsigned long long)v.no_stack,
                (unsigned long long)v.ustacks);
    if (v.fl && o->folded && write_flame(v.fl, o->folded, 0) < 0)
        rc = 1;
    if (v.fl && o->flame && write_flame(v.fl, o->flame, 1) < 0)
        rc = 1;
out:
    if (v.fl)
        flame_free(v.fl);
    if (v.have_orc)
        orc_free(&v.orc);
    follow_close(&w);
    free(v.count);
    free(ans);
    free(specs);
    return rc;
}

int probe_stacks_from_dir(const char *dir, const char *vmlinuz, const ksym_table *syms, int64_t slide,
                          int ustack, FILE *out, probe_stacks_writer write)
{
    struct probe_live_opts o = { .quiet = 1, .vmlinuz = vmlinuz, .syms = syms, .ustack = ustack };
    struct live v = { .o = &o, .slide = slide };
    follow w;
    int rc = -1;
    g_sample = on_sample;
    kimg k;
    char err[300];
    if (follow_open(&w, dir, 0) < 0 || !(v.fl = flame_new()))
        goto out;
    if (kimg_load(&k, vmlinuz) != 0)
        goto out;
    if (orc_load_ex(&k, syms, ORC_LAYOUT_AUTO, &v.orc, err, sizeof err) == 0)
        v.have_orc = true;
    else
        fprintf(stderr, "hvt: no ORC tables (%s): stacks hold the sampled function only\n", err);
    kimg_free(&k);
    char path[4200];
    snprintf(path, sizeof path, "%s/chunk-000000.hvts", dir);
    FILE *first = fopen(path, "rb");
    if (!first) {
        fprintf(stderr, "hvt: %s: no chunk-000000.hvts (not a collector boot directory)\n", dir);
        goto out;
    }
    fclose(first);
    if (follow_poll(&w, on_msg, &v) < 0)   /* the whole directory: nothing is being added */
        goto out;
    rc = write(v.fl, out);
    fprintf(stderr, "hvt: %llu samples with a stack (%llu unwound, %llu reached user space), %zu distinct stacks%s\n",
            (unsigned long long)v.samples, (unsigned long long)v.unwound,
            (unsigned long long)v.to_user, flame_stacks(v.fl),
            v.bad ? "; malformed messages skipped" : "");
    if (v.bad)
        rc = -1;
out:
    follow_close(&w);
    if (v.fl)
        flame_free(v.fl);
    if (v.have_orc)
        orc_free(&v.orc);
    return rc;
}
