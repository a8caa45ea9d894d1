/*
 * aead.h - ChaCha20, Poly1305 and their AEAD construction (RFC 8439, "ChaCha20 and Poly1305 for
 * IETF Protocols", sections 2.3-2.8), plain C with no library calls, built both into the
 * freestanding hypervisor and into the host tools. The stream protocol tags every message with
 * it (and can encrypt payloads): see hvt_stream.h.
 *
 * Contract:
 *  - No allocation, no globals, no SSE; contexts are plain structs the caller owns.
 *  - The AEAD is incremental so a sender can tag a message while it goes out in pieces:
 *    aead_begin(key, nonce) derives the one-time Poly1305 key from ChaCha20 block 0 (2.6),
 *    aead_aad() takes the additional data (all of it, before any payload), aead_crypt() encrypts
 *    or decrypts payload bytes at any payload position (keystream blocks 1, 2 ... as 2.4; pass
 *    NULL out to leave them clear) and aead_mac() feeds the bytes that travel (the ciphertext,
 *    or the clear payload when nothing is encrypted), in order; aead_end() pads and appends the
 *    lengths as 2.8 says and gives the 16-byte tag. With encryption this is exactly RFC 8439's
 *    AEAD_CHACHA20_POLY1305; without, the same tag over the clear payload.
 *  - aead_equal() compares tags in constant time.
 * Test vectors: net/tests/test_aead.c (RFC 8439 2.3.2, 2.4.2, 2.5.2, 2.6.2, 2.8.2, and
 * random cases checked against Python's cryptography package when it is installed).
 */
#ifndef HVT_AEAD_H
#define HVT_AEAD_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define AEAD_KEY_LEN   32u
#define AEAD_NONCE_LEN 12u
#define AEAD_TAG_LEN   16u

void chacha20_block(const uint8_t key[AEAD_KEY_LEN], uint32_t counter,
                    const uint8_t nonce[AEAD_NONCE_LEN], uint8_t out[64]);

struct poly1305 {
    uint64_t r[3], h[3], pad[2];
    uint8_t  buf[16];
    size_t   buf_len;
};
void poly1305_init(struct poly1305 *p, const uint8_t key[32]);
void poly1305_update(struct poly1305 *p, const void *data, size_t n);
void poly1305_final(struct poly1305 *p, uint8_t tag[16]);

struct aead {
    struct poly1305 poly;
    uint8_t  key[AEAD_KEY_LEN], nonce[AEAD_NONCE_LEN];
    uint64_t aad_len, msg_len;
    bool     in_msg;             /* aad padded: payload bytes are being taken */
};
void aead_begin(struct aead *a, const uint8_t key[AEAD_KEY_LEN], const uint8_t nonce[AEAD_NONCE_LEN]);
void aead_aad(struct aead *a, const void *p, size_t n);
/* XOR n bytes at payload position pos with the keystream (in == out allowed). */
void aead_crypt(const struct aead *a, uint64_t pos, const uint8_t *in, uint8_t *out, size_t n);
void aead_mac(struct aead *a, const void *p, size_t n);
void aead_end(struct aead *a, uint8_t tag[AEAD_TAG_LEN]);
bool aead_equal(const uint8_t *a, const uint8_t *b, size_t n);

#endif
