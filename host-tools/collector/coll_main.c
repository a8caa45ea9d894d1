/*
 * hvtrace-collector - accepts the hypervisor's stream connection and writes a trace directory
 * per hypervisor boot (coll_store.h). Single-threaded, one active connection; who may replace
 * it (the hypervisor reconnecting, never a stranger) is coll_peer.h's decision; every message is
 * checked against its session tag by the parser (coll_parse.h). A HELLO with another boot_id
 * closes the current boot's directory and opens a new one, so two boots never mix.
 *
 *   hvtrace-collector [--listen ADDR] [--port N] [--out DIR] [--key HEX | --key-file F]
 *                     [--ctl CMD,...] [--chunk-mb N] [--fsync] [--exit-on-bye] [--progress]
 *                     [--zstd LEVEL] [--socket PATH | --no-socket] [--peer ADDR] [--insecure]
 *                     [--pin-cfg SHA256]
 *   hvtrace-collector --verify DIR        re-check a trace directory (coll_verify.h)
 *   hvtrace-collector --rebuild-trace DIR write DIR/trace.hvt afresh from its messages
 * Trace batches become OUT/<boot>/trace.hvt as they arrive (coll_trace.h). `hvt trace
 * start|stop|status` talks to the collector over OUT/control.sock (coll_sock.h, coll_cmd.c).
 * Control commands sent after each WELCOME (--ctl): ping, status, badauth (a ping tagged with
 * a wrong key: it must be refused), replay (the previous request again: must be refused),
 * badtag (once: an ACK whose session tag is damaged: the hypervisor must drop the connection).
 * SIGUSR1 sends a status request. SIGINT/SIGTERM: checkpoint, summary on stderr, exit 0 - or
 * 1 if storing failed (coll.h: a failed store is sticky and never acknowledged).
 * Progress (rate, bytes, gaps) goes to stderr once a second, only when stderr is a terminal.
 */
#define _GNU_SOURCE
#include "coll.h"
#include "coll_link.h"
#include "coll_verify.h"
#include "hvt_dif.h"
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop, g_status_req;

static void on_signal(int sig) { if (sig == SIGUSR1) g_status_req = 1; else g_stop = 1; }

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The first failure to store anything of this boot (coll.h, "acked <= stored"): say it once,
 * loudly, and store nothing more. The connection stays: the hypervisor keeps every byte past
 * the last checkpoint stored, its ring fills and the guest slows as for a dead link, and a
 * collector restarted once the disk is fixed resumes there without a gap.
 */
static void store_failed(struct coll *c)
{
    if (c->store_stopped)
        return;
    c->store_stopped = true;
    c->store_failures++;
    int e = c->store.fail_errno ? c->store.fail_errno : EIO;
    coll_log("hvtrace-collector: STORE FAILED: %s: %s (%s): storing nothing more for this boot; "
             "acknowledged up to stream offset %llu only, the hypervisor holds the rest (its "
             "ring fills, the guest slows); fix the disk and restart the collector to resume\n",
             c->store.fail_what[0] ? c->store.fail_what : c->store.dir, strerror(e),
             coll_errno_name(e), (unsigned long long)c->last_ack_off);
}

/* trace.hvt's writer failed (its message in c->trace.msg): the same as any other store failure. */
static void trace_failed(struct coll *c, int e)
{
    if (!c->store.fail_errno) {
        c->store.fail_errno = e ? e : EIO;
        snprintf(c->store.fail_what, sizeof c->store.fail_what, "write %s (%s)", c->trace.path,
                 c->trace.msg);
    }
    store_failed(c);
}

static void flush_data(struct coll *c)
{
    if (!c->store_open)
        return;
    if (!c->store_stopped && c->span_len &&
        coll_store_write_msgs(&c->store, c->span, c->span_len, c->span_off, c->span_msgs) < 0)
        store_failed(c);
    c->span_len = 0;
    c->span_msgs = 0;
    if (!c->store_stopped && c->console_len &&
        coll_store_console(&c->store, c->console, c->console_len) < 0)
        store_failed(c);
    c->console_len = 0;
}

/* Store everything parsed so far and checkpoint it: true when store.durable covers it all. */
static bool checkpoint(struct coll *c)
{
    flush_data(c);
    if (!c->store_open || c->store_stopped)
        return false;
    c->store.st.c = c->parser.c;
    if (coll_trace_sync(&c->trace, c->fsync_each, &c->store.st.trace) < 0) {
        trace_failed(c, errno);
        return false;
    }
    if (coll_store_checkpoint(&c->store, &c->parser) < 0) {
        store_failed(c);
        return false;
    }
    return true;
}

static void checkpoint_and_ack(struct coll *c)
{
    if (!checkpoint(c))
        return;                          /* no ACK past the last checkpoint stored */
    /* what the checkpoint just stored: the parser's offset, now on disk (coll.h) */
    uint64_t stored = c->store.durable.next_off;
    if (stored != c->last_ack_off && c->cfd >= 0 && c->parser.have_hello) {
        struct hvt_ack a = { .persisted_off = stored };
        coll_send_unsequenced(c, HVT_MSG_ACK, &a, sizeof a);
    }
    c->last_ack_off = stored;
    c->unacked_since_ns = 0;
}

