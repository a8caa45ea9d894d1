/*
 * fake_hv - a host-side stand-in for the hypervisor's network end, for testing the collector
 * before the hypervisor boots. It runs the hypervisor's own protocol code (net/stream_core.c,
 * net/ctl.c, net/sha256.c) over a TCP socket instead of lwIP: HELLO, resume after reconnects,
 * ring with backpressure, ACKs, control requests (ping/status answered, bad ones refused).
 *
 *   fake_hv [--port N] [--boot-id HEX32] [--key HEX] [--cpus N] [--ring-kb N]
 *           [--console FILE] [--trace-bytes N] [--msg-size N] [--meta TEXT] [--rate-kbps N]
 *           [--loss N] [--timeout S] [--linger-ms N] [--malformed KIND] [--drop-after-ms N]
 *           [--e9 FILE [--wait-start] [--drop-every N] [--corrupt-at N]] [--auth on|off|encrypt]
 * --save-hello FILE: the first connection's HELLO, as sent (for replay tests).
 * --hello-text TEXT: HELLO's key=value lines (\n-separated; default: a build and NIC line).
 * --flip-byte N: byte N of the first connection is sent with one bit changed.
 * --auth: with --key, tag every message and encrypt (encrypt, the default), tag only (on), or
 *   neither (off).
 * Exit 0 once everything (console, trace, META, LOSS, BYE) is enqueued and ACKed by a
 * collector, reconnecting as often as needed; exit 1 on timeout. --malformed sends one bad
 * stream (magic, version, bigmsg, nohello, rewind, badcpu, shorthello, midmsg) and exits 0 if
 * the collector closes the connection.
 * --drop-after-ms N closes the connection once, N ms after the start, and reconnects (the
 * WELCOME that follows must not acknowledge more than the collector stored).
 * --trace-bytes sends filler batches (net's selftest format: 8-byte counters 0, 1, 2 ...).
 * --e9 sends real trace batches: every HVT-CHUNK line of a debug-port log (trace/sink.c's
 * format, e9_lines.h) as the batch the hypervisor's sink would send for it, in order, and its
 * HVT-META line as a META message; host control (HVT_CTL_TRACE_*) runs trace/trace_ctl.c.
 *   --wait-start   hold the chunks until a TRACE_START arrives; on TRACE_STOP send no more of
 *                  them but one STOP marker for each CPU whose window is open (what the
 *                  hypervisor's stop does); BYE only after a stop
 *   --drop-every N leave out every Nth RECORDS chunk and report it in a LOSS (overflow=drop)
 *   --corrupt-at N the Nth RECORDS batch claims one record more than it holds
 * --probes N plays the probe engine for host control (HVT_CTL_PROBE_*): after the first ARM
 * it sends N firing records (HVT_MSG_PROBE, 64 a message, the CPUs in turn, the armed specs'
 * ids round-robin), reports every one in its counters, and sends BYE only after a DISARM;
 * record k of a return probe returns RAX = k, but -EAGAIN (-11) when k % 100 == 99, with
 * arg0..arg5 as the engine fills them (hvt_probe_return_args; the site's offset 0x2a);
 * HVT_CTL_PROBE_COST answered with numbers (fake_probe says which);
 *   --probe-lose K  of the N, K are not sent but counted lost (a failed link)
 * --d N plays the D engine (fake_hv_d.c: the hypervisor's own VM): HVT_CTL_D_* answered,
 * probes armed with HVT_PROBE_F_ACTION fired N times in all, their records and aggregation
 * snapshots sent; BYE only after a DISARM and an END.
 */
#define _GNU_SOURCE
#include "stream_core.h"
#include "trace_ctl.h"
#include "e9_lines.h"
#include "trace_scan.h"
#include "hvt_trace_format.h"
#include "hvt_probe.h"
#include "hvt_hypercall.h"
#include "fake_hv_d.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int g_fd = -1;
static bool g_broken;
static uint64_t g_backpressure;

/* --flip-byte N: byte N of the first connection goes out with one bit changed (a forgery the
 * collector must catch by its tag) */
static long long g_flip_at = -1;
static uint64_t g_conn_bytes;

