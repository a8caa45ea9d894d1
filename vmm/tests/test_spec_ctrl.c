/* test_spec_ctrl.c - the speculation and PMU decision table (vmm/spec_ctrl.c) on the host,
 * against the capability values of real CPUs, and invariants over random capability sets.
 *
 * The CPUs' values: CPUID.(EAX=7,ECX=0) EBX/EDX and IA32_ARCH_CAPABILITIES as the parts
 * enumerate them per Intel's "Affected Processors: Transient Execution Attacks & Related
 * Security Issues by CPU" table and the enumeration bits of "Speculative Execution Side
 * Channel Mitigations" (composed from those documents for the family/model named, with the
 * feature bits unrelated to speculation left as typical; not read on a machine here); Bochs's
 * from its source, bochs 3.0 cpu/cpudb/intel/corei7_skylake-x.cc (leaf 7 EDX = 0, leaf 0AH
 * EAX = 0x07300404, the VMX "load IA32_PERF_GLOBAL_CTRL" controls offered). */
#include <stdio.h>
#include <stdlib.h>
#include "x86_arch.h"
#include "spec_ctrl.h"
#include "check.h"


struct cpu_row {
    const char *name;
    struct spec_caps caps;
    struct spec_plan want;
};

#define SKL_EDX 0x9c002400u   /* MD_CLEAR, TSX_FORCE_ABORT, IBRS_IBPB, STIBP, L1D_FLUSH, SSBD */
#define SRV_EDX 0xbc040410u   /* + ARCH_CAPABILITIES (and FSRM, PCONFIG) */
#define SPR_EDX 0xbf440410u   /* + AMX */
#define EBX_RTM 0x029c6fbfu   /* Skylake's leaf 7 EBX: RTM (bit 11) among others */

static const struct cpu_row rows[] = {
    { "Skylake client 06_5E, 2019 microcode (no ARCH_CAPABILITIES)",
      { EBX_RTM, SKL_EDX, 0, 4, true },
      { .switch_spec_ctrl = true, .spec_ctrl_write_always = true, .host_spec_ctrl = SPEC_CTRL_IBRS,
        .rsb = SPEC_RSB_FULL, .l1d_flush = true, .verw = false, .pmu_switch = true } },
    { "Cascade Lake 06_55 s7, launch microcode: RDCL_NO|IBRS_ALL|SKIP_L1DFL|MDS_NO (0x2b)",
      { EBX_RTM, SRV_EDX, 0x2b, 4, true },
      { .switch_spec_ctrl = true, .host_spec_ctrl = SPEC_CTRL_IBRS, .rsb = SPEC_RSB_LITE,
        .verw = true /* TAA: TSX on, TAA_NO clear */, .pmu_switch = true,
        .mds_unmitigated = true /* MMIO stale data, no FB_CLEAR yet */ } },
    { "Cascade Lake 06_55 s7, 2022 microcode: + TSX_CTRL, FB_CLEAR (0x200ab)",
      { EBX_RTM, SRV_EDX, 0x200ab, 4, true },
      { .switch_spec_ctrl = true, .host_spec_ctrl = SPEC_CTRL_IBRS, .rsb = SPEC_RSB_LITE,
        .verw = true, .pmu_switch = true } },
    { "Ice Lake server 06_6A: RDCL_NO|IBRS_ALL|SKIP_L1DFL|MDS_NO|IF_PSCHANGE_MC_NO|TAA_NO|FB_CLEAR (0x2016b)",
      { EBX_RTM, SRV_EDX, 0x2016b, 5, true },
      { .switch_spec_ctrl = true, .host_spec_ctrl = SPEC_CTRL_IBRS, .rsb = SPEC_RSB_LITE,
        .verw = true /* MMIO stale data: VERW clears the fill buffers (FB_CLEAR) */, .pmu_switch = true } },
    { "Sapphire Rapids 06_8F: + SBDR_SSDP_NO|FBSDP_NO|PSDP_NO|PBRSB_NO|GDS_NO|RFDS_NO (0xd00e16b)",
      { EBX_RTM, SPR_EDX, 0xd00e16b, 5, true },
      { .switch_spec_ctrl = true, .host_spec_ctrl = SPEC_CTRL_IBRS, .rsb = SPEC_RSB_NONE,
        .pmu_switch = true } },
    { "Bochs 3.0 corei7_skylake_x (leaf 7 EDX 0, PMU v4 claimed, not implemented)",
      { 0, 0, 0, 4, true },
      { .spectre_v2_unmitigated = true } },
    { "a CPU without the VM-exit control: the PMU is not switched",
      { EBX_RTM, SPR_EDX, 0xd00e16b, 5, false },
      { .switch_spec_ctrl = true, .host_spec_ctrl = SPEC_CTRL_IBRS, .rsb = SPEC_RSB_NONE } },
    { "Skylake client with ARCH_CAPABILITIES bits but CPUID bit 29 clear: the MSR is not read",
      { EBX_RTM, SKL_EDX, 0xd00e16b, 4, true },
      { .switch_spec_ctrl = true, .spec_ctrl_write_always = true, .host_spec_ctrl = SPEC_CTRL_IBRS,
        .rsb = SPEC_RSB_FULL, .l1d_flush = true, .pmu_switch = true } },
    { "L1TF-affected, no IA32_FLUSH_CMD (2018 microcode before L1D_FLUSH): VERW, L1TF reported",
      { EBX_RTM, SKL_EDX & ~CPUID_7_EDX_L1D_FLUSH, 0, 4, true },
      { .switch_spec_ctrl = true, .spec_ctrl_write_always = true, .host_spec_ctrl = SPEC_CTRL_IBRS,
        .rsb = SPEC_RSB_FULL, .verw = true, .pmu_switch = true, .l1tf_unmitigated = true } },
    { "MDS-affected, no MD_CLEAR, no L1D_FLUSH: both reported",
      { EBX_RTM, CPUID_7_EDX_IBRS_IBPB | CPUID_7_EDX_STIBP, 0, 4, true },
      { .switch_spec_ctrl = true, .spec_ctrl_write_always = true, .host_spec_ctrl = SPEC_CTRL_IBRS,
        .rsb = SPEC_RSB_FULL, .pmu_switch = true, .l1tf_unmitigated = true, .mds_unmitigated = true } },
};

