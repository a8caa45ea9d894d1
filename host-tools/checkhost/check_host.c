/* check_host.c - see check_host.h. */
#include "check_host.h"
#include "vmx_caps.h"
#include "x86_arch.h"
#include "e1000_models.h"
#include "hvt_bootinfo.h"
#include "acpi_dmar.h"
#include <errno.h>
#include <stdarg.h>
#include <string.h>

enum level { L_OK, L_WARN, L_FAIL, L_UNREAD, L_INFO };
static const char *const level_name[] = { "ok", "warn", "FAIL", "unread", "-" };

#define MAX_TODO 12
struct report {
    FILE *out;
    int count[L_INFO];
    int ntodo;
    char todo[MAX_TODO][320];
};

static void line(struct report *r, enum level l, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void line(struct report *r, enum level l, const char *what, const char *fmt, ...)
{
    if (l != L_INFO)
        r->count[l]++;
    fprintf(r->out, "%-6s %-10s ", level_name[l], what);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->out, fmt, ap);
    va_end(ap);
    fputc('\n', r->out);
}

static void todo(struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void todo(struct report *r, const char *fmt, ...)
{
    if (r->ntodo >= MAX_TODO)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->todo[r->ntodo++], sizeof r->todo[0], fmt, ap);
    va_end(ap);
}

static bool is_intel(const struct host_facts *f) { return !strcmp(f->vendor, "GenuineIntel"); }

static void check_cpu(const struct host_facts *f, struct report *r)
{
    if (!f->cpuinfo_ok) {
        line(r, L_UNREAD, "cpu", "cannot read /proc/cpuinfo");
        todo(r, "run check-host on the machine's own Linux, with /proc mounted");
        return;
    }
    if (!is_intel(f)) {
        line(r, L_FAIL, "cpu", "%s (%s): hvtrace needs an Intel CPU with VT-x", f->vendor, f->model);
        todo(r, "use an Intel machine: hvtrace has no AMD (SVM) backend");
        return;
    }
    line(r, L_OK, "cpu", "%s, %s", f->vendor, f->model);
    if (f->flag_hypervisor) {
        line(r, L_WARN, "nested", "Linux runs under a hypervisor (the hypervisor CPU flag): VT-x here is "
             "that hypervisor's emulation, and hvtrace has never run nested");
    } else
        line(r, L_OK, "nested", "bare metal (no hypervisor CPU flag)");
}

/* IA32_FEATURE_CONTROL (SDM Vol. 3C 24.7 "Enabling and Entering VMX Operation"): the loader
 * sets lock + VMX outside SMX itself when the firmware left the MSR unlocked (boot/vtx.c). */
static bool check_vtx(const struct host_facts *f, struct report *r)
{
    if (f->msr_err) {
        if (f->msr_err == ENOENT) {
            line(r, L_UNREAD, "vt-x", "no /dev/cpu/0/msr: the msr driver is not loaded");
            todo(r, "load the msr driver (sudo modprobe msr) and run again");
        } else if (f->msr_err == EACCES || f->msr_err == EPERM) {
            line(r, L_UNREAD, "vt-x", "/dev/cpu/0/msr: %s", strerror(f->msr_err));
            todo(r, "run as root (sudo hvt check-host): the VMX capabilities are MSRs");
        } else {
            line(r, L_UNREAD, "vt-x", "/dev/cpu/0/msr: %s", strerror(f->msr_err));
            todo(r, "make /dev/cpu/0/msr readable (msr driver, root) and run again");
        }
        return false;
    }
    if (!f->msr_ok[HM_FEATURE_CONTROL]) {
        line(r, L_UNREAD, "vt-x", "IA32_FEATURE_CONTROL (0x3a) could not be read");
        return false;
    }
    uint64_t fc = f->msr[HM_FEATURE_CONTROL];
    if ((fc & FEATURE_CONTROL_LOCK) && !(fc & FEATURE_CONTROL_VMX_OUTSIDE_SMX)) {
        line(r, L_FAIL, "vt-x", "IA32_FEATURE_CONTROL %#llx: VT-x disabled and locked by the firmware",
             (unsigned long long)fc);
        todo(r, "enable Intel Virtualization Technology (VT-x) in the firmware setup");
        return false;
    }
    if (!f->flag_vmx || !f->msr_ok[HM_BASIC]) {
        line(r, L_FAIL, "vt-x", "the CPU reports no VMX (%s)",
             !f->flag_vmx ? "no vmx flag in /proc/cpuinfo" : "IA32_VMX_BASIC unreadable");
        todo(r, f->flag_hypervisor ? "give this virtual machine VT-x (nested virtualization), or run on bare metal"
                                   : "use a CPU with VT-x");
        return false;
    }
    line(r, L_OK, "vt-x", "IA32_FEATURE_CONTROL %#llx: %s", (unsigned long long)fc,
         fc & FEATURE_CONTROL_LOCK ? "VMX on, locked" : "unlocked (the loader turns VMX on)");
    return true;
}

