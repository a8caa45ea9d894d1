/* coll_parse.c - strict stream parser; see coll_parse.h and docs/stream-protocol.md. */
#include "coll_parse.h"
#include "hvt_probe.h"
#include "hvt_dif.h"
#include <stdio.h>
#include <string.h>

void coll_parse_init(struct coll_parser *p, const struct ctl_key *key)
{
    memset(p, 0, sizeof *p);
    if (key)
        p->key = *key;
}

void coll_parse_new_connection(struct coll_parser *p)
{
    p->have_hello = false;
    p->conn_bytes = 0;
    p->err[0] = 0;
}

void coll_parse_expect(struct coll_parser *p, uint64_t next_off, const uint64_t *seqs,
                       unsigned nseq)
{
    p->next_off = next_off;
    memset(p->next_seq, 0, sizeof p->next_seq);
    if (seqs)
        memcpy(p->next_seq, seqs, sizeof(uint64_t) * (nseq < COLL_MAX_CPUS ? nseq : COLL_MAX_CPUS));
}

const char *coll_msg_type_name(uint16_t type)
{
    switch (type) {
    case HVT_MSG_HELLO: return "HELLO";
    case HVT_MSG_META: return "META";
    case HVT_MSG_CONSOLE: return "CONSOLE";
    case HVT_MSG_TRACE: return "TRACE";
    case HVT_MSG_LOSS: return "LOSS";
    case HVT_MSG_CTL_REPLY: return "CTL_REPLY";
    case HVT_MSG_BYE: return "BYE";
    case HVT_MSG_PANIC: return "PANIC";
    case HVT_MSG_PROBE: return "PROBE";
    case HVT_MSG_PROBE_STACK: return "PROBE_STACK";
    case HVT_MSG_D_REC: return "D_REC";
    case HVT_MSG_D_AGG: return "D_AGG";
    case HVT_MSG_WELCOME: return "WELCOME";
    case HVT_MSG_ACK: return "ACK";
    case HVT_MSG_CTL_REQ: return "CTL_REQ";
    }
    return "unknown";
}

size_t coll_parse_seal(struct coll_parser *p, uint8_t *msg, size_t n)
{
    if (!(p->sess.flags & HVT_HELLO_AUTH))
        return n;
    ctl_seal(p->sess.skey, HVT_NONCE_TO_HV, p->sess.conn, p->sess.to_hv++, msg,
             (uint32_t)(n - sizeof(struct hvt_msg_hdr)), p->sess.flags & HVT_HELLO_ENCRYPT);
    return n + HVT_STREAM_TAG_LEN;
}

const char *coll_session_name(uint32_t hello_flags)
{
    return (hello_flags & HVT_HELLO_ENCRYPT) ? "encrypted" :
           (hello_flags & HVT_HELLO_AUTH) ? "authenticated" : "unauthenticated";
}

#define BAD(...) do { \
        snprintf(p->err, sizeof p->err, __VA_ARGS__); \
        return COLL_EMALFORMED; \
    } while (0)

static int check_hello(struct coll_parser *p, const struct hvt_msg_hdr *h, const uint8_t *pl)
{
    if (h->len < sizeof(struct hvt_hello))
        BAD("HELLO too short (%u bytes)", h->len);
    memcpy(&p->hello, pl, sizeof p->hello);
    const struct hvt_hello *he = &p->hello;
    if (he->text_len != h->len - sizeof(struct hvt_hello))
        BAD("HELLO text_len %u does not match its length %u", he->text_len, h->len);
    if (he->cpu_count == 0 || he->cpu_count > COLL_MAX_CPUS)
        BAD("HELLO cpu_count %u out of range 1..%u", he->cpu_count, COLL_MAX_CPUS);
    if (he->ring_size == 0 || (he->ring_size & (he->ring_size - 1)))
        BAD("HELLO ring_size %llu is not a power of two", (unsigned long long)he->ring_size);
    if (he->ring_tail > he->ring_head || he->ring_head - he->ring_tail > he->ring_size)
        BAD("HELLO ring window [%llu, %llu) inconsistent", (unsigned long long)he->ring_tail,
            (unsigned long long)he->ring_head);
    return 0;
}

