/*
 * fake_hv_d.c - fake_hv's D engine: the hypervisor's own verifier and interpreter
 * (trace/dif_*.c, compiled for the host) behind HVT_CTL_D_LOAD / HVT_CTL_D_RUN, fired by
 * synthetic firings instead of a guest, so the whole host path (hvt's compiler, the
 * collector, the consumer) is tested without Bochs.
 *
 * Firing k (0 .. n-1) runs on CPU k % cpus, probe ids[k % nids] (the ids the host armed with
 * HVT_PROBE_F_ACTION, in arming order), with arg0 = k, arg1 = 2k, arg2 = k % 7, pid = tid =
 * 100 + k % 3, execname "alpha", "beta" or "gamma" (k % 3), timestamp = 1000 + k, curthread =
 * FAKE_D_STR, walltimestamp = the image's walltime + k (the fake's clock read 1000 at the
 * load), the stack pointer FAKE_D_STACK. A return probe's firing k returns RAX = k, but
 * -EAGAIN (-11) when k % 100 == 99, and fills arg0..arg5 and errno as the engine does
 * (hvt_probe_return_args, hvt_probe_return_errno): a system call's (armed with
 * HVT_PROBE_F_SYSARGS) arg0 = arg1 = RAX, any other's arg0 = FAKE_D_SITE_OFF, arg1 = RAX. Guest memory: FAKE_D_STR holds the string
 * "fake-string" (NUL, then zeros to the end of its page); FAKE_D_STACK a page of 8-byte words,
 * word i = FAKE_D_WORD + i (so at an fbt entry caller = FAKE_D_WORD, arg6 = FAKE_D_WORD + 1 ...);
 * every other address faults, but the user stack: firing k's user pc is
 * 0x400000 + k and its frame pointer FAKE_D_USTACK + 16 * (k % 4), where four frames of
 * [saved fp, return address] are chained upwards, frame i returning to 0x401100 + 0x100 * i
 * (the last one's saved fp 0): ustack() gives the pc and 4 - k % 4 return addresses.
 * Kernel stacks (stack() keys): firing k's unwinds to FAKE_D_KSTACK[k % 2 ..] (4 frames when k
 * is even, 3 when odd: vfs_read+0x1a, ksys_read+0x6b, __x64_sys_read+0x19, do_syscall_64+0x3b
 * at the pinned 6.1 cloud kernel's link addresses, the slide being 0 here), the first frame an
 * exact pc, having reached the user registers.
 */
#include "fake_hv_d.h"
#include "dif.h"
#include "hvt_probe.h"
#include "hvt_hypercall.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_D_STR   0xffff888000010000ull
#define FAKE_D_STACK 0xffffc90000004000ull
#define FAKE_D_WORD  0xc0de00ull
#define FAKE_D_USTACK 0x00007ffe00000000ull
#define FAKE_D_SITE_OFF 0x2a               /* a return probe's site, in its function */
#define MAX_CPUS     16
#define DRAIN_BUF    (64u << 10)

static uint8_t *stage;
static uint32_t stage_len, stage_total;
static void *mem;
static struct dif_state *st;
static const struct hvt_dif_hdr *hdr;
static bool loaded, begun, unloaded;
static uint32_t ids[4096], kinds[4096];   /* the armed ids and their specs' kinds */
static unsigned nids, cpus = 2;
static uint64_t left, made, records, fires;
static uint32_t snap_gen, want_snap;
static bool want_begin, want_end;
static uint8_t buf[DRAIN_BUF];
static struct hvt_d_status status;

static uint64_t cur_k;                     /* the firing being run */

static size_t fake_user_read(uint64_t va, void *out, size_t len)
{
    uint64_t frames[8];
    for (unsigned i = 0; i < 4; i++) {
        frames[2 * i] = i < 3 ? FAKE_D_USTACK + 16 * (i + 1) : 0;
        frames[2 * i + 1] = 0x401100 + 0x100 * i;
    }
    if (va < FAKE_D_USTACK || va >= FAKE_D_USTACK + sizeof frames)
        return 0;
    size_t n = FAKE_D_USTACK + sizeof frames - va < len ? FAKE_D_USTACK + sizeof frames - va : len;
    memcpy(out, (uint8_t *)frames + (va - FAKE_D_USTACK), n);
    return n;
}

static size_t fake_read(void *ctx, uint64_t va, void *out, size_t len, int user)
{
    static const char page[4096] = "fake-string";
    (void)ctx;
    if (user && va >= FAKE_D_USTACK && va < FAKE_D_USTACK + 64)
        return fake_user_read(va, out, len);
    if (!user && va >= FAKE_D_STACK && va < FAKE_D_STACK + 4096 && len <= FAKE_D_STACK + 4096 - va) {
        for (size_t i = 0; i < len; i++) {
            uint64_t off = va + i - FAKE_D_STACK, w = FAKE_D_WORD + off / 8;
            ((uint8_t *)out)[i] = (uint8_t)(w >> (8 * (off % 8)));
        }
        return len;
    }
    if (va < FAKE_D_STR || va >= FAKE_D_STR + sizeof page)
        return 0;
    size_t n = FAKE_D_STR + sizeof page - va < len ? FAKE_D_STR + sizeof page - va : len;
    memcpy(out, page + (va - FAKE_D_STR), n);
    return n;
}

