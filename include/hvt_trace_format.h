/*
 * hvt_trace_format.h - the hvtrace trace file format (version 4), shared by the collector
 * (writer) and the analyzer (reader). All integers are little-endian; structs are packed.
 * docs/trace-format.md explains the design; this comment is the contract.
 *
 * File:   hvt_trace_file_hdr | chunk* | [INDEX chunk | hvt_trace_footer]
 *         A file that lacks the index and footer (a collector that died) is still readable by
 *         walking chunks from the header; a reader must not need the index for correctness.
 * Chunk:  hvt_trace_chunk_hdr, then payload_size bytes (zstd frame if compression is ZSTD),
 *         crc32 (zlib polynomial) of those payload bytes in the header.
 *   CODE    the code-bytes dictionary: payload = entries {u8 len (1..15), len bytes}; entry k
 *           has id first_code_id + k. Ids are dense, from 0, in file order. A CODE chunk
 *           precedes every RECORDS chunk that references its ids, so a sequential reader
 *           has each id before its first use; a seeking reader loads all CODE chunks first.
 *   RECORDS one CPU's records (chunk.cpu). Decoding state resets at the start of every
 *           RECORDS chunk (that is what makes chunks independently seekable):
 *             expected_rip = 0, regs[] = 0, cr3 = 0, tsc = first_tsc, tick = 1,
 *             code predictor all empty, mode FULL.
 *   INDEX   array of hvt_trace_index_entry, one per CODE/RECORDS chunk, in file order.
 * Record: a tag byte; bit 7 clear = instruction, set = marker (tag & 0x7f = HVT_MARK_*).
 *   Instruction: optional fields follow the tag in this order when their bit is set:
 *     HVT_INSN_RIP   zigzag varint (rip - expected_rip); else rip = expected_rip
 *     HVT_INSN_CODE  varint code id; else the id the predictor holds for this rip (slot
 *                    HVT_PRED_SLOT(rip), valid only if it holds this rip; otherwise corrupt)
 *     HVT_INSN_CR3   varint, the new CR3 value (whole, PCID bits included)
 *     HVT_INSN_TICK  varint, the new tick (tsc increment per instruction, persists)
 *     HVT_INSN_REGS  varint mask over HVT_REG_* then, in ascending bit order, one zigzag
 *                    varint (new - old, modulo 2^64) per set bit
 *     HVT_INSN_RFLAGS  (version 2) RFLAGS alone, as an RFLAGS field (below); the mask then
 *                    has no RFLAGS bit (both: corrupt). Writers use it for RFLAGS: most
 *                    instructions change flags, and bit 16 made the mask a 3-byte varint.
 *   Short instruction (version 3, tag bit 6 HVT_INSN_SHORT; bits 5:0 then mean otherwise):
 *     the straight-line instruction that changed one general register - rip = expected_rip,
 *     the predicted code id, CR3 and tick unchanged - tag bits 3:0 that register (HVT_REG_*),
 *     bit 4 HVT_SHORT_RFLAGS, bit 5 HVT_SHORT_U32 (version 4; zero before). Then the
 *     register: with U32, its new value as 4 bytes little-endian, zero-extended (what a
 *     32-bit operation leaves); else its zigzag delta. Then, if bit 4, an RFLAGS field.
 *     An instruction changes one register far more often than any other way, and this spares
 *     it the mask (two bytes for R8..R15); U32 spares a hash's or a checksum's 32-bit values
 *     the fifth byte their varint delta takes.
 *   RFLAGS field: before version 4 a zigzag varint (new - old). From version 4 one byte b:
 *     b < 0x40: RFLAGS ^= the six arithmetic flags b packs, bit 0..5 = CF, PF, AF, ZF, SF, OF
 *     (RFLAGS bits 0, 2, 4, 6, 7, 11; b = 0 is corrupt: no change); b = 0x40
 *     (HVT_RFLAGS_WIDE): a zigzag varint (new - old) follows; any other b is corrupt. An
 *     arithmetic instruction changes only those six, so its flags take one byte, not two.
 *   then: tsc += tick; expected_rip = rip + code length; predictor slot := (rip, id).
 *   Register values are those after the instruction retired; rip is the instruction's own.
 *   Markers (no time of their own: they happen at the current tsc, before the next record):
 *     EVENT   u8 vector, u8 type (VMX interruption type), varint error code + 1 (0 = none):
 *             the next instruction is the first of the handler (interrupt/exception entry)
 *     SYSCALL varint number (guest RAX): the next instruction is the syscall entry
 *     VMEXIT  varint exit reason, varint qualification: a VM exit/entry event worth noting
 *     SWITCH  varint pid, varint tgid, u8 len + comm bytes (<= 16), varint cr3 (0 unknown)
 *     START / STOP  varint reason (HVT_REASON_*)
 *     GAP     varint lost records, varint lost instructions; resets decoding state exactly
 *             like a chunk start (tsc keeps its value)
 *     TIME    varint absolute tsc: sets tsc (the next instruction gets it + tick)
 *     CONTEXT same fields as SWITCH, but not a switch: the writer restates the CPU's current
 *             task (its last SWITCH) as the first record of each later RECORDS chunk, so a
 *             reader that starts at any chunk knows whose instructions follow
 *     MODE    (version 3) varint mode (hvt_rec_mode), varint register mask (HVT_REG_* bits):
 *             the record mode from here on (a GAP keeps it; a chunk starts in FULL, so a
 *             writer restates a mode other than FULL at the start of each chunk).
 *               FULL  every register the instruction changed (mask: all, REC as above)
 *               FLOW  control flow only: instruction records carry no REGS or RFLAGS field,
 *                     and RUN markers stand for straight-line instructions (mask: 0)
 *               REGS  REGS/RFLAGS carry only the mask's registers (a field outside it: corrupt)
 *             A reader reports the mask with every instruction: the registers whose values it
 *             knows; the others hold whatever they last held, stale.
 *     RUN     (version 3) u16 n (1..65535, fixed width so a writer extends its last RUN in
 *             place): n instructions, each exactly an instruction record with tag 0 (rip =
 *             expected_rip, the code id the predictor holds for it - corrupt if none - and no
 *             field): n times tsc += tick, expected_rip = rip + length. They count as n
 *             instruction records (chunk ninsns) and one record (nrecords).
 *     REPEAT  (version 3) u16 n (1..65535, fixed width): the last instruction (its rip and code
 *             id) ran n more times, as a REP-prefixed string instruction's iterations each
 *             end in a step of their own: n times tsc += tick; expected_rip unchanged. n
 *             instruction records, one record; corrupt before any instruction of the chunk
 *             (or since its last GAP). Registers: in FLOW none are known. From version 4, in
 *             FULL and REGS, each of the n changes every register by the same delta (new -
 *             old, modulo 2^64, RFLAGS included) as the last instruction record did (a
 *             register it left alone stays): REP MOVS's count and pointers step alike each
 *             iteration. Before version 4 a writer emitted REPEAT in FLOW only.
 * Varints are unsigned LEB128 (at most 10 bytes); zigzag maps int64 v to (v << 1) ^ (v >> 63).
 */
