/*
 * probe_module.h - probes in loadable kernel modules, found in guest memory: fbt entry and
 * return probes, and the sites of static tracepoints (sdt) in a module's code.
 *
 * The host names a module's function by two name keys (hvt_name_hash of the module's name and
 * of the function's: include/hvt_hypercall.h, HVT_PROBE_F_MODULE). The hypervisor finds the
 * module in the kernel's own `modules` list and the function in the module's own symbol table
 * (struct module's kallsyms: symtab, num_symtab, strtab), every read through the checked
 * guest-memory loads; struct module's layout comes from the host (HVT_PROBE_KIND_MODINFO,
 * from the kernel's BTF), mod_kallsyms' and Elf64_Sym's are fixed (below).
 *
 * Contract (no lock of its own: the caller serialises every call, probe_ctl.c's mod_lock):
 *  - probe_module_layout(io, modules, packed): the list head's runtime address and the packed
 *    offsets; 0, or PROBE_EINVAL for a layout that cannot be right (offsets overlapping).
 *  - probe_module_want(io, id, flags, mod_key, fn_key): the probe is kept (up to
 *    PROBE_MODULE_WANT_MAX) and armed now in the module of that name if it is loaded (LIVE or
 *    COMING): the sites armed (0: not loaded now), or PROBE_E*.
 *  - probe_module_want_return(...): the same for the function's return sites (the engine
 *    decodes the function's extent, its symbol's st_size, for them: a symbol without a size
 *    has no return probe).
 *  - probe_module_want_sdt(..., off, recipe): a tracepoint's site off bytes into the function
 *    (inside its extent), its arguments computed by recipe (include/hvt_hypercall.h; checked:
 *    PROBE_EINVAL if malformed). At most PROBE_MODULE_SDT_MAX such sites are kept.
 *  - probe_module_loaded(io, mod): the kernel is about to run mod's init (do_init_module's
 *    entry, the hypervisor's own probe): every wanted probe in it is armed before its first
 *    instruction runs. Returns the sites armed.
 *  - probe_module_freed(io, mod): the kernel frees mod (free_module's entry): every probe in
 *    its core text is disarmed before the memory goes back to the kernel; the wanted ones stay
 *    wanted (a module loaded again gets them again).
 *  - probe_module_reset(): a disarm of every probe forgets the wanted ones and the layout.
 * A module's init text is not probed (freed after init), nor its data; a symbol whose extent
 * leaves the core text is refused.
 */
#ifndef HVT_PROBE_MODULE_H
#define HVT_PROBE_MODULE_H
#include <stdint.h>
#include <stddef.h>

#define PROBE_MODULE_WANT_MAX  2048u       /* wanted module probes at once */
#define PROBE_MODULE_LIST_MAX  4096u       /* modules walked at most (a looping list ends) */
#define PROBE_MODULE_SYMS_MAX  (1u << 16)  /* symbols of one module read at most (the largest
                                              modules have some 40,000) */
#define PROBE_MODULE_SDT_MAX   512u        /* wanted tracepoint sites in modules at once */
#define PROBE_MODULE_SDT_OFF_MAX (1u << 20) /* a site's offset in its function, below this */
#define PROBE_MODULE_NAME_MAX  128u        /* a function name's bytes compared at most */
#define PROBE_MODULE_MODNAME   56u         /* MODULE_NAME_LEN (64 - sizeof(unsigned long)) */
/* struct mod_kallsyms { Elf_Sym *symtab; unsigned int num_symtab; char *strtab; ... }
 * (include/linux/module.h, the same from 4.5 to 6.12) */
#define PROBE_MODULE_KS_SYMTAB 0u
#define PROBE_MODULE_KS_NUM    8u
#define PROBE_MODULE_KS_STRTAB 16u
/* Elf64_Sym (System V ABI, "Symbol Table"): st_name 4, st_info 1, st_other 1, st_shndx 2,
 * st_value 8, st_size 8 */
#define PROBE_MODULE_SYM_SIZE  24u
#define PROBE_MODULE_STT_FUNC  2u
/* enum module_state: LIVE 0, COMING 1, GOING 2, UNFORMED 3 */
#define PROBE_MODULE_LIVE      0u
#define PROBE_MODULE_COMING    1u

/* What the walker needs of the hypervisor: kernel-virtual reads (bytes read, short on a
 * fault) and the engine's arming. */
struct probe_module_io {
    size_t (*read)(uint64_t va, void *buf, size_t len);
    int  (*arm)(uint64_t va, uint64_t end, uint32_t id, uint32_t flags);   /* sites, or < 0 */
    int  (*arm_return)(uint64_t lo, uint64_t hi, uint32_t id, uint32_t flags);  /* its returns */
    int  (*arm_sdt)(uint64_t va, uint32_t id, uint32_t flags, const uint64_t recipe[3]);
    void (*disarm)(uint64_t lo, uint64_t hi);                             /* every probe in [lo, hi) */
};

int  probe_module_layout(const struct probe_module_io *io, uint64_t modules, uint64_t packed);
int  probe_module_want(const struct probe_module_io *io, uint32_t id, uint32_t flags,
                       uint64_t mod_key, uint64_t fn_key);
int  probe_module_want_return(const struct probe_module_io *io, uint32_t id, uint32_t flags,
                              uint64_t mod_key, uint64_t fn_key);
int  probe_module_want_sdt(const struct probe_module_io *io, uint32_t id, uint32_t flags,
                           uint64_t mod_key, uint64_t fn_key, uint32_t off, const uint64_t recipe[3]);
int  probe_module_loaded(const struct probe_module_io *io, uint64_t mod);
void probe_module_freed(const struct probe_module_io *io, uint64_t mod);
void probe_module_reset(void);
unsigned probe_module_wanted(void);

#endif
