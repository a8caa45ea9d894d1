/* view: see view.h. */
#include "view.h"

#include "nest.h"
#include "trace_reader.h"
#include "util.h"
#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* START/STOP reasons (enum hvt_reason), as users read them. */
const char *hvt_reason_name(uint64_t r)
{
    static const char *const names[HVT_REASON_COUNT] = {
        [HVT_REASON_USER] = "host command", [HVT_REASON_HYPERCALL] = "hypercall mark",
        [HVT_REASON_BUFFER_FULL] = "buffer full", [HVT_REASON_EVENT] = "event",
        [HVT_REASON_END] = "guest powered off", [HVT_REASON_PASSES] = "passes of an address",
        [HVT_REASON_ENTRY] = "function entry", [HVT_REASON_BUDGET] = "instruction budget spent",
        [HVT_REASON_TRIPLE_FAULT] = "guest triple fault", [HVT_REASON_DOUBLE_FAULT] = "guest double fault",
        [HVT_REASON_STOP_AT] = "stop address reached (panic/oops)", [HVT_REASON_LINK] = "link failure",
        [HVT_REASON_BOOT] = "hypervisor start", [HVT_REASON_FILTER] = "filter",
        [HVT_REASON_PROBE] = "D step()/unstep()",
        [HVT_REASON_PROBE_STOP] = "D stop()", [HVT_REASON_RESET] = "guest reset", [HVT_REASON_HV_PANIC] = "hypervisor panic",
    };
    return r < HVT_REASON_COUNT && names[r] ? names[r] : "unknown reason";
}

enum {
    VIEW_MAX_CPUS = 1024,
    VIEW_MAX_PROCS = 4096,
    VIEW_MAX_CR3 = 8,
    PAGE_SHIFT = 12,
    PAGE_HASH_SHIFT = 20,
    PROGRESS_MIN_INSNS = 10 * 1000 * 1000,
    PROGRESS_EVERY = 1 << 22,
};

typedef struct {
    int64_t pid, tgid;
    char comm[HVT_COMM_MAX + 1];
    uint64_t insns, kinsns, uinsns;
    uint64_t cr3[VIEW_MAX_CR3];
    int ncr3;
    uint64_t *pages; /* open-addressing set of user page numbers + 1 */
    size_t npages, pcap;
} view_proc;

typedef struct {
    nest_cpu nest;
    uint32_t disasm_hint;
    int hide_depth; /* nest: inside a hidden function entered at this depth; -1: not */
    int proc; /* index into procs */
    int64_t pid, tgid;
    char comm[HVT_COMM_MAX + 1];
    /* The record mode the listing last said for this CPU (list_mode); mode_said 0: nothing
     * said yet (a trace starts in FULL). */
    int mode_said;
    uint8_t mode;
    uint32_t mode_mask;
} view_cpu;

typedef struct {
    const view_opts *o;
    const ksym_table *syms;
    view_cpu *cpus[VIEW_MAX_CPUS];
    view_proc *procs;
    int nprocs;
    uint64_t *fn_insns, *fn_calls; /* indexed by fid + 2 */
    uint8_t *hidden;               /* indexed by fid + 2 */
    char namebuf[64];
    nest_tasks *tasks;             /* switched-out tasks' stacks (nest view) */
    uint64_t mode_insns[HVT_MODE_COUNT]; /* summary: instructions per record mode */
    uint32_t regs_sets;            /* summary: the registers REGS mode carried, all sets */
    uint64_t now;                  /* time of the instruction being nested (hooks) */
} view_state;

/* A task's key for the nest view: its pid, but the idle tasks (pid 0) are one per CPU and an
 * unknown task (-1) is nobody's. */
static int64_t task_key(int64_t pid, unsigned cpu)
{
    if (pid > 0) return pid;
    return pid == 0 ? -1 - (int64_t)cpu : INT64_MIN + cpu;
}

static view_cpu *get_cpu(view_state *v, unsigned cpu);

static view_task task_of(const view_cpu *c)
{
    return (view_task){c->pid, c->tgid, c->comm};
}

