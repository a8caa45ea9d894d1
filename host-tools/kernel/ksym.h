/* ksym: the kernel symbol table, extracted from the kallsyms tables inside a kernel image.
 * Contract: ksym_extract() finds kallsyms in a kimg by structure (no System.map, no debug
 * info) and yields every symbol in kallsyms order (the order of /proc/kallsyms) with its
 * link-time address and nm type letter. Per-CPU symbols (CONFIG_KALLSYMS_ABSOLUTE_PERCPU) are
 * absolute: they never move with KASLR (ksym_is_abs). Lookups by address skip absolute symbols.
 * Addresses given to and returned by lookups are link-time; add the slide for runtime ones.
 * Layout handled: 6.1 (offsets, relative_base, num_syms, names, markers, [seqs_of_names],
 * token_table, token_index) and the 6.4+ order (offsets after token_index). */
#ifndef HVT_KSYM_H
#define HVT_KSYM_H
#include "kimg.h"

typedef struct {
    uint64_t addr;     /* link-time address (or absolute value if abs) */
    uint32_t name_off; /* into ksym_table.names */
    char type;         /* nm letter: T t D d B b R r A ... */
    uint8_t abs;       /* absolute (per-CPU) symbol */
} ksym_entry;

typedef struct {
    ksym_entry *syms; /* kallsyms order */
    uint32_t count;
    char *names;      /* NUL-separated pool */
    size_t names_len;
    uint32_t *by_addr; /* indexes of non-absolute symbols, sorted by address */
    uint32_t by_addr_count;
    uint64_t end; /* link address of _end: lookups at or beyond it (modules, vmalloc) miss */
} ksym_table;

int ksym_extract(const kimg *k, ksym_table *t);
/* Raw parser over an ELF image buffer (used by ksym_extract and the fuzzer). `file` names the
 * input in errors; offsets in errors are offsets in the ELF image. */
int ksym_parse(const char *file, const uint8_t *img, size_t len, ksym_table *t);
void ksym_free(ksym_table *t);
/* Build the address index (called by the extractors and the cache loader). */
int ksym_index(ksym_table *t);
static inline const char *ksym_name(const ksym_table *t, uint32_t i) { return t->names + t->syms[i].name_off; }
/* Symbol containing link address `addr` (nearest at or below, below _end), or -1.
 * *off gets addr - sym. */
int64_t ksym_lookup(const ksym_table *t, uint64_t addr, uint64_t *off);
/* First symbol named `name`, or -1. */
int64_t ksym_find(const ksym_table *t, const char *name);
/* Serialize / deserialize for the per-build-id cache. */
int ksym_save(const ksym_table *t, const char *path);
int ksym_load(ksym_table *t, const char *path);
#endif
