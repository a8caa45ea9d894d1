/* rec_enc.c - record encoder (format: include/hvt_trace_format.h). */
#include "rec_enc.h"

size_t rec_put_varint(uint8_t *p, uint64_t v) { return rec_varint(p, v); }
static int rec_mode_marker(struct rec_enc *e);

void rec_reset(struct rec_enc *e)
{
    e->expected_rip = 0;
    e->cr3 = 0;
    rec_set_tsc(e, rec_tsc(e));                 /* the old tick up to here */
    e->tick = 1;
    for (int i = 0; i < HVT_NREGS; i++)
        e->regs[i] = 0;
    e->cand_all = REC_REGS_ALL;
    e->last_ok = 0;
    e->run_at = e->rep_at = ~0ull - REC_RUN_BYTES;   /* no marker to extend */
    e->rep_nrec = ~0u;                              /* no REP string record to repeat */
    for (int i = 0; i < HVT_PRED_SLOTS; i++)
        e->pred[i].valid = 0;
    if (!++e->pstamp)
        e->pstamp = 1;
}

void rec_begin(struct rec_enc *e, uint8_t *buf, size_t cap, uint64_t tsc)
{
    e->buf = buf;
    e->cap = cap;
    e->len = 0;
    e->first_tsc = tsc;
    e->nrecords = e->ninsns = 0;
    rec_set_tsc(e, tsc);
    rec_reset(e);
    if (!e->regmask && e->mode == HVT_MODE_FULL)
        e->regmask = REC_REGS_ALL;           /* a zeroed encoder: FULL */
    if (e->mode != HVT_MODE_FULL)           /* a chunk starts in FULL */
        (void)rec_mode_marker(e);
}

static int room(struct rec_enc *e) { return rec_room(e) ? 0 : -1; }
#define PUT(v) (e->len += rec_varint(e->buf + e->len, (v)))

static int marker(struct rec_enc *e, uint8_t kind)
{
    if (room(e))
        return -1;
    e->buf[e->len++] = HVT_TAG_MARKER | kind;
    e->nrecords++;
    return 0;
}

static int rec_mode_marker(struct rec_enc *e)
{
    if (marker(e, HVT_MARK_MODE))
        return -1;
    PUT(e->mode);
    PUT(e->regmask);
    return 0;
}

int rec_set_mode(struct rec_enc *e, unsigned mode, uint32_t regmask)
{
    uint32_t m = mode == HVT_MODE_FULL ? REC_REGS_ALL : mode == HVT_MODE_FLOW ? 0 : regmask & REC_REGS_ALL;
    if (mode == e->mode && m == e->regmask)
        return 0;
    uint32_t old_mode = e->mode, old_mask = e->regmask;
    e->mode = mode;
    e->regmask = m;
    if (e->buf && rec_mode_marker(e)) {
        e->mode = old_mode;
        e->regmask = old_mask;
        return -1;
    }
    /* Registers the set did not carry are stale in the decoder: compare all at the next
     * record (within the new set). */
    e->cand_all = REC_REGS_ALL;
    return 0;
}

int rec_event(struct rec_enc *e, uint8_t vector, uint8_t type, uint64_t errcode_plus1)
{
    if (marker(e, HVT_MARK_EVENT))
        return -1;
    e->buf[e->len++] = vector;
    e->buf[e->len++] = type;
    PUT(errcode_plus1);
    return 0;
}

int rec_syscall(struct rec_enc *e, uint64_t nr)
{
    if (marker(e, HVT_MARK_SYSCALL))
        return -1;
    PUT(nr);
    return 0;
}

int rec_startstop(struct rec_enc *e, int start, uint64_t reason)
{
    if (marker(e, start ? HVT_MARK_START : HVT_MARK_STOP))
        return -1;
    PUT(reason);
    return 0;
}

int rec_time(struct rec_enc *e, uint64_t tsc)
{
    if (marker(e, HVT_MARK_TIME))
        return -1;
    PUT(tsc);
    rec_set_tsc(e, tsc);
    return 0;
}

static int task_marker(struct rec_enc *e, unsigned kind, uint64_t pid, uint64_t tgid,
                       const char *comm, uint64_t cr3)
{
    if (marker(e, kind))
        return -1;
    PUT(pid);
    PUT(tgid);
    size_t n = 0;
    while (n < HVT_COMM_MAX && comm[n])
        n++;
    e->buf[e->len++] = (uint8_t)n;
    for (size_t i = 0; i < n; i++)
        e->buf[e->len++] = (uint8_t)comm[i];
    PUT(cr3);
    return 0;
}

int rec_switch(struct rec_enc *e, uint64_t pid, uint64_t tgid, const char *comm, uint64_t cr3)
{
    return task_marker(e, HVT_MARK_SWITCH, pid, tgid, comm, cr3);
}

int rec_context(struct rec_enc *e, uint64_t pid, uint64_t tgid, const char *comm, uint64_t cr3)
{
    return task_marker(e, HVT_MARK_CONTEXT, pid, tgid, comm, cr3);
}

int rec_vmexit(struct rec_enc *e, uint64_t reason, uint64_t qual)
{
    if (marker(e, HVT_MARK_VMEXIT))
        return -1;
    PUT(reason);
    PUT(qual);
    return 0;
}

int rec_gap(struct rec_enc *e, uint64_t lost_records, uint64_t lost_insns)
{
    if (marker(e, HVT_MARK_GAP))
        return -1;
    PUT(lost_records);
    PUT(lost_insns);
    rec_reset(e);
    return 0;
}
