/*
 * test_trace_link - unit tests (ASan/UBSan) of the pieces that carry a trace over the link:
 * trace/trace_ctl.c (argument checks, commands, replies), host-tools/tracefile/trace_scan.c (payload
 * syntax, counts, windows; never reads out of bounds on garbage) and host-tools/tracefile/trace_chunkw.c
 * (finish, append after finish, reopen at a checkpoint, refusal of a wrong checkpoint).
 * Closing line: "trace-link: N passed, N failed".
 */
#define _GNU_SOURCE
#include "trace_ctl.h"
#include "trace_scan.h"
#include "trace_chunkw.h"
#include "trace_varint.h"
#include "trace_reader.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"


static int requests, last_on, busy, configured;
static uint32_t configured_flags;
static void fake_request(bool on) { requests++; last_on = on; }
/* The hypervisor refuses new filters while a window is open: 'busy' plays that part. */
static int fake_configure(const struct hvt_trace_args *a)
{
    if (busy && a->flags)
        return HVT_CTL_EINVAL;
    configured++;
    configured_flags = a->flags;
    return HVT_CTL_OK;
}
static void fake_counters(struct hvt_trace_status *st) { st->chunks_sent = 42; }

static int start_with(const struct hvt_trace_args *a, uint32_t len)
{
    uint8_t out[HVT_CTL_MAX_DATA];
    uint32_t n = 99;
    return trace_ctl_handle(HVT_CTL_TRACE_START, (const uint8_t *)a, len, out, &n);
}

static void test_ctl(void)
{
    static const struct trace_ctl_ops ops = { .configure = fake_configure, .request = fake_request,
                                              .counters = fake_counters };
    trace_ctl_set_ops(&ops);
    struct hvt_trace_args a, parsed;
    memset(&a, 0, sizeof a);
    CHECK(trace_ctl_parse_args(NULL, 0, &parsed) == HVT_CTL_OK && parsed.flags == 0);
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_OK);
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a - 1, &parsed) == HVT_CTL_EINVAL);
    a.flags = 1u << 7;                                   /* unknown flag */
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_EINVAL);
    a.flags = 0;
    a.reserved[2] = 1;                                   /* reserved must be zero */
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_EINVAL);
    a.reserved[2] = 0;
    a.record = HVT_TRACE_RECORD(HVT_MODE_FLOW, 0);        /* a record mode without its flag */
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_EINVAL);
    a.flags = HVT_TRACE_F_RECORD;
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_OK && parsed.record == a.record);
    a.record = HVT_TRACE_RECORD(HVT_MODE_FLOW, 1);        /* FLOW has no register set */
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_EINVAL);
    a.record = HVT_TRACE_RECORD(HVT_MODE_REGS, 0);        /* REGS needs one */
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_EINVAL);
    a.record = HVT_TRACE_RECORD(HVT_MODE_REGS, 1u << HVT_NREGS);   /* no such register */
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_EINVAL);
    a.record = HVT_TRACE_RECORD(HVT_MODE_COUNT, 0);       /* no such mode */
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_EINVAL);
    a.record = HVT_TRACE_RECORD(HVT_MODE_REGS, 1u << HVT_REG_RAX | 1u << HVT_REG_RFLAGS);
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_OK);
    a.record = 0;
    a.flags = HVT_TRACE_F_KERNEL_ONLY | HVT_TRACE_F_USER_ONLY;
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_EINVAL);
    a.flags = HVT_TRACE_F_ADDR_RANGE;
    a.addr_lo = a.addr_hi = 0x1000;                      /* empty range */
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_EINVAL);
    a.flags = HVT_TRACE_F_BUDGET;                        /* zero budget */
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_EINVAL);
    a.flags = HVT_TRACE_F_KERNEL_ONLY;                   /* well-formed and implemented */
    CHECK(trace_ctl_parse_args((uint8_t *)&a, sizeof a, &parsed) == HVT_CTL_OK);
    /* a refused START changes nothing: bad arguments, or filters while a window is open */
    a.flags = HVT_TRACE_F_KERNEL_ONLY | HVT_TRACE_F_USER_ONLY;
    CHECK(start_with(&a, sizeof a) == HVT_CTL_EINVAL && requests == 0 && configured == 0);
    a.flags = HVT_TRACE_F_KERNEL_ONLY;
    busy = 1;
    CHECK(start_with(&a, sizeof a) == HVT_CTL_EINVAL && requests == 0 && configured == 0);
    busy = 0;
    uint8_t out[HVT_CTL_MAX_DATA];
    uint32_t n = 0;
    CHECK(start_with(&a, sizeof a) == HVT_CTL_OK && requests == 1 && last_on && configured == 1 &&
          configured_flags == HVT_TRACE_F_KERNEL_ONLY);
    CHECK(trace_ctl_handle(HVT_CTL_TRACE_STOP, NULL, 0, out, &n) == HVT_CTL_OK && requests == 2 &&
          !last_on && n == sizeof(struct hvt_trace_status));
    memset(&a, 0, sizeof a);
    CHECK(start_with(&a, 0) == HVT_CTL_OK && requests == 3 && last_on && configured_flags == 0);
    CHECK(trace_ctl_handle(HVT_CTL_TRACE_STOP, NULL, 0, out, &n) == HVT_CTL_OK && requests == 4);
    struct hvt_trace_status st;
    memcpy(&st, out, sizeof st);
    CHECK(st.host_request == HVT_TRACE_REQ_STOP && st.starts == 2 && st.stops == 2 && st.chunks_sent == 42);
    CHECK(trace_ctl_handle(HVT_CTL_TRACE_STOP, out, 1, out, &n) == HVT_CTL_EINVAL);
    CHECK(trace_ctl_handle(HVT_CTL_TRACE_STATUS, NULL, 0, out, &n) == HVT_CTL_OK && requests == 4);
    CHECK(trace_ctl_handle(HVT_CTL_TRACE_STATUS + 1, NULL, 0, out, &n) == HVT_CTL_ENOSYS);
}

