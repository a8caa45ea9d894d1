/* export_json: Chrome's JSON trace event format; see export.h.
 * B/E slices must nest per (pid, tid) and a task runs on one CPU at a time, so each CPU keeps
 * how many slices it has open and on which thread: they are all closed (E) when the CPU
 * switches task or the nesting starts a new level, and the nesting's "=>" frames open them
 * again when a task or an interrupted flow resumes. Time: "ts" is the record's TSC taken as
 * microseconds (one instruction per microsecond under time dilation), plus the sixteenths
 * that order a B and an E at one TSC on one track (json_thread). */
#include "export.h"
#include "nest.h"
#include "util.h"
#include "view.h"
#include <stdlib.h>
#include <string.h>

enum {
    JSON_MAX_CPUS = 1024,
    /* Chrome pids/tids for what Linux has no unique id for; Linux pids stay below 2^22. */
    JSON_CPUS_PID = 1 << 30,     /* the "CPUs" process: one thread (track) per CPU, tid
                                    JSON_CPUS_PID + cpu (Perfetto takes tids as system-wide) */
    JSON_IDLE_PID = JSON_CPUS_PID - 1,    /* the idle tasks (Linux pid 0: a pid 0 is lost on some
                                             readers, TracerBench's among them) */
    JSON_UNKNOWN_PID = JSON_CPUS_PID - 2, /* tasks before the trace says which runs */
    JSON_IDLE_TID = 1 << 29,     /* + cpu: that CPU's idle task */
    JSON_UNKNOWN_TID = 1 << 28,  /* + cpu: that CPU's unknown task */
};

typedef struct {
    int64_t pid, tid; /* the thread the open slices are on */
    int nopen;        /* B events not yet closed */
    const char *open[NEST_MAX_DEPTH + 1]; /* their names (symbol table or literals: they outlive
                                             the pass), repeated in the E events: some readers
                                             (speedscope) match E to B by name */
    int running;      /* the CPU track's slice is open */
    int64_t run_tid;  /* ... for this task */
    char run_name[HVT_COMM_MAX + 48];
    uint64_t last;    /* time of the CPU's last record */
} json_cpu;

/* A thread track: its name for the "M" events and the time of its last event. Readers sort
 * events by time and some (speedscope) guess the order of a B and an E at one time stamp, so
 * on each track a B that follows an E at one TSC, or an E that follows a B, is moved 1/16 us
 * later (JSON_SUB_MAX times at most per TSC): the order is in the time stamps themselves. */
typedef struct {
    int64_t pid, tid;
    char name[HVT_COMM_MAX + 24];
    uint64_t last_tsc;
    unsigned sub;   /* sixteenths of a microsecond added at last_tsc */
    char last_ph;   /* 'B' or 'E' last written at last_tsc, or 0 */
} json_thread;

enum { JSON_SUB_MAX = 15 };

typedef struct {
    FILE *out;
    int first;
    json_cpu *cpus[JSON_MAX_CPUS];
    unsigned ncpus;     /* highest CPU seen + 1 */
    uint64_t twice;     /* a task's slices opened on one CPU while open on another */
    json_thread *threads;
    size_t nthreads, cap;
    size_t *slot;       /* open addressing over threads: index + 1, 0 = empty */
    size_t scap;        /* power of two */
} json_state;

void export_json_str(FILE *out, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', out);
    while (*p) {
        unsigned c = *p;
        int n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 && c >= 0xc2 ? 2 : (c & 0xf0) == 0xe0 ? 3
              : (c & 0xf8) == 0xf0 && c <= 0xf4 ? 4 : 0;
        for (int i = 1; i < n; i++)
            if ((p[i] & 0xc0) != 0x80) n = 0;
        if (n == 3 && ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0))) n = 0; /* overlong, surrogate */
        if (n == 4 && ((c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))) n = 0;
        if (n == 0) { fputs("\\ufffd", out); p++; continue; }
        if (n > 1) { fwrite(p, 1, (size_t)n, out); p += n; continue; }
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20 || c == 0x7f) fprintf(out, "\\u%04x", c);
        else fputc((int)c, out);
        p++;
    }
    fputc('"', out);
}

