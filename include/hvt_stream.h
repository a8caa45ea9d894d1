/*
 * hvt_stream.h - the wire protocol between the hypervisor and hvtrace-collector (one definition,
 * used by the freestanding hypervisor, the collector and the host test tools).
 * Prose, rationale and examples: docs/stream-protocol.md.
 *
 * Contract:
 *  - Transport: one TCP connection, opened by the hypervisor to the collector. Both directions
 *    carry a sequence of messages; each is a struct hvt_msg_hdr (32 bytes) followed by hdr.len
 *    payload bytes. All integers are little-endian; all structs are packed (no implicit
 *    padding: every struct below is a multiple of 8 bytes and naturally aligned anyway).
 *  - hdr.magic == HVT_STREAM_MAGIC, hdr.version == HVT_STREAM_VERSION, hdr.hdr_len ==
 *    sizeof(struct hvt_msg_hdr), hdr.len <= HVT_STREAM_MAX_PAYLOAD. A receiver that sees
 *    anything else closes the connection with a clear error: there is no resynchronisation.
 *  - Sequenced messages (hdr.cpu < cpu_count from HELLO) come from the hypervisor's send ring:
 *    hdr.seq is that CPU's message counter (0, 1, 2 ... from the hypervisor's start) and
 *    hdr.off is the message's byte offset in the whole ring stream (offsets of consecutive
 *    sequenced messages are contiguous: off(n+1) = off(n) + 32 + len(n)). The hypervisor frees
 *    ring space only up to what the collector has ACKed as persisted, so a collector that dies
 *    loses nothing: on reconnect it says where to resume (WELCOME.resume_off).
 *    A jump in off or in a CPU's seq is a transport gap: the collector counts it, never hides it.
 *    Losses before the ring (a flight-recorder overwrite) are reported by HVT_MSG_LOSS.
 *  - Unsequenced messages (hdr.cpu == HVT_CPU_NONE, seq = off = 0) belong to one connection:
 *    HELLO, WELCOME, ACK, CTL_REQ. They are never replayed.
 *  - boot_id (HELLO) is fresh for every start of the hypervisor: offsets and seqs restart at 0
 *    with it. A collector never mixes two boot_ids in one trace.
 *  - Session (HELLO.hello_flags & HVT_HELLO_AUTH, set whenever a key is configured unless the
 *    hypervisor's `auth` and `encrypt` are both off): every message in both directions, HELLO included, is followed
 *    on the wire by a HVT_STREAM_TAG_LEN-byte tag that hdr.len does not count (offsets count
 *    messages without their tags; the collector stores messages without them). The tag is
 *    RFC 8439's AEAD_CHACHA20_POLY1305 tag with aad = the 32-byte header and the payload as it
 *    travels, under the session key HMAC-SHA256(key, "hvtrace stream key" || boot_id) and a
 *    nonce that is never used twice for different bytes (hvt_stream_nonce below): sequenced
 *    messages by their ring offset (a resent message is the same message), HELLO by its
 *    connection number, collector->hypervisor messages by connection number and their index on
 *    that connection (so none can be replayed on another connection or out of order). With
 *    HVT_HELLO_ENCRYPT the payloads of every message but HELLO are encrypted as RFC 8439 2.8
 *    says (headers stay clear: they frame the stream); the hypervisor's default with a key. A message whose tag does not verify is
 *    counted and its connection closed; nothing in it is used. A collector with a key refuses
 *    a HELLO without HVT_HELLO_AUTH unless told to accept unauthenticated streams.
 *  - Control (CTL_REQ collector->hypervisor, CTL_REPLY hypervisor->collector) is authenticated
 *    with HMAC-SHA256 under the boot-configuration key; see hvt_ctl_mac_input below. CTL_REQ's
 *    ctl_seq must be larger than any ctl_seq accepted before in this boot (replay protection);
 *    HELLO tells the next acceptable value. Refused requests get a CTL_REPLY with an error
 *    status and are counted (status reply, HVT_CTL_STATUS).
 */
