/* host_facts.c - see host_facts.h. */
#include "host_facts.h"
#include "x86_arch.h"
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint32_t msr_address[HM_COUNT] = {
    [HM_FEATURE_CONTROL] = MSR_IA32_FEATURE_CONTROL, [HM_BASIC] = MSR_IA32_VMX_BASIC,
    [HM_PINBASED] = MSR_IA32_VMX_PINBASED_CTLS, [HM_PROCBASED] = MSR_IA32_VMX_PROCBASED_CTLS,
    [HM_EXIT] = MSR_IA32_VMX_EXIT_CTLS, [HM_ENTRY] = MSR_IA32_VMX_ENTRY_CTLS,
    [HM_MISC] = MSR_IA32_VMX_MISC, [HM_PROCBASED2] = MSR_IA32_VMX_PROCBASED_CTLS2,
    [HM_EPT_VPID_CAP] = MSR_IA32_VMX_EPT_VPID_CAP, [HM_TRUE_PINBASED] = MSR_IA32_VMX_TRUE_PINBASED,
    [HM_TRUE_PROCBASED] = MSR_IA32_VMX_TRUE_PROCBASED, [HM_TRUE_EXIT] = MSR_IA32_VMX_TRUE_EXIT,
    [HM_TRUE_ENTRY] = MSR_IA32_VMX_TRUE_ENTRY,
};

static void path_of(char *out, size_t n, const char *root, const char *rel)
{
    size_t rl = strlen(root);
    snprintf(out, n, "%s%s%s", root, rl && root[rl - 1] == '/' ? "" : "/", rel[0] == '/' ? rel + 1 : rel);
}

/* The first line of a small file, trailing white space cut; false if unreadable. */
static bool read_line(const char *root, const char *rel, char *out, size_t n)
{
    char p[1024];
    path_of(p, sizeof p, root, rel);
    FILE *fp = fopen(p, "r");
    if (!fp)
        return false;
    bool ok = fgets(out, (int)n, fp) != NULL;
    fclose(fp);
    if (!ok)
        out[0] = 0;
    for (size_t l = strlen(out); l && isspace((unsigned char)out[l - 1]); )
        out[--l] = 0;
    return ok;
}

static bool exists(const char *root, const char *rel)
{
    char p[1024];
    struct stat st;
    path_of(p, sizeof p, root, rel);
    return lstat(p, &st) == 0;
}

static bool has_word(const char *list, const char *w)
{
    size_t wl = strlen(w);
    for (const char *s = list; (s = strstr(s, w)); s += wl)
        if ((s == list || isspace((unsigned char)s[-1])) && (!s[wl] || isspace((unsigned char)s[wl])))
            return true;
    return false;
}

/* The first processor's block of /proc/cpuinfo. */
static void read_cpuinfo(const char *root, struct host_facts *f)
{
    char p[1024], line[8192];
    path_of(p, sizeof p, root, "proc/cpuinfo");
    FILE *fp = fopen(p, "r");
    if (!fp)
        return;
    f->cpuinfo_ok = true;
    while (fgets(line, sizeof line, fp) && line[0] != '\n') {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        char *v = colon + 1;
        while (*v == ' ')
            v++;
        v[strcspn(v, "\n")] = 0;
        if (!strncmp(line, "vendor_id", 9))
            snprintf(f->vendor, sizeof f->vendor, "%s", v);
        else if (!strncmp(line, "model name", 10))
            snprintf(f->model, sizeof f->model, "%s", v);
        else if (!strncmp(line, "flags", 5)) {
            f->flag_vmx = has_word(v, "vmx");
            f->flag_hypervisor = has_word(v, "hypervisor");
        }
    }
    fclose(fp);
}

/* "0-3,5,7-8" -> 7 */
static int count_cpu_list(const char *s)
{
    int n = 0;
    while (*s) {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            return 0;
        if (*end == '-')
            b = strtol(end + 1, &end, 10);
        if (b < a)
            return 0;
        n += (int)(b - a + 1);
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return 0;
    }
    return n;
}

/* A recorded MSR file: "ADDRESS VALUE" lines. */
static void read_msr_text(FILE *fp, struct host_facts *f)
{
    char line[256];
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "#\n")] = 0;
        char *end;
        unsigned long long a = strtoull(line, &end, 16);
        if (end == line)
            continue;
        char *vs = end;
        unsigned long long v = strtoull(vs, &end, 16);
        if (end == vs)
            continue;
        for (int m = 0; m < HM_COUNT; m++)
            if (msr_address[m] == a) {
                f->msr[m] = v;
                f->msr_ok[m] = true;
            }
    }
}

static void read_msrs(const char *root, struct host_facts *f)
{
    char p[1024];
    path_of(p, sizeof p, root, "dev/cpu/0/msr");
    struct stat st;
    if (stat(p, &st) != 0) {
        f->msr_err = errno;
        return;
    }
    if (S_ISREG(st.st_mode)) {
        FILE *fp = fopen(p, "r");
        if (!fp) {
            f->msr_err = errno;
            return;
        }
        read_msr_text(fp, f);
        fclose(fp);
        return;
    }
    int fd = open(p, O_RDONLY);
    if (fd < 0) {
        f->msr_err = errno;
        return;
    }
    for (int m = 0; m < HM_COUNT; m++)
        f->msr_ok[m] = pread(fd, &f->msr[m], 8, msr_address[m]) == 8;   /* EIO: not on this CPU */
    close(fd);
}

