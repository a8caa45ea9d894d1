/* probe.c - hidden breakpoints on guest kernel code (see probe.h). */
#include "probe.h"
#include "probe_epoch.h"
#include "task.h"
#include "task_base.h"
#include "step.h"
#include "x86_len.h"
#include "trace_opts.h"
#include "hv_api.h"
#include "hv_exit.h"
#include "hv_ept.h"
#include "gmem.h"
#include "hvt_bootinfo.h"
#include "hvt_probe.h"
#include "trace.h"

/* A recipe names registers as x86 encodes them: the same order as enum gpr. */
_Static_assert(GPR_RAX == 0 && GPR_RCX == 1 && GPR_RDX == 2 && GPR_RBX == 3 && GPR_RSP == 4 &&
               GPR_RBP == 5 && GPR_RSI == 6 && GPR_RDI == 7 && GPR_R8 == 8 && GPR_R15 == 15 &&
               GPR_COUNT >= 16, "enum gpr is x86's register numbering");

/* Enough for an entry probe on every function of a kernel (~42,000 in 6.1): probes are
 * allocated a chunk at a time as they are armed, shadows a page at a time, both from the
 * engine's budget (TRACE_PROBE_MEM_PARTS of what the start left, hv_api.h); running out of
 * it, or of hypervisor memory, fails the arming cleanly with the number armed (PROBE_ENOMEM,
 * which the guest tool and the collector print), and the hypervisor logs it once. */
#define PROBE_MAX    65536
#define PROBE_CHUNK  1024                  /* probes allocated together */
#define SHADOW_MAX   16384                 /* distinct probed pages (64 MiB of shadows) */
#define SHADOW_HASH  32768                 /* power of two, > SHADOW_MAX */
#define HASH_SLOTS   131072                /* power of two, > 2 x PROBE_MAX */
#define COMM_SLOTS   4                     /* per probe: the first process names seen */
#define PROBE_ALSO   3                     /* further action probes on one instruction */
#define SDT_ALSO_MAX 64                    /* of them, sdt probes with recipes of their own */
#define NO_PROBE     0xffffffffu
#define PENDING_MAX  64                    /* user probes waiting for their process to run */
#define RET_SITES    64                    /* return sites of one function at most */
#define STALE_MAX    4                     /* resumes at one RIP before a #BP goes to the guest */
#define FIRE_BUF     256                   /* firing records a CPU collects before a block */
/* Pages one instruction can touch: code 2 (it may cross a page), source 2, destination 2
 * (MOVS), a descriptor or stack page beside them. */
#define STEP_PAGES   8
#define OPC_INT3     0xcc

enum emu { EMU_STEP, EMU_NOP, EMU_RET, EMU_JMP, EMU_PUSH, EMU_SUBRSP };

struct shadow {
    uint64_t gpa;                          /* the guest page it stands in for */
    uint8_t *page;
    unsigned nsites;                       /* armed probes on it: 0 = not mapped anywhere */
    uint32_t first;                        /* its probes, newest first (probe.next), or NO_PROBE */
};

struct sdt_rule {                          /* sdt: the arguments' recipe (hvt_hypercall.h), */
    uint8_t op, reg, shift, sign;          /* decoded when armed (shift: 64 - its bits, 0 for */
    int32_t disp;                          /* 8 bytes) so that a firing only applies it */
};

struct probe {
    uint64_t va, gpa, target;              /* target: where an emulated JMP goes */
    uint64_t func;                         /* the function a return site belongs to */
    uint64_t root;                         /* user probes: the address space's page-table root;
                                              0: a kernel probe (every address space) */
    uint32_t tgid;                         /* user probes: the process armed for; a firing in
                                              another (a root freed and reused) does not count */
    uint32_t id;
    uint32_t also[PROBE_ALSO];             /* action probes' further ids at this site (fbt and
                                              syscall entry share a function's first byte) */
    uint8_t nalso;
    uint8_t also_sdt[PROBE_ALSO];          /* sdt action probes sharing the site with recipes
                                              of their own: index + 1 in sdt_also, else 0 */
    uint8_t kind, len, emu, armed, record, stack, sysargs, action, sdt;
    uint8_t own;                           /* the guest's own byte at the site is an INT3: kept
                                              when armed and at every resync (every guest write
                                              to a shadowed page faults to the engine first) */
    uint8_t hooks;                         /* HOOK_OWN: this is the hypervisor's own probe on
                                              the module load (1) or unload (2) path
                                              (probe_module.h), or on the scheduler's switch
                                              point (3: switch_hook); HOOK_RIDE: such a hook of
                                              another id (xhook_id) armed after this probe at
                                              its site, riding on it. One byte: a firing tests
                                              both with one load. */
    uint32_t xhook_id;
    struct sdt_rule sdt_rule[HVT_SDT_ARGS];
    uint8_t skip;                          /* va is this far past the address asked for (an
                                              ENDBR64 left in place there): firings report it */
    uint8_t orig[X86_MAX_INSN_LEN];        /* the displaced instruction, as decoded */
    uint16_t shadow;
    uint32_t next;                         /* the next probe on the same shadow page */
    struct spinlock comm_lock;
    struct { char name[TRACE_COMM_MAX]; uint64_t n; } comm[COMM_SLOTS];
    uint64_t comm_other;                   /* firings of processes past COMM_SLOTS */
    uint64_t fires;
    uint64_t cost_fires;                   /* firings timed by phase, and their ticks */
    uint64_t cost[HVT_PH_COUNT];
    uint64_t cost_newtask, cost_switch;    /* of them, in another task than the CPU's last timed
                                              firing; of another probe id than it */
};

#define HOOK_OWN(h)   ((h) & 3u)
#define HOOK_RIDE(h)  ((h) >> 2 & 3u)
static struct probe *probe_chunks[PROBE_MAX / PROBE_CHUNK];
#define PROBE(i) (&probe_chunks[(i) / PROBE_CHUNK][(i) % PROBE_CHUNK])
static unsigned nprobes, narmed;
static struct hv_budget mem = { .parts = TRACE_PROBE_MEM_PARTS };
static bool mem_said;

/* Probe tables and shadow pages: from the engine's budget. Under the lock. */
static void *mem_pages(size_t n)
{
    void *p = hv_budget_pages(&mem, n);
    if (!p && !mem_said) {
        mem_said = true;
        hv_log("hvtrace: probes: memory budget reached (%lu of %lu KiB, hv_mem_mb sets it): "
               "further probes refused\n", mem.used >> 10, hv_budget_limit(&mem) >> 10);
    }
    return p;
}
/* Slots [first_live, nprobes) hold the armed table. A disarm retires the rest (first_live =
 * nprobes): a CPU inside a firing may still use the probe it looked up (its D action, then
 * resume() with the probe's emulation and target), so retired slots are written again only
 * once no CPU entered its firing before that disarm (probe_epoch.h); until then new probes
 * take the slots after them. */
static unsigned first_live;
static struct probe_epoch epoch;
static uint64_t retired_at;               /* the epoch of the last disarm */
_Static_assert(PROBE_EPOCH_CPUS >= HVT_MAX_CPUS, "an epoch per CPU");
static uint32_t *hash;                     /* probe index + 1, by va; 0 = empty */
static struct shadow *shadows;
static uint16_t *shadow_hash;              /* shadow index + 1, by guest page; 0 = empty */
static unsigned nshadows;
static uint8_t *scratch;                   /* resync's staging page */
static struct spinlock lock;
/* User probes wait here until a CPU runs their process: its page tables then translate the
 * address (the hypervisor cannot find another process's tables by pid). */
static struct { uint64_t va, comm; uint32_t pid, id, flags; } pending[PENDING_MAX]; /* comm: a name's hvt_comm_hash, or 0 */
static unsigned npending;
/* Further sdt probes on a site armed already with another recipe (the io provider's io:::done
 * and sdt:block::block_rq_complete on one site: each its own arguments). Reset with the slots
 * (slots_reclaim): a CPU in a firing may still read an entry until then. */
static struct { struct sdt_rule rule[HVT_SDT_ARGS]; } sdt_also[SDT_ALSO_MAX];
static unsigned nsdt_also;
static probe_module_fn module_hook;        /* probe_set_module_hook */
static probe_switch_fn switch_hook;        /* probe_set_switch_hook */

/* This CPU's step-over: the shadows whose originals it runs for one instruction. */
static struct {
    struct shadow *sh[STEP_PAGES];
    uint8_t write[STEP_PAGES];             /* a guest write: resync the shadow after it */
    unsigned nsh;
    uint64_t stale_rip;
    unsigned stale;
    struct hvt_probe_fire *fires;          /* records collected (FIRE_BUF) */
    unsigned nfires;
    uint64_t first_tsc;                    /* host TSC when the first of them was collected */
    uint64_t flushed;                      /* flush_epoch this CPU has acted on */
    /* The firing being timed (cost_on): its ticks by phase so far, the last time stamp; after
     * it, the probe its exit's end (stub to VM entry) is added to at this CPU's next exit. */
    uint64_t acc[HVT_PH_COUNT], cost_t;
    struct probe *tail;
    uint32_t tail_id;
    uint64_t tail_t, tail_exit;
    uint64_t seen_task;                    /* the last timed firing's task and probe id */
    uint32_t seen_id;
} cpu_state[HVT_MAX_CPUS];
static bool cost_on;                       /* firings are timed by phase (probe_cost_set) */
static void cost_tail(unsigned cpu);

