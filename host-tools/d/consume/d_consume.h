/*
 * d_consume.h - the D consumer: turns what the hypervisor records for a D program (struct
 * hvt_drec records, aggregation snapshots) into what DTrace's dtrace(1M) prints.
 *
 * Contract:
 *  - A consumer reads a dprog it does not own (it must outlive the consumer) and keeps the
 *    running state DTrace keeps: the heading printed once, per-CPU flow indentation, options
 *    changed by setopt(), exit(), the aggregations' latest snapshots.
 *  - d_consume_record()/d_consume_buffer() take records as delivered. A record is checked
 *    whole before anything of it is printed: its header, the clause and probe it names, every
 *    action header and every value against the clause's action description (8-byte integers,
 *    strings of at most strsize-1 bytes with zero padding, stack blobs), the lengths adding up
 *    to the record's. A record that does not is reported on the error output as
 *    "hvt: malformed record from CPU n (why)" and skipped.
 *  - Output is DTrace's: without -q a "CPU     ID                    FUNCTION:NAME" heading
 *    before the first record and "%3d %6d %32s " before each record's values, which follow
 *    (trace() integers " %16lld"/" %8d"/" %5d"/" %3d" by size, strings "  %-33s"; printf() as
 *    d_printf_format; printa()), then a newline. -q prints only the values. -F (flowindent)
 *    prints "%3d %-41s " with "-> func" / "<- func" indented by 2 per level per CPU, as
 *    DTrace does (its heading too, even under -q).
 *  - Errors, drops and malformed records go to the error output with DTrace's wording and an
 *    "hvt: " prefix: "hvt: error on enabled probe ID E (ID P: prov:mod:func:name): invalid
 *    address (0x..) in action #K at DIF offset N", "hvt: N drops on CPU C",
 *    "hvt: N dynamic variable drops", "hvt: N speculative drops", "hvt: N failed speculations
 *    (no speculative buffer available)" / "(available buffer(s) still busy)".
 *  - exit(n) makes d_consume_record return D_CONSUME_EXIT; d_consume_exit_status gives n.
 *  - d_consume_end() prints what dtrace prints when tracing stops: a newline, then every
 *    aggregation printa() did not print. The caller delivers the last snapshots first.
 */
#ifndef HVT_D_CONSUME_H
#define HVT_D_CONSUME_H
#include "dprog.h"
#include "d_format.h"
#include "d_agg.h"

typedef struct d_consumer d_consumer;

/* Turns a recorded stack (HVT_DIF_OP_STACK: rsp and the bytes above it) into return
 * addresses; returns how many it wrote to pcs (at most max). */
typedef int (*d_unwind_fn)(void *ctx, const struct hvt_drec *r, int user, uint64_t rsp,
                           const uint8_t *bytes, uint32_t len, uint64_t *pcs, int max);
/* An action the consumer does not carry out itself (step, unstep, stop). */
typedef void (*d_other_fn)(void *ctx, const struct hvt_drec *r, const d_action *a);

typedef struct {
    d_out *out;           /* the program's output (stdout for hvt) */
    d_out *err;           /* errors, drops, malformed records (stderr for hvt) */
    d_symbolizer sym;     /* %a %A sym() stack(); fn NULL: addresses print as 0x... */
    d_unwind_fn unwind;   /* NULL: stack() prints no frames */
    void *unwind_ctx;
    d_other_fn other;
    void *other_ctx;
} d_consume_cfg;

#define D_CONSUME_OK    0
#define D_CONSUME_EXIT  1     /* the record ran exit(): d_consume_exit_status() */
#define D_CONSUME_BAD (-1)    /* malformed: reported and skipped */

d_consumer *d_consume_new(const dprog *p, const d_consume_cfg *cfg);
void d_consume_free(d_consumer *c);

/* One record of `len` bytes (its len field must fit). Flow indentation looks at no other. */
int d_consume_record(d_consumer *c, const void *rec, size_t len);
/* A buffer of records one after the other (as one CPU's buffer delivers them): each is
 * consumed as d_consume_record, with DTrace's look at the next record for -F. Returns
 * D_CONSUME_EXIT if any record ran exit(), D_CONSUME_BAD if the buffer ended inside a record
 * or a header was unusable (the rest is skipped), else D_CONSUME_OK. */
int d_consume_buffer(d_consumer *c, const void *buf, size_t len);

/* 1 if a DATA record in the buffer ran printa(), clear(), trunc(), normalize() or
 * denormalize(): DTrace applies them to a snapshot of the aggregations taken after the record
 * was made (right before it reads the buffers), so the caller gets one before it consumes the
 * buffer (and holds the buffers after it). */
int d_consume_buffer_uses_aggs(const d_consumer *c, const void *buf, size_t len);

/* 1 and *status if exit() ran. */
int d_consume_exit_status(const d_consumer *c, int *status);

/* Aggregation snapshots (see d_agg.h); failures are reported on the error output. */
int d_consume_snap_begin(d_consumer *c, unsigned cpu, uint64_t gen);
int d_consume_snap_add(d_consumer *c, unsigned cpu, uint64_t gen, const void *recs, size_t len);
int d_consume_snap_end(d_consumer *c, unsigned cpu, uint64_t gen);

/* Tracing stopped: a newline, then the aggregations not printed yet. */
int d_consume_end(d_consumer *c);

/* The options as the program set them so far (setopt() included). */
int d_consume_quiet(const d_consumer *c);
d_aggs *d_consume_aggs(d_consumer *c);

#endif