static const char *fname(void *ctx, int32_t fid)
{
    view_state *v = ctx;
    if (fid == NEST_USER) return "[user]";
    if (fid == NEST_UNKNOWN || !v->syms) return "[unknown]";
    return ksym_name(v->syms, (uint32_t)fid);
}

static void on_flow(void *ctx, const nest_cpu *c, int enter, int depth, int32_t fid)
{
    view_state *v = ctx;
    if (enter == 1 && v->fn_calls) v->fn_calls[fid + 2]++;
    if (v->hidden) {
        view_cpu *vc = v->cpus[c->cpu < VIEW_MAX_CPUS ? c->cpu : VIEW_MAX_CPUS - 1];
        if (vc->hide_depth >= 0) {
            if (depth > vc->hide_depth) return;
            vc->hide_depth = -1; /* the hidden function's own "<-" */
            return;
        }
        if (enter && v->hidden[fid + 2]) {
            vc->hide_depth = depth;
            return;
        }
    }
    const view_hooks *h = v->o->hooks;
    if (h && h->flow) {
        view_task t = task_of(get_cpu(v, c->cpu));
        h->flow(h->ctx, c->cpu, v->now, &t, enter, depth, fname(v, fid));
    }
    if (v->o->views & VIEW_NEST)
        fprintf(v->o->out, "%3u  %*s%s %s\n", c->cpu, 2 * depth, "",
                enter == 2 ? "=>" : enter ? "->" : "<-", fname(v, fid));
}

static void on_level(void *ctx, const nest_cpu *c, const char *reason)
{
    view_state *v = ctx;
    if (v->hidden) v->cpus[c->cpu < VIEW_MAX_CPUS ? c->cpu : VIEW_MAX_CPUS - 1]->hide_depth = -1;
    const view_hooks *h = v->o->hooks;
    if (h && h->level) {
        view_task t = task_of(get_cpu(v, c->cpu));
        h->level(h->ctx, c->cpu, v->now, &t, reason);
    }
    if (v->o->views & VIEW_NEST) fprintf(v->o->out, "%3u  == %s ==\n", c->cpu, reason);
}

static int find_proc(view_state *v, int64_t pid, int64_t tgid, const char *comm)
{
    for (int i = 0; i < v->nprocs; i++)
        if (v->procs[i].pid == pid && strcmp(v->procs[i].comm, comm) == 0) return i;
    if (v->nprocs == VIEW_MAX_PROCS) return VIEW_MAX_PROCS - 1; /* lump the rest together */
    view_proc *p = &v->procs[v->nprocs];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->tgid = tgid;
    snprintf(p->comm, sizeof p->comm, "%s", comm);
    return v->nprocs++;
}

static void page_add(view_proc *p, uint64_t page)
{
    if ((p->npages + 1) * 2 > p->pcap) {
        size_t ncap = p->pcap ? p->pcap * 2 : 256;
        uint64_t *n = calloc(ncap, sizeof *n);
        if (!n) return;
        for (size_t i = 0; i < p->pcap; i++) {
            if (!p->pages[i]) continue;
            size_t j = (p->pages[i] * UTIL_GOLDEN64 >> PAGE_HASH_SHIFT) & (ncap - 1);
            while (n[j]) j = (j + 1) & (ncap - 1);
            n[j] = p->pages[i];
        }
        free(p->pages);
        p->pages = n;
        p->pcap = ncap;
    }
    uint64_t key = page + 1;
    size_t j = (key * UTIL_GOLDEN64 >> PAGE_HASH_SHIFT) & (p->pcap - 1);
    for (; p->pages[j]; j = (j + 1) & (p->pcap - 1))
        if (p->pages[j] == key) return;
    p->pages[j] = key;
    p->npages++;
}

