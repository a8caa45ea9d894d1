/* export_ctf: CTF 1.8 (Common Trace Format, diamon.org/ctf/v1.8.3); see export.h.
 * Only what babeltrace2 2.0 reads: byte-aligned little-endian integers, NUL-terminated
 * strings, one stream class with a packet context and an event header (16-bit id, full 64-bit
 * time stamp mapped to the one clock), no variants, no compact headers. Each CPU's events
 * are built in a buffer and written as packets of about EXPORT_CTF_PACKET bytes whose context
 * (begin/end time, content and packet size in bits, cpu_id) is known when the packet is cut.
 * A CPU's time stamps never go backwards in a stream (CTF readers refuse that); a record whose
 * TSC does (it should not) is written at the previous time and counted. */
#include "export.h"
#include "view.h"
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum {
    CTF_MAX_CPUS = 1024,
    CTF_PACKET = 1 << 20,
    CTF_MAGIC = 0xc1fc1fc1,
    /* packet header (magic, stream_id) + context (5 fields): see ctf_metadata */
    CTF_PKT_HDR = 4 + 4 + 8 + 8 + 8 + 8 + 4,
};

/* Event ids, in ctf_metadata's order. */
enum { EV_INSN, EV_CALL, EV_RET, EV_RESUME, EV_SYS_ENTRY, EV_SYS_EXIT, EV_IRQ, EV_SWITCH, EV_STATE, EV_VMEXIT };

typedef struct {
    FILE *f;
    uint8_t *buf;
    size_t len, cap;
    uint64_t first, last; /* packet's time range */
    int any;
} ctf_stream;

typedef struct {
    const char *dir;
    ctf_stream *s[CTF_MAX_CPUS];
    uint64_t backwards;
    int failed;
} ctf_state;

static const char *const metadata_head =
    "/* CTF 1.8 */\n"
    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
    "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
    "typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n"
    "trace {\n"
    "    major = 1;\n"
    "    minor = 8;\n"
    "    byte_order = le;\n"
    "    packet.header := struct { uint32_t magic; uint32_t stream_id; };\n"
    "};\n"
    "env {\n"
    "    tracer_name = \"hvtrace\";\n"
    "    domain = \"kernel\";\n"
    "    clock_note = \"hvt_tsc is the guest TSC of each record; under hvtrace's time dilation it advances one tick "
    "per retired guest instruction\";\n"
    "};\n";

static int write_metadata(const char *dir, uint64_t hz)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/metadata", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fputs(metadata_head, f);
    fprintf(f,
            "clock {\n"
            "    name = hvt_tsc;\n"
            "    description = \"guest TSC; under time dilation one tick per retired guest instruction\";\n"
            "    freq = %llu;\n"
            "    offset = 0;\n"
            "};\n"
            "typealias integer { size = 64; align = 8; signed = false; map = clock.hvt_tsc.value; } := tsc_t;\n"
            "stream {\n"
            "    id = 0;\n"
            "    packet.context := struct { tsc_t timestamp_begin; tsc_t timestamp_end; uint64_t content_size;\n"
            "                               uint64_t packet_size; uint32_t cpu_id; };\n"
            "    event.header := struct { uint16_t id; tsc_t timestamp; };\n"
            "};\n",
            (unsigned long long)hz);
    static const char *const events[] = {
        "insn", "uint64_t addr; uint64_t cr3;",
        "call", "uint32_t depth; string func;",
        "ret", "uint32_t depth; string func;",
        "resume", "uint32_t depth; string func;",
        "syscall_entry", "uint64_t nr; int64_t pid;",
        "syscall_exit", "uint64_t addr; int64_t pid;",
        "irq_entry", "string kind; uint8_t vector; int64_t error;",
        "sched_switch", "int64_t prev_pid; string prev_comm; int64_t next_pid; int64_t next_tgid; string next_comm;",
        "trace_state", "string what;",
        "vm_exit", "uint64_t reason; uint64_t qualification;",
    };
    for (unsigned i = 0; i < sizeof events / sizeof events[0] / 2; i++)
        fprintf(f, "event {\n    name = %s;\n    id = %u;\n    stream_id = 0;\n    fields := struct { %s };\n};\n",
                events[2 * i], i, events[2 * i + 1]);
    return fclose(f) == 0 ? 0 : -1;
}

static int reserve(ctf_stream *s, size_t n)
{
    if (s->len + n <= s->cap) return 0;
    size_t ncap = s->cap ? s->cap : CTF_PACKET + 4096;
    while (ncap < s->len + n) ncap *= 2;
    uint8_t *b = realloc(s->buf, ncap);
    if (!b) return -1;
    s->buf = b;
    s->cap = ncap;
    return 0;
}

