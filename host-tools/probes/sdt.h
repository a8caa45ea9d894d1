/* sdt: the kernel's static tracepoints as probes (sdt:GROUP::EVENT), read from the image.
 *
 * Contract:
 *  - sdt_build() finds every tracepoint site of a kernel image: the __jump_table entries whose
 *    static key is a `struct tracepoint`'s (__tracepoint_EVENT), each a site (the jump label's
 *    NOP, a JMP while the tracepoint is on) and the out-of-line block the JMP goes to. GROUP is
 *    the trace event's system (the __start_ftrace_events table: trace_event_call.class->system
 *    of the call whose tp is the tracepoint); the argument count and types are those of the
 *    BTF typedef btf_trace_EVENT, a pointer to the probe function's prototype, without its
 *    leading `void *__data`. Field offsets come from the image's own BTF.
 *  - Each site's block is decoded (sdt_decode_block) into the recipe the hypervisor applies to
 *    the registers at the site (include/hvt_hypercall.h): the block's instructions up to its
 *    call of __SCT__tp_func_EVENT (or __traceiter_EVENT) are run symbolically; each argument
 *    register (RSI, RDX, RCX, R8, R9) must then hold a site register, a register plus a
 *    displacement, a load from [register + displacement], a constant, or an address in the
 *    image. Anything else refuses the site, with the reason: a block that stores to memory
 *    (other than the per-CPU preempt count), calls something first, moves RSP, reads a value
 *    the block computed (the funcs pointer in RAX), or passes more than five arguments.
 *  - A tracepoint is offered only when every one of its sites decodes (a probe on some of its
 *    sites would miss firings); otherwise sdt_point.unsafe says why. raw_syscalls (sys_enter,
 *    sys_exit) are refused too: their sites are on the system call slow path, which the kernel
 *    takes only while a tracer of its own is attached to them.
 * Addresses are link-time.
 */
#ifndef HVT_SDT_H
#define HVT_SDT_H
#include <stddef.h>
#include <stdint.h>
#include "kimg.h"
#include "ksym.h"
#include "btf.h"

typedef struct {
    uint64_t site, block;       /* the jump label's site and its out-of-line block */
    uint64_t recipe[3];         /* include/hvt_hypercall.h, when the block decodes */
    char *refused;              /* why it does not decode (owned), or NULL */
} sdt_site;

typedef struct sdt_point_s {
    char *event;                /* EVENT, from __tracepoint_EVENT */
    char *group;                /* the trace event's system, or NULL (a bare tracepoint) */
    uint64_t tp;                /* &__tracepoint_EVENT */
    uint32_t proto;             /* BTF FUNC_PROTO of the probe function, or 0 */
    int nargs;                  /* its parameters without __data (-1: no BTF prototype) */
    sdt_site *sites;
    uint32_t nsites;
    char *unsafe;               /* why it is not offered (owned), or NULL */
} sdt_point;

typedef struct {
    sdt_point *p;
    size_t n;                   /* tracepoints (every __tracepoint_ symbol) */
    size_t entries;             /* jump-table entries of tracepoints */
} sdt_table;

/* 0, or -1 with the reason in err (no jump table, no memory). Tracepoints without a site keep
 * an entry with nsites 0 and the reason in unsafe. */
int  sdt_build(const kimg *k, const ksym_table *syms, const btf_info *btf, sdt_table *out,
               char *err, size_t errlen);
void sdt_free(sdt_table *t);
/* One site's block: 0 with the recipe of nargs arguments, or -1 with why. */
int  sdt_decode_block(const kimg *k, const ksym_table *syms, const char *event, uint64_t site,
                      uint64_t block, int nargs, uint64_t recipe[3], char *why, size_t whylen);
/* A recipe as text: "[rbp-0x44]:4 r13 r12 [rbp-0x48]:4" (LOAD [reg+disp]:bytes, REG and LEA
 * reg+disp with :bytes when cut, IMM $n, SITE site+n; s when sign-extended). */
void sdt_recipe_str(const uint64_t recipe[3], int nargs, char *buf, size_t n);
/* The tracepoint named EVENT, or NULL. */
const sdt_point *sdt_find(const sdt_table *t, const char *event);
#endif
