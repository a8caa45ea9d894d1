/* cfg_seal.c - hvtrace.cfg's seal and the enrolled keys; see cfg_seal.h. */
#include "cfg_seal.h"
#include "sha256.h"

static int seal_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

static int seal_hexval(char ch)
{
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

/* n hex digits -> n/2 bytes; 0 on a bad digit or odd n. */
static int seal_unhex(const char *s, size_t n, uint8_t *out)
{
    if (n & 1) return 0;
    for (size_t i = 0; i < n; i += 2) {
        int hi = seal_hexval(s[i]), lo = seal_hexval(s[i + 1]);
        if (hi < 0 || lo < 0) return 0;
        out[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    return 1;
}

static void seal_wipe(void *p, size_t n)
{
    volatile uint8_t *b = p;
    for (size_t i = 0; i < n; i++) b[i] = 0;
}

/* One "key = value" line of `text` (as cfg_parse reads it): the whole line's extent
 * [*ls, *le) (line end included), the key and the value. Returns 0 at the end. */
struct seal_line { size_t ls, le; const char *k, *v; size_t kn, vn; };

static int seal_next(const char *text, size_t len, size_t *pos, struct seal_line *l)
{
    while (*pos < len) {
        size_t start = *pos, end;
        l->ls = start;
        while (*pos < len && text[*pos] != '\n') (*pos)++;
        end = *pos;
        if (*pos < len) (*pos)++;
        l->le = *pos;
        for (size_t i = start; i < end; i++) if (text[i] == '#') { end = i; break; }
        while (start < end && seal_space(text[start])) start++;
        while (end > start && seal_space(text[end - 1])) end--;
        size_t eq = start;
        while (eq < end && text[eq] != '=') eq++;
        if (start == end || eq == end) continue;
        size_t kend = eq, vstart = eq + 1;
        while (kend > start && seal_space(text[kend - 1])) kend--;
        while (vstart < end && seal_space(text[vstart])) vstart++;
        l->k = text + start; l->kn = kend - start;
        l->v = text + vstart; l->vn = end - vstart;
        return 1;
    }
    return 0;
}

static int seal_is(const struct seal_line *l, const char *key)
{
    size_t i = 0;
    for (; key[i]; i++) if (i >= l->kn || l->k[i] != key[i]) return 0;
    return i == l->kn;
}

void cfg_seal_mac(const uint8_t key[CFG_SEAL_KEY_LEN], const char *text, size_t len,
                  uint8_t mac[CFG_SEAL_MAC_LEN])
{
    struct hmac_sha256_ctx h;
    hmac_sha256_init(&h, key, CFG_SEAL_KEY_LEN);
    hmac_sha256_update(&h, CFG_SEAL_LABEL, sizeof CFG_SEAL_LABEL - 1);
    size_t pos = 0, from = 0;
    struct seal_line l;
    /* Every byte but the seal lines' own (the MAC cannot cover itself). */
    while (seal_next(text, len, &pos, &l)) {
        if (!seal_is(&l, "seal")) continue;
        hmac_sha256_update(&h, text + from, l.ls - from);
        from = l.le;
    }
    hmac_sha256_update(&h, text + from, len - from);
    hmac_sha256_final(&h, mac);
    seal_wipe(&h, sizeof h);
}

size_t cfg_seal_strip(char *text, size_t len)
{
    size_t pos = 0, from = 0, out = 0;
    struct seal_line l;
    while (seal_next(text, len, &pos, &l)) {
        if (!seal_is(&l, "seal")) continue;
        for (size_t i = from; i < l.ls; i++) text[out++] = text[i];
        from = l.le;
    }
    for (size_t i = from; i < len; i++) text[out++] = text[i];
    return out;
}

enum cfg_seal_state cfg_seal_check(const uint8_t key[CFG_SEAL_KEY_LEN], const char *text, size_t len)
{
    uint8_t want[CFG_SEAL_MAC_LEN], got[CFG_SEAL_MAC_LEN];
    unsigned seals = 0;
    size_t pos = 0;
    struct seal_line l;
    while (seal_next(text, len, &pos, &l)) {
        if (!seal_is(&l, "seal")) continue;
        if (++seals > 1 || l.vn != 2 * CFG_SEAL_MAC_LEN || !seal_unhex(l.v, l.vn, want))
            return CFG_SEAL_MALFORMED;
    }
    if (!seals) return CFG_SEAL_MISSING;
    cfg_seal_mac(key, text, len, got);
    return hmac_sha256_equal(want, got, CFG_SEAL_MAC_LEN) ? CFG_SEAL_OK : CFG_SEAL_BAD;
}

const char *cfg_seal_state_name(enum cfg_seal_state s)
{
    switch (s) {
    case CFG_SEAL_OK: return "sealed";
    case CFG_SEAL_MISSING: return "no seal line";
    case CFG_SEAL_MALFORMED: return "a malformed or second seal line";
    default: return "the seal does not match (changed after sealing, or another key)";
    }
}

size_t cfg_seal_line(const uint8_t mac[CFG_SEAL_MAC_LEN], char *out)
{
    static const char hex[] = "0123456789abcdef";
    const char *pre = "seal = ";
    size_t n = 0;
    while (pre[n]) { out[n] = pre[n]; n++; }
    for (unsigned i = 0; i < CFG_SEAL_MAC_LEN; i++) {
        out[n++] = hex[mac[i] >> 4];
        out[n++] = hex[mac[i] & 15];
    }
    out[n++] = '\n';
    out[n] = 0;
    return n;
}

unsigned cfg_seal_enforce(struct cfg *c)
{
    unsigned dropped = 0;
    if (!c->hypervisor) { c->hypervisor = 1; dropped |= CFG_SEAL_DROP_HYPERVISOR; }
    if (c->selftest) { c->selftest = 0; dropped |= CFG_SEAL_DROP_SELFTEST; }
    if (c->trace[0]) { seal_wipe(c->trace, sizeof c->trace); dropped |= CFG_SEAL_DROP_TRACE; }
    if (c->net[0]) { seal_wipe(c->net, sizeof c->net); dropped |= CFG_SEAL_DROP_NET; }
    if (c->keys_forget) { c->keys_forget = 0; dropped |= CFG_SEAL_DROP_KEYS; }
    return dropped;
}

/* net's item separators (net_config.c reads "k=v" items split by any of these). */
static int seal_net_sep(char ch) { return ch == ' ' || ch == '\t' || ch == ',' || ch == ';' ||
                                          ch == '\n' || ch == '\r'; }

int cfg_net_set_key(char net[CFG_OPT_MAX], const uint8_t *key, size_t key_len)
{
    static const char hex[] = "0123456789abcdef";
    char out[CFG_OPT_MAX];
    size_t n = 0, i = 0;
    /* Copy every item but key=..., each followed by one space. */
    while (net[i]) {
        while (net[i] && seal_net_sep(net[i])) i++;
        size_t s = i;
        while (net[i] && !seal_net_sep(net[i])) i++;
        if (i == s) break;
        if (i - s >= 4 && net[s] == 'k' && net[s + 1] == 'e' && net[s + 2] == 'y' && net[s + 3] == '=')
            continue;
        if (n + (i - s) + 1 >= sizeof out) goto too_long;
        for (size_t j = s; j < i; j++) out[n++] = net[j];
        out[n++] = ' ';
    }
    if (n + 4 + 2 * key_len + 1 > sizeof out) goto too_long;
    out[n++] = 'k'; out[n++] = 'e'; out[n++] = 'y'; out[n++] = '=';
    for (size_t j = 0; j < key_len; j++) {
        out[n++] = hex[key[j] >> 4];
        out[n++] = hex[key[j] & 15];
    }
    out[n] = 0;
    for (size_t j = 0; j <= n; j++) net[j] = out[j];
    seal_wipe(out, sizeof out);
    return 0;
too_long:
    seal_wipe(out, sizeof out);
    return -1;
}

const char *cfg_keys_parse(struct cfg_keys *k, const char *text, size_t len)
{
    size_t pos = 0;
    struct seal_line l;
    int have_seal = 0, have_stream = 0;
    const char *err = NULL;
    seal_wipe(k, sizeof *k);
    while (!err && seal_next(text, len, &pos, &l)) {
        if (seal_is(&l, "seal_key")) {
            if (have_seal++) err = "seal_key given twice";
            else if (l.vn != 2 * CFG_SEAL_KEY_LEN || !seal_unhex(l.v, l.vn, k->seal_key))
                err = "seal_key must be 64 hex digits (32 bytes)";
        } else if (seal_is(&l, "stream_key")) {
            if (have_stream++) err = "stream_key given twice";
            else if (l.vn < 2 * CFG_STREAM_KEY_MIN || l.vn > 2 * CFG_STREAM_KEY_MAX ||
                     !seal_unhex(l.v, l.vn, k->stream_key))
                err = "stream_key must be 32..128 hex digits (16..64 bytes)";
            else
                k->stream_key_len = (uint8_t)(l.vn / 2);
        } else {
            err = "unknown key (expected seal_key or stream_key)";
        }
    }
    if (!err && !have_seal) err = "no seal_key line";
    if (err) {
        seal_wipe(k, sizeof *k);
        return err;
    }
    for (unsigned i = 0; i < sizeof k->magic; i++) k->magic[i] = CFG_KEYS_MAGIC[i];
    return NULL;
}

int cfg_keys_valid(const struct cfg_keys *k, size_t len)
{
    if (len != sizeof *k) return 0;
    for (unsigned i = 0; i < sizeof k->magic; i++)
        if (k->magic[i] != CFG_KEYS_MAGIC[i]) return 0;
    return k->stream_key_len == 0 ||
           (k->stream_key_len >= CFG_STREAM_KEY_MIN && k->stream_key_len <= CFG_STREAM_KEY_MAX);
}