static void send_ctl(struct coll *c, const char *cmd)
{
    if (c->cfd < 0 || !c->parser.have_hello || !cmd[0])
        return;
    uint8_t buf[512];
    size_t n;
    const uint8_t *boot = c->parser.hello.boot_id;
    if (!strcmp(cmd, "replay")) {
        if (!c->last_req_len)
            return;
        n = c->last_req_len;
        memcpy(buf, c->last_req, n);
    } else if (!strcmp(cmd, "badauth")) {
        struct ctl_key wrong = c->key;
        if (wrong.len == 0)
            wrong.len = HVT_KEY_MIN;
        wrong.bytes[0] ^= 0xa5;
        n = ctl_build(buf, HVT_MSG_CTL_REQ, HVT_CPU_NONE, &wrong, boot, c->ctl_seq++,
                      HVT_CTL_PING, 0, "badauth", 7);
    } else if (!strcmp(cmd, "ping")) {
        n = ctl_build(buf, HVT_MSG_CTL_REQ, HVT_CPU_NONE, &c->key, boot, c->ctl_seq++,
                      HVT_CTL_PING, 0, "ping", 4);
    } else if (!strcmp(cmd, "status")) {
        n = ctl_build(buf, HVT_MSG_CTL_REQ, HVT_CPU_NONE, &c->key, boot, c->ctl_seq++,
                      HVT_CTL_STATUS, 0, NULL, 0);
    } else if (!strcmp(cmd, "badtag")) {
        n = 0;                                   /* built below */
    } else {
        coll_log("hvtrace-collector: unknown control command '%s'\n", cmd);
        return;
    }
    if (!strcmp(cmd, "ping") || !strcmp(cmd, "status")) {
        /* "replay" resends the last genuine request: it must be refused as a replay */
        memcpy(c->last_req, buf, n);
        c->last_req_len = n;
    }
    if (!strcmp(cmd, "badtag")) {
        /* a forged ACK: right header, the session's tag damaged (the hypervisor must refuse it) */
        struct hvt_msg_hdr h = { .magic = HVT_STREAM_MAGIC, .version = HVT_STREAM_VERSION,
                                 .hdr_len = sizeof h, .type = HVT_MSG_ACK,
                                 .len = sizeof(struct hvt_ack), .cpu = HVT_CPU_NONE };
        struct hvt_ack a = { .persisted_off = c->parser.next_off };
        memcpy(buf, &h, sizeof h);
        memcpy(buf + sizeof h, &a, sizeof a);
        n = sizeof h + sizeof a;
    }
    n = coll_parse_seal(&c->parser, buf, n);
    if (!strcmp(cmd, "badtag"))
        buf[n - 1] ^= 0x5a;
    if (coll_send_all(c->cfd, buf, n) < 0)
        c->io_error = true;
}

