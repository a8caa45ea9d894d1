/* cmd_trace: hvt trace start|stop|status (hvt_cmd.h; docs/trace-cli.md). The collector holds
 * the hypervisor connection and the control key; this command only asks it, one request line
 * per connection (client.h). */
#include "hvt_cmd.h"
#include "client.h"
#include "coll_sock.h"
#include "hvt_stream.h"
#include "hvt_trace_format.h"
#include "trace_reader.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { T_OK = 0, T_FAIL = 1, T_USAGE = 2 };
#define T_DEFAULT_DIR     "trace-out"      /* hvtrace-collector's default --out */
#define T_ANSWER_MAX      (64u << 10)
#define T_POLL_MS         200
#define T_STOP_TIMEOUT_S  300              /* stepping CPUs stop within a preemption period; the
                                              last chunks may queue behind a full ring */

struct t_opts {
    const char *dir, *sock, *out;
    int raw, watch, hv, no_wait;
    double timeout;
    struct hvt_trace_args args;
};


static int usage(void)
{
    fprintf(stderr,
            "usage: hvt trace start  [-d DIR | -s SOCKET] [--kernel-only | --user-only] [--cr3 X]\n"
            "                        [--range LO:HI] [--budget N] [--record full|flow | --regs R:R..]\n"
            "       hvt trace stop   [-d DIR | -s SOCKET] [-o FILE] [--timeout S] [--no-wait]\n"
            "       hvt trace status [-d DIR | -s SOCKET] [--hv] [--watch] [--raw]\n"
            "status: per-CPU records/instructions/bytes received (--watch: one line a second until\n"
            "interrupted; --raw: the collector's key=value answer; --hv: the hypervisor's view).\n"
            "DIR is the running hvtrace-collector's --out directory (default %s); its command\n"
            "socket is DIR/%s. start/stop reach every CPU at its next VM exit; stop waits until\n"
            "every window has closed and the collector has finished DIR/<boot>/trace.hvt (-o copies\n"
            "it). Filters are accepted here and refused by the hypervisor until it implements them.\n"
            "--record: what each instruction's record holds (full: every register it changed;\n"
            "flow: control flow alone); --regs: only these registers (rax..r15, rflags).\n",
            T_DEFAULT_DIR, COLL_SOCK_NAME);
    return T_USAGE;
}

static int ask(const struct t_opts *o, const char *line, char *out, size_t cap)
{
    return hvt_coll_ask(o->dir, o->sock, line, out, cap);
}

#define val hvt_coll_val
#define uval hvt_coll_uval

struct t_totals { uint64_t records, insns, bytes; unsigned cpus; };

static struct t_totals totals(const char *ans)
{
    struct t_totals t = { 0 };
    for (const char *l = ans; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        unsigned long long rec, ins, ch, raw;
        unsigned cpu;
        if (sscanf(l, "cpu=%u records=%llu insns=%llu chunks=%llu raw_bytes=%llu", &cpu, &rec, &ins,
                   &ch, &raw) == 5) {
            t.records += rec;
            t.insns += ins;
            t.bytes += raw;
            t.cpus++;
        }
    }
    return t;
}