#ifndef HVT_STREAM_H
#define HVT_STREAM_H
#include <stdint.h>

#define HVT_STREAM_MAGIC        0x53545648u   /* "HVTS" as it appears on the wire */
#define HVT_STREAM_VERSION      3u   /* 2: tags after messages (HVT_HELLO_AUTH); 3: trace
                                        format 4's records (hvt_trace_format.h) */
#define HVT_STREAM_MAX_PAYLOAD  (1u << 20)    /* bigger messages are malformed */
#define HVT_CPU_NONE            0xffffu       /* hdr.cpu of unsequenced messages */
#define HVT_BOOT_ID_LEN         16u
#define HVT_MAC_LEN             32u           /* HMAC-SHA256 tag */
#define HVT_KEY_MAX             64u           /* key bytes (boot configuration key=, hex) */
#define HVT_KEY_MIN             16u
#define HVT_STREAM_DEFAULT_PORT 7207u

struct hvt_msg_hdr {
    uint32_t magic;       /* HVT_STREAM_MAGIC */
    uint8_t  version;     /* HVT_STREAM_VERSION */
    uint8_t  hdr_len;     /* sizeof(struct hvt_msg_hdr) = 32 */
    uint16_t type;        /* enum hvt_msg_type */
    uint32_t len;         /* payload bytes after this header */
    uint16_t cpu;         /* sending CPU (sequenced) or HVT_CPU_NONE */
    uint16_t flags;       /* 0 for now; receivers ignore unknown bits */
    uint64_t seq;         /* per-CPU message sequence number (sequenced only) */
    uint64_t off;         /* ring stream offset of this header (sequenced only) */
} __attribute__((packed));
_Static_assert(sizeof(struct hvt_msg_hdr) == 32, "hvt_msg_hdr is 32 bytes on the wire");

enum hvt_msg_type {
    /* hypervisor -> collector, unsequenced */
    HVT_MSG_HELLO     = 0x0001, /* struct hvt_hello + text: key=value lines (metadata) */
    /* hypervisor -> collector, sequenced (from the ring) */
    HVT_MSG_META      = 0x0010, /* text: key=value lines (guest_kernel=..., and from trace/:
                                   lstar=HEX cpus=N, the guest's syscall entry and CPU count) */
    HVT_MSG_CONSOLE   = 0x0011, /* raw bytes the guest wrote to its serial console */
    HVT_MSG_TRACE     = 0x0012, /* struct hvt_trace_batch + records (tracer-defined format) */
    HVT_MSG_LOSS      = 0x0013, /* struct hvt_loss: data lost before the ring, counted */
    HVT_MSG_CTL_REPLY = 0x0014, /* struct hvt_ctl + data + MAC */
    HVT_MSG_BYE       = 0x0015, /* the hypervisor is stopping; no payload */
    HVT_MSG_PROBE     = 0x0016, /* struct hvt_probe_fire records (include/hvt_probe.h) of the
                                   sending CPU, in the order they fired there; len is a
                                   multiple of the record size */
    HVT_MSG_PROBE_STACK = 0x0017, /* firings with a stack: struct hvt_probe_sample + stack
                                   bytes, padded to 8, repeated (include/hvt_probe.h) */
    HVT_MSG_D_REC     = 0x0018, /* a D program's records of the sending CPU: struct hvt_drec
                                   (include/hvt_dif.h), each hvt_drec.len bytes, back to back */
    HVT_MSG_D_AGG     = 0x0019, /* part of an aggregation snapshot: struct hvt_dagg_part, then
                                   struct hvt_dagg_rec entries (include/hvt_dif.h) */
    HVT_MSG_PANIC     = 0x001a, /* the hypervisor's fatal path: text, the reason (at most 255
                                   bytes, no NUL); BYE follows if the ring can still be sent */
    /* collector -> hypervisor, unsequenced */
    HVT_MSG_WELCOME   = 0x0100, /* struct hvt_welcome */
    HVT_MSG_ACK       = 0x0101, /* struct hvt_ack */
    HVT_MSG_CTL_REQ   = 0x0102, /* struct hvt_ctl + args + MAC */
};