static void on_ctl_reply(struct coll *c, const struct hvt_msg_hdr *h, const uint8_t *pl)
{
    struct ctl_msg m;
    int v = ctl_parse(h, pl, &c->key, c->parser.hello.boot_id, 0, &m);
    char line[1024];
    int n = snprintf(line, sizeof line, "ctl_seq=%llu cmd=%s status=%s tag=%s",
                     (unsigned long long)m.ctl.ctl_seq, coll_ctl_cmd_name(m.ctl.cmd),
                     coll_ctl_status_name(m.ctl.status),
                     c->key.len == 0 ? "unchecked" : v == HVT_CTL_OK ? "ok" : "BAD");
    if (m.ctl.cmd == HVT_CTL_STATUS && m.ctl.status == HVT_CTL_OK &&
        m.ctl.data_len >= sizeof(struct hvt_ctl_status)) {
        struct hvt_ctl_status s;
        memcpy(&s, m.data, sizeof s);
        n += snprintf(line + n, sizeof line - (size_t)n,
                      " ring_head=%llu ring_tail=%llu ctl_accepted=%llu ctl_bad_auth=%llu "
                      "ctl_replayed=%llu ctl_malformed=%llu connections=%llu console_bytes=%llu "
                      "lost_messages=%llu backpressure_waits=%llu rx_frames=%llu tx_frames=%llu "
                      "bad_tags=%llu session=%s",
                      (unsigned long long)s.ring_head, (unsigned long long)s.ring_tail,
                      (unsigned long long)s.ctl_accepted, (unsigned long long)s.ctl_bad_auth,
                      (unsigned long long)s.ctl_replayed, (unsigned long long)s.ctl_malformed,
                      (unsigned long long)s.connections, (unsigned long long)s.console_bytes,
                      (unsigned long long)s.lost_messages, (unsigned long long)s.backpressure_waits,
                      (unsigned long long)s.rx_frames, (unsigned long long)s.tx_frames,
                      (unsigned long long)s.bad_tags,
                      coll_session_name(s.hello_flags));
    } else if (m.ctl.cmd >= HVT_CTL_PROBE_ARM && m.ctl.cmd <= HVT_CTL_PROBE_STATUS &&
               m.ctl.status == HVT_CTL_OK && m.ctl.data_len >= sizeof(struct hvt_probe_status)) {
        struct hvt_probe_status p;
        memcpy(&p, m.data, sizeof p);
        n += snprintf(line + n, sizeof line - (size_t)n,
                      " specs_taken=%u error=%d sites_armed=%u armed=%u fires=%llu records=%llu "
                      "records_lost=%llu exits=%llu ept_exits=%llu slide=0x%llx", p.specs_taken, p.error,
                      p.sites_armed, p.armed, (unsigned long long)p.fires,
                      (unsigned long long)p.records, (unsigned long long)p.records_lost,
                      (unsigned long long)p.exits, (unsigned long long)p.ept_exits,
                      (unsigned long long)p.slide);
    } else if (m.ctl.cmd >= HVT_CTL_TRACE_FIRST && m.ctl.cmd <= HVT_CTL_TRACE_STATUS &&
               m.ctl.status == HVT_CTL_OK && m.ctl.data_len >= sizeof(struct hvt_trace_status)) {
        struct hvt_trace_status t;
        memcpy(&t, m.data, sizeof t);
        n += snprintf(line + n, sizeof line - (size_t)n,
                      " host_request=%u stepping=%u flags=0x%x starts=%llu stops=%llu steps_closed=%llu "
                      "chunks_sent=%llu chunk_bytes_sent=%llu chunks_debug_port=%llu",
                      t.host_request, t.stepping, t.flags, (unsigned long long)t.starts,
                      (unsigned long long)t.stops, (unsigned long long)t.steps_closed,
                      (unsigned long long)t.chunks_sent, (unsigned long long)t.chunk_bytes_sent,
                      (unsigned long long)t.chunks_debug_port);
    } else if (m.ctl.cmd == HVT_CTL_PING && m.ctl.data_len) {
        n += snprintf(line + n, sizeof line - (size_t)n, " data=");
        for (uint32_t i = 0; i < m.ctl.data_len && n < (int)sizeof line - 4; i++)
            line[n++] = m.data[i] >= ' ' && m.data[i] < 127 ? (char)m.data[i] : '.';
        line[n] = 0;
    }
    snprintf(line + n, sizeof line - (size_t)n, "\n");
    if (!c->store_stopped && coll_store_control_line(&c->store, line) < 0)
        store_failed(c);
    coll_log("hvtrace-collector: control reply: %s", line);
    coll_cmd_ctl_reply(c, &m, v == HVT_CTL_OK, h->off);
}

static void sink_msg(void *ctx, const struct hvt_msg_hdr *h, const uint8_t *pl, const uint8_t *raw)
{
    struct coll *c = ctx;
    size_t n = sizeof *h + h->len;
    if (c->store_stopped) {
        /* parsed, never stored nor acknowledged: the hypervisor resends it to the collector that
         * resumes this boot. Control replies still answer `hvt trace` requests. */
        if (h->type == HVT_MSG_CTL_REPLY)
            on_ctl_reply(c, h, pl);
        else if (h->type == HVT_MSG_BYE)
            c->bye_seen = true;
        return;
    }
    if (c->span_len && c->span + c->span_len == raw) {
        c->span_len += n;
    } else {
        flush_data(c);
        c->span = raw;
        c->span_len = n;
        c->span_off = h->off;
    }
    c->span_msgs++;
    switch (h->type) {
    case HVT_MSG_CONSOLE:
        if (c->console_len + h->len > sizeof c->console)
            flush_data(c);                       /* keeps console order; span re-starts */
        if (h->len > sizeof c->console) {
            if (!c->store_stopped && coll_store_console(&c->store, pl, h->len) < 0)
                store_failed(c);
        } else {
            memcpy(c->console + c->console_len, pl, h->len);
            c->console_len += h->len;
        }
        break;
    case HVT_MSG_META:
        coll_store_meta(&c->store, pl, h->len);
        break;
    case HVT_MSG_TRACE: {
        uint64_t t = c->last_data_ns;        /* time of the read() that brought it */
        if (!c->trace_first_ns) {
            c->trace_first_ns = t;
            c->trace_bytes_at_first = c->parser.c.trace_bytes;
        }
        c->trace_last_ns = t;
        break;
    }
    case HVT_MSG_CTL_REPLY:
        on_ctl_reply(c, h, pl);
        break;
    case HVT_MSG_BYE:
        c->bye_seen = true;
        break;
    case HVT_MSG_PANIC: {                    /* the reason, in the log and header.txt's meta */
        char line[300];
        int n = snprintf(line, sizeof line, "hv_panic=");
        for (uint32_t i = 0; i < h->len; i++)
            line[n++] = pl[i] >= 0x20 && pl[i] < 0x7f ? (char)pl[i] : '?';
        line[n++] = '\n';
        coll_store_meta(&c->store, (const uint8_t *)line, (size_t)n);
        coll_log("hvtrace-collector: hypervisor PANIC: %.*s", n - 9, line + 9);
        break;
    }
    case HVT_MSG_PROBE:                      /* stored verbatim like every message; counted */
        c->probe_msgs++;
        c->probe_records += h->len / sizeof(struct hvt_probe_fire);   /* whole: coll_parse */
        break;
    case HVT_MSG_D_REC:
        c->d_msgs++;
        for (uint32_t at = 0; at < h->len; c->d_records++) {            /* checked: coll_parse */
            struct hvt_drec r;
            memcpy(&r, pl + at, sizeof r);
            at += r.len;
        }
        break;
    case HVT_MSG_D_AGG:
        c->d_agg_msgs++;
        break;
    case HVT_MSG_PROBE_STACK:
        c->probe_msgs++;
        for (uint32_t at = 0; at < h->len; c->probe_records++) {        /* checked: coll_parse */
            struct hvt_probe_sample sm;
            memcpy(&sm, pl + at, sizeof sm);
            at += (uint32_t)sizeof sm + ((sm.stack_len + 7u) & ~7u);
        }
        break;
    }
    if (c->store_stopped)                    /* a write above failed */
        return;
    int r = coll_trace_msg(&c->trace, h, pl, c->parser.c.gap_events);
    int e = errno;
    /* each one is counted in header.txt; the log shows the first few and then every 1000th */
    static uint64_t warnings;
    if (r < 0) {
        trace_failed(c, e);              /* says it, once */
        return;
    }
    if ((r > 0 || c->trace.msg[0]) &&
        (++warnings <= COLL_TRACE_LOG_FIRST || warnings % COLL_TRACE_LOG_EVERY == 0))
        coll_log("hvtrace-collector: trace: %s (trace message %llu)\n", c->trace.msg,
                 (unsigned long long)warnings);
}