static size_t sock_room(void *ctx) { return g_fd >= 0 && !g_broken ? (1u << 20) : 0; }
static size_t sock_write(void *ctx, const void *p, size_t n)
{
    static uint8_t flipped[1u << 20];
    if (g_flip_at >= 0 && (uint64_t)g_flip_at >= g_conn_bytes &&
        (uint64_t)g_flip_at < g_conn_bytes + n && n <= sizeof flipped) {
        memcpy(flipped, p, n);
        flipped[g_flip_at - g_conn_bytes] ^= 0x10;
        p = flipped;
    }
    ssize_t w = send(g_fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (w > 0) {
        if (g_flip_at >= 0 && (uint64_t)g_flip_at < g_conn_bytes + (uint64_t)w && p == flipped)
            g_flip_at = -2;                      /* sent: once only */
        g_conn_bytes += (uint64_t)w;
    }
    if (w < 0) {
        if (errno != EAGAIN && errno != EINTR)
            g_broken = true;
        return 0;
    }
    return (size_t)w;
}

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int ctl_status(void *ctx, uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out,
                      uint32_t *out_len)
{
    struct stream_core *sc = ctx;
    if (cmd >= HVT_CTL_TRACE_FIRST)
        return trace_ctl_handle(cmd, args, len, out, out_len);
    if (cmd != HVT_CTL_STATUS)
        return HVT_CTL_ENOSYS;
    struct hvt_ctl_status s;
    stream_core_status(sc, &s);
    s.backpressure_waits = g_backpressure;
    memcpy(out, &s, sizeof s);
    *out_len = sizeof s;
    return HVT_CTL_OK;
}

/* ---- malformed streams ---- */
static size_t put_msg(uint8_t *b, uint16_t type, uint32_t len, uint16_t cpu, uint64_t seq,
                      uint64_t off, uint8_t version)
{
    struct hvt_msg_hdr h = { .magic = HVT_STREAM_MAGIC, .version = version,
                             .hdr_len = sizeof h, .type = type, .len = len, .cpu = cpu,
                             .seq = seq, .off = off };
    memcpy(b, &h, sizeof h);
    memset(b + sizeof h, 'x', len < 4096 ? len : 0);
    return sizeof h + (len < 4096 ? len : 0);
}

static size_t put_hello(uint8_t *b, const uint8_t *boot)
{
    struct hvt_hello he = { .hv_version = 1, .cpu_count = 2, .ring_size = 1 << 16 };
    memcpy(he.boot_id, boot, HVT_BOOT_ID_LEN);
    size_t n = put_msg(b, HVT_MSG_HELLO, sizeof he, HVT_CPU_NONE, 0, 0, HVT_STREAM_VERSION);
    memcpy(b + sizeof(struct hvt_msg_hdr), &he, sizeof he);
    return n;
}

static int send_malformed(int port, const char *kind, const uint8_t *boot)
{
    int fd = connect_to(port);
    if (fd < 0) {
        fprintf(stderr, "fake_hv: cannot connect\n");
        return 1;
    }
    uint8_t b[16384];
    size_t n = 0;
    const uint8_t V = HVT_STREAM_VERSION;
    if (!strcmp(kind, "magic")) {
        n = (size_t)snprintf((char *)b, sizeof b, "GET / HTTP/1.0\r\nHost: x\r\n\r\n0123456789abcdef");
    } else if (!strcmp(kind, "version")) {
        n = put_msg(b, HVT_MSG_HELLO, 72, HVT_CPU_NONE, 0, 0, 9);
    } else if (!strcmp(kind, "bigmsg")) {
        n = put_hello(b, boot);
        n += put_msg(b + n, HVT_MSG_TRACE, 0x80000000u, 0, 0, 0, V);
    } else if (!strcmp(kind, "nohello")) {
        n = put_msg(b, HVT_MSG_CONSOLE, 5, 0, 0, 0, V);
    } else if (!strcmp(kind, "rewind")) {
        n = put_hello(b, boot);
        n += put_msg(b + n, HVT_MSG_CONSOLE, 5, 0, 0, 0, V);
        n += put_msg(b + n, HVT_MSG_CONSOLE, 5, 0, 1, 0, V);
    } else if (!strcmp(kind, "badcpu")) {
        n = put_hello(b, boot);
        n += put_msg(b + n, HVT_MSG_CONSOLE, 5, 7, 0, 0, V);
    } else if (!strcmp(kind, "shorthello")) {
        n = put_msg(b, HVT_MSG_HELLO, 10, HVT_CPU_NONE, 0, 0, V);
    } else if (!strcmp(kind, "midmsg")) {
        /* a valid start, then garbage where the next header should be */
        n = put_hello(b, boot);
        n += put_msg(b + n, HVT_MSG_CONSOLE, 3, 0, 0, 0, V);
        memset(b + n, 0xee, 40);
        n += 40;
    } else {
        fprintf(stderr, "fake_hv: unknown --malformed kind %s\n", kind);
        return 2;
    }
    send(fd, b, n, MSG_NOSIGNAL);
    /* The collector must close on us; drain whatever it sends (WELCOME) until it does. */
    uint64_t end = now_ns() + 5000000000ull;
    while (now_ns() < end) {
        struct pollfd pf = { .fd = fd, .events = POLLIN };
        if (poll(&pf, 1, 100) > 0) {
            ssize_t r = recv(fd, b, sizeof b, 0);
            if (r <= 0) {
                printf("fake_hv: collector closed the %s stream\n", kind);
                close(fd);
                return 0;
            }
        }
    }
    fprintf(stderr, "fake_hv: collector kept the %s stream open\n", kind);
    close(fd);
    return 1;
}

/* ---- the normal run ---- */
/* One HVT-CHUNK line of --e9, as the sink's batch (struct hvt_trace_batch + ext + payload). */
struct e9_batch { uint8_t *msg; size_t len; uint16_t cpu; bool records; };
#define FAKE_MAX_CPUS 64

struct producer {
    uint8_t *console;
    size_t console_len, console_pos;
    uint64_t trace_left, msg_size, nmsgs, filler_next;
    unsigned cpus, next_cpu;
    uint32_t rng;
    bool meta_sent, loss_sent, bye_sent;
    const char *meta;
    uint64_t loss;
    /* --e9 */
    struct e9_batch *batches;
    size_t nbatches, next_batch;
    char e9_meta[256];                  /* "lstar=...\ncpus=...\n", sent after meta */
    bool e9_meta_sent, wait_start, started, stop_req, stop_sent;
    uint64_t drop_every, corrupt_at, records_seen, dropped, dropped_bytes;
    uint64_t sent_records, sent_insns, sent_chunks;
    bool window[FAKE_MAX_CPUS];
    uint64_t last_tsc[FAKE_MAX_CPUS];
    /* --probes */
    bool probe_mode, probe_armed, probe_disarmed, d_mode;
    uint32_t probe_ids[4096], probe_kinds[4096];   /* armed: the ids and their specs' kinds */
    unsigned nprobe_ids;
    uint64_t probe_left, probe_lose, probe_made, probe_lost;
    bool cost_on;                        /* HVT_CTL_PROBE_COST */
};
static struct producer *g_prod;         /* for the trace control ops */

static uint32_t rnd(struct producer *p) { p->rng = p->rng * 1103515245u + 12345u; return p->rng >> 8; }

/* The next --e9 chunk as its batch; --drop-every and --corrupt-at apply to RECORDS chunks. */
static int send_e9(struct stream_core *sc, struct producer *p)
{
    struct e9_batch *b = &p->batches[p->next_batch];
    if (b->records) {
        if (p->records_seen + 1 == p->corrupt_at) {
            struct hvt_trace_batch tb;
            memcpy(&tb, b->msg, sizeof tb);
            tb.nrecords++;
            memcpy(b->msg, &tb, sizeof tb);
        }
        if (p->drop_every && (p->records_seen + 1) % p->drop_every == 0) {
            /* overflow=drop: not enqueued, reported at once in a LOSS */
            struct hvt_loss l = { .reason = HVT_LOSS_DROPPED, .msg_type = HVT_MSG_TRACE,
                                  .messages = 1, .bytes = b->len };
            int r = stream_core_append(sc, b->cpu, HVT_MSG_LOSS, &l, sizeof l);
            if (r == 0) {
                p->records_seen++;
                p->dropped++;
                p->dropped_bytes += b->len;
            }
            return r;
        }
    }
    int r = stream_core_append(sc, b->cpu, HVT_MSG_TRACE, b->msg, b->len);
    if (r != 0 || !b->records)
        return r;
    p->records_seen++;
    struct hvt_trace_batch tb;
    hvt_trace_batch_ext x;
    memcpy(&tb, b->msg, sizeof tb);
    memcpy(&x, b->msg + sizeof tb, sizeof x);
    const uint8_t *raw = b->msg + sizeof tb + sizeof x;
    ts_summary s;
    char err[100];
    if (ts_scan_records(raw, b->len - sizeof tb - sizeof x, &s, err, sizeof err) == 0 && s.last_window)
        p->window[b->cpu] = s.last_window > 0;
    p->last_tsc[b->cpu] = x.last_tsc;
    p->sent_records += s.records;
    p->sent_insns += x.ninsns;
    p->sent_chunks++;
    return 0;
}

/* TRACE_STOP: a STOP marker for every CPU with an open window, each in its own chunk. */
static int send_stops(struct stream_core *sc, struct producer *p)
{
    for (unsigned c = 0; c < FAKE_MAX_CPUS; c++) {
        if (!p->window[c])
            continue;
        uint8_t msg[sizeof(struct hvt_trace_batch) + sizeof(hvt_trace_batch_ext) + 2];
        struct hvt_trace_batch tb = { .format = HVT_BATCH_RECORDS, .nrecords = 1, .first_tsc = p->last_tsc[c] };
        hvt_trace_batch_ext x = { .ninsns = 0, .last_tsc = p->last_tsc[c] };
        memcpy(msg, &tb, sizeof tb);
        memcpy(msg + sizeof tb, &x, sizeof x);
        msg[sizeof tb + sizeof x] = HVT_TAG_MARKER | HVT_MARK_STOP;
        msg[sizeof tb + sizeof x + 1] = HVT_REASON_USER;
        int r = stream_core_append(sc, (uint16_t)c, HVT_MSG_TRACE, msg, sizeof msg);
        if (r != 0)
            return r;
        p->window[c] = false;
        p->sent_records++;
        p->sent_chunks++;
    }
    return 0;
}

/* Read --e9: every HVT-CHUNK line becomes a batch exactly as trace/sink.c builds it. */
static int load_e9(struct producer *p, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); return -1; }
    char *line = NULL, err[160];
    size_t lcap = 0, cap = 0, lineno = 0, bcap = 0;
    uint8_t *pay = NULL;
    for (;;) {
        e9_line c;
        int k = e9_next(f, &line, &lcap, &lineno, &c, &pay, &cap, err, sizeof err);
        if (k == E9_EOF)
            break;
        if (k == E9_BAD) {
            fprintf(stderr, "fake_hv: %s: line %zu: %s\n", path, lineno, err);
            return -1;
        }
        if (k == E9_META) {                 /* "lstar=X cpus=N" -> META lines, as the sink sends */
            snprintf(p->e9_meta, sizeof p->e9_meta, "%s", c.meta);
            for (char *q = p->e9_meta; *q; q++)
                if (*q == ' ') *q = '\n';
            size_t l = strlen(p->e9_meta);
            while (l && (p->e9_meta[l - 1] == '\n' || p->e9_meta[l - 1] == '\r')) p->e9_meta[--l] = 0;
            if (l + 1 < sizeof p->e9_meta) strcat(p->e9_meta, "\n");
        }
        if (k != E9_CHUNK)
            continue;
        if (c.cpu >= FAKE_MAX_CPUS || c.cpu >= p->cpus) {
            fprintf(stderr, "fake_hv: %s: line %zu: cpu %u but --cpus %u\n", path, lineno, c.cpu, p->cpus);
            return -1;
        }
        if (p->nbatches == bcap) {
            bcap = bcap ? 2 * bcap : 256;
            p->batches = realloc(p->batches, bcap * sizeof *p->batches);
        }
        struct hvt_trace_batch tb = { .format = c.kind == HVT_CHUNK_CODE ? HVT_BATCH_CODE : HVT_BATCH_RECORDS,
                                      .nrecords = c.nrecords, .first_tsc = c.first_tsc };
        hvt_trace_batch_ext x = { c.ninsns, c.first_code_id, c.last_tsc };
        struct e9_batch *b = &p->batches[p->nbatches++];
        b->len = sizeof tb + sizeof x + c.len;
        b->msg = malloc(b->len);
        memcpy(b->msg, &tb, sizeof tb);
        memcpy(b->msg + sizeof tb, &x, sizeof x);
        memcpy(b->msg + sizeof tb + sizeof x, pay, c.len);
        b->cpu = (uint16_t)c.cpu;       /* CODE: the sink sends it from the CPU that flushed it */
        b->records = c.kind == HVT_CHUNK_RECORDS;
    }
    free(line);
    free(pay);
    fclose(f);
    return 0;
}

