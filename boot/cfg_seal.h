/*
 * cfg_seal.h - hvtrace.cfg sealed with a key the traced Linux cannot read.
 *
 * Why: hvtrace.cfg sits on the ESP, which the guest's root can write; a changed line
 * (hypervisor = off, selftest = on, trace = hc_user=all, net = ...auth=off or another collector)
 * would take effect at the next boot. So a machine can be *enrolled*: two keys kept in an EFI
 * variable created with boot-services access only (UEFI 2.9, 8.2 "Variable Services":
 * without EFI_VARIABLE_RUNTIME_ACCESS a variable can be neither read nor written once
 * ExitBootServices() has run, i.e. never by Linux):
 *   seal key    HMAC-SHA256 key of the configuration's seal line;
 *   stream key  the NIC stream's key (net's key=HEX), which then never sits on the ESP.
 *
 * Contract (pure code, unit-tested on the host; no EFI):
 * - The seal is one line `seal = HEX` (64 hex digits) anywhere in the file. Its MAC is
 *   HMAC-SHA256(seal key, CFG_SEAL_LABEL || the file's bytes with that whole line, its line
 *   end included, left out). cfg_seal_check() says OK, MISSING, MALFORMED (bad hex, or more
 *   than one seal line) or BAD (the MAC differs: the file changed after it was sealed, or it
 *   was sealed with another key). cfg_seal_line() makes the line the host tool appends.
 * - cfg_seal_enforce(): on an enrolled machine whose configuration is not OK, the settings
 *   that weaken the tracer or redirect its data go back to their defaults: hypervisor (on),
 *   selftest (off), trace (no options: hc_user=root), net (no NIC), keys (keep). Everything
 *   else (kernel, initrd, cmdline, memory, log, advertise, acpi_fixup) is kept, so Linux
 *   still boots. Returns the CFG_SEAL_DROP_* mask of what was changed.
 * - cfg_net_set_key(): the net option string with every key= item taken out and the enrolled
 *   stream key put in (key=HEX); -1 if it does not fit (the string is then left unchanged).
 * - The enrollment file (\hvtrace.enroll, written by the host tool at install time and removed
 *   by the loader when it has stored the keys) has two lines: `seal_key = HEX` (32 bytes) and
 *   `stream_key = HEX` (16..64 bytes, optional). cfg_keys_parse() fills struct cfg_keys, the
 *   variable's exact bytes, or returns a message.
 */
#ifndef HVT_CFG_SEAL_H
#define HVT_CFG_SEAL_H
#include <stddef.h>
#include <stdint.h>
#include "cfg.h"

#define CFG_SEAL_LABEL       "hvtrace.cfg seal v1\n"
#define CFG_SEAL_KEY_LEN     32u
#define CFG_SEAL_MAC_LEN     32u
#define CFG_STREAM_KEY_MIN   16u
#define CFG_STREAM_KEY_MAX   64u
#define CFG_KEYS_MAGIC       "HVTKEYS1"

enum cfg_seal_state { CFG_SEAL_OK, CFG_SEAL_MISSING, CFG_SEAL_MALFORMED, CFG_SEAL_BAD };

#define CFG_SEAL_DROP_HYPERVISOR 0x1u
#define CFG_SEAL_DROP_SELFTEST   0x2u
#define CFG_SEAL_DROP_TRACE      0x4u
#define CFG_SEAL_DROP_NET        0x8u
#define CFG_SEAL_DROP_KEYS       0x10u

/* The variable's bytes (little-endian, packed: what GetVariable returns). */
struct cfg_keys {
    char    magic[8];                        /* CFG_KEYS_MAGIC */
    uint8_t seal_key[CFG_SEAL_KEY_LEN];
    uint8_t stream_key_len;                  /* 0: no stream key enrolled */
    uint8_t stream_key[CFG_STREAM_KEY_MAX];
} __attribute__((packed));

enum cfg_seal_state cfg_seal_check(const uint8_t key[CFG_SEAL_KEY_LEN], const char *text, size_t len);
const char *cfg_seal_state_name(enum cfg_seal_state s);
/* The MAC of `text` as cfg_seal_check computes it (any seal line in it left out). */
void cfg_seal_mac(const uint8_t key[CFG_SEAL_KEY_LEN], const char *text, size_t len,
                  uint8_t mac[CFG_SEAL_MAC_LEN]);
/* `text` without its seal lines (the bytes cfg_seal_mac covers), in place; the new length. */
size_t cfg_seal_strip(char *text, size_t len);
/* "seal = HEX\n" into out (at least 72 bytes); returns its length. */
size_t cfg_seal_line(const uint8_t mac[CFG_SEAL_MAC_LEN], char *out);

unsigned cfg_seal_enforce(struct cfg *c);
int cfg_net_set_key(char net[CFG_OPT_MAX], const uint8_t *key, size_t key_len);

/* NULL on success, else what is wrong (the keys are then zeroed). */
const char *cfg_keys_parse(struct cfg_keys *k, const char *text, size_t len);
/* 1 if `k` (len bytes, as read from the variable) is a well-formed struct cfg_keys. */
int cfg_keys_valid(const struct cfg_keys *k, size_t len);

#endif