struct hvt_hello {
    uint8_t  boot_id[HVT_BOOT_ID_LEN];
    uint32_t hv_version;      /* HVT_VERSION of hvt_hypercall.h */
    uint16_t cpu_count;       /* sequenced hdr.cpu < cpu_count */
    uint16_t hello_flags;     /* HVT_HELLO_* */
    uint64_t ring_size;       /* bytes of the send ring: the collector ACKs well before it fills */
    uint64_t ring_tail;       /* oldest offset still retransmittable */
    uint64_t ring_head;       /* next offset to be written */
    uint64_t ctl_next_seq;    /* smallest CTL_REQ ctl_seq that will be accepted */
    uint64_t tsc_hz;          /* 0 = unknown (Bochs: the TSC counts instructions) */
    uint32_t connection;      /* 0 for the first connection of this boot, then 1, 2 ... */
    uint32_t text_len;        /* bytes of key=value text following this struct */
} __attribute__((packed));
_Static_assert(sizeof(struct hvt_hello) == 72, "hvt_hello layout");
#define HVT_HELLO_CTL_KEYED 0x1u  /* a control key is configured (else CTL_REQ is refused) */
#define HVT_HELLO_AUTH      0x2u  /* every message in both directions carries a tag */
#define HVT_HELLO_ENCRYPT   0x4u  /* and payloads (but HELLO's) are encrypted */

/* Session tags (HVT_HELLO_AUTH): see the contract on top. */
#define HVT_STREAM_TAG_LEN  16u
#define HVT_STREAM_KEY_LABEL "hvtrace stream key"   /* session key = HMAC(key, label || boot_id) */
enum hvt_nonce_kind {
    HVT_NONCE_SEQ   = 1,      /* hypervisor -> collector sequenced: bytes 4..11 = hdr.off */
    HVT_NONCE_HELLO = 2,      /* bytes 4..7 = hello.connection */
    HVT_NONCE_TO_HV = 3,      /* collector -> hypervisor: 4..7 = connection, 8..11 = index of
                                 the message on that connection (0, 1, 2 ...) */
};
/* The 12-byte nonce: byte 0 = kind, bytes 1..3 zero, then the kind's fields, little-endian. */
static inline void hvt_stream_nonce(uint8_t n[12], unsigned kind, uint64_t a, uint32_t b)
{
    n[0] = (uint8_t)kind; n[1] = n[2] = n[3] = 0;
    if (kind == HVT_NONCE_SEQ) {
        for (int i = 0; i < 8; i++) n[4 + i] = (uint8_t)(a >> (8 * i));
    } else {
        for (int i = 0; i < 4; i++) n[4 + i] = (uint8_t)(a >> (8 * i));
        for (int i = 0; i < 4; i++) n[8 + i] = (uint8_t)(b >> (8 * i));
    }
}

struct hvt_welcome {
    uint8_t  boot_id[HVT_BOOT_ID_LEN]; /* echo of HELLO's boot_id */
    uint64_t resume_off;      /* first ring offset the collector wants; offsets below are
                                 acknowledged as persisted */
} __attribute__((packed));
_Static_assert(sizeof(struct hvt_welcome) == 24, "hvt_welcome layout");

struct hvt_ack {
    uint64_t persisted_off;   /* every sequenced byte below this offset is safely stored */
} __attribute__((packed));

/* HVT_MSG_TRACE payload header; records follow (format owned by trace/, versioned here).
 * Format 0xffff is filler (net's selftest_kb load): records are 8-byte counters 0, 1, 2 ... */
#define HVT_TRACE_FORMAT_FILLER 0xffffu
struct hvt_trace_batch {
    uint16_t format;          /* record format id (trace/ defines them) */
    uint16_t reserved;
    uint32_t nrecords;
    uint64_t first_tsc;
} __attribute__((packed));

