/* d_run.c - hvt as dtrace: a D program compiled, loaded, run and ended through the collector.
 * See d_run.h. */
#include "d_run.h"
#include "d_predict.h"
#include "d_compile.h"
#include "d_consume.h"
#include "d_cmd.h"
#include "d_fold.h"
#include "follow.h"
#include "client.h"
#include "kimg.h"
#include "kinfo.h"
#include "orc.h"
#include "probe_list.h"
#include "kmod.h"
#include "kmod_sdt.h"
#include "kmod_btf.h"
#include "kbuiltin.h"
#include "io_prov.h"
#include "probe_live.h"
#include "hvt_bootinfo.h"
#include "hvt_probe.h"
#include "util.h"
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The kernel resolver, and a description matching nothing that names a module built into
 * the kernel refused with the reason (kbuiltin_hint) */
typedef struct {
    d_kernel_resolver *kr;
    const char *moddir;
} hint_resolver;

static int resolve_hint(void *ctx, const char *desc, d_probe_sink *sink, char *err, size_t errlen)
{
    hint_resolver *h = ctx;
    int rc = d_resolve_kernel(h->kr, desc, sink, err, errlen);
    const probe_list *l = h->kr->list;
    if (rc || !h->moddir)
        return rc;
    for (size_t i = 0; i < l->n; i++)
        if (probe_desc_match(&l->p[i], desc))
            return 0;
    return kbuiltin_hint(h->moddir, desc, err, errlen) ? -1 : 0;
}

/* The modules whose probes a program's descriptions match (a first, silent compile notes
 * them): a program on one module's probes is compiled with that module's own types. */
#define MOD_NOTE_MAX 16                    /* modules whose types a program gets */
typedef struct {
    d_kernel_resolver *kr;
    char mod[MOD_NOTE_MAX][64];
    int n, more;                           /* more: past MOD_NOTE_MAX */
} mod_note;

static int resolve_note(void *ctx, const char *desc, d_probe_sink *sink, char *err, size_t errlen)
{
    mod_note *mn = ctx;
    const probe_list *l = mn->kr->list;
    for (size_t i = 0; i < l->n; i++) {
        const probe_desc *d = &l->p[i];
        if (!d->modprobe || !probe_desc_match(d, desc))
            continue;
        const char *m = d->modsdt ? d->modsdt->name : d->module;
        int k = 0;
        while (k < mn->n && strcmp(mn->mod[k], m))
            k++;
        if (k == mn->n && mn->n < MOD_NOTE_MAX)
            snprintf(mn->mod[mn->n++], sizeof mn->mod[0], "%s", m);
        else if (k == mn->n)
            mn->more = 1;
    }
    return d_resolve_kernel(mn->kr, desc, sink, err, errlen);
}

#define ANSWER_MAX  (64u << 10)
#define MAX_XOPTS   64
#define MAX_MACROS  32
#define MAX_SOURCES 64
/* BEGIN, END and ERROR: ids no probe list reaches */
#define ID_BEGIN 0xffffff01u
#define ID_END   0xffffff02u
#define ID_ERROR 0xffffff03u

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { (void)sig; g_stop = 1; }
static uint64_t now_ns(void) { return (uint64_t)(util_now() * 1e9); }
/* walltimestamp's origin: the wall clock as the image goes to the hypervisor (hvt_dif_hdr walltime) */
static int64_t wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int d_run_wanted(int argc, char **argv)
{
    int stable = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-s"))
            return 1;
        if (!strcmp(argv[i], "-n") && i + 1 < argc && strpbrk(argv[i + 1], "{/"))
            return 1;
        /* the stable providers exist only for D: a bare description is a clause with DTrace's
         * default action (hvt -l lists them as probes) */
        if (!strcmp(argv[i], "-n") && i + 1 < argc && (!strncmp(argv[i + 1], "proc:", 5) || !strncmp(argv[i + 1], "sched:", 6)))
            stable = 1;
        if (!strcmp(argv[i], "-l") || !strcmp(argv[i], "-lv"))
            return 0;
    }
    return stable;
}

#define NEED_ASK UINT32_MAX

/* A buffer of records held back until the aggregation snapshot its printa() needs is in. */
struct held {
    struct held *next;
    uint32_t need;                         /* the snapshot generation it waits for (0: none,
                                              NEED_ASK: the one asked for after this poll) */
    size_t len;
    uint8_t buf[];
};

struct run {
    const dprog *p;
    d_consumer *con;
    const ksym_table *syms;
    int64_t slide;
    orc_table orc;
    bool have_orc;
    unsigned cpus;
    uint32_t snap_open[HVT_MAX_CPUS];      /* the generation each CPU's snapshot is at */
    uint32_t snap_done[HVT_MAX_CPUS];      /* the last generation each CPU completed */
    uint32_t want_gen;                     /* END's snapshot */
    uint64_t records, bad;                 /* records consumed; malformed messages */
    bool exited;
    const char *dir, *sock;                /* the collector, for the snapshots printa() needs */
    char *ans;
    struct held *held, **held_tail;        /* in arrival order */
    bool snap_ask;                         /* a held buffer waits for a snapshot to be asked */
    bool snap_failed;
};

/* %a, %A, stack(): kernel addresses through the image's symbols and the KASLR slide. */
static int symbolize(void *ctx, uint64_t addr, int user, d_sym *s)
{
    struct run *r = ctx;
    uint64_t off;
    if (user || !r->syms)
        return 0;
    int64_t i = ksym_lookup(r->syms, addr - (uint64_t)r->slide, &off);
    if (i < 0)
        return 0;
    s->module = "vmlinux";
    s->name = ksym_name(r->syms, (uint32_t)i);
    s->off = off;
    return 1;
}

