/*
 * fuzz_hypercall.c - libFuzzer target for the hypercalls as a guest reaches them: a VM exit
 * with reason VMCALL through vmm/'s full dispatch (vmm/vmx_exit.c vmx_exit_dispatch: the
 * magic check, hypercall_allowed's privilege rules with the CPL from SS, VERSION and
 * HV_RANGE, the table vmm/exit_reg.c fills through hv_hypercall_register, the exit observers)
 * into the tracer's registered handlers, with the whole policy layer brought up by its own
 * trace_layer_init (trace/: MARK, every PROBE operation with the probe engine, the D loader and
 * verifier, CMD's mailbox; admin_check reading the current task's euid from guest memory).
 * vmm/vmx_exit.c and vmm/hv_guest.c are compiled into this file with VMREAD/VMWRITE routed
 * to a fake VMCS (a table of fields); trace/, vmm/exit_reg.c and vmm/gmem.c are linked
 * unchanged over tests/fuzz/host_hv/ (hv_api.h, and hv_guest.h generated from vmm/'s with
 * its VMREAD routed the same way); %gs points at the calling CPU's struct vcpu (arch_prctl),
 * as in the hypervisor, where hv_exit_tsc() reads it.
 * The guest: 16 MiB of fake RAM behind gmem's map_gpa, 4-level page tables the harness builds
 * (the kernel's text at 0xffffffff81000000, a direct map at 0xffff888000000000, user pages at
 * 0x400000), a per-CPU area and a current task whose cred says euid 0 or 1000.
 * Not covered (stubbed, successful): EPT edits and views (hv_ept_*: the probe engine's hidden
 * breakpoints are "installed" without a page being changed), dropped-write pages (none), the
 * IOMMU (no DMAR, as in Bochs), the fatal path (vmm/hv_fatal.c: hv_panic aborts), CPU
 * kicks, the MTF fast path's assembly, MSR bitmap edits; the hypercall runs on a CPU whose
 * exits never come back, so a trace that starts records nothing (steps happen at MTF exits,
 * never delivered here).
 * State: the policy is initialised once per process (its tables are static, as in the
 * hypervisor: one boot); each input starts by disarming every probe through the hypercall
 * itself, other state (the mailbox, a loaded D program, counters) carries over.
 * Input: byte 0 = the caller's default: bit 0 user mode (CPL 3), bit 1 root (euid 0), bit 2
 * the transport's link has failed. Then steps, byte op:
 *   op % 4 == 0 hypercall: func byte (bit 7: RAX without the magic; else HVT_HC_MAGIC | func &
 *     7), a mode byte (bits 1:0 CPL: 0 kernel, 3 user, else the input's default; bit 2 CPU 1),
 *     a shape byte, 2 bits per register RBX, RCX, RDX: 0 one byte, 1 two bytes, 2 a guest
 *     address (a base from the next byte: user data, the same data through the direct map,
 *     kernel text, per-CPU area; plus a 16-bit offset), 3 eight raw bytes;
 *   op % 4 == 1 write guest memory: a 21-bit offset into [8 MiB, 10 MiB) (the data pages, the
 *     per-CPU area, the task and its cred), a length byte, the bytes;
 *   op % 4 == 2 a preemption-timer exit (the policy's periodic poll);
 *   op % 4 == 3 paging off / on (gmem walks the identity map when off).
 * Checks besides the sanitizers: a VMCALL either injects #UD (bad magic, or a caller below the
 * function's privilege: then RAX is untouched and RIP does not move) or skips the instruction
 * with a status in RAX (OK, or a known HVT_HC_E*); VERSION answers anyone; a user caller
 * never gets HV_RANGE (outside self-tests) and, while the task chain is the harness's (the
 * input may rewrite it), reaches a root-only function exactly when its euid is 0; no spin
 * lock is held once an exit is over. vmm/'s memory is modelled as the real region: never
 * freed, 64 MiB (hvtrace's default for 2 CPUs), hv_alloc's alignment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <asm/prctl.h>
#include "vmx.h"
/* vmx_exit.c and hv_guest.c below: their VMREAD/VMWRITE act on the fake VMCS. */
static uint64_t fake_vmread(enum vmcs_field f);
static bool fake_vmwrite(enum vmcs_field f, uint64_t v);
#define vmx_read  fake_vmread
#define vmx_write fake_vmwrite
#include "vmx_exit.c"
#include "hv_guest.c"
#undef vmx_read
#undef vmx_write
#include "trace.h"
#include "hv_transport.h"
#include "hv_dma.h"
#include "hvt_bootinfo.h"