static json_cpu *cpu_of(json_state *s, unsigned cpu)
{
    if (cpu >= JSON_MAX_CPUS) cpu = JSON_MAX_CPUS - 1;
    if (!s->cpus[cpu]) s->cpus[cpu] = calloc(1, sizeof(json_cpu));
    if (cpu >= s->ncpus) s->ncpus = cpu + 1;
    return s->cpus[cpu];
}

/* The Chrome thread a task is shown on. */
static void ids_of(const view_task *t, unsigned cpu, int64_t *pid, int64_t *tid)
{
    if (t->pid > 0) {
        *pid = t->tgid > 0 ? t->tgid : t->pid;
        *tid = t->pid;
    } else {
        *pid = t->pid == 0 ? JSON_IDLE_PID : JSON_UNKNOWN_PID;
        *tid = (t->pid == 0 ? JSON_IDLE_TID : JSON_UNKNOWN_TID) + cpu;
    }
}

static size_t thread_hash(int64_t pid, int64_t tid, size_t cap)
{
    return (size_t)(((uint64_t)pid * 0x9e3779b97f4a7c15ull ^ (uint64_t)tid) * 0xbf58476d1ce4e5b9ull >> 20) & (cap - 1);
}

static int grow_threads(json_state *s)
{
    size_t ncap = s->scap ? 2 * s->scap : 256;
    size_t *ns = calloc(ncap, sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < s->nthreads; i++) {
        size_t j = thread_hash(s->threads[i].pid, s->threads[i].tid, ncap);
        while (ns[j]) j = (j + 1) & (ncap - 1);
        ns[j] = i + 1;
    }
    free(s->slot);
    s->slot = ns;
    s->scap = ncap;
    return 0;
}

/* The track of (pid, tid), added (unnamed) if new; NULL when out of memory. */
static json_thread *thread_of(json_state *s, int64_t pid, int64_t tid)
{
    if ((s->nthreads + 1) * 2 > s->scap && grow_threads(s) != 0) return NULL;
    size_t j = thread_hash(pid, tid, s->scap);
    for (; s->slot[j]; j = (j + 1) & (s->scap - 1)) {
        json_thread *t = &s->threads[s->slot[j] - 1];
        if (t->pid == pid && t->tid == tid) return t;
    }
    if (s->nthreads == s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 64;
        json_thread *n = realloc(s->threads, ncap * sizeof *n);
        if (!n) return NULL;
        s->threads = n;
        s->cap = ncap;
    }
    json_thread *t = &s->threads[s->nthreads];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->tid = tid;
    s->slot[j] = ++s->nthreads;
    return t;
}

/* A thread's name for the "M" events: the first one given. */
static void name_thread(json_state *s, int64_t pid, int64_t tid, const char *name)
{
    json_thread *t = thread_of(s, pid, tid);
    if (t && !t->name[0]) snprintf(t->name, sizeof t->name, "%s", name);
}

static void task_name(const view_task *t, unsigned cpu, char *buf, size_t n)
{
    if (t->pid > 0) snprintf(buf, n, "%s", t->comm);
    else if (t->pid == 0) snprintf(buf, n, "swapper/%u", cpu);
    else snprintf(buf, n, "? (cpu %u, before the first context record)", cpu);
}

