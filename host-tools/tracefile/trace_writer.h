/* trace_writer: writes hvtrace trace files (include/hvt_trace_format.h) from records. Used by the
 * test generator and the unit tests; chunks go to disk through trace_chunkw (the chunk layer
 * shared with hvt-import and the collector).
 * Contract: single-threaded. Callers give full register state per instruction; the writer
 * does the delta and predictor encoding per CPU, keeps the code-bytes dictionary (each
 * distinct byte string is stored once), cuts chunks at HVT_CHUNK_RAW_MAX / 4 raw bytes,
 * compresses with zstd, and on tw_close() writes the index and footer. Any I/O error makes
 * every later call fail and tw_close() return -1. */
#ifndef HVT_TRACE_WRITER_H
#define HVT_TRACE_WRITER_H
#include "hvt_trace_format.h"
#include <stddef.h>

typedef struct tw_writer tw_writer;

typedef struct {
    uint64_t rip, tsc, cr3;
    uint64_t regs[HVT_NREGS]; /* after the instruction */
    const uint8_t *code;      /* instruction bytes */
    uint8_t code_len;
} tw_insn;

/* hdr: ncpus, tsc_hz, lstar, build_id are taken from it; the rest is filled in. */
tw_writer *tw_open(const char *path, const hvt_trace_file_hdr *hdr, int zstd_level);
int tw_insn_add(tw_writer *w, unsigned cpu, const tw_insn *in);
int tw_event(tw_writer *w, unsigned cpu, uint8_t vector, uint8_t type, int64_t errcode /* -1 none */);
int tw_syscall(tw_writer *w, unsigned cpu, uint64_t nr);
int tw_vmexit(tw_writer *w, unsigned cpu, uint64_t reason, uint64_t qual);
int tw_switch(tw_writer *w, unsigned cpu, uint64_t pid, uint64_t tgid, const char *comm, uint64_t cr3);
int tw_startstop(tw_writer *w, unsigned cpu, int start, uint64_t reason);
int tw_gap(tw_writer *w, unsigned cpu, uint64_t lost_records, uint64_t lost_insns);
int tw_time(tw_writer *w, unsigned cpu, uint64_t tsc);
/* The record mode (format version 3) from the next record on, on every CPU (and CPUs seen
 * later): HVT_MODE_FULL (the default), HVT_MODE_FLOW, or HVT_MODE_REGS recording only the
 * registers in regmask (HVT_REG_* bits). A CPU's open chunk gets a MODE marker; the encoder
 * restates the mode at each later chunk start. 0, or -1 for an unknown mode. */
int tw_set_mode(tw_writer *w, unsigned mode, uint32_t regmask);
/* Cut chunks at `bytes` raw bytes instead (at most the default; tests that need many chunks,
 * or chunks that fit one HVT_MSG_TRACE batch). */
void tw_set_chunk_bytes(tw_writer *w, size_t bytes);
int tw_close(tw_writer *w);
#endif