static void fake_request(bool on)
{
    if (on)
        g_prod->started = true;
    else if (g_prod->started)
        g_prod->stop_req = true;
}

static void fake_counters(struct hvt_trace_status *st)
{
    st->chunks_sent = g_prod->sent_chunks;
}

static int fake_probe(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out, uint32_t *out_len)
{
    struct producer *p = g_prod;
    struct hvt_probe_status st = { 0 };
    if (!p->probe_mode)
        return HVT_CTL_ENOSYS;
    if (cmd == HVT_CTL_PROBE_ARM) {
        if (!len || len % sizeof(struct hvt_probe_spec) ||
            len / sizeof(struct hvt_probe_spec) > HVT_CTL_PROBE_SPECS)
            return HVT_CTL_EINVAL;
        st.records = p->probe_made;                 /* before this arming, as the engine does */
        st.records_lost = p->probe_lost;
        for (uint32_t i = 0; i < len / sizeof(struct hvt_probe_spec); i++) {
            struct hvt_probe_spec sp;
            memcpy(&sp, args + i * sizeof sp, sizeof sp);
            if (sp.kind & HVT_PROBE_F_ACTION) {  /* a D program's probe */
                if (!p->d_mode || !fake_d_arm(sp.id, sp.kind)) {
                    st.error = p->d_mode ? HVT_PROBE_ENOMEM : HVT_PROBE_EINVAL;
                    break;
                }
                st.specs_taken++;
                st.sites_armed++;
                continue;
            }
            if (p->nprobe_ids == sizeof p->probe_ids / sizeof p->probe_ids[0]) {
                st.error = HVT_PROBE_ENOMEM;
                break;
            }
            p->probe_kinds[p->nprobe_ids] = sp.kind;
            p->probe_ids[p->nprobe_ids++] = sp.id;
            st.specs_taken++;
            st.sites_armed++;
        }
        p->probe_armed = true;
        st.armed = p->nprobe_ids;
        memcpy(out, &st, sizeof st);
        *out_len = sizeof st;
        return HVT_CTL_OK;
    }
    if (cmd == HVT_CTL_PROBE_COST) {
        /* the engine's accounting made of numbers: every firing timed (the fake's firings may
         * all be sent before the request arrives), 300 ticks of exit and 100 of lookup each,
         * record k in a new task when k % 4 == 0, and of another probe than the last whenever
         * two or more ids take turns */
        if (len != 1 || args[0] > HVT_PROBE_COST_GET)
            return HVT_CTL_EINVAL;
        if (args[0] != HVT_PROBE_COST_GET)
            p->cost_on = args[0] == HVT_PROBE_COST_ON;
        struct hvt_probe_cost_head h = { .on = p->cost_on, .total = p->nprobe_ids };
        for (unsigned i = 0; i < p->nprobe_ids && (h.n + 1) * sizeof(struct hvt_probe_cost) + sizeof h <= HVT_CTL_MAX_DATA;
             i++, h.n++) {
            struct hvt_probe_cost e = { .id = p->probe_ids[i], .sites = 1 };
            for (uint64_t k = i; k < p->probe_made; k += p->nprobe_ids) {
                e.fires++;
                e.newtask += k % 4 == 0;
                e.switched += p->nprobe_ids > 1;
            }
            e.ticks[HVT_PH_EXIT] = 300 * e.fires;
            e.ticks[HVT_PH_LOOKUP] = 100 * e.fires;
            memcpy(out + sizeof h + h.n * sizeof e, &e, sizeof e);
        }
        memcpy(out, &h, sizeof h);
        *out_len = (uint32_t)(sizeof h + h.n * sizeof(struct hvt_probe_cost));
        return HVT_CTL_OK;
    }
    if (cmd == HVT_CTL_PROBE_DISARM) {
        p->probe_disarmed = true;
        p->probe_left = 0;
        p->nprobe_ids = 0;
        fake_d_disarm();
    } else if (cmd != HVT_CTL_PROBE_STATUS) {
        return HVT_CTL_ENOSYS;
    }
    st.armed = p->nprobe_ids;
    st.records = st.fires = p->probe_made;
    st.records_lost = p->probe_lost;
    memcpy(out, &st, sizeof st);
    *out_len = sizeof st;
    return HVT_CTL_OK;
}

