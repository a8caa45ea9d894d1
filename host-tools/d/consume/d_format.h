/*
 * d_format.h - DTrace's printf() over recorded values, the output sinks of the D consumer and
 * the symbolization of kernel addresses.
 *
 * Contract:
 *  - d_out is where text goes: a FILE* or a growing NUL-terminated buffer. A failed write or
 *    allocation sets o->err and the text is incomplete; nothing else reports it.
 *  - d_printf_format() prints a format the way DTrace's printf() does, over values decoded
 *    from a record (d_value, typed by the compiler's d_val). Conversions: %d %i %u %o %x %X %c
 *    %s %p %a %A %Y, %T (RFC 822 time), %S and %C (C escapes as DTrace prints them), %%; flags - + space # 0 '; width and precision as digits or `*` (the next
 *    value, width before precision); `?` (width 16); length modifiers h hh l ll (DTrace sizes
 *    arguments from their types: h and hh cut the value to 16 and 8 bits, l and ll change
 *    nothing). DTrace's own rules are kept where they differ from C: a precision of 0 is
 *    dropped, `0` after `-` cancels the `-`, %d prints unsigned values as unsigned, %p is hex
 *    without 0x, 1/2/4-byte integers are converted at their size.
 *  - %@ conversions (printa formats) are handed to the caller's d_pf_agg_fn with the parsed,
 *    resolved conversion; d_pf_int() prints an integer for it.
 *  - It returns the number of values used, or -1 with the reason in err when the format does
 *    not fit the values (too few, wrong type, unknown conversion); what was printed stays.
 *  - %a and %A ask a d_symbolizer; without one (fn NULL) addresses print as 0x....
 */
#ifndef HVT_D_FORMAT_H
#define HVT_D_FORMAT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct {
    FILE *f;              /* non-NULL: write here; NULL: the buffer below */
    char *buf;            /* NUL-terminated once anything was written */
    size_t len, cap;
    int err;              /* a write or an allocation failed */
} d_out;

void d_out_file(d_out *o, FILE *f);
void d_out_buf(d_out *o);                 /* an empty growing buffer */
void d_out_reset(d_out *o);               /* buffer: empty it again (keeps the memory) */
void d_out_free(d_out *o);
void d_out_write(d_out *o, const char *s, size_t n);
void d_out_puts(d_out *o, const char *s);
void d_out_printf(d_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* `n` spaces */
void d_out_pad(d_out *o, int n);

/* What a symbolizer knows of an address. module: "vmlinux" for the kernel image (what DTrace
 * on Linux prints), a module's name otherwise; name NULL when only the module is known. The
 * strings must stay valid until the next call. */
typedef struct {
    const char *module;
    const char *name;
    uint64_t off;         /* addr - the symbol's start */
} d_sym;
/* 1 and *s filled when addr belongs to a known object, 0 otherwise; user: a user address. */
typedef int (*d_symbolize_fn)(void *ctx, uint64_t addr, int user, d_sym *s);
typedef struct {
    d_symbolize_fn fn;
    void *ctx;
} d_symbolizer;

/* %a and %A: "mod`func+0x14", "mod`func", "mod`0x..." or "0x..." (DTrace's addr2str). */
void d_addr2str(const d_symbolizer *sy, uint64_t addr, int user, char *buf, size_t n);
/* sym()/func(): the same without the offset. */
void d_sym2str(const d_symbolizer *sy, uint64_t addr, int user, char *buf, size_t n);
/* The start of the symbol holding addr (aggregation keys made by sym() merge by symbol). */
uint64_t d_sym_start(const d_symbolizer *sy, uint64_t addr, int user);

/* A string value the way DTrace's trace() and aggregation keys print it (dt_print_bytes): the
 * text when it is all printable, else (empty, or control bytes) a hex dump of the recorded
 * bytes, which are the string then zeros up to nbytes (strsize). width: -33 for trace(), -50
 * for keys; quiet: trace() under -q. */
void d_print_bytes(d_out *o, const char *s, size_t len, size_t nbytes, int width, int quiet);
/* The bytes as DTrace's dt_print_rawbytes dumps them (a header row, then 16 bytes a row in hex
 * and as characters): nbytes of them, s's len and zeros after (the rawbytes option's form of
 * every trace() and string key). */
void d_print_rawbytes(d_out *o, const char *s, size_t len, size_t nbytes);

/* A recorded value. */
typedef struct {
    uint8_t type;         /* enum d_vtype (dprog.h) */
    uint8_t size;         /* integers: 1, 2, 4 or 8 (0 counts as 8) */
    int64_t i;            /* integers and addresses */
    const char *s;        /* strings: the bytes, not NUL-terminated; stacks: the frames (u64) */
    size_t slen;          /* stacks: frames in s */
    int indent;           /* stacks: spaces before a frame (stackindent) */
} d_value;

/* A stack key (D_V_KSTACK / D_V_USTACK: i the header word of hvt_dif.h's encoding, s the
 * frames) as DTrace's dt_print_stack prints it: a newline, then each frame up to the first 0,
 * indented, through the symbolizer ("vmlinux`func+0x1c"; user frames 0x...), each through the
 * conversion sp (width, flags) when given. */
struct d_pfspec_s;
void d_print_stack_key(d_out *o, const d_symbolizer *sy, const d_value *v, const void *sp);

/* One parsed conversion. */
#define D_PF_ALT   0x001
#define D_PF_ZPAD  0x002
#define D_PF_LEFT  0x004
#define D_PF_SPOS  0x008
#define D_PF_SPACE 0x010
#define D_PF_GROUP 0x020
#define D_PF_DYNW  0x040
#define D_PF_DYNP  0x080
#define D_PF_AGG   0x100
typedef struct {
    int flags;
    int width, prec;      /* resolved (`*` taken); prec 0: none */
    char len;             /* 0, 'h' (h), 'H' (hh), 'l' (l), 'q' (ll) */
    char conv;            /* d i u o x X c s p a A Y T S C % */
} d_pfspec;

/* Print v the way conversion sp (an integer one) does; size 1/2/4/8 and signedness of the
 * value's type; %d turns into %i or %u by signedness as DTrace's does. */
void d_pf_int(d_out *o, const d_pfspec *sp, int64_t v, int size, int is_signed);

/* A %@ conversion: print the aggregation's value for it; 0, or -1 (reason in err). */
typedef int (*d_pf_agg_fn)(void *ctx, d_out *o, const d_pfspec *sp, char *err, size_t errlen);

int d_printf_format(d_out *o, const char *fmt, const d_value *v, int nv, const d_symbolizer *sy,
                    d_pf_agg_fn agg, void *agg_ctx, char *err, size_t errlen);

#endif
