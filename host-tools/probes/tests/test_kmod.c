/* test_kmod - the host side of module probes and of the io provider on the pinned 6.1 kernel
 * (host-tools/probes/kmod.h, io_prov.h):
 *  - struct module's layout as kmod_layout takes it from the kernel's BTF (the offsets pahole
 *    shows for 6.1: list 8, name 24, kallsyms 0x220, core_layout 0x140 with base +0 and
 *    text_size +0xc, state 0; trace/probe/tests/test_probe_module.c walks a memory laid out
 *    so), the `modules` head and the two hooks at their kallsyms addresses;
 *  - the kernel package's brd.ko named as the kernel names it (its .modinfo name=brd) with its
 *    core functions (brd_submit_bio, brd_do_bvec...) and not its init or exit text (brd_init,
 *    brd_exit); a file that is no ELF refused; fbt:brd::entry in the probe list from the
 *    package's modules, each with a module spec (the name keys the hypervisor hashes), the
 *    layout specs first and once;
 *  - io:::start on block_bio_queue's sites (the recipe as is), io:::done on
 *    block_bio_complete's (its second argument first) and block_rq_complete's (a load of the
 *    request's bio at struct request's bio offset, from the request's register), every
 *    rewritten recipe checked as the hypervisor checks it; wait-start and wait-done at
 *    submit_bio_wait's entry and returns.
 * Usage: test_kmod VMLINUZ MODULES_DIR */