/* ---- the fake VMCS ------------------------------------------------------------------------ */
#define VMCS_SLOTS 128
static struct { uint32_t field; uint64_t v; bool used; } vmcs[VMCS_SLOTS];
static uint64_t *vmcs_slot(enum vmcs_field f)
{
    unsigned i = ((uint32_t)f * 2654435761u) % VMCS_SLOTS;
    while (vmcs[i].used && vmcs[i].field != (uint32_t)f)
        i = (i + 1) % VMCS_SLOTS;
    vmcs[i].used = true;
    vmcs[i].field = (uint32_t)f;
    return &vmcs[i].v;
}
static uint64_t fake_vmread(enum vmcs_field f) { return *vmcs_slot(f); }
static bool fake_vmwrite(enum vmcs_field f, uint64_t v) { *vmcs_slot(f) = v; return true; }
uint64_t hvfuzz_vmread(enum vmcs_field f) { return fake_vmread(f); }

/* ---- vmm/'s services ---------------------------------------------------------------------- */
static uint64_t fake_tsc = 1ull << 32;
uint64_t hv_rdtsc(void) { return fake_tsc += 1000; }
static unsigned cur_cpu;
unsigned hv_cpu_id(void) { return cur_cpu; }
unsigned hv_cpu_count(void) { return 2; }
#define GUEST_LSTAR 0xffffffff82000080ull
/* IA32_KERNEL_GS_BASE: the per-CPU area, as Linux leaves it while user code runs (the
 * tracer reads the kernel's base only from there at CPL 3) */
static uint64_t fake_kernel_gs;
uint64_t hv_rdmsr(uint32_t msr)
{
    return msr == MSR_IA32_LSTAR ? GUEST_LSTAR : msr == MSR_IA32_KERNEL_GS_BASE ? fake_kernel_gs : 0;
}
void hv_wrmsr(uint32_t msr, uint64_t v) { abort(); }
void hv_outb(uint16_t port, uint8_t v) { abort(); }
void hv_outw(uint16_t port, uint16_t v) { abort(); }
void hv_outl(uint16_t port, uint32_t v) { abort(); }
uint8_t hv_inb(uint16_t port) { abort(); }
uint16_t hv_inw(uint16_t port) { abort(); }
uint32_t hv_inl(uint16_t port) { abort(); }
/* The hypervisor's region: allocations are never freed (kept on a list, so LeakSanitizer sees
 * them owned, as they are) and run out at REGION_BYTES, the size hvtrace reserves by default
 * for a 2-CPU guest (boot/hv_launch.c AUTO_HV_MEM_MB): then NULL, as hv_alloc's contract says. */
#define REGION_BYTES (64ull << 20)
struct region_block { struct region_block *next; };
static struct region_block *region_blocks;
static uint64_t region_used, region_used_at_init;
static void *region_take(size_t bytes, size_t align)
{
    if (bytes > REGION_BYTES - region_used)
        return NULL;
    size_t head = (sizeof(struct region_block) + align - 1) & ~(align - 1);
    uint8_t *p = calloc(1, head + bytes + align);
    if (!p)
        abort();
    ((struct region_block *)p)->next = region_blocks;
    region_blocks = (struct region_block *)p;
    region_used += bytes;
    uint8_t *q = p + head;
    return q + (-(uintptr_t)q & (align - 1));
}
void *hv_alloc_pages(size_t npages) { return region_take(npages * 4096, 4096); }
/* as vmm/hv_core.c's: 16-byte aligned, a page or more as whole pages */
void *hv_alloc(size_t bytes) { return bytes >= 4096 ? region_take(bytes, 4096) : region_take(bytes ? bytes : 1, 16); }
uint64_t hv_virt_to_phys(const void *va) { return (uint64_t)(uintptr_t)va; }
void *hv_phys_to_virt(uint64_t pa) { return (void *)(uintptr_t)pa; }
void *hv_phys_to_virt_uc(uint64_t pa) { return (void *)(uintptr_t)pa; }
static int locks_held;
void spin_lock(struct spinlock *l)
{
    if (l->v)
        abort();                                /* one CPU at a time here: a held lock is a leak */
    l->v = 1;
    locks_held++;
}
void spin_unlock(struct spinlock *l)
{
    if (!l->v)
        abort();
    l->v = 0;
    locks_held--;
}

