/* disasm: x86-64 decoding (capstone) behind a cache, with each instruction's symbol.
 * Contract: disasm_get() decodes each distinct (address, instruction bytes) once: the cache key
 * is the address and the bytes themselves (so one cache serves any source of bytes, and code
 * that changes at an address is decoded again). The returned entry stays valid until the next
 * disasm_get() (the table may grow) and its text until disasm_close(). Text is capstone's own
 * "mnemonic op_str". The symbol is looked up at (address - slide) in the given table (NULL
 * table: no symbols); user addresses have none. `code` must have DISASM_KEY_BYTES readable bytes
 * (only `len` of them are used): trace_reader's code pool guarantees it. */
#ifndef HVT_DISASM_H
#define HVT_DISASM_H
#include "ksym.h"

typedef enum {
    DISASM_OTHER, DISASM_CALL, DISASM_RET, DISASM_JMP, DISASM_JCC, DISASM_IRET, DISASM_SYSRET, DISASM_SYSCALL, DISASM_INT, DISASM_BAD
} disasm_kind;

enum { DISASM_KEY_BYTES = 16 };

typedef struct {
    uint64_t rip;
    uint64_t key_lo, key_hi; /* instruction bytes, zero-padded to 16 (x86 max is 15) */
    uint64_t target;   /* direct branch/call target, 0 if none or indirect */
    int32_t sym;       /* ksym index of the containing symbol, -1 if none */
    uint32_t sym_off;
    uint32_t text_off; /* into the decoder's text pool */
    uint8_t len;       /* decoded length (0 if capstone failed) */
    uint8_t kind;      /* disasm_kind */
    uint8_t used;
    uint8_t klen;      /* key length (the bytes given; len is what capstone decoded) */
    uint32_t succ;     /* index + 1 of the entry that followed this one last time (disasm_next) */
} disasm_entry;

typedef struct disasm_cache disasm_cache;

disasm_cache *disasm_open(const ksym_table *syms, int64_t slide);
void disasm_close(disasm_cache *d);
const disasm_entry *disasm_get(disasm_cache *d, uint64_t rip, const uint8_t *code, uint8_t len);
/* Same, for a stream of instructions: *hint (0 at the start of each stream, one per CPU) lets
 * the cache try the entry that followed the previous one last time before hashing. */
const disasm_entry *disasm_next(disasm_cache *d, uint32_t *hint, uint64_t rip, const uint8_t *code, uint8_t len);
const char *disasm_text(const disasm_cache *d, const disasm_entry *e);
/* Decode without the cache (for tests and the benchmark's baseline). Writes "mnemonic op_str". */
int disasm_raw(disasm_cache *d, uint64_t rip, const uint8_t *code, uint8_t len, char *text, size_t n);
uint64_t disasm_misses(const disasm_cache *d);
/* Is this a kernel address (upper canonical half)? */
static inline int disasm_is_kernel(uint64_t a) { return (a >> 63) != 0; }
#endif
