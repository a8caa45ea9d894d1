/* net_config.c - boot configuration parsing for net/; see net_config.h. */
#include "net_config.h"
#include "hvt_stream.h"

#define NET_DEFAULT_RING_KB 4096u
/* The ring must hold the largest message the stream allows (HVT_STREAM_MAX_PAYLOAD and its
 * header): a smaller one would turn big messages - trace chunks are 256 KiB - away for good,
 * and they would fall back to the debug port, which on real hardware reaches nothing. */
#define NET_MIN_RING_KB     ((2 * HVT_STREAM_MAX_PAYLOAD) >> 10)
#define NET_MAX_RING_KB     (256u * 1024u)

static void set4(uint8_t *d, uint8_t a, uint8_t b, uint8_t c, uint8_t e)
{
    d[0] = a; d[1] = b; d[2] = c; d[3] = e;
}

void net_config_defaults(struct net_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->enabled = true;
    cfg->nic_sel = NET_NIC_AUTO;
    set4(cfg->ip, 10, 0, 2, 15);
    set4(cfg->netmask, 255, 255, 255, 0);
    set4(cfg->gw, 10, 0, 2, 2);
    set4(cfg->collector_ip, 10, 0, 2, 2);
    cfg->collector_port = HVT_STREAM_DEFAULT_PORT;
    cfg->ring_kb = NET_DEFAULT_RING_KB;
    cfg->link_timeout_ms = NET_DEFAULT_LINK_TIMEOUT_MS;
    cfg->auth = true;
    cfg->encrypt = true;
}

static bool is_sep(char c) { return c == ' ' || c == '\t' || c == ',' || c == ';' || c == '\n' || c == '\r'; }

