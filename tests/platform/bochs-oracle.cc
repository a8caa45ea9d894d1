// bochs-oracle.cc - hvtrace's test oracle, compiled into our Bochs 3.0 build through its
// instrumentation interface (tests/platform/build-bochs.sh, HVT_BOCHS_ORACLE=1).
//
// It counts, independently of the hypervisor, the guest instructions each CPU retires inside
// a trace window: from the hvtrace start mark (VMCALL, RAX = "HVTR" << 32 | 2, RBX = 1) to the
// stop mark (RBX = 0) on that CPU. A guest instruction retires either normally in VMX non-root
// operation (after_execution while in_vmx_guest) or by a VM exit that the hypervisor completes
// by emulating it (CPUID, VMCALL, HLT, MSR, I/O, CR, XSETBV, INVD, INVLPG exits, and RDTSC and
// RDTSCP: while a CPU is stepped its guest's clock counts instructions, trace/step/time_dilate.c). Faulting
// instructions retire neither way. At each stop mark it prints to stderr:
//   HVT-ORACLE cpu=N insns=COUNT
// Included at the end of Bochs's instrument/stubs/instrument.cc, whose empty versions of
// these three callbacks build-bochs.sh removes.
//
// Scope mode (environment HVT_ORACLE_SCOPE=CUR:TGID, the guest kernel's current_task per-CPU
// offset and task_struct.tgid offset, as hvt syms --layout gives them): the window is one for
// the whole machine, from the start mark on any CPU to the stop mark, and an instruction counts
// on any CPU only if the guest's current task, read from guest memory before it executes,
// belongs to the process that made the start mark (its tgid). At the stop mark it prints
//   HVT-ORACLE-SCOPE cpu=N insns=COUNT      (every CPU)
//   HVT-ORACLE-SCOPE total=COUNT tgid=T
// This is the kernel's own definition of "the process runs here" (current changes inside
// __switch_to), found without any of the hypervisor's code.
#if BX_INSTRUMENTATION
#include "cpu/cpu.h"
#include "memory/memory-bochs.h"

static const Bit64u hvt_magic = 0x4856545200000000ull, hvt_mark = 2;
#define HVT_ORACLE_CPUS 64                      // BX_SMP_PROCESSORS is a run-time value
static bool hvt_counting[HVT_ORACLE_CPUS];
static bool hvt_guest_before[HVT_ORACLE_CPUS];   // in VMX non-root when the instruction began
static Bit64u hvt_count[HVT_ORACLE_CPUS];

// Only instructions that began and ended in VMX non-root count: the hypervisor's VMRESUME
// also ends in non-root (it entered the guest) and must not be counted.
// --- scope mode ---
static int hvt_scope = -1;                      // -1: not read yet; 0: off; 1: on
static Bit64u hvt_cur_off, hvt_tgid_off;
static bool hvt_scope_open;                     // the machine-wide window
static Bit32u hvt_scope_tgid;
static bx_phy_address hvt_slot[HVT_ORACLE_CPUS]; // the per-CPU current_task slot (0: not found)
static Bit64u hvt_task[HVT_ORACLE_CPUS];        // the task seen last, and whether it is wanted
static bool hvt_task_in[HVT_ORACLE_CPUS];
static bool hvt_in_before[HVT_ORACLE_CPUS];     // in scope when the instruction began
// An INT3 that exited (a hidden probe of the hypervisor's, or the guest's own): its
// instruction retired if the guest's next instruction begins elsewhere - the hypervisor
// emulated the displaced one, or delivered the guest's own #BP - and did not if it begins at
// the same place (the original runs there, stepped over, and counts itself).
static bool hvt_bp_pending[HVT_ORACLE_CPUS], hvt_bp_in[HVT_ORACLE_CPUS];
static Bit64u hvt_bp_rip[HVT_ORACLE_CPUS], hvt_rip[HVT_ORACLE_CPUS];
static const Bit64u hvt_kernel_half = BX_CONST64(0xffff800000000000);
// Rates: between two HVT_HC_VERSION hypercalls with RBX = "ORCL" 1 / 0 (a reference window the
// workload opens untraced) and in the scope window, every instruction each CPU executes (the
// hypervisor's included) and those that began in the guest. A CPU's own instruction count is
// its clock here: Bochs runs its CPUs round-robin, one trace each, and advances the shared
// TSC by their average, so one CPU's long traces slow another's TSC rate.
static bool hvt_rate_open;
static Bit64u hvt_rate_all[HVT_ORACLE_CPUS], hvt_rate_guest[HVT_ORACLE_CPUS];
static const Bit64u hvt_ref_mark = BX_CONST64(0x4f52434c00); // "ORCL" << 8 | 1 or 0

static void hvt_rate_begin(void)
{
  for (unsigned c = 0; c < HVT_ORACLE_CPUS; c++)
    hvt_rate_all[c] = hvt_rate_guest[c] = 0;
  hvt_rate_open = true;
}