enum hvt_loss_reason {
    HVT_LOSS_OVERWRITE = 1,   /* flight recorder overwrote unsent records */
    HVT_LOSS_DROPPED   = 2,   /* configured overflow=drop and the ring was full */
    HVT_LOSS_LINK      = 3,   /* the link failed (net link_timeout_ms): dropped until it recovered */
};
struct hvt_loss {
    uint32_t reason;          /* enum hvt_loss_reason */
    uint32_t msg_type;        /* what kind of data was lost */
    uint64_t messages;        /* count of messages (or records) lost */
    uint64_t bytes;           /* payload bytes lost */
} __attribute__((packed));

/*
 * Control: payload = struct hvt_ctl, then data_len bytes, then a HVT_MAC_LEN-byte tag.
 * tag = HMAC-SHA256(key, boot_id || header with seq and off zeroed || payload without the tag)
 * (seq and off are zeroed because the send ring assigns them after a reply is built). The
 * header holds type, len and cpu, so a request can never pass for a reply and a cut message
 * never verifies; boot_id ties it to one boot; ctl_seq orders requests within a boot.
 */
struct hvt_ctl {
    uint64_t ctl_seq;         /* request number; a reply echoes it */
    uint16_t cmd;             /* enum hvt_ctl_cmd */
    int16_t  status;          /* request: 0; reply: HVT_CTL_OK or a negative HVT_CTL_E* */
    uint32_t data_len;        /* argument / result bytes that follow */
} __attribute__((packed));
_Static_assert(sizeof(struct hvt_ctl) == 16, "hvt_ctl layout");
#define HVT_CTL_MAX_DATA 1024u

enum hvt_ctl_cmd {
    HVT_CTL_PING   = 1,       /* data echoed back */
    HVT_CTL_STATUS = 2,       /* reply data: struct hvt_ctl_status */
    /* 16..: the tracer's (trace/trace_ctl.c), dispatched through net_set_ctl_handler */
    HVT_CTL_TRACE_FIRST  = 16,
    HVT_CTL_TRACE_START  = 16, /* args: none or struct hvt_trace_args; every CPU starts stepping
                                  at its next VM exit. Reply data: struct hvt_trace_status */
    HVT_CTL_TRACE_STOP   = 17, /* no args; every CPU stops at its next exit (ends its window with
                                  a STOP marker and flushes its chunk). Reply: hvt_trace_status */
    HVT_CTL_TRACE_STATUS = 18, /* no args; reply data: struct hvt_trace_status */
    /* the probe engine's (trace/probe/probe_ctl.c); reply data: struct hvt_probe_status
       (include/hvt_probe.h) */
    HVT_CTL_PROBE_ARM    = 19, /* args: 1..HVT_CTL_PROBE_SPECS struct hvt_probe_spec
                                  (include/hvt_hypercall.h), armed in order until one fails */
    HVT_CTL_PROBE_DISARM = 20, /* no args: every probe disarmed and every page restored; each
                                  CPU hands on the firing records it holds at its next exit */
    HVT_CTL_PROBE_STATUS = 21, /* no args */
    /* the D programs' (trace/dvm/d_runtime.c); reply data: struct hvt_d_status */
    HVT_CTL_D_LOAD       = 22, /* args: struct hvt_d_load + up to HVT_D_LOAD_CHUNK bytes of a
                                  program image (include/hvt_dif.h), sent in order from offset
                                  0; the last part (offset + bytes = total) verifies the image
                                  and loads it in place of the last one (refused while probes
                                  run it: disarm first) */
    HVT_CTL_D_RUN        = 23, /* args: struct hvt_d_run: BEGIN, END, a snapshot, unload */
    /* a command for the guest tool to run (hvt -c; trace/dvm/guest_cmd.c); reply data: struct
       hvt_d_cmd_status */
    HVT_CTL_D_CMD        = 24, /* args: struct hvt_d_cmd (+ SET: the command line's bytes) */
    /* the probe engine's per-phase accounting (include/hvt_probe.h enum hvt_probe_phase) */
    HVT_CTL_PROBE_COST   = 25, /* args: one byte, HVT_PROBE_COST_OFF, _ON or _GET; reply data:
                                  struct hvt_probe_cost_head then its n struct hvt_probe_cost */
};

