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
#if BX_INSTRUMENTATION
#include "cpu/cpu.h"

static const Bit64u hvt_magic = 0x4856545200000000ull, hvt_mark = 2;
#define HVT_ORACLE_CPUS 64                      // BX_SMP_PROCESSORS is a run-time value
static bool hvt_counting[HVT_ORACLE_CPUS];
static bool hvt_guest_before[HVT_ORACLE_CPUS];   // in VMX non-root when the instruction began
static Bit64u hvt_count[HVT_ORACLE_CPUS];

// Only instructions that began and ended in VMX non-root count: the hypervisor's VMRESUME
// also ends in non-root (it entered the guest) and must not be counted.
void bx_instr_before_execution(unsigned cpu, bxInstruction_c *i)
{
  if (cpu < HVT_ORACLE_CPUS)
    hvt_guest_before[cpu] = BX_CPU(cpu)->in_vmx_guest;
}

void bx_instr_after_execution(unsigned cpu, bxInstruction_c *i)
{
  if (cpu < HVT_ORACLE_CPUS && hvt_counting[cpu] && hvt_guest_before[cpu] && BX_CPU(cpu)->in_vmx_guest)
    hvt_count[cpu]++;
}

void bx_instr_vmexit(unsigned cpu, Bit32u reason, Bit64u qualification)
{
  if (cpu >= HVT_ORACLE_CPUS) return;
  switch (reason & 0xffff) {
  case 10: case 12: case 13: case 14: case 16: case 28: case 30: case 31: case 32: case 51:
  case 55: case 58:
    if (hvt_counting[cpu]) hvt_count[cpu]++;   // emulated by the hypervisor: retired
    return;
  case 18: {                                    // VMCALL: our marks
    Bit64u rax = BX_CPU(cpu)->gen_reg[BX_64BIT_REG_RAX].rrx;
    Bit64u rbx = BX_CPU(cpu)->gen_reg[BX_64BIT_REG_RBX].rrx;
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