static view_cpu *get_cpu(view_state *v, unsigned cpu)
{
    if (cpu >= VIEW_MAX_CPUS) cpu = VIEW_MAX_CPUS - 1;
    if (!v->cpus[cpu]) {
        v->cpus[cpu] = calloc(1, sizeof(view_cpu));
        if (!v->cpus[cpu]) return NULL;
        nest_init(&v->cpus[cpu]->nest, cpu);
        v->cpus[cpu]->pid = -1;
        v->cpus[cpu]->tgid = -1;
        v->cpus[cpu]->hide_depth = -1;
        snprintf(v->cpus[cpu]->comm, sizeof v->cpus[cpu]->comm, "?");
        v->cpus[cpu]->proc = v->procs ? find_proc(v, -1, -1, "?") : 0;
    }
    return v->cpus[cpu];
}

static void set_task(view_state *v, view_cpu *c, const tr_rec *r)
{
    c->pid = (int64_t)r->a;
    c->tgid = (int64_t)r->b;
    snprintf(c->comm, sizeof c->comm, "%s", r->comm);
    if (v->procs) c->proc = find_proc(v, (int64_t)r->a, (int64_t)r->b, r->comm);
}

static void marker(view_state *v, view_cpu *c, const tr_rec *r)
{
    char why[96];
    FILE *out = v->o->out;
    int list = v->o->views & VIEW_LIST;
    const view_hooks *h = v->o->hooks;
    if (h && h->marker) {
        view_task t = task_of(c);
        h->marker(h->ctx, r, &t);
    }
    switch (r->kind) {
    case HVT_MARK_EVENT:
        if (r->ev_type == HVT_EV_EXTINT) snprintf(why, sizeof why, "interrupt %u", r->vector);
        else if (r->ev_type == HVT_EV_NMI) snprintf(why, sizeof why, "nmi");
        else if (r->errcode >= 0)
            snprintf(why, sizeof why, "exception %u error 0x%llx", r->vector, (unsigned long long)r->errcode);
        else snprintf(why, sizeof why, "exception %u", r->vector);
        nest_event(&c->nest, why);
        break;
    case HVT_MARK_SYSCALL:
        snprintf(why, sizeof why, "syscall %llu", (unsigned long long)r->a);
        nest_level(&c->nest, why);
        break;
    case HVT_MARK_SWITCH:
        snprintf(why, sizeof why, "switch to %lld/%s", (long long)r->a, r->comm);
        {
            int64_t from = task_key(c->pid, c->nest.cpu), to = task_key(r->a, c->nest.cpu);
            set_task(v, c, r);
            nest_switch(&c->nest, v->tasks, from, to, why);
        }
        break;
    case HVT_MARK_CONTEXT: /* the writer restating the current task at a chunk start */
        snprintf(why, sizeof why, "context %lld/%s", (long long)r->a, r->comm);
        set_task(v, c, r);
        break;
    case HVT_MARK_START: snprintf(why, sizeof why, "start (%s)", hvt_reason_name(r->a));
        nest_level(&c->nest, why);
        break;
    case HVT_MARK_STOP: snprintf(why, sizeof why, "stop (%s)", hvt_reason_name(r->a)); break;
    case HVT_MARK_GAP:
        snprintf(why, sizeof why, "gap: %llu records, %llu instructions lost", (unsigned long long)r->a,
                 (unsigned long long)r->b);
        nest_level(&c->nest, why);
        break;
    case HVT_MARK_VMEXIT:
        snprintf(why, sizeof why, "vm exit reason %llu qualification 0x%llx", (unsigned long long)r->a,
                 (unsigned long long)r->b);
        break;
    case HVT_MARK_TIME: snprintf(why, sizeof why, "time %llu", (unsigned long long)r->a); break;
    case HVT_MARK_MODE: return; /* said at the instruction where the mode changes (list_mode) */
    default: snprintf(why, sizeof why, "marker %u", r->kind); break;
    }
    if (list) fprintf(out, "# %llu %u %s\n", (unsigned long long)r->tsc, r->cpu, why);
}

/* "# tsc cpu record mode M" before the first instruction of a CPU in a mode other than the one
 * said last (a trace starts in full, said or not): from the instructions, not from MODE
 * markers, which a writer also repeats at every chunk start (and a chunk starting in full needs
 * none). */