static int hexd(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Decimal number in [v, v+n) up to max; returns chars used or 0. */
static size_t parse_dec(const char *v, size_t n, uint32_t max, uint32_t *out)
{
    size_t i = 0;
    uint64_t x = 0;
    while (i < n && v[i] >= '0' && v[i] <= '9' && i < 10)
        x = x * 10 + (uint64_t)(v[i++] - '0');
    if (i == 0 || x > max)
        return 0;
    *out = (uint32_t)x;
    return i;
}

static size_t parse_ip(const char *v, size_t n, uint8_t ip[4])
{
    size_t p = 0;
    for (int k = 0; k < 4; k++) {
        uint32_t x;
        size_t u = parse_dec(v + p, n - p, 255, &x);
        if (!u)
            return 0;
        ip[k] = (uint8_t)x;
        p += u;
        if (k < 3) {
            if (p >= n || v[p] != '.')
                return 0;
            p++;
        }
    }
    return p;
}

static bool parse_mac(const char *v, size_t n, uint8_t mac[6])
{
    if (n != 17)
        return false;
    for (int k = 0; k < 6; k++) {
        int hi = hexd(v[3 * k]), lo = hexd(v[3 * k + 1]);
        if (hi < 0 || lo < 0 || (k < 5 && v[3 * k + 2] != ':'))
            return false;
        mac[k] = (uint8_t)(hi << 4 | lo);
    }
    return true;
}

/* BB:DD.F in hex, bus <= 0xff, dev <= 0x1f, fn <= 7 (PCI 3.0 configuration address). */
static bool parse_bdf(const char *v, size_t n, struct net_config *cfg)
{
    if (n != 7 || v[2] != ':' || v[5] != '.')
        return false;
    int b1 = hexd(v[0]), b0 = hexd(v[1]), d1 = hexd(v[3]), d0 = hexd(v[4]), f = hexd(v[6]);
    if (b1 < 0 || b0 < 0 || d1 < 0 || d0 < 0 || f < 0 || f > 7 || (d1 << 4 | d0) > 0x1f)
        return false;
    cfg->pci_bus = (uint8_t)(b1 << 4 | b0);
    cfg->pci_dev = (uint8_t)(d1 << 4 | d0);
    cfg->pci_fn = (uint8_t)f;
    return true;
}

static bool key_is(const char *k, size_t kl, const char *name)
{
    size_t n = strlen(name);
    return kl == n && memcmp(k, name, n) == 0;
}

static int fail(char *err, size_t errlen, const char *what, const char *k, size_t kl)
{
    if (errlen == 0)
        return -1;
    size_t p = 0;
    for (const char *s = "net config: bad value for "; *s && p + 1 < errlen; s++)
        err[p++] = *s;
    for (size_t i = 0; i < kl && p + 1 < errlen; i++)
        err[p++] = k[i];
    for (const char *s = ": "; *s && p + 1 < errlen; s++)
        err[p++] = *s;
    for (const char *s = what; *s && p + 1 < errlen; s++)
        err[p++] = *s;
    err[p] = 0;
    return -1;
}

static int apply(struct net_config *cfg, const char *k, size_t kl, const char *v, size_t vl,
                 char *err, size_t errlen)
{
    if (key_is(k, kl, "net")) {
        if (vl == 2 && !memcmp(v, "on", 2)) cfg->enabled = true;
        else if (vl == 3 && !memcmp(v, "off", 3)) cfg->enabled = false;
        else return fail(err, errlen, "on or off", k, kl);
    } else if (key_is(k, kl, "nic")) {
        if (vl == 4 && !memcmp(v, "auto", 4)) cfg->nic_sel = NET_NIC_AUTO;
        else if (parse_mac(v, vl, cfg->mac)) cfg->nic_sel = NET_NIC_MAC;
        else if (parse_bdf(v, vl, cfg)) cfg->nic_sel = NET_NIC_PCI;
        else return fail(err, errlen, "auto, BB:DD.F or a MAC address", k, kl);
    } else if (key_is(k, kl, "ip") || key_is(k, kl, "netmask") || key_is(k, kl, "gw")) {
        uint8_t *dst = k[0] == 'i' ? cfg->ip : k[0] == 'n' ? cfg->netmask : cfg->gw;
        if (parse_ip(v, vl, dst) != vl)
            return fail(err, errlen, "an IPv4 address A.B.C.D", k, kl);
    } else if (key_is(k, kl, "collector")) {
        size_t u = parse_ip(v, vl, cfg->collector_ip);
        uint32_t port = 0;
        if (!u || u >= vl || v[u] != ':' || parse_dec(v + u + 1, vl - u - 1, 65535, &port) != vl - u - 1 ||
            port == 0)
            return fail(err, errlen, "A.B.C.D:PORT", k, kl);
        cfg->collector_port = (uint16_t)port;
    } else if (key_is(k, kl, "key")) {
        if (ctl_key_from_hex(&cfg->key, v, vl) < 0)
            return fail(err, errlen, "16..64 bytes in hex", k, kl);
    } else if (key_is(k, kl, "auth") || key_is(k, kl, "encrypt")) {
        bool *b = key_is(k, kl, "auth") ? &cfg->auth : &cfg->encrypt;
        if (vl == 2 && !memcmp(v, "on", 2)) *b = true;
        else if (vl == 3 && !memcmp(v, "off", 3)) *b = false;
        else return fail(err, errlen, "on or off", k, kl);
    } else if (key_is(k, kl, "overflow")) {
        if (vl == 5 && !memcmp(v, "block", 5)) cfg->overflow_drop = false;
        else if (vl == 4 && !memcmp(v, "drop", 4)) cfg->overflow_drop = true;
        else return fail(err, errlen, "block or drop", k, kl);
    } else if (key_is(k, kl, "link_timeout_ms")) {
        if (parse_dec(v, vl, 3600u * 1000, &cfg->link_timeout_ms) != vl)
            return fail(err, errlen, "milliseconds (0 = wait for ever)", k, kl);
    } else if (key_is(k, kl, "ring_kb")) {
        uint32_t kb = 0;
        if (parse_dec(v, vl, NET_MAX_RING_KB, &kb) != vl || kb < NET_MIN_RING_KB)
            return fail(err, errlen, "2048..262144 (the ring must hold the largest message, 1 MiB)", k, kl);
        uint32_t p2 = NET_MIN_RING_KB;
        while (p2 < kb)
            p2 <<= 1;
        cfg->ring_kb = p2;
    } else if (key_is(k, kl, "selftest_kb")) {
        if (parse_dec(v, vl, 16u * 1024 * 1024, &cfg->selftest_kb) != vl)
            return fail(err, errlen, "KiB of filler, up to 16 GiB", k, kl);
    } else if (key_is(k, kl, "tsc_khz")) {
        if (parse_dec(v, vl, 100000000u, &cfg->tsc_khz) != vl)
            return fail(err, errlen, "a rate in kHz", k, kl);
    } else {
        if (cfg->unknown_count++ == 0) {
            size_t n = kl < sizeof cfg->unknown - 1 ? kl : sizeof cfg->unknown - 1;
            memcpy(cfg->unknown, k, n);
            cfg->unknown[n] = 0;
        }
    }
    return 0;
}

int net_config_parse(struct net_config *cfg, const char *text, size_t len, char *err,
                     size_t errlen)
{
    net_config_defaults(cfg);
    if (errlen)
        err[0] = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && is_sep(text[i]))
            i++;
        if (i >= len)
            break;
        size_t ks = i;
        while (i < len && !is_sep(text[i]) && text[i] != '=')
            i++;
        size_t kl = i - ks;
        if (i >= len || text[i] != '=')
            return fail(err, errlen, "expected key=value", text + ks, kl);
        i++;
        size_t vs = i;
        while (i < len && !is_sep(text[i]))
            i++;
        if (apply(cfg, text + ks, kl, text + vs, i - vs, err, errlen) < 0)
            return -1;
    }
    return 0;
}
