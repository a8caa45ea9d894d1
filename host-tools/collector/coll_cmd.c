/*
 * coll_cmd.c - what the collector does with a command-socket request (protocol: coll_sock.h,
 * docs/trace-cli.md). Requests, one line each:
 *   status                         the collector's view: boot, connection, trace file, per CPU
 *   trace start [flags=N] [cr3=X] [addr_lo=X] [addr_hi=X] [budget=N]
 *   trace stop
 *   trace hvstatus                 the hypervisor's HVT_CTL_TRACE_STATUS
 *   probe arm FILE                 arm the struct hvt_probe_spec records in FILE (hvt -n
 *                                  writes it), HVT_CTL_PROBE_SPECS per request, in order,
 *                                  until the hypervisor refuses one
 *   probe disarm | probe status    HVT_CTL_PROBE_DISARM / _STATUS
 *   d load FILE                    send the D program image in FILE (hvt -s/-n write it) with
 *                                  HVT_CTL_D_LOAD, HVT_D_LOAD_CHUNK bytes per request
 *   d begin | d end | d snap | d status | d unload    HVT_CTL_D_RUN
 *   d cmd set TEXT | d cmd go SEQ | d cmd cancel SEQ | d cmd status    HVT_CTL_D_CMD (hvt -c:
 *                                  a command line for the guest tool's agent to run)
 * "trace ..." and "probe ..." requests become authenticated HVT_CTL_* requests to the
 * hypervisor; the client's answer waits for the matching CTL_REPLY (through the ring, so
 * possibly behind trace data) or COLL_CMD_REPLY_NS.
 */
#include "coll.h"
#include "coll_link.h"
#include "coll_hvstatus.h"
#include "hvt_dif.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define COLL_CMD_REPLY_NS 60000000000ull   /* a reply queues behind up to a ring of data */

static const char *window_name(uint32_t w)
{
    switch (w) {
    case COLL_WIN_OPEN: return "open";
    case COLL_WIN_CLOSED: return "closed";
    case COLL_WIN_UNKNOWN: return "unknown";
    }
    return "none";
}

static void print_status(struct coll *c, int cl)
{
    struct coll_sock *s = &c->sock;
    char id[2 * HVT_BOOT_ID_LEN + 1];
    coll_sock_printf(s, cl, "out=%s\nconnected=%d\nhost_request=%s\n", c->out, c->cfd >= 0,
                     c->host_request == HVT_TRACE_REQ_START ? "start" :
                     c->host_request == HVT_TRACE_REQ_STOP ? "stop" : "none");
    coll_sock_printf(s, cl, "session=%s\npeer=%s\nrefused_connections=%llu\nbad_tags=%llu\n",
                     !(c->cfd >= 0 && c->parser.have_hello) ? "none" :
                     coll_session_name(c->parser.sess.flags),
                     c->cfd >= 0 ? c->peer : "none", (unsigned long long)c->peers.refused,
                     (unsigned long long)c->parser.c.bad_tags);
    if (!c->store_open) {
        coll_sock_printf(s, cl, "boot=none\n");
        return;
    }
    coll_hex(c->store.hello.boot_id, HVT_BOOT_ID_LEN, id);
    const char *khz = strstr(c->store.hello_text, "tsc_khz=");   /* the hypervisor's TSC rate */
    if (khz && (khz == c->store.hello_text || khz[-1] == '\n'))
        coll_sock_printf(s, cl, "tsc_khz=%llu\n", strtoull(khz + 8, NULL, 10));
    if (c->store_stopped) {
        int e = c->store.fail_errno ? c->store.fail_errno : EIO;
        coll_sock_printf(s, cl, "store_failed=%s\nstore_error=%s: %s\n", coll_errno_name(e),
                         c->store.fail_what, strerror(e));
    } else {
        coll_sock_printf(s, cl, "store=ok\n");
    }
    coll_sock_printf(s, cl, "stored_off=%llu\nacked_off=%llu\n",
                     (unsigned long long)c->store.durable.next_off, (unsigned long long)c->last_ack_off);
    const struct coll_trace_state *t = &c->trace.st;
    const struct coll_counters *k = &c->parser.c;
    coll_sock_printf(s, cl, "boot=%s\ndir=%s\ncpu_count=%u\nstream_bytes=%llu\nstream_msgs=%llu\n"
                     "gap_events=%llu\ngap_msgs=%llu\nbye=%llu\n", id, c->store.dir,
                     c->store.hello.cpu_count, (unsigned long long)k->bytes,
                     (unsigned long long)k->msgs, (unsigned long long)k->gap_events,
                     (unsigned long long)k->gap_msgs, (unsigned long long)k->byes);
    coll_sock_printf(s, cl, "trace_file=%s\ntrace_bytes_on_disk=%llu\ntrace_finished=%d\n"
                     "windows_open=%u\nbatches=%llu\nbad_batches=%llu\ntrace_gaps=%llu\nlstar=0x%llx\n",
                     t->data_len ? c->trace.path : "none",
                     (unsigned long long)(c->trace.w ? tcw_data_len(c->trace.w) : 0),
                     coll_trace_finished(&c->trace), coll_trace_open_windows(&c->trace),
                     (unsigned long long)t->batches, (unsigned long long)t->bad_batches,
                     (unsigned long long)t->gaps, (unsigned long long)t->lstar);
    for (unsigned i = 0; i < COLL_TRACE_MAX_CPUS; i++) {
        const struct coll_trace_cpu *p = &t->cpu[i];
        if (!p->chunks && i >= c->store.hello.cpu_count)
            continue;
        coll_sock_printf(s, cl, "cpu=%u records=%llu insns=%llu chunks=%llu raw_bytes=%llu "
                         "window=%s windows=%u\n", i, (unsigned long long)p->records,
                         (unsigned long long)p->insns, (unsigned long long)p->chunks,
                         (unsigned long long)p->raw_bytes, window_name(p->window), p->windows);
    }
}

