/* test_probe_module.c - the module walker (trace/probe/probe_module.c) over a guest memory
 * laid out as the pinned 6.1 kernel lays it out: struct module's offsets as the host takes
 * them from that kernel's BTF (kmod_layout: list 0x8, name 0x18, kallsyms 0x220,
 * core_layout.base 0x140, core_layout.text_size 0x14c, state 0), the `modules` head at its
 * link address, two modules on the list (loop, brd) with their mod_kallsyms, Elf64_Sym
 * tables and string tables. Checks: a function is armed at its address with its extent, only
 * in the module of that name; a module not loaded is armed when its load is reported; init
 * text, data and undefined symbols are never armed; an unload disarms the core text; a list
 * that loops, a symbol table that cannot be read and a layout whose fields overlap end
 * cleanly; 1500 wanted functions the module lacks beside one it has arm that one; the same
 * memory read with a layout off by 8 bytes arms nothing. */
#include <stdio.h>
#include <string.h>
#include "probe_module.h"
#include "hvt_hypercall.h"
#include "hvt_probe.h"
#include "check.h"

#define HEAD 0xffffffff82b273e0ull
#define PACKED HVT_MODINFO_PACK(0x8, 0x18, 0x220, 0x140, 0x14c, 0)

/* guest memory: a few regions */
static struct region { uint64_t va; uint8_t b[8192]; } mem[8];
static unsigned nmem;
static uint8_t *at(uint64_t va, size_t len)
{
    for (unsigned i = 0; i < nmem; i++)
        if (va >= mem[i].va && va + len <= mem[i].va + sizeof mem[i].b)
            return mem[i].b + (va - mem[i].va);
    return NULL;
}
static uint64_t region(uint64_t va) { memset(&mem[nmem], 0, sizeof mem[nmem]); mem[nmem++].va = va; return va; }
static void put64(uint64_t va, uint64_t v) { memcpy(at(va, 8), &v, 8); }
static void put32(uint64_t va, uint32_t v) { memcpy(at(va, 4), &v, 4); }

static size_t fake_read(uint64_t va, void *buf, size_t len)
{
    size_t n = 0;                          /* byte by byte: a read may end at a region's end */
    for (; n < len; n++) {
        uint8_t *p = at(va + n, 1);
        if (!p)
            break;
        ((uint8_t *)buf)[n] = *p;
    }
    return n;
}
static struct { uint64_t va, end; uint32_t id, flags, kind; uint64_t recipe[3]; } arms[64];
static unsigned narms;
static uint64_t disarm_lo, disarm_hi;
static int fake_arm(uint64_t va, uint64_t end, uint32_t id, uint32_t flags)
{
    arms[narms].va = va; arms[narms].end = end; arms[narms].id = id; arms[narms].flags = flags;
    arms[narms].kind = HVT_PROBE_KIND_ENTRY;
    narms++;
    return 1;
}
static int fake_arm_return(uint64_t lo, uint64_t hi, uint32_t id, uint32_t flags)
{
    fake_arm(lo, hi, id, flags);
    arms[narms - 1].kind = HVT_PROBE_KIND_RETURN;
    return 2;                              /* two return sites, say */
}
static int fake_arm_sdt(uint64_t va, uint32_t id, uint32_t flags, const uint64_t recipe[3])
{
    fake_arm(va, va + 1, id, flags);
    arms[narms - 1].kind = HVT_PROBE_KIND_ADDR;
    memcpy(arms[narms - 1].recipe, recipe, sizeof arms[0].recipe);
    return 1;
}
static void fake_disarm(uint64_t lo, uint64_t hi) { disarm_lo = lo; disarm_hi = hi; }
static const struct probe_module_io io = { fake_read, fake_arm, fake_arm_return, fake_arm_sdt, fake_disarm };

/* one module at m: name, state, core text [text, text + tsize), symbols (name, type, value,
 * size) in a kallsyms block at ks */
