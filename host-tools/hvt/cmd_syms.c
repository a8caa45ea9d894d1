/* cmd_syms: hvt syms - the kernel image's symbols (/proc/kallsyms format), address <-> name,
 * return-address checks, BTF structure layouts, the raw BTF blob, the kinfo cache (hvt_cmd.h). */
#include "hvt_cmd.h"
#include "kimg.h"
#include "x86_len.h"
#include "kinfo.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage_syms(void)
{
    fprintf(stderr,
            "usage: hvt syms [--slide N | --lstar ADDR] [--no-cache] VMLINUZ [GLOB]\n"
            "       hvt syms [...] VMLINUZ --addr ADDR      address -> sym+off\n"
            "       hvt syms [...] VMLINUZ --name SYM[+OFF] symbol -> address\n"
            "       hvt syms VMLINUZ --call-before SYM+OFF  is SYM+OFF a return address (after a call)?\n"
            "       hvt syms VMLINUZ --struct NAME          field offsets from BTF\n"
            "       hvt syms VMLINUZ --layout               what the tracer reads from tasks\n"
            "       hvt syms VMLINUZ --btf-out FILE         write the raw BTF blob\n"
            "       hvt syms VMLINUZ --info                 build id, counts, cache\n"
            "Addresses are link-time unless a slide (or LSTAR, the runtime entry_SYSCALL_64) is given.\n");
    return HVT_EXIT_USAGE;
}

static void print_member(const btf_member *m, void *ctx)
{
    const btf_info *b = ctx;
    char t[160];
    btf_type_str(b, m->type_id, t, sizeof t);
    if (m->bit_size)
        printf("%6llu:%-2llu %6s  %-32s %s (bitfield %u)\n", (unsigned long long)(m->bit_offset / 8),
               (unsigned long long)(m->bit_offset % 8), "", m->name, t, m->bit_size);
    else
        printf("%6llu    %6llu  %-32s %s\n", (unsigned long long)(m->bit_offset / 8), (unsigned long long)m->size,
               m->name, t);
}

/* --call-before SYM+OFF: is the instruction that ends at SYM+OFF a call (so SYM+OFF is a
 * return address)? The function is decoded from its start, as the image has it. Prints the
 * call and its direct target; 0 a call, 1 not (or not decodable). */
static int call_before(const kinfo *ki, const char *vmlinuz, const char *at)
{
    char nm[512];
    snprintf(nm, sizeof nm, "%s", at);
    char *plus = strchr(nm, '+');
    uint64_t off = 0;
    if (!plus || hvt_parse_u64(plus + 1, &off) || !off)
        return usage_syms();
    *plus = 0;
    int64_t s = ksym_find(&ki->syms, nm);
    kimg k;
    if (s < 0 || kimg_load(&k, vmlinuz) != 0) {
        fprintf(stderr, "hvt: %s: no symbol %s\n", vmlinuz, nm);
        return HVT_EXIT_BAD;
    }
    uint64_t fn = ki->syms.syms[s].addr;
    const uint8_t *code = kimg_ptr(&k, fn, off);
    int rc = 1;
    uint64_t pos = 0, last = 0;
    while (code && pos < off) {
        unsigned n = x86_insn_len(code + pos, off - pos);
        if (!n)
            break;
        last = pos;
        pos += n;
    }
    if (code && pos == off) {
        const uint8_t *p = code + last;
        while (p < code + off && (*p == 0x2e || *p == 0x3e || *p == 0x66 || (*p & 0xf0) == 0x40))
            p++;                           /* segment, operand-size, REX prefixes */
        if (p < code + off && *p == 0xe8 && code + off - p == 5) {
            int32_t rel;
            memcpy(&rel, p + 1, 4);
            uint64_t t = fn + off + (uint64_t)(int64_t)rel, toff;
            int64_t ts = ksym_lookup(&ki->syms, t, &toff);
            printf("%s: call %s+0x%llx\n", at, ts >= 0 ? ksym_name(&ki->syms, (uint32_t)ts) : "?",
                   (unsigned long long)toff);
            rc = 0;
        } else if (p + 1 < code + off && *p == 0xff && ((p[1] >> 3) & 7) == 2) {
            printf("%s: call (indirect)\n", at);
            rc = 0;
        }
    }
    if (rc)
        printf("%s: not after a call\n", at);
    kimg_free(&k);
    return rc;
}