/* Version 4's forms on the wire (the scanner's only syntax): the U32 short record's 4 raw
 * bytes, the one-byte RFLAGS field, REPEAT in FULL and REGS; their corrupt forms refused at
 * their record with a message that names them. */
static int scan_refuses(const uint8_t *b, size_t n, const char *at, const char *what)
{
    ts_summary s;
    char err[160] = "";
    int rc = ts_scan_records(b, n, &s, err, sizeof err);
    if (rc < 0 && strstr(err, at) && strstr(err, what)) return 1;
    printf("  scan of %zu bytes: rc %d '%s' (wanted '%s' and '%s')\n", n, rc, err, at, what);
    return 0;
}

static void test_scan_v4(void)
{
    const uint8_t M = HVT_TAG_MARKER, S = HVT_INSN_SHORT, W = HVT_RFLAGS_WIDE;
    ts_summary s;
    char err[160];
    /* accepted: U32 (bit 31 set), U32 with packed RFLAGS, varint with packed, long record with
     * packed and with WIDE, REPEAT after a long record that changed several registers, REPEAT
     * after that REPEAT, a REPEAT after a short record, REPEAT in REGS */
    uint8_t ok[] = { HVT_INSN_CODE | HVT_INSN_REGS, 0, 0xc2, 0x01, 20, 0x80, 0x40, 0x80, 0x80, 0x01,
                     HVT_INSN_RIP | HVT_INSN_REGS | HVT_INSN_RFLAGS, 3, 0xc2, 0x01, 1, 2, 2, W, 0x84, 0x08,
                     M | HVT_MARK_REPEAT, 3, 0, M | HVT_MARK_REPEAT, 1, 0,
                     S | HVT_SHORT_U32 | HVT_REG_RAX, 0xef, 0xcd, 0xab, 0x89,
                     S | HVT_SHORT_U32 | HVT_SHORT_RFLAGS | HVT_REG_R9, 1, 0, 0, 0x80, 0x09,
                     S | HVT_SHORT_RFLAGS | HVT_REG_RDX, 5, 0x3f,
                     S | HVT_SHORT_RFLAGS | HVT_REG_RDX, 5, W, 0xff, 0x13,
                     M | HVT_MARK_REPEAT, 2, 0,
                     HVT_INSN_CODE | HVT_INSN_RFLAGS, 1, 0x01,
                     M | HVT_MARK_MODE, HVT_MODE_REGS, 0x82, 0x01,
                     HVT_INSN_CODE | HVT_INSN_REGS, 0, 0x82, 0x01, 2, 4, M | HVT_MARK_REPEAT, 4, 0 };
    CHECK(ts_scan_records(ok, sizeof ok, &s, err, sizeof err) == 0 && s.records == 13 &&
              s.insns == 2 + 3 + 1 + 4 + 2 + 1 + 1 + 4 && s.code_ids_end == 2 && s.modes == 1u << HVT_MODE_REGS,
          "v4 forms accepted and counted (records %u insns %u): %s", s.records, s.insns, err);
    /* an RFLAGS field of 0 (no change) or 0x41..0xff, in a long and in a short record */
    int bad_ok = 1;
    for (unsigned v = 0; v < 0x100; v++) {
        if (v && v <= W) continue;
        char what[32];
        snprintf(what, sizeof what, "RFLAGS field byte 0x%02x", v);
        uint8_t l[] = { HVT_INSN_CODE, 0, HVT_INSN_CODE | HVT_INSN_RFLAGS, 0, (uint8_t)v, 1, 1 };
        uint8_t sh[] = { HVT_INSN_CODE, 0, S | HVT_SHORT_RFLAGS | HVT_REG_RSI, 2, (uint8_t)v, 1, 1 };
        bad_ok = bad_ok && scan_refuses(l, sizeof l, "record byte 2", what) && scan_refuses(sh, sizeof sh, "record byte 2", what);
    }
    CHECK(bad_ok, "v4: RFLAGS fields 0x00 and 0x41..0xff refused at their record, the byte named");
    uint8_t cut_rf[] = { HVT_INSN_CODE, 0, HVT_INSN_CODE | HVT_INSN_RFLAGS, 0 };
    CHECK(scan_refuses(cut_rf, sizeof cut_rf, "record byte 2", "truncated RFLAGS field"));
    uint8_t cut_wide[] = { HVT_INSN_CODE, 0, S | HVT_SHORT_RFLAGS | HVT_REG_RAX, 2, W, 0x80 };
    CHECK(scan_refuses(cut_wide, sizeof cut_wide, "record byte 2", "truncated varint"));
    /* U32 cut at the payload's end: 0 to 3 of its 4 bytes */
    uint8_t u32[] = { HVT_INSN_CODE, 0, S | HVT_SHORT_U32 | HVT_REG_RAX, 1, 2, 3, 4 };
    CHECK(ts_scan_records(u32, sizeof u32, &s, err, sizeof err) == 0 && s.insns == 2, "v4 U32 whole: %s", err);
    int cut_ok = 1;
    for (size_t n = 3; n < sizeof u32; n++)
        cut_ok &= scan_refuses(u32, n, "record byte 2", "truncated 32-bit register value");
    CHECK(cut_ok, "v4: a U32 short record cut short refused");
    /* version 3's RFLAGS varint (zigzag 0x246 = 0x8c 0x09) is not a batch's any more */
    uint8_t v3rf[] = { HVT_INSN_CODE | HVT_INSN_RFLAGS, 0, 0x8c, 0x09 };
    CHECK(scan_refuses(v3rf, sizeof v3rf, "record byte 0", "RFLAGS field byte 0x8c"));
    /* U32 outside the mode's set: FLOW, and REGS without the register */
    uint8_t u32flow[] = { M | HVT_MARK_MODE, HVT_MODE_FLOW, 0, HVT_INSN_CODE, 0, S | HVT_SHORT_U32 | HVT_REG_RAX, 1, 2, 3, 4 };
    CHECK(scan_refuses(u32flow, sizeof u32flow, "record byte 5", "outside the record mode's set"));
    /* REPEAT in FULL still needs an instruction before it in the chunk, or since a GAP */
    uint8_t repgap[] = { S | HVT_SHORT_U32 | HVT_REG_RAX, 1, 2, 3, 4, M | HVT_MARK_GAP, 0, 0, M | HVT_MARK_REPEAT, 1, 0 };
    CHECK(scan_refuses(repgap, sizeof repgap, "record byte 8", "REPEAT with no instruction"));
}