/* vmm/ beyond the exit dispatch: not covered (see the header), successful stubs. */
struct hv_globals hv;
static struct vcpu vcpus[2];
struct vcpu *vcpu_get(unsigned index) { return &vcpus[index]; }
bool hv_in_region(uint64_t pa) { return false; }
void hv_ept_refresh(struct vcpu *v) {}
int hv_ept_map_mmio(uint64_t gpa) { return 0; }
int hv_ept_set_exec(uint64_t gpa, bool exec) { return 0; }
int hv_ept_hide(uint64_t gpa, uint64_t size) { return 0; }
int hv_ept_map_page(uint64_t gpa, void *page, uint64_t perms) { return 0; }
int hv_ept_view_map(unsigned cpu, uint64_t gpa, void *page, uint64_t perms) { return 0; }
bool hv_ept_exec_only(void) { return true; }
void hv_ept_view_unmap(unsigned cpu, uint64_t gpa) {}
bool hv_ept_wait_all(uint64_t max_tsc) { return true; }
bool hv_ept_drop_write_fault(uint64_t gpa, uint64_t qualification) { return false; }
bool hv_ept_ecam_write_fault(struct guest_regs *g, uint64_t gpa, uint64_t qualification) { return false; }
enum hv_iommu_state hv_iommu_state(unsigned *units_on, unsigned *units)
{
    *units_on = *units = 0;
    return HV_IOMMU_NO_DMAR;                    /* as in Bochs */
}
void msr_bitmap_mark(uint8_t *bitmap, uint32_t msr, bool read, bool write, bool exits) {}
uint64_t msr_policy_refused(unsigned i, uint32_t *msr, uint64_t *reads, uint64_t *writes) { return 0; }
bool msr_policy_read(unsigned cpu, uint32_t msr, uint64_t *val) { abort(); }
bool msr_policy_write(unsigned cpu, uint32_t msr, uint64_t val) { abort(); }
char msr_read_insn[1], msr_read_fault[1], msr_write_insn[1], msr_write_fault[1];
void vmx_guest_reset_to_init(void) { abort(); }
void vmx_flush_guest_tlb(void) {}               /* INVVPID: no TLB to keep coherent here */
/* the fatal path and machine resets (vmm/hv_fatal.c): a panic aborts here instead */
volatile bool hv_fatal_stopping;
unsigned hv_fatal_selftest;
bool hv_fatal_active(void) { return false; }
enum hv_cpu_stop hv_fatal_cpu_stop(unsigned cpu) { abort(); }
void hv_fatal_at_exit(void) { abort(); }
bool hv_fatal_nmi(void) { abort(); }
void hv_reset_prepare(void) { abort(); }
void hv_machine_reset(void) { abort(); }
void hv_ept_mmio_usage(unsigned *pages, unsigned *tables, unsigned *refused) { *pages = *tables = *refused = 0; }
/* the MTF fast path (trace/step/step_fast.asm): never entered here; its table of pass-1 routines
 * (step_cpu.h: none, generic, one per register, one per register pair) only read */
char step_fast_entry[1], step_fast_entry_check[1], step_fast_entry_flow[1];
const void *const step_fast_handlers[2 + 2 * 32];

/* ---- the transport: accepts (or has failed), checks what it is given ---------------------- */
static bool link_failed;
static unsigned long sent_msgs;
static bool t_active(void) { return true; }
static int t_send(unsigned cpu, uint16_t type, const void *data, size_t len)
{
    if (cpu >= 2 || len > HVT_STREAM_MAX_PAYLOAD || (len && !data))
        abort();
    const volatile uint8_t *p = data;
    for (size_t i = 0; i < len; i += 64)        /* the transport copies it: ASan checks */
        (void)p[i];
    if (len)
        (void)p[len - 1];
    sent_msgs++;
    return link_failed ? HV_TRANSPORT_LINK_FAILED : 0;
}
static bool t_link_failed(void) { return link_failed; }
static void t_set_ctl(hv_transport_ctl_fn fn) {}
static const struct hv_transport transport = { t_active, t_send, t_link_failed, t_set_ctl };