/* hvt -c: the host posts a command line; the guest tool's agent takes it (HVT_HC_CMD),
 * starts it held, says its pid; the host compiles with $target = that pid, arms, and lets it
 * go; the agent reports its exit. One command at a time. */
enum hvt_d_cmd_op {
    HVT_D_CMD_SET    = 1,     /* post the command (a new seq; refused while one is live) */
    HVT_D_CMD_GO     = 2,     /* seq: let the started command run */
    HVT_D_CMD_CANCEL = 3,     /* seq: the host is done with it: one still running is killed by
                                 the agent (an exited one is only acknowledged) */
    HVT_D_CMD_STATUS = 4,     /* nothing: the reply */
};
struct hvt_d_cmd {
    uint32_t op;              /* enum hvt_d_cmd_op */
    uint32_t seq;             /* GO, CANCEL: which command; else 0 */
} __attribute__((packed));
#define HVT_D_CMD_MAX 1000u   /* bytes of a command line (no NUL in them) */
enum hvt_d_cmd_state {
    HVT_D_CMDS_NONE = 0,      /* nothing posted yet */
    HVT_D_CMDS_POSTED,        /* waiting for the agent */
    HVT_D_CMDS_TAKEN,         /* the agent is reading it */
    HVT_D_CMDS_STARTED,       /* held before exec: pid known */
    HVT_D_CMDS_RUNNING,       /* the host said go, the agent saw it */
    HVT_D_CMDS_EXITED,        /* wait status known */
    HVT_D_CMDS_CANCELLED,     /* the host is done with it (the agent kills one still running) */
};
struct hvt_d_cmd_status {
    uint32_t seq;             /* the last command posted (0: none) */
    uint32_t state;           /* enum hvt_d_cmd_state */
    uint32_t pid;             /* STARTED and later: the command's pid */
    int32_t  wait_status;     /* EXITED: as waitpid() gave it */
    int32_t  error;           /* the request: 0 or HVT_D_CMD_E* */
    uint32_t pad;
} __attribute__((packed));
_Static_assert(sizeof(struct hvt_d_cmd_status) == 24, "hvt_d_cmd_status layout");
#define HVT_D_CMD_EBUSY  (-1) /* SET while a command is live */
#define HVT_D_CMD_ESEQ   (-2) /* GO/CANCEL of another command, or in the wrong state */

struct hvt_d_load {
    uint32_t total;           /* the image's bytes (<= HVT_DIF_MAX_IMAGE) */
    uint32_t offset;          /* of this part: 0 starts over */
} __attribute__((packed));
#define HVT_D_LOAD_CHUNK (HVT_CTL_MAX_DATA - 8u)

enum hvt_d_op {
    HVT_D_OP_BEGIN = 1,       /* run the BEGIN clauses (once per load) at the next exit */
    HVT_D_OP_END   = 2,       /* run the END clauses, then every CPU's records are handed on
                                 and an aggregation snapshot follows */
    HVT_D_OP_SNAP  = 3,       /* an aggregation snapshot of every CPU; the reply's snap_gen is
                                 its generation (the hypervisor numbers them: printa() takes
                                 one too) */
    HVT_D_OP_UNLOAD = 4,      /* forget the program (its probes must be disarmed) */
    HVT_D_OP_STATUS = 5,      /* nothing: the reply's counters */
};
struct hvt_d_run {
    uint32_t op;              /* enum hvt_d_op */
    uint32_t arg;             /* 0 */
} __attribute__((packed));