static void test_scan(void)
{
    uint8_t b[256], *p = b;
    *p++ = HVT_TAG_MARKER | HVT_MARK_START; p = tv_put(p, 1);
    *p++ = HVT_INSN_RIP | HVT_INSN_CODE; p = tv_put(p, tv_zig(0x1000)); p = tv_put(p, 7);
    *p++ = HVT_INSN_REGS; p = tv_put(p, 0x3); p = tv_put(p, 2); p = tv_put(p, 4);
    *p++ = HVT_TAG_MARKER | HVT_MARK_SWITCH; p = tv_put(tv_put(p, 5), 5); *p++ = 2; *p++ = 'a'; *p++ = 'b'; p = tv_put(p, 0);
    *p++ = 0;
    *p++ = HVT_TAG_MARKER | HVT_MARK_STOP; p = tv_put(p, 0);
    ts_summary s;
    char err[120];
    size_t n = (size_t)(p - b);
    CHECK(ts_scan_records(b, n, &s, err, sizeof err) == 0 && s.records == 6 && s.insns == 3 &&
          s.starts == 1 && s.stops == 1 && s.last_window == -1 && s.code_ids_end == 8);
    CHECK(ts_scan_records(b, n - 1, &s, err, sizeof err) < 0 && strstr(err, "truncated varint"));
    CHECK(ts_scan_records(b, n - 2, &s, err, sizeof err) == 0 && s.stops == 0 && s.last_window == 1);
    uint8_t bad[] = { HVT_INSN_RIP, 0x80, 0x80 };       /* truncated varint */
    CHECK(ts_scan_records(bad, sizeof bad, &s, err, sizeof err) < 0 && strstr(err, "record byte 0"));
    uint8_t bad2[] = { 0, HVT_TAG_MARKER | 0x55 };      /* unknown marker */
    CHECK(ts_scan_records(bad2, sizeof bad2, &s, err, sizeof err) < 0 && strstr(err, "record byte 1"));
    uint8_t code[] = { 1, 0x90, 3, 0x48, 0x89, 0xd8 };
    uint32_t e;
    CHECK(ts_scan_code(code, sizeof code, &e, err, sizeof err) == 0 && e == 2);
    CHECK(ts_scan_code(code, sizeof code - 1, &e, err, sizeof err) < 0);
    uint8_t zero[] = { 0 };
    CHECK(ts_scan_code(zero, 1, &e, err, sizeof err) < 0);
    /* record modes (version 3): a RUN or REPEAT is one record and its n instructions, the
     * batch header must count them so; the modes' syntax is refused at its record */
    const uint8_t M = HVT_TAG_MARKER;
    uint8_t flow[] = { M | HVT_MARK_MODE, HVT_MODE_FLOW, 0, HVT_INSN_CODE, 3, M | HVT_MARK_RUN, 0x2c, 0x01,
                       M | HVT_MARK_REPEAT, 2, 0, HVT_INSN_RIP, 5, M | HVT_MARK_RUN, 0xff, 0xff };
    CHECK(ts_scan_records(flow, sizeof flow, &s, err, sizeof err) == 0 && s.records == 6 &&
          s.insns == 1 + 300 + 2 + 1 + 65535 && s.modes == 1u << HVT_MODE_FLOW && s.code_ids_end == 4);
    uint8_t rep0[] = { M | HVT_MARK_REPEAT, 1, 0 };                 /* nothing to repeat */
    CHECK(ts_scan_records(rep0, sizeof rep0, &s, err, sizeof err) < 0 && strstr(err, "record byte 0"));
    uint8_t repgap[] = { HVT_INSN_CODE, 0, M | HVT_MARK_GAP, 0, 0, M | HVT_MARK_REPEAT, 1, 0 };
    CHECK(ts_scan_records(repgap, sizeof repgap, &s, err, sizeof err) < 0 && strstr(err, "record byte 5"));
    uint8_t run0[] = { HVT_INSN_CODE, 0, M | HVT_MARK_RUN, 0, 0 };
    CHECK(ts_scan_records(run0, sizeof run0, &s, err, sizeof err) < 0 && strstr(err, "0 instructions"));
    uint8_t regs_out[] = { M | HVT_MARK_MODE, HVT_MODE_REGS, 1, HVT_INSN_CODE | HVT_INSN_REGS, 0, 2, 4 };
    CHECK(ts_scan_records(regs_out, sizeof regs_out, &s, err, sizeof err) < 0 && strstr(err, "record byte 3"));
    regs_out[5] = 1;                                                 /* RAX: in the set */
    CHECK(ts_scan_records(regs_out, sizeof regs_out, &s, err, sizeof err) == 0 && s.insns == 1 &&
          s.modes == 1u << HVT_MODE_REGS);
    uint8_t badmode[] = { M | HVT_MARK_MODE, HVT_MODE_COUNT, 0 };
    CHECK(ts_scan_records(badmode, sizeof badmode, &s, err, sizeof err) < 0 && strstr(err, "unknown record mode"));
    test_scan_v4();
    /* garbage of every length: classified, never read out of bounds (ASan watches) */
    srand(1);
    int classified = 0;
    for (int i = 0; i < 20000; i++) {
        size_t len = (size_t)(rand() % 64);
        uint8_t *g = malloc(len ? len : 1);
        for (size_t k = 0; k < len; k++) g[k] = (uint8_t)rand();
        int r1 = ts_scan_records(g, len, &s, err, sizeof err), r2 = ts_scan_code(g, len, &e, err, sizeof err);
        classified += (r1 == 0 || r1 == -1) && (r2 == 0 || r2 == -1);
        free(g);
    }
    CHECK(classified == 20000);
}