/* Finish trace.hvt, checkpoint, close the boot directory. */
static void close_boot(struct coll *c)
{
    if (!c->store_open)
        return;
    checkpoint_and_ack(c);
    if (c->store_stopped) {
        /* finishing trace.hvt would write past the checkpoint: leave it for the restart,
         * which cuts it back to the checkpoint's length */
        coll_trace_abandon(&c->trace);
    } else if (coll_trace_close(&c->trace) < 0) {
        trace_failed(c, errno);
    }
    if (coll_store_close(&c->store) < 0)
        store_failed(c);
    c->store_open = false;
}

/* A fresh parser for this HELLO's boot: the key, the policy and the connection's session stay. */
static void parser_restart(struct coll *c, const struct hvt_hello *h)
{
    struct ctl_key key = c->parser.key;
    struct coll_session sess = c->parser.sess;
    bool allow = c->parser.allow_unauth;
    coll_parse_init(&c->parser, &key);
    c->parser.sess = sess;
    c->parser.allow_unauth = allow;
    c->parser.have_hello = true;
    c->parser.hello = *h;
}

static int sink_hello(void *ctx, const struct hvt_hello *hp, const char *text, size_t text_len)
{
    struct coll *c = ctx;
    const struct hvt_hello hello = *hp;      /* hp points into the parser, re-initialised below */
    const struct hvt_hello *h = &hello;
    char id[2 * HVT_BOOT_ID_LEN + 1], err[512];
    coll_hex(h->boot_id, HVT_BOOT_ID_LEN, id);
    if (c->pin_cfg && !coll_peer_cfg_pinned(text, text_len, c->pin_cfg, err, sizeof err)) {
        c->peers.refused++;
        coll_log("hvtrace-collector: refused connection from %s: %s\n", c->peer, err);
        return -1;
    }
    if (!coll_store_hello_fresh(c->out, h, err, sizeof err)) {   /* before anything changes */
        c->peers.refused++;
        coll_log("hvtrace-collector: refused connection from %s: %s\n", c->peer, err);
        return -1;
    }
    bool same = c->store_open && !memcmp(c->store.hello.boot_id, h->boot_id, HVT_BOOT_ID_LEN);
    if (!same) {
        if (c->store_open) {
            coll_log("hvtrace-collector: boot %s ended; new boot %s\n", c->store.dir, id);
            close_boot(c);
        }
        if (coll_store_open(&c->store, c->out, h, text, text_len, c->chunk_max, c->fsync_each,
                            err, sizeof err) < 0) {
            coll_log("hvtrace-collector: %s\n", err);
            return -1;
        }
        char tpath[sizeof c->store.dir + 32];
        snprintf(tpath, sizeof tpath, "%s/%s", c->store.dir, COLL_TRACE_FILE);
        if (coll_trace_open(&c->trace, tpath, h->cpu_count, c->store.resumed ? &c->store.st.trace : NULL,
                            c->zstd_level, err, sizeof err) < 0) {
            coll_log("hvtrace-collector: %s\n", err);
            coll_store_close(&c->store);
            return -1;
        }
        c->store_open = true;
        c->store_stopped = false;        /* a new directory: its writes have not failed yet */
        /* continuity and counters from the checkpoint (zero for a new boot) */
        parser_restart(c, h);
        coll_parse_expect(&c->parser, c->store.st.next_off, c->store.st.next_seq, h->cpu_count);
        c->parser.c = c->store.st.c;
        c->ctl_seq = 0;
    }
    if (same && !c->store_stopped && c->parser.next_off != c->store.durable.next_off)
        checkpoint(c);                   /* the WELCOME acknowledges: store first what it covers */
    if (same && c->store_stopped) {
        /* nothing past the last checkpoint was stored: take the stream again from there, and
         * the WELCOME below frees nothing more in the hypervisor */
        parser_restart(c, h);
        coll_parse_expect(&c->parser, c->store.durable.next_off, c->store.durable.next_seq,
                          h->cpu_count);
        c->parser.c = c->store.durable.c;
    }
    coll_peer_session(&c->peers, c->cfd_ip);   /* the hypervisor's address from now on */
    c->store.connections = h->connection + 1;   /* the hypervisor's count survives our restarts */
    c->store.hello = *h;
    if (c->ctl_seq < h->ctl_next_seq)
        c->ctl_seq = h->ctl_next_seq;
    c->last_ack_off = c->parser.next_off;
    /* ACK well before the hypervisor's ring fills, or it stalls waiting for us */
    c->ack_every = h->ring_size / 4 < COLL_ACK_MAX ? h->ring_size / 4 : COLL_ACK_MAX;
    if (c->ack_every == 0)
        c->ack_every = 1;
    coll_log("hvtrace-collector: %s boot %s (hv %u.%u.%u, %u CPUs) from %s, %s session, "
            "connection %u, resuming at offset %llu%s\n", same || c->store.resumed ? "resumed" : "new",
            id, (h->hv_version >> 16) & 0xff, (h->hv_version >> 8) & 0xff, h->hv_version & 0xff,
            h->cpu_count, c->peer, (c->parser.sess.flags & HVT_HELLO_ENCRYPT) ? "encrypted" :
            (c->parser.sess.flags & HVT_HELLO_AUTH) ? "authenticated" : "UNAUTHENTICATED",
            h->connection, (unsigned long long)c->parser.next_off,
            h->ring_tail > c->parser.next_off ? " (the hypervisor no longer holds all of it: "
            "the gap will be counted)" : "");
    if (coll_store_hello_accepted(c->out, h, c->fsync_each) < 0) {   /* before the WELCOME */
        coll_log("hvtrace-collector: cannot record connection %u of boot %s: %s\n",
                 h->connection, id, strerror(errno));
        return -1;
    }
    struct hvt_welcome w;
    memcpy(w.boot_id, h->boot_id, HVT_BOOT_ID_LEN);
    w.resume_off = c->parser.next_off;       /* == store.durable.next_off: stored (coll.h) */
    coll_send_unsequenced(c, HVT_MSG_WELCOME, &w, sizeof w);
    checkpoint_and_ack(c);
    for (int i = 0; i < c->nctl; i++) {
        send_ctl(c, c->ctl_cmds[i]);
        if (!strcmp(c->ctl_cmds[i], "badtag"))
            c->ctl_cmds[i][0] = 0;               /* once: the hypervisor drops the connection */
    }
    return 0;
}

