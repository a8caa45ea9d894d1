/* trace_scan: the syntax of one chunk's raw payload (include/hvt_trace_format.h), checked
 * without decoding it: no code dictionary, no register state. The collector uses it to judge
 * each HVT_MSG_TRACE batch before it becomes a chunk (counts must match the batch header) and
 * to follow tracing windows (START/STOP markers) per CPU.
 * Contract: never reads outside [p, p + n); returns 0 with the summary filled, or -1 with
 * "record byte N: what" in err for the first malformed record. Semantics the syntax cannot
 * show (a predicted code id with no prediction, ids beyond the dictionary, a RUN's instruction
 * with no prediction) are the reader's; the record modes' syntax is checked here (a MODE
 * marker's mode and mask, register fields outside the mode's set, RUN/REPEAT counts of 0, a
 * REPEAT before any instruction of the chunk or after a GAP). The syntax is HVT_TRACE_VERSION's
 * (version 4: the one-byte RFLAGS field, HVT_SHORT_U32's 4 raw bytes), the only one a batch
 * may carry: the stream's version fixes it, and the collector files batches under a header of
 * that version. */
#ifndef HVT_TRACE_SCAN_H
#define HVT_TRACE_SCAN_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t records, insns;     /* all records; instructions (a RUN or REPEAT marker is one
                                    record and its n instructions) */
    uint32_t modes;              /* bit m: a MODE marker set mode m (hvt_rec_mode) */
    uint32_t starts, stops, gaps;
    int last_window;             /* the last START (+1) or STOP (-1) marker; 0: neither */
    uint64_t code_ids_end;       /* 1 + the largest explicit code id (0: none) */
} ts_summary;

int ts_scan_records(const uint8_t *p, size_t n, ts_summary *s, char *err, size_t errlen);
/* CODE payload: entries {u8 len 1..15, bytes}; *entries = their count. */
int ts_scan_code(const uint8_t *p, size_t n, uint32_t *entries, char *err, size_t errlen);
#endif
