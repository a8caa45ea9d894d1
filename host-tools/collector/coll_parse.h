/*
 * coll_parse.h - the collector's strict parser of the hypervisor->collector stream.
 *
 * Contract:
 *  - coll_parse_feed() takes any bytes (a read() buffer; messages may straddle calls: the
 *    parser consumes only complete messages and reports how many bytes it used). It never reads
 *    outside the buffer, never allocates, and classifies any input: either every complete
 *    message is valid and delivered to the sink in order, or it stops at the first malformed
 *    one with COLL_EMALFORMED and a one-line reason in p->err (byte offset in the connection
 *    included). Nothing after an error is delivered.
 *  - Order: exactly one HELLO first (the sink's on_hello decides whether to accept the boot and
 *    where to resume: coll_parse_expect() sets the next offset/seqs), then sequenced messages.
 *  - Gaps: an offset or per-CPU seq jump forward is counted (gap_bytes, gap_events, gap_msgs),
 *    a jump backward is malformed (the hypervisor never rewinds within a connection).
 *  - Session tags (HVT_HELLO_AUTH, hvt_stream.h): every message's tag is verified before
 *    anything in it is used, encrypted payloads are decrypted in place, and the tags are cut
 *    out: the messages handed to the sink lie back to back in buf (raw pointers below
 *    buf + *used), exactly as a stream without tags would be. A tag that does not verify is
 *    counted (bad_tags) and malformed. With a key, a HELLO without HVT_HELLO_AUTH is malformed
 *    unless allow_unauth is set; an authenticated HELLO without a key always is.
 *  - CTL_REPLY payloads are checked with ctl_parse() (tag verified when a key is given; a bad
 *    tag is counted in ctl_bad_tag, not an error: the reply is still recorded).
 */
#ifndef HVT_COLL_PARSE_H
#define HVT_COLL_PARSE_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "hvt_stream.h"
#include "ctl.h"

#define COLL_MAX_CPUS   1024u
#define COLL_EMALFORMED (-1)
#define COLL_ESTOP      (-2)    /* the sink asked to stop (e.g. refused the boot) */

struct coll_sink {
    void *ctx;
    /* HELLO: return 0 to accept (after calling coll_parse_expect), <0 to refuse. */
    int  (*on_hello)(void *ctx, const struct hvt_hello *h, const char *text, size_t text_len);
    /* A sequenced message; raw points at its header (32 + hdr->len bytes, verbatim). */
    void (*on_msg)(void *ctx, const struct hvt_msg_hdr *hdr, const uint8_t *payload,
                   const uint8_t *raw);
};

struct coll_counters {
    uint64_t msgs, bytes;                 /* sequenced messages accepted, their bytes */
    uint64_t gap_events, gap_bytes, gap_msgs;
    uint64_t console_bytes, trace_msgs, trace_bytes, meta_msgs;
    uint64_t loss_reports, lost_msgs, lost_bytes;
    uint64_t ctl_replies, ctl_bad_tag, byes;
    uint64_t bad_tags;                    /* messages whose session tag did not verify */
};

/* The connection's session (from its HELLO): what the collector needs to check what it
 * receives and to tag what it sends (coll_parse_seal). */
struct coll_session {
    uint16_t flags;                       /* HVT_HELLO_AUTH, HVT_HELLO_ENCRYPT */
    uint32_t conn;                        /* HELLO.connection */
    uint32_t to_hv;                       /* messages sent to the hypervisor on it */
    uint8_t  skey[32];
};

struct coll_parser {
    bool     have_hello;
    struct hvt_hello hello;
    uint64_t next_off;
    uint64_t next_seq[COLL_MAX_CPUS];
    uint64_t conn_bytes;                  /* bytes consumed on this connection (for errors) */
    struct ctl_key key;                   /* verify CTL_REPLY tags when len > 0 */
    bool     allow_unauth;                /* accept a stream without tags although keyed */
    struct coll_session sess;
    struct coll_counters c;
    char     err[160];
};

void coll_parse_init(struct coll_parser *p, const struct ctl_key *key);
/* Start a new connection, keeping counters and continuity (next_off, next_seq). */
void coll_parse_new_connection(struct coll_parser *p);
/* Set where the stream continues (call from on_hello). seqs may be NULL (all zero). */
void coll_parse_expect(struct coll_parser *p, uint64_t next_off, const uint64_t *seqs,
                       unsigned nseq);
/* Parse complete messages in buf[0..n). *used = bytes consumed. 0, COLL_EMALFORMED, COLL_ESTOP.
 * buf is rewritten below *used (decryption, tags cut out); bytes from *used on are untouched. */
int  coll_parse_feed(struct coll_parser *p, uint8_t *buf, size_t n, size_t *used,
                     const struct coll_sink *sink);
/* Make msg (header + payload, n bytes, room for HVT_STREAM_TAG_LEN more) ready to send to the
 * hypervisor on this connection: encrypted and tagged when the session says so. New length. */
size_t coll_parse_seal(struct coll_parser *p, uint8_t *msg, size_t n);
const char *coll_msg_type_name(uint16_t type);
/* "encrypted", "authenticated" or "unauthenticated": a session's HVT_HELLO_* flags. */
const char *coll_session_name(uint32_t hello_flags);
/* A whole authenticated HELLO m[0..n) (header, payload, tag) on its own, as the first bytes of a
 * connection that is not adopted yet: 0 and *out when it is well formed and its tag verifies
 * under key; -1 with a reason in err otherwise. */
int  coll_parse_hello_verify(const struct ctl_key *key, uint8_t *m, size_t n,
                             struct hvt_hello *out, char *err, size_t errlen);

#endif
