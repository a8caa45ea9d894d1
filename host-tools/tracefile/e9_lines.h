/* e9_lines: the trace lines the hypervisor prints on the debug port (port 0xE9) when no NIC
 * is up (trace/sink.c), parsed in one place for hvt-import and the tests' fake hypervisor:
 *   HVT-CHUNKB kind cpu nrecords ninsns first_code_id first_tsc last_tsc LEN\n<LEN raw bytes>\n
 *                                 (what the sink writes: one OUTS instruction per byte)
 *   HVT-CHUNK kind cpu nrecords ninsns first_code_id first_tsc last_tsc HEX
 *                                 (the older hex form, still read)
 *   HVT-META key=value ...        (lstar=HEX cpus=N)
 * Contract: e9_parse() classifies a line (leading '\r's skipped): E9_CHUNK with *c filled and
 * the decoded payload in *buf (grown as needed), E9_META with c->meta pointing at the text after
 * "HVT-META ", E9_OTHER for any other line, E9_BAD with a reason in err (bad header, kind, hex,
 * or a payload larger than HVT_CHUNK_RAW_MAX). Nothing is guessed. */
#ifndef HVT_E9_LINES_H
#define HVT_E9_LINES_H
#include <stddef.h>
#include <stdint.h>

enum { E9_BAD = -1, E9_OTHER = 0, E9_CHUNK = 1, E9_META = 2 };

typedef struct {
    unsigned kind, cpu;                 /* kind: HVT_CHUNK_CODE or HVT_CHUNK_RECORDS */
    uint32_t nrecords, ninsns, first_code_id;
    uint64_t first_tsc, last_tsc;
    size_t len;                         /* payload bytes in *buf */
    const char *meta;                   /* E9_META: "key=value ..." */
} e9_line;

int e9_parse(const char *line, e9_line *c, uint8_t **buf, size_t *cap, char *err, size_t errlen);
/* The next line of a debug-port log, binary chunks included (their payload is read from f).
 * Returns E9_EOF at the end, else what e9_parse() returns; *lineno counts lines (a binary
 * chunk's header line only). */
#include <stdio.h>
enum { E9_EOF = -2 };
int e9_next(FILE *f, char **line, size_t *lcap, size_t *lineno, e9_line *c, uint8_t **buf,
            size_t *cap, char *err, size_t errlen);
#endif