#ifndef HVT_TRACE_FORMAT_H
#define HVT_TRACE_FORMAT_H
#include <stdint.h>

#define HVT_TRACE_MAGIC        "HVTRACE"   /* 8 bytes with the NUL */
#define HVT_TRACE_FOOTER_MAGIC "HVTFOOT"   /* 8 bytes with the NUL */
#define HVT_TRACE_VERSION      4           /* 2: HVT_INSN_RFLAGS; 3: MODE, RUN, REPEAT; 4: the
                                              one-byte RFLAGS field, HVT_SHORT_U32, REPEAT's
                                              deltas in FULL and REGS; readers also take 1-3 */
#define HVT_TRACE_VERSION_MIN  1
#define HVT_CHUNK_MAGIC        0x43545648u /* "HVTC" */
#define HVT_BUILD_ID_MAX       20
#define HVT_COMM_MAX           16
#define HVT_CODE_MAX           15          /* longest x86 instruction */
#define HVT_PRED_SLOTS         4096
#define HVT_PRED_HASH_SHIFT    12
#define HVT_PRED_SLOT(rip)     ((uint32_t)(((rip) ^ ((rip) >> HVT_PRED_HASH_SHIFT)) & (HVT_PRED_SLOTS - 1)))
#define HVT_VARINT_MAX         10
#define HVT_CHUNK_RAW_MAX      (4u << 20)  /* writers keep raw payloads at most this big */

enum hvt_chunk_kind { HVT_CHUNK_CODE = 1, HVT_CHUNK_RECORDS = 2, HVT_CHUNK_INDEX = 3 };
/* hvt_stream.h's hvt_trace_batch.format for batches carrying a chunk's raw payload. */
enum hvt_batch_format { HVT_BATCH_RECORDS = 1, HVT_BATCH_CODE = 2 };
enum hvt_compression { HVT_COMP_NONE = 0, HVT_COMP_ZSTD = 1 };

enum hvt_insn_flag {
    HVT_INSN_RIP = 1 << 0,
    HVT_INSN_CODE = 1 << 1,
    HVT_INSN_CR3 = 1 << 2,
    HVT_INSN_TICK = 1 << 3,
    HVT_INSN_REGS = 1 << 4,
    HVT_INSN_RFLAGS = 1 << 5,
    HVT_INSN_FLAGS_ALL = 0x3f,
    HVT_INSN_SHORT = 1 << 6,
    HVT_SHORT_REG = 0x0f,
    HVT_SHORT_RFLAGS = 1 << 4,
    HVT_SHORT_U32 = 1 << 5,
    HVT_TAG_MARKER = 0x80,
};