struct sym { const char *name; uint8_t type; uint64_t value, size; };
static void module(uint64_t m, const char *name, uint32_t state, uint64_t text, uint32_t tsize,
                   uint64_t ks, const struct sym *s, unsigned ns)
{
    put32(m + 0, state);
    memcpy(at(m + 0x18, 56), name, strlen(name) + 1);
    put64(m + 0x140, text);
    put32(m + 0x14c, tsize);
    put64(m + 0x220, ks);
    uint64_t symtab = ks + 64, strtab = symtab + 24 * ns, str = 1;
    put64(ks + PROBE_MODULE_KS_SYMTAB, symtab);
    put32(ks + PROBE_MODULE_KS_NUM, ns);
    put64(ks + PROBE_MODULE_KS_STRTAB, strtab);
    for (unsigned i = 0; i < ns; i++) {
        uint8_t *e = at(symtab + 24 * i, 24);
        uint32_t sn = (uint32_t)str;
        memcpy(e, &sn, 4);
        e[4] = s[i].type;
        memcpy(e + 8, &s[i].value, 8);
        memcpy(e + 16, &s[i].size, 8);
        memcpy(at(strtab + str, strlen(s[i].name) + 1), s[i].name, strlen(s[i].name) + 1);
        str += strlen(s[i].name) + 1;
    }
}
static void link_list(uint64_t head, const uint64_t *mods, unsigned n)
{
    uint64_t prev = head;
    for (unsigned i = 0; i < n; i++) {
        put64(prev, mods[i] + 0x8);
        prev = mods[i] + 0x8;
    }
    put64(prev, head);
}
static uint64_t key(const char *s) { return hvt_name_hash(s, 128); }

