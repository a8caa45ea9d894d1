/*
 * stream_core.h - the hypervisor's end of the stream protocol, independent of any TCP stack:
 * the lossless send ring, per-CPU sequence numbers, HELLO / WELCOME / ACK handling, resume
 * after a reconnect, and control request dispatch. net/net.c drives it over lwIP; the host
 * fake sender (tests/net) drives the very same code over a socket. Portable: see net_port.h.
 *
 * Contract:
 *  - The ring holds framed sequenced messages (header + payload). Bytes are freed only when
 *    the collector ACKs them as persisted (or skips them in WELCOME), so nothing enqueued is
 *    ever lost by the transport: a full ring makes stream_core_append() return STREAM_EAGAIN
 *    and the caller waits (polls the transport) - backpressure, not loss.
 *  - STREAM_CTL_RESERVE bytes of the ring are kept for control replies so a full ring never
 *    blocks the control channel; a reply that still does not fit is counted as lost.
 *  - stream_core_append() may be called by any CPU at any time (internal spinlock).
 *    stream_core_connected/disconnected/rx/tx are called by whoever owns the transport, one
 *    at a time (the net lock in net.c).
 *  - stream_core_rx() returns < 0 when the peer broke the protocol: the caller must close the
 *    connection (a later reconnect resumes). A control request is never a protocol error: it
 *    is answered (possibly with a refusal) and counted.
 */
#ifndef HVT_STREAM_CORE_H
#define HVT_STREAM_CORE_H
#include "net_port.h"
#include "hvt_stream.h"
#include "ctl.h"
#include "aead.h"

#define STREAM_MAX_CPUS     64u
#define STREAM_CTL_RESERVE  8192u
#define STREAM_EAGAIN       (-11)
#define STREAM_EINVAL       (-22)
#define STREAM_EPROTO       (-71)
#define STREAM_HELLO_TEXT_MAX 512u
/* The largest message the hypervisor accepts from the collector: a full control request. */
#define STREAM_RX_MAX (sizeof(struct hvt_ctl) + HVT_CTL_MAX_DATA + HVT_MAC_LEN)
#define STREAM_TX_SCRATCH 16384u  /* tagged messages are gathered here for the transport */

/* Transport the core writes into (lwIP tcp_write, or a host socket). */
struct stream_transport {
    void  *ctx;
    size_t (*room)(void *ctx);                               /* bytes writable now */
    size_t (*write)(void *ctx, const void *p, size_t n);     /* returns bytes taken */
};

/* Control command handler: fills out (capacity HVT_CTL_MAX_DATA), returns HVT_CTL_* status. */
typedef int (*stream_ctl_fn)(void *ctx, uint16_t cmd, const uint8_t *args, uint32_t len,
                             uint8_t *out, uint32_t *out_len);

enum stream_conn_state { STREAM_DOWN, STREAM_HELLO, STREAM_WAIT_WELCOME, STREAM_UP };

struct stream_counters {
    uint64_t ctl_accepted, ctl_bad_auth, ctl_replayed, ctl_malformed, ctl_replies_lost;
    uint64_t connections, protocol_errors, resume_skipped_bytes;
    uint64_t bad_tags;          /* received messages whose session tag did not verify */
};

