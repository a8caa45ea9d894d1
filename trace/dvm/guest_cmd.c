/* guest_cmd.c - the hvt -c mailbox (guest_cmd.h). */
#include "guest_cmd.h"
#include "hv_api.h"
#include "hv_exit.h"
#include "hv_guest.h"
#include "hvt_hypercall.h"
#include "hvt_stream.h"

_Static_assert(HVT_HC_CMD_READ_LEN == 3 * sizeof(uint64_t), "READ answers in RBX, RCX, RDX");

static struct spinlock lock;
static struct hvt_d_cmd_status st;          /* seq, state, pid, wait_status (error per request) */
static char text[HVT_D_CMD_MAX];
static uint32_t text_len;

static bool live(uint32_t s)
{
    return s == HVT_D_CMDS_POSTED || s == HVT_D_CMDS_TAKEN || s == HVT_D_CMDS_STARTED ||
           s == HVT_D_CMDS_RUNNING;
}

int dcmd_ctl_handle(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out,
                    uint32_t *out_len)
{
    struct hvt_d_cmd c;
    if (cmd != HVT_CTL_D_CMD)
        return HVT_CTL_ENOSYS;
    if (len < sizeof c)
        return HVT_CTL_EINVAL;
    __builtin_memcpy(&c, args, sizeof c);
    uint32_t n = len - (uint32_t)sizeof c;
    if (c.op == HVT_D_CMD_SET) {
        if (c.seq || !n || n > HVT_D_CMD_MAX)
            return HVT_CTL_EINVAL;
        for (uint32_t i = 0; i < n; i++)
            if (!args[sizeof c + i])
                return HVT_CTL_EINVAL;          /* the agent relies on no NUL inside */
    } else if (n || (c.op != HVT_D_CMD_GO && c.op != HVT_D_CMD_CANCEL && c.op != HVT_D_CMD_STATUS)) {
        return HVT_CTL_EINVAL;
    }
    spin_lock(&lock);
    st.error = 0;
    if (c.op == HVT_D_CMD_SET) {
        if (live(st.state)) {
            st.error = HVT_D_CMD_EBUSY;
        } else {
            __builtin_memcpy(text, args + sizeof c, n);
            text_len = n;
            st.seq++;
            st.state = HVT_D_CMDS_POSTED;
            st.pid = 0;
            st.wait_status = 0;
        }
    } else if (c.op == HVT_D_CMD_GO) {
        if (c.seq != st.seq || st.state != HVT_D_CMDS_STARTED)
            st.error = HVT_D_CMD_ESEQ;
        else
            st.state = HVT_D_CMDS_RUNNING;      /* the agent sees it at its next poll */
    } else if (c.op == HVT_D_CMD_CANCEL) {
        if (c.seq != st.seq || (!live(st.state) && st.state != HVT_D_CMDS_EXITED))
            st.error = HVT_D_CMD_ESEQ;
        else
            st.state = HVT_D_CMDS_CANCELLED;
    }
    __builtin_memcpy(out, &st, sizeof st);
    *out_len = sizeof st;
    spin_unlock(&lock);
    return HVT_CTL_OK;
}

/* HVT_HC_CMD: the agent's side of the mailbox (RBX = enum hvt_hc_cmd_op). GO is only seen
 * through MAY_RUN: the host's go moves the state to RUNNING, which the agent reads as
 * HVT_HC_CMD_GO. */
static int64_t hook_cmd(struct guest_regs *g)
{
    uint64_t op = g->r[GPR_RBX], seq = g->r[GPR_RCX], arg = g->r[GPR_RDX];
    int64_t rc = HVT_HC_OK;
    spin_lock(&lock);
    bool mine = seq == st.seq && st.seq;
    switch (op) {
    case HVT_HC_CMD_TAKE:
        if (st.state != HVT_D_CMDS_POSTED) {
            rc = HVT_HC_EBUSY;
            break;
        }
        st.state = HVT_D_CMDS_TAKEN;
        g->r[GPR_RBX] = st.seq;
        g->r[GPR_RCX] = text_len;
        break;
    case HVT_HC_CMD_READ: {                     /* the bytes at offset arg */
        uint64_t w[HVT_HC_CMD_READ_LEN / 8] = { 0, 0, 0 };
        if (!mine || st.state != HVT_D_CMDS_TAKEN) {
            rc = HVT_HC_EINVAL;
            break;
        }
        for (uint64_t i = 0; i < sizeof w && arg < text_len && i < text_len - arg; i++)
            ((char *)w)[i] = text[arg + i];
        g->r[GPR_RBX] = w[0];
        g->r[GPR_RCX] = w[1];
        g->r[GPR_RDX] = w[2];
        break;
    }
    case HVT_HC_CMD_STARTED:                    /* held before exec */
        if (!mine || st.state != HVT_D_CMDS_TAKEN || !arg || arg > UINT32_MAX) {
            rc = HVT_HC_EINVAL;
            break;
        }
        st.pid = (uint32_t)arg;
        st.state = HVT_D_CMDS_STARTED;
        break;
    case HVT_HC_CMD_MAY_RUN:
        if (!mine) {
            rc = HVT_HC_EINVAL;
            break;
        }
        g->r[GPR_RBX] = st.state == HVT_D_CMDS_RUNNING ? HVT_HC_CMD_GO :
                        st.state == HVT_D_CMDS_CANCELLED ? HVT_HC_CMD_CANCELLED : HVT_HC_CMD_HOLD;
        break;
    case HVT_HC_CMD_EXITED:
        if (!mine || (st.state != HVT_D_CMDS_RUNNING && st.state != HVT_D_CMDS_CANCELLED &&
                      st.state != HVT_D_CMDS_STARTED && st.state != HVT_D_CMDS_TAKEN)) {
            rc = HVT_HC_EINVAL;
            break;
        }
        st.wait_status = (int32_t)arg;
        if (st.state != HVT_D_CMDS_CANCELLED)
            st.state = HVT_D_CMDS_EXITED;
        break;
    default:
        rc = HVT_HC_EINVAL;
    }
    spin_unlock(&lock);
    return rc;
}

int dcmd_init(enum hv_hc_priv priv)
{
    bool ok;
    hv_hypercall_register(HVT_HC_CMD, hook_cmd, priv, &ok);
    return ok ? 0 : -1;
}