/* "key=value" words after "trace start" -> struct hvt_trace_args. 0, or -1 with err. */
static int parse_args(char *words, struct hvt_trace_args *a, uint32_t *len, char *err, size_t n)
{
    memset(a, 0, sizeof *a);
    *len = 0;
    char *save = NULL;
    for (char *w = strtok_r(words, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        char *eq = strchr(w, '='), *end;
        if (!eq) {
            snprintf(err, n, "'%s' is not key=value", w);
            return -1;
        }
        *eq++ = 0;
        errno = 0;
        unsigned long long v = strtoull(eq, &end, 0);
        if (errno || end == eq || *end) {
            snprintf(err, n, "%s=%s is not a number", w, eq);
            return -1;
        }
        if (!strcmp(w, "flags")) a->flags = (uint32_t)v;
        else if (!strcmp(w, "cr3")) a->cr3 = v;
        else if (!strcmp(w, "addr_lo")) a->addr_lo = v;
        else if (!strcmp(w, "addr_hi")) a->addr_hi = v;
        else if (!strcmp(w, "budget")) a->insn_budget = v;
        else if (!strcmp(w, "record")) a->record = (uint32_t)v;
        else {
            snprintf(err, n, "unknown argument '%s'", w);
            return -1;
        }
        *len = sizeof *a;
    }
    return 0;
}

static void ask_hypervisor(struct coll *c, int cl, uint16_t cmd, const void *data, uint32_t len)
{
    int64_t seq = coll_send_ctl(c, cmd, data, len);
    if (seq < 0) {
        coll_sock_end(&c->sock, cl, "no hypervisor is connected to this collector");
        return;
    }
    struct coll_sock_client *k = &c->sock.cl[cl];
    k->wait_seq = (uint64_t)seq;
    k->wait_cmd = cmd;
    k->sent_off = c->parser.next_off;
    k->deadline_ns = 0;                  /* set by the next tick (it knows the time) */
    if (cmd == HVT_CTL_TRACE_START)
        c->host_request = HVT_TRACE_REQ_START;
    else if (cmd == HVT_CTL_TRACE_STOP)
        c->host_request = HVT_TRACE_REQ_STOP;
}

#define COLL_ARM_MAX_SPECS (1u << 20)     /* a FILE larger than this is refused */

static void arm_free(struct coll *c)
{
    free(c->arm.specs);
    memset(&c->arm, 0, sizeof c->arm);
}

static void arm_send_next(struct coll *c, int cl)
{
    struct coll_probe_arm *a = &c->arm;
    /* a static tracepoint's spec travels with its recipe, the spec(s) after it */
    a->batch = (uint32_t)hvt_probe_spec_batch(a->specs + a->sent, a->n - a->sent, HVT_CTL_PROBE_SPECS);
    ask_hypervisor(c, cl, HVT_CTL_PROBE_ARM, a->specs + a->sent,
                   a->batch * (uint32_t)sizeof(struct hvt_probe_spec));
    if (!c->sock.cl[cl].wait_cmd || c->sock.cl[cl].fd < 0)
        arm_free(c);                     /* not sent: the client has its answer */
}

/* A client's FILE (the socket is the user's own, mode 0600) read whole: min..max bytes, a
 * multiple of unit. The bytes (malloc'd) and their count, or NULL with the answer given. */
static void *read_client_file(struct coll *c, int cl, const char *path, size_t unit, size_t min,
                              size_t max, const char *what, size_t *len)
{
    char err[300];
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) < 0) {
        snprintf(err, sizeof err, "cannot read %.200s: %s", path, strerror(errno));
        if (f) fclose(f);
        coll_sock_end(&c->sock, cl, err);
        return NULL;
    }
    size_t n = (size_t)st.st_size;
    void *p = NULL;
    if (n < min || n > max || n % unit) {
        snprintf(err, sizeof err, "%.200s: not %s (%zu..%zu bytes, a multiple of %zu)", path, what,
                 min, max, unit);
        coll_sock_end(&c->sock, cl, err);
    } else if (!(p = malloc(n)) || fread(p, 1, n, f) != n) {
        free(p);
        p = NULL;
        coll_sock_end(&c->sock, cl, "reading the file failed");
    }
    fclose(f);
    *len = n;
    return p;
}