static void ev_head(json_state *s, const char *ph, int64_t pid, int64_t tid, uint64_t tsc)
{
    json_thread *t = thread_of(s, pid, tid);
    unsigned sub = 0;
    if (t) {
        if (tsc > t->last_tsc || !t->last_ph) {
            t->last_tsc = tsc > t->last_tsc ? tsc : t->last_tsc;
            t->sub = 0;
            t->last_ph = 0;
        }
        tsc = t->last_tsc; /* never back in time on a track */
        if ((ph[0] == 'B' || ph[0] == 'E') && t->last_ph && t->last_ph != ph[0] && t->sub < JSON_SUB_MAX) t->sub++;
        if (ph[0] == 'B' || ph[0] == 'E') t->last_ph = ph[0];
        sub = t->sub;
    }
    fprintf(s->out, "%s\n{\"ph\":\"%s\",\"pid\":%lld,\"tid\":%lld,\"ts\":%llu", s->first ? "" : ",", ph,
            (long long)pid, (long long)tid, (unsigned long long)tsc);
    if (sub) fprintf(s->out, ".%04u", sub * 625); /* sixteenths: exact in binary */
    s->first = 0;
}

static void meta_head(json_state *s, int64_t pid, int64_t tid)
{
    fprintf(s->out, "%s\n{\"ph\":\"M\",\"pid\":%lld,\"tid\":%lld,\"ts\":0", s->first ? "" : ",", (long long)pid,
            (long long)tid);
    s->first = 0;
}

static void close_to(json_state *s, json_cpu *c, int keep, uint64_t ts)
{
    for (; c->nopen > keep; c->nopen--) {
        ev_head(s, "E", c->pid, c->tid, ts);
        fputs(",\"cat\":\"call\",\"name\":", s->out);
        export_json_str(s->out, c->nopen <= NEST_MAX_DEPTH + 1 ? c->open[c->nopen - 1] : "");
        fputc('}', s->out);
    }
}

static void cpu_stop(json_state *s, unsigned cpu, json_cpu *c, uint64_t ts)
{
    if (!c->running) return;
    ev_head(s, "E", JSON_CPUS_PID, JSON_CPUS_PID + cpu, ts);
    fputs(",\"cat\":\"sched\",\"name\":", s->out);
    export_json_str(s->out, c->run_name);
    fputc('}', s->out);
    c->running = 0;
}

/* The CPU track shows task t from ts on (cat "switch" at a context switch, else "run"). */
static void cpu_run(json_state *s, unsigned cpu, json_cpu *c, const view_task *t, uint64_t ts, const char *cat)
{
    int64_t pid, tid;
    ids_of(t, cpu, &pid, &tid);
    if (c->running && c->run_tid == tid) return;
    cpu_stop(s, cpu, c, ts);
    char comm[HVT_COMM_MAX + 24];
    task_name(t, cpu, comm, sizeof comm);
    snprintf(c->run_name, sizeof c->run_name, "%s %lld", comm, (long long)t->pid);
    name_thread(s, pid, tid, comm);
    char track[32];
    snprintf(track, sizeof track, "CPU %u", cpu);
    name_thread(s, JSON_CPUS_PID, JSON_CPUS_PID + cpu, track);
    ev_head(s, "B", JSON_CPUS_PID, JSON_CPUS_PID + cpu, ts);
    fprintf(s->out, ",\"cat\":\"%s\",\"name\":", cat);
    export_json_str(s->out, c->run_name);
    fputc('}', s->out);
    c->running = 1;
    c->run_tid = tid;
}

static void instant(json_state *s, unsigned cpu, const view_task *t, uint64_t ts, const char *cat, const char *name,
                    const char *args)
{
    int64_t pid, tid;
    ids_of(t, cpu, &pid, &tid);
    char comm[HVT_COMM_MAX + 24];
    task_name(t, cpu, comm, sizeof comm);
    name_thread(s, pid, tid, comm);
    ev_head(s, "i", pid, tid, ts);
    fprintf(s->out, ",\"s\":\"t\",\"cat\":\"%s\",\"name\":", cat);
    export_json_str(s->out, name);
    fprintf(s->out, ",\"args\":{\"cpu\":%u%s}}", cpu, args);
}

