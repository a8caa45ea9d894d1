/* trace_chunkw: the chunk layer of a trace file (include/hvt_trace_format.h) - the one place
 * that writes the file header, chunk headers (zstd, CRC32), the index and the footer. Used by
 * trace_writer (records it encodes itself), hvt-import (chunk payloads from the debug port) and
 * hvtrace-collector (chunk payloads from HVT_MSG_TRACE batches), so a chunk payload becomes the
 * same bytes on disk whichever way it arrived.
 * Contract:
 *  - A payload is compressed with zstd at the writer's level when that makes it smaller,
 *    else stored (level 0: always stored). The CRC covers the stored bytes.
 *  - The index lists every CODE/RECORDS chunk in file order; the footer's totals are the sums
 *    of the RECORDS chunks' nrecords and ninsns.
 *  - tcw_finish() completes the file (index, footer, header rewritten with the caller's
 *    ncpus/tsc_hz/lstar/build id) but keeps it open: a later tcw_chunk() cuts the index and
 *    footer off again and appends, so a live file is complete whenever it is finished and
 *    always readable by walking chunks (trace_reader) in between.
 *  - tcw_data_len() is the file length without index and footer; tcw_reopen() continues a file
 *    cut back to such a length (a checkpoint), rebuilding the index by walking chunk headers.
 *  - Single-threaded. After an I/O error every call fails; tcw_error() says why. */
#ifndef HVT_TRACE_CHUNKW_H
#define HVT_TRACE_CHUNKW_H
#include "hvt_trace_format.h"
#include <stddef.h>

typedef struct tcw tcw;

/* Create (truncate) path and write hdr (magic, version and size are filled in). */
tcw *tcw_create(const char *path, const hvt_trace_file_hdr *hdr, int zstd_level);
/* Reopen a file written by this layer, keeping its first data_len bytes (file header and
 * whole chunks). Fails, with the reason in err, if the chunks do not end exactly there. */
tcw *tcw_reopen(const char *path, uint64_t data_len, int zstd_level, char *err, size_t errlen);
/* Append one CODE or RECORDS chunk. h supplies kind, cpu, nrecords, ninsns, first_tsc,
 * last_tsc and first_code_id; the rest is filled in. raw_len <= HVT_CHUNK_RAW_MAX. */
int tcw_chunk(tcw *w, const hvt_trace_chunk_hdr *h, const void *raw, size_t raw_len);
int tcw_finish(tcw *w, const hvt_trace_file_hdr *hdr);
/* Hand what was written to the kernel; sync: also fsync (survives a host crash). */
int tcw_flush(tcw *w, int sync);
uint64_t tcw_data_len(const tcw *w);
uint64_t tcw_chunks(const tcw *w);
int tcw_finished(const tcw *w);
const char *tcw_error(const tcw *w);
/* Close (without finishing: call tcw_finish first for a complete file). 0, or -1 if any
 * write failed. */
int tcw_close(tcw *w);
#endif