int cmd_syms(int argc, char **argv)
{
    const char *vmlinuz = NULL, *glob = NULL, *slide_s = NULL, *lstar_s = NULL, *addr_s = NULL, *name_s = NULL;
    const char *struct_s = NULL, *btf_out = NULL, *callb_s = NULL;
    int use_cache = 1, layout = 0, info = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) return usage_syms();
        else if (!strcmp(a, "--no-cache")) use_cache = 0;
        else if (!strcmp(a, "--layout")) layout = 1;
        else if (!strcmp(a, "--info")) info = 1;
        else if (next && !strcmp(a, "--slide")) { slide_s = next; i++; }
        else if (next && !strcmp(a, "--lstar")) { lstar_s = next; i++; }
        else if (next && !strcmp(a, "--addr")) { addr_s = next; i++; }
        else if (next && !strcmp(a, "--name")) { name_s = next; i++; }
        else if (next && !strcmp(a, "--struct")) { struct_s = next; i++; }
        else if (next && !strcmp(a, "--call-before")) { callb_s = next; i++; }
        else if (next && !strcmp(a, "--btf-out")) { btf_out = next; i++; }
        else if (a[0] == '-') return usage_syms();
        else if (!vmlinuz) vmlinuz = a;
        else if (!glob) glob = a;
        else return usage_syms();
    }
    if (!vmlinuz) return usage_syms();
    kinfo ki;
    if (kinfo_open(&ki, vmlinuz, use_cache) != 0) return HVT_EXIT_BAD;
    int64_t slide;
    int rc = 0;
    if (hvt_get_slide(&ki, slide_s, lstar_s, &slide) != 0) {
        fprintf(stderr, "hvt: bad --slide/--lstar value\n");
        rc = HVT_EXIT_USAGE;
    } else if (info) {
        printf("build_id %s\nsource %s\nsymbols %u\nbtf_bytes %zu\nbtf_types %u\n", ki.build_id, ki.source,
               ki.syms.count, ki.btf_blob.len, ki.btf.ntypes ? ki.btf.ntypes - 1 : 0);
    } else if (btf_out) {
        if (!ki.btf_blob.len) {
            fprintf(stderr, "hvt: %s: the kernel has no BTF\n", vmlinuz);
            rc = HVT_EXIT_BAD;
        } else {
            rc = util_write_file(btf_out, ki.btf_blob.data, ki.btf_blob.len) ? HVT_EXIT_BAD : 0;
        }
    } else if (layout) {
        kinfo_layout l;
        if (kinfo_layout_get(&ki, &l) != 0) rc = HVT_EXIT_BAD;
        else
            printf("task_struct.pid %u\ntask_struct.tgid %u\ntask_struct.comm %u %u\ntask_struct.mm %u\n"
                   "mm_struct.pgd %u\ntask_struct.cred %u\ncred.euid %u\npercpu_current 0x%llx %s\n",
                   l.task_pid, l.task_tgid, l.task_comm, l.task_comm_len, l.task_mm, l.mm_pgd,
                   l.task_cred, l.cred_euid,
                   (unsigned long long)l.percpu_current, l.uses_pcpu_hot ? "pcpu_hot.current_task" : "current_task");
    } else if (struct_s) {
        uint32_t sid = btf_find_struct(&ki.btf, struct_s);
        if (!sid) {
            fprintf(stderr, "hvt: %s: no struct or union %s in BTF\n", vmlinuz, struct_s);
            rc = HVT_EXIT_BAD;
        } else {
            printf("struct %s size %llu\n%6s %6s %6s  %-32s %s\n", struct_s,
                   (unsigned long long)btf_type_size(&ki.btf, sid), "offset", "", "size", "field", "type");
            btf_members_each(&ki.btf, sid, print_member, &ki.btf);
        }
    } else if (callb_s) {
        rc = call_before(&ki, vmlinuz, callb_s);
    } else if (addr_s) {
        uint64_t a, off;
        if (hvt_parse_u64(addr_s, &a)) rc = usage_syms();
        else {
            int64_t s = ksym_lookup(&ki.syms, a - (uint64_t)slide, &off);
            if (s < 0) {
                fprintf(stderr, "hvt: %s: no symbol at 0x%llx\n", vmlinuz, (unsigned long long)a);
                rc = HVT_EXIT_BAD;
            } else {
                printf("%016llx %s+0x%llx\n", (unsigned long long)a, ksym_name(&ki.syms, (uint32_t)s),
                       (unsigned long long)off);
            }
        }
    } else if (name_s) {
        char nm[512];
        snprintf(nm, sizeof nm, "%s", name_s);
        uint64_t off = 0;
        char *plus = strchr(nm, '+');
        if (plus) {
            *plus = 0;
            if (hvt_parse_u64(plus + 1, &off)) return usage_syms();
        }
        int64_t s = ksym_find(&ki.syms, nm);
        if (s < 0) {
            fprintf(stderr, "hvt: %s: no symbol %s\n", vmlinuz, nm);
            rc = HVT_EXIT_BAD;
        } else {
            const ksym_entry *e = &ki.syms.syms[s];
            printf("%016llx %c %s\n", (unsigned long long)(e->addr + (e->abs ? 0 : (uint64_t)slide) + off), e->type,
                   name_s);
        }
    } else {
        for (uint32_t i = 0; i < ki.syms.count; i++) {
            const ksym_entry *e = &ki.syms.syms[i];
            const char *n = ksym_name(&ki.syms, i);
            if (glob && !util_glob(glob, n)) continue;
            printf("%016llx %c %s\n", (unsigned long long)(e->addr + (e->abs ? 0 : (uint64_t)slide)), e->type, n);
        }
    }
    kinfo_close(&ki);
    return rc;
}