int main(void)
{
    region(HEAD & ~0xfffull);
    uint64_t loop = region(0xffffffffc0010000ull), brd = region(0xffffffffc0020000ull);
    uint64_t loop_ks = region(0xffffffffc0030000ull), brd_ks = region(0xffffffffc0040000ull);
    uint64_t null = region(0xffffffffc0050000ull), null_ks = region(0xffffffffc0060000ull);
    const uint64_t brd_text = 0xffffffffc0a00000ull, loop_text = 0xffffffffc0b00000ull;
    const struct sym bs[] = { { "", 0, 0, 0 }, { "brd_submit_bio", 2, brd_text + 0x40, 0x120 },
                              { "brd_init", 2, 0xffffffffc0a80000ull, 0x80 },      /* init text */
                              { "brd_devices", 1, brd_text + 0x1000, 8 },         /* an object */
                              { "submit_bio", 2, 0, 0 },                          /* undefined */
                              { "brd_do_bvec", 2, brd_text + 0x200, 0x90 } };
    const struct sym ls[] = { { "lo_rw_aio", 2, loop_text + 0x10, 0x40 }, { "brd_submit_bio", 1, loop_text, 4 } };
    const struct sym ns[] = { { "null_queue_rq", 2, 0xffffffffc0c00100ull, 0x30 } };
    module(loop, "loop", PROBE_MODULE_LIVE, loop_text, 0x800, loop_ks, ls, 2);
    module(brd, "brd", PROBE_MODULE_LIVE, brd_text, 0x800, brd_ks, bs, 6);
    module(null, "null_blk", PROBE_MODULE_COMING, 0xffffffffc0c00000ull, 0x400, null_ks, ns, 1);
    link_list(HEAD, (uint64_t[]){ loop, brd }, 2);

    CHECK(probe_module_want(&io, 1, 0, hvt_name_hash("brd", 64), key("brd_submit_bio")) == HVT_PROBE_EINVAL,
          "no layout yet: refused");
    CHECK(probe_module_layout(&io, HEAD, HVT_MODINFO_PACK(0x8, 0x18, 0x220, 0x20, 0x14c, 0)) == HVT_PROBE_EINVAL,
          "a layout whose fields overlap (base inside the name) is refused");
    CHECK(probe_module_layout(&io, HEAD, PACKED) == 0, "the pinned kernel's layout is taken");

    /* a loaded module */
    CHECK(probe_module_want(&io, 7, HVT_PROBE_F_RECORD, hvt_name_hash("brd", 64), key("brd_submit_bio")) == 1,
          "brd_submit_bio: armed once (loop's object of the same name is not a function of brd)");
    CHECK(narms == 1 && arms[0].va == brd_text + 0x40 && arms[0].end == brd_text + 0x160 && arms[0].id == 7 &&
          arms[0].flags == HVT_PROBE_F_RECORD, "... at its address, with its extent, id and flags");
    narms = 0;
    CHECK(probe_module_want(&io, 8, 0, hvt_name_hash("brd", 64), key("brd_init")) == 0 && narms == 0,
          "init text is not armed");
    CHECK(probe_module_want(&io, 9, 0, hvt_name_hash("brd", 64), key("brd_devices")) == 0 && narms == 0,
          "data is not armed");
    CHECK(probe_module_want(&io, 10, 0, hvt_name_hash("brd", 64), key("submit_bio")) == 0 && narms == 0,
          "an undefined symbol is not armed");
    /* a module not loaded yet: kept, armed when its load is reported */
    CHECK(probe_module_want(&io, 11, 0, hvt_name_hash("null_blk", 64), key("null_queue_rq")) == 0 && narms == 0,
          "null_blk not on the list: nothing armed now");
    CHECK(probe_module_wanted() == 5, "every wanted probe kept (%u)", probe_module_wanted());
    link_list(HEAD, (uint64_t[]){ loop, brd, null }, 3);
    CHECK(probe_module_loaded(&io, null) == 1 && narms == 1 && arms[0].va == 0xffffffffc0c00100ull && arms[0].id == 11,
          "its load arms it");
    narms = 0;
    CHECK(probe_module_loaded(&io, loop) == 0 && narms == 0, "a module nobody wants: nothing");
    /* unload */
    probe_module_freed(&io, brd);
    CHECK(disarm_lo == brd_text && disarm_hi == brd_text + 0x800, "brd's unload disarms its core text");
    /* loaded again (the same memory here): armed again */
    CHECK(probe_module_loaded(&io, brd) == 1 && narms == 1 && arms[0].id == 7, "brd loaded again: armed again");
    narms = 0;

    /* return probes and tracepoint sites: by the same keys, armed by kind */
    uint64_t rec[3] = { 0 };
    hvt_sdt_arg_put(rec, 0, &(struct hvt_sdt_arg){ .op = HVT_SDT_REG, .reg = 12, .size = 3 });
    hvt_sdt_arg_put(rec, 1, &(struct hvt_sdt_arg){ .op = HVT_SDT_LOAD, .reg = 5, .size = 2, .disp = -0x48 });
    CHECK(probe_module_want_return(&io, 20, HVT_PROBE_F_ACTION, hvt_name_hash("brd", 64), key("brd_submit_bio")) == 2 &&
          narms == 1 && arms[0].kind == HVT_PROBE_KIND_RETURN && arms[0].va == brd_text + 0x40 &&
          arms[0].end == brd_text + 0x160 && arms[0].id == 20 && arms[0].flags == HVT_PROBE_F_ACTION,
          "a return probe: the function's extent handed to the engine to find its returns in");
    narms = 0;
    CHECK(probe_module_want_sdt(&io, 21, HVT_PROBE_F_ACTION, hvt_name_hash("brd", 64), key("brd_do_bvec"), 0x31, rec) == 1 &&
          narms == 1 && arms[0].kind == HVT_PROBE_KIND_ADDR && arms[0].va == brd_text + 0x231 &&
          !memcmp(arms[0].recipe, rec, sizeof rec), "a tracepoint's site: the function + its offset, with its recipe");
    narms = 0;
    CHECK(probe_module_want_sdt(&io, 22, 0, hvt_name_hash("brd", 64), key("brd_do_bvec"), 0x90, rec) == 0 && narms == 0,
          "a site past the function's extent is not armed");
    uint64_t bad[3] = { 15, 0, 0 };
    CHECK(probe_module_want_sdt(&io, 23, 0, hvt_name_hash("brd", 64), key("brd_do_bvec"), 0x10, bad) == HVT_PROBE_EINVAL &&
          narms == 0, "a malformed recipe is refused");
    CHECK(probe_module_want_sdt(&io, 21, HVT_PROBE_F_ACTION, hvt_name_hash("brd", 64), key("brd_do_bvec"), 0x31, rec) == 0 &&
          narms == 0, "the same site again: nothing more");
    probe_module_freed(&io, brd);
    CHECK(disarm_lo == brd_text && disarm_hi == brd_text + 0x800, "the unload disarms returns and sites with the text");
    CHECK(probe_module_loaded(&io, brd) == 1 + 2 + 1 && narms == 3,
          "loaded again: entry (1), returns (2) and the tracepoint's site (1) armed again (%u)", narms);
    unsigned kinds = 0;
    for (unsigned i = 0; i < narms; i++)
        kinds |= 1u << arms[i].kind;
    CHECK(kinds == (1u << HVT_PROBE_KIND_ENTRY | 1u << HVT_PROBE_KIND_RETURN | 1u << HVT_PROBE_KIND_ADDR),
          "... each by its own kind");
    narms = 0;

    /* many wanted probes in one module (looked up by key, not one by one): only the ones there */
    unsigned before = probe_module_wanted();
    char fn[32];
    for (unsigned i = 0; i < 1500; i++) {
        snprintf(fn, sizeof fn, "brd_missing_%u", i);
        probe_module_want(&io, 100 + i, 0, hvt_name_hash("brd", 64), key(fn));
    }
    narms = 0;
    probe_module_want(&io, 99, 0, hvt_name_hash("brd", 64), key("brd_do_bvec"));
    CHECK(probe_module_wanted() == before + 1501 && narms == 1 && arms[0].va == brd_text + 0x200,
          "1500 wanted functions brd lacks and brd_do_bvec: one site armed");
    narms = 0;
    CHECK(probe_module_loaded(&io, brd) == 5 && narms == 4,
          "a load arms brd_submit_bio (entry, returns), brd_do_bvec (entry, a site), nothing else");
    narms = 0;
    /* a list that loops without coming back to the head ends */
    put64(null + 0x8, null + 0x8);
    CHECK(probe_module_want(&io, 12, 0, hvt_name_hash("nope", 64), key("x")) == 0, "a looping list ends");
    link_list(HEAD, (uint64_t[]){ loop, brd }, 2);
    /* a symbol table that cannot be read */
    put64(brd_ks + PROBE_MODULE_KS_SYMTAB, 0xffffffffc0ff0000ull);
    CHECK(probe_module_want(&io, 13, 0, hvt_name_hash("brd", 64), key("brd_do_bvec")) == 0 && narms == 0,
          "an unreadable symbol table: nothing armed, no error to the host");
    put64(brd_ks + PROBE_MODULE_KS_SYMTAB, brd_ks + 64);

    /* red: the same memory with every offset 8 bytes off finds nothing */
    probe_module_reset();
    CHECK(probe_module_want(&io, 1, 0, hvt_name_hash("brd", 64), key("brd_do_bvec")) == HVT_PROBE_EINVAL,
          "a reset forgets the layout");
    CHECK(probe_module_layout(&io, HEAD, HVT_MODINFO_PACK(0x8, 0x20, 0x228, 0x148, 0x154, 0)) == 0, "a wrong layout");
    CHECK(probe_module_want(&io, 1, 0, hvt_name_hash("brd", 64), key("brd_do_bvec")) == 0 && narms == 0,
          "... finds no module brd");
    probe_module_reset();
    CHECK(probe_module_layout(&io, HEAD, PACKED) == 0 &&
          probe_module_want(&io, 1, 0, hvt_name_hash("brd", 64), key("brd_do_bvec")) == 1 &&
          arms[0].va == brd_text + 0x200, "the right one finds brd_do_bvec");
    return check_summary("test_probe_module");
}