/* The capability MSRs as the hypervisor reads them (vmx_setup.c): the TRUE_ controls where
 * IA32_VMX_BASIC[55] says they exist, PROCBASED_CTLS2 and EPT_VPID_CAP only where they exist. */
static void caps_input(const struct host_facts *f, struct vmx_caps_in *in)
{
    bool t = f->msr[HM_BASIC] & VMX_BASIC_TRUE_CTLS;
    memset(in, 0, sizeof *in);
    in->pinbased = f->msr[t ? HM_TRUE_PINBASED : HM_PINBASED];
    in->procbased = f->msr[t ? HM_TRUE_PROCBASED : HM_PROCBASED];
    in->exit = f->msr[t ? HM_TRUE_EXIT : HM_EXIT];
    in->entry = f->msr[t ? HM_TRUE_ENTRY : HM_ENTRY];
    in->misc = f->msr[HM_MISC];
    if (vmx_caps_has_procbased2(in->procbased) && f->msr_ok[HM_PROCBASED2])
        in->procbased2 = f->msr[HM_PROCBASED2];
    if (vmx_caps_has_ept_vpid_cap(in->procbased2) && f->msr_ok[HM_EPT_VPID_CAP])
        in->ept_vpid_cap = f->msr[HM_EPT_VPID_CAP];
}

static void check_vmx(const struct host_facts *f, struct report *r)
{
    struct vmx_caps_in in;
    struct vmx_caps c;
    caps_input(f, &in);
    vmx_caps_decide(&in, &c);
    if (c.refuse) {
        line(r, L_FAIL, "vmx", "the hypervisor would refuse to start: %s", c.refuse);
        if (f->flag_hypervisor)
            todo(r, "the hypervisor below does not offer it to its guests: run on bare metal, or give this "
                    "guest more of the host's VMX (QEMU's named CPU models leave the wait-for-SIPI state out; "
                    "-cpu host passes what the host's KVM offers)");
        else
            todo(r, "this CPU cannot run hvtrace (%s)", c.refuse);
        return;
    }
    line(r, L_OK, "vmx", "the hypervisor can start: EPT, unrestricted guest, monitor trap flag, "
         "preemption timer (TSC/%u), HLT and wait-for-SIPI states, INVEPT %s",
         1u << c.preempt_shift, c.invept_type == 1 ? "single-context" : "all-context only");
    if (c.vpid)
        line(r, L_OK, "vpid", "VPIDs with INVVPID %s: the guest's TLB survives VM exits",
             c.invvpid_type == 1 ? "single-context" : "all-context");
    else
        line(r, L_WARN, "vpid", "no VPIDs (or no INVVPID): the guest's TLB is flushed at every VM exit, "
             "so single-stepping is slower");
    if (c.exec_only)
        line(r, L_OK, "probes", "execute-only EPT: hidden probes available");
    else {
        line(r, L_WARN, "probes", "no execute-only EPT: probes and D programs are refused; tracing runs");
        todo(r, "expect tracing only: probes need execute-only EPT, which this CPU lacks");
    }
}

/* The loader virtualizes every CPU the firmware reports or none (boot/hv_launch.c). */
static void check_cpus(const struct host_facts *f, struct report *r)
{
    if (!f->ncpus)
        line(r, L_WARN, "cpus", "CPU count unknown (/sys/devices/system/cpu/present unreadable)");
    else if (f->ncpus > HVT_MAX_CPUS) {
        line(r, L_FAIL, "cpus", "%d CPUs: hvtrace supports at most %d, and the loader refuses more", f->ncpus,
             HVT_MAX_CPUS);
        todo(r, "disable CPUs (or SMT) in the firmware setup to bring the count to %d or fewer", HVT_MAX_CPUS);
    } else
        line(r, L_OK, "cpus", "%d CPUs (hvtrace supports up to %d)", f->ncpus, HVT_MAX_CPUS);
}