enum hvt_marker {
    HVT_MARK_EVENT = 1, HVT_MARK_SYSCALL = 2, HVT_MARK_VMEXIT = 3, HVT_MARK_SWITCH = 4,
    HVT_MARK_START = 5, HVT_MARK_STOP = 6, HVT_MARK_GAP = 7, HVT_MARK_TIME = 8,
    HVT_MARK_CONTEXT = 9, HVT_MARK_MODE = 10, HVT_MARK_RUN = 11, HVT_MARK_REPEAT = 12,
    HVT_MARK_MAX = 12,
};

/* HVT_MARK_MODE's modes. */
enum hvt_rec_mode { HVT_MODE_FULL = 0, HVT_MODE_FLOW = 1, HVT_MODE_REGS = 2, HVT_MODE_COUNT };
#define HVT_RUN_MAX 0xffffu        /* RUN and REPEAT counts: a u16 */
/* The version 4 RFLAGS field: the six arithmetic flags (CF PF AF ZF SF OF) packed into bits
 * 0..5 of one byte, or HVT_RFLAGS_WIDE and a zigzag varint. */
#define HVT_RFLAGS_ARITH 0x8d5ull
#define HVT_RFLAGS_WIDE  0x40u
static inline unsigned hvt_rflags_pack(uint64_t x)
{
    return (unsigned)((x & 1) | (x >> 1 & 2) | (x >> 2 & 4) | (x >> 3 & 0x18) | (x >> 6 & 0x20));
}
static inline uint64_t hvt_rflags_unpack(unsigned b)
{
    return (uint64_t)((b & 1) | (b & 2) << 1 | (b & 4) << 2 | (b & 0x18) << 3 | (uint64_t)(b & 0x20) << 6);
}
/* What an RFLAGS field's first byte is: packed flags (0x01..0x3f), HVT_RFLAGS_WIDE (a zigzag
 * varint follows), or corrupt (0 would be no change, and nothing above 0x40 is defined); a
 * reader reports the last with HVT_RFLAGS_BAD_FMT and the byte. */
enum hvt_rflags_byte { HVT_RFLAGS_BYTE_PACKED, HVT_RFLAGS_BYTE_WIDE, HVT_RFLAGS_BYTE_BAD };
static inline enum hvt_rflags_byte hvt_rflags_byte(unsigned b)
{
    return b == HVT_RFLAGS_WIDE ? HVT_RFLAGS_BYTE_WIDE
         : b && b < HVT_RFLAGS_WIDE ? HVT_RFLAGS_BYTE_PACKED : HVT_RFLAGS_BYTE_BAD;
}
#define HVT_RFLAGS_BAD_FMT "RFLAGS field byte 0x%02x (packed flags are 0x01..0x3f, 0x40 a wide delta)"

/* VMX interruption types (SDM Vol. 3, 24.8.3), as carried by HVT_MARK_EVENT. */
enum hvt_event_type {
    HVT_EV_EXTINT = 0, HVT_EV_NMI = 2, HVT_EV_HWEXC = 3, HVT_EV_SWINT = 4,
    HVT_EV_PRIV_SWEXC = 5, HVT_EV_SWEXC = 6,
};

/* Why a trace started or stopped (START / STOP markers). */
enum hvt_reason {
    HVT_REASON_USER = 0,         /* a control command from the host (hvt trace start/stop) */
    HVT_REASON_HYPERCALL = 1,    /* hvtrace-mark from the guest */
    HVT_REASON_BUFFER_FULL = 2,  /* the hypervisor ran out of room (e.g. code dictionary) */
    HVT_REASON_EVENT = 3,
    HVT_REASON_END = 4,          /* the guest powered off while tracing */
    HVT_REASON_PASSES = 5,       /* start: N passes of an address (EPT trap) */
    HVT_REASON_ENTRY = 6,        /* start: entry of a kernel function (EPT trap) */
    HVT_REASON_BUDGET = 7,       /* stop: the instruction budget is spent */
    HVT_REASON_TRIPLE_FAULT = 8, /* stop: the guest triple-faulted */
    HVT_REASON_DOUBLE_FAULT = 9, /* stop: the guest took #DF */
    HVT_REASON_STOP_AT = 10,     /* stop: a stop_at address ran (panic, oops entry) */
    HVT_REASON_LINK = 11,        /* stop: the link to the collector failed */
    HVT_REASON_BOOT = 12,        /* start: traced from the hypervisor's start */
    HVT_REASON_FILTER = 13,      /* a filter suspended (STOP) or resumed (START) recording */
    HVT_REASON_PROBE = 14,       /* a D program's step() (START) or unstep() (STOP) */
    HVT_REASON_PROBE_STOP = 15,  /* stop: a D program's stop(): no more step() in that program */
    HVT_REASON_RESET = 16,       /* stop: the guest reset the machine (0xCF9, keyboard controller) */
    HVT_REASON_HV_PANIC = 17,    /* stop: the hypervisor's fatal path (its reason: the PANIC message) */
    HVT_REASON_COUNT
};

