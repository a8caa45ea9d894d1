/*
 * sha256.h - SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), plain C with no library calls,
 * built both into the freestanding hypervisor and into the host tools.
 *
 * Contract: no allocation, no globals, no SSE needed; sha256_* contexts are plain structs the
 * caller owns. hmac_sha256_equal() compares tags in constant time (no early exit).
 * Test vectors: net/tests/test_net.c (FIPS 180-2 examples, RFC 4231 cases 1-4, 6, 7).
 */
#ifndef HVT_SHA256_H
#define HVT_SHA256_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define SHA256_DIGEST_LEN 32u
#define SHA256_BLOCK_LEN  64u

struct sha256_ctx {
    uint32_t state[8];
    uint64_t total;                  /* bytes hashed so far */
    uint8_t  buf[SHA256_BLOCK_LEN];
    size_t   buf_len;
};

void sha256_init(struct sha256_ctx *c);
void sha256_update(struct sha256_ctx *c, const void *data, size_t n);
void sha256_final(struct sha256_ctx *c, uint8_t out[SHA256_DIGEST_LEN]);
void sha256(const void *data, size_t n, uint8_t out[SHA256_DIGEST_LEN]);

struct hmac_sha256_ctx {
    struct sha256_ctx inner, outer;
};

void hmac_sha256_init(struct hmac_sha256_ctx *h, const void *key, size_t key_len);
void hmac_sha256_update(struct hmac_sha256_ctx *h, const void *data, size_t n);
void hmac_sha256_final(struct hmac_sha256_ctx *h, uint8_t out[SHA256_DIGEST_LEN]);
void hmac_sha256(const void *key, size_t key_len, const void *data, size_t n,
                 uint8_t out[SHA256_DIGEST_LEN]);
bool hmac_sha256_equal(const uint8_t *a, const uint8_t *b, size_t n);

#endif