/* Reply of HVT_CTL_D_*: the D engine's state and counters. */
struct hvt_d_status {
    int32_t  error;           /* LOAD: 0, or HVT_D_E*: why the image was refused */
    uint32_t received;        /* LOAD: image bytes staged so far */
    uint32_t err_clause, err_insn; /* LOAD refused by the verifier: where */
    char     why[48];         /* LOAD refused: the verifier's reason, NUL-terminated */
    uint32_t loaded;          /* 1: a program is loaded */
    uint32_t snap_gen;        /* the last snapshot's generation (END, SNAP: the one asked for) */
    /* The counters below are the loaded program's: a load sets them to 0. */
    uint64_t fires;           /* clause runs */
    uint64_t records, drops;  /* records made; dropped for a full buffer */
    uint64_t errors;          /* clauses ended by a fault */
    uint64_t dyndrops;        /* dynamic variable stores that found no room */
    uint64_t records_lost;    /* of the records, dropped by the stream (a failed link) */
} __attribute__((packed));
_Static_assert(sizeof(struct hvt_d_status) == 120, "hvt_d_status layout");
#define HVT_D_EVERIFY  (-1)   /* the verifier refused the image (err_* and why say where) */
#define HVT_D_EORDER   (-2)   /* a part out of order, or a total that changed */
#define HVT_D_EBUSY    (-3)   /* probes still run the loaded program */
#define HVT_D_ENOMEM   (-4)   /* the image or its state does not fit the hypervisor's memory */
#define HVT_D_ENOPROG  (-5)   /* RUN without a loaded program */

/* HVT_MSG_D_AGG payload header: one CPU's aggregations at one snapshot, in one or more
 * messages; the one with HVT_DAGG_LAST ends that CPU's part of that generation. The values are
 * what the CPU aggregated since its previous snapshot (the hypervisor resets what it sends, as
 * DTrace's buffer switch): the host adds them up. One snapshot is sent at a time, generations
 * in increasing order. */
#define HVT_DAGG_LAST 1u
struct hvt_dagg_part {
    uint32_t gen;             /* the snapshot's generation (hvt_d_run.arg) */
    uint16_t cpu;             /* whose aggregations */
    uint16_t flags;           /* HVT_DAGG_LAST */
    uint32_t nrecs;           /* struct hvt_dagg_rec entries in this message */
    uint32_t pad;
} __attribute__((packed));
_Static_assert(sizeof(struct hvt_dagg_part) == 16, "hvt_dagg_part layout");

#define HVT_CTL_OK        0
#define HVT_CTL_EAUTH     (-1)  /* bad or missing tag, or no key configured */
#define HVT_CTL_EREPLAY   (-2)  /* ctl_seq not above the last accepted one */
#define HVT_CTL_EMALFORMED (-3) /* lengths inconsistent */
#define HVT_CTL_ENOSYS    (-4)  /* unknown command */
#define HVT_CTL_EINVAL    (-5)  /* command refused its arguments */

/* HVT_CTL_TRACE_START arguments: which instructions a window records. A field counts only when
 * its flag is set; no data at all = no filter (record everything). The hypervisor refuses
 * (HVT_CTL_EINVAL) unknown flags, non-zero reserved fields, contradictory flags and, for now,
 * every filter it does not implement yet (all of them: the fields reserve the layout). */
enum hvt_trace_filter {
    HVT_TRACE_F_KERNEL_ONLY = 1u << 0, /* only CPL 0 instructions */
    HVT_TRACE_F_USER_ONLY   = 1u << 1, /* only CPL 3 instructions */
    HVT_TRACE_F_CR3         = 1u << 2, /* only while CR3 (bits 51:12) equals cr3 */
    HVT_TRACE_F_ADDR_RANGE  = 1u << 3, /* only RIP in [addr_lo, addr_hi) */
    HVT_TRACE_F_BUDGET      = 1u << 4, /* stop the window after insn_budget instructions (all CPUs) */
    HVT_TRACE_F_RECORD      = 1u << 5, /* the record mode in 'record' */
    HVT_TRACE_F_ALL         = 0x3fu,
};
/* 'record': hvt_rec_mode (hvt_trace_format.h) in bits 7:0; for HVT_MODE_REGS its register set
 * (HVT_REG_* bits, not empty) from bit 8 on, else 0 there. */
