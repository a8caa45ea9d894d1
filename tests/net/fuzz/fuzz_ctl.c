/*
 * fuzz_ctl.c - libFuzzer target for the hypervisor's receive path: stream_core_rx() (the
 * collector->hypervisor framing: WELCOME, ACK, CTL_REQ) and ctl_parse() behind it.
 * Input byte 0 selects a mode: even = feed the bytes as they are (the attacker's view: any
 * bytes on the wire); odd = the harness re-tags every CTL_REQ with the real key first, so the
 * fuzzer also explores what happens after authentication (replay window, dispatch, replies,
 * ring reserve). Bit 1 of byte 0 turns the session on (every message followed by its tag, as
 * with a key by default); in retag mode the harness then also seals each message with the
 * right session tag, so the fuzzer gets past the tags too. Bytes are fed in pieces whose sizes
 * come from byte 1. After a protocol error the connection is re-established, as net.c does.
 */
#include "stream_core.h"
#include <stdlib.h>

static size_t sink_room(void *ctx) { return 1 << 16; }
static size_t sink_write(void *ctx, const void *p, size_t n) { return n; }

static int ctl_cb(void *ctx, uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out,
                  uint32_t *out_len)
{
    if (cmd == HVT_CTL_STATUS) {
        struct hvt_ctl_status s;
        stream_core_status(ctx, &s);
        memcpy(out, &s, sizeof s);
        *out_len = sizeof s;
        return HVT_CTL_OK;
    }
    *out_len = len > 8 ? 8 : len;              /* echo a little, like a probe command might */
    memcpy(out, args, *out_len);
    return HVT_CTL_EINVAL;
}

static const uint8_t BOOT[HVT_BOOT_ID_LEN] = { 9, 8, 7, 6, 5, 4, 3, 2, 1 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct stream_core sc;
    static uint8_t ring[64 << 10];
    static struct ctl_key key = { .len = 32 };
    if (size < 2)
        return 0;
    bool retag = data[0] & 1, session = data[0] & 2, encrypt = data[0] & 4;
    size_t piece = 1 + data[1] % 64;
    data += 2, size -= 2;
    for (unsigned i = 0; i < key.len; i++)
        key.bytes[i] = (uint8_t)i;
    stream_core_init(&sc, ring, sizeof ring, 2, BOOT, &key, 1, 0);
    stream_core_set_ctl(&sc, ctl_cb, &sc);
    stream_core_set_auth(&sc, session, session && encrypt);
    /* some data in the ring so WELCOME/ACK offsets have something to point into */
    for (int i = 0; i < 20; i++)
        stream_core_append(&sc, (unsigned)i % 2, HVT_MSG_CONSOLE, "0123456789", (size_t)(i % 10));
    struct stream_transport t = { .room = sink_room, .write = sink_write };
    stream_core_connected(&sc);
    stream_core_tx(&sc, &t);
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    if (retag) {
        /* walk the input as messages; give each plausible CTL_REQ a valid tag */
        size_t pos = 0;
        uint32_t msgs = 0;
        while (size - pos >= sizeof(struct hvt_msg_hdr)) {
            struct hvt_msg_hdr h;
            memcpy(&h, copy + pos, sizeof h);
            size_t body = size - pos - sizeof h, tl = session ? HVT_STREAM_TAG_LEN : 0;
            if (h.len > body || body - h.len < tl)
                break;
            if (h.type == HVT_MSG_CTL_REQ && h.len >= sizeof(struct hvt_ctl) + HVT_MAC_LEN)
                ctl_tag(&key, BOOT, &h, copy + pos + sizeof h, h.len - HVT_MAC_LEN,
                        copy + pos + sizeof h + h.len - HVT_MAC_LEN);
            if (session)
                ctl_seal(sc.skey, HVT_NONCE_TO_HV, sc.conn_no, msgs++, copy + pos, h.len,
                         sc.auth_flags & HVT_HELLO_ENCRYPT);
            pos += sizeof h + h.len + tl;
        }
    }
    for (size_t pos = 0; pos < size; pos += piece) {
        size_t n = size - pos < piece ? size - pos : piece;
        if (stream_core_rx(&sc, copy + pos, n) < 0) {
            stream_core_disconnected(&sc);
            stream_core_connected(&sc);
        }
        stream_core_tx(&sc, &t);
        /* invariants the rest of the hypervisor relies on */
        if (sc.tail > sc.head || sc.head - sc.tail > sc.size || sc.send > sc.head ||
            (sc.state == STREAM_UP && sc.send < sc.tail))
            abort();
    }
    free(copy);
    return 0;
}
