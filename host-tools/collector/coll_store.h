/*
 * coll_store.h - the collector's trace directory for one hypervisor boot.
 *
 * Layout of OUT/<boot_id hex>/ (docs/stream-protocol.md, "Collector trace directory"):
 *   header.txt        key=value metadata (hypervisor version, CPU count, guest kernel identity,
 *                     HELLO text, counters), rewritten atomically at every checkpoint
 *   chunk-NNNNNN.hvts the sequenced messages verbatim (32-byte header + payload each)
 *   index.tsv         one line per chunk: chunk first_off end_off messages bytes
 *   console.log       the guest's serial console bytes, in order
 *   control.log       control replies, one line each
 *   trace.hvt         the trace in the analyzer's format, written live (coll_trace.h)
 *   state.bin         resume checkpoint (struct coll_state): on restart the files are cut back
 *                     to it and the hypervisor resends everything after it
 *   OUT/current       symlink to the newest boot directory
 *
 * Contract: one store = one boot_id; a different boot never writes into it. The checkpoint
 * (coll_store_checkpoint) is what the collector ACKs: everything below state.next_off is in
 * the files when it returns 0 (written with write(), every result checked; with fsync_each
 * also fsync'd, state.bin's rename included). `durable` is the last checkpoint that made it to
 * disk whole: the most the collector may ever ACK.
 * Failures are sticky: the first failed open/write/fsync/close/rename sets fail_errno and
 * fail_what ("write DIR/chunk-000002.hvts"), and every later checkpoint fails, so nothing past
 * `durable` is acknowledged; the caller stops storing (coll.h).
 * Files are created 0600 and the boot directory 0700 (fchmod/chmod, whatever the umask):
 * they hold every guest register the tracer saw.
 */
#ifndef HVT_COLL_STORE_H
#define HVT_COLL_STORE_H
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include "hvt_stream.h"
#include "coll_parse.h"
#include "coll_trace.h"

#define COLL_STATE_MAGIC 0x54534356u   /* "VCST" */
#define COLL_STATE_VERSION 2u          /* 2: trace.hvt's state added */

struct coll_state {                    /* state.bin, host byte order */
    uint32_t magic, version;
    uint8_t  boot_id[HVT_BOOT_ID_LEN];
    uint64_t next_off;
    uint32_t chunk_no, cpu_count;
    uint64_t chunk_len, chunk_first_off, chunk_msgs;
    uint64_t console_len, control_len;
    struct coll_counters c;
    uint64_t next_seq[COLL_MAX_CPUS];
    struct coll_trace_state trace;     /* trace.hvt at this checkpoint */
};

struct coll_store {
    char     dir[4096];
    struct coll_state st;
    struct hvt_hello hello;
    char     hello_text[1024];
    char     guest_kernel[320];
    char     meta[4096];               /* accumulated META text */
    size_t   meta_len;
    int      chunk_fd, console_fd, control_fd;
    uint64_t chunk_max;
    bool     fsync_each;
    bool     resumed;                  /* the directory existed: this is a resume */
    uint32_t connections;
    char    *index_closed;             /* index.tsv lines of closed chunks (malloc'd) */
    size_t   index_closed_len;
    struct coll_state durable;         /* the last checkpoint written whole (state.bin) */
    int      fail_errno;               /* 0, or the errno of the first failed file operation */
    char     fail_what[4300];          /* that operation and its file */
};

/* Open (resume) or create OUT/<boot>/ for this HELLO. 0 or -1 with errno-style message in err. */
int  coll_store_open(struct coll_store *s, const char *out, const struct hvt_hello *h,
                     const char *text, size_t text_len, uint64_t chunk_max, bool fsync_each,
                     char *err, size_t errlen);
/* Replayed HELLOs. A HELLO is sent in clear and can be recorded and sent again; accepting
 * one again makes the collector reuse the session's nonces (the session key and nonces depend
 * on boot_id and connection only). So the highest connection number accepted for a boot is
 * kept in OUT/<boot>/hello.conn (written and renamed before the WELCOME goes out), and
 * coll_store_hello_fresh() accepts a HELLO only when
 *  - no directory exists for its boot (a new boot), or
 *  - its boot is the newest one here (OUT/current, what a restarted collector continues) and
 *    its connection is above the highest accepted for that boot.
 * 1 fresh, 0 refused (why says why). coll_store_hello_accepted() records the connection (0,
 * or -1 with errno: the caller must not answer the HELLO then). */
int  coll_store_hello_fresh(const char *out, const struct hvt_hello *h, char *why, size_t whylen);
int  coll_store_hello_accepted(const char *out, const struct hvt_hello *h, bool fsync_each);
/* Append a run of verbatim sequenced messages (already validated) [raw, raw+n), first at off. */
int  coll_store_write_msgs(struct coll_store *s, const uint8_t *raw, size_t n, uint64_t first_off,
                           uint64_t nmsgs);
int  coll_store_console(struct coll_store *s, const uint8_t *p, size_t n);
int  coll_store_control_line(struct coll_store *s, const char *line);
void coll_store_meta(struct coll_store *s, const uint8_t *p, size_t n);
/* Record the parser's continuity/counters and make everything so far durable. */
int  coll_store_checkpoint(struct coll_store *s, const struct coll_parser *p);
/* 0, or -1 when a close reported a write error (fail_errno set). */
int  coll_store_close(struct coll_store *s);
void coll_hex(const uint8_t *b, size_t n, char *out);
/* "ENOSPC" for ENOSPC: the symbolic name status answers carry. */
const char *coll_errno_name(int e);
/* mkdir PATH 0700 if missing, then chmod 0700 (umask-independent). 0 or -1 (errno). */
int  coll_mkdir_private(const char *path);

#endif
