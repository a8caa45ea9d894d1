/* stream_core.c - lossless send ring and protocol state; see stream_core.h. */
#include "stream_core.h"
#include "sha256.h"

static void ring_put(struct stream_core *sc, uint64_t off, const void *data, size_t n)
{
    uint64_t at = off & (sc->size - 1);
    size_t first = (size_t)(sc->size - at) < n ? (size_t)(sc->size - at) : n;
    memcpy(sc->ring + at, data, first);
    if (n > first)
        memcpy(sc->ring, (const uint8_t *)data + first, n - first);
}

static void ring_get(const struct stream_core *sc, uint64_t off, void *out, size_t n)
{
    uint64_t at = off & (sc->size - 1);
    size_t first = (size_t)(sc->size - at) < n ? (size_t)(sc->size - at) : n;
    memcpy(out, sc->ring + at, first);
    if (n > first)
        memcpy((uint8_t *)out + first, sc->ring, n - first);
}

static uint64_t load_acq(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static void store_rel(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

int stream_core_init(struct stream_core *sc, void *ring, uint64_t ring_size, uint16_t cpu_count,
                     const uint8_t boot_id[HVT_BOOT_ID_LEN], const struct ctl_key *key,
                     uint32_t hv_version, uint64_t tsc_hz)
{
    memset(sc, 0, sizeof *sc);
    /* power of two so offsets map to positions with a mask; room for the reserve and more */
    if (ring_size < 4 * STREAM_CTL_RESERVE || (ring_size & (ring_size - 1)) ||
        cpu_count == 0 || cpu_count > STREAM_MAX_CPUS)
        return STREAM_EINVAL;
    sc->ring = ring;
    sc->size = ring_size;
    sc->cpu_count = cpu_count;
    memcpy(sc->boot_id, boot_id, HVT_BOOT_ID_LEN);
    if (key)
        sc->key = *key;
    if (sc->key.len) {
        ctl_session_key(&sc->key, boot_id, sc->skey);
        sc->auth_flags = HVT_HELLO_AUTH;
    }
    sc->ctl_next_seq = 1;
    sc->hv_version = hv_version;
    sc->tsc_hz = tsc_hz;
    sc->state = STREAM_DOWN;
    return 0;
}

void stream_core_set_hello_text(struct stream_core *sc, const char *text, size_t n)
{
    if (n > STREAM_HELLO_TEXT_MAX)
        n = STREAM_HELLO_TEXT_MAX;
    memcpy(sc->hello_text, text, n);
    sc->hello_text_len = (uint32_t)n;
}

void stream_core_set_ctl(struct stream_core *sc, stream_ctl_fn fn, void *ctx)
{
    sc->ctl_fn = fn;
    sc->ctl_ctx = ctx;
}

int stream_core_set_auth(struct stream_core *sc, bool auth, bool encrypt)
{
    if (!sc->key.len)
        return (auth || encrypt) ? -1 : 0;
    sc->auth_flags = (uint16_t)((auth || encrypt ? HVT_HELLO_AUTH : 0) |
                                (encrypt ? HVT_HELLO_ENCRYPT : 0));
    return 0;
}

uint64_t stream_core_free(struct stream_core *sc)
{
    uint64_t used = load_acq(&sc->head) - load_acq(&sc->tail);
    uint64_t avail = sc->size - used;
    return avail > STREAM_CTL_RESERVE ? avail - STREAM_CTL_RESERVE : 0;
}

void stream_core_status(struct stream_core *sc, struct hvt_ctl_status *out)
{
    memset(out, 0, sizeof *out);
    out->ring_head = load_acq(&sc->head);
    out->ring_tail = load_acq(&sc->tail);
    out->ring_size = sc->size;
    out->ctl_accepted = sc->cnt.ctl_accepted;
    out->ctl_bad_auth = sc->cnt.ctl_bad_auth;
    out->ctl_replayed = sc->cnt.ctl_replayed;
    out->ctl_malformed = sc->cnt.ctl_malformed;
    out->connections = sc->cnt.connections;
    out->lost_messages = sc->cnt.ctl_replies_lost;
    out->bad_tags = sc->cnt.bad_tags;
    out->hello_flags = sc->auth_flags;
}

bool stream_core_all_acked(struct stream_core *sc)
{
    return load_acq(&sc->tail) == load_acq(&sc->head);
}

int stream_core_append2(struct stream_core *sc, unsigned cpu, uint16_t type, const void *a,
                        size_t alen, const void *b, size_t blen, bool use_reserve)
{
    size_t len = alen + blen;
    uint64_t need = sizeof(struct hvt_msg_hdr) + len;
    if (cpu >= sc->cpu_count || len > HVT_STREAM_MAX_PAYLOAD ||
        need > sc->size - STREAM_CTL_RESERVE)
        return STREAM_EINVAL;
    net_lock(&sc->lock);
    uint64_t head = sc->head;
    uint64_t avail = sc->size - (head - load_acq(&sc->tail));
    if (!use_reserve)
        avail = avail > STREAM_CTL_RESERVE ? avail - STREAM_CTL_RESERVE : 0;
    if (need > avail) {
        net_unlock(&sc->lock);
        return STREAM_EAGAIN;
    }
    struct hvt_msg_hdr h = {
        .magic = HVT_STREAM_MAGIC, .version = HVT_STREAM_VERSION,
        .hdr_len = sizeof(struct hvt_msg_hdr), .type = type, .len = (uint32_t)len,
        .cpu = (uint16_t)cpu, .seq = sc->next_seq[cpu]++, .off = head,
    };
    ring_put(sc, head, &h, sizeof h);
    if (alen)
        ring_put(sc, head + sizeof h, a, alen);
    if (blen)
        ring_put(sc, head + sizeof h + alen, b, blen);
    store_rel(&sc->head, head + need);   /* the transmitter may read it from now on */
    net_unlock(&sc->lock);
    return 0;
}

int stream_core_append(struct stream_core *sc, unsigned cpu, uint16_t type,
                       const void *data, size_t len)
{
    return stream_core_append2(sc, cpu, type, data, len, NULL, 0, false);
}

void stream_core_connected(struct stream_core *sc)
{
    struct hvt_hello hello = {
        .hv_version = sc->hv_version, .cpu_count = sc->cpu_count,
        .hello_flags = (uint16_t)((sc->key.len ? HVT_HELLO_CTL_KEYED : 0) | sc->auth_flags),
        .ring_size = sc->size,
        .ring_tail = load_acq(&sc->tail), .ring_head = load_acq(&sc->head),
        .ctl_next_seq = sc->ctl_next_seq, .tsc_hz = sc->tsc_hz,
        .connection = (uint32_t)sc->cnt.connections, .text_len = sc->hello_text_len,
    };
    memcpy(hello.boot_id, sc->boot_id, HVT_BOOT_ID_LEN);
    struct hvt_msg_hdr h = {
        .magic = HVT_STREAM_MAGIC, .version = HVT_STREAM_VERSION,
        .hdr_len = sizeof(struct hvt_msg_hdr), .type = HVT_MSG_HELLO,
        .len = (uint32_t)(sizeof hello + sc->hello_text_len), .cpu = HVT_CPU_NONE,
    };
    memcpy(sc->hello_buf, &h, sizeof h);
    memcpy(sc->hello_buf + sizeof h, &hello, sizeof hello);
    memcpy(sc->hello_buf + sizeof h + sizeof hello, sc->hello_text, sc->hello_text_len);
    sc->hello_len = (uint32_t)(sizeof h + sizeof hello + sc->hello_text_len);
    sc->conn_no = hello.connection;
    if (sc->auth_flags) {
        ctl_seal(sc->skey, HVT_NONCE_HELLO, sc->conn_no, 0, sc->hello_buf,
                 h.len, false);             /* HELLO stays clear: it carries the boot id */
        sc->hello_len += HVT_STREAM_TAG_LEN;
    }
    sc->hello_sent = 0;
    sc->rx_have = 0;
    sc->rx_index = 0;
    sc->tx_active = false;
    sc->tx_pend_at = sc->tx_pend_len = 0;
    sc->cnt.connections++;
    sc->state = STREAM_HELLO;
}

void stream_core_disconnected(struct stream_core *sc)
{
    sc->state = STREAM_DOWN;
    sc->rx_have = 0;
    sc->tx_active = false;
    sc->tx_pend_at = sc->tx_pend_len = 0;
}

/* Is off the start of a message in [tail, head]? Walks the ring's headers from tail. */
static bool ring_is_boundary(struct stream_core *sc, uint64_t off)
{
    uint64_t head = load_acq(&sc->head);
    for (uint64_t p = sc->tail; p <= head; ) {
        if (p == off)
            return true;
        if (p > off || p == head)
            return false;
        struct hvt_msg_hdr h;
        ring_get(sc, p, &h, sizeof h);
        p += sizeof h + h.len;
    }
    return false;
}

static void on_welcome(struct stream_core *sc, const struct hvt_welcome *w)
{
    uint64_t resume = w->resume_off;
    if (resume < sc->tail) {
        /* The collector wants data we no longer hold (it lost what it had persisted, or it
         * is new to this boot): send from the oldest we have; it sees and counts the gap. */
        sc->cnt.resume_skipped_bytes += sc->tail - resume;
        resume = sc->tail;
    }
    store_rel(&sc->tail, resume);       /* everything below resume is acknowledged */
    sc->send = resume;
    sc->state = STREAM_UP;
}

static void reply_ctl(struct stream_core *sc, uint64_t ctl_seq, uint16_t cmd, int status,
                      const uint8_t *data, uint32_t len)
{
    /* Replies come from the CPU that owns the transport; cpu 0 keeps it independent of which
     * CPU that is (the reply's own header is covered by its tag). */
    uint8_t *msg = sc->ctl_msg;
    size_t n = ctl_build(msg, HVT_MSG_CTL_REPLY, 0, &sc->key, sc->boot_id, ctl_seq, cmd,
                         (int16_t)status, data, len);
    const size_t h = sizeof(struct hvt_msg_hdr);
    if (stream_core_append2(sc, 0, HVT_MSG_CTL_REPLY, msg + h, n - h, NULL, 0, true) != 0)
        sc->cnt.ctl_replies_lost++;
}

static void on_ctl_req(struct stream_core *sc, const struct hvt_msg_hdr *h, const uint8_t *p)
{
    struct ctl_msg m;
    int v = ctl_parse(h, p, &sc->key, sc->boot_id, sc->ctl_next_seq, &m);
    switch (v) {
    case HVT_CTL_EMALFORMED: sc->cnt.ctl_malformed++; break;
    case HVT_CTL_EAUTH:      sc->cnt.ctl_bad_auth++;  break;
    case HVT_CTL_EREPLAY:    sc->cnt.ctl_replayed++;  break;
    default: break;
    }
    if (v != HVT_CTL_OK) {
        reply_ctl(sc, m.ctl.ctl_seq, m.ctl.cmd, v, NULL, 0);
        return;
    }
    sc->ctl_next_seq = m.ctl.ctl_seq + 1;
    sc->cnt.ctl_accepted++;
    uint8_t *out = sc->ctl_out;
    uint32_t out_len = 0;
    int st;
    if (m.ctl.cmd == HVT_CTL_PING) {
        memcpy(out, m.data, m.ctl.data_len);
        out_len = m.ctl.data_len;
        st = HVT_CTL_OK;
    } else if (sc->ctl_fn) {
        st = sc->ctl_fn(sc->ctl_ctx, m.ctl.cmd, m.data, m.ctl.data_len, out, &out_len);
        if (out_len > HVT_CTL_MAX_DATA)
            out_len = 0, st = HVT_CTL_EINVAL;
    } else {
        st = HVT_CTL_ENOSYS;
    }
    reply_ctl(sc, m.ctl.ctl_seq, m.ctl.cmd, st, out, out_len);
}

static int rx_message(struct stream_core *sc, const struct hvt_msg_hdr *h, const uint8_t *p)
{
    switch (h->type) {
    case HVT_MSG_WELCOME: {
        struct hvt_welcome w;
        memcpy(&w, p, sizeof w);
        if (sc->state != STREAM_HELLO && sc->state != STREAM_WAIT_WELCOME)
            return STREAM_EPROTO;          /* a second WELCOME */
        if (memcmp(w.boot_id, sc->boot_id, HVT_BOOT_ID_LEN) != 0)
            return STREAM_EPROTO;
        if (w.resume_off > load_acq(&sc->head) ||
            (w.resume_off >= sc->tail && !ring_is_boundary(sc, w.resume_off)))
            return STREAM_EPROTO;
        on_welcome(sc, &w);
        return 0;
    }
    case HVT_MSG_ACK: {
        struct hvt_ack a;
        memcpy(&a, p, sizeof a);
        if (sc->state != STREAM_UP || a.persisted_off > sc->send)
            return STREAM_EPROTO;          /* acks what was never sent */
        if (a.persisted_off > sc->tail)
            store_rel(&sc->tail, a.persisted_off);
        return 0;
    }
    case HVT_MSG_CTL_REQ:
        on_ctl_req(sc, h, p);
        return 0;
    }
    return STREAM_EPROTO;
}

/* Header checks that can be done before the payload arrives. */
static int rx_check_header(struct stream_core *sc, const struct hvt_msg_hdr *h)
{
    if (h->magic != HVT_STREAM_MAGIC || h->version != HVT_STREAM_VERSION ||
        h->hdr_len != sizeof *h || h->cpu != HVT_CPU_NONE)
        return STREAM_EPROTO;
    switch (h->type) {
    case HVT_MSG_WELCOME: return h->len == sizeof(struct hvt_welcome) ? 0 : STREAM_EPROTO;
    case HVT_MSG_ACK:     return h->len == sizeof(struct hvt_ack) ? 0 : STREAM_EPROTO;
    case HVT_MSG_CTL_REQ:
        if (h->len > STREAM_RX_MAX) {
            sc->cnt.ctl_malformed++;       /* too big to even hold: refuse by disconnecting */
            return STREAM_EPROTO;
        }
        return 0;
    }
    return STREAM_EPROTO;
}

int stream_core_rx(struct stream_core *sc, const void *data, size_t n)
{
    const uint8_t *p = data;
    const size_t hl = sizeof(struct hvt_msg_hdr);
    if (sc->state == STREAM_DOWN)
        return STREAM_EPROTO;
    while (n > 0) {
        size_t tl = sc->auth_flags ? HVT_STREAM_TAG_LEN : 0;
        size_t want = hl;
        if (sc->rx_have >= hl)
            want = hl + ((const struct hvt_msg_hdr *)sc->rx_buf)->len + tl;
        size_t take = want - sc->rx_have < n ? want - sc->rx_have : n;
        memcpy(sc->rx_buf + sc->rx_have, p, take);
        sc->rx_have += (uint32_t)take;
        p += take;
        n -= take;
        if (sc->rx_have == hl) {
            struct hvt_msg_hdr h;
            memcpy(&h, sc->rx_buf, hl);
            if (rx_check_header(sc, &h) != 0) {
                sc->cnt.protocol_errors++;
                sc->rx_have = 0;
                return STREAM_EPROTO;
            }
            want = hl + h.len + tl;
        }
        if (sc->rx_have >= hl && sc->rx_have == want) {
            struct hvt_msg_hdr h;
            memcpy(&h, sc->rx_buf, hl);
            sc->rx_have = 0;
            /* the tag first: nothing of a message that fails it is used */
            if (tl && !ctl_open(sc->skey, HVT_NONCE_TO_HV, sc->conn_no, sc->rx_index++, sc->rx_buf,
                                h.len, sc->auth_flags & HVT_HELLO_ENCRYPT)) {
                sc->cnt.bad_tags++;
                return STREAM_EPROTO;
            }
            int r = rx_message(sc, &h, sc->rx_buf + hl);
            if (r != 0) {
                sc->cnt.protocol_errors++;
                return r;
            }
        }
    }
    return 0;
}

/*
 * Ring messages with their tags. Messages are gathered into tx_scratch with the tag after each
 * (computed as the bytes are copied: the header as aad, the payload clear or encrypted) and the
 * scratch goes to the transport in as few writes as it takes: one write per message and tag
 * would cost a transport call each. A message is immutable in the ring until acknowledged, so a
 * resend after a reconnect, which starts at a message boundary, produces the same bytes and tag.
 * sc->send counts ring bytes gathered; what is gathered but not yet written is dropped with the
 * connection (the next WELCOME says where to resume).
 */
static void tx_gather(struct stream_core *sc, uint64_t head)
{
    const size_t hl = sizeof(struct hvt_msg_hdr);
    const bool enc = sc->auth_flags & HVT_HELLO_ENCRYPT;
    uint8_t *out = sc->tx_scratch;
    size_t len = 0;
    while (len < STREAM_TX_SCRATCH) {
        if (!sc->tx_active) {
            if (sc->send == head)
                break;
            struct hvt_msg_hdr h;
            uint8_t nonce[AEAD_NONCE_LEN];
            ring_get(sc, sc->send, &h, hl);
            sc->tx_start = sc->send;
            sc->tx_end = sc->send + hl + h.len;
            hvt_stream_nonce(nonce, HVT_NONCE_SEQ, sc->send, 0);
            aead_begin(&sc->tx_aead, sc->skey, nonce);
            aead_aad(&sc->tx_aead, &h, hl);
            sc->tx_tag_sent = 0;
            sc->tx_active = true;
        }
        if (sc->send == sc->tx_end) {
            if (sc->tx_tag_sent == 0)
                aead_end(&sc->tx_aead, sc->tx_tag);
            size_t n = HVT_STREAM_TAG_LEN - sc->tx_tag_sent;
            if (n > STREAM_TX_SCRATCH - len)
                n = STREAM_TX_SCRATCH - len;
            memcpy(out + len, sc->tx_tag + sc->tx_tag_sent, n);
            len += n;
            sc->tx_tag_sent += (uint32_t)n;
            if (sc->tx_tag_sent == HVT_STREAM_TAG_LEN)
                sc->tx_active = false;
            continue;
        }
        /* the next piece: within the header or within the payload, up to the ring's end */
        uint64_t stop = sc->send < sc->tx_start + hl ? sc->tx_start + hl : sc->tx_end;
        uint64_t at = sc->send & (sc->size - 1);
        uint64_t n = stop - sc->send;
        if (n > sc->size - at)
            n = sc->size - at;
        if (n > STREAM_TX_SCRATCH - len)
            n = STREAM_TX_SCRATCH - len;
        if (sc->send >= sc->tx_start + hl) {
            if (enc)
                aead_crypt(&sc->tx_aead, sc->send - sc->tx_start - hl, sc->ring + at, out + len, (size_t)n);
            else
                memcpy(out + len, sc->ring + at, (size_t)n);
            aead_mac(&sc->tx_aead, out + len, (size_t)n);
        } else {
            memcpy(out + len, sc->ring + at, (size_t)n);   /* header: already in the tag as aad */
        }
        len += (size_t)n;
        sc->send += n;
    }
    sc->tx_pend_at = 0;
    sc->tx_pend_len = (uint32_t)len;
}

static size_t tx_tagged(struct stream_core *sc, const struct stream_transport *t)
{
    size_t total = 0;
    for (;;) {
        if (sc->tx_pend_at == sc->tx_pend_len) {
            tx_gather(sc, load_acq(&sc->head));
            if (sc->tx_pend_len == 0)
                break;
        }
        size_t room = t->room(t->ctx);
        size_t n = sc->tx_pend_len - sc->tx_pend_at;
        if (n > room)
            n = room;
        size_t w = n ? t->write(t->ctx, sc->tx_scratch + sc->tx_pend_at, n) : 0;
        if (w == 0)
            break;
        sc->tx_pend_at += (uint32_t)w;
        total += w;
    }
    return total;
}

size_t stream_core_tx(struct stream_core *sc, const struct stream_transport *t)
{
    size_t total = 0;
    if (sc->state == STREAM_HELLO) {
        size_t room = t->room(t->ctx);
        size_t n = sc->hello_len - sc->hello_sent;
        if (n > room)
            n = room;
        size_t w = n ? t->write(t->ctx, sc->hello_buf + sc->hello_sent, n) : 0;
        sc->hello_sent += (uint32_t)w;
        total += w;
        if (sc->hello_sent == sc->hello_len)
            sc->state = STREAM_WAIT_WELCOME;
    }
    if (sc->state != STREAM_UP)
        return total;
    if (sc->auth_flags)
        return total + tx_tagged(sc, t);
    uint64_t head = load_acq(&sc->head);
    while (sc->send < head) {
        size_t room = t->room(t->ctx);
        if (room == 0)
            break;
        uint64_t at = sc->send & (sc->size - 1);
        uint64_t n = head - sc->send;
        if (n > sc->size - at)
            n = sc->size - at;                 /* up to the end of the ring, then wrap */
        if (n > room)
            n = room;
        size_t w = t->write(t->ctx, sc->ring + at, (size_t)n);
        if (w == 0)
            break;
        sc->send += w;
        total += w;
    }
    return total;
}