static int check_sequenced(struct coll_parser *p, const struct hvt_msg_hdr *h, const uint8_t *pl)
{
    if (h->cpu >= p->hello.cpu_count)
        BAD("%s from cpu %u but HELLO announced %u CPUs", coll_msg_type_name(h->type), h->cpu,
            p->hello.cpu_count);
    if (h->off < p->next_off)
        BAD("%s offset %llu rewinds below %llu", coll_msg_type_name(h->type),
            (unsigned long long)h->off, (unsigned long long)p->next_off);
    if (h->seq < p->next_seq[h->cpu])
        BAD("%s cpu %u seq %llu rewinds below %llu", coll_msg_type_name(h->type), h->cpu,
            (unsigned long long)h->seq, (unsigned long long)p->next_seq[h->cpu]);
    switch (h->type) {
    case HVT_MSG_META:
    case HVT_MSG_CONSOLE:
        break;
    case HVT_MSG_TRACE:
        if (h->len < sizeof(struct hvt_trace_batch))
            BAD("TRACE shorter than its batch header (%u bytes)", h->len);
        break;
    case HVT_MSG_LOSS:
        if (h->len != sizeof(struct hvt_loss))
            BAD("LOSS has %u bytes, expected %zu", h->len, sizeof(struct hvt_loss));
        break;
    case HVT_MSG_BYE:
        if (h->len != 0)
            BAD("BYE with %u payload bytes", h->len);
        break;
    case HVT_MSG_PANIC:
        if (h->len == 0 || h->len > 255)
            BAD("PANIC with %u bytes of reason (1 to 255)", h->len);
        break;
    case HVT_MSG_PROBE:
        if (h->len == 0 || h->len % sizeof(struct hvt_probe_fire))
            BAD("PROBE of %u bytes is not whole firing records of %zu", h->len,
                sizeof(struct hvt_probe_fire));
        break;
    case HVT_MSG_PROBE_STACK:
        for (uint32_t at = 0; at < h->len || h->len == 0;) {
            struct hvt_probe_sample sm;
            if (h->len - at < sizeof sm)
                BAD("PROBE_STACK: sample at byte %u cut short", at);
            memcpy(&sm, pl + at, sizeof sm);
            uint32_t padded = (sm.stack_len + 7u) & ~7u;
            if (sm.stack_len > HVT_PROBE_STACK_MAX || padded > h->len - at - sizeof sm)
                BAD("PROBE_STACK: sample at byte %u claims %u stack bytes", at, sm.stack_len);
            at += (uint32_t)sizeof sm + padded;
        }
        break;
    case HVT_MSG_D_REC:
        for (uint32_t at = 0; at < h->len || h->len == 0;) {
            struct hvt_drec r;
            if (h->len - at < sizeof r)
                BAD("D_REC: record at byte %u cut short", at);
            memcpy(&r, pl + at, sizeof r);
            if (r.len < sizeof r || r.len % 8 || r.len > h->len - at)
                BAD("D_REC: record at byte %u claims %u bytes", at, r.len);
            at += r.len;
        }
        break;
    case HVT_MSG_D_AGG: {
        struct hvt_dagg_part part;
        if (h->len < sizeof part)
            BAD("D_AGG of %u bytes has no header", h->len);
        memcpy(&part, pl, sizeof part);
        uint32_t at = sizeof part, n = 0;
        for (; at < h->len; n++) {
            struct hvt_dagg_rec r;
            if (h->len - at < sizeof r)
                BAD("D_AGG: entry at byte %u cut short", at);
            memcpy(&r, pl + at, sizeof r);
            if (r.len < sizeof r || r.len % 8 || r.len > h->len - at ||
                (uint64_t)r.key_len + 8ull * r.nbuckets > r.len - sizeof r)
                BAD("D_AGG: entry at byte %u claims %u bytes", at, r.len);
            at += r.len;
        }
        if (n != part.nrecs)
            BAD("D_AGG: %u entries, the header says %u", n, part.nrecs);
        break;
    }
    case HVT_MSG_CTL_REPLY: {
        struct ctl_msg m;
        int v = ctl_parse(h, pl, &p->key, p->hello.boot_id, 0, &m);
        if (v == HVT_CTL_EMALFORMED)
            BAD("CTL_REPLY with inconsistent lengths (%u bytes)", h->len);
        if (v != HVT_CTL_OK && p->key.len)
            p->c.ctl_bad_tag++;
        break;
    }
    default:
        BAD("unknown message type 0x%04x", h->type);
    }
    return 0;
}

