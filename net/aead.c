/* aead.c - ChaCha20, Poly1305, AEAD (RFC 8439); see aead.h. */
#include "aead.h"
#include "net_port.h"

/* Little-endian loads and stores: x86 only (both builds), unaligned access is fine there; the
 * builtin keeps the freestanding build (-fno-builtin) from calling memcpy for 4 or 8 bytes. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "aead.c assumes little-endian");
static inline uint32_t ld32(const uint8_t *p) { uint32_t v; __builtin_memcpy(&v, p, 4); return v; }
static inline uint64_t ld64(const uint8_t *p) { uint64_t v; __builtin_memcpy(&v, p, 8); return v; }
static inline void st32(uint8_t *p, uint32_t v) { __builtin_memcpy(p, &v, 4); }
static inline void st64(uint8_t *p, uint64_t v) { __builtin_memcpy(p, &v, 8); }

static inline uint32_t rotl(uint32_t v, int n) { return v << n | v >> (32 - n); }

/* The quarter round, RFC 8439 2.1. */
#define QR(a, b, c, d) do { \
        a += b; d ^= a; d = rotl(d, 16); c += d; b ^= c; b = rotl(b, 12); \
        a += b; d ^= a; d = rotl(d, 8);  c += d; b ^= c; b = rotl(b, 7); \
    } while (0)