/* "probe arm FILE" */
static void arm_start(struct coll *c, int cl, const char *path)
{
    if (c->arm.specs) {
        coll_sock_end(&c->sock, cl, "another probe arming is in progress");
        return;
    }
    size_t len;
    c->arm.specs = read_client_file(c, cl, path, sizeof(struct hvt_probe_spec),
                                    sizeof(struct hvt_probe_spec),
                                    COLL_ARM_MAX_SPECS * sizeof(struct hvt_probe_spec),
                                    "probe specs", &len);
    if (!c->arm.specs)
        return;
    c->arm.n = (uint32_t)(len / sizeof(struct hvt_probe_spec));
    c->arm.client = cl;
    arm_send_next(c, cl);
}

static void dload_free(struct coll *c)
{
    free(c->dload.img);
    memset(&c->dload, 0, sizeof c->dload);
}

static void dload_send_next(struct coll *c, int cl)
{
    struct coll_d_load *d = &c->dload;
    uint8_t req[HVT_CTL_MAX_DATA];
    struct hvt_d_load h = { .total = d->total, .offset = d->sent };
    d->part = d->total - d->sent < HVT_D_LOAD_CHUNK ? d->total - d->sent : HVT_D_LOAD_CHUNK;
    memcpy(req, &h, sizeof h);
    memcpy(req + sizeof h, d->img + d->sent, d->part);
    ask_hypervisor(c, cl, HVT_CTL_D_LOAD, req, (uint32_t)sizeof h + d->part);
    if (!c->sock.cl[cl].wait_cmd || c->sock.cl[cl].fd < 0)
        dload_free(c);                   /* not sent: the client has its answer */
}

/* "d load FILE" */
static void dload_start(struct coll *c, int cl, const char *path)
{
    if (c->dload.img) {
        coll_sock_end(&c->sock, cl, "another program load is in progress");
        return;
    }
    size_t len;
    c->dload.img = read_client_file(c, cl, path, 1, sizeof(struct hvt_dif_hdr), HVT_DIF_MAX_IMAGE,
                                    "a D program image", &len);
    if (!c->dload.img)
        return;
    c->dload.total = (uint32_t)len;
    c->dload.client = cl;
    dload_send_next(c, cl);
}

static void print_d_status(struct coll *c, int i, const struct hvt_d_status *d)
{
    char why[sizeof d->why + 1];
    memcpy(why, d->why, sizeof d->why);
    why[sizeof d->why] = 0;
    for (char *p = why; *p; p++)           /* one line, whatever the hypervisor wrote */
        if (*p < 0x20 || *p > 0x7e)
            *p = '?';
    coll_sock_printf(&c->sock, i, "d_error=%d\nd_received=%u\nd_err_clause=%u\nd_err_insn=%u\n"
                     "d_why=%s\nd_loaded=%u\nd_snap_gen=%u\nd_fires=%llu\nd_records=%llu\n"
                     "d_drops=%llu\nd_errors=%llu\nd_dyndrops=%llu\nd_records_lost=%llu\n"
                     "d_records_received=%llu\n", d->error, d->received, d->err_clause,
                     d->err_insn, why, d->loaded, d->snap_gen, (unsigned long long)d->fires,
                     (unsigned long long)d->records, (unsigned long long)d->drops,
                     (unsigned long long)d->errors, (unsigned long long)d->dyndrops,
                     (unsigned long long)d->records_lost, (unsigned long long)c->d_records);
}