static void count(struct coll_parser *p, const struct hvt_msg_hdr *h, const uint8_t *pl)
{
    if (h->off > p->next_off) {
        p->c.gap_events++;
        p->c.gap_bytes += h->off - p->next_off;
    }
    if (h->seq > p->next_seq[h->cpu])
        p->c.gap_msgs += h->seq - p->next_seq[h->cpu];
    p->next_off = h->off + sizeof *h + h->len;
    p->next_seq[h->cpu] = h->seq + 1;
    p->c.msgs++;
    p->c.bytes += sizeof *h + h->len;
    switch (h->type) {
    case HVT_MSG_CONSOLE: p->c.console_bytes += h->len; break;
    case HVT_MSG_TRACE: p->c.trace_msgs++; p->c.trace_bytes += h->len; break;
    case HVT_MSG_META: p->c.meta_msgs++; break;
    case HVT_MSG_LOSS: {
        struct hvt_loss l;
        memcpy(&l, pl, sizeof l);
        p->c.loss_reports++;
        p->c.lost_msgs += l.messages;
        p->c.lost_bytes += l.bytes;
        break;
    }
    case HVT_MSG_CTL_REPLY: p->c.ctl_replies++; break;
    case HVT_MSG_BYE: p->c.byes++; break;
    }
}

/* The HELLO's own flags decide whether it carries a tag; the session's decide for the rest. */
static size_t tag_len(const struct coll_parser *p, const struct hvt_msg_hdr *h, const uint8_t *pl)
{
    if (p->have_hello)
        return (p->sess.flags & HVT_HELLO_AUTH) ? HVT_STREAM_TAG_LEN : 0;
    struct hvt_hello he;
    if (h->type != HVT_MSG_HELLO || h->len < sizeof he)
        return 0;
    memcpy(&he, pl, sizeof he);
    return (he.hello_flags & HVT_HELLO_AUTH) ? HVT_STREAM_TAG_LEN : 0;
}

/* A checked HELLO: verify its tag and start the connection's session, or refuse. */
static int start_session(struct coll_parser *p, const struct hvt_msg_hdr *h, uint8_t *m)
{
    const struct hvt_hello *he = &p->hello;
    if (!(he->hello_flags & HVT_HELLO_AUTH)) {
        if (p->key.len && !p->allow_unauth)
            BAD("HELLO: the hypervisor does not authenticate its stream (no key, or auth=off) "
                "and this collector has a key: refused (--insecure accepts it)");
        memset(&p->sess, 0, sizeof p->sess);
        return 0;
    }
    if (!p->key.len)
        BAD("HELLO: the stream is authenticated and this collector has no key (--key)");
    struct coll_session s = { .flags = he->hello_flags & (HVT_HELLO_AUTH | HVT_HELLO_ENCRYPT),
                              .conn = he->connection };
    ctl_session_key(&p->key, he->boot_id, s.skey);
    if (!ctl_open(s.skey, HVT_NONCE_HELLO, he->connection, 0, m, h->len, false)) {
        p->c.bad_tags++;
        BAD("HELLO: tag does not verify (another key, or not from the hypervisor)");
    }
    p->sess = s;
    return 0;
}

