/*
 * kunwind.h - the guest kernel's stack, unwound in the hypervisor with the kernel's own ORC
 * tables (objtool's .orc_unwind_ip / .orc_unwind, and the orc_lookup index the kernel builds
 * at boot), read where they are resident in guest memory. It produces the return addresses a
 * stack() aggregation key holds, in the exit, without copying the stack out.
 *
 * Contract.
 *  - Pure: no hypervisor call. Every guest byte is read through the caller's kunwind_mem.read
 *    (in the hypervisor: the checked guest-memory loads; in the unit test: synthetic memory),
 *    which returns the bytes it copied; a short read ends the unwind cleanly (stop READ for the
 *    stack, TABLE for the tables). Nothing a read returns is trusted: table indexes are bounded
 *    by the descriptor, every frame's stack word must lie in [stack_lo, stack_hi), the stack
 *    pointer must grow from frame to frame, and the depth is bounded (max, at most
 *    KUNWIND_MAX_DEPTH), so garbage tables or stacks always end, in O(depth * log(count)) reads.
 *  - The rules are the kernel's unwind_next_frame() (arch/x86/kernel/unwind_orc.c), the same as
 *    the host's unwinder (host-tools/stacks/orc.c, orc_unwind) given a copy of exactly
 *    [stack_lo, stack_hi): for the same tables, registers and stack bytes both return the same
 *    pcs, exact mask and stop (the unit test holds them to it). pcs[0] is the rip; later pcs
 *    are return addresses, except after an interrupt/exception frame (exact_mask).
 *  - Tables: kunwind_tables holds runtime addresses (link address + KASLR slide) and is checked
 *    by kunwind_tables_check() before use. Entry i's address is &ip_table[i] + ip_table[i] (a
 *    self-relative s32); the search takes the last entry at or below the address (the kernel's
 *    __orc_find), within the orc_lookup block's [lookup[b], lookup[b+1]] when the address is
 *    in [lookup_start, lookup_end) and that index is usable, else over the whole table. An
 *    address outside every text range has no entry (the frame is guessed as a frame-pointer
 *    frame, as the kernel does for generated code).
 *  - Layouts: 1 (Linux <= 6.2: type:2 end:1), 2 (6.3: type:2 signal:1 end:1), 3 (6.4+: type:3
 *    signal:1); entries are normalized to 6.4+'s types.
 *  - The caller's kunwind_cache (optional) remembers lookups; with or without it the answers
 *    are the same for unchanged tables (the unit test runs both).
 * Thread-safety: no state of its own; unwinds may run on every CPU at once (each CPU with its
 * own cache).
 */
#ifndef HVT_KUNWIND_H
#define HVT_KUNWIND_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define KUNWIND_RANGES     16
#define KUNWIND_MAX_DEPTH  128           /* frames of one unwind, whatever max says */
#define KUNWIND_MAX_COUNT  (1u << 24)    /* ORC entries accepted (6.12 has ~424k) */
#define KUNWIND_LOOKUP_BLOCK 256u        /* the kernel's LOOKUP_BLOCK_SIZE (1 << 8) */

/* Why an unwind ended: the values of the host's enum orc_stop, plus TABLE. */
enum kunwind_stop {
    KUNWIND_STOP_MAX = 0,       /* pcs was full */
    KUNWIND_STOP_END,           /* an end-of-stack entry */
    KUNWIND_STOP_USER,          /* a pt_regs frame saved from user mode */
    KUNWIND_STOP_READ,          /* a stack word outside [stack_lo, stack_hi) or unreadable */
    KUNWIND_STOP_LOOP,          /* the stack pointer did not grow */
    KUNWIND_STOP_UNDEFINED,     /* the address's entry says "no unwind information" */
    KUNWIND_STOP_BAD,           /* unknown register or type, missing register, return address 0 */
    KUNWIND_STOP_TABLE,         /* a table read failed */
};

struct kunwind_tables {
    uint64_t ip_table;          /* .orc_unwind_ip: count s32 */
    uint64_t entries;           /* .orc_unwind: count 6-byte entries */
    uint32_t count;
    uint32_t layout;            /* 1..3 */
    uint64_t lookup;            /* orc_lookup: lookup_words u32 (0: none) */
    uint32_t lookup_words;
    uint64_t lookup_start, lookup_end;     /* _stext, _etext */
    unsigned nranges;
    uint64_t range_start[KUNWIND_RANGES], range_end[KUNWIND_RANGES];
};

/* A cache of table lookups (address -> entry, or none), direct-mapped, owned by the caller
 * (one per CPU: unwinds on one cache must not run at once); zeroed memory is an empty cache.
 * Valid for one set of tables: clear it when they change (a new program). Call paths repeat,
 * so most frames of a profile's stacks then cost a stack read and no table search. */
#define KUNWIND_CACHE 256u
struct kunwind_cache {
    struct { uint64_t look; uint64_t e; } slot[KUNWIND_CACHE];  /* e: the entry, 0: empty */
};

struct kunwind_mem {
    size_t (*read)(void *ctx, uint64_t va, void *buf, size_t len);
    void *ctx;
    struct kunwind_cache *cache;           /* optional */
    /* Optional: a window of the stack already mapped, guest addresses [win_lo, win_hi) at
     * win (e.g. the page RSP is in): stack words inside it are loaded from there instead of
     * through read (the same bytes, no call). */
    const uint8_t *win;
    uint64_t win_lo, win_hi;
};

/* Registers at the start. pt_regs (optional) is the register file laid out as the kernel's
 * struct pt_regs (21 words): it supplies R10/R13/DI/DX/BP for entries based on them and cs
 * (a user cs: nothing to unwind, stop USER). */
struct kunwind_regs {
    uint64_t rip, rsp, rbp;
    const uint64_t *pt_regs;
};

struct kunwind_result {
    unsigned n;                 /* pcs written */
    unsigned stop;              /* enum kunwind_stop */
    bool guessed;               /* a frame had no entry: unwound as a frame-pointer frame */
    uint64_t exact_mask;        /* bit i: pcs[i] is an exact ip, not a return address */
    uint64_t user_rip, user_rsp, user_rbp;   /* stop USER */
};

/* NULL when the descriptor is usable, else why not (counts, layout, ranges, address sums). */
const char *kunwind_tables_check(const struct kunwind_tables *t);
/* Unwind; stack words are read only inside [stack_lo, stack_hi). Returns res->n. */
unsigned kunwind(const struct kunwind_tables *t, const struct kunwind_mem *m,
                 const struct kunwind_regs *r, uint64_t stack_lo, uint64_t stack_hi,
                 uint64_t *pcs, unsigned max, struct kunwind_result *res);

#endif
