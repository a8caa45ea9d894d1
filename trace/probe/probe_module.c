/* probe_module.c - fbt entry probes in loadable modules (see probe_module.h). */
#include "probe_module.h"
#include <stdbool.h>
#include "hvt_hypercall.h"
#include "hvt_probe.h"

static struct {
    uint64_t modules;                      /* the list head's runtime address; 0: no layout */
    unsigned list, name, kallsyms, base, size, state;
} lay;

/* A wanted probe: its kind (HVT_PROBE_KIND_ENTRY, _RETURN, or _ADDR for a tracepoint's site
 * at off bytes into the function, its recipe sdt_recipes[sdt - 1]). */
static struct want {
    uint64_t mod, fn;
    uint32_t id, flags, off;
    uint8_t kind;
    uint16_t sdt;
} wants[PROBE_MODULE_WANT_MAX];
static unsigned nwants;
static uint64_t sdt_recipes[PROBE_MODULE_SDT_MAX][3];
static unsigned nsdt;
/* The wanted probes of the module being armed, by function key (index + 1; 0 empty, open
 * addressing): each symbol is looked up once, whatever the number of wanted probes. Built per
 * module under the caller's lock. */
#define WANT_SLOTS (2 * PROBE_MODULE_WANT_MAX)
static uint16_t want_slot[WANT_SLOTS];
_Static_assert(PROBE_MODULE_WANT_MAX < 65535 && (WANT_SLOTS & (WANT_SLOTS - 1)) == 0, "slots");

static unsigned slot_of(uint64_t key) { return (unsigned)(key ^ key >> 29) & (WANT_SLOTS - 1); }

static void index_module(uint64_t mkey, const struct want *only)
{
    __builtin_memset(want_slot, 0, sizeof want_slot);
    for (unsigned w = 0; w < (only ? 1 : nwants); w++) {
        const struct want *x = only ? only : &wants[w];
        if (x->mod != mkey)
            continue;
        unsigned s = slot_of(x->fn);
        while (want_slot[s])
            s = (s + 1) & (WANT_SLOTS - 1);
        want_slot[s] = (uint16_t)((only ? PROBE_MODULE_WANT_MAX : w) + 1);
    }
}

unsigned probe_module_wanted(void) { return nwants; }

void probe_module_reset(void)
{
    nwants = 0;
    nsdt = 0;
    lay.modules = 0;
}

int probe_module_layout(const struct probe_module_io *io, uint64_t modules, uint64_t packed)
{
    unsigned list = HVT_MODINFO_LIST(packed), name = HVT_MODINFO_NAME(packed),
             ks = HVT_MODINFO_KALLSYMS(packed), base = HVT_MODINFO_BASE(packed),
             size = HVT_MODINFO_SIZE(packed), state = HVT_MODINFO_STATE(packed);
    /* the fields must not overlap one another (a name is PROBE_MODULE_MODNAME bytes) */
    struct { unsigned at, len; } f[] = { { list, 16 }, { name, PROBE_MODULE_MODNAME }, { ks, 8 },
                                         { base, 8 }, { size, 4 }, { state, 4 } };
    for (unsigned i = 0; i < 6; i++)
        for (unsigned j = i + 1; j < 6; j++)
            if (f[i].at < f[j].at + f[j].len && f[j].at < f[i].at + f[i].len)
                return HVT_PROBE_EINVAL;
    if (!(modules >> 63))
        return HVT_PROBE_EINVAL;           /* the list head is a kernel address */
    (void)io;
    lay.modules = modules;
    lay.list = list;
    lay.name = name;
    lay.kallsyms = ks;
    lay.base = base;
    lay.size = size;
    lay.state = state;
    return 0;
}

static bool read_u64(const struct probe_module_io *io, uint64_t va, uint64_t *v)
{
    return io->read(va, v, 8) == 8;
}

static bool read_u32(const struct probe_module_io *io, uint64_t va, uint32_t *v)
{
    return io->read(va, v, 4) == 4;
}

/* The key of the NUL-terminated name at va (at most max bytes read), or 0 if unreadable or
 * longer than max. */
