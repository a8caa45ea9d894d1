/*
 * test_aead.c - host unit tests of net/aead.c: ChaCha20's block function, Poly1305 and the
 * AEAD against RFC 8439's own examples (2.3.2, 2.5.2, 2.8.2), and cases of every length
 * around block edges whose expected values came from Python's cryptography package
 * (ChaCha20Poly1305, and Poly1305 over the clear payload for the tag-only mode); every case is
 * also fed in random pieces, which must not change anything. Closing line: "N passed, N failed".
 */
#include "aead.h"
#include "sha256.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"


static void unhex(const char *h, uint8_t *out)
{
    for (size_t i = 0; h[2 * i]; i++)
        sscanf(h + 2 * i, "%2hhx", &out[i]);
}

static bool bytes_are(const uint8_t *b, size_t n, const char *want)
{
    char h[2 * 256 + 1];
    for (size_t i = 0; i < n; i++)
        sprintf(h + 2 * i, "%02x", b[i]);
    return strcmp(h, want) == 0;
}

static void test_block(void)
{
    uint8_t key[32], nonce[12], out[64];
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)i;
    unhex("000000090000004a00000000", nonce);
    chacha20_block(key, 1, nonce, out);
    CHECK(bytes_are(out, 64, "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
                             "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"));
}

static void test_poly(void)
{
    uint8_t key[32], tag[16];
    unhex("85d6be7857556d337f4452fe42d506a80103808afb0db2fd4abff6af4149f51b", key);
    const char *m = "Cryptographic Forum Research Group";
    struct poly1305 p;
    poly1305_init(&p, key);
    poly1305_update(&p, m, strlen(m));
    poly1305_final(&p, tag);
    CHECK(bytes_are(tag, 16, "a8061dc1305136c6c22b8baf0c0127a9"));
    /* byte by byte: the partial-block buffer */
    poly1305_init(&p, key);
    for (size_t i = 0; i < strlen(m); i++)
        poly1305_update(&p, m + i, 1);
    poly1305_final(&p, tag);
    CHECK(bytes_are(tag, 16, "a8061dc1305136c6c22b8baf0c0127a9"));
}

/* Encrypt (or only tag) in random pieces; returns the tag, out = what travels. */
static void seal(const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t an,
                 const uint8_t *pt, size_t n, bool encrypt, uint8_t *out, uint8_t tag[16])
{
    struct aead a;
    aead_begin(&a, key, nonce);
    for (size_t at = 0; at < an;) {
        size_t k = 1 + (size_t)rand() % 20;
        if (k > an - at) k = an - at;
        aead_aad(&a, aad + at, k);
        at += k;
    }
    for (size_t at = 0; at < n;) {
        size_t k = 1 + (size_t)rand() % 100;
        if (k > n - at) k = n - at;
        if (encrypt)
            aead_crypt(&a, at, pt + at, out + at, k);
        else
            memcpy(out + at, pt + at, k);
        aead_mac(&a, out + at, k);
        at += k;
    }
    aead_end(&a, tag);
}

static void test_rfc_aead(void)
{
    uint8_t key[32], nonce[12], aad[12], ct[200], back[200], tag[16];
    for (int i = 0; i < 32; i++)
        key[i] = (uint8_t)(0x80 + i);
    unhex("070000004041424344454647", nonce);
    unhex("50515253c0c1c2c3c4c5c6c7", aad);
    const char *pt = "Ladies and Gentlemen of the class of '99: If I could offer you only one tip "
                     "for the future, sunscreen would be it.";
    size_t n = strlen(pt);
    for (int rep = 0; rep < 20; rep++) {
        seal(key, nonce, aad, sizeof aad, (const uint8_t *)pt, n, true, ct, tag);
        CHECK(bytes_are(ct, 16, "d31a8d34648e60db7b86afbc53ef7ec2"));
        CHECK(bytes_are(tag, 16, "1ae10b594f09e26a7e902ecbd0600691"));
        struct aead a;
        aead_begin(&a, key, nonce);
        aead_crypt(&a, 0, ct, back, n);
        CHECK(memcmp(back, pt, n) == 0);
    }
}

