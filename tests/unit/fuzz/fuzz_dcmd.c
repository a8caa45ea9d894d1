/*
 * fuzz_dcmd.c - libFuzzer target for the hvt -c mailbox, trace/dvm/guest_cmd.c: its two untrusted sides
 * interleaved as the fuzzer likes - the host's HVT_CTL_D_CMD requests (dcmd_ctl_handle: bytes
 * off the network, after authentication) and the guest agent's HVT_HC_CMD hypercalls (any guest
 * code allowed to make them: registers it chooses). The hypervisor's lock and hypercall table
 * are stubbed: the lock checks it is taken and released in pairs. guest_cmd.c is included here so
 * that each input starts from an empty mailbox (its state is static, one per hypervisor).
 * Input: a sequence of steps. Byte b: b & 1 = 0: a control request, its args' length the next
 * two bytes (big-endian, modulo 1101: SETs up to beyond HVT_D_CMD_MAX), then the args from the
 * input; b & 1 = 1: a hypercall, op (RBX) = next byte % 7, seq = the last seq the host saw when the next byte is even (the agent that follows the
 * protocol) or a raw u32 otherwise, arg = 8 bytes.
 * Checks beyond "no crash, no sanitizer report": every reply is a whole status with a state of
 * the enum; the seq only moves forward; a read hypercall never returns bytes past the text.
 */
#include <stdlib.h>
#include <string.h>
#include "guest_cmd.c"

static int locked;
void spin_lock(struct spinlock *l) { if (locked++) abort(); (void)l; }
void spin_unlock(struct spinlock *l) { if (--locked) abort(); (void)l; }

static hv_hypercall_fn hook;
hv_hypercall_fn hv_hypercall_register(unsigned func, hv_hypercall_fn fn, enum hv_hc_priv priv, bool *ok)
{
    (void)priv;
    if (func == HVT_HC_CMD)
        hook = fn;
    *ok = true;
    return NULL;
}

struct in { const uint8_t *p; size_t n; };
static uint8_t byte(struct in *in) { if (!in->n) return 0; in->n--; return *in->p++; }
static uint64_t u64(struct in *in) { uint64_t v = 0; for (int i = 0; i < 8; i++) v = v << 8 | byte(in); return v; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool inited;
    if (!inited) {
        if (dcmd_init(HV_HC_ANY) != 0 || !hook)
            abort();
        inited = true;
    }
    memset(&st, 0, sizeof st);           /* an empty mailbox, as at boot */
    memset(text, 0, sizeof text);
    text_len = 0;
    struct in in = { data, size };
    uint32_t seen_seq = 0;
    uint8_t args[1100], out[256];
    for (int steps = 0; in.n && steps < 256; steps++) {
        uint8_t b = byte(&in);
        if (!(b & 1)) {
            uint32_t len = (uint32_t)byte(&in) << 8;
            len = (len | byte(&in)) % (sizeof args + 1);
            for (uint32_t i = 0; i < len; i++)
                args[i] = byte(&in);
            uint32_t out_len = 0;
            int rc = dcmd_ctl_handle(HVT_CTL_D_CMD, args, len, out, &out_len);
            if (rc == HVT_CTL_OK) {
                struct hvt_d_cmd_status st;
                if (out_len != sizeof st)
                    abort();
                memcpy(&st, out, sizeof st);
                if (st.state > HVT_D_CMDS_CANCELLED || st.seq < seen_seq)
                    abort();
                seen_seq = st.seq;
            } else if (rc != HVT_CTL_EINVAL) {
                abort();
            }
        } else {
            struct guest_regs g;
            memset(&g, 0, sizeof g);
            g.r[GPR_RBX] = byte(&in) % (HVT_HC_CMD_EXITED + 2);   /* one past each end too */
            uint8_t how = byte(&in);
            g.r[GPR_RCX] = how & 1 ? (uint32_t)u64(&in) : seen_seq;
            g.r[GPR_RDX] = u64(&in);
            uint64_t op = g.r[GPR_RBX], arg = g.r[GPR_RDX];
            int64_t rc = hook(&g);
            if (op == HVT_HC_CMD_READ && rc == HVT_HC_OK && arg >= HVT_D_CMD_MAX &&
                (g.r[GPR_RBX] | g.r[GPR_RCX] | g.r[GPR_RDX]))
                abort();                 /* bytes from beyond any text */
        }
        if (locked)
            abort();
    }
    return 0;
}