static void put(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static int flush_packet(ctf_stream *s, unsigned cpu)
{
    if (!s->any) return 0;
    uint64_t bits = (uint64_t)s->len * 8;
    uint8_t *p = s->buf;
    put(p, CTF_MAGIC, 4);
    put(p + 4, 0, 4);
    put(p + 8, s->first, 8);
    put(p + 16, s->last, 8);
    put(p + 24, bits, 8);
    put(p + 32, bits, 8);
    put(p + 40, cpu, 4);
    int rc = fwrite(s->buf, 1, s->len, s->f) == s->len ? 0 : -1;
    s->len = CTF_PKT_HDR;
    s->any = 0;
    return rc;
}

static ctf_stream *stream_of(ctf_state *st, unsigned cpu)
{
    if (cpu >= CTF_MAX_CPUS) cpu = CTF_MAX_CPUS - 1;
    ctf_stream *s = st->s[cpu];
    if (s) return s;
    s = st->s[cpu] = calloc(1, sizeof *s);
    char path[4200];
    snprintf(path, sizeof path, "%s/stream_%u", st->dir, cpu);
    if (!s || !(s->f = fopen(path, "wb")) || reserve(s, CTF_PKT_HDR) != 0) {
        if (!st->failed) perror(path);
        st->failed = 1;
        if (s && s->f) fclose(s->f);
        free(s);
        st->s[cpu] = NULL;
        return NULL;
    }
    s->len = CTF_PKT_HDR;
    return s;
}

/* Start an event: header (id, time); the fields follow with put_u/put_str. */
static ctf_stream *begin(ctf_state *st, unsigned cpu, int id, uint64_t tsc)
{
    ctf_stream *s = stream_of(st, cpu);
    if (!s) return NULL;
    if (s->len >= CTF_PACKET && flush_packet(s, cpu) != 0) st->failed = 1;
    if (s->any && tsc < s->last) {
        st->backwards++;
        tsc = s->last;
    }
    if (!s->any) s->first = tsc;
    s->any = 1;
    s->last = tsc;
    if (reserve(s, 10) != 0) {
        st->failed = 1;
        return NULL;
    }
    put(s->buf + s->len, (uint64_t)id, 2);
    put(s->buf + s->len + 2, tsc, 8);
    s->len += 10;
    return s;
}

static void put_u(ctf_state *st, ctf_stream *s, uint64_t v, int n)
{
    if (!s || reserve(s, 8) != 0) { st->failed = 1; return; }
    put(s->buf + s->len, v, n);
    s->len += (size_t)n;
}

/* CTF strings are UTF-8 without NUL; bytes that are not printable ASCII become '?' so that any
 * reader's text output stays one line per event. */
static void put_str(ctf_state *st, ctf_stream *s, const char *str)
{
    size_t n = strlen(str);
    if (!s || reserve(s, n + 1) != 0) { st->failed = 1; return; }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)str[i];
        s->buf[s->len++] = c >= 0x20 && c < 0x7f ? c : '?';
    }
    s->buf[s->len++] = 0;
}

static void on_marker(void *ctx, const tr_rec *r, const view_task *t)
{
    ctf_state *st = ctx;
    ctf_stream *s;
    char what[96];
    switch (r->kind) {
    case HVT_MARK_SWITCH:
        s = begin(st, r->cpu, EV_SWITCH, r->tsc);
        put_u(st, s, (uint64_t)t->pid, 8);
        put_str(st, s, t->comm);
        put_u(st, s, r->a, 8);
        put_u(st, s, r->b, 8);
        put_str(st, s, r->comm);
        return;
    case HVT_MARK_SYSCALL:
        s = begin(st, r->cpu, EV_SYS_ENTRY, r->tsc);
        put_u(st, s, r->a, 8);
        put_u(st, s, (uint64_t)t->pid, 8);
        return;
    case HVT_MARK_EVENT:
        s = begin(st, r->cpu, EV_IRQ, r->tsc);
        put_str(st, s, r->ev_type == HVT_EV_EXTINT ? "interrupt" : r->ev_type == HVT_EV_NMI ? "nmi" : "exception");
        put_u(st, s, r->vector, 1);
        put_u(st, s, (uint64_t)r->errcode, 8);
        return;
    case HVT_MARK_VMEXIT:
        s = begin(st, r->cpu, EV_VMEXIT, r->tsc);
        put_u(st, s, r->a, 8);
        put_u(st, s, r->b, 8);
        return;
    case HVT_MARK_START: snprintf(what, sizeof what, "start (%s)", hvt_reason_name(r->a)); break;
    case HVT_MARK_STOP: snprintf(what, sizeof what, "stop (%s)", hvt_reason_name(r->a)); break;
    case HVT_MARK_GAP:
        snprintf(what, sizeof what, "gap: %llu records, %llu instructions lost", (unsigned long long)r->a,
                 (unsigned long long)r->b);
        break;
    default: return; /* CONTEXT restates the task, TIME the clock: no event */
    }
    s = begin(st, r->cpu, EV_STATE, r->tsc);
    put_str(st, s, what);
}

