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

/* One type record's fields (for the D compiler's type system). kind is the uapi BTF_KIND_*
 * number: 1 INT, 2 PTR, 3 ARRAY, 4 STRUCT, 5 UNION, 6 ENUM, 7 FWD, 8 TYPEDEF, 9 VOLATILE,
 * 10 CONST, 11 RESTRICT, 12 FUNC, 13 FUNC_PROTO, 14 VAR, 15 DATASEC, 16 FLOAT, 17 DECL_TAG,
 * 18 TYPE_TAG, 19 ENUM64. */
typedef struct {
    unsigned kind;
    const char *name;    /* "" when anonymous */
    uint32_t type;       /* PTR, TYPEDEF, qualifiers, TYPE_TAG, FUNC (its FUNC_PROTO), FUNC_PROTO
                            (return type), VAR: the type referred to; ARRAY: the element type */
    uint32_t size;       /* INT, STRUCT, UNION, ENUM, ENUM64, FLOAT, DATASEC: bytes */
    uint32_t vlen;       /* members, enumerators, parameters */
    uint32_t nelems;     /* ARRAY */
    uint32_t int_enc;    /* INT: 1 signed, 2 char, 4 bool */
    uint32_t int_bits;   /* INT: bits used */
    int kflag;           /* ENUM, ENUM64: signed values; STRUCT, UNION: bitfield offsets */
} btf_type;
/* Fields of type `id` (no resolving); -1 if id is 0 or out of range (fields zeroed). */
int btf_type_get(const btf_info *b, uint32_t id, btf_type *out);
/* Parameter i of FUNC_PROTO `proto`: its type id and name ("" if unnamed); -1 if there is no
 * such parameter (a variadic "..." counts as one, with type 0). */
int btf_param(const btf_info *b, uint32_t proto, unsigned i, uint32_t *type, const char **name);
/* Enumerator i of ENUM or ENUM64 `id`: its name and value; -1 if none. */
int btf_enum_val(const btf_info *b, uint32_t id, unsigned i, const char **name, int64_t *val);
#endif