/* ---- the guest's memory ------------------------------------------------------------------- */
#define RAM_SIZE    (16u << 20)
#define PT_BASE     0x100000u             /* page tables */
#define TEXT_GPA    0x200000u             /* kernel text, 4 MiB */
#define DATA_GPA    0x800000u             /* what the input may write: 2 MiB */
#define DATA_SIZE   0x200000u
#define PERCPU_GPA  0x900000u             /* per-CPU area, the task, its cred (inside the data) */
#define TASK_GPA    0x910000u
#define CRED_GPA    0x920000u
#define TEXT_VA     0xffffffff81000000ull
#define DMAP_VA     0xffff888000000000ull
#define USER_VA     0x400000ull
/* the trace line's task= offsets: current-task per-CPU offset, pid, tgid, comm, cred, euid */
#define OFF_CURRENT 0x22040u
#define OFF_CRED    0xa00u
#define OFF_EUID    0x14u
static uint8_t *ram;
static void *map_gpa(uint64_t gpa) { return gpa < RAM_SIZE ? ram + (gpa & ~0xfffull) : NULL; }
static const struct gmem_ops gops = { map_gpa };
static uint64_t next_pt = PT_BASE;

static void put64(uint64_t gpa, uint64_t v) { memcpy(ram + gpa, &v, 8); }
static uint64_t new_pt(void) { uint64_t t = next_pt; next_pt += 4096; return t; }
/* va -> gpa with 2 MiB pages, flags on every level */
static void map2m(uint64_t cr3, uint64_t va, uint64_t gpa, uint64_t flags)
{
    uint64_t t = cr3;
    for (int l = 3; l > 1; l--) {
        uint64_t e = t + ((va >> (12 + 9 * l)) & 511) * 8, cur;
        memcpy(&cur, ram + e, 8);
        if (!cur)
            put64(e, (cur = new_pt() | 7));
        t = cur & 0x000ffffffffff000ull;
    }
    put64(t + ((va >> 21) & 511) * 8, gpa | flags | 0x80 | 0x60);
}

static uint64_t guest_cr3;
static void guest_build(void)
{
    ram = calloc(1, RAM_SIZE);
    gmem_set_ops(&gops);
    guest_cr3 = new_pt();
    for (uint64_t o = 0; o < (4u << 20); o += 2u << 20)
        map2m(guest_cr3, TEXT_VA + o, TEXT_GPA + o, 1);            /* P, kernel, read-only */
    for (uint64_t o = 0; o < RAM_SIZE; o += 2u << 20)
        map2m(guest_cr3, DMAP_VA + o, o, 3);                       /* P|W */
    map2m(guest_cr3, USER_VA, DATA_GPA, 7);                        /* P|W|U */
    for (uint64_t i = 0; i < (4u << 20); i += 2)                   /* "xchg ax,ax": 2 bytes */
        ram[TEXT_GPA + i] = 0x66, ram[TEXT_GPA + i + 1] = 0x90;
}

static void guest_reset_task(bool root)
{
    put64(PERCPU_GPA + OFF_CURRENT, DMAP_VA + TASK_GPA);
    put64(TASK_GPA + OFF_CRED, DMAP_VA + CRED_GPA);
    uint32_t euid = root ? 0 : 1000;
    memcpy(ram + CRED_GPA + OFF_EUID, &euid, 4);
}

static void guest_paging(bool on)
{
    fake_vmwrite(VMCS_GUEST_CR0, on ? (CR0_PG | CR0_PE | CR0_WP) : CR0_PE);
    fake_vmwrite(VMCS_GUEST_CR3, on ? guest_cr3 : 0);
    fake_vmwrite(VMCS_GUEST_CR4, on ? CR4_PAE : 0);
    fake_vmwrite(VMCS_GUEST_EFER, on ? (EFER_LME | EFER_LMA | EFER_NXE) : 0);
}

/* ---- one VM exit ---------------------------------------------------------------------------- */
static struct guest_regs regs_now;
/* %gs points to the current CPU's struct vcpu in the hypervisor (vcpu.h: hv_exit_tsc reads
 * it there); a Linux process may set its own GS base (glibc keeps TLS in FS). */
static void enter_cpu(unsigned cpu)
{
    struct vcpu *v = vcpu_get(cpu);
    v->exit_tsc = hv_rdtsc();
    if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)v) != 0)
        abort();
}