/* One LOAD reply: the next part, or the answer. */
static void dload_reply(struct coll *c, int i, const struct ctl_msg *m)
{
    struct coll_d_load *d = &c->dload;
    struct hvt_d_status st = { 0 };
    bool ok = m->ctl.status == HVT_CTL_OK && m->ctl.data_len >= sizeof st;
    if (ok)
        memcpy(&st, m->data, sizeof st);
    if (ok && !st.error && d->sent + d->part < d->total) {
        d->sent += d->part;
        dload_send_next(c, i);
        return;
    }
    coll_sock_printf(&c->sock, i, "hv_status=%s\n", coll_ctl_status_name(m->ctl.status));
    if (ok)
        print_d_status(c, i, &st);
    dload_free(c);
    coll_sock_end(&c->sock, i, !ok ? "the hypervisor refused the request" :
                  st.error ? "the hypervisor refused the program" : NULL);
}

/* "d begin | d end | d snap | d status | d unload" */
static void d_run(struct coll *c, int cl, const char *words)
{
    struct hvt_d_run r = { 0 };
    char op[16];
    unsigned gen = 0;
    int n = sscanf(words, "%15s %u", op, &gen);
    if (n == 1 && !strcmp(op, "begin")) r.op = HVT_D_OP_BEGIN;
    else if (n == 1 && !strcmp(op, "end")) r.op = HVT_D_OP_END;
    else if (n == 1 && !strcmp(op, "snap")) r.op = HVT_D_OP_SNAP;
    else if (n == 1 && !strcmp(op, "unload")) r.op = HVT_D_OP_UNLOAD;
    else if (n == 1 && !strcmp(op, "status")) r.op = HVT_D_OP_STATUS;
    else {
        coll_sock_end(&c->sock, cl, "d: load FILE | begin | end | snap | status | unload");
        return;
    }
    (void)gen;
    ask_hypervisor(c, cl, HVT_CTL_D_RUN, &r, sizeof r);
}

/* "d cmd set TEXT | go SEQ | cancel SEQ | status" */
static void d_cmd(struct coll *c, int cl, const char *words)
{
    uint8_t req[sizeof(struct hvt_d_cmd) + HVT_D_CMD_MAX];
    struct hvt_d_cmd h = { 0 };
    size_t n = 0;
    unsigned seq = 0;
    char extra;
    if (!strncmp(words, "set ", 4)) {
        n = strlen(words + 4);
        if (!n || n > HVT_D_CMD_MAX) {
            coll_sock_end(&c->sock, cl, "d cmd set: the command line must be 1 to 1000 bytes");
            return;
        }
        h.op = HVT_D_CMD_SET;
        memcpy(req + sizeof h, words + 4, n);
    } else if (sscanf(words, "go %u %c", &seq, &extra) == 1) {
        h.op = HVT_D_CMD_GO;
    } else if (sscanf(words, "cancel %u %c", &seq, &extra) == 1) {
        h.op = HVT_D_CMD_CANCEL;
    } else if (!strcmp(words, "status")) {
        h.op = HVT_D_CMD_STATUS;
    } else {
        coll_sock_end(&c->sock, cl, "d cmd: set TEXT | go SEQ | cancel SEQ | status");
        return;
    }
    h.seq = seq;
    memcpy(req, &h, sizeof h);
    ask_hypervisor(c, cl, HVT_CTL_D_CMD, req, (uint32_t)(sizeof h + n));
}