static void on_marker(void *ctx, const tr_rec *r, const view_task *t)
{
    json_state *s = ctx;
    json_cpu *c = cpu_of(s, r->cpu);
    if (!c) return;
    c->last = r->tsc;
    char name[96], args[96] = "";
    switch (r->kind) {
    case HVT_MARK_SWITCH:
    case HVT_MARK_CONTEXT: {
        view_task next = {(int64_t)r->a, (int64_t)r->b, r->comm};
        int64_t pid, tid;
        ids_of(&next, r->cpu, &pid, &tid);
        if (r->kind == HVT_MARK_SWITCH || tid != c->tid) close_to(s, c, 0, r->tsc);
        if (r->kind == HVT_MARK_SWITCH) cpu_stop(s, r->cpu, c, r->tsc); /* a new slice per switch */
        cpu_run(s, r->cpu, c, &next, r->tsc, r->kind == HVT_MARK_SWITCH ? "switch" : "run");
        return;
    }
    case HVT_MARK_EVENT: {
        const char *cat = r->ev_type == HVT_EV_EXTINT ? "interrupt" : r->ev_type == HVT_EV_NMI ? "nmi" : "exception";
        snprintf(name, sizeof name, "%s %u", cat, r->vector);
        snprintf(args, sizeof args, ",\"vector\":%u,\"error\":%lld", r->vector, (long long)r->errcode);
        instant(s, r->cpu, t, r->tsc, cat, name, args);
        return;
    }
    case HVT_MARK_SYSCALL:
        snprintf(name, sizeof name, "syscall %llu", (unsigned long long)r->a);
        snprintf(args, sizeof args, ",\"nr\":%llu", (unsigned long long)r->a);
        instant(s, r->cpu, t, r->tsc, "syscall", name, args);
        return;
    case HVT_MARK_START: snprintf(name, sizeof name, "start (%s)", hvt_reason_name(r->a)); break;
    case HVT_MARK_STOP: snprintf(name, sizeof name, "stop (%s)", hvt_reason_name(r->a)); break;
    case HVT_MARK_GAP:
        snprintf(name, sizeof name, "gap: %llu records, %llu instructions lost", (unsigned long long)r->a,
                 (unsigned long long)r->b);
        break;
    case HVT_MARK_VMEXIT:
        snprintf(name, sizeof name, "vm exit %llu", (unsigned long long)r->a);
        snprintf(args, sizeof args, ",\"reason\":%llu,\"qualification\":%llu", (unsigned long long)r->a,
                 (unsigned long long)r->b);
        instant(s, r->cpu, t, r->tsc, "vmexit", name, args);
        return;
    default: return; /* TIME: no event of its own */
    }
    instant(s, r->cpu, t, r->tsc, "trace", name, args);
}

static void on_insn(void *ctx, const tr_rec *r, const view_task *t, const disasm_entry *e)
{
    (void)e;
    json_state *s = ctx;
    json_cpu *c = cpu_of(s, r->cpu);
    if (!c) return;
    c->last = r->tsc;
    if (!c->running) cpu_run(s, r->cpu, c, t, r->tsc, "run");
}

static void on_flow(void *ctx, unsigned cpu, uint64_t tsc, const view_task *t, int enter, int depth, const char *fn)
{
    json_state *s = ctx;
    json_cpu *c = cpu_of(s, cpu);
    if (!c) return;
    int64_t pid, tid;
    ids_of(t, cpu, &pid, &tid);
    if (c->nopen && tid != c->tid) close_to(s, c, 0, tsc);
    close_to(s, c, depth, tsc); /* frames the nesting dropped without "<-" (re-rooted, hidden) */
    if (!enter) return;
    /* A task runs on one CPU at a time, but a trace that lost switch records (a gap) or a
     * generated one can show it on two: its slices there are closed first, so that B/E still
     * nest on its thread (counted, reported). */
    for (unsigned o = 0; o < s->ncpus; o++) {
        json_cpu *oc = s->cpus[o];
        if (oc && oc != c && oc->nopen && oc->tid == tid) {
            close_to(s, oc, 0, tsc);
            s->twice++;
        }
    }
    c->pid = pid;
    c->tid = tid;
    ev_head(s, "B", pid, tid, tsc);
    fprintf(s->out, ",\"cat\":\"%s\",\"name\":", enter == 2 ? "resumed" : "call");
    export_json_str(s->out, fn);
    fputc('}', s->out);
    if (c->nopen <= NEST_MAX_DEPTH) c->open[c->nopen] = fn;
    c->nopen++;
    char comm[HVT_COMM_MAX + 48];
    task_name(t, cpu, comm, sizeof comm);
    name_thread(s, pid, tid, comm);
}

