/*
 * ctl.h - control messages (HVT_MSG_CTL_REQ / HVT_MSG_CTL_REPLY): building, tagging and the
 * strict parser; and the session's key and whole-message tags (ctl_session_key, ctl_seal,
 * ctl_open). Shared by the hypervisor (verifies requests, tags replies) and the collector
 * (tags requests, verifies replies). Portable: see net_port.h.
 *
 * Contract:
 *  - Tag = HMAC-SHA256(key, boot_id || header with seq and off zeroed || payload without tag).
 *    seq and off are zeroed because they are assigned by the send ring after the message is
 *    built; type, len, cpu and flags are covered, so a request can never pass for a reply.
 *  - ctl_parse() never reads outside [payload, payload + len) and classifies every input as
 *    OK / MALFORMED / AUTH / REPLAY (in that order of checks) without side effects; the caller
 *    updates its replay window (next_seq) only for OK.
 */
#ifndef HVT_CTL_H
#define HVT_CTL_H
#include "net_port.h"
#include "hvt_stream.h"

struct ctl_key {
    uint8_t bytes[HVT_KEY_MAX];
    uint32_t len;                 /* 0: no key configured, every request is refused */
};

struct ctl_msg {
    struct hvt_ctl ctl;           /* host byte order == wire order (little-endian x86) */
    const uint8_t *data;          /* points into the parsed payload */
};

void ctl_tag(const struct ctl_key *key, const uint8_t boot_id[HVT_BOOT_ID_LEN],
             const struct hvt_msg_hdr *hdr, const uint8_t *payload_sans_tag, size_t n,
             uint8_t tag[HVT_MAC_LEN]);

/* Build a complete message (header + payload + tag) into out (size >= ctl_msg_size(data_len)).
 * seq/off of the header are left 0 (the ring fills them in for replies). Returns total bytes. */
static inline size_t ctl_msg_size(uint32_t data_len)
{
    return sizeof(struct hvt_msg_hdr) + sizeof(struct hvt_ctl) + data_len + HVT_MAC_LEN;
}
size_t ctl_build(uint8_t *out, uint16_t type, uint16_t cpu, const struct ctl_key *key,
                 const uint8_t boot_id[HVT_BOOT_ID_LEN], uint64_t ctl_seq, uint16_t cmd,
                 int16_t status, const void *data, uint32_t data_len);

/* Parse a control message whose header was already checked for magic/version/hdr_len.
 * min_seq: smallest acceptable ctl_seq (requests); pass 0 to skip the replay check (replies).
 * Fills *m as far as it got (m->ctl.ctl_seq and cmd are valid unless MALFORMED). */
int ctl_parse(const struct hvt_msg_hdr *hdr, const uint8_t *payload, const struct ctl_key *key,
              const uint8_t boot_id[HVT_BOOT_ID_LEN], uint64_t min_seq, struct ctl_msg *m);

/* The stream's session key of one boot: HMAC-SHA256(key, HVT_STREAM_KEY_LABEL || boot_id)
 * (hvt_stream.h); both ends derive it the same way. */
void ctl_session_key(const struct ctl_key *key, const uint8_t boot_id[HVT_BOOT_ID_LEN],
                     uint8_t skey[32]);

/* Session tags (hvt_stream.h), one construction for both ends. msg is a message (header, then
 * len payload bytes) with HVT_STREAM_TAG_LEN bytes after it for the tag; kind, a and b name
 * its nonce (hvt_stream_nonce). ctl_seal encrypts the payload in place when encrypt, then
 * writes the tag; ctl_open checks the tag (constant time) and only then decrypts in place
 * when decrypt. Messages sent in pieces are tagged incrementally instead (stream_core.c). */
void ctl_seal(const uint8_t skey[32], unsigned kind, uint64_t a, uint32_t b, uint8_t *msg,
              uint32_t len, bool encrypt);
bool ctl_open(const uint8_t skey[32], unsigned kind, uint64_t a, uint32_t b, uint8_t *msg,
              uint32_t len, bool decrypt);

/* Hex key text ("00112233...", 2*HVT_KEY_MIN .. 2*HVT_KEY_MAX digits) -> key. 0 or -1. */
int ctl_key_from_hex(struct ctl_key *key, const char *hex, size_t n);

#endif