/* Register numbering: x86 encoding order, then RFLAGS. */
enum hvt_reg {
    HVT_REG_RAX, HVT_REG_RCX, HVT_REG_RDX, HVT_REG_RBX, HVT_REG_RSP, HVT_REG_RBP, HVT_REG_RSI,
    HVT_REG_RDI, HVT_REG_R8, HVT_REG_R9, HVT_REG_R10, HVT_REG_R11, HVT_REG_R12, HVT_REG_R13,
    HVT_REG_R14, HVT_REG_R15, HVT_REG_RFLAGS, HVT_NREGS
};
/* Their names, in that order (listings, the regs= option). */
#define HVT_REG_NAMES { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", \
                        "r10", "r11", "r12", "r13", "r14", "r15", "rflags" }

#pragma pack(push, 1)
typedef struct {
    char magic[8];           /* HVT_TRACE_MAGIC */
    uint16_t version;        /* HVT_TRACE_VERSION */
    uint16_t hdr_size;       /* sizeof(hvt_trace_file_hdr); chunks start here */
    uint32_t flags;          /* none defined yet: 0 */
    uint32_t ncpus;
    uint32_t reserved0;
    uint64_t tsc_hz;         /* 0 = unknown (in Bochs one tick is one instruction) */
    uint64_t lstar;          /* guest IA32_LSTAR (runtime entry_SYSCALL_64): KASLR slide; 0 = unknown */
    uint8_t build_id[HVT_BUILD_ID_MAX]; /* guest kernel GNU build id */
    uint8_t build_id_len;
    uint8_t reserved1[67];
} hvt_trace_file_hdr;        /* 128 bytes */

typedef struct {
    uint32_t magic;          /* HVT_CHUNK_MAGIC */
    uint8_t kind;            /* hvt_chunk_kind */
    uint8_t compression;     /* hvt_compression */
    uint16_t cpu;            /* RECORDS: the CPU; else 0 */
    uint32_t payload_size;   /* bytes on disk after this header */
    uint32_t raw_size;       /* bytes after decompression (<= HVT_CHUNK_RAW_MAX) */
    uint32_t nrecords;       /* RECORDS: records incl. markers; CODE: entries; INDEX: entries */
    uint32_t ninsns;         /* RECORDS: instruction records */
    uint64_t first_tsc;      /* RECORDS: tsc before the first record */
    uint64_t last_tsc;       /* RECORDS: tsc after the last record */
    uint32_t first_code_id;  /* CODE: id of the first entry */
    uint32_t crc32;          /* of the payload bytes on disk */
} hvt_trace_chunk_hdr;       /* 48 bytes */

typedef struct {
    uint64_t offset;         /* file offset of the chunk header */
    uint8_t kind;
    uint8_t reserved;
    uint16_t cpu;
    uint32_t ninsns;
    uint64_t first_tsc, last_tsc;
} hvt_trace_index_entry;     /* 32 bytes */

typedef struct {
    char magic[8];           /* HVT_TRACE_FOOTER_MAGIC */
    uint64_t index_offset;   /* file offset of the INDEX chunk header */
    uint64_t total_insns;
    uint64_t total_records;
} hvt_trace_footer;          /* 32 bytes, the last bytes of a complete file */
#pragma pack(pop)

/* On the stream (hvt_stream.h HVT_MSG_TRACE), a batch is struct hvt_trace_batch (format =
 * HVT_BATCH_RECORDS or HVT_BATCH_CODE, nrecords, first_tsc), then this, then one chunk's raw
 * payload; the sending CPU is the stream message's CPU. The collector makes it a chunk. */
typedef struct {
    uint32_t ninsns;         /* RECORDS: instruction records */
    uint32_t first_code_id;  /* CODE: id of the first entry */
    uint64_t last_tsc;       /* RECORDS: tsc after the last record */
} hvt_trace_batch_ext;       /* 16 bytes, no padding */
_Static_assert(sizeof(hvt_trace_batch_ext) == 16, "batch extension size");

_Static_assert(sizeof(hvt_trace_file_hdr) == 128, "file header size");
_Static_assert(sizeof(hvt_trace_chunk_hdr) == 48, "chunk header size");
_Static_assert(sizeof(hvt_trace_index_entry) == 32, "index entry size");
_Static_assert(sizeof(hvt_trace_footer) == 32, "footer size");
#endif