static struct {
    uint64_t fires, foreign_bp, stale_bp, step_overs, ept_reads, ept_writes, resyncs, redecodes;
    uint64_t bp_exits, mtf_exits;          /* exits the engine caused, with ept_reads/writes */
    uint64_t records, records_lost;        /* firing records made; dropped by the stream */
    uint64_t other_space;                  /* user-probe INT3s met by another address space */
    uint64_t other_process;                /* user probes met by another process in their root */
} stats;

static unsigned hash_slot(uint64_t va) { return (unsigned)((va ^ (va >> 13)) * 0x9e3779b1u) & (HASH_SLOTS - 1); }

/* The probe at va for the address space 'root' (a kernel probe matches every one; several
 * user probes may share a va in different processes). */
static struct probe *lookup(uint64_t va, uint64_t root)
{
    for (unsigned s = hash_slot(va), n = 0; n < HASH_SLOTS; s = (s + 1) & (HASH_SLOTS - 1), n++) {
        uint32_t i = __atomic_load_n(&hash[s], __ATOMIC_ACQUIRE);
        if (!i)
            return 0;
        struct probe *p = PROBE(i - 1);
        /* a probe disarmed alone (its module unloaded, its bytes rewritten) keeps its slot:
         * a new one at the same address is another probe */
        if (p->va == va && p->armed && (!p->root || p->root == root))
            return p;
    }
    return 0;
}

/* The address space the guest runs in: CR3's table address without the PTI half (the user
 * and kernel roots of one process differ in bit 12) and without PCID bits. */
static uint64_t current_root(void)
{
    return hv_guest_read(HV_GUEST_CR3) & X86_PAGE_MASK & ~TASK_CR3_PTI_USER & ((1ull << 52) - 1);
}

static void hash_insert(uint64_t va, unsigned index)
{
    unsigned s = hash_slot(va);
    while (hash[s])
        s = (s + 1) & (HASH_SLOTS - 1);
    __atomic_store_n(&hash[s], index + 1, __ATOMIC_RELEASE);
}

/* What the displaced instruction does, and whether resuming can do it without running it:
 * NOPs (the fentry site ftrace leaves, a disabled jump label's 66 90 or 0F 1F 44 00 00 -
 * SDM Vol. 2B "NOP", Table 4-12 "Recommended Multi-Byte Sequence of NOP Instruction" -,
 * ENDBR64 and its sealed form), RET, direct JMPs (a return
 * thunk, a tail call), and the prologue's PUSH reg and SUB $imm,%rsp. SDM Vol. 2: NOP 0F 1F /0,
 * ENDBR64 F3 0F 1E FA, RET C3, JMP E9/EB, PUSH 50+rd (REX.B 41: r8-r15), SUB REX.W 83 /5 ib
 * and REX.W 81 /5 id (ModRM EC: register RSP). *target: the JMP's target, the PUSH's register
 * (enum gpr), the SUB's immediate (sign-extended). */
static enum emu classify(const uint8_t *b, unsigned len, uint64_t va, uint64_t *target)
{
    if (len == 1 && b[0] >= 0x50 && b[0] <= 0x57) {
        *target = b[0] - 0x50u;
        return EMU_PUSH;
    }
    if (len == 2 && b[0] == 0x41 && b[1] >= 0x50 && b[1] <= 0x57) {
        *target = 8u + b[1] - 0x50u;
        return EMU_PUSH;
    }
    if (len == 4 && b[0] == 0x48 && b[1] == 0x83 && b[2] == 0xec) {
        *target = (uint64_t)(int64_t)(int8_t)b[3];
        return EMU_SUBRSP;
    }
    if (len == 7 && b[0] == 0x48 && b[1] == 0x81 && b[2] == 0xec) {
        int32_t imm;
        __builtin_memcpy(&imm, b + 3, 4);
        *target = (uint64_t)(int64_t)imm;
        return EMU_SUBRSP;
    }
    unsigned i = 0;
    while (i < len && b[i] == 0x66)        /* operand-size prefixes of a long NOP */
        i++;
    if ((len == 1 && b[0] == 0x90) || (i >= 1 && len == i + 1 && b[i] == 0x90) ||
        (i + 3 <= len && b[i] == 0x0f && b[i + 1] == 0x1f && ((b[i + 2] >> 3) & 7) == 0) ||
        (len == 4 && b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa))
        return EMU_NOP;
    if (len == 1 && b[0] == 0xc3)
        return EMU_RET;
    if (len == 5 && b[0] == 0xe9) {
        int32_t rel;
        __builtin_memcpy(&rel, b + 1, 4);
        *target = va + 5 + (int64_t)rel;
        return EMU_JMP;
    }
    if (len == 2 && b[0] == 0xeb) {
        *target = va + 2 + (int8_t)b[1];
        return EMU_JMP;
    }
    return EMU_STEP;
}

static unsigned shadow_slot(uint64_t gpa_page) { return (unsigned)((gpa_page >> X86_PAGE_SHIFT) * 0x9e3779b1u) & (SHADOW_HASH - 1); }

/* Shadows are never freed (a page keeps its shadow for later arming): lock-free lookups. */
static struct shadow *shadow_of(uint64_t gpa_page)
{
    for (unsigned s = shadow_slot(gpa_page);; s = (s + 1) & (SHADOW_HASH - 1)) {
        unsigned i = __atomic_load_n(&shadow_hash[s], __ATOMIC_ACQUIRE);
        if (!i)
            return 0;
        if (shadows[i - 1].gpa == gpa_page)
            return &shadows[i - 1];
    }
}

/* Shown on every CPU or on none: a CPU's view full (vmm/ caps its tables) refuses the page. */
static int shadow_show(struct shadow *sh, uint64_t perms)
{
    for (unsigned c = 0; c < hv_cpu_count(); c++)
        if (hv_ept_view_map(c, sh->gpa, sh->page, perms)) {
            while (c--)
                hv_ept_view_unmap(c, sh->gpa);
            if (!mem_said) {
                mem_said = true;
                hv_log("hvtrace: probes: cpu %u's EPT view is full: further probes on new pages "
                       "refused\n", c);
            }
            return PROBE_ENOMEM;
        }
    return 0;
}

/* The table is empty since a disarm: start again at slot 0 once no CPU can hold a retired
 * probe. Called with the lock held. */
static void slots_reclaim(void)
{
    if (first_live && first_live == nprobes &&
        probe_epoch_quiet(&epoch, retired_at, hv_cpu_count())) {
        first_live = nprobes = 0;
        nsdt_also = 0;
    }
}

/* One probe at va. Called with the lock held. 1 armed, 0 already there, < 0 error. */
/* ENDBR64 F3 0F 1E FA, ENDBR32 F3 0F 1E FB (SDM Vol. 2A "ENDBR64", Vol. 1 17.3 "Indirect
 * Branch Tracking"): with IBT on, an indirect CALL or JMP must land on one or the CPU raises
 * #CP. An INT3 written over it would be what the tracker meets, so a probe asked for at an
 * ENDBR goes on the next instruction (the ENDBR does nothing a probe could see: the firing
 * is the same), and reports the address asked for. */
static const uint64_t *arm_recipe;        /* the sdt recipe of the probe being armed (lock) */

static unsigned endbr_skip(const struct gmem_paging *pg, uint64_t va)
{
    uint8_t b[4];
    if (gmem_read_gva(pg, va, b, sizeof b) != sizeof b)
        return 0;
    return b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && (b[3] == 0xfa || b[3] == 0xfb) ? 4 : 0;
}

static void decode_recipe(const uint64_t *recipe, struct sdt_rule *rule)
{
    for (unsigned i = 0; i < HVT_SDT_ARGS; i++) {
        struct hvt_sdt_arg a;
        hvt_sdt_arg_get(recipe, i, &a);    /* checked by probe_arm_sdt */
        rule[i] = (struct sdt_rule){ .op = a.op, .reg = a.reg, .sign = a.sign, .disp = a.disp,
                                     .shift = (uint8_t)(64 - (8u << a.size)) };
    }
}