static void hvt_rate_end(const char *window)
{
  hvt_rate_open = false;
  for (unsigned c = 0; c < (unsigned)BX_SMP_PROCESSORS && c < HVT_ORACLE_CPUS; c++)
    fprintf(stderr, "HVT-ORACLE-RATE window=%s cpu=%u all=" FMT_LL "u guest=" FMT_LL "u\n",
            window, c, hvt_rate_all[c], hvt_rate_guest[c]);
  fflush(stderr);
}

static bool hvt_scope_on(void)
{
  if (hvt_scope < 0) {
    const char *e = getenv("HVT_ORACLE_SCOPE");
    char *end = 0;
    hvt_scope = 0;
    if (e && *e) {
      hvt_cur_off = strtoull(e, &end, 0);
      if (end && *end == ':') {
        hvt_tgid_off = strtoull(end + 1, 0, 0);
        hvt_scope = 1;
      }
    }
  }
  return hvt_scope == 1;
}

// Guest-virtual to host-physical under the kernel's page-table root (a PTI pair's kernel half:
// bit 12 clear) through the guest's 4-level tables and the hypervisor's EPT.
static bool hvt_xlate(BX_CPU_C *c, Bit64u va, bx_phy_address *pa)
{
  bx_phy_address t = c->cr3 & BX_CONST64(0x000fffffffffe000);
  for (int level = 3; level >= 0; level--) {
    bx_phy_address e = t + ((va >> (12 + 9 * level)) & 0x1ff) * 8;
    if (c->in_vmx_guest && c->vmcs.vmexec_ctrls2.EPT_ENABLE() &&
        !c->dbg_translate_guest_physical_ept(e, &e))
      return false;
    Bit64u pte;
    BX_MEM(0)->readPhysicalPage(c, e, 8, &pte);
    if (!(pte & 1))
      return false;
    Bit64u frame = pte & BX_CONST64(0x000ffffffffff000);
    if (level && (pte & 0x80)) {                // a 1 GB or 2 MB page
      Bit64u size = BX_CONST64(1) << (12 + 9 * level);
      *pa = (frame & ~(size - 1)) + (va & (size - 1));
      break;
    }
    if (!level)
      *pa = frame + (va & 0xfff);
    t = frame;
  }
  if (c->in_vmx_guest && c->vmcs.vmexec_ctrls2.EPT_ENABLE())
    return c->dbg_translate_guest_physical_ept(*pa, pa);
  return true;
}

static Bit64u hvt_read64(BX_CPU_C *c, bx_phy_address pa)
{
  Bit64u v = 0;
  BX_MEM(0)->readPhysicalPage(c, pa, 8, &v);
  return v;
}

// This CPU's current task (0: its per-CPU data not found yet). The per-CPU base is the GS
// base in kernel mode once it holds a kernel address, KERNEL_GS_BASE in user mode.
static Bit64u hvt_current(unsigned cpu)
{
  BX_CPU_C *c = BX_CPU(cpu);
  if (!hvt_slot[cpu]) {
    unsigned cpl = c->sregs[BX_SEG_REG_CS].selector.rpl;
    Bit64u base = cpl == 3 ? c->msr.kernelgsbase : c->sregs[BX_SEG_REG_GS].cache.u.segment.base;
    bx_phy_address pa;
    if (base < hvt_kernel_half || !hvt_xlate(c, base + hvt_cur_off, &pa))
      return 0;
    hvt_slot[cpu] = pa;
  }
  Bit64u task = hvt_read64(c, hvt_slot[cpu]);
  return task >= hvt_kernel_half ? task : 0;
}

static Bit32u hvt_tgid_of(unsigned cpu, Bit64u task, bool *ok)
{
  bx_phy_address pa;
  *ok = task && hvt_xlate(BX_CPU(cpu), task + hvt_tgid_off, &pa);
  return *ok ? (Bit32u)hvt_read64(BX_CPU(cpu), pa) : 0;
}

static bool hvt_in_scope(unsigned cpu)
{
  Bit64u task = hvt_current(cpu);
  if (task != hvt_task[cpu]) {
    bool ok;
    Bit32u tgid = hvt_tgid_of(cpu, task, &ok);
    hvt_task[cpu] = task;
    hvt_task_in[cpu] = ok && tgid == hvt_scope_tgid;
  }
  return task && hvt_task_in[cpu];
}

// Only instructions that began and ended in VMX non-root count: the hypervisor's VMRESUME
// also ends in non-root (it entered the guest) and must not be counted.
void bx_instr_before_execution(unsigned cpu, bxInstruction_c *i)
{
  if (cpu >= HVT_ORACLE_CPUS)
    return;
  hvt_guest_before[cpu] = BX_CPU(cpu)->in_vmx_guest;
  if (hvt_scope_on()) {
    if (hvt_guest_before[cpu]) {
      hvt_rip[cpu] = BX_CPU(cpu)->get_instruction_pointer();
      if (hvt_bp_pending[cpu]) {
        hvt_bp_pending[cpu] = false;
        if (hvt_bp_in[cpu] && hvt_scope_open && hvt_rip[cpu] != hvt_bp_rip[cpu])
          hvt_count[cpu]++;
      }
    }
    hvt_in_before[cpu] = hvt_scope_open && hvt_guest_before[cpu] && hvt_in_scope(cpu);
    if (hvt_rate_open) {
      hvt_rate_all[cpu]++;                      // every instruction this CPU runs, root or not
      hvt_rate_guest[cpu] += hvt_guest_before[cpu];
    }
  }
}