static void print_status(const char *ans)
{
    char out[4200], boot[64], req[16], f[4200];
    printf("collector: %s, boot %s, hypervisor %s, last host request: %s\n",
           val(ans, "out", out, sizeof out) ? out : "?", val(ans, "boot", boot, sizeof boot) ? boot : "none",
           uval(ans, "connected") ? "connected" : "not connected",
           val(ans, "host_request", req, sizeof req) ? req : "?");
    char sess[32], peer[80];
    if (val(ans, "session", sess, sizeof sess))
        printf("session: %s%s%s, %llu connection(s) refused, %llu message(s) with a bad tag\n", sess,
               val(ans, "peer", peer, sizeof peer) && strcmp(peer, "none") ? " with " : "",
               val(ans, "peer", peer, sizeof peer) && strcmp(peer, "none") ? peer : "",
               (unsigned long long)uval(ans, "refused_connections"),
               (unsigned long long)uval(ans, "bad_tags"));
    char serr[4400];
    if (val(ans, "store_error", serr, sizeof serr))   /* the collector stores nothing more */
        printf("STORE FAILED: %s; stored and acknowledged up to stream offset %llu only, the "
               "hypervisor holds the rest\n", serr, (unsigned long long)uval(ans, "stored_off"));
    if (!val(ans, "trace_file", f, sizeof f))
        return;
    if (!strcmp(f, "none"))
        printf("trace file: none yet (no trace data has arrived for this boot)\n");
    else
    printf("trace file: %s (%.2f MB on disk, %s, %llu window(s) open)\n", f,
           uval(ans, "trace_bytes_on_disk") / 1e6, uval(ans, "trace_finished") ? "finished" : "live",
           (unsigned long long)uval(ans, "windows_open"));
    printf("  %-4s %12s %12s %8s %10s  %s\n", "cpu", "records", "insns", "chunks", "raw MB", "window");
    for (const char *l = ans; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        unsigned long long rec, ins, ch, raw;
        unsigned cpu, wins;
        char win[16];
        if (sscanf(l, "cpu=%u records=%llu insns=%llu chunks=%llu raw_bytes=%llu window=%15s windows=%u",
                   &cpu, &rec, &ins, &ch, &raw, win, &wins) == 7)
            printf("  %-4u %12llu %12llu %8llu %10.2f  %s (%u started)\n", cpu, rec, ins, ch, raw / 1e6,
                   win, wins);
    }
    struct t_totals t = totals(ans);
    printf("  %-4s %12" PRIu64 " %12" PRIu64 " %8s %10.2f\n", "all", t.records, t.insns, "", t.bytes / 1e6);
    printf("gaps: %llu  refused batches: %llu  stream: %.2f MB, sequence gaps %llu\n",
           (unsigned long long)uval(ans, "trace_gaps"), (unsigned long long)uval(ans, "bad_batches"),
           uval(ans, "stream_bytes") / 1e6,
           (unsigned long long)(uval(ans, "gap_events") + uval(ans, "gap_msgs")));
}

