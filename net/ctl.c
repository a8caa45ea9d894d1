/* ctl.c - control message tagging and parsing; see ctl.h and docs/stream-protocol.md. */
#include "ctl.h"
#include "sha256.h"
#include "aead.h"

void ctl_tag(const struct ctl_key *key, const uint8_t boot_id[HVT_BOOT_ID_LEN],
             const struct hvt_msg_hdr *hdr, const uint8_t *payload_sans_tag, size_t n,
             uint8_t tag[HVT_MAC_LEN])
{
    struct hvt_msg_hdr h = *hdr;
    h.seq = 0;
    h.off = 0;
    struct hmac_sha256_ctx hm;
    hmac_sha256_init(&hm, key->bytes, key->len);
    hmac_sha256_update(&hm, boot_id, HVT_BOOT_ID_LEN);
    hmac_sha256_update(&hm, &h, sizeof h);
    hmac_sha256_update(&hm, payload_sans_tag, n);
    hmac_sha256_final(&hm, tag);
}

size_t ctl_build(uint8_t *out, uint16_t type, uint16_t cpu, const struct ctl_key *key,
                 const uint8_t boot_id[HVT_BOOT_ID_LEN], uint64_t ctl_seq, uint16_t cmd,
                 int16_t status, const void *data, uint32_t data_len)
{
    struct hvt_msg_hdr h = {
        .magic = HVT_STREAM_MAGIC, .version = HVT_STREAM_VERSION,
        .hdr_len = sizeof(struct hvt_msg_hdr), .type = type,
        .len = (uint32_t)(sizeof(struct hvt_ctl) + data_len + HVT_MAC_LEN), .cpu = cpu,
    };
    struct hvt_ctl c = { .ctl_seq = ctl_seq, .cmd = cmd, .status = status, .data_len = data_len };
    uint8_t *p = out;
    memcpy(p, &h, sizeof h);
    p += sizeof h;
    memcpy(p, &c, sizeof c);
    if (data_len)
        memcpy(p + sizeof c, data, data_len);
    size_t body = sizeof c + data_len;
    if (key->len)
        ctl_tag(key, boot_id, &h, p, body, p + body);
    else
        memset(p + body, 0, HVT_MAC_LEN);   /* no key: an all-zero tag, which never verifies */
    return sizeof h + body + HVT_MAC_LEN;
}

int ctl_parse(const struct hvt_msg_hdr *hdr, const uint8_t *payload, const struct ctl_key *key,
              const uint8_t boot_id[HVT_BOOT_ID_LEN], uint64_t min_seq, struct ctl_msg *m)
{
    memset(m, 0, sizeof *m);
    if (hdr->len < sizeof(struct hvt_ctl) + HVT_MAC_LEN)
        return HVT_CTL_EMALFORMED;
    memcpy(&m->ctl, payload, sizeof m->ctl);
    if (m->ctl.data_len > HVT_CTL_MAX_DATA ||
        hdr->len != sizeof(struct hvt_ctl) + m->ctl.data_len + HVT_MAC_LEN)
        return HVT_CTL_EMALFORMED;
    m->data = payload + sizeof(struct hvt_ctl);
    if (key->len == 0)
        return HVT_CTL_EAUTH;
    uint8_t want[HVT_MAC_LEN];
    size_t body = sizeof(struct hvt_ctl) + m->ctl.data_len;
    ctl_tag(key, boot_id, hdr, payload, body, want);
    if (!hmac_sha256_equal(want, payload + body, HVT_MAC_LEN))
        return HVT_CTL_EAUTH;
    if (m->ctl.ctl_seq < min_seq)
        return HVT_CTL_EREPLAY;
    return HVT_CTL_OK;
}

static int hex_nibble(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int ctl_key_from_hex(struct ctl_key *key, const char *hex, size_t n)
{
    memset(key, 0, sizeof *key);
    if (n % 2 || n / 2 < HVT_KEY_MIN || n / 2 > HVT_KEY_MAX)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hex_nibble(hex[2 * i]), lo = hex_nibble(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            memset(key, 0, sizeof *key);
            return -1;
        }
        key->bytes[i] = (uint8_t)(hi << 4 | lo);
    }
    key->len = (uint32_t)(n / 2);
    return 0;
}

void ctl_session_key(const struct ctl_key *key, const uint8_t boot_id[HVT_BOOT_ID_LEN],
                        uint8_t skey[32])
{
    /* one key per boot: the configured key never tags stream bytes itself */
    struct hmac_sha256_ctx hm;
    hmac_sha256_init(&hm, key->bytes, key->len);
    hmac_sha256_update(&hm, HVT_STREAM_KEY_LABEL, sizeof HVT_STREAM_KEY_LABEL - 1);
    hmac_sha256_update(&hm, boot_id, HVT_BOOT_ID_LEN);
    hmac_sha256_final(&hm, skey);
}

/* The AEAD over one whole message: aad = the header, then the payload as it travels. */
static void session_aead(struct aead *ae, const uint8_t skey[32], unsigned kind, uint64_t a,
                         uint32_t b, const uint8_t *msg)
{
    uint8_t nonce[AEAD_NONCE_LEN];
    hvt_stream_nonce(nonce, kind, a, b);
    aead_begin(ae, skey, nonce);
    aead_aad(ae, msg, sizeof(struct hvt_msg_hdr));
}

void ctl_seal(const uint8_t skey[32], unsigned kind, uint64_t a, uint32_t b, uint8_t *msg,
              uint32_t len, bool encrypt)
{
    struct aead ae;
    uint8_t *pl = msg + sizeof(struct hvt_msg_hdr);
    session_aead(&ae, skey, kind, a, b, msg);
    if (encrypt)
        aead_crypt(&ae, 0, pl, pl, len);
    aead_mac(&ae, pl, len);
    aead_end(&ae, pl + len);
}

bool ctl_open(const uint8_t skey[32], unsigned kind, uint64_t a, uint32_t b, uint8_t *msg,
              uint32_t len, bool decrypt)
{
    struct aead ae;
    uint8_t want[AEAD_TAG_LEN];
    uint8_t *pl = msg + sizeof(struct hvt_msg_hdr);
    session_aead(&ae, skey, kind, a, b, msg);
    aead_mac(&ae, pl, len);
    aead_end(&ae, want);
    if (!aead_equal(want, pl + len, AEAD_TAG_LEN))
        return false;
    if (decrypt)
        aead_crypt(&ae, 0, pl, pl, len);
    return true;
}