#include "kmod.h"
#include "kmod_sdt.h"
#include "kmod_btf.h"
#include "kbuiltin.h"
#include <unistd.h>
#include "io_prov.h"
#include "probe_live.h"
#include "sdt.h"
#include "kinfo.h"
#include "check.h"
#include "hvt_hypercall.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int has(char **v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(v[i], s))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: test_kmod VMLINUZ MODULES_DIR\n");
        return 2;
    }
    kinfo ki;
    if (kinfo_open(&ki, argv[1], 1) != 0)
        return 1;
    char err[400] = "";
    struct hvt_probe_spec pre[3];
    CHECK(kmod_layout(&ki.btf, &ki.syms, pre, err, sizeof err) == 0, "kmod_layout: %s", err);
    uint64_t h = pre[0].hi;
    CHECK(HVT_MODINFO_LIST(h) == 0x8 && HVT_MODINFO_NAME(h) == 0x18 && HVT_MODINFO_KALLSYMS(h) == 0x220 &&
          HVT_MODINFO_BASE(h) == 0x140 && HVT_MODINFO_SIZE(h) == 0x14c && HVT_MODINFO_STATE(h) == 0,
          "struct module: list %#x name %#x kallsyms %#x base %#x size %#x state %#x", HVT_MODINFO_LIST(h),
          HVT_MODINFO_NAME(h), HVT_MODINFO_KALLSYMS(h), HVT_MODINFO_BASE(h), HVT_MODINFO_SIZE(h), HVT_MODINFO_STATE(h));
    CHECK(pre[0].kind == (HVT_PROBE_KIND_MODINFO | HVT_PROBE_F_LINKTIME) &&
          pre[0].lo == ki.syms.syms[ksym_find(&ki.syms, "modules")].addr, "the layout spec: the modules head, link time");
    CHECK(pre[1].kind == (HVT_PROBE_KIND_MODHOOK | HVT_PROBE_F_LINKTIME) && pre[1].hi == HVT_MODHOOK_LOAD &&
          pre[1].lo == ki.syms.syms[ksym_find(&ki.syms, "do_init_module")].addr &&
          pre[2].hi == HVT_MODHOOK_FREE && pre[2].lo == ki.syms.syms[ksym_find(&ki.syms, "free_module")].addr,
          "the hooks: do_init_module (load), free_module (unload)");

    char path[4096], name[64], **fns;
    size_t nf;
    snprintf(path, sizeof path, "%s/kernel/drivers/block/brd.ko", argv[2]);
    CHECK(kmod_read(path, name, &fns, &nf, err, sizeof err) == 0, "brd.ko: %s", err);
    printf("brd.ko: %s, %zu functions:", name, nf);
    for (size_t i = 0; i < nf; i++)
        printf(" %s", fns[i]);
    printf("\n");
    CHECK(!strcmp(name, "brd"), "its name: %s", name);
    CHECK(has(fns, nf, "brd_submit_bio") && has(fns, nf, "brd_do_bvec") && has(fns, nf, "brd_probe"),
          "its core functions are named");
    CHECK(!has(fns, nf, "brd_init") && !has(fns, nf, "brd_exit") && !has(fns, nf, "init_module"),
          "its init and exit text is not");
    for (size_t i = 0; i < nf; i++)
        free(fns[i]);
    free(fns);
    CHECK(kmod_read(argv[1], name, &fns, &nf, err, sizeof err) < 0 && strstr(err, "not a 64-bit ELF"),
          "a file that is no ELF module is refused: %s", err);

    probe_list l;
    CHECK(probe_list_build(&ki.syms, &l) == 0, "probe list");
    size_t before = l.n;
    int mods = probe_list_add_kmods(&l, &ki.btf, &ki.syms, argv[2], err, sizeof err);
    printf("modules: %d, %zu probes\n", mods, l.n - before);
    CHECK(mods > 100, "the package's modules read: %d", mods);
    const probe_desc *sb = NULL;
    size_t nbrd = 0;
    for (size_t i = before; i < l.n; i++)
        if (probe_desc_match(&l.p[i], "fbt:brd::entry")) {
            nbrd++;
            if (!strcmp(l.p[i].function, "brd_submit_bio"))
                sb = &l.p[i];
        }
    CHECK(sb && nbrd >= 5, "fbt:brd::entry matches %zu probes, brd_submit_bio among them", nbrd);
    char *descs[] = { "fbt:brd::entry" };
    size_t ns = 0;
    struct hvt_probe_spec *s = probe_specs_for(&l, descs, 1, 0, 0, &ns);
    int layout_first = ns == nbrd + 3 && (s[0].kind & HVT_PROBE_KIND_MASK) == HVT_PROBE_KIND_MODINFO &&
                       (s[1].kind & HVT_PROBE_KIND_MASK) == HVT_PROBE_KIND_MODHOOK &&
                       (s[2].kind & HVT_PROBE_KIND_MASK) == HVT_PROBE_KIND_MODHOOK;
    int keyed = 1;
    for (size_t i = 3; i < ns; i++)
        keyed &= s[i].kind == (HVT_PROBE_KIND_ENTRY | HVT_PROBE_F_MODULE | HVT_PROBE_F_RECORD) &&
                 s[i].lo == hvt_name_hash("brd", 64);
    CHECK(layout_first && keyed, "the specs: the layout and hooks once, first, then %zu module entries keyed by "
          "the module's name (%zu specs)", nbrd, ns);
    free(s);
    char *rdesc[] = { "fbt:brd:brd_submit_bio:return" }, *zdesc[] = { "sdt:nullb::nullb_zone_op" };
    s = probe_specs_for(&l, rdesc, 1, 0, 0, &ns);
    CHECK(s && ns == 4 && s[3].kind == (HVT_PROBE_KIND_RETURN | HVT_PROBE_F_MODULE | HVT_PROBE_F_RECORD) &&
          s[3].lo == hvt_name_hash("brd", 64) && s[3].hi == hvt_name_hash("brd_submit_bio", 128),
          "fbt:brd:brd_submit_bio:return: one module return spec after the layout (%zu specs)", ns);
    free(s);
    s = probe_specs_for(&l, zdesc, 1, 0, 0, &ns);
    int zok = s && ns == 3 + 3 * 3;
    for (size_t i = 3; zok && i < ns; i += 3)
        zok = s[i].kind == (HVT_PROBE_KIND_ADDR | HVT_PROBE_F_SDT | HVT_PROBE_F_MODULE | HVT_PROBE_F_RECORD) &&
              s[i].lo == hvt_name_hash("null_blk", 64) && s[i + 1].kind == HVT_PROBE_KIND_ARGS &&
              s[i + 2].kind == (HVT_PROBE_KIND_ARGS | HVT_PROBE_F_MODULE) && hvt_probe_spec_records(&s[i]) == 2;
    CHECK(zok && s[3].hi == hvt_name_hash("null_zone_write", 128) && s[5].hi == 0x4a,
          "sdt:nullb::nullb_zone_op: 3 sites, each keyed by null_blk and its function, two recipe records "
          "(the offset in the second) (%zu specs)", ns);
    CHECK(s && hvt_probe_spec_batch(s, ns, 5) == 3 && hvt_probe_spec_batch(s, ns, 7) == 6 &&
          hvt_probe_spec_batch(s, ns, 100) == ns, "a batch never ends inside a site's records");
    free(s);

    /* three modules' types joined over the kernel's: each module's ids after the previous one's,
     * its records' type ids and names moved with them */
    {
        char p1[4096], p2[4096], p3[4096];
        snprintf(p1, sizeof p1, "%s/kernel/drivers/block/brd.ko", argv[2]);
        snprintf(p2, sizeof p2, "%s/kernel/drivers/block/loop.ko", argv[2]);
        snprintf(p3, sizeof p3, "%s/kernel/drivers/block/null_blk/null_blk.ko", argv[2]);
        const char *ps[] = { p1, p2, p3 }, *nms[] = { "brd", "loop", "null_blk" };
        kmod_btfs mb;
        int ok = kmod_btfs_read(ps, nms, 3, &ki.btf, &mb, err, sizeof err) == 0;
        CHECK(ok && mb.r[0].lo == ki.btf.ntypes && mb.r[1].lo == mb.r[0].hi && mb.r[2].lo == mb.r[1].hi &&
              mb.r[2].hi == mb.btf.ntypes, "brd, loop, null_blk joined: ids %u..%u, %u..%u, %u..%u (%s)", ok ? mb.r[0].lo : 0,
              ok ? mb.r[0].hi : 0, ok ? mb.r[1].lo : 0, ok ? mb.r[1].hi : 0, ok ? mb.r[2].lo : 0, ok ? mb.r[2].hi : 0, err);
        /* each module's struct, found in its own range, its members named and typed as its own file has them */
        uint32_t bd = ok ? btf_find_struct(&mb.btf, "brd_device") : 0, nc = ok ? btf_find_struct(&mb.btf, "nullb_cmd") : 0;
        uint32_t ld = ok ? btf_find_struct(&mb.btf, "loop_device") : 0;
        btf_member bm, nm2, lm;
        char t1[128] = "", t2[128] = "", t3[128] = "";
        if (bd && !btf_member_find(&mb.btf, bd, "brd_number", &bm)) btf_type_str(&mb.btf, bm.type_id, t1, sizeof t1);
        if (nc && !btf_member_find(&mb.btf, nc, "nq", &nm2)) btf_type_str(&mb.btf, nm2.type_id, t2, sizeof t2);
        if (ld && !btf_member_find(&mb.btf, ld, "lo_backing_file", &lm)) btf_type_str(&mb.btf, lm.type_id, t3, sizeof t3);
        CHECK(bd >= mb.r[0].lo && bd < mb.r[0].hi && ld >= mb.r[1].lo && ld < mb.r[1].hi && nc >= mb.r[2].lo &&
              nc < mb.r[2].hi && !strcmp(t1, "int") && !strcmp(t2, "struct nullb_queue*") && !strcmp(t3, "struct file*"),
              "struct brd_device (brd's) .brd_number %s, struct loop_device (loop's) .lo_backing_file %s, struct nullb_cmd "
              "(null_blk's) .nq %s", t1, t3, t2);
        uint32_t nq = ok ? btf_find_struct(&mb.btf, "nullb_queue") : 0;
        CHECK(nq >= mb.r[2].lo && nq < mb.r[2].hi, "... the type null_blk's member names is null_blk's own (moved with it)");
        if (ok)
            kmod_btfs_free(&mb);
        const char *bad[] = { argv[1] };
        CHECK(kmod_btfs_read(bad, nms, 1, &ki.btf, &mb, err, sizeof err) < 0, "a file that is no module: %s", err);
    }

    /* built-in code by its object: the pinned kernel has modules.builtin (ext4 in it) but no
     * modules.builtin.ranges; a ranges file in the kernel's format (Linux 6.12's
     * generate_builtin_ranges.awk) written here names ext4_file_open's extent ext4's, and
     * vfs_read's two modules' (a shared range) */
    char hint[400] = "";
    CHECK(kbuiltin_hint(argv[2], "fbt:ext4::entry", hint, sizeof hint) == 1 && strstr(hint, "built into this kernel") &&
          kbuiltin_hint(argv[2], "fbt:brd::entry", hint, sizeof hint) == 0 &&
          kbuiltin_hint(argv[2], "fbt:ext*::entry", hint, sizeof hint) == 0,
          "fbt:ext4:: on the pinned kernel: the reason it matches nothing (ext4 built in, no ranges); not for brd "
          "(a module), nor for a glob");
    CHECK(probe_list_name_builtin(&l, &ki.syms, argv[2], err, sizeof err) == 0 && strstr(err, "CONFIG_BUILTIN_MODULE_RANGES"),
          "the pinned kernel's package has no ranges file: nothing named (%s)", err);
    char tmpl[] = "/tmp/test_kmod.XXXXXX", rpath[600];
    CHECK(mkdtemp(tmpl) != NULL, "a temporary directory");
    snprintf(rpath, sizeof rpath, "%s/modules.builtin.ranges", tmpl);
    int64_t t0 = ksym_find(&ki.syms, "_text"), eo = ksym_find(&ki.syms, "ext4_file_open"), vr = ksym_find(&ki.syms, "vfs_read");
    uint64_t tb = ki.syms.syms[t0].addr;
    FILE *rf = fopen(rpath, "w");
    fprintf(rf, ".text 00000000-00000000 = _text\n.text %08llx-%08llx ext4\n.text %08llx-%08llx fake_a fake_b\n"
                ".data 00000000-00000000 = _sdata\n.data 00001000-00002000 ext4\n",
            (unsigned long long)(ki.syms.syms[eo].addr - tb), (unsigned long long)(ki.syms.syms[eo].addr - tb + 1),
            (unsigned long long)(ki.syms.syms[vr].addr - tb), (unsigned long long)(ki.syms.syms[vr].addr - tb + 1));
    fclose(rf);
    int named = probe_list_name_builtin(&l, &ki.syms, tmpl, err, sizeof err);
    size_t ext4 = 0, eok = 0, fakeb = 0, kern = 0;
    for (size_t i = 0; i < l.n; i++) {
        ext4 += probe_desc_match(&l.p[i], "fbt:ext4::entry");
        eok += probe_desc_match(&l.p[i], "fbt:ext4:ext4_file_open:entry");
        fakeb += probe_desc_match(&l.p[i], "fbt:fake_b:vfs_read:");
        kern += probe_desc_match(&l.p[i], "fbt:kernel:ext4_file_open:entry");
    }
    CHECK(named == 4 && ext4 == 1 && eok == 1 && fakeb == 2 && kern == 1,
          "ranges: %d probes named; fbt:ext4::entry matches %zu (ext4_file_open), fbt:fake_b:vfs_read: %zu (entry, "
          "return: a shared range), and fbt:kernel:ext4_file_open:entry still %zu (%s)", named, ext4, fakeb, kern, err);
    CHECK(kbuiltin_hint(tmpl, "fbt:nope::entry", hint, sizeof hint) == 0, "with ranges, no hint");
    rf = fopen(rpath, "w");
    fprintf(rf, ".text 00000000-00000000 = _text\n.text 10-zz ext4\n");
    fclose(rf);
    CHECK(probe_list_name_builtin(&l, &ki.syms, tmpl, err, sizeof err) < 0 && strstr(err, ":2:"),
          "a malformed line is refused with its number: %s", err);
    rf = fopen(rpath, "w");
    fprintf(rf, ".text 00000010-00000020 ext4\n");
    fclose(rf);
    CHECK(probe_list_name_builtin(&l, &ki.syms, tmpl, err, sizeof err) < 0 && strstr(err, "anchor"),
          "a range before its section's anchor is refused: %s", err);
    unlink(rpath);
    rmdir(tmpl);

    /* a module's own tracepoints: null_blk's nullb_zone_op and nullb_report_zones */
    kmod_sdt ms;
    snprintf(path, sizeof path, "%s/kernel/drivers/block/null_blk/null_blk.ko", argv[2]);
    CHECK(kmod_sdt_read(path, &ki.btf, &ms, err, sizeof err) == 0, "null_blk.ko's tracepoints: %s", err);
    for (size_t i = 0; i < ms.t.n; i++) {
        const sdt_point *p = &ms.t.p[i];
        printf("  sdt:%s::%s nargs %d sites %u%s%s\n", p->group ? p->group : "?", p->event, p->nargs, p->nsites,
               p->unsafe ? ": " : "", p->unsafe ? p->unsafe : "");
        for (uint32_t j = 0; j < p->nsites; j++) {
            uint32_t off = 0;
            const char *fn = kmod_sdt_site_fn(&ms, p, j, &off);
            char str[256] = "";
            sdt_recipe_str(p->sites[j].recipe, p->nargs, str, sizeof str);
            printf("    %s+%#x: %s%s\n", fn ? fn : "-", off, p->sites[j].refused ? p->sites[j].refused : "", str);
        }
    }
    const sdt_point *zop = NULL, *rz = NULL;
    for (size_t i = 0; i < ms.t.n; i++) {
        if (!strcmp(ms.t.p[i].event, "nullb_zone_op")) zop = &ms.t.p[i];
        if (!strcmp(ms.t.p[i].event, "nullb_report_zones")) rz = &ms.t.p[i];
    }
    uint32_t off0 = 0;
    const char *fn0 = zop ? kmod_sdt_site_fn(&ms, zop, 0, &off0) : NULL;
    CHECK(!strcmp(ms.name, "null_blk") && zop && rz && zop->group && !strcmp(zop->group, "nullb") &&
          zop->nargs == 3 && rz->nargs == 2 && !zop->unsafe && !rz->unsafe && zop->nsites == 3 && rz->nsites == 1,
          "null_blk: sdt:nullb::nullb_zone_op (3 args, 3 sites) and nullb_report_zones (2 args, 1 site), all decoded");
    /* objdump -dr null_blk.ko: the jump table's first entry is .text+0x4a1a, in null_zone_write
     * (.text+0x49d0) */
    CHECK(fn0 && !strcmp(fn0, "null_zone_write") && off0 == 0x4a, "its first site: %s+%#x (want null_zone_write+0x4a)",
          fn0 ? fn0 : "-", off0);
    struct hvt_sdt_arg a0;
    hvt_sdt_arg_get(zop->sites[0].recipe, 0, &a0);
    CHECK(a0.op == HVT_SDT_REG && a0.reg == 12, "... its cmd argument: the site's r12");
    kmod_sdt_free(&ms);
    snprintf(path, sizeof path, "%s/kernel/drivers/block/brd.ko", argv[2]);
    CHECK(kmod_sdt_read(path, &ki.btf, &ms, err, sizeof err) == 0 && ms.t.n == 0, "brd.ko: no tracepoint of its own");
    kmod_sdt_free(&ms);

    /* the io provider */
    kimg k;
    sdt_table t = { 0 };
    io_table io;
    CHECK(kimg_load(&k, argv[1]) == 0 && sdt_build(&k, &ki.syms, &ki.btf, &t, err, sizeof err) == 0 &&
          probe_list_add_sdt(&l, &t) == 0 && probe_list_add_io(&l, &t, &ki.btf, &io, err, sizeof err) == 0,
          "sdt and io probes: %s", err);
    const sdt_point *q = sdt_find(&t, "block_bio_queue"), *bc = sdt_find(&t, "block_bio_complete"),
                    *rc = sdt_find(&t, "block_rq_complete");
    struct hvt_sdt_arg s0, q0;
    hvt_sdt_arg_get(io.pt[0].sites[0].recipe, 0, &s0);
    hvt_sdt_arg_get(q->sites[0].recipe, 0, &q0);
    CHECK(io.pt[0].nsites == q->nsites && !memcmp(&s0, &q0, sizeof s0) && io.pt[1].nsites == bc->nsites + rc->nsites, "start: %u sites (block_bio_queue %u), done: %u (%u + %u)",
          io.pt[0].nsites, q->nsites, io.pt[1].nsites, bc->nsites, rc->nsites);
    btf_member m;
    btf_member_find(&ki.btf, btf_find_struct(&ki.btf, "request"), "bio", &m);
    int ok = 1;
    for (uint32_t i = 0; i < io.pt[1].nsites; i++) {
        struct hvt_sdt_arg a0, a1, a2, src;
        const uint64_t *r = io.pt[1].sites[i].recipe;
        char str[256];
        sdt_recipe_str(r, 3, str, sizeof str);
        printf("  io:::done site %#llx: %s\n", (unsigned long long)io.pt[1].sites[i].site, str);
        ok &= hvt_sdt_recipe_check(r) == 0 && !hvt_sdt_arg_get(r, 0, &a0) && !hvt_sdt_arg_get(r, 1, &a1) &&
              !hvt_sdt_arg_get(r, 2, &a2) && !memcmp(&a0, &a1, sizeof a0) && a2.op == HVT_SDT_IMM && a2.disp == 0;
        if (i < bc->nsites) {
            hvt_sdt_arg_get(bc->sites[i].recipe, 1, &src);
            ok &= !memcmp(&a0, &src, sizeof a0);
        } else {
            hvt_sdt_arg_get(rc->sites[i - bc->nsites].recipe, 0, &src);
            ok &= a0.op == HVT_SDT_LOAD && a0.size == 3 && a0.reg == src.reg &&
                  a0.disp == (src.op == HVT_SDT_LEA ? src.disp : 0) + (int32_t)(m.bit_offset / 8);
        }
    }
    CHECK(ok, "done's recipes: arg0 = arg1 = the bio (block_bio_complete's 2nd argument; [request + %llu] at "
          "block_rq_complete), arg2 = 0", (unsigned long long)(m.bit_offset / 8));
    uint64_t out[3];
    uint64_t in[3] = { 0 };
    struct hvt_sdt_arg cut = { .op = HVT_SDT_REG, .reg = 3, .size = 2 };
    hvt_sdt_arg_put(in, 0, &cut);
    CHECK(io_recipe(in, 0, 1, 8, out) < 0, "a request cut to 4 bytes is no register to load its bio from");
    int names = 0;
    for (size_t i = 0; i < l.n; i++)
        if (!strcmp(l.p[i].provider, "io"))
            names += (!strcmp(l.p[i].name, "wait-start") && !l.p[i].unsafe && l.p[i].kind == PL_ENTRY &&
                      l.p[i].lo == ki.syms.syms[ksym_find(&ki.syms, "submit_bio_wait")].addr) ||
                     (!strcmp(l.p[i].name, "wait-done") && !l.p[i].unsafe && l.p[i].kind == PL_RETURN &&
                      l.p[i].lo == ki.syms.syms[ksym_find(&ki.syms, "submit_bio_wait")].addr) ||
                     ((!strcmp(l.p[i].name, "start") || !strcmp(l.p[i].name, "done")) && !l.p[i].unsafe);
    CHECK(names == 4, "io:::start, done, wait-start and wait-done (submit_bio_wait's entry and returns) offered");
    /* the kernel's own tracepoints in modules' code: block_split in dm-mod (dm_split_and_process_bio)
     * is armed there too; fdb_delete, which only the bridge module calls, is a probe now */
    {
        probe_list l2;                     /* as hvt lists them: the kernel's sdt, then the modules */
        CHECK(probe_list_build(&ki.syms, &l2) == 0 && probe_list_add_sdt(&l2, &t) == 0 &&
              probe_list_add_kmods(&l2, &ki.btf, &ki.syms, argv[2], err, sizeof err) > 100, "the list: %s", err);
        const probe_desc *bs = NULL, *fd = NULL;
        size_t nms = 0, withms = 0;
        for (size_t i = 0; i < l2.n; i++) {
            if (!strcmp(l2.p[i].provider, "sdt") && !l2.p[i].modsdt && !strcmp(l2.p[i].name, "block_split")) bs = &l2.p[i];
            if (!strcmp(l2.p[i].provider, "sdt") && !l2.p[i].modsdt && !strcmp(l2.p[i].name, "fdb_delete")) fd = &l2.p[i];
            withms += l2.p[i].msites != NULL;
            if (l2.p[i].msites)
                printf("  sdt:%s::%s: sites in module %s%s\n", l2.p[i].module, l2.p[i].name, l2.p[i].msites->m->name,
                       l2.p[i].msites->next ? " and others" : "");
            for (const struct probe_modsite *x = l2.p[i].msites; x; x = x->next)
                nms += x->p->nsites;
        }
        printf("kernel tracepoints with sites in modules: %zu, %zu sites\n", withms, nms);
        int dm = 0;
        for (const struct probe_modsite *x = bs ? bs->msites : NULL; x; x = x->next)
            dm |= !strcmp(x->m->name, "dm_mod");
        CHECK(bs && !bs->unsafe && bs->sdt->nsites && dm, "sdt:block::block_split: the kernel's sites and dm_mod's");
        char *bdesc[] = { "sdt:block::block_split" };
        s = probe_specs_for(&l2, bdesc, 1, 0, 0, &ns);
        size_t kern = 0, mod = 0;
        for (size_t i = 0; s && i < ns; i += 1 + hvt_probe_spec_records(&s[i])) {
            kern += (s[i].kind & HVT_PROBE_F_SDT) && !(s[i].kind & HVT_PROBE_F_MODULE);
            mod += (s[i].kind & HVT_PROBE_F_SDT) && (s[i].kind & HVT_PROBE_F_MODULE) && s[i].lo == hvt_name_hash("dm_mod", 64);
        }
        CHECK(s && (s[0].kind & HVT_PROBE_KIND_MASK) == HVT_PROBE_KIND_MODINFO && kern == bs->sdt->nsites && mod >= 1,
              "its specs: the module layout first, the kernel's %zu sites, dm_mod's %zu", kern, mod);
        free(s);
        CHECK(fd && !fd->unsafe && !fd->sdt->nsites && fd->msites && !strcmp(fd->msites->m->name, "bridge"),
              "sdt:bridge::fdb_delete (no site in the kernel's own code): probeable through the bridge module's");
        probe_list_free(&l2);
    }

    probe_list_free(&l);
    io_free(&io);
    sdt_free(&t);
    kimg_free(&k);
    kinfo_close(&ki);
    return check_summary("test_kmod");
}
