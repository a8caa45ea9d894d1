#define _GNU_SOURCE
/*
 * test_net.c - host unit tests of the portable net/ code (SHA-256/HMAC, control messages,
 * boot configuration, the send ring / protocol core) and of the collector's stream parser.
 * The net/ files are compiled with -DHVT_HOST: the same source the hypervisor runs.
 * Closing line: "N passed, N failed".
 */
#include "sha256.h"
#include "ctl.h"
#include "net_config.h"
#include "stream_core.h"
#include "coll_parse.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"

static const char *g_seed_dir;      /* NET_SEED_DIR: write fuzzing seeds from the test streams */

static void write_seed(const char *sub, const char *name, const void *pre, size_t pn,
                       const void *p, size_t n)
{
    if (!g_seed_dir)
        return;
    char path[512];
    snprintf(path, sizeof path, "%s/%s/%s", g_seed_dir, sub, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fwrite(pre, 1, pn, f);
    fwrite(p, 1, n, f);
    fclose(f);
}

static void hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

static bool digest_is(const uint8_t *d, const char *want)
{
    char h[65];
    hex(d, 32, h);
    return strcmp(h, want) == 0;
}

static void test_sha256(void)
{
    uint8_t d[32];
    sha256("", 0, d);
    CHECK(digest_is(d, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    sha256("abc", 3, d);
    CHECK(digest_is(d, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
    const char *m2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256(m2, strlen(m2), d);
    CHECK(digest_is(d, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
    /* one million 'a', fed in odd-sized pieces to exercise the block buffer */
    struct sha256_ctx c;
    sha256_init(&c);
    char a[997];
    memset(a, 'a', sizeof a);
    size_t left = 1000000;
    while (left) {
        size_t n = left < sizeof a ? left : sizeof a;
        sha256_update(&c, a, n);
        left -= n;
    }
    sha256_final(&c, d);
    CHECK(digest_is(d, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
}

static void test_hmac(void)
{
    /* RFC 4231 test cases 1, 2, 3, 4, 6, 7 */
    uint8_t k[131], dta[160], d[32];
    memset(k, 0x0b, 20);
    hmac_sha256(k, 20, "Hi There", 8, d);
    CHECK(digest_is(d, "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"));
    hmac_sha256("Jefe", 4, "what do ya want for nothing?", 28, d);
    CHECK(digest_is(d, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"));
    memset(k, 0xaa, 20);
    memset(dta, 0xdd, 50);
    hmac_sha256(k, 20, dta, 50, d);
    CHECK(digest_is(d, "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"));
    for (int i = 0; i < 25; i++)
        k[i] = (uint8_t)(i + 1);
    memset(dta, 0xcd, 50);
    hmac_sha256(k, 25, dta, 50, d);
    CHECK(digest_is(d, "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"));
    memset(k, 0xaa, 131);
    const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    hmac_sha256(k, 131, m6, strlen(m6), d);
    CHECK(digest_is(d, "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"));
    const char *m7 = "This is a test using a larger than block-size key and a larger than "
                     "block-size data. The key needs to be hashed before being used by the "
                     "HMAC algorithm.";
    hmac_sha256(k, 131, m7, strlen(m7), d);
    CHECK(digest_is(d, "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"));
    uint8_t x[4] = { 1, 2, 3, 4 }, y[4] = { 1, 2, 3, 5 };
    CHECK(hmac_sha256_equal(x, x, 4));
    CHECK(!hmac_sha256_equal(x, y, 4));
}

static const uint8_t BOOT[HVT_BOOT_ID_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
static const char KEYHEX[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

static void test_ctl(void)
{
    struct ctl_key key, other, none = { .len = 0 };
    CHECK(ctl_key_from_hex(&key, KEYHEX, strlen(KEYHEX)) == 0 && key.len == 32);
    CHECK(ctl_key_from_hex(&other, "00", 2) < 0);                      /* too short */
    CHECK(ctl_key_from_hex(&other, "zz0102030405060708090a0b0c0d0e0f", 32) < 0);
    CHECK(ctl_key_from_hex(&other, "ff0102030405060708090a0b0c0d0e0f", 32) == 0);
    uint8_t buf[2048];
    size_t n = ctl_build(buf, HVT_MSG_CTL_REQ, HVT_CPU_NONE, &key, BOOT, 7, HVT_CTL_PING, 0, "hi", 2);
    CHECK(n == ctl_msg_size(2));
    struct hvt_msg_hdr h;
    memcpy(&h, buf, sizeof h);
    const uint8_t *pl = buf + sizeof h;
    struct ctl_msg m;
    CHECK(ctl_parse(&h, pl, &key, BOOT, 7, &m) == HVT_CTL_OK && m.ctl.cmd == HVT_CTL_PING &&
          m.ctl.data_len == 2 && !memcmp(m.data, "hi", 2));
    CHECK(ctl_parse(&h, pl, &key, BOOT, 8, &m) == HVT_CTL_EREPLAY);     /* seq below window */
    CHECK(ctl_parse(&h, pl, &other, BOOT, 0, &m) == HVT_CTL_EAUTH);     /* wrong key */
    CHECK(ctl_parse(&h, pl, &none, BOOT, 0, &m) == HVT_CTL_EAUTH);      /* no key configured */
    uint8_t boot2[HVT_BOOT_ID_LEN] = { 0 };
    CHECK(ctl_parse(&h, pl, &key, boot2, 0, &m) == HVT_CTL_EAUTH);      /* other boot */
    buf[sizeof h + sizeof(struct hvt_ctl)] ^= 1;                         /* flip a data bit */
    CHECK(ctl_parse(&h, pl, &key, BOOT, 0, &m) == HVT_CTL_EAUTH);
    buf[sizeof h + sizeof(struct hvt_ctl)] ^= 1;
    struct hvt_msg_hdr h2 = h;
    h2.type = HVT_MSG_CTL_REPLY;                                        /* request as reply */
    CHECK(ctl_parse(&h2, pl, &key, BOOT, 0, &m) == HVT_CTL_EAUTH);
    h2 = h;
    h2.seq = 99; h2.off = 1234;                                         /* ring fields not covered */
    CHECK(ctl_parse(&h2, pl, &key, BOOT, 0, &m) == HVT_CTL_OK);
    h2 = h;
    h2.len = 10;                                                        /* shorter than hvt_ctl+tag */
    CHECK(ctl_parse(&h2, pl, &key, BOOT, 0, &m) == HVT_CTL_EMALFORMED);
    h2 = h;
    h2.len += 1;                                                        /* data_len disagrees */
    CHECK(ctl_parse(&h2, pl, &key, BOOT, 0, &m) == HVT_CTL_EMALFORMED);
    struct hvt_ctl big = { .data_len = 0xffffffffu };
    memcpy(buf + sizeof h, &big, sizeof big);
    CHECK(ctl_parse(&h, pl, &key, BOOT, 0, &m) == HVT_CTL_EMALFORMED);
}

static void test_config(void)
{
    struct net_config c;
    char err[128];
    CHECK(net_config_parse(&c, "", 0, err, sizeof err) == 0 && c.enabled &&
          c.nic_sel == NET_NIC_AUTO && c.ip[3] == 15 && c.collector_port == HVT_STREAM_DEFAULT_PORT &&
          c.key.len == 0 && c.ring_kb == 4096 && c.link_timeout_ms == NET_DEFAULT_LINK_TIMEOUT_MS);
    const char *s = "nic=00:03.0 ip=192.168.7.9,netmask=255.255.0.0;gw=192.168.0.1\n"
                    "collector=192.168.0.2:9000 key=000102030405060708090a0b0c0d0e0f overflow=drop "
                    "ring_kb=3000 trace=on tsc_khz=50000 selftest_kb=1024 link_timeout_ms=0";
    CHECK(net_config_parse(&c, s, strlen(s), err, sizeof err) == 0);
    CHECK(c.nic_sel == NET_NIC_PCI && c.pci_bus == 0 && c.pci_dev == 3 && c.pci_fn == 0);
    CHECK(c.ip[0] == 192 && c.ip[3] == 9 && c.netmask[1] == 255 && c.netmask[2] == 0 && c.gw[3] == 1);
    CHECK(c.collector_ip[3] == 2 && c.collector_port == 9000 && c.key.len == 16);
    CHECK(c.overflow_drop && c.ring_kb == 4096 && c.unknown_count == 1 && !strcmp(c.unknown, "trace"));
    CHECK(c.tsc_khz == 50000 && c.selftest_kb == 1024 && c.link_timeout_ms == 0);
    s = "nic=52:54:00:12:34:56";
    CHECK(net_config_parse(&c, s, strlen(s), err, sizeof err) == 0 && c.nic_sel == NET_NIC_MAC &&
          c.mac[0] == 0x52 && c.mac[5] == 0x56);
    const char *bad[] = { "ip=1.2.3", "ip=1.2.3.256", "collector=1.2.3.4", "collector=1.2.3.4:0",
                          "collector=1.2.3.4:65536", "nic=00:20.0", "nic=00:03.8", "key=abc",
                          "overflow=maybe", "ring_kb=1", "ring_kb=1024", "net=yes", "novalue", "ip=1.2.3.4x",
                          "tsc_khz=fast", "link_timeout_ms=soon", "link_timeout_ms=3600001" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int r = net_config_parse(&c, bad[i], strlen(bad[i]), err, sizeof err);
        CHECK(r < 0 && strstr(err, "net config: bad value"));
        if (r == 0)
            fprintf(stderr, "  accepted: %s\n", bad[i]);
    }
    CHECK(net_config_parse(&c, "net=off", 7, err, sizeof err) == 0 && !c.enabled);
}

/* ---- stream_core: a transport into a memory buffer ---- */
struct memt {
    uint8_t buf[1 << 20];
    size_t len, limit;
};
static size_t memt_room(void *ctx) { struct memt *m = ctx; return m->limit - m->len; }
static size_t memt_write(void *ctx, const void *p, size_t n)
{
    struct memt *m = ctx;
    if (n > m->limit - m->len)
        n = m->limit - m->len;
    memcpy(m->buf + m->len, p, n);
    m->len += n;
    return n;
}

static size_t put_unseq(uint8_t *b, uint16_t type, const void *pl, uint32_t len)
{
    struct hvt_msg_hdr h = { .magic = HVT_STREAM_MAGIC, .version = HVT_STREAM_VERSION,
                             .hdr_len = sizeof h, .type = type, .len = len, .cpu = HVT_CPU_NONE };
    memcpy(b, &h, sizeof h);
    memcpy(b + sizeof h, pl, len);
    return sizeof h + len;
}

static int welcome(struct stream_core *sc, uint64_t off)
{
    struct hvt_welcome w;
    memcpy(w.boot_id, BOOT, sizeof w.boot_id);
    w.resume_off = off;
    uint8_t b[64];
    size_t n = put_unseq(b, HVT_MSG_WELCOME, &w, sizeof w);
    return stream_core_rx(sc, b, n);
}

static int ack(struct stream_core *sc, uint64_t off)
{
    struct hvt_ack a = { .persisted_off = off };
    uint8_t b[64];
    size_t n = put_unseq(b, HVT_MSG_ACK, &a, sizeof a);
    return stream_core_rx(sc, b, n);
}

struct parsed {
    int msgs, hellos;
    uint64_t last_off;
    uint8_t console[4096];
    size_t console_len;
    int ctl_status[8];
    int nctl;
};
static int sink_hello(void *ctx, const struct hvt_hello *h, const char *t, size_t n)
{
    ((struct parsed *)ctx)->hellos++;
    return 0;
}
static void sink_msg(void *ctx, const struct hvt_msg_hdr *h, const uint8_t *pl, const uint8_t *raw)
{
    struct parsed *p = ctx;
    p->msgs++;
    p->last_off = h->off;
    if (h->type == HVT_MSG_CONSOLE && p->console_len + h->len <= sizeof p->console) {
        memcpy(p->console + p->console_len, pl, h->len);
        p->console_len += h->len;
    }
    if (h->type == HVT_MSG_CTL_REPLY && p->nctl < 8) {
        struct hvt_ctl c;
        memcpy(&c, pl, sizeof c);
        p->ctl_status[p->nctl++] = c.status;
    }
}

static void test_stream_core(void)
{
    static struct stream_core sc;
    static uint8_t ring[64 << 10];
    static struct memt mt;
    struct ctl_key key;
    ctl_key_from_hex(&key, KEYHEX, strlen(KEYHEX));
    CHECK(stream_core_init(&sc, ring, 1000, 2, BOOT, &key, 1, 0) == STREAM_EINVAL);  /* not 2^n */
    CHECK(stream_core_init(&sc, ring, sizeof ring, 2, BOOT, &key, 1, 0) == 0);
    CHECK(sc.auth_flags == HVT_HELLO_AUTH);              /* a key: tags on by default */
    /* the framing and control without session tags here; test_session covers them */
    CHECK(stream_core_set_auth(&sc, false, false) == 0 && sc.auth_flags == 0);
    stream_core_set_hello_text(&sc, "a=b\n", 4);
    struct stream_transport t = { .ctx = &mt, .room = memt_room, .write = memt_write };
    mt.limit = sizeof mt.buf;
    CHECK(stream_core_append(&sc, 2, HVT_MSG_CONSOLE, "x", 1) == STREAM_EINVAL);   /* bad cpu */
    CHECK(stream_core_append(&sc, 0, HVT_MSG_CONSOLE, ring, sizeof ring) == STREAM_EINVAL);
    /* fill the ring up to the control reserve: then backpressure */
    uint8_t payload[1000];
    memset(payload, 'p', sizeof payload);
    int appended = 0;
    while (stream_core_append(&sc, appended % 2, HVT_MSG_CONSOLE, payload, sizeof payload) == 0)
        appended++;
    uint64_t cap = (sizeof ring - STREAM_CTL_RESERVE) / (32 + sizeof payload);
    CHECK((uint64_t)appended == cap);
    CHECK(stream_core_free(&sc) < 32 + sizeof payload);
    /* nothing goes out before connect + WELCOME */
    CHECK(stream_core_tx(&sc, &t) == 0);
    stream_core_connected(&sc);
    stream_core_tx(&sc, &t);
    CHECK(sc.state == STREAM_WAIT_WELCOME && mt.len == 32 + sizeof(struct hvt_hello) + 4);
    CHECK(ack(&sc, 0) == STREAM_EPROTO);                                 /* ACK before WELCOME */
    stream_core_connected(&sc);
    mt.len = 0;
    stream_core_tx(&sc, &t);
    CHECK(welcome(&sc, 5) == STREAM_EPROTO);                             /* not a boundary */
    stream_core_connected(&sc);
    mt.len = 0;
    stream_core_tx(&sc, &t);
    CHECK(welcome(&sc, 0) == 0 && sc.state == STREAM_UP);
    CHECK(welcome(&sc, 0) == STREAM_EPROTO);                             /* second WELCOME */
    stream_core_connected(&sc);
    mt.len = 0;
    stream_core_tx(&sc, &t);
    CHECK(welcome(&sc, 0) == 0);
    /* send with a tight transport: partial writes must still produce a parseable stream */
    mt.limit = mt.len + 777;
    stream_core_tx(&sc, &t);
    CHECK(mt.len == mt.limit);
    mt.limit = sizeof mt.buf;
    stream_core_tx(&sc, &t);
    CHECK(sc.send == sc.head);
    CHECK(ack(&sc, sc.head + 1) == STREAM_EPROTO);                       /* acks the unsent */
    stream_core_connected(&sc);
    mt.len = 0;
    stream_core_tx(&sc, &t);
    CHECK(welcome(&sc, 0) == 0);
    stream_core_tx(&sc, &t);
    /* parse what was sent with the collector's parser */
    static struct coll_parser p;
    struct parsed pd = { 0 };
    struct coll_sink sink = { .ctx = &pd, .on_hello = sink_hello, .on_msg = sink_msg };
    coll_parse_init(&p, &key);
    p.allow_unauth = true;                   /* this hypervisor runs with auth off */
    size_t used;
    CHECK(coll_parse_feed(&p, mt.buf, mt.len, &used, &sink) == 0 && used == mt.len);
    write_seed("coll_parse", "stream-full", "\x40", 1, mt.buf, mt.len > 8192 ? 8192 : mt.len);
    CHECK(pd.hellos == 1 && pd.msgs == appended && p.c.gap_events == 0 && p.c.gap_msgs == 0);
    /* ack half: free space appears, tail moves; wrap-around append and resend */
    uint64_t half = 0;
    for (int i = 0; i < appended / 2; i++)
        half += 32 + sizeof payload;
    CHECK(ack(&sc, half) == 0 && sc.tail == half);
    CHECK(ack(&sc, 10) == 0 && sc.tail == half);                         /* stale ack ignored */
    int more = 0;
    while (stream_core_append(&sc, 1, HVT_MSG_CONSOLE, payload, sizeof payload) == 0)
        more++;
    CHECK(more == appended / 2);
    /* reconnect: the collector had persisted only up to `half`: the resend starts there */
    stream_core_disconnected(&sc);
    stream_core_connected(&sc);
    mt.len = 0;
    stream_core_tx(&sc, &t);
    size_t hello_len = mt.len;
    CHECK(welcome(&sc, half) == 0 && sc.send == half);
    stream_core_tx(&sc, &t);
    coll_parse_new_connection(&p);
    coll_parse_expect(&p, half, NULL, 0);
    memset(&pd, 0, sizeof pd);
    CHECK(coll_parse_feed(&p, mt.buf, mt.len, &used, &sink) == 0 && used == mt.len);
    CHECK(pd.msgs == appended - appended / 2 + more && p.c.gap_events == 0);
    (void)hello_len;
    /* the reserve: control replies still fit when the ring is full for data */
    CHECK(stream_core_append(&sc, 0, HVT_MSG_CONSOLE, payload, sizeof payload) == STREAM_EAGAIN);
    uint8_t req[512];
    size_t rn = ctl_build(req, HVT_MSG_CTL_REQ, HVT_CPU_NONE, &key, BOOT, 1, HVT_CTL_PING, 0, "abc", 3);
    uint64_t head0 = sc.head;
    {
        uint8_t w[256];
        struct hvt_welcome wl;
        memcpy(wl.boot_id, BOOT, sizeof wl.boot_id);
        wl.resume_off = 0;
        size_t wn = put_unseq(w, HVT_MSG_WELCOME, &wl, sizeof wl);
        memcpy(w + wn, req, rn);
        write_seed("ctl", "welcome-ping", "\x01\x3f", 2, w, wn + rn);
        write_seed("ctl", "ping-raw", "\x00\x07", 2, req, rn);
    }
    CHECK(stream_core_rx(&sc, req, rn) == 0 && sc.head > head0 && sc.cnt.ctl_accepted == 1);
    CHECK(stream_core_rx(&sc, req, rn) == 0 && sc.cnt.ctl_replayed == 1);  /* replay refused */
    struct ctl_key wrong = key;
    wrong.bytes[3] ^= 0x40;
    rn = ctl_build(req, HVT_MSG_CTL_REQ, HVT_CPU_NONE, &wrong, BOOT, 2, HVT_CTL_PING, 0, "abc", 3);
    CHECK(stream_core_rx(&sc, req, rn) == 0 && sc.cnt.ctl_bad_auth == 1);
    rn = ctl_build(req, HVT_MSG_CTL_REQ, HVT_CPU_NONE, &key, BOOT, 3, 77, 0, NULL, 0);
    CHECK(stream_core_rx(&sc, req, rn) == 0 && sc.cnt.ctl_accepted == 2);   /* ENOSYS, accepted */
    /* byte-at-a-time delivery of a request works too */
    rn = ctl_build(req, HVT_MSG_CTL_REQ, HVT_CPU_NONE, &key, BOOT, 4, HVT_CTL_PING, 0, "z", 1);
    for (size_t i = 0; i < rn; i++)
        stream_core_rx(&sc, req + i, 1);
    CHECK(sc.cnt.ctl_accepted == 3);
    /* the replies are in the stream, tagged: the collector parser verifies them */
    size_t before = mt.len;
    stream_core_tx(&sc, &t);
    write_seed("coll_parse", "replies", "\x00", 1, mt.buf, mt.len > 8192 ? 8192 : mt.len);
    memset(&pd, 0, sizeof pd);
    CHECK(coll_parse_feed(&p, mt.buf + before, mt.len - before, &used, &sink) == 0);
    CHECK(pd.nctl == 5 && pd.ctl_status[0] == HVT_CTL_OK && pd.ctl_status[1] == HVT_CTL_EREPLAY &&
          pd.ctl_status[2] == HVT_CTL_EAUTH && pd.ctl_status[3] == HVT_CTL_ENOSYS &&
          pd.ctl_status[4] == HVT_CTL_OK && p.c.ctl_bad_tag == 0);
    /* an oversized control request is a protocol error (connection closed), and counted */
    struct hvt_msg_hdr hh = { .magic = HVT_STREAM_MAGIC, .version = HVT_STREAM_VERSION,
                              .hdr_len = 32, .type = HVT_MSG_CTL_REQ, .len = 1 << 20, .cpu = HVT_CPU_NONE };
    CHECK(stream_core_rx(&sc, &hh, sizeof hh) == STREAM_EPROTO && sc.cnt.ctl_malformed == 1);
    /* a collector that lost everything (resume 0) gets the oldest held data; the gap is counted */
    stream_core_connected(&sc);
    mt.len = 0;
    stream_core_tx(&sc, &t);
    CHECK(welcome(&sc, 0) == 0 && sc.send == half && sc.cnt.resume_skipped_bytes == half);
    stream_core_tx(&sc, &t);
    static struct coll_parser p2;
    coll_parse_init(&p2, &key);
    p2.allow_unauth = true;
    memset(&pd, 0, sizeof pd);
    CHECK(coll_parse_feed(&p2, mt.buf, mt.len, &used, &sink) == 0);
    CHECK(p2.c.gap_events == 1 && p2.c.gap_bytes == half && p2.c.gap_msgs == (uint64_t)appended / 2);
}

static size_t put_seq(uint8_t *b, uint16_t type, uint32_t len, uint16_t cpu, uint64_t seq, uint64_t off)
{
    struct hvt_msg_hdr h = { .magic = HVT_STREAM_MAGIC, .version = HVT_STREAM_VERSION,
                             .hdr_len = sizeof h, .type = type, .len = len, .cpu = cpu,
                             .seq = seq, .off = off };
    memcpy(b, &h, sizeof h);
    memset(b + sizeof h, 'c', len);
    return sizeof h + len;
}

static size_t put_hello(uint8_t *b, uint16_t cpus)
{
    struct hvt_hello he = { .cpu_count = cpus, .ring_size = 4096 };
    memcpy(he.boot_id, BOOT, sizeof he.boot_id);
    return put_unseq(b, HVT_MSG_HELLO, &he, sizeof he);
}

static int parse_all(const uint8_t *b, size_t n, struct coll_parser *p)
{
    struct parsed pd = { 0 };
    struct coll_sink sink = { .ctx = &pd, .on_hello = sink_hello, .on_msg = sink_msg };
    coll_parse_init(p, NULL);
    size_t used;
    static uint8_t copy[65536];            /* the parser rewrites what it consumed */
    if (n > sizeof copy)
        return -100;
    memcpy(copy, b, n);
    return coll_parse_feed(p, copy, n, &used, &sink);
}

static void test_coll_parse(void)
{
    static struct coll_parser p;
    uint8_t b[4096];
    size_t n = put_hello(b, 2);
    n += put_seq(b + n, HVT_MSG_CONSOLE, 3, 0, 0, 0);
    n += put_seq(b + n, HVT_MSG_CONSOLE, 4, 1, 0, 35);
    n += put_seq(b + n, HVT_MSG_CONSOLE, 1, 0, 1, 71);
    CHECK(parse_all(b, n, &p) == 0 && p.c.msgs == 3 && p.c.console_bytes == 8 && p.next_off == 104);
    /* split at every position: same result, nothing delivered twice */
    for (size_t cut = 1; cut < n; cut++) {
        struct parsed pd = { 0 };
        struct coll_sink sink = { .ctx = &pd, .on_hello = sink_hello, .on_msg = sink_msg };
        coll_parse_init(&p, NULL);
        uint8_t tmp[4096];
        size_t used, have = cut;
        memcpy(tmp, b, cut);
        int r1 = coll_parse_feed(&p, tmp, have, &used, &sink);
        memmove(tmp, tmp + used, have - used);
        have -= used;
        memcpy(tmp + have, b + cut, n - cut);
        have += n - cut;
        int r2 = coll_parse_feed(&p, tmp, have, &used, &sink);
        if (!(r1 == 0 && r2 == 0 && used == have && pd.msgs == 3 && pd.console_len == 8)) {
            CHECK(!"split parse");
            break;
        }
    }
    check_passed++;
    /* gaps: an offset/seq jump is counted, not an error */
    n = put_hello(b, 2);
    n += put_seq(b + n, HVT_MSG_CONSOLE, 3, 0, 0, 0);
    n += put_seq(b + n, HVT_MSG_CONSOLE, 3, 0, 5, 500);
    CHECK(parse_all(b, n, &p) == 0 && p.c.gap_events == 1 && p.c.gap_bytes == 465 && p.c.gap_msgs == 4);
    /* malformed inputs, each with a reason */
    struct { const char *why; size_t n; } cases[12];
    int nc = 0;
    uint8_t bad[12][512];
    /* 0: garbage */
    memcpy(bad[nc], "GET / HTTP/1.1\r\n\r\nxxxxxxxxxxxxxxxxxxxxxxxxxxxx", 46);
    cases[nc].why = "bad magic"; cases[nc++].n = 46;
    /* 1: sequenced before HELLO */
    cases[nc].why = "expected HELLO"; cases[nc].n = put_seq(bad[nc], HVT_MSG_CONSOLE, 1, 0, 0, 0); nc++;
    /* 2: cpu out of range */
    n = put_hello(bad[nc], 2); n += put_seq(bad[nc] + n, HVT_MSG_CONSOLE, 1, 2, 0, 0);
    cases[nc].why = "announced 2 CPUs"; cases[nc++].n = n;
    /* 3: rewind */
    n = put_hello(bad[nc], 2); n += put_seq(bad[nc] + n, HVT_MSG_CONSOLE, 1, 0, 0, 0);
    n += put_seq(bad[nc] + n, HVT_MSG_CONSOLE, 1, 0, 1, 0);
    cases[nc].why = "rewinds"; cases[nc++].n = n;
    /* 4: huge length */
    n = put_hello(bad[nc], 2);
    struct hvt_msg_hdr hh = { .magic = HVT_STREAM_MAGIC, .version = HVT_STREAM_VERSION, .hdr_len = 32,
                              .type = HVT_MSG_TRACE, .len = HVT_STREAM_MAX_PAYLOAD + 1 };
    memcpy(bad[nc] + n, &hh, 32); n += 32;
    cases[nc].why = "exceeds"; cases[nc++].n = n;
    /* 5: wrong version */
    hh.version = HVT_STREAM_VERSION + 1; hh.len = 0;
    memcpy(bad[nc], &hh, 32);
    static char wrong_version[32];             /* the error names the version received */
    snprintf(wrong_version, sizeof wrong_version, "protocol version %u", HVT_STREAM_VERSION + 1);
    cases[nc].why = wrong_version; cases[nc++].n = 32;
    /* 6: unknown type */
    n = put_hello(bad[nc], 2); n += put_seq(bad[nc] + n, 0x7777, 0, 0, 0, 0);
    cases[nc].why = "unknown message type"; cases[nc++].n = n;
    /* 7: LOSS of the wrong size */
    n = put_hello(bad[nc], 2); n += put_seq(bad[nc] + n, HVT_MSG_LOSS, 3, 0, 0, 0);
    cases[nc].why = "LOSS has 3 bytes"; cases[nc++].n = n;
    /* 8: second HELLO */
    n = put_hello(bad[nc], 2); n += put_hello(bad[nc] + n, 2);
    cases[nc].why = "unsequenced HELLO"; cases[nc++].n = n;
    /* 9: HELLO with 0 CPUs */
    cases[nc].why = "cpu_count 0"; cases[nc].n = put_hello(bad[nc], 0); nc++;
    /* 10: short HELLO */
    cases[nc].why = "HELLO too short"; cases[nc].n = put_seq(bad[nc], HVT_MSG_HELLO, 8, HVT_CPU_NONE, 0, 0); nc++;
    /* 11: CTL_REPLY with inconsistent lengths */
    n = put_hello(bad[nc], 2); n += put_seq(bad[nc] + n, HVT_MSG_CTL_REPLY, 48, 0, 0, 0);
    cases[nc].why = "CTL_REPLY with inconsistent"; cases[nc++].n = n;
    for (int i = 0; i < nc; i++) {
        int r = parse_all(bad[i], cases[i].n, &p);
        bool ok = r == COLL_EMALFORMED && strstr(p.err, cases[i].why);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "  case %d: r=%d err='%s' (want '%s')\n", i, r, p.err, cases[i].why);
    }
}


/* ---- session tags: the hypervisor's core against the collector's parser ---- */
struct sess_sink { int msgs, hellos; const uint8_t *next_raw; bool contiguous; uint8_t got[8192]; size_t got_len; };
static int ss_hello(void *ctx, const struct hvt_hello *h, const char *t, size_t n)
{
    ((struct sess_sink *)ctx)->hellos++;
    return 0;
}
static void ss_msg(void *ctx, const struct hvt_msg_hdr *h, const uint8_t *pl, const uint8_t *raw)
{
    struct sess_sink *k = ctx;
    if (k->next_raw && raw != k->next_raw)
        k->contiguous = false;
    k->next_raw = raw + sizeof *h + h->len;
    k->msgs++;
    if (h->type == HVT_MSG_CONSOLE && k->got_len + h->len <= sizeof k->got) {
        memcpy(k->got + k->got_len, pl, h->len);
        k->got_len += h->len;
    }
}

/* The collector's answer on this connection: sealed by its parser's session. */
static int to_hv(struct stream_core *sc, struct coll_parser *p, uint16_t type, const void *pl,
                 uint32_t len, bool damage)
{
    uint8_t b[256];
    size_t n = put_unseq(b, type, pl, len);
    n = coll_parse_seal(p, b, n);
    if (damage)
        b[n - 3] ^= 1;
    return stream_core_rx(sc, b, n);
}

static void session_case(bool encrypt)
{
    static struct stream_core sc;
    static uint8_t ring[64 << 10];
    static struct memt mt;
    static struct coll_parser p;
    struct ctl_key key, other;
    ctl_key_from_hex(&key, KEYHEX, strlen(KEYHEX));
    ctl_key_from_hex(&other, "ff0102030405060708090a0b0c0d0e0f", 32);
    CHECK(stream_core_init(&sc, ring, sizeof ring, 2, BOOT, &key, 1, 0) == 0);
    CHECK(stream_core_set_auth(&sc, true, encrypt) == 0);
    struct stream_transport t = { .ctx = &mt, .room = memt_room, .write = memt_write };
    const char *secret = "SECRET-PAYLOAD-0123456789";
    int n_msgs = 0;
    for (int i = 0; i < 40; i++, n_msgs++)
        CHECK(stream_core_append(&sc, i % 2, HVT_MSG_CONSOLE, secret, strlen(secret)) == 0);
    memset(&mt, 0, sizeof mt);
    mt.limit = sizeof mt.buf;
    stream_core_connected(&sc);
    stream_core_tx(&sc, &t);
    size_t hello_end = mt.len;
    /* the HELLO verifies on its own (a connection held aside), not under another key */
    struct hvt_hello hh;
    char err[200];
    uint8_t copy[2048];
    memcpy(copy, mt.buf, hello_end);
    CHECK(coll_parse_hello_verify(&key, copy, hello_end, &hh, err, sizeof err) == 0 &&
          hh.connection == 0 && (hh.hello_flags & HVT_HELLO_AUTH));
    memcpy(copy, mt.buf, hello_end);
    CHECK(coll_parse_hello_verify(&other, copy, hello_end, &hh, err, sizeof err) < 0 &&
          strstr(err, "does not verify"));
    coll_parse_init(&p, &key);
    struct sess_sink k = { .contiguous = true };
    struct coll_sink sink = { .ctx = &k, .on_hello = ss_hello, .on_msg = ss_msg };
    size_t used;
    static uint8_t wire[1 << 20];
    memcpy(wire, mt.buf, mt.len);
    CHECK(coll_parse_feed(&p, wire, mt.len, &used, &sink) == 0 && k.hellos == 1 &&
          (p.sess.flags & HVT_HELLO_AUTH) && !!(p.sess.flags & HVT_HELLO_ENCRYPT) == encrypt);
    struct hvt_welcome w = { .resume_off = 0 };
    memcpy(w.boot_id, BOOT, sizeof w.boot_id);
    /* a forged WELCOME (damaged tag) is refused and counted; the connection must go */
    CHECK(to_hv(&sc, &p, HVT_MSG_WELCOME, &w, sizeof w, true) == STREAM_EPROTO && sc.cnt.bad_tags == 1);
    /* an unsealed WELCOME (no tag) never completes a tagged message; a new connection */
    stream_core_connected(&sc);
    mt.len = 0;
    stream_core_tx(&sc, &t);
    memcpy(wire, mt.buf, mt.len);
    static uint8_t hello1[65536];
    size_t hello1_len = mt.len;
    memcpy(hello1, mt.buf, mt.len);
    coll_parse_new_connection(&p);
    CHECK(coll_parse_feed(&p, wire, mt.len, &used, &sink) == 0 && p.sess.conn == 1);
    CHECK(to_hv(&sc, &p, HVT_MSG_WELCOME, &w, sizeof w, false) == 0 && sc.state == STREAM_UP);
    /* data in small pieces (tags straddle writes) */
    mt.len = 0;
    for (int round = 0; round < 10000 && sc.send < sc.head; round++) {
        mt.limit = mt.len + 1 + (size_t)(round * 37 % 101);
        stream_core_tx(&sc, &t);
    }
    mt.limit = sizeof mt.buf;
    stream_core_tx(&sc, &t);
    CHECK(sc.send == sc.head && !sc.tx_active && sc.tx_pend_at == sc.tx_pend_len);
    bool clear_on_wire = memmem(mt.buf, mt.len, secret, strlen(secret)) != NULL;
    CHECK(clear_on_wire == !encrypt);
    size_t data_len = mt.len;
    if (hello1_len + data_len <= sizeof hello1) {   /* a fuzzing seed: as the collector gets it */
        memcpy(hello1 + hello1_len, mt.buf, data_len);
        write_seed("coll_parse", encrypt ? "session-encrypted" : "session-tagged", "\x40", 1,
                   hello1, hello1_len + data_len);
    }
    memcpy(wire, mt.buf, data_len);
    CHECK(coll_parse_feed(&p, wire, data_len, &used, &sink) == 0 && used == data_len);
    CHECK(k.msgs == n_msgs && k.contiguous && p.c.bad_tags == 0);
    CHECK(k.got_len == n_msgs * strlen(secret) && memcmp(k.got, secret, strlen(secret)) == 0 &&
          memcmp(k.got + k.got_len - strlen(secret), secret, strlen(secret)) == 0);
    /* its ACK, sealed, frees the ring */
    struct hvt_ack a = { .persisted_off = sc.head };
    CHECK(to_hv(&sc, &p, HVT_MSG_ACK, &a, sizeof a, false) == 0 && sc.tail == sc.head);
    /* a replayed message of this connection (same nonce index reused) is refused */
    uint8_t b[128];
    size_t n = put_unseq(b, HVT_MSG_ACK, &a, sizeof a);
    p.sess.to_hv--;
    n = coll_parse_seal(&p, b, n);
    CHECK(stream_core_rx(&sc, b, n) == STREAM_EPROTO && sc.cnt.bad_tags == 2);
    /* a forged TRACE/CONSOLE: one payload byte changed on the wire */
    static struct coll_parser p3;
    coll_parse_init(&p3, &key);
    memset(&k, 0, sizeof k);
    memcpy(wire, mt.buf, data_len);     /* hello of connection 1 is not in it: re-make one */
    stream_core_connected(&sc);
    mt.len = 0;
    stream_core_tx(&sc, &t);
    size_t hl2 = mt.len;
    for (int i = 0; i < 3; i++)
        CHECK(stream_core_append(&sc, 0, HVT_MSG_CONSOLE, secret, strlen(secret)) == 0);
    memcpy(wire, mt.buf, hl2);
    CHECK(coll_parse_feed(&p3, wire, hl2, &used, &sink) == 0);
    CHECK(to_hv(&sc, &p3, HVT_MSG_WELCOME, &(struct hvt_welcome){ .resume_off = sc.tail,
          .boot_id = { 0 } }, sizeof w, false) == STREAM_EPROTO);   /* other boot id: refused */
    sc.tail = sc.tail;                   /* (the refusal closed the connection: connect again) */
    stream_core_connected(&sc);
    mt.len = 0;
    stream_core_tx(&sc, &t);
    hl2 = mt.len;
    memcpy(wire, mt.buf, hl2);
    coll_parse_new_connection(&p3);
    CHECK(coll_parse_feed(&p3, wire, hl2, &used, &sink) == 0);
    w.resume_off = sc.tail;
    CHECK(to_hv(&sc, &p3, HVT_MSG_WELCOME, &w, sizeof w, false) == 0);
    mt.len = 0;
    stream_core_tx(&sc, &t);
    memcpy(wire, mt.buf, mt.len);
    wire[32 + 5] ^= 0x20;                /* the first message's payload */
    k.msgs = 0;
    CHECK(coll_parse_feed(&p3, wire, mt.len, &used, &sink) == COLL_EMALFORMED &&
          strstr(p3.err, "tag does not verify") && p3.c.bad_tags == 1 && k.msgs == 0);
    /* policies: a keyless collector refuses a tagged HELLO; a keyed one an untagged HELLO */
    static struct coll_parser p4;
    coll_parse_init(&p4, NULL);
    memcpy(wire, mt.buf, 0);
    stream_core_connected(&sc);
    mt.len = 0;
    stream_core_tx(&sc, &t);
    memcpy(wire, mt.buf, mt.len);
    CHECK(coll_parse_feed(&p4, wire, mt.len, &used, &sink) == COLL_EMALFORMED &&
          strstr(p4.err, "no key"));
    stream_core_set_auth(&sc, false, false);
    stream_core_connected(&sc);
    mt.len = 0;
    stream_core_tx(&sc, &t);
    memcpy(wire, mt.buf, mt.len);
    coll_parse_init(&p4, &key);
    CHECK(coll_parse_feed(&p4, wire, mt.len, &used, &sink) == COLL_EMALFORMED &&
          strstr(p4.err, "does not authenticate"));
    coll_parse_init(&p4, &key);
    p4.allow_unauth = true;
    CHECK(coll_parse_feed(&p4, wire, mt.len, &used, &sink) == 0);
}

static void test_session(void)
{
    session_case(false);
    session_case(true);
}

int main(void)
{
    g_seed_dir = getenv("NET_SEED_DIR");
    test_sha256();
    test_hmac();
    test_ctl();
    test_config();
    test_stream_core();
    test_coll_parse();
    test_session();
    return check_summary("net-unit");
}
