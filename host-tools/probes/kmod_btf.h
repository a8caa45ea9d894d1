/* kmod_btf: several loadable modules' own types over the kernel's, as one BTF.
 *
 * Each module's .BTF is split BTF over the kernel's: its type ids continue the kernel's and its
 * string offsets continue the kernel's strings (kmod_sdt.h kmod_btf_read joins one). Two
 * modules' splits use the same ids, so a program on probes of several modules gets one BTF in
 * which each module's types follow the previous module's: every type id a module's record
 * names past the kernel's, and every string offset past the kernel's strings, moved by what
 * the modules before it add (the record layouts are the kernel's include/uapi/linux/btf.h).
 *
 * Contract: kmod_btfs_read(paths, names, n, kbtf, out, err): 0 with out->btf the kernel's types
 * then the n modules' (module k's ids in [out->r[k].lo, out->r[k].hi)), or -1 with the reason
 * (a module without BTF, a record not laid out as its kind says). kmod_btfs_free frees it. */
#ifndef HVT_KMOD_BTF_H
#define HVT_KMOD_BTF_H
#include "kmod_sdt.h"

typedef struct { char name[64]; uint32_t lo, hi; } kmod_btf_range;
typedef struct {
    uint8_t *blob;
    btf_info btf;
    kmod_btf_range *r;
    int n;
} kmod_btfs;

int  kmod_btfs_read(const char *const *paths, const char *const *names, int n, const btf_info *kbtf,
                    kmod_btfs *out, char *err, size_t errlen);
void kmod_btfs_free(kmod_btfs *m);
#endif