static int arm_site(const struct gmem_paging *pg, enum probe_kind kind, uint64_t va, uint32_t id,
                    uint64_t func, uint32_t flags, uint64_t root, uint32_t tgid)
{
    unsigned skip = kind == PROBE_RETURN ? 0 : endbr_skip(pg, va);
    va += skip;
    struct probe *old = lookup(va, root);
    uint8_t hook = flags & PROBE_F_MODHOOK_LOAD ? 1 : flags & PROBE_F_MODHOOK_FREE ? 2 :
                   flags & PROBE_F_SWITCH_HOOK ? 3 : 0;
    if (old && old->root == root && hook) {
        /* The hypervisor's own hook where a probe already is: it runs at that probe's
         * firings, before its actions. Its own probe kept for others' actions (disarm_where)
         * gets its hook back; two hooks never share a site. */
        if (old->id == id && !old->action && !old->hooks) {
            __atomic_store_n(&old->hooks, hook, __ATOMIC_RELEASE);
            return 1;
        }
        if (old->hooks)
            return HOOK_OWN(old->hooks) == hook && old->id == id ? 1 : PROBE_EINVAL;
        old->xhook_id = id;
        __atomic_store_n(&old->hooks, (uint8_t)(hook << 2), __ATOMIC_RELEASE);
        return 1;
    }
    if (old && old->root == root) {
        /* another probe on the same instruction: its action runs at the same firing (also
         * when the first one is the hypervisor's own hook: it has no action of its own) */
        bool known = old->id == id;
        for (unsigned i = 0; i < old->nalso; i++)
            known |= old->also[i] == id;
        if (known)
            return 0;
        if (!arm_recipe != !old->sdt)
            return PROBE_EINVAL;           /* an sdt site takes its arguments by a recipe */
        if (!(flags & HVT_PROBE_F_ACTION) || (!old->action && !HOOK_OWN(old->hooks)))
            return arm_recipe ? PROBE_EINVAL : 0;
        if (old->nalso == PROBE_ALSO)
            return PROBE_ENOMEM;
        uint8_t own = 0;
        if (arm_recipe) {                  /* D clauses of two sdt probes (or io and sdt) */
            struct sdt_rule r[HVT_SDT_ARGS];
            decode_recipe(arm_recipe, r);
            if (__builtin_memcmp(r, old->sdt_rule, sizeof r)) {
                if (nsdt_also == SDT_ALSO_MAX)
                    return PROBE_ENOMEM;
                __builtin_memcpy(sdt_also[nsdt_also].rule, r, sizeof r);
                own = (uint8_t)++nsdt_also;
            }
        }
        old->also_sdt[old->nalso] = own;
        old->also[old->nalso++] = id;
        return 1;
    }
    slots_reclaim();
    if (nprobes == PROBE_MAX)
        return PROBE_ENOMEM;               /* retired slots still held: later */
    if (!hv_ept_exec_only())
        return PROBE_EINVAL;     /* shadows are execute-only views: this CPU cannot hold one */
    if (!probe_chunks[nprobes / PROBE_CHUNK] &&
        !(probe_chunks[nprobes / PROBE_CHUNK] = mem_pages(HV_PAGES(PROBE_CHUNK * sizeof(struct probe)))))
        return PROBE_ENOMEM;
    struct gmem_xlat x;
    uint8_t b[X86_MAX_INSN_LEN];
    if (gmem_walk(pg, va, &x))
        return PROBE_EFAULT;
    size_t n = gmem_read_gva(pg, va, b, sizeof b);
    unsigned len = n ? x86_insn_len(b, n) : 0;
    uint64_t page = x.gpa & X86_PAGE_MASK;
    if (!len || !gmem_map_gpa(page))
        return PROBE_EFAULT;
    struct shadow *sh = shadow_of(page);
    if (!sh) {
        if (nshadows == SHADOW_MAX)
            return PROBE_ENOMEM;
        uint8_t *p = mem_pages(1);
        if (!p)
            return PROBE_ENOMEM;
        sh = &shadows[nshadows];
        sh->gpa = page;
        sh->page = p;
        sh->nsites = 0;
        sh->first = NO_PROBE;
        unsigned slot = shadow_slot(page);
        while (shadow_hash[slot])
            slot = (slot + 1) & (SHADOW_HASH - 1);
        __atomic_store_n(&shadow_hash[slot], (uint16_t)(++nshadows), __ATOMIC_RELEASE);
    }
    if (sh->nsites == 0)                   /* (re)shown: the guest's page as it is now */
        gmem_read_gpa(page, sh->page, X86_PAGE_SIZE);
    struct probe *p = PROBE(nprobes);
    *p = (struct probe){ .next = sh->first, .root = root, .tgid = tgid, .va = va, .skip = (uint8_t)skip,
                         .gpa = x.gpa, .func = func, .id = id, .kind = (uint8_t)kind,
                         .len = (uint8_t)len, .shadow = (uint16_t)(sh - shadows), .armed = 1,
                         .record = !!(flags & HVT_PROBE_F_RECORD),
                         .stack = !!(flags & HVT_PROBE_F_STACK),
                         .sysargs = !!(flags & HVT_PROBE_F_SYSARGS),
                         .action = !!(flags & HVT_PROBE_F_ACTION),
                         .hooks = hook };
    __builtin_memcpy(p->orig, b, sizeof b);
    p->emu = (uint8_t)classify(b, len, va, &p->target);
    p->own = b[0] == OPC_INT3;
    if (arm_recipe) {
        decode_recipe(arm_recipe, p->sdt_rule);
        p->sdt = 1;
    }
    if (sh->nsites == 0 && shadow_show(sh, EPT_EXEC))
        return PROBE_ENOMEM;               /* nothing written yet: the slot stays free */
    sh->nsites++;
    sh->page[x.gpa & ~X86_PAGE_MASK] = OPC_INT3;
    sh->first = nprobes;
    hash_insert(va, nprobes++);
    narmed++;
    return 1;
}

int probe_arm(enum probe_kind kind, uint64_t lo, uint64_t hi, uint32_t id, uint32_t flags)
{
    if (kind == PROBE_PROFILE || kind == PROBE_TICK)
        return probe_profile_arm(kind, lo, id, flags);
    struct gmem_paging pg;
    probe_kernel_paging(&pg);
    spin_lock(&lock);
    if (narmed == 0)
        hv_exception_intercept(VEC_BP, true);
    int rc;
    if (kind != PROBE_RETURN) {
        rc = arm_site(&pg, kind, lo, id, lo, flags, 0, 0);
    } else {
        /* The function as the guest has it now (boot rewrote its returns: decode, do not
         * trust the image's .return_sites). */
        uint64_t sites[RET_SITES];
        unsigned ns = 0;
        rc = PROBE_ENOSITE;
        for (uint64_t a = lo; a < hi && ns < RET_SITES;) {
            uint8_t b[X86_MAX_INSN_LEN];
            size_t n = gmem_read_gva(&pg, a, b, sizeof b);
            unsigned len = n ? x86_insn_len(b, n) : 0;
            if (!len) {
                rc = PROBE_EFAULT;
                break;
            }
            uint64_t t = 0;
            enum emu e = classify(b, len, a, &t);
            if ((b[0] == 0xc3 || b[0] == 0xc2) || (e == EMU_JMP && (t < lo || t >= hi)))
                sites[ns++] = a;
            a += len;
        }
        for (unsigned i = 0; i < ns; i++) {
            int r = arm_site(&pg, kind, sites[i], id, lo, flags, 0, 0);
            if (r < 0) {
                rc = r;
                break;
            }
            rc = (rc < 0 ? 0 : rc) + r;
        }
    }
    if (narmed == 0)
        hv_exception_intercept(VEC_BP, false);
    spin_unlock(&lock);
    return rc;
}

int probe_arm_sdt(uint64_t va, uint32_t id, uint32_t flags, const uint64_t recipe[3])
{
    if (hvt_sdt_recipe_check(recipe))
        return PROBE_EINVAL;
    struct gmem_paging pg;
    probe_kernel_paging(&pg);
    spin_lock(&lock);
    if (narmed == 0)
        hv_exception_intercept(VEC_BP, true);
    arm_recipe = recipe;                   /* arm_site writes it before it publishes the probe */
    int rc = arm_site(&pg, PROBE_ADDR, va, id, va, flags & ~HVT_PROBE_F_SDT, 0, 0);
    arm_recipe = NULL;
    if (narmed == 0)
        hv_exception_intercept(VEC_BP, false);
    spin_unlock(&lock);
    return rc;
}