static void close_conn(struct coll *c, const char *why)
{
    if (c->cfd < 0)
        return;
    checkpoint_and_ack(c);
    close(c->cfd);
    c->cfd = -1;
    c->rlen = 0;
    if (why)
        coll_log("hvtrace-collector: connection from %s closed: %s\n", c->peer, why);
}

/* Parse what rbuf holds, store it, acknowledge when due. */
static void process_rbuf(struct coll *c, uint64_t t)
{
    size_t used = 0;
    struct coll_sink sink = { .ctx = c, .on_hello = sink_hello, .on_msg = sink_msg };
    int rc = coll_parse_feed(&c->parser, c->rbuf, c->rlen, &used, &sink);
    flush_data(c);                       /* spans point into rbuf: write before moving it */
    if (rc == COLL_EMALFORMED) {
        c->rejected++;
        coll_log("hvtrace-collector: rejecting stream from %s: %s\n", c->peer, c->parser.err);
        close_conn(c, NULL);
        return;
    }
    if (rc == COLL_ESTOP) {
        c->rejected++;
        close_conn(c, "boot refused");
        return;
    }
    memmove(c->rbuf, c->rbuf + used, c->rlen - used);
    c->rlen -= used;
    if (c->parser.next_off != c->last_ack_off) {
        if (!c->unacked_since_ns)
            c->unacked_since_ns = t;
        if (c->parser.next_off - c->last_ack_off >= c->ack_every)
            checkpoint_and_ack(c);
    }
    if (c->io_error)
        close_conn(c, "send failed");
}

static void handle_read(struct coll *c)
{
    ssize_t r = recv(c->cfd, c->rbuf + c->rlen, COLL_RBUF_SIZE - c->rlen, 0);
    if (r == 0) {
        close_conn(c, "peer closed");
        return;
    }
    if (r < 0) {
        if (errno != EINTR && errno != EAGAIN)
            close_conn(c, strerror(errno));
        return;
    }
    uint64_t t = now_ns();
    if (!c->first_data_ns)
        c->first_data_ns = t;
    c->last_data_ns = t;
    c->rlen += (size_t)r;
    process_rbuf(c, t);
}