void coll_cmd_request(void *ctx, int cl, char *line)
{
    struct coll *c = ctx;
    char err[160];
    if (strcmp(line, "status"))          /* hvt trace stop polls status: keep the log quiet */
        coll_log("hvtrace-collector: command: %s\n", line);
    if (!strcmp(line, "status")) {
        print_status(c, cl);
        coll_sock_end(&c->sock, cl, NULL);
    } else if (!strncmp(line, "trace start", 11) && (line[11] == 0 || line[11] == ' ')) {
        struct hvt_trace_args a;
        uint32_t len;
        if (parse_args(line + 11, &a, &len, err, sizeof err) < 0)
            coll_sock_end(&c->sock, cl, err);
        else
            ask_hypervisor(c, cl, HVT_CTL_TRACE_START, &a, len);
    } else if (!strcmp(line, "trace stop")) {
        ask_hypervisor(c, cl, HVT_CTL_TRACE_STOP, NULL, 0);
    } else if (!strcmp(line, "trace hvstatus")) {
        ask_hypervisor(c, cl, HVT_CTL_TRACE_STATUS, NULL, 0);
    } else if (!strncmp(line, "probe arm ", 10)) {
        arm_start(c, cl, line + 10);
    } else if (!strcmp(line, "probe disarm")) {
        ask_hypervisor(c, cl, HVT_CTL_PROBE_DISARM, NULL, 0);
    } else if (!strcmp(line, "probe status")) {
        ask_hypervisor(c, cl, HVT_CTL_PROBE_STATUS, NULL, 0);
    } else if (!strcmp(line, "probe cost on") || !strcmp(line, "probe cost off") ||
               !strcmp(line, "probe cost")) {
        uint8_t b = !strcmp(line, "probe cost") ? HVT_PROBE_COST_GET :
                    !strcmp(line, "probe cost on") ? HVT_PROBE_COST_ON : HVT_PROBE_COST_OFF;
        ask_hypervisor(c, cl, HVT_CTL_PROBE_COST, &b, 1);
    } else if (!strncmp(line, "d load ", 7)) {
        dload_start(c, cl, line + 7);
    } else if (!strncmp(line, "d cmd ", 6)) {
        d_cmd(c, cl, line + 6);
    } else if (!strncmp(line, "d ", 2)) {
        d_run(c, cl, line + 2);
    } else {
        snprintf(err, sizeof err, "unknown request '%.60s' (status | trace start|stop|hvstatus | "
                 "probe arm FILE|disarm|status|cost [on|off] | d load FILE|begin|end|snap|status|unload|cmd ...)", line);
        coll_sock_end(&c->sock, cl, err);
    }
}

static void print_probe_status(struct coll *c, int i, const struct hvt_probe_status *p)
{
    coll_sock_printf(&c->sock, i, "probe_slide=%lld\n", (long long)p->slide);
    coll_sock_printf(&c->sock, i, "probe_armed=%u\nprobe_fires=%llu\nprobe_records=%llu\n"
                     "probe_records_lost=%llu\nprobe_exits=%llu\nprobe_ept_exits=%llu\n"
                     "probe_records_received=%llu\n", p->armed,
                     (unsigned long long)p->fires, (unsigned long long)p->records,
                     (unsigned long long)p->records_lost, (unsigned long long)p->exits,
                     (unsigned long long)p->ept_exits, (unsigned long long)c->probe_records);
}

/* One ARM reply: the next request, or the answer. True when the client's answer is done. */
static bool arm_reply(struct coll *c, int i, const struct ctl_msg *m, uint64_t off)
{
    struct coll_probe_arm *a = &c->arm;
    struct hvt_probe_status p = { 0 };
    bool ok = m->ctl.status == HVT_CTL_OK && m->ctl.data_len >= sizeof p;
    if (ok)
        memcpy(&p, m->data, sizeof p);
    if (ok && !a->replied) {
        a->replied = true;
        a->off = off;
        a->records0 = p.records;
        a->lost0 = p.records_lost;
    }
    if (ok) {
        a->taken += p.specs_taken;
        a->sites += p.sites_armed;
    }
    /* fewer taken without an error: the hypervisor bounded its decode work; the rest again */
    bool partial = ok && !p.error && p.specs_taken && p.specs_taken < a->batch;
    a->sent += partial ? p.specs_taken : a->batch;
    if (ok && !p.error && (p.specs_taken == a->batch || partial) && a->sent < a->n) {
        arm_send_next(c, i);
        return false;
    }
    coll_sock_printf(&c->sock, i, "hv_status=%s\nprobe_specs=%u\nprobe_specs_taken=%u\n"
                     "probe_sites_armed=%u\nprobe_error=%d\nprobe_stream_off=%llu\n"
                     "probe_records_before=%llu\nprobe_records_lost_before=%llu\n",
                     coll_ctl_status_name(m->ctl.status), a->n, a->taken, a->sites, p.error,
                     (unsigned long long)a->off, (unsigned long long)a->records0,
                     (unsigned long long)a->lost0);
    if (ok)
        print_probe_status(c, i, &p);
    arm_free(c);
    coll_sock_end(&c->sock, i, ok ? NULL : "the hypervisor refused the request");
    return true;
}

