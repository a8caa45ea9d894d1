/* sha256.c - SHA-256 / HMAC-SHA256; see sha256.h. Straight from FIPS 180-4 section 6.2. */
#include "sha256.h"

static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror32(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(uint32_t st[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) + ((e & f) ^ (~e & g)) +
                      sha256_k[i] + w[i];
        uint32_t t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    st[0] += a; st[1] += b; st[2] += c; st[3] += d; st[4] += e; st[5] += f; st[6] += g; st[7] += h;
}

void sha256_init(struct sha256_ctx *c)
{
    static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };
    for (int i = 0; i < 8; i++)
        c->state[i] = iv[i];
    c->total = 0;
    c->buf_len = 0;
}

void sha256_update(struct sha256_ctx *c, const void *data, size_t n)
{
    const uint8_t *p = data;
    c->total += n;
    while (n > 0) {
        if (c->buf_len == 0 && n >= SHA256_BLOCK_LEN) {
            sha256_block(c->state, p);
            p += SHA256_BLOCK_LEN;
            n -= SHA256_BLOCK_LEN;
            continue;
        }
        size_t take = SHA256_BLOCK_LEN - c->buf_len;
        if (take > n)
            take = n;
        for (size_t i = 0; i < take; i++)
            c->buf[c->buf_len + i] = p[i];
        c->buf_len += take;
        p += take;
        n -= take;
        if (c->buf_len == SHA256_BLOCK_LEN) {
            sha256_block(c->state, c->buf);
            c->buf_len = 0;
        }
    }
}

void sha256_final(struct sha256_ctx *c, uint8_t out[SHA256_DIGEST_LEN])
{
    uint64_t bits = c->total * 8;
    /* Padding: 0x80, zeros to 56 mod 64, then the bit length big-endian (FIPS 180-4 5.1.1). */
    uint8_t pad = 0x80;
    sha256_update(c, &pad, 1);
    pad = 0;
    while (c->buf_len != SHA256_BLOCK_LEN - 8)
        sha256_update(c, &pad, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    sha256_update(c, len, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i]     = (uint8_t)(c->state[i] >> 24);
        out[4 * i + 1] = (uint8_t)(c->state[i] >> 16);
        out[4 * i + 2] = (uint8_t)(c->state[i] >> 8);
        out[4 * i + 3] = (uint8_t)c->state[i];
    }
}

void sha256(const void *data, size_t n, uint8_t out[SHA256_DIGEST_LEN])
{
    struct sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, data, n);
    sha256_final(&c, out);
}

#define HMAC_IPAD 0x36
#define HMAC_OPAD 0x5c

void hmac_sha256_init(struct hmac_sha256_ctx *h, const void *key, size_t key_len)
{
    uint8_t k[SHA256_BLOCK_LEN] = { 0 };
    if (key_len > SHA256_BLOCK_LEN) {       /* RFC 2104: long keys are hashed first */
        sha256(key, key_len, k);
    } else {
        const uint8_t *kp = key;
        for (size_t i = 0; i < key_len; i++)
            k[i] = kp[i];
    }
    uint8_t pad[SHA256_BLOCK_LEN];
    for (size_t i = 0; i < SHA256_BLOCK_LEN; i++)
        pad[i] = k[i] ^ HMAC_IPAD;
    sha256_init(&h->inner);
    sha256_update(&h->inner, pad, sizeof pad);
    for (size_t i = 0; i < SHA256_BLOCK_LEN; i++)
        pad[i] = k[i] ^ HMAC_OPAD;
    sha256_init(&h->outer);
    sha256_update(&h->outer, pad, sizeof pad);
}

void hmac_sha256_update(struct hmac_sha256_ctx *h, const void *data, size_t n)
{
    sha256_update(&h->inner, data, n);
}

void hmac_sha256_final(struct hmac_sha256_ctx *h, uint8_t out[SHA256_DIGEST_LEN])
{
    uint8_t ih[SHA256_DIGEST_LEN];
    sha256_final(&h->inner, ih);
    sha256_update(&h->outer, ih, sizeof ih);
    sha256_final(&h->outer, out);
}

void hmac_sha256(const void *key, size_t key_len, const void *data, size_t n,
                 uint8_t out[SHA256_DIGEST_LEN])
{
    struct hmac_sha256_ctx h;
    hmac_sha256_init(&h, key, key_len);
    hmac_sha256_update(&h, data, n);
    hmac_sha256_final(&h, out);
}

bool hmac_sha256_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint8_t diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= a[i] ^ b[i];
    return diff == 0;
}
