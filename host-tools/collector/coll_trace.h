/*
 * coll_trace.h - the collector's live trace file OUT/<boot>/trace.hvt, in the analyzer's format
 * (include/hvt_trace_format.h), made from the stream as it arrives. docs/trace-cli.md.
 *
 * Contract:
 *  - coll_trace_msg() takes every sequenced message the parser accepted, in stream order.
 *    A TRACE batch of format HVT_BATCH_RECORDS or HVT_BATCH_CODE (struct hvt_trace_batch,
 *    hvt_trace_batch_ext, one chunk's raw payload) becomes one chunk through trace_chunkw: the
 *    same bytes hvt-import writes for the same chunk from the debug port. Filler batches
 *    (net's selftest load) are not trace data: skipped. META "lstar=HEX" / "cpus=N" lines go
 *    to the file header. The file is created at the first trace batch.
 *  - A batch is checked before it is written: its length, format, CPU (< the HELLO's count and
 *    < COLL_TRACE_MAX_CPUS), the payload's syntax and counts against the batch header
 *    (trace_scan), code ids dense from 0 (CODE) and already defined (RECORDS). A refused batch
 *    is counted (bad_batches), explained in t->msg, and replaced by a GAP: never written, never
 *    dropped silently.
 *  - GAP: a transport gap (the parser's gap_events moved: the stream offset jumped; offsets of
 *    sequenced messages are contiguous, so every lost message shows there, once, while the
 *    per-CPU seq jumps that follow describe the same loss), a LOSS report of trace data, or a
 *    refused batch writes one GAP marker for every CPU (a
 *    one-record RECORDS chunk at that CPU's last tsc), since which CPUs' records were in the
 *    missing bytes is unknown; its counts are 0 = unknown. hvt-check fails on any GAP.
 *  - Windows: each CPU's START/STOP markers are followed (a GAP makes an open window
 *    "unknown"). The file is finished (index, footer, header with ncpus and lstar) whenever a
 *    batch leaves no window open, at BYE and at coll_trace_close(); later batches reopen it.
 *  - Checkpoint: coll_trace_sync() flushes and returns the state to store in state.bin (data
 *    length, counters); coll_trace_open() with that state continues the file cut back to it,
 *    so a collector killed and restarted writes the same file as one that never died.
 */
#ifndef HVT_COLL_TRACE_H
#define HVT_COLL_TRACE_H
#include <stdbool.h>
#include <stdint.h>
#include "hvt_stream.h"
#include "trace_chunkw.h"

#define COLL_TRACE_MAX_CPUS 256u
#define COLL_TRACE_FILE     "trace.hvt"
#define COLL_TRACE_LEVEL    3            /* zstd level: hvt-import's default, same bytes */

enum coll_window { COLL_WIN_NONE = 0, COLL_WIN_OPEN = 1, COLL_WIN_CLOSED = 2, COLL_WIN_UNKNOWN = 3 };

struct coll_trace_cpu {
    uint64_t records, insns, chunks, raw_bytes, last_tsc;
    uint32_t window;                     /* enum coll_window */
    uint32_t windows;                    /* STARTs seen */
};

struct coll_trace_state {                /* part of state.bin (coll_store.h) */
    uint64_t data_len;                   /* trace.hvt bytes at the checkpoint; 0: no file yet */
    uint64_t lstar;
    uint32_t meta_cpus, code_next;       /* META cpus=; next code id expected */
    uint64_t batches, bad_batches, gaps, filler_batches;
    uint64_t gap_seen;                   /* parser gap_events already turned into GAPs */
    struct coll_trace_cpu cpu[COLL_TRACE_MAX_CPUS];
};

struct coll_trace {
    struct coll_trace_state st;
    tcw     *w;
    char     path[4200];
    unsigned cpu_count;                  /* HELLO's */
    int      level;
    char     msg[256];                   /* why the last call returned non-zero */
};

/* path: OUT/<boot>/COLL_TRACE_FILE (or another name: --verify rebuilds into a scratch file).
 * resume: the checkpoint's state, or NULL for a new boot. 0 or -1 (err). */
int  coll_trace_open(struct coll_trace *t, const char *path, unsigned cpu_count,
                     const struct coll_trace_state *resume, int level, char *err, size_t errlen);
/* gap_events: the parser's count after this message. 0 = fine, 1 = a batch was
 * refused (t->msg: why; a GAP was written), -1 = write error (t->msg). */
int  coll_trace_msg(struct coll_trace *t, const struct hvt_msg_hdr *h, const uint8_t *pl,
                    uint64_t gap_events);
int  coll_trace_finish(struct coll_trace *t);
/* Flush (fsync when asked) and copy the state to *out. 0 or -1. */
int  coll_trace_sync(struct coll_trace *t, bool fsync, struct coll_trace_state *out);
unsigned coll_trace_open_windows(const struct coll_trace *t);
bool coll_trace_finished(const struct coll_trace *t);
/* Finish (if there is a file) and close. 0 or -1. */
int  coll_trace_close(struct coll_trace *t);
/* Close without finishing (after a failed store: nothing past the checkpoint is written on
 * purpose; a resume cuts the file back to it). */
void coll_trace_abandon(struct coll_trace *t);

#endif