/* The block function, RFC 8439 2.3: constants, key, counter, nonce; 10 double rounds. */
void chacha20_block(const uint8_t key[AEAD_KEY_LEN], uint32_t counter,
                    const uint8_t nonce[AEAD_NONCE_LEN], uint8_t out[64])
{
    uint32_t s[16], x[16];
    s[0] = 0x61707865; s[1] = 0x3320646e; s[2] = 0x79622d32; s[3] = 0x6b206574;
    for (int i = 0; i < 8; i++)
        s[4 + i] = ld32(key + 4 * i);
    s[12] = counter;
    for (int i = 0; i < 3; i++)
        s[13 + i] = ld32(nonce + 4 * i);
    for (int i = 0; i < 16; i++)
        x[i] = s[i];
    for (int i = 0; i < 10; i++) {
        QR(x[0], x[4], x[8], x[12]); QR(x[1], x[5], x[9], x[13]);
        QR(x[2], x[6], x[10], x[14]); QR(x[3], x[7], x[11], x[15]);
        QR(x[0], x[5], x[10], x[15]); QR(x[1], x[6], x[11], x[12]);
        QR(x[2], x[7], x[8], x[13]); QR(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 16; i++)
        st32(out + 4 * i, x[i] + s[i]);
}

/*
 * Poly1305, RFC 8439 2.5, with the accumulator in three limbs of 44, 44 and 42 bits so that
 * every product fits a 128-bit integer: h = (h + block) * r mod 2^130 - 5.
 */
#define M44 0xfffffffffffull
#define M42 0x3ffffffffffull

void poly1305_init(struct poly1305 *p, const uint8_t key[32])
{
    uint64_t t0 = ld64(key), t1 = ld64(key + 8);
    /* r is "clamped" (2.5): the listed bits cleared */
    p->r[0] = t0 & 0xffc0fffffffull;
    p->r[1] = ((t0 >> 44) | (t1 << 20)) & 0xfffffc0ffffull;
    p->r[2] = (t1 >> 24) & 0x00ffffffc0full;
    p->h[0] = p->h[1] = p->h[2] = 0;
    p->pad[0] = ld64(key + 16);
    p->pad[1] = ld64(key + 24);
    p->buf_len = 0;
}

/* nblocks 16-byte blocks; hibit: 2^128 for full blocks (the "add one bit beyond" of 2.5), 0
 * for the padded last one. The accumulator stays in registers across the blocks. */
static void poly_blocks(struct poly1305 *p, const uint8_t *m, size_t nblocks, uint64_t hibit)
{
    typedef unsigned __int128 u128;
    const uint64_t r0 = p->r[0], r1 = p->r[1], r2 = p->r[2];
    const uint64_t s1 = r1 * (5 << 2), s2 = r2 * (5 << 2);
    uint64_t h0 = p->h[0], h1 = p->h[1], h2 = p->h[2];
    for (; nblocks; nblocks--, m += 16) {
        uint64_t t0 = ld64(m), t1 = ld64(m + 8);
        h0 += t0 & M44;
        h1 += ((t0 >> 44) | (t1 << 20)) & M44;
        h2 += ((t1 >> 24) & M42) | hibit;
        u128 d0 = (u128)h0 * r0 + (u128)h1 * s2 + (u128)h2 * s1;
        u128 d1 = (u128)h0 * r1 + (u128)h1 * r0 + (u128)h2 * s2;
        u128 d2 = (u128)h0 * r2 + (u128)h1 * r1 + (u128)h2 * r0;
        uint64_t c = (uint64_t)(d0 >> 44);
        h0 = (uint64_t)d0 & M44;
        d1 += c; c = (uint64_t)(d1 >> 44); h1 = (uint64_t)d1 & M44;
        d2 += c; c = (uint64_t)(d2 >> 42); h2 = (uint64_t)d2 & M42;
        h0 += c * 5; c = h0 >> 44; h0 &= M44;
        h1 += c;
    }
    p->h[0] = h0; p->h[1] = h1; p->h[2] = h2;
}

void poly1305_update(struct poly1305 *p, const void *data, size_t n)
{
    const uint8_t *m = data;
    if (p->buf_len) {
        size_t k = 16 - p->buf_len < n ? 16 - p->buf_len : n;
        for (size_t i = 0; i < k; i++)
            p->buf[p->buf_len + i] = m[i];
        p->buf_len += k;
        m += k;
        n -= k;
        if (p->buf_len < 16)
            return;
        poly_blocks(p, p->buf, 1, 1ull << 40);
        p->buf_len = 0;
    }
    poly_blocks(p, m, n / 16, 1ull << 40);
    m += n / 16 * 16;
    n %= 16;
    for (size_t i = 0; i < n; i++)
        p->buf[i] = m[i];
    p->buf_len = n;
}

void poly1305_final(struct poly1305 *p, uint8_t tag[16])
{
    if (p->buf_len) {
        /* the last partial block gets a 1 byte after it and zeros (2.5), no 2^128 bit */
        p->buf[p->buf_len] = 1;
        for (size_t i = p->buf_len + 1; i < 16; i++)
            p->buf[i] = 0;
        poly_blocks(p, p->buf, 1, 0);
    }
    uint64_t h0 = p->h[0], h1 = p->h[1], h2 = p->h[2], c;
    /* carry fully, then reduce: h < 2^130 - 5 + small; subtract p if h >= p */
    c = h1 >> 44; h1 &= M44; h2 += c;
    c = h2 >> 42; h2 &= M42; h0 += c * 5;
    c = h0 >> 44; h0 &= M44; h1 += c;
    c = h1 >> 44; h1 &= M44; h2 += c;
    c = h2 >> 42; h2 &= M42; h0 += c * 5;
    c = h0 >> 44; h0 &= M44; h1 += c;
    uint64_t g0 = h0 + 5; c = g0 >> 44; g0 &= M44;
    uint64_t g1 = h1 + c; c = g1 >> 44; g1 &= M44;
    uint64_t g2 = h2 + c - (1ull << 42);
    uint64_t use_g = (g2 >> 63) - 1;        /* all ones when h + 5 - 2^130 did not borrow */
    h0 = (h0 & ~use_g) | (g0 & use_g);
    h1 = (h1 & ~use_g) | (g1 & use_g);
    h2 = (h2 & ~use_g) | (g2 & use_g);
    /* tag = (h + s) mod 2^128 */
    uint64_t t0 = p->pad[0], t1 = p->pad[1];
    h0 += t0 & M44; c = h0 >> 44; h0 &= M44;
    h1 += (((t0 >> 44) | (t1 << 20)) & M44) + c; c = h1 >> 44; h1 &= M44;
    h2 += ((t1 >> 24) & M42) + c; h2 &= M42;
    st64(tag, h0 | h1 << 44);
    st64(tag + 8, h1 >> 20 | h2 << 24);
}

static const uint8_t zeros16[16];

void aead_begin(struct aead *a, const uint8_t key[AEAD_KEY_LEN], const uint8_t nonce[AEAD_NONCE_LEN])
{
    uint8_t block[64];
    /* the one-time Poly1305 key: the first 32 bytes of block 0 (2.6) */
    chacha20_block(key, 0, nonce, block);
    poly1305_init(&a->poly, block);
    memcpy(a->key, key, AEAD_KEY_LEN);
    memcpy(a->nonce, nonce, AEAD_NONCE_LEN);
    memset(block, 0, 32);                   /* the one-time key does not outlive its use */
    __asm__ volatile("" : : "r"(block) : "memory");
    a->aad_len = a->msg_len = 0;
    a->in_msg = false;
}

void aead_aad(struct aead *a, const void *p, size_t n)
{
    poly1305_update(&a->poly, p, n);
    a->aad_len += n;
}

void aead_crypt(const struct aead *a, uint64_t pos, const uint8_t *in, uint8_t *out, size_t n)
{
    uint8_t ks[64];
    while (n > 0) {
        /* payload byte pos is byte pos % 64 of block 1 + pos / 64 (2.4) */
        chacha20_block(a->key, (uint32_t)(1 + pos / 64), a->nonce, ks);
        size_t at = (size_t)(pos % 64), k = 64 - at < n ? 64 - at : n, i = 0;
        for (; i + 8 <= k; i += 8)            /* a word at a time: this loop is the cost */
            st64(out + i, ld64(in + i) ^ ld64(ks + at + i));
        for (; i < k; i++)
            out[i] = in[i] ^ ks[at + i];
        in += k;
        out += k;
        pos += k;
        n -= k;
    }
}

void aead_mac(struct aead *a, const void *p, size_t n)
{
    if (!a->in_msg) {
        /* pad16(aad) (2.8) */
        if (a->aad_len % 16)
            poly1305_update(&a->poly, zeros16, 16 - a->aad_len % 16);
        a->in_msg = true;
    }
    poly1305_update(&a->poly, p, n);
    a->msg_len += n;
}

void aead_end(struct aead *a, uint8_t tag[AEAD_TAG_LEN])
{
    uint8_t lens[16];
    aead_mac(a, zeros16, 0);               /* pads the aad when there was no payload */
    if (a->msg_len % 16)
        poly1305_update(&a->poly, zeros16, 16 - a->msg_len % 16);
    st64(lens, a->aad_len);
    st64(lens + 8, a->msg_len);
    poly1305_update(&a->poly, lens, sizeof lens);
    poly1305_final(&a->poly, tag);
}

bool aead_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
    uint8_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= a[i] ^ b[i];
    return d == 0;
}