static void test_chunkw(void)
{
    char path[] = "/tmp/test_trace_link.XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    hvt_trace_file_hdr h;
    memset(&h, 0, sizeof h);
    tcw *w = tcw_create(path, &h, 3);
    uint8_t code[] = { 1, 0x90 }, rec[] = { HVT_INSN_RIP | HVT_INSN_CODE, 0x80, 0x40, 0 };
    hvt_trace_chunk_hdr c = { .kind = HVT_CHUNK_CODE, .nrecords = 1 };
    hvt_trace_chunk_hdr r = { .kind = HVT_CHUNK_RECORDS, .cpu = 1, .nrecords = 1, .ninsns = 1,
                              .first_tsc = 10, .last_tsc = 11 };
    CHECK(w && tcw_chunk(w, &c, code, sizeof code) == 0 && tcw_chunk(w, &r, rec, sizeof rec) == 0);
    uint64_t len2 = tcw_data_len(w);
    h.ncpus = 2;
    h.lstar = 0xffffffff81c00080ull;
    CHECK(tcw_finish(w, &h) == 0 && tcw_finished(w));
    tr_reader *rd = tr_open(path);
    CHECK(rd && !tr_recovered(rd) && tr_chunk_count(rd) == 2 && tr_header(rd)->ncpus == 2 &&
          tr_header(rd)->lstar == h.lstar);
    if (rd) tr_close(rd);
    /* append after finishing: index and footer move to the end */
    r.first_tsc = r.last_tsc = 20;
    CHECK(tcw_chunk(w, &r, rec, sizeof rec) == 0 && !tcw_finished(w) && tcw_finish(w, &h) == 0);
    rd = tr_open(path);
    CHECK(rd && !tr_recovered(rd) && tr_chunk_count(rd) == 3 && tr_total_insns(rd) == 2);
    if (rd) tr_close(rd);
    CHECK(tcw_close(w) == 0);
    /* reopen at the checkpoint after two chunks: the third is cut off, the index rebuilt */
    char err[300];
    w = tcw_reopen(path, len2, 3, err, sizeof err);
    CHECK(w && tcw_chunks(w) == 2 && tcw_data_len(w) == len2);
    if (w) {
        CHECK(tcw_finish(w, &h) == 0 && tcw_close(w) == 0);
        rd = tr_open(path);
        CHECK(rd && tr_chunk_count(rd) == 2 && tr_total_insns(rd) == 1);
        if (rd) tr_close(rd);
    }
    /* a checkpoint that does not fall on a chunk boundary is refused with a reason */
    w = tcw_reopen(path, len2 - 1, 3, err, sizeof err);
    CHECK(!w && strstr(err, "no whole CODE/RECORDS chunk"));
    unlink(path);
}

int main(void)
{
    test_ctl();
    test_scan();
    test_chunkw();
    return check_summary("trace-link");
}