#define ANY_ID ((uint64_t)1 << 32)
static void disarm_where(uint64_t lo, uint64_t hi, uint64_t id)
{
    spin_lock(&lock);
    for (unsigned i = first_live; i < nprobes; i++) {
        struct probe *p = PROBE(i);
        if (!p->armed || p->root || p->va < lo || p->va >= hi)
            continue;
        if (id != ANY_ID && HOOK_RIDE(p->hooks) && p->xhook_id == id) {
            __atomic_store_n(&p->hooks, 0, __ATOMIC_RELEASE);   /* a hook riding here: it alone */
            continue;
        }
        if (id != ANY_ID && p->id != id)
            continue;
        if (id != ANY_ID && p->nalso) {
            /* others' actions ride on this one: they stay armed, its own hook and action go */
            __atomic_store_n(&p->hooks, 0, __ATOMIC_RELEASE);
            p->action = 0;
            continue;
        }
        struct shadow *sh = &shadows[p->shadow];
        p->armed = 0;                      /* lookup() passes it over from now on */
        narmed--;
        bool last_here = true;             /* another probe's INT3 on the same byte stays */
        for (uint32_t j = sh->first; j != NO_PROBE; j = PROBE(j)->next)
            if (PROBE(j)->armed && PROBE(j)->gpa == p->gpa)
                last_here = false;
        if (last_here)
            sh->page[p->gpa & ~X86_PAGE_MASK] = p->orig[0];
        if (--sh->nsites == 0)
            for (unsigned c = 0; c < hv_cpu_count(); c++)
                hv_ept_view_unmap(c, sh->gpa);
    }
    if (narmed == 0)
        hv_exception_intercept(VEC_BP, false);
    spin_unlock(&lock);
}

void probe_disarm_range(uint64_t lo, uint64_t hi) { disarm_where(lo, hi, ANY_ID); }
void probe_disarm_id(uint64_t lo, uint64_t hi, uint32_t id) { disarm_where(lo, hi, id); }

void probe_set_module_hook(probe_module_fn fn) { __atomic_store_n(&module_hook, fn, __ATOMIC_RELEASE); }
void probe_set_switch_hook(probe_switch_fn fn) { __atomic_store_n(&switch_hook, fn, __ATOMIC_RELEASE); }

static unsigned disarm_all_count;
unsigned probe_disarm_all_count(void) { return __atomic_load_n(&disarm_all_count, __ATOMIC_ACQUIRE); }

void probe_disarm_all(void)
{
    probe_module_fn hook = __atomic_load_n(&module_hook, __ATOMIC_ACQUIRE);
    if (hook)
        hook(PROBE_MODEV_FORGET, 0);
    probe_profile_disarm_all();
    spin_lock(&lock);
    for (unsigned i = 0; i < nshadows; i++) {
        shadows[i].first = NO_PROBE;
        if (shadows[i].nsites) {
            shadows[i].nsites = 0;
            for (unsigned c = 0; c < hv_cpu_count(); c++)
                hv_ept_view_unmap(c, shadows[i].gpa);
        }
    }
    /* The table starts empty again: each probe's slot is cleared (the whole table is large
     * and mostly empty). A CPU still looking a site up meets either an empty slot or a probe
     * that is not armed, never a wrong one that is; the slots are retired, not reused, while
     * a CPU may still hold one (slots_reclaim). */
    for (unsigned i = first_live; i < nprobes; i++) {
        struct probe *p = PROBE(i);
        p->armed = 0;
        for (unsigned s = hash_slot(p->va), n = 0; n < HASH_SLOTS; s = (s + 1) & (HASH_SLOTS - 1), n++)
            if (hash[s] == i + 1) {
                __atomic_store_n(&hash[s], 0, __ATOMIC_RELEASE);
                break;
            }
    }
    retired_at = probe_epoch_retire(&epoch);
    first_live = nprobes;
    narmed = 0;
    npending = 0;
    hv_exception_intercept(VEC_BP, false);
    __atomic_add_fetch(&disarm_all_count, 1, __ATOMIC_RELEASE);
    spin_unlock(&lock);
}


unsigned probe_armed(void) { return __atomic_load_n(&narmed, __ATOMIC_RELAXED); }

int probe_arm_user(uint64_t va, uint32_t pid, uint64_t comm, uint32_t id, uint32_t flags)
{
    spin_lock(&lock);
    int rc = PROBE_ENOMEM;
    if (npending < PENDING_MAX) {
        pending[npending++] = (typeof(pending[0])){ .va = va, .comm = comm, .pid = pid, .id = id,
                                                    .flags = flags };
        rc = 0;                            /* taken; armed when the process runs */
    }
    spin_unlock(&lock);
    return rc;
}

/* This CPU runs a process some pending user probes wait for: arm them in its address space
 * (an address not mapped yet stays pending). */
static void arm_pending(unsigned cpu)
{
    uint32_t pid, tid;
    const char *comm = probe_current(cpu, &pid, &tid);
    uint64_t hash = 0;                     /* the name's key, computed once a probe waits for one */
    bool mine = false;
    for (unsigned i = 0; i < __atomic_load_n(&npending, __ATOMIC_ACQUIRE) && !mine; i++) {
        if (pending[i].comm && !hash && pid)
            hash = hvt_comm_hash(comm, TRACE_COMM_MAX);
        mine = pid && (pending[i].pid == pid || (pending[i].comm && pending[i].comm == hash));
    }
    if (!mine)
        return;
    struct gmem_paging pg;
    hv_guest_paging(&pg);
    uint64_t root = current_root();
    spin_lock(&lock);
    if (narmed == 0)
        hv_exception_intercept(VEC_BP, true);
    for (unsigned i = 0; i < npending;) {
        if (pending[i].pid != pid && !(pending[i].comm && pending[i].comm == hash)) {
            i++;
            continue;
        }
        int rc = arm_site(&pg, PROBE_ADDR, pending[i].va, pending[i].id, pending[i].va,
                          pending[i].flags, root, pid);
        if (rc == PROBE_EFAULT) {
            i++;                           /* not mapped (yet) in this process */
            continue;
        }
        hv_log("hvtrace: cpu %u: user probe %u at %lx in pid %u%s%s (root %lx): %s\n", cpu,
               pending[i].id, pending[i].va, pid, pending[i].comm ? " by name " : "",
               pending[i].comm ? comm : "", root, rc >= 0 ? "armed" : "no room");
        pending[i] = pending[--npending];
    }
    if (narmed == 0)
        hv_exception_intercept(VEC_BP, false);
    spin_unlock(&lock);
}

/* A CPU's firing records, as one message on the stream, or one block on the debug port
 * without a stream. */
static void flush_fires(unsigned cpu)
{
    probe_stack_flush(cpu);              /* the samples too: the same moments */
    unsigned n = cpu_state[cpu].nfires;
    if (!n)
        return;
    size_t bytes = n * sizeof(struct hvt_probe_fire);
    enum trace_sink_sent s = trace_sink_message(cpu, HVT_MSG_PROBE, cpu_state[cpu].fires, bytes);
    if (s == TRACE_SINK_DROPPED) {
        __atomic_add_fetch(&stats.records_lost, n, __ATOMIC_RELAXED);
    } else if (s == TRACE_SINK_NO_STREAM) {
        char head[64];
        hv_snprintf(head, sizeof head, HVT_FIREB_TAG "%u %u %lu\n", cpu, n, (uint64_t)bytes);
        trace_sink_debug_blob(head, cpu_state[cpu].fires, bytes);
    }
    cpu_state[cpu].nfires = 0;
}

static volatile uint64_t flush_epoch;      /* bumped when every CPU should hand its records on */

void probe_flush(void)
{
    unsigned cpu = hv_cpu_id();
    flush_fires(cpu);
    cpu_state[cpu].flushed = __atomic_add_fetch(&flush_epoch, 1, __ATOMIC_RELEASE);
}

void probe_flush_request(void) { __atomic_add_fetch(&flush_epoch, 1, __ATOMIC_RELEASE); }

/* Records wait at most one poll period: a host following firings sees rare ones promptly. */
void probe_poll(void)
{
    unsigned cpu = hv_cpu_id();
    if (cpu_state[cpu].tail)
        cost_tail(cpu);
    if (__atomic_load_n(&npending, __ATOMIC_RELAXED))
        arm_pending(cpu);
    uint64_t e = __atomic_load_n(&flush_epoch, __ATOMIC_ACQUIRE);
    if (cpu_state[cpu].flushed != e) {
        cpu_state[cpu].flushed = e;
        flush_fires(cpu);
    } else if ((cpu_state[cpu].nfires && hv_rdtsc() - cpu_state[cpu].first_tsc >= TRACE_POLL_TICKS) ||
               probe_stack_pending(cpu, hv_rdtsc(), TRACE_POLL_TICKS)) {
        flush_fires(cpu);
    }
}

/* At power-off: whatever any CPU still holds (the others are not firing any more: the machine
 * is going down; a record written meanwhile would show as a short block, not a lost one). */
void probe_flush_all(void)
{
    for (unsigned c = 0; c < hv_cpu_count(); c++)
        flush_fires(c);
}

/* struct pt_regs (arch/x86/include/asm/ptrace.h, x86-64): where a system call's arguments
 * are - the user's RDI, RSI, RDX, R10, R8, R9 - when the __x64_sys_ wrapper gets the frame. */
static const uint16_t sys_arg_off[6] = { 112, 104, 96, 56, 72, 64 };
/* They lie in one span (R10 at 56 to RDI at 112), read with one page walk, not six. */
#define SYS_ARGS_LO   56
#define SYS_ARGS_SPAN 64
_Static_assert(SYS_ARGS_LO + SYS_ARGS_SPAN == 112 + 8, "the span ends with RDI");