static bool fake_uregs(void *ctx, uint64_t *pc, uint64_t *fp)
{
    (void)ctx;
    *pc = 0x400000 + cur_k;
    *fp = FAKE_D_USTACK + 16 * (cur_k % 4);
    return true;
}

static const uint64_t FAKE_D_KSTACK[4] = { 0xffffffff81349950ull + 0x1a, 0xffffffff8134a4c0ull + 0x6b,
                                           0xffffffff8134a5b0ull + 0x19, 0xffffffff819f9cc0ull + 0x3b };
static unsigned fake_kstack(void *ctx, uint64_t *pcs, unsigned max, uint32_t *exact, bool *from_user)
{
    (void)ctx;
    unsigned n = 0;
    for (unsigned i = (unsigned)(cur_k % 2); i < 4 && n < max; i++)
        pcs[n++] = FAKE_D_KSTACK[i];
    *exact = 1;
    *from_user = n == 4 - cur_k % 2;
    return n;
}

static const struct dif_env env = { .read = fake_read, .uregs = fake_uregs, .kstack = fake_kstack };

void fake_d_setup(uint64_t nfires, unsigned ncpus)
{
    left = nfires;
    cpus = ncpus < MAX_CPUS ? ncpus : MAX_CPUS;
}

static int load(const uint8_t *args, uint32_t len)
{
    struct hvt_d_load h;
    if (len < sizeof h)
        return HVT_D_EORDER;
    memcpy(&h, args, sizeof h);
    uint32_t n = len - (uint32_t)sizeof h;
    if (h.offset == 0) {
        if (nids)
            return HVT_D_EBUSY;
        loaded = false;
        if (h.total < sizeof(struct hvt_dif_hdr) || h.total > HVT_DIF_MAX_IMAGE)
            return HVT_D_EORDER;
        free(stage);
        if (!(stage = aligned_alloc(8, (h.total + 7) & ~7u)))
            return HVT_D_ENOMEM;
        stage_total = h.total;
        stage_len = 0;
    }
    if (!stage || h.offset != stage_len || h.total != stage_total || n > stage_total - stage_len)
        return HVT_D_EORDER;
    memcpy(stage + stage_len, args + sizeof h, n);
    stage_len += n;
    status.received = stage_len;
    if (stage_len < stage_total)
        return 0;
    struct dif_verr e = { -1, -1, -1, "" };
    if (dif_verify(stage, stage_total, &e) != DIF_OK) {
        status.err_clause = (uint32_t)e.clause;
        status.err_insn = (uint32_t)e.insn;
        snprintf(status.why, sizeof status.why, "%s", e.reason ? e.reason : "?");
        return HVT_D_EVERIFY;
    }
    size_t need = dif_state_size(stage, cpus);
    free(mem);
    if (!(mem = aligned_alloc(64, (need + 63) & ~(size_t)63)) ||
        dif_state_init(&st, mem, need, stage, cpus, &env) != DIF_OK)
        return HVT_D_ENOMEM;
    hdr = (const struct hvt_dif_hdr *)stage;
    loaded = true;
    begun = false;
    return 0;
}

static struct stream_core *d_sc;         /* set: BEGIN's records go out ahead of its reply */
void fake_d_stream(struct stream_core *sc) { d_sc = sc; }

static void fire(unsigned cpu, uint32_t id, uint64_t k);
static int drain(struct stream_core *sc, unsigned c);

int fake_d_ctl(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out, uint32_t *out_len)
{
    if (cmd == HVT_CTL_D_LOAD) {
        memset(status.why, 0, sizeof status.why);
        status.error = load(args, len);
    } else if (cmd == HVT_CTL_D_RUN) {
        struct hvt_d_run r;
        if (len != sizeof r)
            return HVT_CTL_EINVAL;
        memcpy(&r, args, sizeof r);
        status.error = 0;
        if (!loaded && r.op != HVT_D_OP_UNLOAD)
            status.error = HVT_D_ENOPROG;
        else if (r.op == HVT_D_OP_BEGIN) {
            /* As another CPU of the hypervisor can: BEGIN runs and its records go out before
             * this request's reply does. */
            if (d_sc) {
                if (hdr->begin_probe)
                    fire(0, hdr->begin_probe, 0);
                begun = true;
                drain(d_sc, 0);
            } else {
                want_begin = true;
            }
        }
        else if (r.op == HVT_D_OP_END || r.op == HVT_D_OP_SNAP) {
            want_snap = ++snap_gen;
            want_end |= r.op == HVT_D_OP_END;
        } else if (r.op == HVT_D_OP_UNLOAD) {
            unloaded = loaded;
            loaded = false;
        }
        else if (r.op != HVT_D_OP_STATUS)
            return HVT_CTL_EINVAL;
    } else {
        return HVT_CTL_ENOSYS;
    }
    status.loaded = loaded;
    status.snap_gen = snap_gen;
    status.records = records;
    status.fires = fires;
    memcpy(out, &status, sizeof status);
    *out_len = sizeof status;
    return HVT_CTL_OK;
}