static void on_level(void *ctx, unsigned cpu, uint64_t tsc, const view_task *t, const char *reason)
{
    (void)t;
    (void)reason;
    json_state *s = ctx;
    json_cpu *c = cpu_of(s, cpu);
    if (c) close_to(s, c, 0, tsc);
}

/* Process names: the thread whose tid is the pid (the group leader), else the first seen. */
static void write_names(json_state *s)
{
    for (size_t i = 0; i < s->nthreads; i++) {
        const json_thread *t = &s->threads[i];
        meta_head(s, t->pid, t->tid);
        fputs(",\"cat\":\"__metadata\",\"name\":\"thread_name\",\"args\":{\"name\":", s->out);
        export_json_str(s->out, t->name[0] ? t->name : "?");
        fputs("}}", s->out);
        size_t lead = i;
        int first_of_pid = 1;
        for (size_t j = 0; j < s->nthreads; j++) {
            if (s->threads[j].pid != t->pid) continue;
            if (s->threads[j].tid == t->pid) lead = j;
            if (j < i) first_of_pid = 0;
        }
        if (!first_of_pid) continue;
        meta_head(s, t->pid, t->tid);
        fputs(",\"cat\":\"__metadata\",\"name\":\"process_name\",\"args\":{\"name\":", s->out);
        export_json_str(s->out, t->pid == JSON_IDLE_PID      ? "swapper (idle, Linux pid 0)"
                              : t->pid == JSON_UNKNOWN_PID ? "? (task not known yet)"
                              : t->pid == JSON_CPUS_PID    ? "CPUs"
                                                           : s->threads[lead].name);
        fputs("}}", s->out);
    }
}

int export_json(const char *trace_path, const export_opts *o)
{
    int to_stdout = !strcmp(o->out, "-");
    FILE *out = to_stdout ? stdout : fopen(o->out, "w");
    if (!out) {
        perror(o->out);
        return 1;
    }
    json_state s = {.out = out, .first = 1};
    view_hooks h = {&s, on_marker, on_insn, on_flow, on_level};
    view_opts vo = {o->syms, o->slide, 0, 0, o->from, o->to, o->hide, out, &h};
    fputs("{\"traceEvents\":[", out);
    int rc = view_run(trace_path, &vo);
    for (unsigned cpu = 0; cpu < JSON_MAX_CPUS; cpu++) {
        json_cpu *c = s.cpus[cpu];
        if (!c) continue;
        close_to(&s, c, 0, c->last);
        cpu_stop(&s, cpu, c, c->last);
    }
    write_names(&s);
    fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"hvtrace (hvt export --perfetto)\","
          "\"clock\":\"ts is the guest TSC of each record, taken as microseconds; under hvtrace's time dilation "
          "the TSC advances one tick per retired guest instruction, so ts counts instructions\","
          "\"tracks\":\"per thread (pid = Linux tgid, tid = Linux pid): the functions the call nesting enters; "
          "process CPUs: the task each CPU runs\"}}\n",
          out);
    if (s.twice)
        fprintf(stderr, "hvt: %s: %llu times a task's functions began on one CPU while open on another (a gap "
                "or a generated trace): closed there first\n", trace_path, (unsigned long long)s.twice);
    for (unsigned cpu = 0; cpu < JSON_MAX_CPUS; cpu++) free(s.cpus[cpu]);
    free(s.threads);
    free(s.slot);
    if (ferror(out)) rc = 1;
    if (!to_stdout && fclose(out) != 0) rc = 1;
    return rc;
}