static void exit_as(unsigned reason)
{
    enter_cpu(cur_cpu);
    fake_vmwrite(VMCS_EXIT_REASON, reason);
    fake_vmwrite(VMCS_EXIT_INSTR_LEN, 3);
    fake_vmwrite(VMCS_ENTRY_INTR_INFO, 0);
    fake_vmwrite(VMCS_IDT_VECTORING_INFO, 0);
    fake_vmwrite(VMCS_GUEST_GS_BASE, DMAP_VA + PERCPU_GPA);
    fake_kernel_gs = DMAP_VA + PERCPU_GPA;
    vmx_exit_dispatch(&regs_now, vcpu_get(cur_cpu));
    if (locks_held)
        abort();                                /* a handler returned holding a lock */
}

struct in { const uint8_t *p; size_t n; };
static uint8_t byte(struct in *in) { if (!in->n) return 0; in->n--; return *in->p++; }
static uint64_t bytes(struct in *in, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v |= (uint64_t)byte(in) << (8 * i);
    return v;
}
static uint64_t reg_value(struct in *in, unsigned shape)
{
    static const uint64_t bases[4] = { USER_VA, DMAP_VA + DATA_GPA, TEXT_VA, DMAP_VA + PERCPU_GPA };
    switch (shape & 3) {
    case 0: return byte(in);
    case 1: return bytes(in, 2);
    case 2: { uint64_t b = bases[byte(in) & 3]; return b + bytes(in, 2); }
    default: return bytes(in, 8);
    }
}

/* Who may call func (hv_exit.h, include/hvt_hypercall.h), for the check below: 1 yes, 0 no,
 * -1 either (a root-only function from user mode once the input has rewritten the per-CPU
 * slot, the task's cred pointer, or turned paging off: what task.c reads then is its business,
 * as long as nothing breaks). */
static uint64_t get64(uint64_t gpa) { uint64_t v; memcpy(&v, ram + gpa, 8); return v; }
static int may_call(uint64_t func, unsigned cpl, bool paging)
{
    if (func == HVT_HC_VERSION || cpl == 0)
        return 1;
    if (func == HVT_HC_HV_RANGE || func >= HV_HYPERCALL_MAX)
        return 0;                                /* not a self-test boot */
    if (!exit_reg.hypercall[func])
        return 0;                                /* unregistered: kernel only */
    switch (exit_reg.hc_priv[func]) {
    case HV_HC_ANY:
        return 1;
    case HV_HC_ADMIN: {
        if (!paging || get64(PERCPU_GPA + OFF_CURRENT) != DMAP_VA + TASK_GPA ||
            get64(TASK_GPA + OFF_CRED) != DMAP_VA + CRED_GPA)
            return -1;
        uint32_t euid;
        memcpy(&euid, ram + CRED_GPA + OFF_EUID, 4);
        return euid == 0;
    }
    default:
        return 0;
    }
}

static void hypercall(struct in *in, uint8_t defaults, bool paging)
{
    uint8_t f = byte(in), mode = byte(in), shape = byte(in);
    memset(&regs_now, 0xcc, sizeof regs_now);
    uint64_t rax = f & 0x80 ? bytes(in, 8) : HVT_HC_MAGIC | (f & 7);
    regs_now.r[GPR_RAX] = rax;
    regs_now.r[GPR_RBX] = reg_value(in, shape);
    regs_now.r[GPR_RCX] = reg_value(in, shape >> 2);
    regs_now.r[GPR_RDX] = reg_value(in, shape >> 4);
    unsigned cpl = (mode & 3) == 0 ? 0 : (mode & 3) == 3 ? 3 : (defaults & 1) ? 3 : 0;
    cur_cpu = (mode >> 2) & 1;
    fake_vmwrite(VMCS_GUEST_SS_AR, 0x93 | (uint64_t)cpl << 5);
    fake_vmwrite(VMCS_GUEST_CS_SEL, cpl ? 0x33 : 0x10);
    fake_vmwrite(VMCS_GUEST_RIP, 0x1000);
    exit_as(EXIT_VMCALL);
    uint64_t func = rax & HVT_HC_FUNC_MASK;
    bool ud = (fake_vmread(VMCS_ENTRY_INTR_INFO) & 0xff) == VEC_UD &&
              (fake_vmread(VMCS_ENTRY_INTR_INFO) & VMX_INTR_INFO_VALID);
    bool moved = fake_vmread(VMCS_GUEST_RIP) != 0x1000;
    if ((rax & HVT_HC_MAGIC_MASK) != HVT_HC_MAGIC) {
        if (!ud || moved || regs_now.r[GPR_RAX] != rax)
            abort();                            /* no magic: #UD as on bare metal */
        return;
    }
    int may = may_call(func, cpl, paging);
    if (ud || may == 0) {
        if (may == 1 || !ud || moved || regs_now.r[GPR_RAX] != rax)
            abort();                            /* refused: #UD and nothing else */
        return;
    }
    int64_t st = (int64_t)regs_now.r[GPR_RAX];
    if (hv_host_verbose())
        fprintf(stderr, "fuzz_hypercall: func %lu cpl %u: status %ld\n", (unsigned long)func, cpl, (long)st);
    if (!moved ||
        (st != HVT_HC_OK && st != HVT_HC_ENOSYS && st != HVT_HC_EINVAL && st != HVT_HC_EBUSY))
        abort();
    if (func == HVT_HC_VERSION && (regs_now.r[GPR_RBX] != HVT_VERSION || st != HVT_HC_OK))
        abort();
}