struct stream_core {
    /* ring: size is a power of two; offsets are absolute and only grow */
    uint8_t *ring;
    uint64_t size;
    uint64_t head;              /* next write offset (published with release) */
    uint64_t tail;              /* oldest unacknowledged offset */
    uint64_t send;              /* next offset to transmit on the current connection */
    net_spinlock lock;
    uint64_t next_seq[STREAM_MAX_CPUS];
    uint16_t cpu_count;
    uint8_t  boot_id[HVT_BOOT_ID_LEN];
    struct ctl_key key;
    uint8_t  skey[AEAD_KEY_LEN]; /* session key (hvt_stream.h), when auth_flags */
    uint16_t auth_flags;        /* 0 or HVT_HELLO_AUTH [| HVT_HELLO_ENCRYPT] */
    uint64_t ctl_next_seq;
    uint32_t hv_version;
    uint64_t tsc_hz;
    char     hello_text[STREAM_HELLO_TEXT_MAX];
    uint32_t hello_text_len;
    /* connection */
    enum stream_conn_state state;
    uint32_t conn_no;           /* this connection's number (HELLO.connection) */
    uint8_t  hello_buf[sizeof(struct hvt_msg_hdr) + sizeof(struct hvt_hello) + STREAM_HELLO_TEXT_MAX +
                       HVT_STREAM_TAG_LEN];
    uint32_t hello_len, hello_sent;
    uint8_t  rx_buf[sizeof(struct hvt_msg_hdr) + STREAM_RX_MAX + HVT_STREAM_TAG_LEN];
    uint32_t rx_have;
    uint32_t rx_index;          /* messages received on this connection (their nonces) */
    /* the ring message being transmitted with its tag (auth_flags): [tx_start, tx_end) */
    bool     tx_active;
    uint64_t tx_start, tx_end;
    struct aead tx_aead;
    uint8_t  tx_tag[HVT_STREAM_TAG_LEN];
    uint32_t tx_tag_sent;
    uint32_t tx_pend_at, tx_pend_len;  /* tx_scratch bytes written / gathered */
    uint8_t  tx_scratch[STREAM_TX_SCRATCH];
    /* control */
    stream_ctl_fn ctl_fn;
    void    *ctl_ctx;
    /* scratch for building replies: kept off the (small) hypervisor stack */
    uint8_t  ctl_out[HVT_CTL_MAX_DATA];
    uint8_t  ctl_msg[sizeof(struct hvt_msg_hdr) + sizeof(struct hvt_ctl) + HVT_CTL_MAX_DATA + HVT_MAC_LEN];
    struct stream_counters cnt;
};

int  stream_core_init(struct stream_core *sc, void *ring, uint64_t ring_size, uint16_t cpu_count,
                      const uint8_t boot_id[HVT_BOOT_ID_LEN], const struct ctl_key *key,
                      uint32_t hv_version, uint64_t tsc_hz);
/* key=value lines sent in HELLO (hypervisor build, boot config summary...). */
void stream_core_set_hello_text(struct stream_core *sc, const char *text, size_t n);
void stream_core_set_ctl(struct stream_core *sc, stream_ctl_fn fn, void *ctx);
/* Session tags and encryption (hvt_stream.h). With a key, init turns tags on and encryption
 * off; this changes it (before the first connection). Without a key both stay off: -1. */
int  stream_core_set_auth(struct stream_core *sc, bool auth, bool encrypt);


/* Enqueue one sequenced message. 0, STREAM_EAGAIN (ring full: poll and retry) or
 * STREAM_EINVAL (cpu out of range or len > HVT_STREAM_MAX_PAYLOAD or larger than the ring). */
int  stream_core_append(struct stream_core *sc, unsigned cpu, uint16_t type,
                        const void *data, size_t len);
/* Same, with the payload in two parts (a struct then bytes) and use of the control reserve. */
int  stream_core_append2(struct stream_core *sc, unsigned cpu, uint16_t type, const void *a,
                         size_t alen, const void *b, size_t blen, bool use_reserve);

void stream_core_connected(struct stream_core *sc);
void stream_core_disconnected(struct stream_core *sc);
int  stream_core_rx(struct stream_core *sc, const void *data, size_t n);
/* Push HELLO, then ring bytes [send, head) as far as the transport takes them.
 * Returns the number of bytes handed to the transport. */
size_t stream_core_tx(struct stream_core *sc, const struct stream_transport *t);

/* Ring and control counters for a STATUS reply (the caller adds its NIC counters). */
void     stream_core_status(struct stream_core *sc, struct hvt_ctl_status *out);
uint64_t stream_core_free(struct stream_core *sc);  /* bytes appendable now (no reserve) */
bool     stream_core_all_acked(struct stream_core *sc);

#endif
