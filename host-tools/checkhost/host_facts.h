/*
 * host_facts.h - what `hvt check-host` reads of a Linux machine, from a root directory (the
 * running system's "/", or a recorded machine: a directory tree with the same paths).
 *
 * Read: /proc/cpuinfo (vendor, model name, the vmx and hypervisor flags of the first CPU),
 * /dev/cpu/0/msr (IA32_FEATURE_CONTROL and the VMX capability MSRs, at their addresses, as the
 * msr driver serves them: pread of 8 bytes at offset = MSR address), /sys/devices/system/cpu/
 * present, /sys/firmware/efi (UEFI) and its SecureBoot variable, /sys/class/dmi/id (vendor,
 * product, firmware version), /sys/class/iommu and /sys/firmware/acpi/tables/DMAR,
 * /sys/bus/pci/devices/DEVICE (network-class functions: ids, driver, network interface, link).
 *
 * A recorded machine may hold dev/cpu/0/msr as a regular text file instead of the device:
 * one MSR a line, "ADDRESS VALUE" in hex (0x optional), '#' starts a comment; an address not
 * listed reads as the device answers an MSR the CPU lacks (EIO).
 *
 * Contract: host_facts_read(root, f) fills f and never fails as a whole: every fact has its
 * own "could not read" state (f->msr_err is the errno of the MSR file: ENOENT for a missing
 * msr driver, EACCES/EPERM when not root).
 */
#ifndef HVT_HOST_FACTS_H
#define HVT_HOST_FACTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOST_MAX_NICS 32
#define HOST_DMAR_READ_MAX 65536   /* read this much of the DMAR at most (the loader takes 4 KiB) */

struct host_nic {
    char addr[16];            /* domain:bus:device.function, as sysfs names it */
    uint16_t vendor, device;
    uint32_t class_code;
    char driver[32];          /* the Linux driver bound to it, "" none */
    char netdev[32];          /* its network interface, "" none */
    bool link_up;             /* the interface's operstate is "up" */
};

/* The MSRs read, in the order of host_facts' msr array. */
enum host_msr {
    HM_FEATURE_CONTROL, HM_BASIC, HM_PINBASED, HM_PROCBASED, HM_EXIT, HM_ENTRY, HM_MISC,
    HM_PROCBASED2, HM_EPT_VPID_CAP, HM_TRUE_PINBASED, HM_TRUE_PROCBASED, HM_TRUE_EXIT,
    HM_TRUE_ENTRY, HM_COUNT
};

struct host_facts {
    bool cpuinfo_ok;
    char vendor[16], model[80];
    bool flag_vmx, flag_hypervisor;
    int ncpus;                /* present CPUs; 0: unknown */
    int msr_err;              /* 0: the MSR file opened; else errno */
    uint64_t msr[HM_COUNT];
    bool msr_ok[HM_COUNT];    /* read (false: the CPU lacks it, or not read at all) */
    bool efi;                 /* booted through UEFI */
    int secure_boot;          /* 1 on, 0 off, -1 unknown (no variable) */
    char sys_vendor[64], product[64], bios_vendor[64], bios_version[64], bios_date[32];
    int iommu_units;          /* entries of /sys/class/iommu (units Linux runs) */
    bool dmar;                /* the firmware's ACPI table for VT-d is listed */
    int dmar_err;             /* 0: read (dmar_len bytes, at most HOST_DMAR_READ_MAX), else errno */
    size_t dmar_len;
    uint8_t dmar_buf[HOST_DMAR_READ_MAX];
    int nnics;
    struct host_nic nics[HOST_MAX_NICS];   /* bus scan order */
};

void host_facts_read(const char *root, struct host_facts *f);

#endif