static int unwind(void *ctx, const struct hvt_drec *rec, int user, uint64_t rsp,
                  const uint8_t *bytes, uint32_t len, uint64_t *pcs, int max)
{
    struct run *r = ctx;
    (void)rec;
    if (user || !r->have_orc || len < 8)
        return 0;
    /* the first word is where the firing was: the probe's call site returns above it */
    struct orc_regs regs = { .rip = 0, .rsp = rsp };
    uint64_t ret;
    memcpy(&ret, bytes, sizeof ret);
    regs.rip = ret;
    regs.rsp = rsp + 8;
    return orc_unwind(&r->orc, (uint64_t)r->slide, &regs, rsp, bytes, len, pcs, max, NULL);
}

/* The oldest generation every CPU has completed. */
static uint32_t snap_all_done(const struct run *r)
{
    uint32_t m = UINT32_MAX;
    for (unsigned c = 0; c < r->cpus && c < HVT_MAX_CPUS; c++)
        if (r->snap_done[c] < m)
            m = r->snap_done[c];
    return r->cpus ? m : 0;
}

static void consume(struct run *r, const uint8_t *buf, size_t len)
{
    if (d_consume_buffer(r->con, buf, len) == D_CONSUME_EXIT)
        r->exited = true;
}

/* The held buffers whose snapshot is in, in their order. */
static void release_held(struct run *r)
{
    uint32_t done = snap_all_done(r);
    while (r->held && r->held->need <= done) {
        struct held *h = r->held;
        r->held = h->next;
        if (!r->held)
            r->held_tail = &r->held;
        consume(r, h->buf, h->len);
        free(h);
    }
}

/* A buffer with a printa() (clear(), trunc(), ...) record: libdtrace acts on the snapshot it
 * takes (at most once per aggrate) right before it reads the buffers. hvt asks for one now,
 * after the record was made, and holds this buffer and those after it until every CPU's part
 * is in (the hypervisor's snapshots are deltas: what came between the record and the snapshot
 * is in it, as in DTrace, and nothing is printed twice or lost at a printa(); clear()). */
static void on_records(struct run *r, const uint8_t *pl, size_t len)
{
    uint32_t need = 0;
    if (d_consume_buffer_uses_aggs(r->con, pl, len)) {
        need = NEED_ASK;                   /* one request for all such buffers of this poll */
        r->snap_ask = true;
    }
    if (!r->held && !need) {
        consume(r, pl, len);
        return;
    }
    struct held *h = malloc(sizeof *h + len);
    if (!h) {                              /* printed now, from what is in */
        consume(r, pl, len);
        return;
    }
    h->next = NULL;
    h->need = need;
    h->len = len;
    memcpy(h->buf, pl, len);
    *r->held_tail = h;
    r->held_tail = &h->next;
}

static void on_msg(void *ctx, const struct hvt_msg_hdr *h, const uint8_t *pl);

/* After a poll: the snapshot the buffers it held wait for, asked now (after they arrived). */
static void ask_snap(struct run *r)
{
    if (!r->snap_ask)
        return;
    r->snap_ask = false;
    uint32_t gen = 0;
    if (hvt_coll_ask(r->dir, r->sock, "d snap", r->ans, ANSWER_MAX) == 0)
        gen = (uint32_t)hvt_coll_uval(r->ans, "d_snap_gen");
    else if (!r->snap_failed) {
        r->snap_failed = true;             /* printed from what is in instead */
        fprintf(stderr, "hvt: d snap: %s\n", r->ans);
    }
    for (struct held *h = r->held; h; h = h->next)
        if (h->need == NEED_ASK)
            h->need = gen;
    release_held(r);
}

static int poll_run(follow *w, struct run *r)
{
    int rc = follow_poll(w, on_msg, r);
    ask_snap(r);
    return rc;
}

static void on_msg(void *ctx, const struct hvt_msg_hdr *h, const uint8_t *pl)
{
    struct run *r = ctx;
    if (h->type == HVT_MSG_D_REC) {
        for (uint32_t at = 0; at + sizeof(struct hvt_drec) <= h->len;) {
            struct hvt_drec d;
            memcpy(&d, pl + at, sizeof d);
            if (d.len < sizeof d || d.len > h->len - at)
                break;
            r->records += d.type == HVT_DREC_DATA || d.type == HVT_DREC_ERROR;
            at += d.len;
        }
        on_records(r, pl, h->len);
    } else if (h->type == HVT_MSG_D_AGG) {
        struct hvt_dagg_part part;
        if (h->len < sizeof part) {
            r->bad++;
            return;
        }
        memcpy(&part, pl, sizeof part);
        if (part.cpu >= HVT_MAX_CPUS) {
            r->bad++;
            return;
        }
        if (r->snap_open[part.cpu] != part.gen) {
            d_consume_snap_begin(r->con, part.cpu, part.gen);
            r->snap_open[part.cpu] = part.gen;
        }
        d_consume_snap_add(r->con, part.cpu, part.gen, pl + sizeof part, h->len - sizeof part);
        if (part.flags & HVT_DAGG_LAST) {
            d_consume_snap_end(r->con, part.cpu, part.gen);
            if (part.gen > r->snap_done[part.cpu])
                r->snap_done[part.cpu] = part.gen;
            release_held(r);
        }
    }
}

static int read_file(const char *path, char **out, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "hvt: failed to open %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    size_t got;
    while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) { free(b); b = NULL; }
            else b = nb;
        }
    }
    fclose(f);
    if (!b)
        return -1;
    *out = b;
    *len = n;
    return 0;
}

/* One -s FILE or -n TEXT. */
struct src_arg {
    const char *arg;
    int file;
};

