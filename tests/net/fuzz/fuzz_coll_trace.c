/*
 * fuzz_coll_trace.c - libFuzzer target for the collector's trace path (coll_trace.c with
 * trace_scan.c and trace_chunkw.c): what a hostile or broken hypervisor can put in TRACE, META
 * and LOSS payloads. The input is a list of messages {u8 type selector, u8 cpu, u16 length,
 * payload}; a few get valid batch headers around fuzzed payloads so the checks past the header
 * are reached. Must never crash or read out of bounds (ASan); every refusal is explained; the
 * file it leaves must be one the trace reader walks without crashing.
 */
#include "coll_trace.h"
#include "trace_reader.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    static struct coll_trace t;
    if (!path[0])
        snprintf(path, sizeof path, "/dev/shm/fuzz_coll_trace.%d.hvt", (int)getpid());
    char err[300];
    if (coll_trace_open(&t, path, 4, NULL, 1, err, sizeof err) < 0)
        abort();
    static uint8_t msg[70000];
    uint64_t off = 0, gaps = 0;
    size_t i = 0;
    while (size - i >= 4) {
        uint8_t sel = data[i], cpu = data[i + 1];
        size_t len = (size_t)data[i + 2] | (size_t)data[i + 3] << 8;
        i += 4;
        if (len > size - i)
            len = size - i;
        struct hvt_msg_hdr h = { .magic = HVT_STREAM_MAGIC, .version = HVT_STREAM_VERSION,
                                 .hdr_len = sizeof h, .cpu = cpu % 6, .off = off };
        size_t n = 0;
        switch (sel % 6) {
        case 0: case 1: {                    /* a batch with a plausible header */
            struct hvt_trace_batch b = { .format = sel % 6 ? HVT_BATCH_CODE : HVT_BATCH_RECORDS,
                                         .nrecords = sel >> 3, .first_tsc = 100 };
            hvt_trace_batch_ext x = { .ninsns = sel >> 4, .first_code_id = 0, .last_tsc = 200 };
            memcpy(msg, &b, sizeof b);
            memcpy(msg + sizeof b, &x, sizeof x);
            memcpy(msg + sizeof b + sizeof x, data + i, len);
            n = sizeof b + sizeof x + len;
            h.type = HVT_MSG_TRACE;
            break;
        }
        case 2:                              /* anything at all as a TRACE payload */
            if (len < sizeof(struct hvt_trace_batch)) { i += len; continue; }
            memcpy(msg, data + i, len);
            n = len;
            h.type = HVT_MSG_TRACE;
            break;
        case 3:
            memcpy(msg, data + i, len);
            n = len;
            h.type = HVT_MSG_META;
            break;
        case 4:
            if (len < sizeof(struct hvt_loss)) { i += len; continue; }
            memcpy(msg, data + i, sizeof(struct hvt_loss));
            n = sizeof(struct hvt_loss);
            h.type = HVT_MSG_LOSS;
            break;
        default:
            gaps += sel & 1;                 /* the parser saw an offset jump */
            h.type = HVT_MSG_BYE;
            break;
        }
        i += len;
        h.len = (uint32_t)n;
        int r = coll_trace_msg(&t, &h, msg, gaps);
        if (r > 0 && !t.msg[0])
            abort();                         /* a refusal always says why */
        if (r < 0)
            break;
        off += sizeof h + n;
    }
    coll_trace_close(&t);
    tr_reader *rd = tr_open(path);           /* whatever was written stays walkable */
    if (rd) {
        tr_rec rec;
        for (int k = 0; k < 100000 && tr_next(rd, &rec) == 1; k++)
            ;
        tr_close(rd);
    }
    remove(path);
    return 0;
}