/* One HVT_MSG_PROBE message of up to 64 records (or records counted lost). */
static int send_probes(struct stream_core *sc, struct producer *p)
{
    struct hvt_probe_fire f[64];
    unsigned n = p->probe_left < 64 ? (unsigned)p->probe_left : 64, cpu = p->next_cpu;
    for (unsigned i = 0; i < n; i++) {
        uint64_t k = p->probe_made + i;
        uint32_t kind = p->probe_kinds[k % p->nprobe_ids];
        f[i] = (struct hvt_probe_fire){ .id = p->probe_ids[k % p->nprobe_ids], .cpu = (uint16_t)cpu,
                                        .kind = (uint16_t)(kind & HVT_PROBE_KIND_MASK), .tsc = 1000 + k,
                                        .pc = 0xffffffff81000000ull, .pid = 100 + cpu, .tid = 100 + cpu };
        if (f[i].kind == HVT_PROBE_KIND_RETURN)
            hvt_probe_return_args(!!(kind & HVT_PROBE_F_SYSARGS), 0x2a,
                                  k % 100 == 99 ? (uint64_t)-11 : k, f[i].arg);
        memcpy(f[i].comm, "fake-workload", 14);
    }
    int r = 0;
    if (p->probe_lose >= n) {
        p->probe_lose -= n;
        p->probe_lost += n;
    } else {
        r = stream_core_append(sc, cpu, HVT_MSG_PROBE, f, n * sizeof f[0]);
    }
    if (r == 0) {
        p->probe_made += n;
        p->probe_left -= n;
        p->next_cpu = (p->next_cpu + 1) % p->cpus;
    }
    return r;
}

