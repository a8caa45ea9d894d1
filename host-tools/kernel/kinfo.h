/* kinfo: what hvtrace knows about one kernel build, learned from its vmlinuz alone:
 * the symbol table (ksym), the BTF blob and the struct layout the tracer needs, and the KASLR
 * slide from one runtime value.
 * Contract: kinfo_open() returns the same data whether it comes from the image or from the
 * cache ($HVT_KINFO_CACHE/<build-id>/, else $HVT_CACHE/kinfo/..., else ~/.cache/hvtrace/kinfo/...), keyed by the
 * kernel's GNU build id (an alias keyed by the vmlinuz's size and CRC32 finds the build id
 * without decompressing). A missing field in kinfo_layout is an error naming the field. */
#ifndef HVT_KINFO_H
#define HVT_KINFO_H
#include "btf.h"
#include "ksym.h"

/* KASLR randomizes the kernel's virtual base in CONFIG_PHYSICAL_ALIGN units (2 MiB). */
#define KINFO_KASLR_ALIGN (2ull << 20)

typedef struct {
    uint32_t task_pid, task_tgid, task_comm, task_comm_len, task_mm; /* task_struct, bytes */
    uint32_t mm_pgd;                                                  /* mm_struct, bytes */
    uint32_t task_cred, cred_euid;   /* task_struct.cred, cred.euid (kuid_t: its uid_t val first) */
    uint64_t percpu_current; /* per-CPU offset of the current task pointer */
    int uses_pcpu_hot;       /* current lives in pcpu_hot (6.2+) rather than current_task */
} kinfo_layout;

typedef struct {
    char build_id[2 * KIMG_BUILD_ID_MAX + 1];
    const char *source; /* "image" or "cache" */
    ksym_table syms;
    util_buf btf_blob;
    btf_info btf;
} kinfo;

/* use_cache: 0 = never read or write the cache. */
int kinfo_open(kinfo *ki, const char *vmlinuz, int use_cache);
void kinfo_close(kinfo *ki);
int kinfo_layout_get(const kinfo *ki, kinfo_layout *out);
/* KASLR slide from the guest's IA32_LSTAR (= runtime entry_SYSCALL_64); 0 ok, -1 error. */
int kinfo_slide_from_lstar(const kinfo *ki, uint64_t lstar, int64_t *slide);
#endif
