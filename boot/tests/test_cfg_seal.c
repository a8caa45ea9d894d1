/*
 * test_cfg_seal.c - host unit test of boot/cfg_seal.c: hvtrace.cfg's seal, what an enrolled
 * machine keeps of an unsealed configuration, the enrolled stream key in the net line, the
 * enrollment file.
 */
#include <stdio.h>
#include <string.h>
#include "cfg_seal.h"
#include "check.h"

static uint8_t key[CFG_SEAL_KEY_LEN];

/* text + a seal line made for it (the host tool's way: MAC of the text, line appended). */
static size_t sealed(char *out, const char *text)
{
    uint8_t mac[CFG_SEAL_MAC_LEN];
    size_t n = strlen(text);
    memcpy(out, text, n);
    cfg_seal_mac(key, out, n, mac);
    return n + cfg_seal_line(mac, out + n);
}

static enum cfg_seal_state check_text(const char *t) { return cfg_seal_check(key, t, strlen(t)); }

static void test_seal(void)
{
    char buf[1024];
    const char *base = "kernel = \\vmlinuz\nselftest = off\n";
    size_t n = sealed(buf, base);
    /* The MAC against Python's hmac over the label and the file's bytes (key 00..1f). */
    CHECK(!strcmp(buf + strlen(base),
                  "seal = 96d84bb96e830de0f9318d3c7b8c101cb2888b827ffa088241de5cd44dffaafc\n"),
          "seal line: %s", buf + strlen(base));
    CHECK(cfg_seal_check(key, buf, n) == CFG_SEAL_OK);
    /* Any changed byte, anywhere but the seal line's own, breaks it. */
    unsigned bad = 0;
    for (size_t i = 0; i < strlen(base); i++) {
        buf[i] ^= 0x20;
        bad += cfg_seal_check(key, buf, n) != CFG_SEAL_OK;  /* BAD, or MISSING when the seal line is joined to the last one */
        buf[i] ^= 0x20;
    }
    CHECK(bad == strlen(base), "%u of %zu one-byte changes detected", bad, strlen(base));
    /* A line added after the seal, or the last line end removed, is a change too. */
    strcpy(buf + n, "selftest = on\n");
    CHECK(check_text(buf) == CFG_SEAL_BAD, "a line appended after the seal");
    buf[n] = 0;
    /* Another key: BAD. */
    key[0] ^= 1;
    CHECK(cfg_seal_check(key, buf, n) == CFG_SEAL_BAD, "another key");
    key[0] ^= 1;
    /* Stripped of its seal line, the sealed file is the file as it was before sealing. */
    char copy[1024];
    memcpy(copy, buf, n);
    size_t sn = cfg_seal_strip(copy, n);
    CHECK(sn == strlen(base) && !memcmp(copy, base, sn), "strip gives back the unsealed file");
    /* The seal line may sit anywhere: moved to the top it still covers the rest. */
    char moved[1024];
    const char *sl = buf + strlen(base);
    snprintf(moved, sizeof moved, "%s%s", sl, base);
    CHECK(check_text(moved) == CFG_SEAL_OK, "seal line first");
    /* Two seal lines, bad hex, a short MAC: MALFORMED; none: MISSING. */
    char two[2048];
    snprintf(two, sizeof two, "%s%s", buf, sl);
    CHECK(check_text(two) == CFG_SEAL_MALFORMED, "two seal lines");
    CHECK(check_text("seal = zz\n") == CFG_SEAL_MALFORMED, "bad hex");
    CHECK(check_text("a = b\nseal = 0011\n") == CFG_SEAL_MALFORMED, "short MAC");
    CHECK(check_text(base) == CFG_SEAL_MISSING, "no seal");
    CHECK(check_text("") == CFG_SEAL_MISSING, "empty file");
    /* A commented-out seal is no seal. */
    CHECK(check_text("# seal = 96d84bb96e830de0f9318d3c7b8c101cb2888b827ffa088241de5cd44dffaafc\n") ==
          CFG_SEAL_MISSING, "commented seal");
    /* CRLF files (edited elsewhere) seal and verify the same way. */
    n = sealed(buf, "kernel = \\vmlinuz\r\nnet = ip=10.0.0.2\r\n");
    CHECK(cfg_seal_check(key, buf, n) == CFG_SEAL_OK, "CRLF");
}