/* A static tracepoint's arguments, by its recipe (checked when it was armed) from the
 * registers at the site: each rule's value cut to its size and extended (NZ, Z: whether the
 * register's cut differs from the rule's constant). A load the kernel's
 * page tables do not map gives 0, as a record's unreadable argument does elsewhere. */
static void sdt_args(const struct probe *p, const struct sdt_rule *rule, const struct guest_regs *g,
                     uint64_t arg[6])
{
    struct gmem_paging pg;
    bool paging = false;
    arg[5] = 0;
    for (unsigned i = 0; i < HVT_SDT_ARGS; i++) {
        const struct sdt_rule a = rule[i];
        uint64_t base = a.reg == GPR_RSP ? hv_guest_read(HV_GUEST_RSP) : g->r[a.reg], v = base;
        switch (a.op) {
        case HVT_SDT_NONE: v = 0; break;
        case HVT_SDT_REG:  break;
        case HVT_SDT_LEA:  v = base + (int64_t)a.disp; break;
        case HVT_SDT_IMM:  v = (uint64_t)(int64_t)a.disp; break;
        case HVT_SDT_SITE: v = p->va + (int64_t)a.disp; break;
        case HVT_SDT_NZ:   arg[i] = base << a.shift != (uint64_t)(int64_t)a.disp << a.shift; continue;
        case HVT_SDT_Z:    arg[i] = base << a.shift == (uint64_t)(int64_t)a.disp << a.shift; continue;
        case HVT_SDT_PCPU:
        case HVT_SDT_LOAD: {
            unsigned n = (64u - a.shift) / 8;
            uint64_t at = base + (int64_t)a.disp;
            if (a.op == HVT_SDT_PCPU) {    /* the kernel's per-CPU base: its GS base there */
                uint64_t gs = hv_guest_read(HV_GUEST_GS_BASE);
                at = gs >= TASK_KERNEL_HALF ? gs + (int64_t)a.disp : 0;
            }
            if (!paging) {
                probe_kernel_paging(&pg);
                paging = true;
            }
            v = 0;
            if (!at || gmem_read_gva(&pg, at, &v, n) != n)
                v = 0;
            break;
        }
        }
        if (a.shift)
            v = a.sign ? (uint64_t)((int64_t)(v << a.shift) >> a.shift) : (v << a.shift) >> a.shift;
        arg[i] = v;
    }
}

/* A firing's arguments: entry and address probes the C arguments (or, for a system call's
 * wrapper, the user's from the pt_regs its first argument points to), return probes those of
 * hvt_probe_return_args (a system call's: the return value twice). */
static inline __attribute__((always_inline))
void firing_args(const struct probe *p, const struct guest_regs *g, uint64_t arg[6])
{
    if (p->sdt) {
        sdt_args(p, p->sdt_rule, g, arg);
        return;
    }
    if (p->kind == PROBE_RETURN) {
        hvt_probe_return_args(p->sysargs, p->va - p->func, g->r[GPR_RAX], arg);
        return;
    }
    arg[0] = g->r[GPR_RDI]; arg[1] = g->r[GPR_RSI]; arg[2] = g->r[GPR_RDX];
    arg[3] = g->r[GPR_RCX]; arg[4] = g->r[GPR_R8]; arg[5] = g->r[GPR_R9];
    if (p->sysargs) {
        struct gmem_paging pg;
        uint64_t span[SYS_ARGS_SPAN / 8];
        probe_kernel_paging(&pg);
        size_t got = gmem_read_gva(&pg, arg[0] + SYS_ARGS_LO, span, sizeof span);
        for (unsigned i = 0; i < 6; i++) {
            unsigned k = (sys_arg_off[i] - SYS_ARGS_LO) / 8;
            arg[i] = (k + 1) * 8 <= got ? span[k] : 0;   /* not readable: the record says 0 */
        }
    }
}

static void record(const struct probe *p, unsigned cpu, const struct guest_regs *g)
{
    uint64_t arg[6];
    firing_args(p, g, arg);
    if (p->stack) {
        probe_sample(p->id, p->kind, p->va - p->skip, arg, g);
        return;
    }
    if (!cpu_state[cpu].nfires)
        cpu_state[cpu].first_tsc = hv_rdtsc();
    __atomic_add_fetch(&stats.records, 1, __ATOMIC_RELAXED);
    struct hvt_probe_fire *f = &cpu_state[cpu].fires[cpu_state[cpu].nfires];
    f->id = p->id;
    f->cpu = (uint16_t)cpu;
    f->kind = p->kind;
    f->tsc = hv_exit_guest_tsc();
    f->pc = p->va - p->skip;
    const struct task_who *w = task_who(cpu);
    f->pid = w->pid;
    f->tid = w->tid;
    __builtin_memcpy(f->arg, arg, sizeof arg);
    __builtin_memcpy(f->comm, w->comm, HVT_PROBE_COMM_LEN);
    if (++cpu_state[cpu].nfires == FIRE_BUF)
        flush_fires(cpu);
}

/* Two process names (TRACE_COMM_MAX bytes each, NUL-terminated) are equal: a word at a time,
 * as every firing compares one. */
