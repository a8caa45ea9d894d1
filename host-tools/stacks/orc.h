/* orc: kernel stack unwinding from the kernel's own ORC tables (objtool's .orc_unwind_ip and
 * .orc_unwind), read out of the kernel image on the host; plus a frame-pointer unwinder for
 * user code built with frame pointers.
 * Contract:
 *  - orc_load() finds the two tables by section header (the bzImage payload keeps them) or,
 *    given a ksym_table, by the kallsyms bounds __start_orc_unwind_ip/__stop_orc_unwind_ip/
 *    __start_orc_unwind; every size and offset is checked against the image (untrusted input)
 *    and problems are reported in `err`, never by crashing. Entry i's address is
 *    &orc_unwind_ip[i] + orc_unwind_ip[i] (a self-relative s32, so link-time addresses come
 *    out whatever the KASLR slide). The table is decoded into rows sorted by link address,
 *    each entry normalized to one form whatever the kernel's layout.
 *  - Layouts: V1 (<= 6.2: type:2 end:1; types CALL 0, REGS 1, REGS_PARTIAL 2; the end of the
 *    stack is sp_reg UNDEFINED + end), V2 (6.3: type:2 signal:1 end:1), V3 (6.4+: type:3
 *    signal:1; types UNDEFINED 0, END_OF_STACK 1, CALL 2, REGS 3, REGS_PARTIAL 4). V3 is chosen
 *    when the image has an .orc_header section (added with V3); otherwise the "Linux version"
 *    banner decides V1/V2 (no banner: V1). orc_load_ex() can force a layout.
 *  - orc_unwind() follows the kernel's unwind_next_frame(): addresses given and returned are
 *    runtime ones (link + slide). Memory is only read from the caller's copy of the stack;
 *    any read outside it ends the unwind. sp must strictly increase from frame to frame inside
 *    the copy, a frame whose sp leaves the copy is the last one, and the depth is bounded, so
 *    garbage input always ends. pcs[0] is the sampled rip; later pcs are return addresses,
 *    except after an interrupt/exception frame (see orc_status.exact_mask).
 *  - An unwind that crosses a pt_regs frame saved from user mode stops there (not reported as
 *    a pc) and returns the user rip/rsp/rbp in orc_status, ready for fp_unwind().
 * Thread-safety: a loaded table is read-only; unwinds may run concurrently. */
#ifndef HVT_ORC_H
#define HVT_ORC_H
#include "kimg.h"
#include "ksym.h"

/* Base registers of an ORC entry (the kernel's ORC_REG_*, the same in every layout). */
enum {
    ORC_REG_UNDEFINED = 0, ORC_REG_PREV_SP = 1, ORC_REG_DX = 2, ORC_REG_DI = 3, ORC_REG_BP = 4,
    ORC_REG_SP = 5, ORC_REG_R10 = 6, ORC_REG_R13 = 7, ORC_REG_BP_INDIRECT = 8,
    ORC_REG_SP_INDIRECT = 9,
};
/* Normalized entry types (the 6.4+ numbering; ORC_TYPE_INVALID for codes no layout defines). */
enum {
    ORC_TYPE_UNDEFINED = 0, ORC_TYPE_END_OF_STACK = 1, ORC_TYPE_CALL = 2, ORC_TYPE_REGS = 3,
    ORC_TYPE_REGS_PARTIAL = 4, ORC_TYPE_INVALID = 7,
};
enum { ORC_LAYOUT_AUTO = 0, ORC_LAYOUT_V1 = 1, ORC_LAYOUT_V2 = 2, ORC_LAYOUT_V3 = 3 };
/* Size of one raw entry in .orc_unwind (packed s16, s16, u16 bitfield) in every layout. */
enum { ORC_RAW_ENTRY = 6, ORC_MAX_RANGES = 16, ORC_HEADER_LEN = 20 };
/* x86-64 struct pt_regs: 21 words; offsets (bytes) of the words the unwinder reads. */
enum {
    ORC_PT_REGS_WORDS = 21, ORC_PT_R13 = 16, ORC_PT_BP = 32, ORC_PT_R10 = 56, ORC_PT_DX = 96,
    ORC_PT_DI = 112, ORC_PT_IP = 128, ORC_PT_CS = 136, ORC_PT_SP = 152,
    ORC_IRET_FRAME_OFFSET = ORC_PT_IP, ORC_IRET_FRAME_SIZE = 40,
};
/* Hard bound on frames per unwind, whatever `max` says. */
enum { ORC_MAX_DEPTH = 4096 };

typedef struct {
    int16_t sp_offset, bp_offset;
    uint8_t sp_reg, bp_reg; /* ORC_REG_* */
    uint8_t type;           /* ORC_TYPE_* (normalized) */
    uint8_t signal;         /* the caller's ip is exact (interrupted), not a return address */
} orc_entry;

typedef struct {
    uint64_t ip; /* link-time address where the entry starts to apply */
    orc_entry e;
} orc_row;

