/* libFuzzer target: the trace reader. The first byte picks the mode:
 *   even: the input is a whole trace file (header, chunks, index, footer as given);
 *   odd:  the rest is one RECORDS chunk's raw payload, wrapped in a valid file (header, a
 *         CODE chunk of eight entries, the RECORDS chunk with a correct CRC), so the record
 *         decoder itself is reached (a whole-file mutation rarely gets past the CRC). */
#include "trace_reader.h"
#include "util.h"
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { NCODES = 8 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    util_err_quiet = 1;
    if (size < 1) return 0;
    uint8_t *buf = NULL;
    size_t len;
    if (!(data[0] & 1)) {
        buf = malloc(size - 1 ? size - 1 : 1);
        memcpy(buf, data + 1, size - 1);
        len = size - 1;
    } else {
        const uint8_t *rec = data + 1;
        size_t rlen = size - 1;
        uint8_t code[NCODES * 4];
        for (int i = 0; i < NCODES; i++) { /* entries of 1..3 bytes */
            code[i * 4] = (uint8_t)(1 + i % 3);
            code[i * 4 + 1] = 0x90;
            code[i * 4 + 2] = 0x90;
            code[i * 4 + 3] = 0x90;
        }
        size_t code_len = 0;
        uint8_t packed[NCODES * 4];
        for (int i = 0; i < NCODES; i++) {
            memcpy(packed + code_len, code + i * 4, 1 + code[i * 4]);
            code_len += 1 + code[i * 4];
        }
        len = sizeof(hvt_trace_file_hdr) + 2 * sizeof(hvt_trace_chunk_hdr) + code_len + rlen;
        buf = calloc(1, len);
        hvt_trace_file_hdr h = {0};
        memcpy(h.magic, HVT_TRACE_MAGIC, sizeof h.magic);
        h.version = HVT_TRACE_VERSION;
        h.hdr_size = sizeof h;
        h.ncpus = 1;
        memcpy(buf, &h, sizeof h);
        size_t off = sizeof h;
        hvt_trace_chunk_hdr c = {0};
        c.magic = HVT_CHUNK_MAGIC;
        c.kind = HVT_CHUNK_CODE;
        c.payload_size = c.raw_size = (uint32_t)code_len;
        c.nrecords = NCODES;
        c.crc32 = (uint32_t)crc32(crc32(0, Z_NULL, 0), packed, (uInt)code_len);
        memcpy(buf + off, &c, sizeof c);
        memcpy(buf + off + sizeof c, packed, code_len);
        off += sizeof c + code_len;
        memset(&c, 0, sizeof c);
        c.magic = HVT_CHUNK_MAGIC;
        c.kind = HVT_CHUNK_RECORDS;
        c.cpu = data[0] >> 1;
        c.payload_size = c.raw_size = (uint32_t)rlen;
        c.crc32 = (uint32_t)crc32(crc32(0, Z_NULL, 0), rec, (uInt)rlen);
        memcpy(buf + off, &c, sizeof c);
        memcpy(buf + off + sizeof c, rec, rlen);
    }
    tr_reader *r = tr_open_mem("fuzz", buf, len);
    if (r) {
        tr_rec rec;
        uint64_t sum = 0;
        while (tr_next(r, &rec) > 0) {
            sum += rec.rip + rec.code_len;
            if (rec.kind == 0)
                for (int i = 0; i < rec.code_len; i++) sum += rec.code[i];
        }
        for (size_t i = 0; i < tr_chunk_count(r); i++) tr_seek_chunk(r, i);
        tr_close(r);
        (void)sum;
    }
    free(buf);
    return 0;
}