bool fake_d_arm(uint32_t id, uint32_t kind)
{
    if (nids == sizeof ids / sizeof ids[0])
        return false;
    kinds[nids] = kind;
    ids[nids++] = id;
    return true;
}

/* The kind its spec gave probe id (0: BEGIN, END, ERROR: not armed by a spec). */
static uint32_t kind_of(uint32_t id)
{
    for (unsigned i = 0; i < nids; i++)
        if (ids[i] == id)
            return kinds[i];
    return 0;
}

void fake_d_disarm(void) { nids = 0; left = 0; }
bool fake_d_done(void) { return unloaded; }
bool fake_d_armed(void) { return nids != 0; }

static void fire(unsigned cpu, uint32_t id, uint64_t k)
{
    static const char *names[3] = { "alpha", "beta", "gamma" };
    struct dif_firing f = { .tsc = 1000 + k, .execname = names[k % 3], .execname_max = 16 };
    f.v[HVT_DIF_V_ARG0] = k;
    f.v[HVT_DIF_V_ARG0 + 1] = 2 * k;
    f.v[HVT_DIF_V_ARG0 + 2] = k % 7;
    uint32_t kind = kind_of(id);
    if ((kind & HVT_PROBE_KIND_MASK) == HVT_PROBE_KIND_RETURN) {
        uint64_t arg[6], rax = k % 100 == 99 ? (uint64_t)-11 : k;
        hvt_probe_return_args(!!(kind & HVT_PROBE_F_SYSARGS), FAKE_D_SITE_OFF, rax, arg);
        for (unsigned i = 0; i < 6; i++)
            f.v[HVT_DIF_V_ARG0 + i] = arg[i];
        f.v[HVT_DIF_V_ERRNO] = hvt_probe_return_errno(arg[1]);
    }
    f.v[HVT_DIF_V_PID] = f.v[HVT_DIF_V_TID] = 100 + k % 3;
    f.v[HVT_DIF_V_TIMESTAMP] = 1000 + k;
    f.v[HVT_DIF_V_WALLTIMESTAMP] = hdr->walltime ? hdr->walltime + (int64_t)k : 0;
    f.v[HVT_DIF_V_REGS_SP] = FAKE_D_STACK;
    f.v[HVT_DIF_V_CURTHREAD] = FAKE_D_STR;
    cur_k = k;
    int n = dif_fire(st, cpu, id, &f);
    if (n > 0)
        fires += (uint64_t)n;
}

/* Count and send CPU c's records (one message per drain). -1: the ring is full. */
static int drain(struct stream_core *sc, unsigned c)
{
    long n;
    while ((n = dif_drain(st, c, buf, sizeof buf)) > 0) {
        for (long at = 0; at < n;) {
            struct hvt_drec r;
            memcpy(&r, buf + at, sizeof r);
            records += r.type == HVT_DREC_DATA || r.type == HVT_DREC_ERROR;
            at += r.len;
        }
        /* the fake's ring is large enough for a drain: a full one would lose it, so say so */
        if (stream_core_append(sc, c, HVT_MSG_D_REC, buf, (size_t)n) != 0)
            return -1;
    }
    return 0;
}

static int snapshot(struct stream_core *sc, uint32_t gen)
{
    for (unsigned c = 0; c < cpus; c++) {
        uint32_t cursor = 0;
        long n;
        do {
            n = dif_agg_part(st, c, gen, buf, sizeof buf, &cursor);
            if (n < 0 || stream_core_append(sc, c, HVT_MSG_D_AGG, buf, (size_t)n) != 0)
                return -1;
        } while (n > (long)sizeof(struct hvt_dagg_part));
    }
    return 0;
}

bool fake_d_produce(struct stream_core *sc)
{
    if (!loaded)
        return false;
    if (want_begin) {
        want_begin = false;
        if (hdr->begin_probe)
            fire(0, hdr->begin_probe, 0);
        begun = true;
        return drain(sc, 0) == 0;
    }
    if (want_end || want_snap) {
        if (want_end && hdr->end_probe)
            fire(0, hdr->end_probe, 0);
        want_end = false;
        for (unsigned c = 0; c < cpus; c++)
            drain(sc, c);
        uint32_t g = want_snap;
        want_snap = 0;
        return snapshot(sc, g) == 0;
    }
    if (!nids || !left)
        return false;
    for (unsigned i = 0; i < 64 && left; i++, left--, made++)
        fire((unsigned)(made % cpus), ids[made % nids], made);
    for (unsigned c = 0; c < cpus; c++)
        if (drain(sc, c) < 0)
            return false;
    return true;
}