void coll_cmd_ctl_reply(struct coll *c, const struct ctl_msg *m, bool tag_ok, uint64_t off)
{
    for (int i = 0; i < COLL_SOCK_CLIENTS; i++) {
        struct coll_sock_client *k = &c->sock.cl[i];
        if (k->fd < 0 || !k->taken || !k->wait_cmd || k->wait_seq != m->ctl.ctl_seq ||
            k->wait_cmd != m->ctl.cmd)
            continue;
        if (!tag_ok) {
            if (c->arm.specs && c->arm.client == i)
                arm_free(c);
            if (c->dload.img && c->dload.client == i)
                dload_free(c);
            coll_sock_end(&c->sock, i, "the reply failed authentication (wrong key?)");
            continue;
        }
        if (m->ctl.cmd == HVT_CTL_PROBE_ARM && c->arm.specs && c->arm.client == i) {
            arm_reply(c, i, m, off);
            continue;
        }
        if (m->ctl.cmd == HVT_CTL_D_LOAD && c->dload.img && c->dload.client == i) {
            dload_reply(c, i, m);
            continue;
        }
        if (m->ctl.cmd == HVT_CTL_PROBE_COST) {
            /* probe_cost=ID SITES FIRES TICKS... NEWTASK SWITCHED (the phases in enum
             * hvt_probe_phase order, then struct hvt_probe_cost's firing counts) */
            struct hvt_probe_cost_head h;
            bool ok = m->ctl.status == HVT_CTL_OK && m->ctl.data_len >= sizeof h;
            coll_sock_printf(&c->sock, i, "hv_status=%s\n", coll_ctl_status_name(m->ctl.status));
            if (ok) {
                memcpy(&h, m->data, sizeof h);
                if (h.n > (m->ctl.data_len - sizeof h) / sizeof(struct hvt_probe_cost))
                    h.n = 0;               /* a short reply: none of it */
                coll_sock_printf(&c->sock, i, "probe_cost_on=%u\nprobe_cost_ids=%u\n", h.on, h.total);
                for (uint32_t k = 0; k < h.n; k++) {
                    struct hvt_probe_cost e;
                    memcpy(&e, m->data + sizeof h + k * sizeof e, sizeof e);
                    char line[320];
                    int n = snprintf(line, sizeof line, "probe_cost=%u %u %llu", e.id, e.sites,
                                     (unsigned long long)e.fires);
                    for (unsigned ph = 0; ph < HVT_PH_COUNT && n > 0 && (size_t)n < sizeof line; ph++)
                        n += snprintf(line + n, sizeof line - (size_t)n, " %llu",
                                      (unsigned long long)e.ticks[ph]);
                    if (n > 0 && (size_t)n < sizeof line)
                        snprintf(line + n, sizeof line - (size_t)n, " %llu %llu",
                                 (unsigned long long)e.newtask, (unsigned long long)e.switched);
                    coll_sock_printf(&c->sock, i, "%s\n", line);
                }
            }
            coll_sock_end(&c->sock, i, ok ? NULL : "the hypervisor refused the request");
            continue;
        }
        if (m->ctl.cmd == HVT_CTL_D_RUN) {
            /* Where the program's records begin for its reader: where the stream stood when
             * the request went out, not where the reply sits: another CPU can run BEGIN and
             * send its records before the handling CPU sends the reply. */
            struct hvt_d_status st;
            uint64_t from = k->sent_off < off ? k->sent_off : off;
            coll_sock_printf(&c->sock, i, "hv_status=%s\nd_stream_off=%llu\n",
                             coll_ctl_status_name(m->ctl.status), (unsigned long long)from);
            if (m->ctl.status == HVT_CTL_OK && m->ctl.data_len >= sizeof st) {
                memcpy(&st, m->data, sizeof st);
                print_d_status(c, i, &st);
            }
            coll_sock_end(&c->sock, i, m->ctl.status == HVT_CTL_OK ? NULL :
                          "the hypervisor refused the request (no program loaded?)");
            continue;
        }
        if (m->ctl.cmd == HVT_CTL_D_CMD) {
            struct hvt_d_cmd_status s;
            coll_sock_printf(&c->sock, i, "hv_status=%s\n", coll_ctl_status_name(m->ctl.status));
            bool ok = m->ctl.status == HVT_CTL_OK && m->ctl.data_len >= sizeof s;
            if (ok) {
                memcpy(&s, m->data, sizeof s);
                coll_sock_printf(&c->sock, i, "cmd_seq=%u\ncmd_state=%u\ncmd_pid=%u\n"
                                 "cmd_wait_status=%d\ncmd_error=%d\n", s.seq, s.state, s.pid,
                                 s.wait_status, s.error);
            }
            coll_sock_end(&c->sock, i, !ok ? "the hypervisor refused the request" :
                          s.error == HVT_D_CMD_EBUSY ? "another command is still live" :
                          s.error ? "not that command, or not in that state" : NULL);
            continue;
        }
        coll_sock_printf(&c->sock, i, "hv_status=%s\n", coll_ctl_status_name(m->ctl.status));
        if ((m->ctl.cmd == HVT_CTL_PROBE_DISARM || m->ctl.cmd == HVT_CTL_PROBE_STATUS) &&
            m->ctl.status == HVT_CTL_OK && m->ctl.data_len >= sizeof(struct hvt_probe_status)) {
            struct hvt_probe_status p;
            memcpy(&p, m->data, sizeof p);
            print_probe_status(c, i, &p);
        } else if (m->ctl.status == HVT_CTL_OK && m->ctl.data_len >= HVT_TRACE_STATUS_V1_LEN) {
            struct hvt_trace_status t = { 0 };     /* an older hypervisor's reply is shorter */
            memcpy(&t, m->data, m->ctl.data_len < sizeof t ? m->ctl.data_len : sizeof t);
            coll_sock_printf(&c->sock, i, "hv_stepping=%u\n", t.stepping);
            coll_sock_printf(&c->sock, i, "hv_host_request=%u\nhv_flags=0x%x\nhv_starts=%llu\n"
                             "hv_stops=%llu\nhv_steps_closed=%llu\nhv_chunks_sent=%llu\n"
                             "hv_chunk_bytes_sent=%llu\nhv_chunks_debug_port=%llu\n", t.host_request,
                             t.flags, (unsigned long long)t.starts, (unsigned long long)t.stops,
                             (unsigned long long)t.steps_closed, (unsigned long long)t.chunks_sent,
                             (unsigned long long)t.chunk_bytes_sent,
                             (unsigned long long)t.chunks_debug_port);
            char more[512];
            coll_hvstatus_format(more, sizeof more, &t, m->ctl.data_len);
            coll_sock_printf(&c->sock, i, "%s", more);
        }
        const char *why = NULL;
        switch (m->ctl.status) {
        case HVT_CTL_OK: break;
        case HVT_CTL_EINVAL: why = "the hypervisor refused the arguments (unknown or not yet "
                                   "implemented filter)"; break;
        case HVT_CTL_ENOSYS: why = "the hypervisor has no tracer control (built without it?)"; break;
        case HVT_CTL_EAUTH: why = "the hypervisor refused the request's tag (wrong or missing key)"; break;
        default: why = "the hypervisor refused the request"; break;
        }
        coll_sock_end(&c->sock, i, why);
    }
}

void coll_cmd_tick(struct coll *c, uint64_t now)
{
    for (int i = 0; i < COLL_SOCK_CLIENTS; i++) {
        struct coll_sock_client *k = &c->sock.cl[i];
        if (k->fd < 0 || !k->taken || !k->wait_cmd)
            continue;
        if (!k->deadline_ns)
            k->deadline_ns = now + COLL_CMD_REPLY_NS;
        else if (now > k->deadline_ns)
            coll_sock_end(&c->sock, i, "no reply from the hypervisor in time");
    }
    /* An arming whose client went away (ended, timed out, disconnected) stops sending. */
    if (c->arm.specs && (c->sock.cl[c->arm.client].fd < 0 || !c->sock.cl[c->arm.client].taken))
        arm_free(c);
    if (c->dload.img && (c->sock.cl[c->dload.client].fd < 0 || !c->sock.cl[c->dload.client].taken))
        dload_free(c);
}
