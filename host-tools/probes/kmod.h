/* kmod: fbt probes in loadable kernel modules, named fbt:MODULE:FUNCTION:entry and :return.
 * Contract:
 *  - kmod_layout(btf, syms, out, err): the three specs the hypervisor needs before any module
 *    probe (include/hvt_hypercall.h): HVT_PROBE_KIND_MODINFO (the `modules` list head and
 *    struct module's layout, from the kernel's BTF: 6.1's core_layout or 6.4's mem[MOD_TEXT])
 *    and the two HVT_PROBE_KIND_MODHOOK probes (do_init_module, free_module); 0, or -1 with
 *    the reason (no BTF, a field missing or past 4 KiB, mod_kallsyms laid out otherwise than
 *    the hypervisor reads it).
 *  - kmod_read(path, name, fns, err): a module file's name (its .modinfo name=, else the
 *    file's name with '-' as '_', as the kernel names it) and its core functions: STT_FUNC
 *    symbols of executable sections other than .init.text and .exit.text (those are freed or
 *    never loaded), sorted by name, without duplicates. The caller frees *fns (one block).
 *    A compressed module (.ko.xz, .ko.gz, .ko.zst) is read decompressed.
 *  - probe_list_add_modules(l, dir, pre, err): every *.ko (and compressed one) under dir (a kernel package's
 *    lib/modules/RELEASE), in path order: fbt:MODULE:F:entry and fbt:MODULE:F:return for each
 *    function (kinds PL_ENTRY, PL_RETURN: the hypervisor finds the returns in the function's
 *    extent, its symbol's size in the module's own symbol table; lo = hi = 0, modprobe set, modpre = pre kept by the list: every spec list
 *    with a module probe starts with them). The guest need not have them loaded: the hypervisor arms each
 *    one when (and whenever) the module is in the kernel's module list. Returns the number of
 *    modules read, -1 on no memory or an unreadable dir.
 * The names the host uses are only keys (hvt_name_hash): the module's code and symbols are
 * found by the hypervisor in guest memory. */
#ifndef HVT_KMOD_H
#define HVT_KMOD_H
#include <stddef.h>
#include "btf.h"
#include "ksym.h"
#include "probe_list.h"
#include "hvt_hypercall.h"

int kmod_layout(const btf_info *btf, const ksym_table *syms, struct hvt_probe_spec out[3],
                char *err, size_t errlen);
/* A module file's bytes (decompressed), checked as a 64-bit ELF whose section headers and
 * sections lie inside it: malloc'd, *len set; NULL with the reason. */
unsigned char *kmod_file_load(const char *path, size_t *len, char *err, size_t errlen);
int kmod_read(const char *path, char name[64], char ***fns, size_t *nfns, char *err, size_t errlen);
int probe_list_add_modules(probe_list *l, const char *dir, const struct hvt_probe_spec pre[3],
                           char *err, size_t errlen);
/* The same, calling each(l, path, bytes, len, ctx) after each module's functions are added,
 * with the file's bytes as read (decompressed; non-zero: stop with an out-of-memory error). */
int probe_list_add_modules_each(probe_list *l, const char *dir, const struct hvt_probe_spec pre[3],
                                int (*each)(probe_list *l, const char *path, const unsigned char *b,
                                            size_t len, void *ctx), void *ctx,
                                char *err, size_t errlen);
/* The file under dir (as probe_list_add_modules walks it) of the module named name (its file
 * name with '-' as '_', without .ko and a compression suffix): 0 with its path, or -1. */
int kmod_find(const char *dir, const char *name, char *path, size_t n);
/* The spec of a module probe: entry or return (d's kind), with hvt_name_hash keys for module
 * and function. */
struct hvt_probe_spec kmod_spec(const probe_desc *d, uint32_t flags);

#endif