/* The EFI variable: 4 bytes of attributes, then its value (one byte for SecureBoot). */
static int read_secure_boot(const char *root)
{
    char p[1024];
    path_of(p, sizeof p, root, "sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d0-aa0d-00a0c904b78c");
    FILE *fp = fopen(p, "rb");
    if (!fp)
        return -1;
    unsigned char b[5];
    size_t n = fread(b, 1, sizeof b, fp);
    fclose(fp);
    return n == 5 ? b[4] != 0 : -1;
}

/* The firmware's DMAR as Linux shows it (root only), whole, for the hypervisor's parser. */
static void read_dmar(const char *root, struct host_facts *f)
{
    char p[1024];
    path_of(p, sizeof p, root, "sys/firmware/acpi/tables/DMAR");
    FILE *fp = fopen(p, "rb");
    if (!fp) {
        f->dmar_err = errno;
        return;
    }
    f->dmar_len = fread(f->dmar_buf, 1, sizeof f->dmar_buf, fp);
    if (ferror(fp))
        f->dmar_err = EIO;
    fclose(fp);
}

static int count_entries(const char *root, const char *rel)
{
    char p[1024];
    path_of(p, sizeof p, root, rel);
    DIR *d = opendir(p);
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)); )
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void read_nic(const char *root, const char *name, struct host_facts *f)
{
    char rel[512], v[64];
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/class", name);
    if (!read_line(root, rel, v, sizeof v))
        return;
    uint32_t cls = (uint32_t)strtoul(v, NULL, 16);
    if ((cls >> 16) != 0x02 || f->nnics >= HOST_MAX_NICS)     /* network controllers */
        return;
    struct host_nic *n = &f->nics[f->nnics++];
    memset(n, 0, sizeof *n);
    snprintf(n->addr, sizeof n->addr, "%s", name);
    n->class_code = cls;
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/vendor", name);
    if (read_line(root, rel, v, sizeof v))
        n->vendor = (uint16_t)strtoul(v, NULL, 16);
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/device", name);
    if (read_line(root, rel, v, sizeof v))
        n->device = (uint16_t)strtoul(v, NULL, 16);
    char p[1024], link[512];
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/driver", name);
    path_of(p, sizeof p, root, rel);
    ssize_t ll = readlink(p, link, sizeof link - 1);
    if (ll > 0) {
        link[ll] = 0;
        const char *base = strrchr(link, '/');
        snprintf(n->driver, sizeof n->driver, "%s", base ? base + 1 : link);
    }
    snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/net", name);
    path_of(p, sizeof p, root, rel);
    DIR *d = opendir(p);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d)); )
        if (e->d_name[0] != '.') {
            snprintf(n->netdev, sizeof n->netdev, "%s", e->d_name);
            break;
        }
    closedir(d);
    if (n->netdev[0]) {
        snprintf(rel, sizeof rel, "sys/bus/pci/devices/%s/net/%s/operstate", name, n->netdev);
        n->link_up = read_line(root, rel, v, sizeof v) && !strcmp(v, "up");
    }
}

static void read_pci(const char *root, struct host_facts *f)
{
    char p[1024];
    path_of(p, sizeof p, root, "sys/bus/pci/devices");
    struct dirent **list;
    int n = scandir(p, &list, NULL, alphasort);     /* dddd:bb:dd.f: bus scan order */
    for (int i = 0; i < n; i++) {
        if (list[i]->d_name[0] != '.')
            read_nic(root, list[i]->d_name, f);
        free(list[i]);
    }
    if (n >= 0)
        free(list);
}

void host_facts_read(const char *root, struct host_facts *f)
{
    memset(f, 0, sizeof *f);
    read_cpuinfo(root, f);
    char v[64];
    if (read_line(root, "sys/devices/system/cpu/present", v, sizeof v))
        f->ncpus = count_cpu_list(v);
    read_msrs(root, f);
    f->efi = exists(root, "sys/firmware/efi");
    f->secure_boot = f->efi ? read_secure_boot(root) : -1;
    read_line(root, "sys/class/dmi/id/sys_vendor", f->sys_vendor, sizeof f->sys_vendor);
    read_line(root, "sys/class/dmi/id/product_name", f->product, sizeof f->product);
    read_line(root, "sys/class/dmi/id/bios_vendor", f->bios_vendor, sizeof f->bios_vendor);
    read_line(root, "sys/class/dmi/id/bios_version", f->bios_version, sizeof f->bios_version);
    read_line(root, "sys/class/dmi/id/bios_date", f->bios_date, sizeof f->bios_date);
    f->iommu_units = count_entries(root, "sys/class/iommu");
    f->dmar = exists(root, "sys/firmware/acpi/tables/DMAR");
    if (f->dmar)
        read_dmar(root, f);
    read_pci(root, f);
}