static const char TRACE_LINE[] =
    "task=0x22040:0x9a0:0x9a4:0xbd0:0xa00:0x14,lstar=0xffffffff82000080,"
    "probe=entry:0xffffffff81000100,probe=addr:0xffffffff81000204,"
    "probe=return:0xffffffff81000300-0xffffffff81000340";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool inited;
    if (!inited) {
        guest_build();
        static struct hvt_boot_info bi;
        bi.cpu_count = 2;
        snprintf(bi.trace_config, sizeof bi.trace_config, "%s", TRACE_LINE);
        hv.bi = &bi;
        hv.cpu_count = 2;
        for (unsigned i = 0; i < 2; i++)
            vcpus[i].index = i, vcpus[i].self = &vcpus[i];
        guest_paging(true);
        enter_cpu(0);
        if (trace_layer_init(&bi, &transport) != 0)
            abort();
        for (unsigned f = HVT_HC_MARK; f <= HVT_HC_CMD; f++)
            if (!exit_reg.hypercall[f])
                abort();                        /* the policy did not register its handlers */
        inited = true;
        region_used_at_init = region_used;
        hv_host_start_used = region_used;      /* the budgets' base (hv_budget_host.c) */
        if (hv_host_verbose())
            fprintf(stderr, "fuzz_hypercall: the policy took %lu KiB at init\n",
                    (unsigned long)(region_used >> 10));
    }
    struct in in = { data, size };
    uint8_t defaults = byte(&in);
    link_failed = defaults & 4;
    guest_reset_task(defaults & 2);
    guest_paging(true);
    /* start from no probe armed: PROBE_DISARM from kernel mode */
    memset(&regs_now, 0, sizeof regs_now);
    regs_now.r[GPR_RAX] = HVT_HC_MAGIC | HVT_HC_PROBE;
    regs_now.r[GPR_RBX] = HVT_HC_PROBE_DISARM;
    cur_cpu = 0;
    fake_vmwrite(VMCS_GUEST_SS_AR, 0x93);
    exit_as(EXIT_VMCALL);
    bool paging = true;
    for (int steps = 0; in.n && steps < 64; steps++) {
        uint8_t op = byte(&in);
        switch (op & 3) {
        case 0:
            hypercall(&in, defaults, paging);
            break;
        case 1: {
            uint32_t off = (uint32_t)bytes(&in, 3) % DATA_SIZE, len = byte(&in);
            for (uint32_t i = 0; i < len && off + i < DATA_SIZE; i++)
                ram[DATA_GPA + off + i] = byte(&in);
            break;
        }
        case 2:
            fake_vmwrite(VMCS_GUEST_SS_AR, 0x93);
            exit_as(EXIT_PREEMPTION_TIMER);
            break;
        default:
            paging = !paging;
            guest_paging(paging);
        }
    }
    if (hv_host_verbose())
        fprintf(stderr, "fuzz_hypercall: region %lu KiB used (%lu KiB since init)\n",
                (unsigned long)(region_used >> 10), (unsigned long)((region_used - region_used_at_init) >> 10));
    return 0;
}