/* The live session as coll_peer sees it. */
static struct coll_live live_session(const struct coll *c)
{
    struct coll_live l = { .live = c->cfd >= 0 && c->parser.have_hello, .ip = c->cfd_ip,
                           .out = c->out };
    if (l.live) {
        l.authenticated = c->parser.sess.flags & HVT_HELLO_AUTH;
        memcpy(l.boot_id, c->parser.hello.boot_id, HVT_BOOT_ID_LEN);
        l.connection = c->parser.hello.connection;
    }
    return l;
}

static void adopt(struct coll *c, int fd, uint32_t ip, const char *peer, const char *why)
{
    if (c->cfd >= 0)
        close_conn(c, why);
    c->cfd = fd;
    c->cfd_ip = ip;
    c->io_error = false;
    c->connections++;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    snprintf(c->peer, sizeof c->peer, "%s", peer);
    coll_parse_new_connection(&c->parser);
    c->rlen = 0;
}

static void handle_accept(struct coll *c)
{
    struct sockaddr_in a;
    socklen_t al = sizeof a;
    int fd = accept(c->lfd, (struct sockaddr *)&a, &al);
    if (fd < 0)
        return;
    char peer[64];
    snprintf(peer, sizeof peer, "%s:%u", inet_ntoa(a.sin_addr), ntohs(a.sin_port));
    struct coll_live l = live_session(c);
    if (coll_peer_arrived(&c->peers, fd, a.sin_addr.s_addr, peer, &l, now_ns()))
        adopt(c, fd, a.sin_addr.s_addr, peer, "replaced by a new connection");
}

/* A connection that waited aside and whose HELLO earned it the session. */
static void adopt_pending(struct coll *c, int i)
{
    struct coll_pending *q = &c->peers.p[i];
    coll_log("hvtrace-collector: %s's authenticated HELLO replaces the session with %s\n",
             q->peer, c->peer);
    adopt(c, q->fd, q->ip, q->peer, "replaced by the hypervisor's newer connection");
    memcpy(c->rbuf, q->buf, q->have);
    c->rlen = q->have;
    coll_peer_release(&c->peers, i);
    uint64_t t = now_ns();
    c->last_data_ns = t;
    process_rbuf(c, t);
}

static void progress(struct coll *c, bool force)
{
    uint64_t t = now_ns();
    if (!c->progress || (!force && t - c->last_progress_ns < 1000000000ull))
        return;
    double dt = (t - c->last_progress_ns) / 1e9;
    uint64_t b = c->parser.c.bytes;
    coll_progress_shown = true;
    fprintf(stderr, "\r%.1f MB  %.2f MB/s  %llu msgs  gaps %llu (%llu msgs)  console %llu B   ",
            b / 1e6, c->last_progress_ns ? (b - c->progress_bytes) / 1e6 / dt : 0.0,
            (unsigned long long)c->parser.c.msgs, (unsigned long long)c->parser.c.gap_events,
            (unsigned long long)c->parser.c.gap_msgs, (unsigned long long)c->parser.c.console_bytes);
    c->progress_bytes = b;
    c->last_progress_ns = t;
}

static void summary(struct coll *c)
{
    const struct coll_counters *k = &c->parser.c;
    double dt = c->last_data_ns > c->first_data_ns ? (c->last_data_ns - c->first_data_ns) / 1e9 : 0;
    double tt = c->trace_last_ns > c->trace_first_ns ? (c->trace_last_ns - c->trace_first_ns) / 1e9 : 0;
    uint64_t tb = c->parser.c.trace_bytes - c->trace_bytes_at_first;
    coll_log("hvtrace-collector: summary: dir=%s messages=%llu bytes=%llu console_bytes=%llu "
            "trace_msgs=%llu gap_events=%llu gap_bytes=%llu gap_msgs=%llu lost_msgs=%llu "
            "ctl_replies=%llu connections=%llu rejected=%llu refused=%llu bad_tags=%llu seconds=%.3f msgs_per_s=%.0f MB_per_s=%.2f "
            "trace_seconds=%.3f trace_MB_per_s=%.3f\n",
            c->store_open ? c->store.dir : "(none)", (unsigned long long)k->msgs,
            (unsigned long long)k->bytes, (unsigned long long)k->console_bytes,
            (unsigned long long)k->trace_msgs, (unsigned long long)k->gap_events,
            (unsigned long long)k->gap_bytes, (unsigned long long)k->gap_msgs,
            (unsigned long long)k->lost_msgs, (unsigned long long)k->ctl_replies,
            (unsigned long long)c->connections, (unsigned long long)c->rejected,
            (unsigned long long)c->peers.refused, (unsigned long long)k->bad_tags, dt,
            dt > 0 ? k->msgs / dt : 0.0, dt > 0 ? k->bytes / dt / 1e6 : 0.0, tt,
            tt > 0 ? tb / tt / 1e6 : 0.0);
    if (c->store_open && c->store_stopped)
        coll_log("hvtrace-collector: store failed: %s: %s (%s); stored and acknowledged up to "
                 "stream offset %llu of %llu received\n", c->store.fail_what,
                 strerror(c->store.fail_errno), coll_errno_name(c->store.fail_errno),
                 (unsigned long long)c->store.durable.next_off,
                 (unsigned long long)c->parser.next_off);
    if (!c->store_open || !c->trace.st.data_len)
        return;
    const struct coll_trace_state *t = &c->trace.st;
    uint64_t rec = 0, ins = 0;
    for (unsigned i = 0; i < COLL_TRACE_MAX_CPUS; i++) {
        rec += t->cpu[i].records;
        ins += t->cpu[i].insns;
    }
    coll_log("hvtrace-collector: trace: %s records=%llu insns=%llu batches=%llu gaps=%llu "
             "bad_batches=%llu windows_open=%u\n", c->trace.path, (unsigned long long)rec,
             (unsigned long long)ins, (unsigned long long)t->batches, (unsigned long long)t->gaps,
             (unsigned long long)t->bad_batches, coll_trace_open_windows(&c->trace));
}