static void list_mode(view_state *v, view_cpu *c, const tr_rec *r)
{
    if (c->mode_said ? c->mode == r->mode && c->mode_mask == r->regs_known : r->mode == HVT_MODE_FULL)
        return;
    char m[160];
    c->mode_said = 1;
    c->mode = r->mode;
    c->mode_mask = r->regs_known;
    fprintf(v->o->out, "# %llu %u record mode %s\n", (unsigned long long)r->tsc, r->cpu,
            tr_mode_name(m, sizeof m, r->mode, r->regs_known));
}

static void list_insn(view_state *v, view_cpu *c, const tr_rec *r, disasm_cache *d, const disasm_entry *e)
{
    char sym[160], who[40];
    if (e->sym >= 0) snprintf(sym, sizeof sym, "%s+0x%x", ksym_name(v->syms, (uint32_t)e->sym), e->sym_off);
    else snprintf(sym, sizeof sym, "%s", disasm_is_kernel(r->rip) ? "[unknown]" : "[user]");
    snprintf(who, sizeof who, "%lld/%s", (long long)c->pid, c->comm);
    for (char *s = who; *s; s++) /* keep the listing's columns splittable on blanks */
        if (*s == ' ' || *s == '\t') *s = '_';
    char hex[2 * HVT_CODE_MAX + 1];
    for (int i = 0; i < r->code_len; i++) snprintf(hex + 2 * i, 3, "%02x", r->code[i]);
    FILE *out = v->o->out;
    fprintf(out, "%llu %u %s %016llx %s %s  %s", (unsigned long long)r->tsc, r->cpu, who, (unsigned long long)r->rip,
            sym, hex, disasm_text(d, e));
    /* Only registers the record mode carries: in FLOW (or outside a REGS set) regs[] holds
     * stale values, which are no instruction's. */
    uint32_t shown = r->changed & r->regs_known;
    if (shown) {
        fputs("  ;", out);
        for (unsigned i = 0; i < HVT_NREGS; i++)
            if (shown & (1u << i)) fprintf(out, " %s=%llx", tr_reg_name(i), (unsigned long long)r->regs[i]);
    }
    fputc('\n', out);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void print_summary(view_state *v)
{
    FILE *out = v->o->out;
    fprintf(out, "%-8s %-8s %-16s %14s %14s %14s  %s\n", "pid", "tgid", "comm", "insns", "kernel", "user",
            "cr3 / user code ranges");
    for (int i = 0; i < v->nprocs; i++) {
        view_proc *p = &v->procs[i];
        if (!p->insns) continue;
        fprintf(out, "%-8lld %-8lld %-16s %14llu %14llu %14llu ", (long long)p->pid, (long long)p->tgid, p->comm,
                (unsigned long long)p->insns, (unsigned long long)p->kinsns, (unsigned long long)p->uinsns);
        for (int k = 0; k < p->ncr3; k++) fprintf(out, " cr3=%llx", (unsigned long long)p->cr3[k]);
        fputc('\n', out);
        if (!p->npages) continue;
        uint64_t *pg = malloc(p->npages * sizeof *pg);
        if (!pg) continue;
        size_t n = 0;
        for (size_t j = 0; j < p->pcap; j++)
            if (p->pages[j]) pg[n++] = p->pages[j] - 1;
        qsort(pg, n, sizeof *pg, cmp_u64);
        for (size_t j = 0; j < n;) {
            size_t k = j;
            while (k + 1 < n && pg[k + 1] == pg[k] + 1) k++;
            fprintf(out, "%52s user code %016llx-%016llx (%zu pages)\n", "", (unsigned long long)(pg[j] << PAGE_SHIFT),
                    (unsigned long long)((pg[k] + 1) << PAGE_SHIFT), k - j + 1);
            j = k + 1;
        }
        free(pg);
    }
    /* How the instructions were recorded: a FLOW or REGS trace's registers are not all known. */
    char m[160];
    fprintf(out, "record modes:");
    for (unsigned k = 0; k < HVT_MODE_COUNT; k++)
        if (v->mode_insns[k])
            fprintf(out, " %s %llu insns", k == HVT_MODE_REGS ? tr_mode_name(m, sizeof m, k, v->regs_sets)
                                                               : tr_mode_name(m, sizeof m, k, 0),
                    (unsigned long long)v->mode_insns[k]);
    fputc('\n', out);
}

typedef struct { int32_t fid; uint64_t insns, calls; } fn_row;
static int cmp_fn(const void *a, const void *b)
{
    const fn_row *x = a, *y = b;
    if (x->insns != y->insns) return x->insns < y->insns ? 1 : -1;
    return x->fid < y->fid ? -1 : x->fid > y->fid;
}

static void print_funcs(view_state *v, size_t nf)
{
    fn_row *rows = malloc(nf * sizeof *rows);
    if (!rows) return;
    size_t n = 0;
    for (size_t i = 0; i < nf; i++)
        if (v->fn_insns[i]) rows[n++] = (fn_row){(int32_t)i - 2, v->fn_insns[i], v->fn_calls[i]};
    qsort(rows, n, sizeof *rows, cmp_fn);
    fprintf(v->o->out, "%14s %10s  %s\n", "insns", "entries", "function");
    for (size_t i = 0; i < n; i++)
        fprintf(v->o->out, "%14llu %10llu  %s\n", (unsigned long long)rows[i].insns, (unsigned long long)rows[i].calls,
                fname(v, rows[i].fid));
    free(rows);
}

int view_run(const char *path, const view_opts *o)
{
    tr_reader *r = tr_open(path);
    if (!r) return 1;
    tr_set_range(r, o->from, o->to);
    if (!o->file_order && tr_set_merge(r) != 0) {
        tr_close(r);
        return 1;
    }
    disasm_cache *d = disasm_open(o->syms, o->slide);
    view_state v;
    memset(&v, 0, sizeof v);
    v.o = o;
    v.syms = o->syms;
    size_t nf = (o->syms ? o->syms->count : 0) + 2;
    nest_trie *trie = (o->views & VIEW_FOLDED) ? nest_trie_new() : NULL;
    v.tasks = nest_tasks_new();
    if (o->views & VIEW_SUMMARY) v.procs = calloc(VIEW_MAX_PROCS, sizeof *v.procs);
    if (o->views & VIEW_FUNCS) {
        v.fn_insns = calloc(nf, sizeof *v.fn_insns);
        v.fn_calls = calloc(nf, sizeof *v.fn_calls);
    }
    if (o->hide && o->syms) {
        v.hidden = calloc(nf, 1);
        char pats[1024];
        snprintf(pats, sizeof pats, "%s", o->hide);
        for (uint32_t i = 0; v.hidden && i < o->syms->count; i++) {
            char tmp[1024];
            memcpy(tmp, pats, sizeof tmp);
            char *save = NULL;
            for (char *g = strtok_r(tmp, ",", &save); g; g = strtok_r(NULL, ",", &save))
                if (util_glob(g, ksym_name(o->syms, i))) v.hidden[i + 2] = 1;
        }
    }
    nest_sink sink = {on_flow, on_level, &v, trie};
    int want_nest = (o->views & (VIEW_NEST | VIEW_FOLDED | VIEW_FUNCS)) || (o->hooks && (o->hooks->flow || o->hooks->level));
    int progress = isatty(2) && tr_total_insns(r) > PROGRESS_MIN_INSNS;
    uint64_t total = tr_total_insns(r), done = 0;
    tr_rec rec;
    int rc;
    if (o->views & VIEW_NEST) fprintf(o->out, "CPU  FUNCTION\n");
    while ((rc = tr_next(r, &rec)) > 0) {
        view_cpu *c = get_cpu(&v, rec.cpu);
        if (!c || !d) { rc = -1; break; }
        if (rec.tsc < o->from || rec.tsc > o->to) {
            if (rec.tsc < o->from && (rec.kind == HVT_MARK_SWITCH || rec.kind == HVT_MARK_CONTEXT))
                set_task(&v, c, &rec); /* who runs when the window opens */
            if (o->file_order || rec.tsc < o->from) continue;
            break; /* merged: everything after is later */
        }
        if (rec.kind != TR_INSN) {
            marker(&v, c, &rec);
            continue;
        }
        const disasm_entry *e = disasm_next(d, &c->disasm_hint, rec.rip, rec.code, rec.code_len);
        if (!e) { rc = -1; break; }
        if (o->views & VIEW_LIST) {
            list_mode(&v, c, &rec);
            list_insn(&v, c, &rec, d, e);
        }
        if (o->hooks && o->hooks->insn) {
            view_task t = task_of(c);
            o->hooks->insn(o->hooks->ctx, &rec, &t, e);
        }
        v.now = rec.tsc;
        if (rec.mode < HVT_MODE_COUNT) v.mode_insns[rec.mode]++;
        if (rec.mode == HVT_MODE_REGS) v.regs_sets |= rec.regs_known;
        if (want_nest) nest_insn(&c->nest, &sink, rec.rip, e);
        if (v.fn_insns) v.fn_insns[nest_fid(e) + 2]++;
        if (v.procs) {
            view_proc *p = &v.procs[c->proc];
            p->insns++;
            if (disasm_is_kernel(rec.rip)) p->kinsns++;
            else {
                p->uinsns++;
                page_add(p, rec.rip >> PAGE_SHIFT);
            }
            int k;
            for (k = 0; k < p->ncr3 && p->cr3[k] != rec.cr3; k++) {}
            if (k == p->ncr3 && k < VIEW_MAX_CR3) p->cr3[p->ncr3++] = rec.cr3;
        }
        if (progress && ++done % PROGRESS_EVERY == 0)
            fprintf(stderr, "\r%5.1f%%", 100.0 * (double)done / (double)total);
    }
    if (progress) fprintf(stderr, "\r      \r");
    if (o->views & VIEW_SUMMARY) print_summary(&v);
    if (o->views & VIEW_FUNCS) print_funcs(&v, nf);
    if (trie) nest_trie_fold(trie, fname, &v, o->out);
    for (int i = 0; i < VIEW_MAX_CPUS; i++) free(v.cpus[i]);
    if (v.procs)
        for (int i = 0; i < v.nprocs; i++) free(v.procs[i].pages);
    free(v.procs);
    free(v.fn_insns);
    free(v.fn_calls);
    free(v.hidden);
    nest_trie_free(trie);
    nest_tasks_free(v.tasks);
    int damaged = tr_damaged(r);
    disasm_close(d);
    tr_close(r);
    return rc < 0 || damaged ? 1 : 0;
}

typedef struct {
    uint64_t rip;
    const uint8_t *code;
    uint8_t len, kind; /* kind: TR_INSN or the marker type */
    uint16_t cpu;
} bench_rec;

/* One pass of decode + symbolize + nest (with folded-stack counting) over records in memory. */
static int bench_nest(const bench_rec *b, size_t n, const ksym_table *syms, int64_t slide, uint64_t *insns)
{
    disasm_cache *d = disasm_open(syms, slide);
    nest_trie *trie = nest_trie_new();
    nest_cpu *cpus = calloc(VIEW_MAX_CPUS, sizeof *cpus);
    uint8_t *inited = calloc(VIEW_MAX_CPUS, 1);
    uint32_t *hints = calloc(VIEW_MAX_CPUS, sizeof *hints);
    int rc = d && trie && cpus && inited && hints ? 0 : -1;
    nest_sink sink = {NULL, NULL, NULL, trie};
    for (size_t i = 0; i < n && rc == 0; i++) {
        unsigned cpu = b[i].cpu < VIEW_MAX_CPUS ? b[i].cpu : VIEW_MAX_CPUS - 1;
        if (!inited[cpu]) { nest_init(&cpus[cpu], cpu); inited[cpu] = 1; }
        if (b[i].kind != TR_INSN) {
            if (b[i].kind == HVT_MARK_SYSCALL || b[i].kind == HVT_MARK_EVENT || b[i].kind == HVT_MARK_SWITCH)
                nest_level(&cpus[cpu], "level");
            continue;
        }
        const disasm_entry *e = disasm_next(d, &hints[cpu], b[i].rip, b[i].code, b[i].len);
        if (!e) rc = -1;
        else nest_insn(&cpus[cpu], &sink, b[i].rip, e);
        (*insns)++;
    }
    free(hints);
    free(inited);
    free(cpus);
    nest_trie_free(trie);
    disasm_close(d);
    return rc;
}

int view_bench(const char *path, const ksym_table *syms, int64_t slide, uint64_t limit, view_bench_result *res)
{
    memset(res, 0, sizeof *res);
    tr_reader *r = tr_open(path);
    if (!r) return 1;
    /* 1. end to end from the file: read, check, decompress, decode, symbolize, nest */
    disasm_cache *d = disasm_open(syms, slide);
    nest_trie *trie = nest_trie_new();
    static nest_cpu cpus[VIEW_MAX_CPUS];
    static uint8_t inited[VIEW_MAX_CPUS];
    static uint32_t hints[VIEW_MAX_CPUS];
    nest_sink sink = {NULL, NULL, NULL, trie};
    tr_rec rec;
    int rc;
    double t0 = util_now();
    while ((rc = tr_next(r, &rec)) > 0) {
        res->file_records++;
        unsigned cpu = rec.cpu < VIEW_MAX_CPUS ? rec.cpu : VIEW_MAX_CPUS - 1;
        if (!inited[cpu]) { nest_init(&cpus[cpu], cpu); inited[cpu] = 1; }
        if (rec.kind != TR_INSN) {
            if (rec.kind == HVT_MARK_SYSCALL || rec.kind == HVT_MARK_EVENT || rec.kind == HVT_MARK_SWITCH)
                nest_level(&cpus[cpu], "level");
            continue;
        }
        const disasm_entry *e = disasm_next(d, &hints[cpu], rec.rip, rec.code, rec.code_len);
        if (!e) { rc = -1; break; }
        nest_insn(&cpus[cpu], &sink, rec.rip, e);
    }
    res->file_seconds = util_now() - t0;
    nest_trie_free(trie);
    disasm_close(d);
    /* 2. the first `limit` records in memory: our pipeline (fresh cache) vs capstone alone */
    bench_rec *b = rc == 0 ? malloc(limit * sizeof *b) : NULL;
    size_t n = 0;
    if (b) {
        tr_seek_chunk(r, 0);
        while (n < limit && (rc = tr_next(r, &rec)) > 0)
            b[n++] = (bench_rec){rec.rip, rec.code, rec.code_len, rec.kind, rec.cpu};
        if (rc > 0) rc = 0;
    }
    if (b && rc == 0) {
        double t1 = util_now();
        rc = bench_nest(b, n, syms, slide, &res->insns);
        res->seconds = util_now() - t1;
        res->records = n;
        csh cs; /* capstone at its fastest: detail off, cs_disasm_iter into one preallocated insn */
        if (rc == 0 && cs_open(CS_ARCH_X86, CS_MODE_64, &cs) == CS_ERR_OK) {
            cs_insn *in = cs_malloc(cs);
            double t2 = util_now();
            for (size_t i = 0; i < n; i++) {
                if (b[i].kind != TR_INSN) continue;
                const uint8_t *p = b[i].code;
                size_t sz = b[i].len;
                uint64_t a = b[i].rip;
                res->cs_bad += !cs_disasm_iter(cs, &p, &sz, &a, in);
                res->cs_insns++;
            }
            res->cs_seconds = util_now() - t2;
            cs_free(in, 1);
            cs_close(&cs);
        }
    }
    free(b);
    tr_close(r);
    return rc < 0 || !b ? 1 : 0;
}
