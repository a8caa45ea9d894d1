/*
 * coll.h - the collector's state, shared by its main loop (coll_main.c), its command socket
 * handler (coll_cmd.c) and its output side (coll_link.h). Not an API: the collector's own
 * modules only. Dependencies go one way: coll_main -> coll_cmd -> coll_link.
 *
 * Invariant: acked <= stored. Every offset the collector sends the hypervisor - an ACK's
 * persisted_off and a WELCOME's resume_off, both of which let it free its ring below them - is
 * store.durable.next_off, the offset of the last checkpoint coll_store_checkpoint() wrote
 * whole: every sequenced message below it is in the chunk files, console.log/control.log and
 * trace.hvt are written up to it, state.bin/header.txt/index.tsv describe it, and every one of
 * those writes returned success (--fsync: and was fsync'd). The hypervisor keeps everything
 * above it, so a byte is never both freed there and missing here.
 * Failures are sticky (store_stopped): after the first failed write/fsync/close/rename of the
 * boot's files the collector stores nothing more for that boot and sends no ACK; it says so on
 * stderr (the file, the errno's text and name) and in the command socket's status answer
 * (store_failed=ENOSPC), keeps the connection open and goes on parsing (control replies still
 * answer hvt), so the hypervisor holds the rest as for a dead link. On a reconnect of the same
 * boot the parser restarts at the stored checkpoint, so the WELCOME frees nothing more. A
 * collector restarted once the disk is fixed resumes at that checkpoint without a gap.
 */
#ifndef HVT_COLL_H
#define HVT_COLL_H
#include "coll_parse.h"
#include "coll_sock.h"
#include "coll_peer.h"
#include "coll_store.h"
#include "coll_trace.h"
#include "ctl.h"
#include "hvt_hypercall.h"
#include "hvt_probe.h"

#define COLL_RBUF_SIZE   (8u << 20)
#define COLL_CONSOLE_BUF (64u << 10)
#define COLL_ACK_MAX     (1u << 20)     /* ACK at least every MiB ... */
#define COLL_ACK_IDLE_NS 20000000ull    /* ... and 20 ms after the last unacknowledged byte */
#define COLL_MAX_CTL     16
#define COLL_TRACE_LOG_FIRST 20         /* trace warnings logged in full, then every ... */
#define COLL_TRACE_LOG_EVERY 1000

/* An "probe arm FILE" request in progress: its specs go to the hypervisor HVT_CTL_PROBE_SPECS
 * at a time, each request sent when the previous one's reply arrived (one arming at a time). */
struct coll_probe_arm {
    int client;                        /* -1: none */
    struct hvt_probe_spec *specs;
    uint32_t n, sent, batch;           /* specs; sent so far; in the request in flight */
    uint32_t taken, sites;
    bool replied;                      /* the first reply came: the fields below are set */
    uint64_t off;                      /* stream offset of the first reply */
    uint64_t records0, lost0;          /* the engine's record counters before arming */
};

/* A "d load FILE" request in progress: the image goes to the hypervisor HVT_D_LOAD_CHUNK
 * bytes at a time, each part sent when the previous one's reply arrived. */
struct coll_d_load {
    int client;
    uint8_t *img;                      /* NULL: none in progress */
    uint32_t total, sent, part;        /* bytes; sent and acknowledged; in the part in flight */
};

struct coll {
    const char *listen_addr, *out;
    int port;
    struct ctl_key key;
    char ctl_cmds[COLL_MAX_CTL][16];
    int  nctl;
    uint64_t chunk_max;
    bool fsync_each, exit_on_bye, progress;
    int lfd, cfd;
    char peer[64];
    const char *pin_cfg;               /* --pin-cfg HEX: the only hvtrace.cfg hash accepted */
    uint32_t cfd_ip;                   /* the connection's address (network order) */
    struct coll_peers peers;           /* pinning; connections waiting for their HELLO */
    uint8_t *rbuf;
    size_t rlen;
    struct coll_parser parser;
    struct coll_store store;
    bool store_open;
    bool store_stopped;                /* this boot's store failed: store and ACK nothing more */
    uint64_t store_failures;           /* boots whose store failed (exit status 1) */
    struct coll_trace trace;           /* OUT/<boot>/trace.hvt, open with the store */
    int zstd_level;
    /* run of verbatim messages waiting to be written */
    const uint8_t *span;
    size_t span_len;
    uint64_t span_off, span_msgs;
    uint8_t console[COLL_CONSOLE_BUF];
    size_t console_len;
    uint64_t last_ack_off, ack_every, unacked_since_ns;
    uint64_t ctl_seq;
    uint8_t last_req[512];
    size_t last_req_len;
    bool bye_seen, io_error;
    uint64_t rejected, connections;
    uint64_t start_ns, first_data_ns, last_data_ns, last_progress_ns, progress_bytes;
    uint64_t trace_first_ns, trace_last_ns, trace_bytes_at_first;   /* TRACE rate (bench) */
    /* the command socket (hvt trace) */
    struct coll_sock sock;
    const char *sock_path;
    bool no_sock;
    uint16_t host_request;             /* last hvt trace start/stop (enum hvt_trace_request) */
    struct coll_probe_arm arm;
    struct coll_d_load dload;
    uint64_t d_msgs, d_records, d_agg_msgs;  /* HVT_MSG_D_REC / D_AGG received */
    uint64_t probe_msgs, probe_records;  /* HVT_MSG_PROBE received since this collector started */
};

/* coll_cmd.c: requests on the command socket, answers from control replies, timeouts. */
void coll_cmd_request(void *ctx, int client, char *line);
/* off: the reply's stream offset (firings after it came after the reply's command). */
void coll_cmd_ctl_reply(struct coll *c, const struct ctl_msg *m, bool tag_ok, uint64_t off);
void coll_cmd_tick(struct coll *c, uint64_t now_ns);

#endif
