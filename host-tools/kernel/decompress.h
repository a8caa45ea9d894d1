/* decompress: decompress a Linux bzImage payload by library (LZ4 legacy frame, gzip, xz, zstd).
 * Contract: decompress_payload() detects the format from the payload's magic, decompresses at most
 * `max_out` bytes and returns them in *out (malloc'd). The kernel appends the decompressed size
 * as a le32 after the stream; callers pass it as `expect` (0 = unknown) and a mismatch is an
 * error. Errors are reported against `file` at the payload offset `base` + the failing offset. */
#ifndef HVT_DECOMPRESS_H
#define HVT_DECOMPRESS_H
#include "util.h"

/* Name of the compression format of a payload, or NULL if unrecognized. */
const char *decompress_format(const uint8_t *p, size_t len);
int decompress_payload(const char *file, uint64_t base, const uint8_t *p, size_t len, size_t expect,
                 size_t max_out, util_buf *out);
#endif