void bx_instr_after_execution(unsigned cpu, bxInstruction_c *i)
{
  if (cpu >= HVT_ORACLE_CPUS || !hvt_guest_before[cpu] || !BX_CPU(cpu)->in_vmx_guest)
    return;
  if (hvt_scope == 1 ? hvt_in_before[cpu] : hvt_counting[cpu])
    hvt_count[cpu]++;
}

static void hvt_scope_mark(unsigned cpu, Bit64u rbx)
{
  if (hvt_in_before[cpu])
    hvt_count[cpu]++;                           // the VMCALL retires (the stop mark counts)
  if (rbx == 1 && !hvt_scope_open) {
    bool ok;
    hvt_slot[cpu] = 0;
    hvt_scope_tgid = hvt_tgid_of(cpu, hvt_current(cpu), &ok);
    if (!ok) {
      fprintf(stderr, "HVT-ORACLE-SCOPE: the start mark's process is not readable\n");
      return;
    }
    for (unsigned c = 0; c < HVT_ORACLE_CPUS; c++) {
      hvt_count[c] = 0;
      hvt_task[c] = 0;                          // re-read: the target changed
      hvt_in_before[c] = false;
      if (c != cpu)
        hvt_slot[c] = 0;                        // found afresh: early boot moves per-CPU data
    }
    hvt_scope_open = true;                      // the start mark itself is outside the window
    hvt_rate_begin();
  } else if (rbx == 0 && hvt_scope_open) {
    Bit64u total = 0;
    hvt_scope_open = false;
    hvt_rate_end("scope");
    for (unsigned c = 0; c < (unsigned)BX_SMP_PROCESSORS && c < HVT_ORACLE_CPUS; c++) {
      fprintf(stderr, "HVT-ORACLE-SCOPE cpu=%u insns=" FMT_LL "u\n", c, hvt_count[c]);
      total += hvt_count[c];
    }
    fprintf(stderr, "HVT-ORACLE-SCOPE total=" FMT_LL "u tgid=%u\n", total, hvt_scope_tgid);
    fflush(stderr);
  }
}

void bx_instr_vmexit(unsigned cpu, Bit32u reason, Bit64u qualification)
{
  if (cpu >= HVT_ORACLE_CPUS) return;
  if ((reason & 0xffff) == 0 && hvt_scope == 1 &&
      (BX_CPU(cpu)->VMread32(VMCS_32BIT_VMEXIT_INTERRUPTION_INFO) & 0x7ff) == (3 | 6 << 8)) {
    hvt_bp_pending[cpu] = true;                 // INT3 (type 6: software exception, vector 3)
    hvt_bp_in[cpu] = hvt_in_before[cpu];
    hvt_bp_rip[cpu] = hvt_rip[cpu];
    return;
  }
  switch (reason & 0xffff) {
  case 10: case 12: case 13: case 14: case 16: case 28: case 30: case 31: case 32: case 51:
  case 55: case 58:
    if (hvt_scope == 1 ? hvt_in_before[cpu] : hvt_counting[cpu])
      hvt_count[cpu]++;                         // emulated by the hypervisor: retired
    return;
  case 18: {                                    // VMCALL: our marks
    Bit64u rax = BX_CPU(cpu)->gen_reg[BX_64BIT_REG_RAX].rrx;
    Bit64u rbx = BX_CPU(cpu)->gen_reg[BX_64BIT_REG_RBX].rrx;
    if (hvt_scope == 1) {
      if (rax == hvt_magic && (rbx == (hvt_ref_mark | 1)) && !hvt_rate_open)
        hvt_rate_begin();
      else if (rax == hvt_magic && rbx == hvt_ref_mark && hvt_rate_open && !hvt_scope_open)
        hvt_rate_end("ref");
      if (rax == (hvt_magic | hvt_mark))
        hvt_scope_mark(cpu, rbx);
      else if (hvt_in_before[cpu])
        hvt_count[cpu]++;
      return;
    }
    if (hvt_counting[cpu]) hvt_count[cpu]++;
    if (rax != (hvt_magic | hvt_mark)) return;
    if (rbx == 1 && !hvt_counting[cpu]) {
      hvt_counting[cpu] = true;                 // the start mark itself is outside the window
      hvt_count[cpu] = 0;
    } else if (rbx == 0 && hvt_counting[cpu]) {
      hvt_counting[cpu] = false;
      fprintf(stderr, "HVT-ORACLE cpu=%u insns=" FMT_LL "u\n", cpu, hvt_count[cpu]);
      fflush(stderr);
    }
    return;
  }
  }
}

void bx_instr_exit_env(void) {}
#endif