#define HVT_TRACE_RECORD(mode, regmask) ((uint32_t)(mode) | (uint32_t)(regmask) << 8)
#define HVT_TRACE_RECORD_MODE(record)   ((record) & 0xffu)
#define HVT_TRACE_RECORD_REGS(record)   ((record) >> 8)
struct hvt_trace_args {
    uint32_t flags;           /* enum hvt_trace_filter */
    uint32_t record;          /* HVT_TRACE_F_RECORD: HVT_TRACE_RECORD(mode, regmask); else 0 */
    uint64_t cr3;
    uint64_t addr_lo, addr_hi;
    uint64_t insn_budget;
    uint64_t reserved[3];     /* 0: room for later filters without a new layout */
} __attribute__((packed));
_Static_assert(sizeof(struct hvt_trace_args) == 64, "hvt_trace_args layout");

/* What the hypervisor did with the platform's IOMMU (vmm/include/hv_dma.h, same numbers). */
enum hvt_iommu {
    HVT_IOMMU_UNKNOWN = 0,     /* not reported */
    HVT_IOMMU_NO_DMAR = 1,     /* the firmware has no DMAR: device DMA is not confined */
    HVT_IOMMU_ON = 2,          /* every VT-d unit translates */
    HVT_IOMMU_PARTIAL = 3,     /* some units refused: devices behind them are not confined */
    HVT_IOMMU_FAILED = 4,      /* a DMAR, but no unit translates */
};
#define HVT_HC_REFUSED_FUNCS   16   /* hypercall function numbers counted one by one */
#define HVT_TRACE_STATUS_V1_LEN 64u /* the reply before the iommu and hc_refused fields */

/* Reply data of the HVT_CTL_TRACE_* commands: the tracer as the hypervisor sees it. */
enum hvt_trace_request { HVT_TRACE_REQ_NONE = 0, HVT_TRACE_REQ_START = 1, HVT_TRACE_REQ_STOP = 2 };
struct hvt_trace_status {
    uint16_t host_request;    /* enum hvt_trace_request: the last one from the host (marks from the
                                 guest and other triggers also start and stop windows) */
    uint16_t stepping;        /* 1 while any CPU is stepping (whatever started it) */
    uint32_t flags;           /* filters in force (hvt_trace_args.flags of the last start) */
    uint64_t starts, stops;   /* host requests accepted */
    uint64_t steps_closed;    /* instructions stepped in windows that have ended (all CPUs) */
    uint64_t record_bytes_closed;
    uint64_t chunks_sent, chunk_bytes_sent;   /* chunks handed to the stream, their bytes */
    uint64_t chunks_debug_port;               /* chunks that went to port 0xE9 instead */
    /* Appended (a reply of HVT_TRACE_STATUS_V1_LEN bytes comes from a hypervisor without
     * them): the platform's DMA protection and the hypercalls refused so far. */
    uint32_t iommu;                           /* enum hvt_iommu */
    uint16_t iommu_units_on, iommu_units;     /* VT-d units translating / in the DMAR */
    uint64_t hc_refused_total;                /* hypercalls refused (#UD), all functions */
    uint32_t hc_refused[HVT_HC_REFUSED_FUNCS];/* per function number (saturating) */
} __attribute__((packed));
_Static_assert(sizeof(struct hvt_trace_status) == 144, "hvt_trace_status layout");

struct hvt_ctl_status {
    uint64_t uptime_tsc;
    uint64_t ring_head, ring_tail, ring_size;
    uint64_t ctl_accepted, ctl_bad_auth, ctl_replayed, ctl_malformed;
    uint64_t rx_frames, tx_frames, rx_errors, tx_stalls;
    uint64_t connections, console_bytes, lost_messages, backpressure_waits;
    uint64_t bad_tags;        /* collector->hypervisor messages whose session tag failed */
    uint32_t hello_flags;     /* HVT_HELLO_*: is this session authenticated, encrypted */
    uint32_t reserved;
} __attribute__((packed));

#endif