static const struct { size_t len; const char *ct_sha, *tag_enc, *tag_clear; } cases[] = {
    { 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "63e2ba43c2ac7bd8fd1b84ecac3d3cf7", "63e2ba43c2ac7bd8fd1b84ecac3d3cf7" },
    { 1, "01ba4719c80b6fe911b091a7c05124b64eeece964e09c058ef8f9805daca546b", "82f683f4b4f899d74236e9b6c7060ed8", "0d6c6456f384bf1560cea9c82abf00b9" },
    { 15, "37b493734204437a8a8db6e2bc8caadc7e3795b0909062654e19b9e55cf9ceb7", "85663b3ad19edf40fd25d361564cca1c", "254a3ab29ffa30bf6305a6fe97b1d302" },
    { 16, "cc3b18c44c346491511527d20c525c9504696add1beda1f4444ffa45c4401cf6", "0e96b572ec5b296149462cecec590975", "9ca650895ecbd61913fcfdb16cf004bf" },
    { 17, "7bb9ed4fab9c3515b834067c98d788ddf9aca50849430ffe9c305e44c45ea138", "82df9b558ada1838442b6547d0612a55", "430b0e66d70f63e63a01caf8bb088359" },
    { 63, "68c9fde184615e6aec69cea55504d188759954c5a78e9707d30feffd2d694645", "a101298fc85da2201dc809bff7101aff", "18bd85729ef8179379cbb5ee83241e2e" },
    { 64, "243c2720618cb11f1fe7269648232ad883058b2c400c59e56b10b5c2587cb7e0", "5c87cc11c915b3cb6e90d28247eb3528", "1baa5f0f16117b0a8dd78c904685f1c1" },
    { 65, "cacc05966409a1e78da0cc84b5b029bdc605f57d68af2fd75bf9b6e5ab0b9917", "c2ce0ddd9a0a5cf68e7b089897ad7b49", "77b3d757a28701a3b5e47230aea70f2b" },
    { 200, "d8a75535968b3fc1ec7767d905a9478f861b50a005651549104edd2b7cc78217", "321904d42e308d3ac1d28767e7fee54b", "6c8df56c1dbee87d02d35dd5a75a316e" },
    { 1000, "e6669153fd97c7111f14ea6c55cf36be83545e8246f6fc4ca40c233957ee132b", "81c32a0a004cc5c48f739e855256e5d0", "9dfd364ce12abccefdecff534bcb3a2b" },
};

static void test_lengths(void)
{
    uint8_t key[32], nonce[12], aad[32], pt[1000], out[1000], tag[16], d[32];
    for (int i = 0; i < 32; i++) key[i] = (uint8_t)(i * 7 + 1);
    for (int i = 0; i < 12; i++) nonce[i] = (uint8_t)(i + 0x30);
    for (int i = 0; i < 32; i++) aad[i] = (uint8_t)(i * 3);
    for (int i = 0; i < 1000; i++) pt[i] = (uint8_t)(i * 13 + 5);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        for (int rep = 0; rep < 5; rep++) {
            seal(key, nonce, aad, sizeof aad, pt, cases[c].len, true, out, tag);
            sha256(out, cases[c].len, d);
            CHECK(bytes_are(d, 32, cases[c].ct_sha));
            CHECK(bytes_are(tag, 16, cases[c].tag_enc));
            seal(key, nonce, aad, sizeof aad, pt, cases[c].len, false, out, tag);
            CHECK(bytes_are(tag, 16, cases[c].tag_clear));
        }
        /* one flipped bit anywhere changes the tag */
        if (cases[c].len) {
            uint8_t t2[16];
            pt[cases[c].len / 2] ^= 4;
            seal(key, nonce, aad, sizeof aad, pt, cases[c].len, false, out, t2);
            pt[cases[c].len / 2] ^= 4;
            CHECK(!aead_equal(t2, tag, 16));
        }
    }
}

int main(void)
{
    srand(7);
    test_block();
    test_poly();
    test_rfc_aead();
    test_lengths();
    return check_summary("aead-unit");
}