static int plan_eq(const struct spec_plan *a, const struct spec_plan *b)
{
    return a->switch_spec_ctrl == b->switch_spec_ctrl && a->spec_ctrl_write_always == b->spec_ctrl_write_always &&
           a->host_spec_ctrl == b->host_spec_ctrl && a->rsb == b->rsb && a->l1d_flush == b->l1d_flush &&
           a->verw == b->verw && a->pmu_switch == b->pmu_switch && a->l1tf_unmitigated == b->l1tf_unmitigated &&
           a->mds_unmitigated == b->mds_unmitigated && a->spectre_v2_unmitigated == b->spectre_v2_unmitigated;
}

static void print_plan(const char *what, const struct spec_plan *p)
{
    printf("  %s: switch %d always %d host %llx rsb %d l1d %d verw %d pmu %d | unmitigated l1tf %d mds %d v2 %d\n",
           what, p->switch_spec_ctrl, p->spec_ctrl_write_always, (unsigned long long)p->host_spec_ctrl, p->rsb,
           p->l1d_flush, p->verw, p->pmu_switch, p->l1tf_unmitigated, p->mds_unmitigated, p->spectre_v2_unmitigated);
}

int main(void)
{
    for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct spec_plan got;
        spec_ctrl_decide(&rows[i].caps, &got);
        int ok = plan_eq(&got, &rows[i].want);
        CHECK(ok, "%s", rows[i].name);
        if (!ok) {
            print_plan("want", &rows[i].want);
            print_plan("got ", &got);
        }
    }
    /* Bochs must behave exactly as before: no work at any exit or entry. */
    struct spec_plan bochs;
    spec_ctrl_decide(&rows[5].caps, &bochs);
    CHECK(!spec_ctrl_per_exit(&bochs), "Bochs: no per-exit work");
    struct spec_plan skl;
    spec_ctrl_decide(&rows[0].caps, &skl);
    CHECK(spec_ctrl_per_exit(&skl), "Skylake: per-exit work");

    /* Invariants over random capability sets: the plan never uses what the CPU lacks. */
    srand(1);
    unsigned bad = 0;
    for (unsigned n = 0; n < 200000; n++) {
        struct spec_caps c;
        c.cpuid7_ebx = (uint32_t)rand() ^ ((uint32_t)rand() << 16);
        c.cpuid7_edx = (uint32_t)rand() ^ ((uint32_t)rand() << 16);
        c.arch_caps = (uint64_t)rand() ^ ((uint64_t)rand() << 31) ^ ((uint64_t)rand() << 62);
        c.pmu_version = (uint32_t)rand() % 6;
        c.exit_load_perf_global = rand() & 1;
        struct spec_plan p;
        spec_ctrl_decide(&c, &p);
        bool spec_if = c.cpuid7_edx & (CPUID_7_EDX_IBRS_IBPB | CPUID_7_EDX_STIBP | CPUID_7_EDX_ARCH_CAPS | CPUID_7_EDX_SSBD);
        bad += (p.switch_spec_ctrl || p.host_spec_ctrl) && !(c.cpuid7_edx & CPUID_7_EDX_IBRS_IBPB);
        bad += p.l1d_flush && !(c.cpuid7_edx & CPUID_7_EDX_L1D_FLUSH);
        bad += p.verw && !(c.cpuid7_edx & CPUID_7_EDX_MD_CLEAR) &&
               !((c.cpuid7_edx & CPUID_7_EDX_ARCH_CAPS) && (c.arch_caps & (ARCH_CAP_FB_CLEAR | ARCH_CAP_RFDS_CLEAR)));
        bad += p.verw && p.l1d_flush && (c.cpuid7_edx & CPUID_7_EDX_MD_CLEAR);   /* the flush covers it */
        bad += p.pmu_switch && (!c.exit_load_perf_global || c.pmu_version < 2);
        bad += !spec_if && spec_ctrl_per_exit(&p);
        bad += p.host_spec_ctrl & ~SPEC_CTRL_IBRS ? 1 : 0;
        /* with bit 29 clear the MSR's value must not matter */
        if (!(c.cpuid7_edx & CPUID_7_EDX_ARCH_CAPS)) {
            struct spec_caps z = c;
            struct spec_plan q;
            z.arch_caps = 0;
            spec_ctrl_decide(&z, &q);
            bad += !plan_eq(&p, &q);
        }
        /* a CPU that says it is not affected gets nothing for it */
        if ((c.cpuid7_edx & CPUID_7_EDX_ARCH_CAPS) && (c.arch_caps & ARCH_CAP_RDCL_NO))
            bad += p.l1d_flush || p.l1tf_unmitigated;
    }
    CHECK(bad == 0, "invariants over 200000 random capability sets: %u violations", bad);
    return check_summary("test_spec_ctrl");
}