typedef struct {
    orc_row *rows; /* sorted by ip; among equal ips UNDEFINED entries first (the kernel's order) */
    size_t count;
    int layout;        /* ORC_LAYOUT_V1..V3 actually used */
    int from_sections; /* 1: found by section headers, 0: by kallsyms bounds */
    int was_sorted;    /* the image's table was already in order (build-time sorted) */
    size_t bad_types;  /* entries with a type code the layout does not define */
    uint8_t header[ORC_HEADER_LEN]; /* .orc_header contents (V3 images), else zeros */
    /* Link-time text ranges [start, end) the table covers; lookups outside miss (as in the
     * kernel, which only consults vmlinux's table for core and init text). */
    uint64_t range_start[ORC_MAX_RANGES], range_end[ORC_MAX_RANGES];
    int nranges;
    /* Link addresses of the raw .orc_unwind_ip and .orc_unwind (orc_load*; 0 from raw
     * sections): where the running kernel keeps them, for the hypervisor's unwinder. */
    uint64_t ip_addr, orc_addr;
} orc_table;

/* Load from a kernel image. Returns 0, or -1 with a message in err. */
int orc_load(const kimg *k, orc_table *t, char *err, size_t errlen);
/* Same; `syms` (may be NULL) enables the kallsyms fallback and text ranges; `layout` is
 * ORC_LAYOUT_AUTO or a forced one. */
int orc_load_ex(const kimg *k, const ksym_table *syms, int layout, orc_table *t, char *err, size_t errlen);
/* Decode raw sections: `ip_sec` (ip_len bytes, linked at ip_addr) and `orc_sec` (orc_len bytes),
 * in layout V1..V3. Text ranges default to [first ip, last ip + 1]. Used by orc_load and tests. */
int orc_table_from_raw(const uint8_t *ip_sec, size_t ip_len, uint64_t ip_addr, const uint8_t *orc_sec,
                       size_t orc_len, int layout, orc_table *t, char *err, size_t errlen);
void orc_free(orc_table *t);
/* Entry covering link address `ip` (last row at or below it, inside a text range), or NULL. */
const orc_entry *orc_find(const orc_table *t, uint64_t ip);
/* objtool-style text of an entry, e.g. "sp:sp+16 bp:prevsp-16 type:call". */
const char *orc_entry_str(const orc_entry *e, char *buf, size_t len);

/* Registers at the sample. pt_regs (optional, may be NULL) is the whole register file laid out
 * like the kernel's struct pt_regs (ORC_PT_REGS_WORDS words): it supplies R10/R13/DI/DX for
 * the entries based on them (entry code, stack realignment) and cs (user mode: nothing to
 * unwind). */
struct orc_regs {
    uint64_t rip, rsp, rbp;
    const uint64_t *pt_regs;
};

/* Why an unwind ended. */
enum orc_stop {
    ORC_STOP_MAX,       /* pcs was full */
    ORC_STOP_END,       /* an end-of-stack entry (kernel thread or entry code top) */
    ORC_STOP_USER,      /* a pt_regs frame from user mode: user_* are set */
    ORC_STOP_READ,      /* a read fell outside the stack copy (truncated copy, another stack) */
    ORC_STOP_LOOP,      /* sp did not increase: bad data */
    ORC_STOP_UNDEFINED, /* the ip's entry is UNDEFINED (no unwind info there) */
    ORC_STOP_BAD,       /* unknown register/type, missing registers, zero return address */
};

typedef struct {
    int stop;            /* enum orc_stop */
    int guessed;         /* some frame had no ORC entry: unwound as a frame-pointer frame */
    uint64_t exact_mask; /* bit i (i < 64): pcs[i] is an exact ip (leaf, or interrupted by an
                            interrupt/exception frame), not a return address; symbolize
                            return addresses at pc - 1 */
    uint64_t stop_ip;    /* runtime ip of the last frame looked at */
    uint64_t user_rip, user_rsp, user_rbp; /* stop == ORC_STOP_USER */
} orc_status;

/* Unwind a kernel stack. `stack` is a copy of stack_len bytes of guest memory that starts at
 * runtime address stack_base (normally r->rsp). Returns the number of pcs written (runtime,
 * leaf first, at most max). `st` may be NULL. */
int orc_unwind(const orc_table *t, uint64_t slide, const struct orc_regs *r, uint64_t stack_base,
               const uint8_t *stack, size_t stack_len, uint64_t *pcs, int max, orc_status *st);
const char *orc_stop_name(int stop);

/* Frame-pointer unwind (user code built with -fno-omit-frame-pointer): pcs[0] = rip, then the
 * return address above each saved rbp ([rbp+8]), following [rbp] while it strictly increases.
 * Same copy/bounds rules as orc_unwind. Returns the number of pcs written. */
int fp_unwind(uint64_t rip, uint64_t rbp, uint64_t stack_base, const uint8_t *stack, size_t len,
              uint64_t *pcs, int max);
/* The hypervisor's description of where the running kernel keeps these tables (struct
 * hvt_dif_korc, include/hvt_dif.h; link addresses): the raw tables, the text ranges, and the
 * boot-built orc_lookup index between _stext and _etext when `syms` names them. 0, or -1 with
 * a message in err (no raw table addresses, too many entries or ranges). */
struct hvt_dif_korc;
int orc_korc(const orc_table *t, const ksym_table *syms, struct hvt_dif_korc *k, char *err, size_t errlen);
#endif