int coll_parse_feed(struct coll_parser *p, uint8_t *buf, size_t n, size_t *used,
                    const struct coll_sink *sink)
{
    size_t pos = 0, wpos = 0;
    int rc = 0;
    const size_t hl = sizeof(struct hvt_msg_hdr);
    while (n - pos >= hl) {
        struct hvt_msg_hdr h;
        memcpy(&h, buf + pos, hl);
        uint64_t at = p->conn_bytes + pos;
        if (h.magic != HVT_STREAM_MAGIC) {
            snprintf(p->err, sizeof p->err, "byte %llu: bad magic 0x%08x (not an hvtrace stream)",
                     (unsigned long long)at, h.magic);
            rc = COLL_EMALFORMED;
            break;
        }
        if (h.version != HVT_STREAM_VERSION || h.hdr_len != hl) {
            snprintf(p->err, sizeof p->err, "byte %llu: protocol version %u / header %u, this "
                     "collector speaks version %u / %zu", (unsigned long long)at, h.version,
                     h.hdr_len, HVT_STREAM_VERSION, hl);
            rc = COLL_EMALFORMED;
            break;
        }
        if (h.len > HVT_STREAM_MAX_PAYLOAD) {
            snprintf(p->err, sizeof p->err, "byte %llu: %s payload of %u bytes exceeds %u",
                     (unsigned long long)at, coll_msg_type_name(h.type), h.len,
                     HVT_STREAM_MAX_PAYLOAD);
            rc = COLL_EMALFORMED;
            break;
        }
        if (n - pos - hl < h.len)
            break;                                /* incomplete: wait for more bytes */
        size_t tl = tag_len(p, &h, buf + pos + hl);
        if (n - pos - hl - h.len < tl)
            break;
        /* cut the tags out: this message moves down to follow the last one delivered */
        if (wpos != pos)
            memmove(buf + wpos, buf + pos, hl + h.len + tl);
        uint8_t *m = buf + wpos;
        const uint8_t *pl = m + hl;
        int r;
        if (!p->have_hello) {
            if (h.type != HVT_MSG_HELLO || h.cpu != HVT_CPU_NONE)
                r = (snprintf(p->err, sizeof p->err, "expected HELLO first, got %s (cpu %u)",
                              coll_msg_type_name(h.type), h.cpu), COLL_EMALFORMED);
            else
                r = check_hello(p, &h, pl);
            if (r == 0)
                r = start_session(p, &h, m);
            if (r == 0) {
                p->have_hello = true;
                if (sink && sink->on_hello &&
                    sink->on_hello(sink->ctx, &p->hello, (const char *)pl + sizeof(struct hvt_hello),
                                   p->hello.text_len) < 0) {
                    pos += hl + h.len + tl;
                    rc = COLL_ESTOP;
                    break;
                }
            }
        } else if (h.cpu == HVT_CPU_NONE) {
            r = (snprintf(p->err, sizeof p->err, "unexpected unsequenced %s after HELLO",
                          coll_msg_type_name(h.type)), COLL_EMALFORMED);
        } else if (tl && !ctl_open(p->sess.skey, HVT_NONCE_SEQ, h.off, 0, m, h.len,
                                   p->sess.flags & HVT_HELLO_ENCRYPT)) {
            p->c.bad_tags++;
            r = (snprintf(p->err, sizeof p->err, "%s at offset %llu: tag does not verify (forged "
                          "or damaged)", coll_msg_type_name(h.type), (unsigned long long)h.off),
                 COLL_EMALFORMED);
        } else {
            r = check_sequenced(p, &h, pl);
            if (r == 0) {
                count(p, &h, pl);
                if (sink && sink->on_msg)
                    sink->on_msg(sink->ctx, &h, pl, m);
            }
        }
        if (r != 0) {
            char why[sizeof p->err];
            memcpy(why, p->err, sizeof why);
            snprintf(p->err, sizeof p->err, "byte %llu: %s", (unsigned long long)at, why);
            rc = r;
            break;
        }
        pos += hl + h.len + tl;
        wpos += hl + h.len;
    }
    p->conn_bytes += pos;
    *used = pos;
    return rc;
}

int coll_parse_hello_verify(const struct ctl_key *key, uint8_t *m, size_t n,
                            struct hvt_hello *out, char *err, size_t errlen)
{
    static struct coll_parser t;          /* big (per-CPU seqs): not on the stack */
    struct hvt_msg_hdr h;
    const size_t hl = sizeof h;
    coll_parse_init(&t, key);
    if (n < hl)
        return snprintf(err, errlen, "no HELLO"), -1;
    memcpy(&h, m, hl);
    if (h.magic != HVT_STREAM_MAGIC || h.version != HVT_STREAM_VERSION || h.hdr_len != hl ||
        h.type != HVT_MSG_HELLO || h.cpu != HVT_CPU_NONE || n != hl + h.len + HVT_STREAM_TAG_LEN)
        return snprintf(err, errlen, "not an authenticated HELLO"), -1;
    if (check_hello(&t, &h, m + hl) != 0 || start_session(&t, &h, m) != 0 ||
        !(t.sess.flags & HVT_HELLO_AUTH))
        return snprintf(err, errlen, "%s", t.err[0] ? t.err : "HELLO not authenticated"), -1;
    *out = t.hello;
    return 0;
}