/* Enqueue the next message; false when the ring is full (backpressure) or nothing is left. */
static bool produce_one(struct stream_core *sc, struct producer *p, uint8_t *buf)
{
    int r;
    if (!p->meta_sent) {
        r = stream_core_append(sc, 0, HVT_MSG_META, p->meta, strlen(p->meta));
        if (r == 0) p->meta_sent = true;
    } else if (p->console_pos < p->console_len &&
               (p->trace_left == 0 || rnd(p) % 4 == 0)) {
        size_t n = 1 + rnd(p) % 200;
        if (n > p->console_len - p->console_pos)
            n = p->console_len - p->console_pos;
        r = stream_core_append(sc, 0, HVT_MSG_CONSOLE, p->console + p->console_pos, n);
        if (r == 0) p->console_pos += n;
    } else if (p->e9_meta[0] && !p->e9_meta_sent) {
        r = stream_core_append(sc, 0, HVT_MSG_META, p->e9_meta, strlen(p->e9_meta));
        if (r == 0) p->e9_meta_sent = true;
    } else if (p->stop_req && !p->stop_sent) {
        r = send_stops(sc, p);
        if (r == 0) p->stop_sent = true;
    } else if (p->next_batch < p->nbatches && (!p->wait_start || (p->started && !p->stop_req))) {
        r = send_e9(sc, p);
        if (r == 0) p->next_batch++;
    } else if (p->trace_left > 0) {
        /* filler, as net's selftest sends it: 8-byte counters continuing across batches */
        uint64_t n = p->msg_size < p->trace_left ? p->msg_size : p->trace_left;
        if (n < sizeof(struct hvt_trace_batch))
            n = sizeof(struct hvt_trace_batch);
        uint32_t nrec = (uint32_t)((n - sizeof(struct hvt_trace_batch)) / 8);
        struct hvt_trace_batch tb = { .format = HVT_TRACE_FORMAT_FILLER, .nrecords = nrec };
        memcpy(buf, &tb, sizeof tb);
        for (uint32_t i = 0; i < nrec; i++) {
            uint64_t v = p->filler_next + i;
            memcpy(buf + sizeof tb + 8 * (size_t)i, &v, 8);
        }
        unsigned cpu = p->next_cpu;
        r = stream_core_append(sc, cpu, HVT_MSG_TRACE, buf, n);
        if (r == 0) {
            p->trace_left -= n < p->trace_left ? n : p->trace_left;
            p->next_cpu = (p->next_cpu + 1) % p->cpus;
            p->filler_next += nrec;
        }
    } else if (p->probe_armed && p->probe_left > 0 && p->nprobe_ids) {
        r = send_probes(sc, p);
    } else if (p->d_mode && fake_d_produce(sc)) {
        r = 0;
    } else if (p->probe_mode && !p->probe_disarmed && !(p->d_mode && !p->probe_armed && fake_d_done())) {
        return false;                   /* nothing more until the host disarms (a D program
                                           that ended in BEGIN, before arming, has nothing to) */
    } else if (p->d_mode && !fake_d_done()) {
        return false;                   /* END's records and snapshot, then the unload */
    } else if (p->wait_start && !p->stop_sent) {
        return false;                   /* nothing more until the host stops the trace */
    } else if (!p->loss_sent) {
        if (p->loss) {
            struct hvt_loss l = { .reason = HVT_LOSS_OVERWRITE, .msg_type = HVT_MSG_TRACE,
                                  .messages = p->loss, .bytes = p->loss * 16 };
            r = stream_core_append(sc, p->cpus - 1, HVT_MSG_LOSS, &l, sizeof l);
        } else {
            r = 0;
        }
        if (r == 0) p->loss_sent = true;
    } else if (!p->bye_sent) {
        r = stream_core_append(sc, 0, HVT_MSG_BYE, NULL, 0);
        if (r == 0) p->bye_sent = true;
    } else {
        return false;
    }
    if (r == STREAM_EAGAIN) {
        g_backpressure++;
        return false;
    }
    if (r != 0) {
        fprintf(stderr, "fake_hv: append failed %d\n", r);
        exit(1);
    }
    p->nmsgs++;
    return true;
}

