/* kmod_sdt: the static tracepoints a loadable module defines, as sdt:GROUP::EVENT probes.
 *
 * A module file is relocatable: its code has no addresses yet, and its jump table, trace
 * events and calls are relocations. kmod_link() lays the file's allocated sections out at a
 * made-up base (KMOD_LINK_BASE, in section order), gives every undefined symbol an address of
 * its own past them, and applies the x86-64 relocations (R_X86_64_64, PC32, PLT32, 32, 32S,
 * PC64: System V ABI AMD64 supplement, "Relocation Types"). The result looks like a kernel
 * image to sdt.c (a kimg, a ksym_table with the markers sdt_build reads: __start___jump_table,
 * __start_ftrace_events, _sinittext, _text and their ends), and its BTF is the module's split
 * BTF over the kernel's (type ids and string offsets continue the kernel's: the two are
 * concatenated). sdt_build then finds the tracepoints, their GROUPs, their sites and decodes
 * each site's block into its argument recipe exactly as for the kernel.
 *
 * What the hypervisor gets is not an address (the module is loaded where the kernel puts it)
 * but the function the site is in (by name, found in the loaded module's own symbol table)
 * and the site's offset in it; so a site is refused (with the reason) when:
 *  - its function's name is not unique in the module (the hypervisor could pick the other);
 *  - it is in init or exit text, or in no function;
 *  - its recipe uses an address inside the module (HVT_SDT_SITE: sections are laid out by the
 *    kernel, not as here).
 * Tracepoints of the kernel's own that a module's code calls (an undefined __tracepoint_X)
 * are kept as foreign points: their sites are added to the kernel's sdt:GROUP::X
 * (probe_desc.msites: armed in the module whenever it is loaded), and a site of them that does
 * not decode makes that probe not probeable, with the module named (it would miss firings).
 *
 * Contract:
 *  - kmod_sdt_read(path, kbtf, out, err): 0 with out filled (out->n may be 0: no tracepoint of
 *    its own), or -1 with the reason. out owns everything; kmod_sdt_free() frees it.
 *  - kmod_sdt_site_fn(m, point, site): the site's function name and offset (NULL if refused).
 *  - kmod_btf_read(path, kbtf, out, err): the module's types alone (fbt args[] in modules).
 */
#ifndef HVT_KMOD_SDT_H
#define HVT_KMOD_SDT_H
#include <stddef.h>
#include <stdint.h>
#include "btf.h"
#include "kimg.h"
#include "ksym.h"
#include "sdt.h"
#include "probe_list.h"
#include "hvt_hypercall.h"

#define KMOD_LINK_BASE 0xffffffffc0000000ull   /* where kmod_link lays a module out */

typedef struct kmod_sdt_s {
    char name[64];              /* the module's name (its .modinfo name=) */
    kimg img;                   /* the linked sections */
    ksym_table syms;            /* their symbols, the markers, the undefined ones */
    uint8_t *btf_blob;          /* the kernel's BTF and the module's, concatenated */
    btf_info btf;               /* parsed (ntypes 0: the module has no BTF) */
    sdt_table t;                /* its own tracepoints (sdt.h), with link addresses */
    char **site_fn;             /* per site of t (in order), its function's name, or NULL */
    uint32_t *site_off;         /* and the site's offset in it */
    uint8_t *foreign;           /* per point of t: the kernel's tracepoint (the module calls it) */
} kmod_sdt;

int  kmod_sdt_read(const char *path, const btf_info *kbtf, kmod_sdt *out, char *err, size_t errlen);
void kmod_sdt_free(kmod_sdt *m);
/* Site j of point p of m: its function's name and *off, or NULL when the site is refused. */
const char *kmod_sdt_site_fn(const kmod_sdt *m, const sdt_point *p, uint32_t j, uint32_t *off);

/* A module's own types: its split BTF over the kernel's as one (blob, btf); ids from split on
 * are the module's. kmod_btf_read: 0, or -1 with the reason (no .BTF, malformed). */
typedef struct {
    uint8_t *blob;
    btf_info btf;
    uint32_t split;             /* the module's first type id (the kernel's ntypes) */
} kmod_btf;
int  kmod_btf_read(const char *path, const btf_info *kbtf, kmod_btf *out, char *err, size_t errlen);
void kmod_btf_free(kmod_btf *m);
/* probe_list_add_modules (kmod.h), and with the kernel's BTF (kbtf) the modules' own static tracepoints as
 * sdt:GROUP::EVENT (kmod_sdt.h: kind PL_ADDR, sdt and modsdt set, modprobe set), each module's
 * after its functions. */
int probe_list_add_modules_btf(probe_list *l, const char *dir, const struct hvt_probe_spec pre[3],
                               const btf_info *kbtf, char *err, size_t errlen);
/* All: the layout from the kernel's BTF and symbols, then the modules under dir (with their
 * tracepoints), then the kernel's built-in code named by its objects where dir records them
 * (kbuiltin.h). */
int probe_list_add_kmods(probe_list *l, const btf_info *btf, const ksym_table *syms, const char *dir,
                         char *err, size_t errlen);
#endif