static int read_key_file(struct coll *c, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char buf[300] = { 0 };
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
        n--;
    return ctl_key_from_hex(&c->key, buf, n);
}

static void usage(void)
{
    fprintf(stderr, "usage: hvtrace-collector [--listen ADDR] [--port N] [--out DIR] "
            "[--key HEX | --key-file FILE] [--ctl ping,status,badauth,replay] [--chunk-mb N] "
            "[--fsync] [--exit-on-bye] [--progress|--no-progress] [--zstd LEVEL] "
            "[--socket PATH | --no-socket] [--peer ADDR] [--insecure] [--pin-cfg SHA256]\n"
            "       hvtrace-collector --verify DIR          (check a boot directory, trace.hvt included)\n"
            "       hvtrace-collector --rebuild-trace DIR   (write DIR/trace.hvt afresh from the messages)\n");
}

int main(int argc, char **argv)
{
    static struct coll c0;
    struct coll *c = &c0;
    c->listen_addr = "127.0.0.1";
    c->port = HVT_STREAM_DEFAULT_PORT;
    c->out = "trace-out";
    c->chunk_max = 64ull << 20;
    c->cfd = -1;
    c->progress = isatty(2);
    c->zstd_level = COLL_TRACE_LEVEL;
    uint32_t peer_ip = 0;
    bool insecure = false;
    static const struct option opts[] = {
        { "listen", 1, 0, 'l' }, { "port", 1, 0, 'p' }, { "out", 1, 0, 'o' },
        { "key", 1, 0, 'k' }, { "key-file", 1, 0, 'K' }, { "ctl", 1, 0, 'c' },
        { "chunk-mb", 1, 0, 'm' }, { "fsync", 0, 0, 'f' }, { "exit-on-bye", 0, 0, 'b' },
        { "verify", 1, 0, 'V' }, { "progress", 0, 0, 'P' }, { "no-progress", 0, 0, 'N' }, { "help", 0, 0, 'h' },
        { "zstd", 1, 0, 'z' }, { "rebuild-trace", 1, 0, 'R' }, { "socket", 1, 0, 'S' },
        { "no-socket", 0, 0, 'n' }, { "peer", 1, 0, 'A' }, { "insecure", 0, 0, 'I' },
        { "pin-cfg", 1, 0, 'C' }, { 0 } };
    int o;
    while ((o = getopt_long(argc, argv, "l:p:o:k:K:c:m:fbh", opts, NULL)) != -1) {
        switch (o) {
        case 'l': c->listen_addr = optarg; break;
        case 'p': c->port = atoi(optarg); break;
        case 'o': c->out = optarg; break;
        case 'k':
            if (ctl_key_from_hex(&c->key, optarg, strlen(optarg)) < 0) {
                coll_log("hvtrace-collector: --key needs %u..%u bytes in hex\n",
                        HVT_KEY_MIN, HVT_KEY_MAX);
                return 2;
            }
            break;
        case 'K':
            if (read_key_file(c, optarg) < 0) {
                coll_log("hvtrace-collector: cannot read a hex key from %s\n", optarg);
                return 2;
            }
            break;
        case 'c': {
            char *save = NULL, *s = strdup(optarg);
            for (char *t = strtok_r(s, ",", &save); t && c->nctl < COLL_MAX_CTL;
                 t = strtok_r(NULL, ",", &save))
                snprintf(c->ctl_cmds[c->nctl++], sizeof c->ctl_cmds[0], "%s", t);
            free(s);
            break;
        }
        case 'm': c->chunk_max = (uint64_t)atoi(optarg) << 20; break;
        case 'f': c->fsync_each = true; break;
        case 'b': c->exit_on_bye = true; break;
        case 'V': return coll_verify_dir(optarg) == 0 ? 0 : 1;
        case 'R': return coll_rebuild_trace(optarg) == 0 ? 0 : 1;
        case 'z': c->zstd_level = atoi(optarg); break;
        case 'S': c->sock_path = optarg; break;
        case 'n': c->no_sock = true; break;
        case 'A': {
            struct in_addr ia;
            if (inet_pton(AF_INET, optarg, &ia) != 1) {
                coll_log("hvtrace-collector: --peer needs an IPv4 address, not '%s'\n", optarg);
                return 2;
            }
            peer_ip = ia.s_addr;
            break;
        }
        case 'I': insecure = true; break;
        case 'C': {
            size_t n = strlen(optarg);
            if (n != 64 || strspn(optarg, "0123456789abcdefABCDEF") != n) {
                coll_log("hvtrace-collector: --pin-cfg needs the 64 hex digits of sha256sum "
                         "hvtrace.cfg, not '%s'\n", optarg);
                return 2;
            }
            c->pin_cfg = optarg;
            break;
        }
        case 'P': c->progress = true; break;
        case 'N': c->progress = false; break;
        default: usage(); return 2;
        }
    }
    if (c->chunk_max == 0)
        c->chunk_max = 1;
    coll_parse_init(&c->parser, &c->key);
    c->parser.allow_unauth = insecure;
    coll_peer_init(&c->peers);
    if (peer_ip) {
        c->peers.pin_ip = peer_ip;
        c->peers.pin_fixed = true;
    }
    c->rbuf = malloc(COLL_RBUF_SIZE);
    c->ack_every = COLL_ACK_MAX;
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    c->lfd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(c->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)c->port) };
    if (inet_pton(AF_INET, c->listen_addr, &a.sin_addr) != 1 ||
        bind(c->lfd, (struct sockaddr *)&a, sizeof a) < 0 || listen(c->lfd, 4) < 0) {
        coll_log("hvtrace-collector: cannot listen on %s:%d: %s\n", c->listen_addr,
                c->port, strerror(errno));
        return 1;
    }
    char sock_path[4200], err[300];
    snprintf(sock_path, sizeof sock_path, "%s/%s", c->out, COLL_SOCK_NAME);
    if (c->sock_path)
        snprintf(sock_path, sizeof sock_path, "%s", c->sock_path);
    if (mkdir(c->out, 0700) == 0 && chmod(c->out, 0700) < 0) {   /* an existing OUT is left alone */
        coll_log("hvtrace-collector: cannot chmod %s: %s\n", c->out, strerror(errno));
        return 1;
    }
    c->sock.lfd = -1;
    if (!c->no_sock && coll_sock_open(&c->sock, sock_path, err, sizeof err) < 0) {
        /* another collector on this directory would mix two streams' commands: refuse; any
         * other problem only costs `hvt trace`, not the stream */
        coll_log("hvtrace-collector: command socket: %s%s\n", err,
                 strstr(err, "in use") ? "" : " (running without hvt trace control)");
        if (strstr(err, "in use"))
            return 1;
        c->no_sock = true;
    }
    coll_log("hvtrace-collector: listening on %s:%d, writing under %s/, control %s, commands on %s\n",
            c->listen_addr, c->port, c->out, c->key.len ? "keyed" : "without key (replies unchecked)",
            c->no_sock ? "(none)" : sock_path);
    c->start_ns = now_ns();
    while (!g_stop) {
        struct pollfd pf[2 + COLL_PEER_PENDING + 1 + COLL_SOCK_CLIENTS] = {
            { .fd = c->lfd, .events = POLLIN }, { .fd = c->cfd, .events = POLLIN } };
        int np = coll_peer_pollfds(&c->peers, pf + 2);
        int ns = coll_sock_pollfds(&c->sock, pf + 2 + np);
        if (c->cfd < 0)
            pf[1].fd = -1;                       /* poll ignores negative fds */
        int r = poll(pf, (nfds_t)(2 + np + ns), 10);
        if (r < 0 && errno != EINTR)
            break;
        if (r > 0 && (pf[0].revents & POLLIN))
            handle_accept(c);
        if (r > 0 && c->cfd >= 0 && pf[1].fd == c->cfd && (pf[1].revents & (POLLIN | POLLHUP | POLLERR)))
            handle_read(c);
        uint64_t t = now_ns();
        struct coll_live l = live_session(c);
        int adopt_i = coll_peer_service(&c->peers, pf + 2, np, &c->key, &l, t);
        if (adopt_i >= 0)
            adopt_pending(c, adopt_i);
        if (r > 0)
            coll_sock_service(&c->sock, pf + 2 + np, ns, t, coll_cmd_request, c);
        coll_cmd_tick(c, t);
        if (c->unacked_since_ns && t - c->unacked_since_ns >= COLL_ACK_IDLE_NS)
            checkpoint_and_ack(c);
        if (g_status_req) {
            g_status_req = 0;
            send_ctl(c, "status");
        }
        progress(c, false);
        if (c->exit_on_bye && c->bye_seen) {
            checkpoint_and_ack(c);
            /* let the hypervisor see the final ACK before the connection goes */
            usleep(100000);
            break;
        }
    }
    if (c->cfd >= 0)
        close_conn(c, NULL);
    coll_peer_close(&c->peers);
    summary(c);
    close_boot(c);
    coll_sock_close(&c->sock);
    return c->store_failures ? 1 : 0;
}