/* The program's text: each -s file's and -n text's, in their order, one per line. */
static int join_sources(const struct src_arg *srcs, int n, char **out, size_t *len)
{
    char *all = NULL;
    size_t tot = 0;
    for (int i = 0; i < n; i++) {
        char *part;
        size_t plen;
        if (srcs[i].file) {
            if (read_file(srcs[i].arg, &part, &plen) < 0) {
                free(all);
                return -1;
            }
        } else {
            plen = strlen(srcs[i].arg);
            part = malloc(plen + 1);
            if (part)
                memcpy(part, srcs[i].arg, plen);
        }
        char *na = part ? realloc(all, tot + plen + 2) : NULL;
        if (!na) {
            free(part);
            free(all);
            fprintf(stderr, "hvt: out of memory\n");
            return -1;
        }
        all = na;
        if (i)
            all[tot++] = '\n';
        memcpy(all + tot, part, plen);
        tot += plen;
        all[tot] = 0;
        free(part);
    }
    *out = all;
    *len = tot;
    return 0;
}

/* A temporary file only this user can read holding len bytes; its path in path. */
static int temp_file(char *path, const void *p, size_t len)
{
    strcpy(path, "/tmp/hvt-d-XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    bool ok = write(fd, p, len) == (ssize_t)len;
    close(fd);
    if (!ok)
        unlink(path);
    return ok ? 0 : -1;
}

static int ask(const char *dir, const char *sock, const char *line, char *ans)
{
    int rc = hvt_coll_ask(dir, sock, line, ans, ANSWER_MAX);
    if (rc != 0)
        fprintf(stderr, "hvt: %s: %s\n", line, ans);
    return rc;
}

/* -x probecost: the hypervisor's time per firing of each probe, by phase of DTrace's performance
 * model (include/hvt_probe.h), and of its firings the fractions in a new task and of another
 * probe than the last (the tally), from the collector's probe_cost= lines; to stderr, after
 * the run. */
static void print_probecost(const char *ans)
{
    static const char *const names[] = HVT_PH_NAMES;
    uint64_t all = 0, fires_all = 0;
    fprintf(stderr, "hvt: probe effect (hypervisor TSC ticks per firing, by phase):\n%8s %10s",
            "ID", "FIRINGS");
    for (unsigned ph = 0; ph < HVT_PH_COUNT; ph++)
        fprintf(stderr, " %9s", names[ph]);
    fprintf(stderr, " %8s %8s %9s\n", "newtask", "switched", "total");
    for (const char *l = strstr(ans, "probe_cost="); l; l = strstr(l + 1, "\nprobe_cost=")) {
        l = strchr(l, '=') + 1;
        unsigned long long id = 0, sites = 0, fires = 0, t[HVT_PH_COUNT] = { 0 }, sum = 0, nt, sw;
        char *e;
        id = strtoull(l, &e, 10);
        sites = strtoull(e, &e, 10);
        fires = strtoull(e, &e, 10);
        for (unsigned ph = 0; ph < HVT_PH_COUNT; ph++)
            sum += t[ph] = strtoull(e, &e, 10);
        nt = strtoull(e, &e, 10);          /* the tally: fractions of the firings */
        sw = strtoull(e, &e, 10);
        (void)sites;
        fprintf(stderr, "%8llu %10llu", id, fires);
        for (unsigned ph = 0; ph < HVT_PH_COUNT; ph++)
            fprintf(stderr, " %9.0f", fires ? (double)t[ph] / (double)fires : 0.0);
        fprintf(stderr, " %8.3f %8.3f %9.0f\n", fires ? (double)nt / (double)fires : 0.0,
                fires ? (double)sw / (double)fires : 0.0, fires ? (double)sum / (double)fires : 0.0);
        all += sum;
        fires_all += fires;
    }
    fprintf(stderr, "hvt: %llu firings timed, %llu ticks taken from the guest in all\n",
            (unsigned long long)fires_all, (unsigned long long)all);
}

/* hvt -e --count-for S: a short counting run on the live hypervisor: the program's probes
 * armed plain (neither its action nor a record: each firing only counted) and timed, S
 * seconds, the firings the hypervisor counted meanwhile, the guest's ticks at the TSC's rate
 * (the guest's clock runs with the host's while it is not stepped). "FIRES:TICKS:OWN:NEWTASK:
 * SWITCHED" in out (the timed firings, their own ticks and the mix), or "FIRES:TICKS" when
 * the hypervisor does not time them, as --count-run takes it; 0, or -1 said why. */
static int count_live(const dprog *p, const probe_list *l, const char *dir, const char *sock, double secs,
                      uint64_t tsc_khz, char *out, size_t outlen)
{
    char *ans = malloc(ANSWER_MAX), path[64], cmd[128];
    struct hvt_probe_spec *specs = NULL;
    size_t ns = 0, cap = 0;
    int rc = -1;
    bool armed = false;
    if (!ans)
        return -1;
    if (ask(dir, sock, "status", ans) != 0)
        goto out;
    if (!hvt_coll_uval(ans, "connected")) {
        fprintf(stderr, "hvt: no hypervisor is connected to the collector at %s\n", dir);
        goto out;
    }
    uint64_t khz = tsc_khz ? tsc_khz : hvt_coll_uval(ans, "tsc_khz");
    if (!khz) {
        fprintf(stderr, "hvt: the hypervisor's TSC rate is unknown: give --tsc-khz\n");
        goto out;
    }
    for (int i = 0; i < p->nprobes; i++) {
        uint32_t id = p->probes[i].id;
        if (id >= ID_BEGIN)
            continue;
        if (!id || id > l->n || l->p[id - 1].id != id) {
            fprintf(stderr, "hvt: internal error: probe id %u is not in the list\n", id);
            goto out;
        }
        size_t before = ns;
        if (probe_specs_add(&l->p[id - 1], khz, 0, 1, &specs, &ns, &cap)) {
            fprintf(stderr, "hvt: out of memory\n");
            goto out;
        }
        for (size_t k = before; k < ns; k++)     /* counted only */
            specs[k].kind &= ~(HVT_PROBE_F_ACTION | HVT_PROBE_F_RECORD | HVT_PROBE_F_STACK);
    }
    if (!ns) {
        fprintf(stderr, "hvt: the program enables no probe to count\n");
        goto out;
    }
    if (ask(dir, sock, "probe status", ans) != 0)
        goto out;
    uint64_t f0 = hvt_coll_uval(ans, "probe_fires");
    if (temp_file(path, specs, ns * sizeof *specs) < 0)
        goto out;
    snprintf(cmd, sizeof cmd, "probe arm %s", path);
    int arc = hvt_coll_ask(dir, sock, cmd, ans, ANSWER_MAX);
    unlink(path);
    armed = true;
    if (arc != 0 || hvt_coll_uval(ans, "probe_specs_taken") != ns) {
        fprintf(stderr, "hvt: arming failed: %llu of %zu probes armed (%s)\n",
                (unsigned long long)hvt_coll_uval(ans, "probe_specs_taken"), ns,
                arc != 0 ? ans : "the hypervisor refused one");
        goto out;
    }
    /* each firing timed: its own ticks, and the hypervisor's tally of the firings in a new
     * task and of another probe than the last (the mix the model prices them by); without
     * the accounting, the rate alone */
    bool timed = hvt_coll_ask(dir, sock, "probe cost on", ans, ANSWER_MAX) == 0;
    if (!timed)
        fprintf(stderr, "hvt: the hypervisor does not time the firings (%s): how often the task and the "
                "probe change is not known\n", ans);
    uint64_t t0 = now_ns();
    while (!g_stop && now_ns() - t0 < (uint64_t)(secs * 1e9))
        usleep(20000);
    uint64_t t1 = now_ns();
    if (ask(dir, sock, "probe status", ans) != 0)
        goto out;
    uint64_t f1 = hvt_coll_uval(ans, "probe_fires");
    double ticks = (double)(t1 - t0) * (double)khz / 1e6;
    fprintf(stderr, "hvt: counting run: %llu firings in %.2f s (%.0f ticks at %llu kHz)\n",
            (unsigned long long)(f1 - f0), (double)(t1 - t0) / 1e9, ticks, (unsigned long long)khz);
    snprintf(out, outlen, "%llu:%.0f", (unsigned long long)(f1 - f0), ticks);
    if (timed && ask(dir, sock, "probe cost", ans) == 0) {
        /* probe_cost=ID SITES FIRES TICKS... NEWTASK SWITCHED */
        unsigned long long cf = 0, own = 0, nt = 0, sw = 0;
        for (const char *l = strstr(ans, "probe_cost="); l; l = strstr(l + 1, "\nprobe_cost=")) {
            char *e;
            l = strchr(l, '=') + 1;
            strtoull(l, &e, 10);
            strtoull(e, &e, 10);
            cf += strtoull(e, &e, 10);
            for (unsigned ph = 0; ph < HVT_PH_COUNT; ph++)
                own += strtoull(e, &e, 10);
            nt += strtoull(e, &e, 10);
            sw += strtoull(e, &e, 10);
        }
        if (cf && own < ticks) {
            fprintf(stderr, "hvt: of them %llu timed, %llu ticks their own; %llu in a new task, %llu of another "
                    "probe than the last\n", cf, own, nt, sw);
            snprintf(out, outlen, "%llu:%.0f:%llu:%llu:%llu", cf, ticks, own, nt, sw);
        }
    }
    if (timed)
        hvt_coll_ask(dir, sock, "probe cost off", ans, ANSWER_MAX);
    rc = 0;
out:
    if (armed && ask(dir, sock, "probe disarm", ans) != 0)
        rc = -1;
    free(specs);
    free(ans);
    return rc;
}

static int usage(void)
{
    fprintf(stderr,
            "usage: hvt [-s FILE | -n 'PROGRAM'] [ARG...] [-q] [-F] [-w] [-Z] [-e] [-S] [-o FILE]\n"
            "           [-x opt[=val]]... [-x probecost] [-p PID | -c CMD] [--vmlinuz VMLINUZ] [-d DIR | --socket SOCK]\n"
            "           [--duration S] [--drain S] [--tsc-khz N] [--image-out FILE --specs-out FILE]\n"
            "           [--folded FILE] [--flame FILE.svg] [--samples] [--modules DIR]\n"
            "           -e [--rate N | --count-run FIRES:TICKS[:OWN:NEWTASK:SWITCHED] | --count-for S] [--cal FILE] [--model]\n"
            "              (the probe effect predicted; --count-for: a counting run through the collector)\n"
            "  PROGRAM: D clauses, e.g. 'syscall::read:entry /execname == \"cat\"/ { @[pid] = count(); }'\n");
    return 2;
}

int d_run_main(int argc, char **argv)
{
    const char *script = NULL, *text = NULL, *outpath = NULL, *dir = "trace-out", *sock = NULL;
    const char *vmlinuz = getenv("HVT_VMLINUZ"), *image_out = NULL, *specs_out = NULL;
    const char *cmdline = NULL, *folded = NULL, *flame_svg = NULL, *moddir = getenv("HVT_MODULES");
    int samples = 0;
    const char *xopts[MAX_XOPTS], *macros[MAX_MACROS];
    int nx = 0, nm = 0, quiet = 0, flow = 0, destructive = 0, zero = 0, compile_only = 0, dump = 0;
    int probecost = 0, model = 0;
    const char *calpath = NULL, *count_run = NULL;
    double rate_s = -1, count_for = 0;
    char counted[64];
    double duration = 0, drain = 120;
    uint64_t tsc_khz = 0;
    int64_t target = 0;
    struct src_arg srcs[MAX_SOURCES];
    int nsrc = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if ((!strcmp(a, "-s") || !strcmp(a, "-n")) && next) {
            /* several -s and -n: dtrace enables each program; hvt joins them into one, in
             * their order (the first one names it) */
            if (nsrc == MAX_SOURCES) return usage();
            srcs[nsrc].file = a[1] == 's';
            srcs[nsrc++].arg = next;
            if (!script && !text) {
                if (a[1] == 's') script = next;
                else text = next;
            }
            i++;
        }
        else if (!strcmp(a, "-q")) quiet = 1;
        else if (!strcmp(a, "-F")) flow = 1;
        else if (!strcmp(a, "-w")) destructive = 1;
        else if (!strcmp(a, "-Z")) zero = 1;
        else if (!strcmp(a, "-e")) compile_only = 1;
        else if (!strcmp(a, "-S")) dump = 1;
        else if (!strcmp(a, "-o") && next) { outpath = next; i++; }
        else if (!strcmp(a, "-x") && next && !strcmp(next, "probecost")) { probecost = 1; i++; }
        else if (!strcmp(a, "-x") && next && nx < MAX_XOPTS) { xopts[nx++] = next; i++; }
        else if (!strncmp(a, "-x", 2) && a[2] && nx < MAX_XOPTS) xopts[nx++] = a + 2; /* -xopt=val, as dtrace takes it */
        else if (!strcmp(a, "-p") && next) { target = strtoll(next, NULL, 10); i++; }
        else if (!strcmp(a, "-c") && next) { cmdline = next; i++; }
        else if (!strcmp(a, "--vmlinuz") && next) { vmlinuz = next; i++; }
        else if (!strcmp(a, "--modules") && next) { moddir = next; i++; }
        else if (!strcmp(a, "-d") && next) { dir = next; i++; }
        else if (!strcmp(a, "--socket") && next) { sock = next; i++; }
        else if (!strcmp(a, "--duration") && next) { duration = atof(next); i++; }
        else if (!strcmp(a, "--drain") && next) { drain = atof(next); i++; }
        else if (!strcmp(a, "--tsc-khz") && next) { tsc_khz = strtoull(next, NULL, 0); i++; }
        else if (!strcmp(a, "--image-out") && next) { image_out = next; i++; }
        else if (!strcmp(a, "--specs-out") && next) { specs_out = next; i++; }
        else if (!strcmp(a, "--folded") && next) { folded = next; i++; }
        else if (!strcmp(a, "--flame") && next) { flame_svg = next; i++; }
        else if (!strcmp(a, "--samples")) samples = 1;
        else if (!strcmp(a, "--cal") && next) { calpath = next; i++; }
        else if (!strcmp(a, "--rate") && next) { rate_s = atof(next); i++; }
        else if (!strcmp(a, "--count-run") && next) { count_run = next; i++; }
        else if (!strcmp(a, "--count-for") && next) { count_for = atof(next); i++; }
        else if (!strcmp(a, "--model")) model = 1;
        else if (a[0] != '-' && nm < MAX_MACROS) macros[nm++] = a;
        else return usage();
    }
    if (!nsrc || !vmlinuz || (cmdline && (target || compile_only || image_out || specs_out)))
        return usage();
    bool predict = calpath || count_run || rate_s >= 0 || model || count_for > 0;
    if (predict && (!compile_only || (!!count_run + (rate_s >= 0) + (count_for > 0)) > 1)) {
        fprintf(stderr, "hvt: --rate, --count-run, --count-for, --cal and --model go with -e "
                "(one rate: --rate, --count-run or --count-for)\n");
        return 2;
    }
    if (quiet) xopts[nx < MAX_XOPTS ? nx++ : nx - 1] = "quiet";
    if (flow) xopts[nx < MAX_XOPTS ? nx++ : nx - 1] = "flowindent";

    char *src = NULL;
    size_t srclen;
    if (join_sources(srcs, nsrc, &src, &srclen) < 0)
        return 1;
    int rc = 1;
    kinfo ki;
    if (kinfo_open(&ki, vmlinuz, 1) != 0) {
        free(src);
        return 1;
    }
    probe_list l;
    if (probe_list_build(&ki.syms, &l)) {
        fprintf(stderr, "hvt: out of memory\n");
        kinfo_close(&ki);
        free(src);
        return 1;
    }
    /* the image: system call return probes where RAX is the return value (see
     * probe_list.h), and the addr provider's SYM+OFF decoded while compiling */
    kimg kimage;
    bool have_kimg = kimg_load(&kimage, vmlinuz) == 0;
    sdt_table sdt = { 0 };
    io_table io = { 0 };                   /* the io provider, on sdt and fbt */
    if (have_kimg) {
        char *all[] = { "syscall:::return" };
        char serr[300] = "out of memory";
        probe_list_follow_tail(&l, &ki.syms, &kimage, all, 1);
        /* the static tracepoints (sdt:GROUP::EVENT) and their recipes, read from the image */
        if (ki.btf.ntypes && (sdt_build(&kimage, &ki.syms, &ki.btf, &sdt, serr, sizeof serr) ||
                              probe_list_add_sdt(&l, &sdt) ||
                              probe_list_add_io(&l, &sdt, &ki.btf, &io, serr, sizeof serr)))
            fprintf(stderr, "hvt: no sdt probes: %s\n", serr);
    }
    /* fbt:MODULE:F:entry in the kernel package's modules (armed when the guest loads them) */
    if (moddir && *moddir) {
        char merr[400];
        if (probe_list_add_kmods(&l, &ki.btf, &ki.syms, moddir, merr, sizeof merr) < 0) {
            fprintf(stderr, "hvt: no module probes: %s\n", merr);
            probe_list_free(&l);
            if (have_kimg) kimg_free(&kimage);
            io_free(&io);
            sdt_free(&sdt);
            kinfo_close(&ki);
            free(src);
            return 1;
        }
    }
    /* DTrace's stable providers (proc, sched) on the probes just listed */
    if (probe_list_add_stable(&l))
        fprintf(stderr, "hvt: no stable providers: out of memory\n");
    d_kernel_resolver kres = { .list = &l, .syms = have_kimg ? &ki.syms : NULL,
                               .img = have_kimg ? &kimage : NULL };
    /* the image's ORC tables: the host's unwinder (stack()), and where the running kernel
     * keeps them, for the hypervisor's (stack() keys) */
    orc_table orc0;
    struct hvt_dif_korc korc;
    char kerr[300] = "no kernel image";
    bool have_orc0 = have_kimg && orc_load_ex(&kimage, &ki.syms, ORC_LAYOUT_AUTO, &orc0, kerr, sizeof kerr) == 0;
    bool have_korc = have_orc0 && orc_korc(&orc0, &ki.syms, &korc, kerr, sizeof kerr) == 0;
    d_options opt = { .resolve = d_resolve_kernel, .resolve_ctx = &kres, .begin_id = ID_BEGIN,
                      .end_id = ID_END, .error_id = ID_ERROR, .btf = ki.btf.ntypes ? &ki.btf : NULL,
                      .macro_args = macros, .nmacro_args = nm, .target_pid = target,
                      .xopts = xopts, .nxopts = nx, .destructive = destructive,
                      .allow_zero_matches = zero, .ksyms = have_kimg ? &ki.syms : NULL,
                      .korc = have_korc ? &korc : NULL };
    dprog p;
    memset(&p, 0, sizeof p);
    char *ans = malloc(ANSWER_MAX), path[64] = "", cmd[128];
    struct hvt_probe_spec *specs = NULL;
    struct run r = { .p = &p, .syms = &ki.syms, .dir = dir, .sock = sock };
    r.held_tail = &r.held;
    d_consumer *con = NULL;
    follow w = { 0 };
    FILE *out = stdout;
    bool loaded = false, armed = false, stepping = false;
    d_cmd dc = { .dir = dir, .sock = sock };
    int cmd_status = 0;
    if (!ans || !(r.ans = malloc(ANSWER_MAX)))
        goto done;
    if (cmdline) {                         /* dtrace -c: the process exists first: $target */
        if (d_cmd_start(&dc, cmdline, 30) != 0)
            goto done;
        opt.target_pid = dc.pid;
    }
    /* Kernel globals by name (`sym) are at their link address plus the running kernel's KASLR
     * slide: the hypervisor knows it (from IA32_LSTAR), the collector reports it. (The io
     * provider's devinfo_t dev_name reads `major_names.) */
    if (!compile_only && !image_out && !specs_out && (memchr(src, '`', srclen) || memmem(src, srclen, "dev_name", 8))) {
        if (hvt_coll_ask(dir, sock, "probe status", ans, ANSWER_MAX) != 0) {
            fprintf(stderr, "hvt: cannot learn the running kernel's KASLR slide from the collector: %s\n", ans);
            goto done;
        }
        opt.kslide = (int64_t)hvt_coll_uval(ans, "probe_slide");
    }
    /* fbt args[] of a module's functions and its tracepoints' are typed from the module's own
     * BTF (split over the kernel's): the modules the program's descriptions match, joined */
    static kmod_btfs mb;                   /* (the program's types may point into it: kept) */
    static d_btf_module dm[MOD_NOTE_MAX];
    if (moddir && *moddir && opt.btf) {
        static mod_note mn;
        mn = (mod_note){ .kr = &kres };
        d_options o1 = opt;
        dprog p1;
        FILE *devnull = fopen("/dev/null", "w");
        memset(&p1, 0, sizeof p1);
        o1.resolve = resolve_note;
        o1.resolve_ctx = &mn;
        o1.err = devnull;
        if (devnull) {
            d_compile(script ? script : "<-n>", src, srclen, &o1, &p1);
            dprog_free(&p1);
            fclose(devnull);
        }
        static char mpath[MOD_NOTE_MAX][4096];
        const char *paths[MOD_NOTE_MAX], *names[MOD_NOTE_MAX];
        int nm = 0;
        char merr[300];
        for (int k = 0; k < mn.n; k++)     /* (a module without a file here stays untyped) */
            if (kmod_find(moddir, mn.mod[k], mpath[nm], sizeof mpath[nm]) == 0) {
                paths[nm] = mpath[nm];
                names[nm++] = mn.mod[k];
            }
        if (nm && kmod_btfs_read(paths, names, nm, opt.btf, &mb, merr, sizeof merr) == 0) {
            for (int k = 0; k < mb.n; k++)
                dm[k] = (d_btf_module){ mb.r[k].name, mb.r[k].lo, mb.r[k].hi };
            opt.btf = &mb.btf;
            opt.btf_modules = dm;
            opt.nbtf_modules = mb.n;
        } else if (nm) {
            fprintf(stderr, "hvt: the modules' types are not used: %s\n", merr);
        }
    }
    hint_resolver hr = { .kr = &kres, .moddir = moddir && *moddir ? moddir : NULL };
    opt.resolve = resolve_hint;
    opt.resolve_ctx = &hr;
    int crc = d_compile(script ? script : "<-n>", src, srclen, &opt, &p);
    if (crc != 0)
        goto done;
    if (dump)
        dprog_dump(stdout, &p);
    int fold_agg = folded || flame_svg ? d_fold_pick(&p) : -1;
    if ((folded || flame_svg) && fold_agg < 0) {
        fprintf(stderr, "hvt: --folded and --flame need an aggregation keyed by stack( ) or ustack( ) "
                "whose function is count( ) or sum( )\n");
        goto done;
    }
    size_t nprobes = 0;
    size_t nspecs = 0;
    for (int i = 0; i < p.nprobes; i++)
        nspecs += p.probes[i].id < ID_BEGIN;
    nprobes = (size_t)p.nprobes;       /* dtrace counts BEGIN, END and ERROR too */
    /* DTrace names a -n program by its first clause's probe descriptions; -q: not at all */
    if (!quiet)
        fprintf(stderr, "hvt: %s '%s' matched %zu probe%s\n", script ? "script" : "description",
            script ? script : p.nclauses && p.clauses[0].where ? p.clauses[0].where : text,
            nprobes, nprobes == 1 ? "" : "s");
    if (image_out || specs_out) {          /* for the guest tool: the image and its probes' specs */
        ((struct hvt_dif_hdr *)p.image)->tsc_khz = (uint32_t)tsc_khz;
        ((struct hvt_dif_hdr *)p.image)->walltime = wall_now(); /* the guest tool loads it next */
        size_t nsp = 0, cap = 0;
        bool oom = false;
        (void)nspecs;
        for (int i = 0; !oom && i < p.nprobes; i++)
            if (p.probes[i].id < ID_BEGIN && p.probes[i].id <= l.n)
                oom = probe_specs_add(&l.p[p.probes[i].id - 1], tsc_khz, 0, 1, &specs, &nsp, &cap) != 0;
        if (!specs && !oom)
            specs = calloc(1, sizeof *specs);
        if (oom || !specs || (image_out && util_write_file(image_out, p.image, p.image_len)) ||
            (specs_out && util_write_file(specs_out, specs, nsp * sizeof *specs))) {
            fprintf(stderr, "hvt: cannot write the image or the specs\n");
            goto done;
        }
        compile_only = 1;
    }
    if (compile_only) {
        if (count_for > 0) {               /* the rate from a counting run, now */
            signal(SIGINT, on_signal);
            if (count_live(&p, &l, dir, sock, count_for, tsc_khz, counted, sizeof counted))
                goto done;
            count_run = counted;
        }
        rc = predict ? d_predict_main(stdout, stderr, p.image, p.image_len, calpath, rate_s, count_run,
                                      (double)tsc_khz, model) : 0;
        goto done;
    }
    if (outpath && !(out = fopen(outpath, "w"))) {
        fprintf(stderr, "hvt: failed to open %s: %s\n", outpath, strerror(errno));
        out = stdout;
        goto done;
    }

    /* the collector, the hypervisor behind it, its TSC rate */
    if (ask(dir, sock, "status", ans) != 0)
        goto done;
    char sdir[4096];
    if (!hvt_coll_val(ans, "dir", sdir, sizeof sdir) || !hvt_coll_uval(ans, "connected")) {
        fprintf(stderr, "hvt: no hypervisor is connected to the collector at %s\n", dir);
        goto done;
    }
    r.cpus = (unsigned)hvt_coll_uval(ans, "cpu_count");
    uint64_t khz = tsc_khz ? tsc_khz : hvt_coll_uval(ans, "tsc_khz");
    ((struct hvt_dif_hdr *)p.image)->tsc_khz = (uint32_t)khz;
    ((struct hvt_dif_hdr *)p.image)->walltime = wall_now();

    /* load, BEGIN, arm */
    if (temp_file(path, p.image, p.image_len) < 0) {
        fprintf(stderr, "hvt: cannot write a temporary file: %s\n", strerror(errno));
        goto done;
    }
    snprintf(cmd, sizeof cmd, "d load %s", path);
    int lrc = hvt_coll_ask(dir, sock, cmd, ans, ANSWER_MAX);
    unlink(path);
    if (lrc != 0 || hvt_coll_uval(ans, "d_error")) {
        char why[64] = "";
        hvt_coll_val(ans, "d_why", why, sizeof why);
        if (lrc == 0 || strstr(ans, "d_error="))
            fprintf(stderr, "hvt: the hypervisor refused the program: error %lld, clause %llu "
                    "instruction %llu: %s\n", (long long)(int32_t)hvt_coll_uval(ans, "d_error"),
                    (unsigned long long)hvt_coll_uval(ans, "d_err_clause"),
                    (unsigned long long)hvt_coll_uval(ans, "d_err_insn"), why);
        else
            fprintf(stderr, "hvt: %s\n", ans);
        goto done;
    }
    loaded = true;
    d_out dout, derr;
    d_out_file(&dout, out);
    d_out_file(&derr, stderr);
    if (have_orc0) {
        r.orc = orc0;                      /* the run frees it */
        r.have_orc = true;
        have_orc0 = false;
    }
    d_consume_cfg cfg = { .out = &dout, .err = &derr, .sym = { symbolize, &r },
                          .unwind = unwind, .unwind_ctx = &r };
    if (!(con = d_consume_new(&p, &cfg))) {
        fprintf(stderr, "hvt: out of memory\n");
        goto done;
    }
    r.con = con;
    if (ask(dir, sock, "d begin", ans) != 0)
        goto done;
    if (follow_open(&w, sdir, hvt_coll_uval(ans, "d_stream_off")) < 0)
        goto done;
    size_t ns = 0, scap = 0;
    bool spec_oom = false;
    specs = calloc(1, sizeof *specs);
    scap = specs ? 1 : 0;
    for (int i = 0; specs && !spec_oom && i < p.nprobes; i++) {
        uint32_t id = p.probes[i].id;
        if (id >= ID_BEGIN)
            continue;
        if (!id || id > l.n || l.p[id - 1].id != id) {
            fprintf(stderr, "hvt: internal error: probe id %u is not in the list\n", id);
            goto done;
        }
        const probe_desc *d = &l.p[id - 1];
        if ((d->kind == PL_PROFILE || d->kind == PL_TICK) && !khz) {
            fprintf(stderr, "hvt: the hypervisor's TSC rate is unknown: give --tsc-khz for %s\n", d->name);
            goto done;
        }
        size_t before = ns;
        spec_oom = probe_specs_add(d, khz, 0, 1, &specs, &ns, &scap) != 0;
        if (!spec_oom && samples && (d->kind == PL_PROFILE || d->kind == PL_TICK))
            for (size_t k = before; k < ns; k++)
                specs[k].kind |= HVT_PROBE_F_STACK;   /* and the sample path's record of it */
    }
    if (!specs || spec_oom)
        goto done;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    if (ns) {
        if (temp_file(path, specs, ns * sizeof *specs) < 0)
            goto done;
        snprintf(cmd, sizeof cmd, "probe arm %s", path);
        int arc = hvt_coll_ask(dir, sock, cmd, ans, ANSWER_MAX);
        unlink(path);
        armed = true;                      /* some may be: disarm whatever happens */
        if (arc != 0 || hvt_coll_uval(ans, "probe_specs_taken") != ns) {
            fprintf(stderr, "hvt: arming failed: %llu of %zu probes armed (%s)\n",
                    (unsigned long long)hvt_coll_uval(ans, "probe_specs_taken"), ns,
                    arc != 0 ? ans : "the hypervisor refused one");
            goto stop;
        }
        r.slide = (int64_t)hvt_coll_uval(ans, "probe_slide");
        if (probecost)
            ask(dir, sock, "probe cost on", ans);
    }

    /* run: print records as they arrive; a program that prints aggregations while it runs
     * (printa) gets a fresh snapshot every aggrate (DTrace's default: 1 s) to print from */
    bool printa = false;
    for (int i = 0; i < p.nclauses; i++)
        for (int k = 0; k < p.clauses[i].nacts; k++) {
            printa |= p.clauses[i].acts[k].kind == D_ACT_PRINTA;
            stepping |= p.clauses[i].acts[k].kind == D_ACT_STEP;
        }
    if (cmdline && d_cmd_go(&dc) != 0)
        goto stop;
    uint64_t t0 = now_ns(), snapped = t0, polled = t0;
    while (!g_stop && !r.exited && (duration <= 0 || now_ns() - t0 < (uint64_t)(duration * 1e9))) {
        if (cmdline && now_ns() - polled >= 200000000ull) {   /* -c: the run ends with it */
            polled = now_ns();
            int more = d_cmd_poll(&dc, &cmd_status);
            if (more < 0)
                goto stop;
            if (!more)
                break;
        }
        if (printa && now_ns() - snapped >= (p.aggrate_ns ? p.aggrate_ns : 1000000000ull)) {
            snapped = now_ns();
            hvt_coll_ask(dir, sock, "d snap", ans, ANSWER_MAX);
        }
        if (poll_run(&w, &r) < 0)
            goto stop;
        fflush(out);
        usleep(20000);
    }
    rc = 0;
stop:
    /* DTrace's order: no more firings, END, the last records and aggregations */
    if (armed && probecost && ask(dir, sock, "probe cost", ans) == 0) {
        print_probecost(ans);
        ask(dir, sock, "probe cost off", ans);
    }
    if (armed)
        ask(dir, sock, "probe disarm", ans);
    if (stepping) {                        /* a step() without its unstep() ends here */
        ask(dir, sock, "trace stop", ans);
        fprintf(stderr, "hvt: step() traced instructions: %s/trace.hvt (hvt analyze --vmlinuz %s %s/trace.hvt)\n",
                sdir, vmlinuz, sdir);
    }
    if (ask(dir, sock, "d end", ans) == 0) {
        r.want_gen = (uint32_t)hvt_coll_uval(ans, "d_snap_gen");
        uint64_t t1 = now_ns();
        /* END's snapshot, and those END's printa() records asked for */
        while ((snap_all_done(&r) < r.want_gen || r.held) && now_ns() - t1 < (uint64_t)(drain * 1e9)) {
            if (poll_run(&w, &r) < 0)
                break;
            if (snap_all_done(&r) < r.want_gen || r.held)
                usleep(20000);
        }
        if (snap_all_done(&r) < r.want_gen || r.held) {
            fprintf(stderr, "hvt: the last aggregation snapshot did not arrive within %.0f s\n", drain);
            rc = 1;
        }
    } else {
        rc = 1;
    }
    if (ask(dir, sock, "d status", ans) == 0) {
        uint64_t made = hvt_coll_uval(ans, "d_records"), lost = hvt_coll_uval(ans, "d_records_lost");
        uint64_t t2 = now_ns();
        while (r.records + lost < made && now_ns() - t2 < (uint64_t)(drain * 1e9)) {
            if (poll_run(&w, &r) < 0)
                break;
            usleep(20000);
        }
        if (lost)
            fprintf(stderr, "hvt: %llu records lost on the link\n", (unsigned long long)lost);
        if (r.records + lost < made)
            fprintf(stderr, "hvt: %llu records made did not arrive\n",
                    (unsigned long long)(made - lost - r.records));
        if (lost || r.records + lost < made)
            rc = 1;
    }
    while (r.held) {                       /* a snapshot that did not come: from what is in */
        struct held *h = r.held;
        r.held = h->next;
        consume(&r, h->buf, h->len);
        free(h);
    }
    r.held_tail = &r.held;
    d_consume_end(con);
    if (folded && d_fold_write(d_consume_aggs(con), &p, fold_agg, &ki.syms, r.slide, folded, 0) < 0)
        rc = 1;
    if (flame_svg && d_fold_write(d_consume_aggs(con), &p, fold_agg, &ki.syms, r.slide, flame_svg, 1) < 0)
        rc = 1;
    int st;
    if (d_consume_exit_status(con, &st))
        rc = st;
done:
    if (loaded)
        hvt_coll_ask(dir, sock, "d unload", ans ? ans : cmd, ans ? ANSWER_MAX : sizeof cmd);
    if (cmdline)                           /* last: the agent may end (and the guest with it) */
        d_cmd_cancel(&dc);
    if (out != stdout)
        fclose(out);
    follow_close(&w);
    if (con)
        d_consume_free(con);
    if (r.have_orc)
        orc_free(&r.orc);
    if (have_orc0)
        orc_free(&orc0);
    while (r.held) {
        struct held *h = r.held;
        r.held = h->next;
        free(h);
    }
    free(r.ans);
    free(specs);
    dprog_free(&p);
    free(ans);
    free(src);
    probe_list_free(&l);
    io_free(&io);
    sdt_free(&sdt);
    if (have_kimg)
        kimg_free(&kimage);
    kinfo_close(&ki);
    return rc;
}