static int hexval(char c) { return c <= '9' ? c - '0' : (c | 32) - 'a' + 10; }

int main(int argc, char **argv)
{
    int port = HVT_STREAM_DEFAULT_PORT, cpus = 2, timeout_s = 60, linger_ms = 0, drop_after_ms = 0;
    uint64_t ring_kb = 256, rate_kbps = 0;
    uint8_t boot[HVT_BOOT_ID_LEN];
    struct ctl_key key = { .len = 0 };
    const char *malformed = NULL, *console_file = NULL, *e9_file = NULL;
    struct producer p = { .msg_size = 4096, .meta = "guest_kernel=fake-linux 6.1.0-test\n",
                          .rng = 12345 };
    FILE *ur = fopen("/dev/urandom", "rb");
    if (!ur || fread(boot, 1, sizeof boot, ur) != sizeof boot)
        return 1;
    fclose(ur);
    uint64_t d_fires = 0;
    const char *save_hello = NULL;
    const char *hello_text = "hv_build=fake_hv\nnic=host-socket\n";
    int auth_mode = 2;                   /* the hypervisor's default with a key: encrypted */
    static const struct option opts[] = {
        { "port", 1, 0, 'p' }, { "boot-id", 1, 0, 'b' }, { "key", 1, 0, 'k' },
        { "cpus", 1, 0, 'c' }, { "ring-kb", 1, 0, 'r' }, { "console", 1, 0, 'C' },
        { "trace-bytes", 1, 0, 't' }, { "msg-size", 1, 0, 's' }, { "meta", 1, 0, 'm' },
        { "rate-kbps", 1, 0, 'R' }, { "loss", 1, 0, 'L' }, { "timeout", 1, 0, 'T' },
        { "linger-ms", 1, 0, 'G' }, { "malformed", 1, 0, 'M' }, { "e9", 1, 0, 'E' },
        { "wait-start", 0, 0, 'W' }, { "drop-every", 1, 0, 'D' }, { "corrupt-at", 1, 0, 'X' },
        { "probes", 1, 0, 'P' }, { "probe-lose", 1, 0, 'Q' }, { "d", 1, 0, 'd' },
        { "drop-after-ms", 1, 0, 'Y' }, { "auth", 1, 0, 'A' }, { "flip-byte", 1, 0, 'F' }, { "save-hello", 1, 0, 'H' },
        { "hello-text", 1, 0, 'h' }, { 0 } };
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'p': port = atoi(optarg); break;
        case 'b':
            if (strlen(optarg) != 2 * HVT_BOOT_ID_LEN) { fprintf(stderr, "bad --boot-id\n"); return 2; }
            for (unsigned i = 0; i < HVT_BOOT_ID_LEN; i++)
                boot[i] = (uint8_t)(hexval(optarg[2 * i]) << 4 | hexval(optarg[2 * i + 1]));
            break;
        case 'k':
            if (ctl_key_from_hex(&key, optarg, strlen(optarg)) < 0) { fprintf(stderr, "bad --key\n"); return 2; }
            break;
        case 'c': cpus = atoi(optarg); break;
        case 'r': ring_kb = strtoull(optarg, NULL, 0); break;
        case 'C': console_file = optarg; break;
        case 't': p.trace_left = strtoull(optarg, NULL, 0); break;
        case 's': p.msg_size = strtoull(optarg, NULL, 0); break;
        case 'm': p.meta = optarg; break;
        case 'R': rate_kbps = strtoull(optarg, NULL, 0); break;
        case 'L': p.loss = strtoull(optarg, NULL, 0); break;
        case 'T': timeout_s = atoi(optarg); break;
        case 'G': linger_ms = atoi(optarg); break;
        case 'Y': drop_after_ms = atoi(optarg); break;
        case 'F': g_flip_at = atoll(optarg); break;
        case 'H': save_hello = optarg; break;
        case 'h': hello_text = optarg; break;
        case 'A':
            if (!strcmp(optarg, "off")) auth_mode = 0;
            else if (!strcmp(optarg, "on")) auth_mode = 1;
            else if (!strcmp(optarg, "encrypt")) auth_mode = 2;
            else { fprintf(stderr, "--auth on|off|encrypt\n"); return 2; }
            break;
        case 'M': malformed = optarg; break;
        case 'E': e9_file = optarg; break;
        case 'W': p.wait_start = true; break;
        case 'D': p.drop_every = strtoull(optarg, NULL, 0); break;
        case 'X': p.corrupt_at = strtoull(optarg, NULL, 0); break;
        case 'P': p.probe_mode = true; p.probe_left = strtoull(optarg, NULL, 0); break;
        case 'Q': p.probe_lose = strtoull(optarg, NULL, 0); break;
        case 'd': p.probe_mode = p.d_mode = true; d_fires = strtoull(optarg, NULL, 0); break;
        default: return 2;
        }
    }
    if (malformed)
        return send_malformed(port, malformed, boot);
    if (console_file) {
        FILE *f = fopen(console_file, "rb");
        if (!f) { perror(console_file); return 2; }
        fseek(f, 0, SEEK_END);
        p.console_len = (size_t)ftell(f);
        fseek(f, 0, SEEK_SET);
        p.console = malloc(p.console_len + 1);
        if (fread(p.console, 1, p.console_len, f) != p.console_len) return 2;
        fclose(f);
    }
    p.cpus = (unsigned)cpus;
    if (p.d_mode)
        fake_d_setup(d_fires, (unsigned)cpus);
    g_prod = &p;
    static const struct trace_ctl_ops ops = { .request = fake_request, .counters = fake_counters,
                                              .probe = fake_probe, .d = fake_d_ctl };
    trace_ctl_set_ops(&ops);
    if (e9_file && load_e9(&p, e9_file) < 0)
        return 2;
    static struct stream_core sc;
    uint64_t ring_size = ring_kb << 10;
    void *ring = malloc(ring_size);
    if (stream_core_init(&sc, ring, ring_size, (uint16_t)cpus, boot, &key, 0x000100, 0) != 0 ||
        stream_core_set_auth(&sc, auth_mode >= 1 && key.len, auth_mode == 2) != 0) {
        fprintf(stderr, "fake_hv: bad ring size or cpu count\n");
        return 2;
    }
    stream_core_set_hello_text(&sc, hello_text, strlen(hello_text));
    stream_core_set_ctl(&sc, ctl_status, &sc);
    if (p.d_mode)
        fake_d_stream(&sc);
    struct stream_transport t = { .room = sock_room, .write = sock_write };
    uint8_t *buf = calloc(1, p.msg_size + sizeof(struct hvt_trace_batch));
    uint8_t rbuf[65536];
    uint64_t start = now_ns(), deadline = start + (uint64_t)timeout_s * 1000000000ull;
    uint64_t produced_bytes = 0, last_connect_try = 0;
    bool done = false;
    while (!done) {
        uint64_t t_now = now_ns();
        if (t_now > deadline) {
            /* acked: the highest offset a collector acknowledged (ACK or WELCOME): the ring
             * freed everything below it, kept everything from it to head */
            fprintf(stderr, "fake_hv: timeout: head=%llu tail=%llu acked=%llu connections=%llu\n",
                    (unsigned long long)sc.head, (unsigned long long)sc.tail,
                    (unsigned long long)sc.tail, (unsigned long long)sc.cnt.connections);
            return 1;
        }
        if (g_fd < 0 && t_now - last_connect_try > 20000000ull) {
            last_connect_try = t_now;
            g_fd = connect_to(port);
            if (g_fd >= 0) {
                g_broken = false;
                stream_core_connected(&sc);
                g_conn_bytes = 0;
                if (save_hello) {                /* what a listener on the LAN could record */
                    FILE *hf = fopen(save_hello, "wb");
                    if (hf) {
                        fwrite(sc.hello_buf, 1, sc.hello_len, hf);
                        fclose(hf);
                    }
                    save_hello = NULL;
                }
            }
        }
        /* produce under an optional rate limit; a full ring stops us (backpressure) */
        bool more = true;
        for (int i = 0; i < 65536; i++) {
            if (rate_kbps && produced_bytes * 1000000ull / 1024 >
                             rate_kbps * ((t_now - start) / 1000ull))
                break;
            uint64_t before = sc.head;
            if (!produce_one(&sc, &p, buf)) {
                more = false;
                break;
            }
            produced_bytes += sc.head - before;
        }
        if (g_fd >= 0)
            stream_core_tx(&sc, &t);
        struct pollfd pf = { .fd = g_fd, .events = POLLIN };
        if (g_fd >= 0 && sc.state == STREAM_UP && sc.send < sc.head)
            pf.events |= POLLOUT;
        /* don't sleep while there is more to produce and room for it */
        if (g_fd >= 0 && poll(&pf, 1, more ? 0 : 2) > 0 && (pf.revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t r = recv(g_fd, rbuf, sizeof rbuf, MSG_DONTWAIT);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
                g_broken = true;
            else if (r > 0 && stream_core_rx(&sc, rbuf, (size_t)r) < 0) {
                fprintf(stderr, "fake_hv: protocol error from collector, reconnecting\n");
                g_broken = true;
            }
        } else if (g_fd < 0) {
            usleep(2000);
        }
        if (drop_after_ms && g_fd >= 0 && t_now - start > (uint64_t)drop_after_ms * 1000000ull) {
            drop_after_ms = 0;           /* once: the link drops, the hypervisor reconnects */
            g_broken = true;
        }
        if (g_fd >= 0 && g_broken) {
            close(g_fd);
            g_fd = -1;
            /* what that collector acknowledged: freed here, so it must be stored there */
            fprintf(stderr, "fake_hv: disconnected: acked=%llu head=%llu\n",
                    (unsigned long long)sc.tail, (unsigned long long)sc.head);
            stream_core_disconnected(&sc);
        }
        done = p.bye_sent && stream_core_all_acked(&sc);
    }
    if (linger_ms)
        usleep((useconds_t)linger_ms * 1000);
    if (p.probe_mode)
        printf("fake_hv: probes armed=%d disarmed=%d records_made=%llu records_lost=%llu\n",
               p.probe_armed, p.probe_disarmed, (unsigned long long)p.probe_made,
               (unsigned long long)p.probe_lost);
    if (e9_file)
        printf("fake_hv: e9 chunks=%zu sent_chunks=%llu sent_records=%llu sent_insns=%llu "
               "dropped=%llu dropped_bytes=%llu started=%d stopped=%d\n", p.nbatches,
               (unsigned long long)p.sent_chunks, (unsigned long long)p.sent_records,
               (unsigned long long)p.sent_insns, (unsigned long long)p.dropped,
               (unsigned long long)p.dropped_bytes, p.started, p.stop_sent);
    printf("fake_hv: done messages=%llu bytes=%llu console=%zu connections=%llu "
           "ctl_accepted=%llu ctl_bad_auth=%llu ctl_replayed=%llu ctl_malformed=%llu "
           "backpressure_waits=%llu resume_skipped=%llu seconds=%.3f acked=%llu bad_tags=%llu\n",
           (unsigned long long)p.nmsgs, (unsigned long long)sc.head, p.console_len,
           (unsigned long long)sc.cnt.connections, (unsigned long long)sc.cnt.ctl_accepted,
           (unsigned long long)sc.cnt.ctl_bad_auth, (unsigned long long)sc.cnt.ctl_replayed,
           (unsigned long long)sc.cnt.ctl_malformed, (unsigned long long)g_backpressure,
           (unsigned long long)sc.cnt.resume_skipped_bytes, (now_ns() - start) / 1e9,
           (unsigned long long)sc.tail, (unsigned long long)sc.cnt.bad_tags);
    if (g_fd >= 0)
        close(g_fd);
    return 0;
}