static void progress_line(const char *ans, int tty)
{
    struct t_totals t = totals(ans);
    char f[16];
    fprintf(stderr, "%srecords=%" PRIu64 " insns=%" PRIu64 " raw=%.2fMB on_disk=%.2fMB windows_open=%llu%s%s%s",
            tty ? "\r\033[K" : "", t.records, t.insns, t.bytes / 1e6,
            uval(ans, "trace_bytes_on_disk") / 1e6, (unsigned long long)uval(ans, "windows_open"),
            val(ans, "store_failed", f, sizeof f) ? " STORE_FAILED=" : "",
            val(ans, "store_failed", f, sizeof f) ? f : "", tty ? "" : "\n");
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    nanosleep(&ts, NULL);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int copy_file(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = a ? fopen(to, "wb") : NULL;
    char buf[1 << 16];
    size_t n;
    int rc = a && b ? 0 : -1;
    while (rc == 0 && (n = fread(buf, 1, sizeof buf, a)) > 0)
        if (fwrite(buf, 1, n, b) != n) rc = -1;
    if (a) fclose(a);
    if (b && fclose(b) != 0) rc = -1;
    return rc;
}

static int do_start(const struct t_opts *o, char *ans, size_t cap)
{
    char line[COLL_SOCK_LINE_MAX];
    const struct hvt_trace_args *a = &o->args;
    int n = snprintf(line, sizeof line, "trace start");
    if (a->flags)
        snprintf(line + n, sizeof line - (size_t)n, " flags=0x%x cr3=0x%" PRIx64 " addr_lo=0x%" PRIx64
                 " addr_hi=0x%" PRIx64 " budget=%" PRIu64 " record=0x%x", a->flags, a->cr3, a->addr_lo,
                 a->addr_hi, a->insn_budget, a->record);
    int rc = ask(o, line, ans, cap);
    if (rc != 0) {
        fprintf(stderr, "hvt trace start: %s\n", ans);
        return T_FAIL;
    }
    printf("tracing requested: every CPU starts stepping at its next VM exit (hypervisor: %llu "
           "start request(s) so far)\n", (unsigned long long)uval(ans, "hv_starts"));
    return T_OK;
}

static int do_stop(const struct t_opts *o, char *ans, size_t cap)
{
    int rc = ask(o, "trace stop", ans, cap);
    if (rc != 0) {
        fprintf(stderr, "hvt trace stop: %s\n", ans);
        return T_FAIL;
    }
    printf("stop requested: every CPU stops at its next VM exit\n");
    if (o->no_wait)
        return T_OK;
    int tty = isatty(2);
    double t0 = now_s(), last = 0;
    /* The collector counts only windows whose START it has seen, and a CPU's START travels in
     * its first chunk: one that started and has not sent a chunk yet (a CPU parked in HLT acts
     * on the stop at its next exit, up to a poll period later) is invisible to it. So first
     * wait until the hypervisor says no CPU steps: its reply comes on the stream after every
     * chunk those CPUs sent. (No answer - the hypervisor is gone - leaves the files to say.) */
    while (ask(o, "trace hvstatus", ans, cap) == 0 && uval(ans, "hv_stepping")) {
        if (now_s() - t0 > o->timeout) {
            fprintf(stderr, "hvt trace stop: after %.0f s the hypervisor still has CPUs stepping\n",
                    o->timeout);
            return T_FAIL;
        }
        sleep_ms(T_POLL_MS);
    }
    for (;;) {
        if (ask(o, "status", ans, cap) != 0) {
            fprintf(stderr, "hvt trace stop: %s\n", ans);
            return T_FAIL;
        }
        char serr[4400];
        if (val(ans, "store_error", serr, sizeof serr)) {
            /* the collector stores nothing more: waiting for the trace to finish is pointless */
            fprintf(stderr, "%shvt trace stop: the collector's store failed: %s; the trace is cut at "
                    "stream offset %llu (the hypervisor holds the rest for a restarted collector)\n",
                    tty ? "\n" : "", serr, (unsigned long long)uval(ans, "stored_off"));
            return T_FAIL;
        }
        int done = !uval(ans, "windows_open") && uval(ans, "trace_finished");
        if (now_s() - last >= 1 || done) {
            progress_line(ans, tty);
            last = now_s();
        }
        if (done)
            break;
        if (now_s() - t0 > o->timeout) {
            fprintf(stderr, "%shvt trace stop: after %.0f s %llu window(s) still open or the trace "
                    "not finished: is the hypervisor still sending?\n", tty ? "\n" : "", o->timeout,
                    (unsigned long long)uval(ans, "windows_open"));
            return T_FAIL;
        }
        sleep_ms(T_POLL_MS);
    }
    if (tty)
        fputc('\n', stderr);
    char f[4200];
    if (!val(ans, "trace_file", f, sizeof f) || !strcmp(f, "none")) {
        fprintf(stderr, "hvt trace stop: no trace data has arrived for this boot\n");
        return T_FAIL;
    }
    print_status(ans);
    if (o->out) {
        if (copy_file(f, o->out) != 0) {
            fprintf(stderr, "hvt trace stop: copying %s to %s: %s\n", f, o->out, strerror(errno));
            return T_FAIL;
        }
        printf("copied to %s\n", o->out);
    }
    return T_OK;
}

static int do_status(const struct t_opts *o, char *ans, size_t cap)
{
    int tty = isatty(1);
    for (;;) {
        int rc = ask(o, o->hv ? "trace hvstatus" : "status", ans, cap);
        if (rc != 0) {
            fprintf(stderr, "hvt trace status: %s\n", ans);
            return T_FAIL;
        }
        if (o->raw || o->hv)
            fputs(ans, stdout);
        else if (o->watch)
            progress_line(ans, tty), fflush(stderr);
        else
            print_status(ans);
        if (!o->watch || o->hv)
            return T_OK;
        sleep_ms(1000);
    }
}

int cmd_trace(int argc, char **argv)
{
    if (argc < 1) return usage();
    const char *sub = argv[0];
    struct t_opts o = { .dir = T_DEFAULT_DIR, .timeout = T_STOP_TIMEOUT_S };
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t x;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) return usage();
        else if ((!strcmp(a, "-d") || !strcmp(a, "--dir")) && v) { o.dir = v; i++; }
        else if ((!strcmp(a, "-s") || !strcmp(a, "--socket")) && v) { o.sock = v; i++; }
        else if ((!strcmp(a, "-o") || !strcmp(a, "--out")) && v) { o.out = v; i++; }
        else if (!strcmp(a, "--timeout") && v) { o.timeout = atof(v); i++; }
        else if (!strcmp(a, "--no-wait")) o.no_wait = 1;
        else if (!strcmp(a, "--raw")) o.raw = 1;
        else if (!strcmp(a, "--watch")) o.watch = 1;
        else if (!strcmp(a, "--hv")) o.hv = 1;
        else if (!strcmp(a, "--kernel-only")) o.args.flags |= HVT_TRACE_F_KERNEL_ONLY;
        else if (!strcmp(a, "--user-only")) o.args.flags |= HVT_TRACE_F_USER_ONLY;
        else if (!strcmp(a, "--cr3") && v && !hvt_parse_u64(v, &x)) { o.args.cr3 = x; o.args.flags |= HVT_TRACE_F_CR3; i++; }
        else if (!strcmp(a, "--budget") && v && !hvt_parse_u64(v, &x)) { o.args.insn_budget = x; o.args.flags |= HVT_TRACE_F_BUDGET; i++; }
        else if (!strcmp(a, "--record") && v && (!strcmp(v, "full") || !strcmp(v, "flow")) &&
                 !(o.args.flags & HVT_TRACE_F_RECORD)) {
            o.args.record = HVT_TRACE_RECORD(!strcmp(v, "flow") ? HVT_MODE_FLOW : HVT_MODE_FULL, 0);
            o.args.flags |= HVT_TRACE_F_RECORD;
            i++;
        } else if (!strcmp(a, "--regs") && v && !(o.args.flags & HVT_TRACE_F_RECORD)) {
            /* The reader's parser of the same list (tr_mode_parse): one syntax on the host. */
            char spec[256], err[320];
            unsigned mode;
            uint32_t m;
            snprintf(spec, sizeof spec, "regs=%s", v);
            if (tr_mode_parse(spec, &mode, &m, err, sizeof err)) {
                fprintf(stderr, "hvt trace %s: --regs: %s\n", sub, err);
                return usage();
            }
            o.args.record = HVT_TRACE_RECORD(HVT_MODE_REGS, m);
            o.args.flags |= HVT_TRACE_F_RECORD;
            i++;
        }
        else if (!strcmp(a, "--range") && v && strchr(v, ':')) {
            char lo[64];
            uint64_t l, h;
            snprintf(lo, sizeof lo, "%.*s", (int)(strchr(v, ':') - v), v);
            if (hvt_parse_u64(lo, &l) || hvt_parse_u64(strchr(v, ':') + 1, &h)) return usage();
            o.args.addr_lo = l;
            o.args.addr_hi = h;
            o.args.flags |= HVT_TRACE_F_ADDR_RANGE;
            i++;
        } else {
            fprintf(stderr, "hvt trace %s: bad argument '%s'\n", sub, a);
            return usage();
        }
    }
    char *ans = malloc(T_ANSWER_MAX);
    if (!ans) return T_FAIL;
    int rc;
    if (!strcmp(sub, "start")) rc = do_start(&o, ans, T_ANSWER_MAX);
    else if (!strcmp(sub, "stop")) rc = do_stop(&o, ans, T_ANSWER_MAX);
    else if (!strcmp(sub, "status")) rc = do_status(&o, ans, T_ANSWER_MAX);
    else rc = usage();
    free(ans);
    return rc;
}
