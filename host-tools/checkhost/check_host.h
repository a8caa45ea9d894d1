/*
 * check_host.h - `hvt check-host`: can hvtrace run on this Linux machine (before installing
 * it), in the manner of libvirt's virt-host-validate or kvm-ok.
 *
 * Judged from host_facts (host_facts.h), with the hypervisor's own rules: the VMX capability
 * MSRs go through vmx_caps_decide (vmm/vmx_caps.h), the DMAR through dmar_parse
 * (vmm/acpi_dmar.h) and the loader's HVT_DMAR_MAX, the NICs through net/e1000_models.c's id
 * table, the CPU count against HVT_MAX_CPUS. One line per check ("ok", "warn", "FAIL",
 * "unread" when the fact could not be read; "-" lines list NICs), then one verdict line and
 * what to do.
 *
 * Contract: check_host_report(f, root, out) prints the report and returns the exit status:
 * 0 the machine qualifies (possibly with warnings), 1 it does not (a FAIL), 2 could not decide
 * (something needed unreadable, e.g. the msr driver not loaded or not root) and nothing FAILed.
 */
#ifndef HVT_CHECK_HOST_H
#define HVT_CHECK_HOST_H
#include <stdio.h>
#include "host_facts.h"

enum { CHECK_HOST_OK = 0, CHECK_HOST_FAIL = 1, CHECK_HOST_UNREAD = 2 };

int check_host_report(const struct host_facts *f, const char *root, FILE *out);
int cmd_check_host(int argc, char **argv);    /* hvt check-host [--root DIR] */

#endif
