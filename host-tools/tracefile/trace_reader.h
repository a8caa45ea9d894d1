/* trace_reader: reads hvtrace trace files (include/hvt_trace_format.h).
 * Contract: tr_open() maps the file, checks the header, takes the chunk list from the index
 * (or, if the footer or index is missing or bad, by walking chunk headers: a truncated file
 * stays readable up to its last whole chunk, and the truncation is reported), and loads the
 * code dictionary. tr_next() yields records in file order; every malformed byte is reported as
 * "FILE: offset N: ..." (N is the chunk's file offset plus, for records, "record byte M" of the
 * decompressed payload) and makes tr_next() return -1. Never reads out of bounds.
 * tr_seek_chunk() starts iteration at any RECORDS chunk (chunks decode independently);
 * tr_set_merge() iterates all CPUs merged by time instead of in file order.
 * Record modes (version 3): a RUN or REPEAT marker is yielded as its n instructions (TR_INSN
 * each, never as a marker; changed 0, except a version 4 REPEAT in FULL or REGS: each
 * instruction adds the last instruction record's register deltas again, and its changed is
 * the registers those deltas move, within regs_known); a MODE marker is yielded (a = mode,
 * b = mask). Every
 * record carries the mode in force and regs_known, the registers whose values regs[] holds
 * (all in FULL, none in FLOW, the set in REGS): the others are stale, never to be shown as the
 * instruction's. A chunk whose header counts (nrecords, ninsns) differ from what its payload
 * holds is reported as damaged when its end is reached. */
#ifndef HVT_TRACE_READER_H
#define HVT_TRACE_READER_H
#include "hvt_trace_format.h"
#include <stddef.h>

enum { TR_INSN = 0 }; /* tr_rec.kind: TR_INSN or an HVT_MARK_* value */

typedef struct {
    uint8_t kind;
    uint16_t cpu;
    uint64_t tsc, rip, cr3;
    uint32_t code_id;
    const uint8_t *code;     /* instruction bytes (code_len; 16 bytes are always readable) */
    uint8_t code_len;
    uint32_t changed;        /* HVT_REG_* bits whose value differs from this CPU's previous record
                                (known registers only: a subset of regs_known) */
    const uint64_t *regs;    /* register state after the instruction (HVT_NREGS); only the
                                regs_known bits are this instruction's, the rest are stale */
    uint32_t regs_known;     /* HVT_REG_* bits regs[] knows here (FULL: all, FLOW: 0, REGS: its set) */
    uint8_t mode;            /* the record mode in force (hvt_rec_mode; FULL before version 3) */
    /* marker fields */
    uint8_t vector, ev_type;
    int64_t errcode;         /* -1 = none */
    uint64_t a, b;           /* SYSCALL: a = nr; VMEXIT: reason, qual; GAP: records, insns;
                                START/STOP: a = reason; SWITCH, CONTEXT: a = pid, b = tgid;
                                TIME: a; MODE: a = mode, b = register mask */
    char comm[HVT_COMM_MAX + 1];
    uint64_t switch_cr3;
} tr_rec;

typedef struct tr_reader tr_reader;

tr_reader *tr_open(const char *path);
/* Same over bytes in memory (not copied; must outlive the reader). */
tr_reader *tr_open_mem(const char *name, const uint8_t *data, size_t len);
void tr_close(tr_reader *r);
const hvt_trace_file_hdr *tr_header(const tr_reader *r);
/* 1 = a record, 0 = end, -1 = error (reported). */
int tr_next(tr_reader *r, tr_rec *out);
size_t tr_chunk_count(const tr_reader *r);
const hvt_trace_index_entry *tr_chunk(const tr_reader *r, size_t i);
int tr_seek_chunk(tr_reader *r, size_t i);
/* From the start again, records of all CPUs merged by tsc (ties: lower CPU first); each CPU's
 * own order is kept. tr_seek_chunk() returns to file order. */
int tr_set_merge(tr_reader *r);
/* Skip whole RECORDS chunks whose [first_tsc, last_tsc] misses [from, to] (the index's time
 * ranges make this a seek); records inside kept chunks are the caller's to filter. */
void tr_set_range(tr_reader *r, uint64_t from, uint64_t to);
/* Whole-file counts from the chunk list. */
uint64_t tr_total_insns(const tr_reader *r);
/* Was the file without a usable index (chunk list recovered by scanning)? */
int tr_recovered(const tr_reader *r);
/* Was any damage (truncation, bad chunk, bad record) found and reported so far? */
int tr_damaged(const tr_reader *r);
/* The format's names: a register (HVT_REG_*: "rax" .. "r15", "rflags"; NULL beyond), and a
 * record mode as users write it: "full", "flow", "regs=rax:rsp" (the
 * hypervisor's trace option's syntax) (tr_mode_name writes it into
 * buf and returns buf; tr_mode_parse reads it: 0, or -1 naming what is wrong in err). */
const char *tr_reg_name(unsigned reg);
const char *tr_mode_name(char *buf, size_t n, unsigned mode, uint32_t mask);
int tr_mode_parse(const char *s, unsigned *mode, uint32_t *mask, char *err, size_t errlen);
/* Code dictionary access (for the decoder). */
uint32_t tr_code_count(const tr_reader *r);
const uint8_t *tr_code(const tr_reader *r, uint32_t id, uint8_t *len);
#endif