static void test_enforce(void)
{
    struct cfg c;
    cfg_defaults(&c);
    const char *t = "kernel = \\k\ncmdline = quiet\nhypervisor = off\nselftest = on\n"
                    "trace = hc_user=all\nnet = ip=10.0.0.2 auth=off\nkeys = forget\n"
                    "advertise = on\nhv_mem_mb = 128\nlog = com1\nseal = 00\n";
    CHECK(cfg_parse(&c, t, strlen(t), NULL, NULL) == 0, "seal and keys lines are accepted");
    CHECK(c.keys_forget == 1);
    unsigned d = cfg_seal_enforce(&c);
    CHECK(d == (CFG_SEAL_DROP_HYPERVISOR | CFG_SEAL_DROP_SELFTEST | CFG_SEAL_DROP_TRACE |
                CFG_SEAL_DROP_NET | CFG_SEAL_DROP_KEYS), "dropped 0x%x", d);
    CHECK(c.hypervisor == 1 && c.selftest == 0 && !c.trace[0] && !c.net[0] && !c.keys_forget);
    /* The rest still boots Linux as configured. */
    CHECK(!strcmp(c.kernel, "\\k") && !strcmp(c.cmdline, "quiet") && c.advertise == 1 &&
          c.hv_mem_mb == 128 && c.log == CFG_LOG_COM1);
    cfg_defaults(&c);
    CHECK(cfg_seal_enforce(&c) == 0, "defaults: nothing to drop");
}

static void test_net_key(void)
{
    char net[CFG_OPT_MAX];
    const uint8_t k[16] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
    strcpy(net, "nic=auto ip=10.0.0.2,key=00112233445566778899aabbccddeeff;auth=on\tcollector=10.0.0.1:7207");
    CHECK(cfg_net_set_key(net, k, sizeof k) == 0);
    CHECK(!strcmp(net, "nic=auto ip=10.0.0.2 auth=on collector=10.0.0.1:7207 "
                       "key=deadbeef0102030405060708090a0b0c"), "net: %s", net);
    /* keyX=... is not key=. */
    strcpy(net, "keyring=1 key=aa");
    CHECK(cfg_net_set_key(net, k, 4) == 0 && !strcmp(net, "keyring=1 key=deadbeef"), "net: %s", net);
    /* Too long: refused, unchanged. */
    memset(net, 'a', sizeof net - 1);
    net[0] = 'x'; net[1] = '=';
    net[sizeof net - 1] = 0;
    char before[CFG_OPT_MAX];
    memcpy(before, net, sizeof net);
    CHECK(cfg_net_set_key(net, k, sizeof k) == -1 && !memcmp(before, net, sizeof net));
}

static void test_keys(void)
{
    struct cfg_keys k;
    char t[400];
    snprintf(t, sizeof t, "seal_key = %s\nstream_key = %s\n",
             "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
             "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf");
    CHECK(cfg_keys_parse(&k, t, strlen(t)) == NULL);
    CHECK(k.seal_key[31] == 0x1f && k.stream_key_len == 16 && k.stream_key[15] == 0xaf);
    CHECK(cfg_keys_valid(&k, sizeof k), "parsed keys are valid");
    CHECK(!cfg_keys_valid(&k, sizeof k - 1), "short variable");
    k.stream_key_len = 5;
    CHECK(!cfg_keys_valid(&k, sizeof k), "stream key of 5 bytes");
    k.stream_key_len = 16;
    k.magic[0] = 'X';
    CHECK(!cfg_keys_valid(&k, sizeof k), "bad magic");
    /* Seal key only: no stream key. */
    snprintf(t, sizeof t, "seal_key=%s\n", "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    CHECK(cfg_keys_parse(&k, t, strlen(t)) == NULL && k.stream_key_len == 0 && cfg_keys_valid(&k, sizeof k));
    CHECK(cfg_keys_parse(&k, "stream_key = a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\n", 47) != NULL, "no seal_key");
    CHECK(cfg_keys_parse(&k, "seal_key = 0011\n", 16) != NULL, "short seal key");
    const char *bad = "seal_key = 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\nfoo = 1\n";
    CHECK(cfg_keys_parse(&k, bad, strlen(bad)) != NULL, "unknown key");
    uint8_t zero[sizeof k] = { 0 };
    CHECK(!memcmp(&k, zero, sizeof k), "a refused file leaves no key behind");
}

int main(void)
{
    for (unsigned i = 0; i < sizeof key; i++) key[i] = (uint8_t)i;
    test_seal();
    test_enforce();
    test_net_key();
    test_keys();
    return check_summary("test_cfg_seal");
}