static inline __attribute__((always_inline)) bool comm_eq(const char *a, const char *b)
{
    for (unsigned i = 0; i < TRACE_COMM_MAX; i += 8) {
        uint64_t x, y;
        __builtin_memcpy(&x, a + i, 8);
        __builtin_memcpy(&y, b + i, 8);
        if (x != y)                        /* maybe only past the NUL */
            return !strncmp(a + i, b + i, TRACE_COMM_MAX - i);
        if ((x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull)
            return true;                   /* equal up to a NUL in this word */
    }
    return true;
}

/* --- per-phase accounting (cost_on): time stamps at the phases' borders --- */

/* The ticks since the last stamp go to phase ph. */
static inline void cost_mark(unsigned cpu, unsigned ph)
{
    uint64_t now = hv_rdtsc();
    cpu_state[cpu].acc[ph] += now - cpu_state[cpu].cost_t;
    cpu_state[cpu].cost_t = now;
}

/* Ticks the D action's interpreter put in the phases it times itself. */
static inline uint64_t cost_inner(unsigned cpu)
{
    uint64_t n = 0;
    for (unsigned i = HVT_PH_PREDICATE; i < HVT_PH_COUNT; i++)
        n += cpu_state[cpu].acc[i];
    return n;
}

/* At a later exit of this CPU: the end of the last timed firing's exit (from its last stamp to
 * the stub's VM entry stamp, and what no stamp sees) is its probe's too. A probe disarmed since
 * (or its slot armed again) gets nothing; probes live in memory never freed. */
static void cost_tail(unsigned cpu)
{
    struct probe *p = cpu_state[cpu].tail;
    if (!p || cpu_state[cpu].tail_exit == hv_exit_tsc())
        return;
    cpu_state[cpu].tail = NULL;
    uint64_t e = hv_last_entry_tsc();
    if (e > cpu_state[cpu].tail_t && p->armed && p->id == cpu_state[cpu].tail_id)
        __atomic_add_fetch(&p->cost[HVT_PH_EXIT], e - cpu_state[cpu].tail_t + hv_exit_untimed(),
                           __ATOMIC_RELAXED);
}

static void cost_begin(unsigned cpu)
{
    uint64_t now = hv_rdtsc();
    cost_tail(cpu);
    cpu_state[cpu].acc[HVT_PH_EXIT] = now - hv_exit_tsc();   /* (an exit that fired nothing
                                                                  left only this phase set) */
    cpu_state[cpu].cost_t = now;
}

/* The firing's ticks (the last ones, resuming, the exit's) to its probe. */
static void cost_commit(struct probe *p, unsigned cpu)
{
    cost_mark(cpu, HVT_PH_EXIT);
    for (unsigned i = 0; i < HVT_PH_COUNT; i++)
        if (cpu_state[cpu].acc[i]) {
            __atomic_add_fetch(&p->cost[i], cpu_state[cpu].acc[i], __ATOMIC_RELAXED);
            cpu_state[cpu].acc[i] = 0;
        }
    __atomic_add_fetch(&p->cost_fires, 1, __ATOMIC_RELAXED);
    /* what the performance model cannot see in a firing's counts: a firing in a task other
     * than the last one's finds the task's name and ids anew (probe_current_slow), and one of
     * another probe than the last changes a key made from the probe's name */
    uint64_t task = task_who(cpu)->task;
    if (task != cpu_state[cpu].seen_task) {
        cpu_state[cpu].seen_task = task;
        __atomic_add_fetch(&p->cost_newtask, 1, __ATOMIC_RELAXED);
    }
    if (p->id != cpu_state[cpu].seen_id) {
        cpu_state[cpu].seen_id = p->id;
        __atomic_add_fetch(&p->cost_switch, 1, __ATOMIC_RELAXED);
    }
    cpu_state[cpu].tail = p;
    cpu_state[cpu].tail_id = p->id;
    cpu_state[cpu].tail_t = cpu_state[cpu].cost_t;
    cpu_state[cpu].tail_exit = hv_exit_tsc();
}

void probe_cost_set(bool on) { __atomic_store_n(&cost_on, on, __ATOMIC_RELAXED); }
bool probe_cost_enabled(void) { return __atomic_load_n(&cost_on, __ATOMIC_RELAXED); }

void probe_cost_sum(uint64_t ticks[HVT_PH_COUNT], uint64_t *fires, uint64_t *newtask, uint64_t *switched)
{
    spin_lock(&lock);
    *fires = *newtask = *switched = 0;
    for (unsigned k = 0; k < HVT_PH_COUNT; k++)
        ticks[k] = 0;
    for (unsigned i = first_live; i < nprobes; i++) {
        const struct probe *p = PROBE(i);
        *fires += __atomic_load_n(&p->cost_fires, __ATOMIC_RELAXED);
        *newtask += __atomic_load_n(&p->cost_newtask, __ATOMIC_RELAXED);
        *switched += __atomic_load_n(&p->cost_switch, __ATOMIC_RELAXED);
        for (unsigned k = 0; k < HVT_PH_COUNT; k++)
            ticks[k] += __atomic_load_n(&p->cost[k], __ATOMIC_RELAXED);
    }
    spin_unlock(&lock);
}

unsigned probe_cost_list(struct hvt_probe_cost *out, unsigned max, unsigned *total)
{
    unsigned n = 0, all = 0;
    spin_lock(&lock);
    for (unsigned i = first_live; i < nprobes; i++) {
        const struct probe *p = PROBE(i);
        if (!p->armed)
            continue;
        unsigned k = 0;
        while (k < n && out[k].id != p->id)
            k++;
        if (k == n) {                      /* a new id: counted, listed if there is room */
            all++;
            if (n == max)
                continue;
            out[n++] = (struct hvt_probe_cost){ .id = p->id };
        }
        out[k].sites++;
        out[k].fires += __atomic_load_n(&p->cost_fires, __ATOMIC_RELAXED);
        out[k].newtask += __atomic_load_n(&p->cost_newtask, __ATOMIC_RELAXED);
        out[k].switched += __atomic_load_n(&p->cost_switch, __ATOMIC_RELAXED);
        for (unsigned h = 0; h < HVT_PH_COUNT; h++)
            out[k].ticks[h] += __atomic_load_n(&p->cost[h], __ATOMIC_RELAXED);
    }
    spin_unlock(&lock);
    *total = all;
    return n;
}

/* The firing: counted per CPU and per process name; recorded if asked. timed: cost_on when
 * the exit began (the stamps then go to this CPU's acc). */
static void fire(struct probe *p, unsigned cpu, const struct guest_regs *g, bool timed)
{
    __atomic_add_fetch(&p->fires, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&stats.fires, 1, __ATOMIC_RELAXED);
    uint32_t pid, tid;
    const char *comm = probe_current(cpu, &pid, &tid);
    /* A slot's name is written once, under the lock, before its count becomes non-zero
     * (release): a name already counted is found and counted without the lock. */
    unsigned k = 0;
    while (k < COMM_SLOTS && __atomic_load_n(&p->comm[k].n, __ATOMIC_ACQUIRE) &&
           !comm_eq(p->comm[k].name, comm))
        k++;
    if (k < COMM_SLOTS && p->comm[k].n) {
        __atomic_add_fetch(&p->comm[k].n, 1, __ATOMIC_RELAXED);
    } else {
        spin_lock(&p->comm_lock);
        k = 0;
        while (k < COMM_SLOTS && p->comm[k].n && !comm_eq(p->comm[k].name, comm))
            k++;
        if (k == COMM_SLOTS) {
            p->comm_other++;
        } else if (p->comm[k].n) {
            __atomic_add_fetch(&p->comm[k].n, 1, __ATOMIC_RELAXED);
        } else {
            for (unsigned j = 0; j < TRACE_COMM_MAX - 1 && comm[j]; j++)
                p->comm[k].name[j] = comm[j];
            __atomic_store_n(&p->comm[k].n, 1, __ATOMIC_RELEASE);
        }
        spin_unlock(&p->comm_lock);
    }
    uint8_t hooks = __atomic_load_n(&p->hooks, __ATOMIC_ACQUIRE);
    if (__builtin_expect(hooks, 0)) {      /* the hypervisor's own probes: one test for all */
        unsigned hk = HOOK_OWN(hooks) | HOOK_RIDE(hooks);   /* one of them is 0 */
        if (hk == 3) {                     /* the scheduler switches tasks */
            probe_switch_fn hook = __atomic_load_n(&switch_hook, __ATOMIC_ACQUIRE);
            if (hook)
                hook(cpu, g);
        } else {                           /* the kernel loads or frees a module: its RDI */
            probe_module_fn hook = __atomic_load_n(&module_hook, __ATOMIC_ACQUIRE);
            if (hook)
                hook(hk == 1 ? PROBE_MODEV_LOAD : PROBE_MODEV_FREE, g->r[GPR_RDI]);
        }
        if (HOOK_OWN(hooks) && !p->nalso)
            return;                        /* nothing else here */
    }
    /* The probe's own action, and those of the ids sharing its site (which ride on a hook
     * probe of the hypervisor's too: it has none of its own). */
    probe_action_fn act = p->action || p->nalso ? probe_action() : NULL;
    if (act) {
        uint64_t arg[6], inner = 0;
        if (timed) {
            cost_mark(cpu, HVT_PH_LOOKUP);
            inner = cost_inner(cpu);
        }
        const struct probe_who who = { comm, pid, tid, task_who(cpu)->task,
                                       timed ? cpu_state[cpu].acc : NULL };
        bool args = probe_action_args();   /* else none computed: the action reads none */
        if (args)
            firing_args(p, g, arg);
        if (p->action)
            act(p->id, p->kind, cpu, p->va - p->skip, args ? arg : NULL, &who, (struct guest_regs *)g);
        for (unsigned i = 0; i < p->nalso; i++) {
            uint64_t mine[6];
            if (p->also_sdt[i] && args)    /* its own recipe at this site */
                sdt_args(p, sdt_also[p->also_sdt[i] - 1].rule, g, mine);
            act(p->also[i], p->kind, cpu, p->va - p->skip,
                !args ? NULL : p->also_sdt[i] ? mine : arg, &who, (struct guest_regs *)g);
        }
        if (timed) {                       /* the action's time the interpreter did not split */
            uint64_t now = hv_rdtsc();
            cpu_state[cpu].acc[HVT_PH_CLAUSES] += now - cpu_state[cpu].cost_t -
                                                  (cost_inner(cpu) - inner);
            cpu_state[cpu].cost_t = now;
        }
    } else if ((p->record || p->stack) && cpu_state[cpu].fires) {
        if (timed)
            cost_mark(cpu, HVT_PH_LOOKUP);
        record(p, cpu, g);
        if (timed)
            cost_mark(cpu, HVT_PH_RECORD);
    }
    if (timed)
        cost_mark(cpu, HVT_PH_LOOKUP);
}

/* Run the original of sh's page on this CPU for one instruction (MTF), interrupts held off
 * for it so the step cannot be interrupted half-way (the probe would fire twice). The same
 * instruction may touch further shadowed pages (a read that crosses into one, a MOVS): each
 * joins the step and all are restored at its end. False when the list is full. */
static bool step_over(unsigned cpu, struct shadow *sh, bool write)
{
    unsigned n = cpu_state[cpu].nsh;
    for (unsigned i = 0; i < n; i++)
        if (cpu_state[cpu].sh[i] == sh) {  /* already original here: a write after a read */
            cpu_state[cpu].write[i] |= write;
            /* ... unless another CPU's arming showed this CPU the shadow again meanwhile
             * (disarm, then arm on the same page): then the instruction would fault again
             * forever. Mapping the original is idempotent: always do it. */
            hv_ept_view_map(cpu, sh->gpa, 0, EPT_RWX);
            return true;
        }
    if (n == STEP_PAGES)
        return false;
    cpu_state[cpu].sh[n] = sh;
    cpu_state[cpu].write[n] = write;
    cpu_state[cpu].nsh = n + 1;
    hv_ept_view_map(cpu, sh->gpa, 0, EPT_RWX);
    if (n == 0) {
        hv_guest_hold_interrupts(true);
        hv_set_mtf(true);
        step_no_fast();                    /* a traced CPU: the next MTF exit is ours too */
        __atomic_add_fetch(&stats.step_overs, 1, __ATOMIC_RELAXED);
    }
    return true;
}

/* PUSH's store, done the way the CPU would: a supervisor write through the current page
 * tables to a writable, already accessed and dirty, non-user page (anything else - a fault to
 * raise, bits to set, a probed page - is left to the CPU: false). */
static bool push_store(uint64_t va, uint64_t v)
{
    struct gmem_paging pg;
    struct gmem_xlat x;
    hv_guest_paging(&pg);
    if ((va & ~X86_PAGE_MASK) > X86_PAGE_SIZE - sizeof v || gmem_walk(&pg, va, &x) ||
        !x.writable || x.user || !x.ad_set || shadow_of(x.gpa & X86_PAGE_MASK))
        return false;
    uint8_t *page = gmem_map_gpa(x.gpa & X86_PAGE_MASK);
    if (!page)
        return false;
    __builtin_memcpy(page + (x.gpa & ~X86_PAGE_MASK), &v, sizeof v);
    return true;
}

/* SUB's flags (SDM Vol. 1 3.4.3.1, "Status Flags"): CF borrow, PF even parity of the low byte,
 * AF borrow from bit 3, ZF, SF, OF signed overflow. */
static uint64_t sub_flags(uint64_t rflags, uint64_t a, uint64_t b)
{
    uint64_t r = a - b, f = rflags & ~RFLAGS_ARITH;
    f |= a < b ? RFLAGS_CF : 0;
    f |= __builtin_parity((unsigned)(r & 0xff)) ? 0 : RFLAGS_PF;
    f |= ((a ^ b ^ r) & 0x10) ? RFLAGS_AF : 0;
    f |= r == 0 ? RFLAGS_ZF : 0;
    f |= (r >> 63) ? RFLAGS_SF : 0;
    f |= (((a ^ b) & (a ^ r)) >> 63) ? RFLAGS_OF : 0;
    return f;
}

/* Shadow stacks (SDM Vol. 1 17.2 "Shadow Stacks"): with CR4.CET and SH_STK_EN in the CET MSR
 * of the privilege the guest runs at (IA32_U_CET at CPL 3, IA32_S_CET below), a RET pops the
 * shadow stack too and compares; one emulated here would leave it a frame deep and a later
 * RET would raise #CP. (CR4.CET set means the CPU has the MSRs: reading them cannot fault.) */
static bool shadow_stack_on(void)
{
    if (!(hv_guest_read(HV_GUEST_CR4_ACTIVE) & CR4_CET))
        return false;
    unsigned cpl = (unsigned)(hv_guest_read(HV_GUEST_CS_AR) >> 5) & 3;
    return hv_rdmsr(cpl == 3 ? MSR_IA32_U_CET : MSR_IA32_S_CET) & CET_SH_STK_EN;
}

static void resume(struct probe *p, unsigned cpu, const struct guest_regs *g)
{
    uint64_t rsp, ret, rflags = hv_guest_read(HV_GUEST_RFLAGS);
    struct gmem_paging pg;
    /* The guest single-steps itself: the CPU must run it to raise the #DB. */
    switch (rflags & RFLAGS_TF ? EMU_STEP : p->emu) {
    case EMU_PUSH:
        rsp = hv_guest_read(HV_GUEST_RSP);
        if (push_store(rsp - 8, p->target == GPR_RSP ? rsp : g->r[p->target])) {
            hv_guest_write(HV_GUEST_RSP, rsp - 8);
            hv_guest_write(HV_GUEST_RIP, p->va + p->len);
            return;
        }
        break;                              /* the store needs the CPU: run it */
    case EMU_SUBRSP:
        rsp = hv_guest_read(HV_GUEST_RSP);
        hv_guest_write(HV_GUEST_RFLAGS, sub_flags(rflags, rsp, p->target));
        hv_guest_write(HV_GUEST_RSP, rsp - p->target);
        hv_guest_write(HV_GUEST_RIP, p->va + p->len);
        return;
    case EMU_NOP:
        hv_guest_write(HV_GUEST_RIP, p->va + p->len);
        return;
    case EMU_JMP:
        hv_guest_write(HV_GUEST_RIP, p->target);
        return;
    case EMU_RET:
        if (shadow_stack_on())
            break;                          /* the CPU pops both stacks: run it */
        rsp = hv_guest_read(HV_GUEST_RSP);
        probe_kernel_paging(&pg);
        if (gmem_read_gva(&pg, rsp, &ret, sizeof ret) == sizeof ret) {
            hv_guest_write(HV_GUEST_RIP, ret);
            hv_guest_write(HV_GUEST_RSP, rsp + 8);
            return;
        }
        break;                              /* the stack is not readable here: run it */
    }
    if (!step_over(cpu, &shadows[p->shadow], false))
        hv_panic("probe: step-over list full at a firing");   /* unreachable: a #BP starts one */
}

/* The same for an address with no probe: walked. */
static bool guest_has_int3(uint64_t va)
{
    struct gmem_paging pg;
    uint8_t b = 0;
    probe_kernel_paging(&pg);
    if (!(va >> 63))
        hv_guest_paging(&pg);              /* a user address: the current root */
    return gmem_read_gva(&pg, va, &b, 1) == 1 && b == OPC_INT3;
}

static bool bp_exit(struct guest_regs *g, bool known);

/* Is the current process the one a user probe was armed for? (pid here is the tgid.) */
static bool same_process(const struct probe *p, unsigned cpu)
{
    uint32_t pid, tid;
    probe_current(cpu, &pid, &tid);
    return pid == p->tgid;
}

/* A #BP exit: the probe found stays this CPU's until it resumed the guest (probe_epoch.h). */
bool probe_bp_exit(struct guest_regs *g)
{
    unsigned cpu = hv_cpu_id();
    probe_epoch_enter(&epoch, cpu);
    bool r = bp_exit(g, false);
    probe_epoch_leave(&epoch, cpu);
    return r;
}

bool probe_bp_exit_known(struct guest_regs *g)
{
    unsigned cpu = hv_cpu_id();
    probe_epoch_enter(&epoch, cpu);
    bool r = bp_exit(g, true);
    probe_epoch_leave(&epoch, cpu);
    return r;
}

/* known: the caller saw the vector was #BP. */
static bool bp_exit(struct guest_regs *g, bool known)
{
    if (!known && (hv_exit_intr_info() & VMX_INTR_VECTOR_MASK) != VEC_BP) {
        hv_reinject_exception();
        return true;
    }
    unsigned cpu = hv_cpu_id();
    bool timed = __atomic_load_n(&cost_on, __ATOMIC_RELAXED);
    if (timed)
        cost_begin(cpu);
    uint64_t rip = hv_guest_read(HV_GUEST_RIP);
    __atomic_add_fetch(&stats.bp_exits, 1, __ATOMIC_RELAXED);
    /* a kernel address holds kernel probes only (root 0): no CR3 read */
    struct probe *p = lookup(rip, rip >> 63 ? 0 : current_root());
    if (p && p->armed && p->tgid && !same_process(p, cpu)) {
        /* The root was freed and taken by another process: it runs the original instruction,
         * unprobed, and nothing fires for the process the probe was armed for. */
        __atomic_add_fetch(&stats.other_process, 1, __ATOMIC_RELAXED);
        if (p->own)
            hv_reinject_exception();        /* its own INT3 there: it gets it */
        else
            resume(p, cpu, g);
        return true;
    }
    if (p && p->armed) {
        bool own = p->own;
        cpu_state[cpu].stale = 0;
        fire(p, cpu, g, timed);
        if (own)
            hv_reinject_exception();        /* the guest's INT3 is there too: it gets it */
        else
            resume(p, cpu, g);
        if (timed)
            cost_commit(p, cpu);
        return true;
    }

    /* Our INT3 on a page this process shares with the one a user probe is for (shared
     * library or program text): this address space runs the original instruction, no firing. */
    struct gmem_paging upg;
    struct gmem_xlat ux;
    hv_guest_paging(&upg);
    if (!(rip >> 63) && !gmem_walk(&upg, rip, &ux)) {
        struct shadow *sh = shadow_of(ux.gpa & X86_PAGE_MASK);
        const uint8_t *orig = gmem_map_gpa(ux.gpa & X86_PAGE_MASK);
        if (sh && sh->nsites && sh->page[ux.gpa & ~X86_PAGE_MASK] == OPC_INT3 && orig &&
            orig[ux.gpa & ~X86_PAGE_MASK] != OPC_INT3 && step_over(cpu, sh, false)) {
            __atomic_add_fetch(&stats.other_space, 1, __ATOMIC_RELAXED);
            return true;
        }
    }
    /* No probe here (now): ours from a mapping this CPU had not flushed yet (this exit
     * flushed it: run the guest's byte), or the guest's own INT3. */
    bool own = guest_has_int3(rip);
    if (!own && (cpu_state[cpu].stale_rip != rip || cpu_state[cpu].stale < STALE_MAX)) {
        cpu_state[cpu].stale = cpu_state[cpu].stale_rip == rip ? cpu_state[cpu].stale + 1 : 1;
        cpu_state[cpu].stale_rip = rip;
        __atomic_add_fetch(&stats.stale_bp, 1, __ATOMIC_RELAXED);
        return true;
    }
    __atomic_add_fetch(&stats.foreign_bp, 1, __ATOMIC_RELAXED);
    hv_reinject_exception();
    return true;
}

/* Copy the guest's page into the shadow again (it wrote it) and re-plant the probes; a
 * probe whose instruction changed is decoded again, or disarmed if it no longer decodes.
 * Only bytes that differ are stored: other CPUs run this page meanwhile. */
static void resync(struct shadow *sh)
{
    spin_lock(&lock);
    __atomic_add_fetch(&stats.resyncs, 1, __ATOMIC_RELAXED);
    gmem_read_gpa(sh->gpa, scratch, X86_PAGE_SIZE);
    struct gmem_paging pg;
    probe_kernel_paging(&pg);
    for (uint32_t i = sh->first; i != NO_PROBE; i = PROBE(i)->next) {
        struct probe *p = PROBE(i);
        if (!p->armed)
            continue;
        uint8_t b[X86_MAX_INSN_LEN];
        size_t n = gmem_read_gva(&pg, p->va, b, sizeof b);
        if (n && __builtin_memcmp(b, p->orig, p->len)) {
            unsigned len = x86_insn_len(b, n);
            __atomic_add_fetch(&stats.redecodes, 1, __ATOMIC_RELAXED);
            if (!len) {
                p->armed = 0;
                sh->nsites--;
                narmed--;
                hv_log("hvtrace: probe %u at %lx: the guest rewrote it into undecodable bytes: disarmed\n",
                       p->id, p->va);
                continue;
            }
            __builtin_memcpy(p->orig, b, sizeof b);
            p->len = (uint8_t)len;
            p->emu = (uint8_t)classify(b, len, p->va, &p->target);
        }
        p->own = scratch[p->gpa & ~X86_PAGE_MASK] == OPC_INT3;
        scratch[p->gpa & ~X86_PAGE_MASK] = OPC_INT3;
    }
    for (unsigned i = 0; i < X86_PAGE_SIZE; i++)
        if (sh->page[i] != scratch[i])
            sh->page[i] = scratch[i];
    spin_unlock(&lock);
}

bool probe_mtf(void)
{
    unsigned cpu = hv_cpu_id();
    unsigned n = cpu_state[cpu].nsh;
    if (!n)
        return false;
    cpu_state[cpu].nsh = 0;
    __atomic_add_fetch(&stats.mtf_exits, 1, __ATOMIC_RELAXED);
    hv_guest_hold_interrupts(false);
    for (unsigned i = 0; i < n; i++) {
        struct shadow *sh = cpu_state[cpu].sh[i];
        if (cpu_state[cpu].write[i])
            resync(sh);
        spin_lock(&lock);
        if (sh->nsites)
            hv_ept_view_map(cpu, sh->gpa, sh->page, EPT_EXEC);
        else
            hv_ept_view_unmap(cpu, sh->gpa);
        spin_unlock(&lock);
    }
    return true;
}

/* A read or write of a shadowed page (its view is execute-only): this CPU does it on the
 * original, one instruction long. */
static bool probe_ept(uint64_t gpa, uint64_t qual)
{
    struct shadow *sh = shadow_of(gpa & X86_PAGE_MASK);
    unsigned cpu = hv_cpu_id();
    if (!sh || !(qual & (EPT_QUAL_READ | EPT_QUAL_WRITE)))
        return false;
    if (!sh->nsites) {                     /* disarmed since: this CPU had a stale mapping */
        hv_ept_view_unmap(cpu, sh->gpa);
        return true;
    }
    uint64_t nth = __atomic_add_fetch(qual & EPT_QUAL_WRITE ? &stats.ept_writes : &stats.ept_reads, 1,
                                      __ATOMIC_RELAXED);
    if (nth <= 2)                          /* who touches probed pages: the first few, logged */
        hv_log("hvtrace: cpu %u: %s of probed page %lx at rip %lx\n", cpu,
               qual & EPT_QUAL_WRITE ? "write" : "read", gpa, hv_guest_read(HV_GUEST_RIP));
    return step_over(cpu, sh, qual & EPT_QUAL_WRITE);
}

static bool handle_exception(struct guest_regs *g, unsigned reason) { return probe_bp_exit(g); }

int probe_init(void)
{
    hash = hv_alloc_pages(HV_PAGES(HASH_SLOTS * sizeof(uint32_t)));
    scratch = hv_alloc_pages(1);
    shadows = hv_alloc_pages(HV_PAGES(SHADOW_MAX * sizeof(struct shadow)));
    shadow_hash = hv_alloc_pages(HV_PAGES(SHADOW_HASH * sizeof(uint16_t)));
    if (!hash || !scratch || !shadows || !shadow_hash || probe_stack_init())
        return -1;
    probe_epoch_init(&epoch);
    for (unsigned c = 0; c < hv_cpu_count(); c++)
        if (!(cpu_state[c].fires = hv_alloc_pages(HV_PAGES(FIRE_BUF * sizeof(struct hvt_probe_fire)))))
            return -1;
    bool ok;
    if (hv_exit_register(EXIT_EXCEPTION_NMI, handle_exception, &ok) || !ok)
        return -1;
    /* Every shadowed page is guest RAM: one range for all (the handler finds the page). */
    return hv_ept_fault_register(0, 1ull << 52, probe_ept);
}

static const char *const kind_names[] = { "?", "entry", "return", "addr" };

void probe_counters(uint64_t *fires, uint64_t *exits, uint64_t *ept_exits)
{
    uint64_t samples, lost;
    probe_stack_counters(&samples, &lost);
    *fires = __atomic_load_n(&stats.fires, __ATOMIC_RELAXED) + samples;
    *ept_exits = __atomic_load_n(&stats.ept_reads, __ATOMIC_RELAXED) +
                 __atomic_load_n(&stats.ept_writes, __ATOMIC_RELAXED);
    *exits = __atomic_load_n(&stats.bp_exits, __ATOMIC_RELAXED) +
             __atomic_load_n(&stats.mtf_exits, __ATOMIC_RELAXED) + *ept_exits;
}

void probe_status(struct hvt_probe_status *st)
{
    uint64_t samples, samples_lost;
    probe_stack_counters(&samples, &samples_lost);
    st->armed = probe_armed() + probe_profile_armed();
    probe_counters(&st->fires, &st->exits, &st->ept_exits);   /* samples among the fires */
    st->records = __atomic_load_n(&stats.records, __ATOMIC_RELAXED) + samples;
    st->records_lost = __atomic_load_n(&stats.records_lost, __ATOMIC_RELAXED) + samples_lost;
}

void probe_report_stats(void)
{
    unsigned shown = 0;
    for (unsigned i = 0; i < nshadows; i++)
        shown += shadows[i].nsites != 0;
    hv_log("HVT-PROBESTAT armed=%u sites=%u shadows=%u shown=%u fires=%lu foreign_bp=%lu stale_bp=%lu "
           "step_overs=%lu ept_reads=%lu ept_writes=%lu resyncs=%lu redecodes=%lu bp_exits=%lu mtf_exits=%lu "
           "records=%lu records_lost=%lu pending=%u other_space=%lu other_process=%lu\n",
           narmed, nprobes - first_live, nshadows, shown, stats.fires, stats.foreign_bp, stats.stale_bp,
           stats.step_overs, stats.ept_reads, stats.ept_writes, stats.resyncs, stats.redecodes,
           stats.bp_exits, stats.mtf_exits, stats.records, stats.records_lost, npending,
           stats.other_space, stats.other_process);
}

void probe_report(void)
{
    probe_report_stats();
    for (unsigned i = first_live; i < nprobes; i++) {
        struct probe *p = PROBE(i);
        uint64_t n = p->fires;
        hv_log("HVT-PROBE id=%u kind=%s site=%lx emu=%u fires=%lu other=%lu\n", p->id,
               kind_names[p->kind < 4 ? p->kind : 0], p->va, p->emu, n, p->comm_other);
        for (unsigned k = 0; k < COMM_SLOTS && p->comm[k].n; k++)
            hv_log("HVT-PROBE-COMM id=%u site=%lx comm=%s count=%lu\n", p->id, p->va,
                   p->comm[k].name, p->comm[k].n);
        if (p->cost_fires) {               /* timed by phase (probe_cost_set): ticks per phase */
            static const char *const ph[] = HVT_PH_NAMES;
            char line[320];
            int n = hv_snprintf(line, sizeof line, "HVT-PROBECOST id=%u site=%lx fires=%lu", p->id,
                                p->va, p->cost_fires);
            for (unsigned k = 0; k < HVT_PH_COUNT && n > 0 && (size_t)n < sizeof line; k++)
                n += hv_snprintf(line + n, sizeof line - (size_t)n, " %s=%lu", ph[k], p->cost[k]);
            hv_log("%s\n", line);
        }
    }
}
