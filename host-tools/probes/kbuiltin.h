/* kbuiltin: code built into the kernel named by its object, as DTrace names it (fbt:ext4::entry
 * matching ext4's functions on a kernel with ext4 built in).
 *
 * Only the kernel's build knows which object each function came from. Since Linux 6.12 a
 * build with CONFIG_BUILTIN_MODULE_RANGES writes modules.builtin.ranges next to
 * modules.builtin (scripts/generate_builtin_ranges.awk): per ELF section, an anchor line
 * "SECTION START-END = SYMBOL" (the section's first symbol at offset START) and, in ascending
 * order, "SECTION START-END MOD [MOD ...]": the offsets [START, END) from the section's base
 * hold code of those built-in modules (a range may be shared). The .text ranges name fbt
 * probes here: the base is SYMBOL's address minus START, in the kernel's own symbols.
 * Without that file (none of the pinned Debian kernels has it: their configs lack
 * CONFIG_BUILTIN_MODULE_RANGES, and they have no kallmodsyms) the kernel package still lists
 * its built-in modules' names (modules.builtin: kernel/fs/ext4/ext4.ko): a description naming
 * one then says why it matches nothing.
 *
 * Contract:
 *  - probe_list_name_builtin(l, syms, dir, err): every fbt:kernel:F probe whose function lies
 *    in a .text range gets d->builtin = its modules' names (space-separated, owned by l);
 *    probe_desc_match then matches a description's module field against them too (the probe
 *    stays fbt:kernel:F as well). Returns the probes named; 0 with err saying why when dir has
 *    no modules.builtin.ranges; -1 with the line number and reason on a malformed file.
 *  - kbuiltin_hint(dir, desc, buf, n): when desc's module field names a module that
 *    dir/modules.builtin lists (a literal name, no glob) but no range file exists, the reason
 *    into buf and 1; else 0.
 */
#ifndef HVT_KBUILTIN_H
#define HVT_KBUILTIN_H
#include <stddef.h>
#include "ksym.h"
#include "probe_list.h"

int probe_list_name_builtin(probe_list *l, const ksym_table *syms, const char *dir, char *err, size_t errlen);
int kbuiltin_hint(const char *dir, const char *desc, char *buf, size_t n);
#endif