static uint64_t name_key(const struct probe_module_io *io, uint64_t va, unsigned max)
{
    char b[PROBE_MODULE_NAME_MAX + 1];
    size_t n = io->read(va, b, max);
    unsigned len = 0;
    while (len < n && b[len])
        len++;
    if (len == n)
        return 0;                          /* no NUL in what could be read */
    return hvt_name_hash(b, len);
}

/* Arm the wanted probes of the module at mod whose name key is mkey (w: the one wanted
 * probe to arm, or NULL for every one of that module). Sites armed, or the first error. */
static int arm_in(const struct probe_module_io *io, uint64_t mod, uint64_t mkey, const struct want *only)
{
    uint64_t base, ks, symtab, strtab;
    uint32_t size, nsyms;
    if (!read_u64(io, mod + lay.base, &base) || !read_u32(io, mod + lay.size, &size) ||
        !read_u64(io, mod + lay.kallsyms, &ks) || !ks ||
        !read_u64(io, ks + PROBE_MODULE_KS_SYMTAB, &symtab) ||
        !read_u32(io, ks + PROBE_MODULE_KS_NUM, &nsyms) ||
        !read_u64(io, ks + PROBE_MODULE_KS_STRTAB, &strtab))
        return HVT_PROBE_EFAULT;
    if (nsyms > PROBE_MODULE_SYMS_MAX)
        nsyms = PROBE_MODULE_SYMS_MAX;
    int armed = 0;
    index_module(mkey, only);
    for (uint32_t i = 0; i < nsyms; i++) {
        uint8_t s[PROBE_MODULE_SYM_SIZE];
        if (io->read(symtab + (uint64_t)i * PROBE_MODULE_SYM_SIZE, s, sizeof s) != sizeof s)
            return armed ? armed : HVT_PROBE_EFAULT;
        uint32_t st_name;
        uint64_t value, ssize;
        __builtin_memcpy(&st_name, s, 4);
        __builtin_memcpy(&value, s + 8, 8);
        __builtin_memcpy(&ssize, s + 16, 8);
        if ((s[4] & 0xf) != PROBE_MODULE_STT_FUNC || value < base || value >= base + size ||
            ssize > base + size - value)
            continue;                      /* not code of the core text (init text, data) */
        uint64_t fkey = name_key(io, strtab + st_name, PROBE_MODULE_NAME_MAX);
        if (!fkey)
            continue;
        for (unsigned sl = slot_of(fkey); want_slot[sl]; sl = (sl + 1) & (WANT_SLOTS - 1)) {
            unsigned w = want_slot[sl] - 1u;
            const struct want *x = w == PROBE_MODULE_WANT_MAX ? only : &wants[w];
            if (x->fn != fkey)             /* (the module's key was matched when indexing) */
                continue;
            int rc;
            if (x->kind == HVT_PROBE_KIND_ENTRY)
                rc = io->arm(value, value + (ssize ? ssize : 1), x->id, x->flags);
            else if (!ssize || (x->kind == HVT_PROBE_KIND_ADDR && x->off >= ssize))
                rc = 0;                    /* no extent to find returns in, or a site past it */
            else if (x->kind == HVT_PROBE_KIND_RETURN)
                rc = io->arm_return(value, value + ssize, x->id, x->flags);
            else
                rc = io->arm_sdt(value + x->off, x->id, x->flags, sdt_recipes[x->sdt - 1]);
            if (rc == HVT_PROBE_ENOSITE)
                rc = 0;                    /* a function without a return: nothing to arm */
            if (rc < 0)
                return rc;
            armed += rc;
        }
    }
    return armed;
}

static bool wanted_module(uint64_t mkey, const struct want *only)
{
    if (only)
        return only->mod == mkey;
    for (unsigned w = 0; w < nwants; w++)
        if (wants[w].mod == mkey)
            return true;
    return false;
}

