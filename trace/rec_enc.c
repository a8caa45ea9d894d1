/* rec_enc.c - record encoder (format: include/hvt_trace_format.h). */
#include "rec_enc.h"

size_t rec_put_varint(uint8_t *p, uint64_t v) { return rec_varint(p, v); }

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

void rec_begin(struct rec_enc *e, uint8_t *buf, size_t cap, uint64_t tsc)
{
    e->buf = buf;
    e->cap = cap;
    e->len = 0;
    e->expected_rip = 0;
    e->cr3 = 0;
    e->tick = 1;
    e->tsc = e->first_tsc = tsc;
    for (int i = 0; i < HVT_NREGS; i++)
        e->regs[i] = 0;
    e->nrecords = e->ninsns = 0;
    for (int i = 0; i < HVT_PRED_SLOTS; i++)
        e->pred[i].valid = 0;
}

static int room(struct rec_enc *e) { return e->cap - e->len >= REC_MAX_BYTES ? 0 : -1; }
#define PUT(v) (e->len += rec_varint(e->buf + e->len, (v)))

/* The hot path: one call per traced instruction. */
int rec_insn(struct rec_enc *e, uint64_t rip, uint32_t code_id, unsigned code_len,
             uint64_t cr3, const uint64_t gpr[HVT_REG_RFLAGS], uint64_t rflags)
{
    if (room(e))
        return -1;
    size_t tag_at = e->len++;
    uint8_t tag = 0;
    if (rip != e->expected_rip) {
        tag |= HVT_INSN_RIP;
        PUT(zigzag((int64_t)(rip - e->expected_rip)));
    }
    uint32_t slot = HVT_PRED_SLOT(rip);
    if (!(e->pred[slot].valid && e->pred[slot].rip == rip && e->pred[slot].id == code_id)) {
        tag |= HVT_INSN_CODE;
        PUT(code_id);
    }
    if (cr3 != e->cr3) {
        tag |= HVT_INSN_CR3;
        PUT(cr3);
        e->cr3 = cr3;
    }
    /* Which registers changed: branch-free compares, then only the set bits are visited. */
    uint32_t mask = (uint32_t)(rflags != e->regs[HVT_REG_RFLAGS]) << HVT_REG_RFLAGS;
#pragma GCC unroll 16
    for (int i = 0; i < HVT_REG_RFLAGS; i++)
        mask |= (uint32_t)(gpr[i] != e->regs[i]) << i;
    if (mask) {
        tag |= HVT_INSN_REGS;
        PUT(mask);
        for (uint32_t m = mask; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            uint64_t v = i == HVT_REG_RFLAGS ? rflags : gpr[i];
            PUT(zigzag((int64_t)(v - e->regs[i])));
            e->regs[i] = v;
        }
    }
    e->buf[tag_at] = tag;
    e->tsc += e->tick;
    e->expected_rip = rip + code_len;
    e->pred[slot].rip = rip;
    e->pred[slot].id = code_id;
    e->pred[slot].valid = 1;
    e->nrecords++;
    e->ninsns++;
    return 0;
}

static int marker(struct rec_enc *e, uint8_t kind)
{
    if (room(e))
        return -1;
    e->buf[e->len++] = HVT_TAG_MARKER | kind;
    e->nrecords++;
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
    e->tsc = tsc;
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
