/* btf: the kernel's BTF type information (CONFIG_DEBUG_INFO_BTF), read from the image.
 * Contract: btf_find_blob() returns the exact bytes of the .BTF section (what the running
 * kernel exposes as /sys/kernel/btf/vmlinux). btf_parse() validates the header and every type
 * record against the blob size and reports "FILE: offset N: ..." on malformed input; after a
 * successful parse, all lookups are bounds-safe. Member offsets are in bytes (bitfields are
 * reported with their bit offset and size). Anonymous struct/union members are searched
 * through, as C lets you name their fields directly. */
#ifndef HVT_BTF_H
#define HVT_BTF_H
#include "kimg.h"

typedef struct {
    const char *file;
    const uint8_t *blob;
    size_t len;
    const uint8_t *types; /* start of the type section */
    size_t types_len;
    const char *strs;
    size_t strs_len;
    uint32_t *type_off; /* type id -> offset in types (id 0 = void) */
    uint32_t ntypes;    /* highest id + 1 */
} btf_info;

typedef struct {
    const char *name;
    uint64_t bit_offset; /* from the start of the outermost struct */
    uint32_t bit_size;   /* 0 unless a bitfield */
    uint32_t type_id;
    uint64_t size;       /* bytes of the member's type */
} btf_member;

/* Locate the BTF blob inside a kernel image (ELF .BTF section, else by header magic). */
int btf_find_blob(const kimg *k, const uint8_t **blob, size_t *len);
int btf_parse(btf_info *b, const char *file, const uint8_t *blob, size_t len);
void btf_free(btf_info *b);
/* Type id of the struct or union named `name` (non-forward), or 0. */
uint32_t btf_find_struct(const btf_info *b, const char *name);
/* Member `name` of struct `sid` (searching anonymous members); 0 found, -1 not. */
int btf_member_find(const btf_info *b, uint32_t sid, const char *name, btf_member *out);
/* Size in bytes of type `id` (through typedefs and qualifiers); 0 if unsized. */
uint64_t btf_type_size(const btf_info *b, uint32_t id);
/* Type name as text (e.g. "struct mm_struct *", "char[16]") into buf. */
void btf_type_str(const btf_info *b, uint32_t id, char *buf, size_t n);
/* Call `fn` for every member of struct `sid`, flattening anonymous members. */
void btf_members_each(const btf_info *b, uint32_t sid, void (*fn)(const btf_member *, void *), void *ctx);
/* Does a VAR named `name` exist (in any DATASEC)? */
int btf_has_var(const btf_info *b, const char *name);
#endif