static void check_firmware(const struct host_facts *f, struct report *r)
{
    char fw[200];
    snprintf(fw, sizeof fw, "%s%s%s%s%s", f->bios_vendor[0] ? f->bios_vendor : "firmware vendor unknown",
             f->bios_version[0] ? " " : "", f->bios_version, f->bios_date[0] ? " " : "", f->bios_date);
    if (!f->efi) {
        line(r, L_FAIL, "firmware", "booted by legacy BIOS/CSM (no /sys/firmware/efi): hvtrace.efi needs UEFI; %s", fw);
        todo(r, "switch the firmware to UEFI boot (CSM off) and boot Linux through UEFI");
        return;
    }
    line(r, L_OK, "firmware", "UEFI, %s", fw);
    if (f->secure_boot == 1) {
        line(r, L_WARN, "secureboot", "on: the firmware starts hvtrace.efi only signed with a key in its db");
        todo(r, "turn Secure Boot off, or sign hvtrace.efi and the kernel copy (docs/install.md, \"Secure Boot\")");
    } else if (f->secure_boot == 0)
        line(r, L_OK, "secureboot", "off");
    else
        line(r, L_WARN, "secureboot", "state unknown (no SecureBoot EFI variable)");
}

/* The DMAR as the hypervisor takes it: the loader passes at most HVT_DMAR_MAX bytes, the
 * hypervisor parses it with dmar_parse (vmm/acpi_dmar.c) and needs one unit at least
 * (vmm/iommu_boot.c); the units' registers it reads at boot are beyond what Linux shows. */
static void check_iommu(const struct host_facts *f, struct report *r)
{
    static struct dmar_info di;
    if (!f->dmar) {
        line(r, L_WARN, "iommu", "no DMAR table (no VT-d, or off in the firmware): device DMA can reach the "
             "hypervisor's memory (docs/security.md)");
        return;
    }
    if (f->dmar_err) {
        line(r, L_UNREAD, "iommu", "/sys/firmware/acpi/tables/DMAR: %s", strerror(f->dmar_err));
        return;
    }
    if (f->dmar_len > HVT_DMAR_MAX) {
        line(r, L_WARN, "iommu", "the DMAR table is %zu%s bytes, more than the loader passes (%d): the hypervisor "
             "runs without the IOMMU, device DMA not confined", f->dmar_len,
             f->dmar_len >= HOST_DMAR_READ_MAX ? "+" : "", HVT_DMAR_MAX);
        return;
    }
    int rc = dmar_parse(f->dmar_buf, f->dmar_len, &di);
    if (rc || !di.nunits) {
        line(r, L_WARN, "iommu", "the hypervisor's DMAR parser refuses the firmware's table (%s): device DMA "
             "not confined", rc ? dmar_strerror(rc) : "no remapping unit");
        return;
    }
    line(r, L_OK, "iommu", "VT-d: DMAR with %u remapping unit%s, %u reserved region%s, %u-bit DMA, accepted by the "
         "hypervisor's parser (it confines device DMA with it); Linux runs %d unit%s now", di.nunits,
         di.nunits == 1 ? "" : "s", di.nrmrrs, di.nrmrrs == 1 ? "" : "s", di.host_addr_width, f->iommu_units,
         f->iommu_units == 1 ? "" : "s");
    if (di.flags & DMAR_FLAG_DMA_CTRL_OPT_IN)
        line(r, L_WARN, "iommu", "the firmware asks for DMA protection kept from boot (DMAR flag "
             "DMA_CTRL_PLATFORM_OPT_IN, Thunderbolt-era machines): never tried with hvtrace");
}

static const char *verified_words(enum e1000_verified v)
{
    return v == E1000_RUN_BOCHS_QEMU ? "run in Bochs and QEMU" :
           v == E1000_RUN_QEMU ? "run in QEMU only" : "never run";
}

/* Which NIC: `nic=auto` takes the first supported id in bus scan order on PCI segment 0
 * (net_config.h); the one to name is the first that Linux does not use for a link and whose
 * family has run, else the first Linux does not use, else the first. */