static void on_insn(void *ctx, const tr_rec *r, const view_task *t, const disasm_entry *e)
{
    ctf_state *st = ctx;
    ctf_stream *s = begin(st, r->cpu, EV_INSN, r->tsc);
    put_u(st, s, r->rip, 8);
    put_u(st, s, r->cr3, 8);
    if (e->kind == DISASM_SYSRET) { /* the kernel's return to user space (sysret, sysexit) */
        s = begin(st, r->cpu, EV_SYS_EXIT, r->tsc);
        put_u(st, s, r->rip, 8);
        put_u(st, s, (uint64_t)t->pid, 8);
    }
}

static void on_flow(void *ctx, unsigned cpu, uint64_t tsc, const view_task *t, int enter, int depth, const char *fn)
{
    (void)t;
    ctf_state *st = ctx;
    ctf_stream *s = begin(st, cpu, enter == 1 ? EV_CALL : enter == 2 ? EV_RESUME : EV_RET, tsc);
    put_u(st, s, (uint64_t)depth, 4);
    put_str(st, s, fn);
}

/* OUT is new, or an earlier export (only metadata and stream_N files): its streams are
 * removed, since this trace may have fewer CPUs and a stale stream would be read with it.
 * Anything else there: refused before anything is removed. */
static int prepare_dir(const char *dir)
{
    if (mkdir(dir, 0777) == 0) return 0;
    int rc = 0;
    for (int pass = 0; pass < 2 && rc == 0; pass++) { /* 0: check every name, 1: remove streams */
        DIR *d = errno == EEXIST || pass ? opendir(dir) : NULL;
        if (!d) {
            perror(dir);
            return -1;
        }
        for (struct dirent *e; rc == 0 && (e = readdir(d));) {
            const char *n = e->d_name;
            size_t digits = strncmp(n, "stream_", 7) ? 0 : strspn(n + 7, "0123456789");
            if (!strcmp(n, ".") || !strcmp(n, "..") || !strcmp(n, "metadata")) continue;
            if (!digits || n[7 + digits]) {
                fprintf(stderr, "hvt: %s holds %s: not a CTF export's directory\n", dir, n);
                rc = -1;
            } else if (pass) {
                char path[4200];
                snprintf(path, sizeof path, "%s/%s", dir, n);
                if (unlink(path) != 0) {
                    perror(path);
                    rc = -1;
                }
            }
        }
        closedir(d);
    }
    return rc;
}

int export_ctf(const char *trace_path, const export_opts *o)
{
    if (prepare_dir(o->out) != 0) return 1;
    tr_reader *r = tr_open(trace_path);
    if (!r) return 1;
    uint64_t hz = tr_header(r)->tsc_hz;
    tr_close(r);
    if (write_metadata(o->out, hz ? hz : 1000000000ull) != 0) return 1;
    ctf_state st = {.dir = o->out};
    view_hooks h = {&st, on_marker, on_insn, on_flow, NULL};
    view_opts vo = {o->syms, o->slide, 0, 0, o->from, o->to, o->hide, stdout, &h};
    int rc = view_run(trace_path, &vo);
    for (unsigned cpu = 0; cpu < CTF_MAX_CPUS; cpu++) {
        ctf_stream *s = st.s[cpu];
        if (!s) continue;
        if (flush_packet(s, cpu) != 0 || fclose(s->f) != 0) st.failed = 1;
        free(s->buf);
        free(s);
    }
    if (st.backwards)
        fprintf(stderr, "hvt: %s: %llu records went back in time on their CPU: written at the previous time\n",
                trace_path, (unsigned long long)st.backwards);
    if (st.failed) fprintf(stderr, "hvt: %s: the CTF streams could not all be written\n", o->out);
    return rc || st.failed ? 1 : 0;
}