/* Walk the kernel's module list; arm in every formed module wanted (or in only's). */
static int arm_loaded(const struct probe_module_io *io, const struct want *only)
{
    uint64_t at;
    int armed = 0;
    if (!read_u64(io, lay.modules, &at))
        return HVT_PROBE_EFAULT;
    for (unsigned n = 0; at != lay.modules && n < PROBE_MODULE_LIST_MAX; n++) {
        uint64_t mod = at - lay.list;
        uint32_t state;
        if (!(at >> 63) || !read_u32(io, mod + lay.state, &state))
            return HVT_PROBE_EFAULT;
        uint64_t mkey = name_key(io, mod + lay.name, PROBE_MODULE_MODNAME);
        if ((state == PROBE_MODULE_LIVE || state == PROBE_MODULE_COMING) && mkey &&
            wanted_module(mkey, only)) {
            int rc = arm_in(io, mod, mkey, only);
            if (rc < 0)
                return rc;
            armed += rc;
        }
        if (!read_u64(io, at, &at))
            return HVT_PROBE_EFAULT;
    }
    return armed;
}

static int want_add(const struct probe_module_io *io, struct want x, const uint64_t recipe[3])
{
    if (!lay.modules || !x.mod || !x.fn)
        return HVT_PROBE_EINVAL;
    for (unsigned w = 0; w < nwants; w++)
        if (wants[w].mod == x.mod && wants[w].fn == x.fn && wants[w].id == x.id &&
            wants[w].kind == x.kind && wants[w].off == x.off)
            return 0;                      /* the same probe again */
    if (nwants == PROBE_MODULE_WANT_MAX || (recipe && nsdt == PROBE_MODULE_SDT_MAX))
        return HVT_PROBE_ENOMEM;
    if (recipe) {
        __builtin_memcpy(sdt_recipes[nsdt], recipe, sizeof sdt_recipes[nsdt]);
        x.sdt = (uint16_t)++nsdt;
    }
    wants[nwants] = x;
    int rc = arm_loaded(io, &wants[nwants]);
    if (recipe && rc < 0 && rc != HVT_PROBE_EFAULT)
        nsdt--;                            /* not kept: its recipe slot is free again */
    if (rc >= 0 || rc == HVT_PROBE_EFAULT)
        nwants++;                          /* kept: a later load arms it */
    return rc == HVT_PROBE_EFAULT ? 0 : rc;
}

int probe_module_want(const struct probe_module_io *io, uint32_t id, uint32_t flags,
                      uint64_t mod_key, uint64_t fn_key)
{
    return want_add(io, (struct want){ .mod = mod_key, .fn = fn_key, .id = id, .flags = flags,
                                       .kind = HVT_PROBE_KIND_ENTRY }, NULL);
}

int probe_module_want_return(const struct probe_module_io *io, uint32_t id, uint32_t flags,
                             uint64_t mod_key, uint64_t fn_key)
{
    return want_add(io, (struct want){ .mod = mod_key, .fn = fn_key, .id = id, .flags = flags,
                                       .kind = HVT_PROBE_KIND_RETURN }, NULL);
}

int probe_module_want_sdt(const struct probe_module_io *io, uint32_t id, uint32_t flags,
                          uint64_t mod_key, uint64_t fn_key, uint32_t off, const uint64_t recipe[3])
{
    if (hvt_sdt_recipe_check(recipe) || off >= PROBE_MODULE_SDT_OFF_MAX)
        return HVT_PROBE_EINVAL;
    return want_add(io, (struct want){ .mod = mod_key, .fn = fn_key, .id = id, .flags = flags,
                                       .kind = HVT_PROBE_KIND_ADDR, .off = off }, recipe);
}

int probe_module_loaded(const struct probe_module_io *io, uint64_t mod)
{
    if (!lay.modules || !nwants)
        return 0;
    uint64_t mkey = name_key(io, mod + lay.name, PROBE_MODULE_MODNAME);
    if (!mkey || !wanted_module(mkey, NULL))
        return 0;
    return arm_in(io, mod, mkey, NULL);
}

void probe_module_freed(const struct probe_module_io *io, uint64_t mod)
{
    uint64_t base;
    uint32_t size;
    if (!lay.modules)
        return;
    if (read_u64(io, mod + lay.base, &base) && read_u32(io, mod + lay.size, &size) && size)
        io->disarm(base, base + size);
}