static void check_nics(const struct host_facts *f, struct report *r)
{
    const struct e1000_model *model[HOST_MAX_NICS] = { 0 };
    int autopick = -1, nsupported = 0;
    for (int i = 0; i < f->nnics; i++) {
        const struct host_nic *n = &f->nics[i];
        bool seg0 = !strncmp(n->addr, "0000:", 5);
        const struct e1000_model *m = e1000_model_of(n->vendor, n->device);
        char linux_side[96] = "no Linux driver";
        if (n->driver[0])
            snprintf(linux_side, sizeof linux_side, "Linux: %s%s%s%s", n->driver, n->netdev[0] ? " " : "",
                     n->netdev, n->netdev[0] ? (n->link_up ? ", link up" : ", link down") : "");
        if (m && seg0) {
            model[i] = m;
            nsupported++;
            if (autopick < 0)
                autopick = i;
            line(r, L_INFO, "nic", "%s %04x:%04x %s: supported (%s family, %s); %s", n->addr, n->vendor,
                 n->device, m->name, m->fam->name, verified_words(m->fam->verified), linux_side);
        } else
            line(r, L_INFO, "nic", "%s %04x:%04x: %s; %s", n->addr, n->vendor, n->device,
                 m ? "supported id, but not on PCI segment 0 (hvtrace scans segment 0 only)"
                   : "not a NIC hvtrace drives", linux_side);
    }
    if (!nsupported) {
        line(r, L_FAIL, "nic", "no NIC hvtrace can drive (%d network function%s found)", f->nnics,
             f->nnics == 1 ? "" : "s");
        todo(r, "add a spare Intel 82574L PCIe card (8086:10d3; docs/hardware.md lists every supported id)");
        return;
    }
    int pick = -1;
    for (int pass = 0; pass < 3 && pick < 0; pass++)
        for (int i = 0; i < f->nnics && pick < 0; i++)
            if (model[i] && (pass == 2 || (!f->nics[i].link_up &&
                                           (pass == 1 || model[i]->fam->verified != E1000_READ_ONLY))))
                pick = i;
    const struct host_nic *p = &f->nics[pick];
    const char *bdf = p->addr + 5;                 /* BB:DD.F, as nic= takes it */
    if (pick == autopick)
        line(r, L_OK, "nic", "hvtrace takes %s (%s) with nic=auto", p->addr, model[pick]->name);
    else {
        line(r, L_WARN, "nic", "nic=auto would take %s (%s), found first; the one to take is %s (%s)",
             f->nics[autopick].addr, model[autopick]->name, p->addr, model[pick]->name);
        todo(r, "write nic=%s (not nic=auto) in hvtrace.cfg's net = line", bdf);
    }
    if (p->link_up) {
        line(r, L_WARN, "nic", "Linux uses %s (%s, link up): the hypervisor hides the NIC it takes, so Linux "
             "loses that interface", p->addr, p->netdev);
        todo(r, "keep another NIC for the machine's own network (%s goes to hvtrace)", p->netdev);
    }
    if (model[pick]->fam->verified == E1000_READ_ONLY) {
        line(r, L_WARN, "nic", "the %s family's driver path has never run (written from datasheets)",
             model[pick]->fam->name);
        todo(r, "prefer an Intel 82574L (8086:10d3) or I210 (8086:1533) card (docs/hardware.md)");
    }
}

int check_host_report(const struct host_facts *f, const char *root, FILE *out)
{
    struct report r = { .out = out };
    fprintf(out, "hvt check-host: %s%s%s%s%s\n", root, f->sys_vendor[0] || f->product[0] ? ": " : "",
            f->sys_vendor, f->sys_vendor[0] && f->product[0] ? " " : "", f->product);
    check_cpu(f, &r);
    if (f->cpuinfo_ok && is_intel(f) && check_vtx(f, &r))
        check_vmx(f, &r);
    check_cpus(f, &r);
    check_firmware(f, &r);
    check_iommu(f, &r);
    check_nics(f, &r);
    int status = r.count[L_FAIL] ? CHECK_HOST_FAIL : r.count[L_UNREAD] ? CHECK_HOST_UNREAD : CHECK_HOST_OK;
    int nw = r.count[L_WARN];
    if (status == CHECK_HOST_FAIL)
        fprintf(out, "verdict: does NOT qualify: %d failed, %d warning%s\n", r.count[L_FAIL], nw, nw == 1 ? "" : "s");
    else if (status == CHECK_HOST_UNREAD)
        fprintf(out, "verdict: could not decide: %d check%s unread, %d warning%s\n", r.count[L_UNREAD],
                r.count[L_UNREAD] == 1 ? "" : "s", nw, nw == 1 ? "" : "s");
    else
        fprintf(out, nw ? "verdict: qualifies, with %d warning%s\n" : "verdict: qualifies\n", nw, nw == 1 ? "" : "s");
    if (status == CHECK_HOST_OK && !nw)
        fprintf(out, "to do: install it (docs/install.md)\n");
    for (int i = 0; i < r.ntodo; i++)
        fprintf(out, "to do: %s\n", r.todo[i]);
    if (status == CHECK_HOST_OK && nw)
        fprintf(out, "to do: then install it (docs/install.md)\n");
    return status;
}

int cmd_check_host(int argc, char **argv)
{
    const char *root = "/";
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--root") && i + 1 < argc)
            root = argv[++i];
        else {
            fprintf(stderr, "usage: hvt check-host [--root DIR]\n"
                            "  can hvtrace run on this machine? Reads /proc/cpuinfo, /dev/cpu/0/msr (as root, msr\n"
                            "  driver loaded), /sys; --root DIR reads a recorded machine instead.\n"
                            "  Exit status: 0 qualifies, 1 does not, 2 could not decide.\n");
            return 2;
        }
    }
    struct host_facts f;
    host_facts_read(root, &f);
    return check_host_report(&f, root, stdout);
}
