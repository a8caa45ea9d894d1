/* test_sdt - the static tracepoints of the pinned 6.1 kernel, read from its vmlinuz alone
 * (host-tools/probes/sdt.h): the jump table's tracepoint entries, the groups, and the argument
 * recipes the block decoder derives for the scheduler's tracepoints, each compared with the
 * block's instructions as objdump shows them (mov -0x44(%rbp),%esi; mov %r13,%rdx; mov
 * %r12,%rcx; mov -0x48(%rbp),%r8d at sched_switch's site in __schedule; mov %rbp,%rsi and
 * mov %rbx,%rsi at sched_wakeup's two; a TEST/SETNE bool at signal_generate's). Also the recipe
 * checks the hypervisor applies to what it is sent (include/hvt_hypercall.h).
 * Usage: test_sdt VMLINUZ */
#include "sdt.h"
#include "probe_list.h"
#include "kinfo.h"
#include "check.h"
#include "hvt_hypercall.h"
#include <string.h>

static const sdt_point *point(const sdt_table *t, const char *ev)
{
    const sdt_point *p = sdt_find(t, ev);
    CHECK(p != NULL, "tracepoint %s not found", ev);
    return p;
}

/* Every site of ev decodes, and the recipe of site i is the i-th of want's ';'-separated
 * recipes (NULL: not compared). */
static void plain(const sdt_table *t, const char *ev, const char *group, int nargs, const char *want)
{
    const sdt_point *p = point(t, ev);
    if (!p)
        return;
    CHECK(p->group && !strcmp(p->group, group), "%s: group %s, want %s", ev, p->group ? p->group : "(none)", group);
    CHECK(p->nargs == nargs, "%s: %d arguments, want %d", ev, p->nargs, nargs);
    CHECK(p->nsites > 0 && !p->unsafe, "%s: %u sites, %s", ev, p->nsites, p->unsafe ? p->unsafe : "all plain");
    for (uint32_t i = 0; i < p->nsites; i++) {
        char r[256];
        sdt_recipe_str(p->sites[i].recipe, p->nargs, r, sizeof r);
        printf("  %-20s site %#llx block %#llx: %s\n", ev, (unsigned long long)p->sites[i].site,
               (unsigned long long)p->sites[i].block, p->sites[i].refused ? p->sites[i].refused : r);
        if (want) {
            const char *w = want;
            for (uint32_t j = 0; j < i && w; j++)
                w = strchr(w, ';') ? strchr(w, ';') + 1 : NULL;
            size_t wl = w ? strcspn(w, ";") : 0;
            CHECK(w && strlen(r) == wl && !strncmp(r, w, wl), "%s site %u: recipe \"%s\", want \"%.*s\"", ev, i,
                  r, (int)wl, w ? w : "");
        }
    }
}

static void recipe_checks(void)
{
    uint64_t w[3] = { 0 };
    struct hvt_sdt_arg a = { .op = HVT_SDT_LOAD, .reg = 5, .size = 2, .sign = 0, .disp = -0x44 }, b;
    for (unsigned i = 0; i < HVT_SDT_ARGS; i++) {
        a.reg = (uint8_t)(i * 3 % 16);
        a.disp = -0x44 - (int32_t)i * 100003;
        hvt_sdt_arg_put(w, i, &a);
    }
    CHECK(hvt_sdt_recipe_check(w) == 0, "five loads: a good recipe");
    int same = 1;
    for (unsigned i = 0; i < HVT_SDT_ARGS; i++)
        same &= !hvt_sdt_arg_get(w, i, &b) && b.op == HVT_SDT_LOAD && b.reg == i * 3 % 16 && b.size == 2 &&
                b.disp == -0x44 - (int32_t)i * 100003;
    CHECK(same, "five rules read back as written (across the word boundaries)");
    /* raw rules: op 4 bits, reg 4, size 2, sign 1, disp 27 (include/hvt_hypercall.h) */
#define RAW(op, reg, size, sign, disp) \
    ((uint64_t)(op) | (uint64_t)(reg) << 4 | (uint64_t)(size) << 8 | (uint64_t)(sign) << 10 | \
     ((uint64_t)(disp) & ((1u << HVT_SDT_DISP_BITS) - 1)) << 11)
    uint64_t ok1[3] = { RAW(HVT_SDT_PCPU, 0, 3, 0, 0x35000) | RAW(HVT_SDT_Z, 14, 2, 0, 1) << HVT_SDT_ARG_BITS, 0, 0 };
    CHECK(hvt_sdt_recipe_check(ok1) == 0, "a per-CPU load and a compare with 1: a good recipe");
    uint64_t bad[3] = { RAW(9, 0, 0, 0, 0), 0, 0 };
    CHECK(hvt_sdt_recipe_check(bad), "op 9 refused");
    uint64_t top[3] = { 0, 0, 1ull << 62 };
    CHECK(hvt_sdt_recipe_check(top), "bits past the fifth rule refused");
    uint64_t none[3] = { RAW(HVT_SDT_NONE, 1, 0, 0, 0), 0, 0 };
    CHECK(hvt_sdt_recipe_check(none), "a NONE rule with a register refused");
    uint64_t regd[3] = { RAW(HVT_SDT_REG, 3, 3, 0, 8), 0, 0 };
    CHECK(hvt_sdt_recipe_check(regd), "a REG rule with a displacement refused");
    uint64_t imm[3] = { RAW(HVT_SDT_IMM, 3, 3, 0, 1), 0, 0 };
    CHECK(hvt_sdt_recipe_check(imm), "an IMM rule naming a register refused");
    uint64_t pcpu[3] = { RAW(HVT_SDT_PCPU, 5, 3, 0, 0x35000), 0, 0 };
    CHECK(hvt_sdt_recipe_check(pcpu), "a PCPU rule naming a register refused");
    uint64_t zs[3] = { RAW(HVT_SDT_Z, 5, 2, 1, 1), 0, 0 };
    CHECK(hvt_sdt_recipe_check(zs), "a Z rule with a sign refused");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_sdt VMLINUZ\n");
        return 2;
    }
    recipe_checks();
    kinfo ki;
    kimg k;
    sdt_table t;
    char err[300];
    if (kinfo_open(&ki, argv[1], 1) || kimg_load(&k, argv[1]) ||
        sdt_build(&k, &ki.syms, &ki.btf, &t, err, sizeof err)) {
        CHECK(0, "cannot read the tracepoints of %s", argv[1]);
        return check_summary("test-sdt");
    }
    size_t with_site = 0, ok = 0, all_ok = 0, grouped = 0;
    for (size_t i = 0; i < t.n; i++) {
        const sdt_point *p = &t.p[i];
        size_t good = 0;
        for (uint32_t j = 0; j < p->nsites; j++)
            good += !p->sites[j].refused;
        with_site += p->nsites > 0;
        grouped += p->group != NULL;
        ok += good;
        all_ok += p->nsites && good == p->nsites;
    }
    printf("tracepoints %zu, with a trace event (group) %zu, jump-table entries %zu on %zu tracepoints; "
           "sites decoded %zu; tracepoints with every site decoded %zu (the review's objdump count: 448)\n",
           t.n, grouped, t.entries, with_site, ok, all_ok);
    /* the review's objdump figures on this image (docs/probes.md) */
    CHECK(t.n == 693, "%zu __tracepoint_ symbols, want 693", t.n);
    CHECK(t.entries == 1539, "%zu jump-table entries of tracepoints, want 1539", t.entries);
    CHECK(with_site == 663, "%zu tracepoints with a site, want 663", with_site);
    CHECK(all_ok >= 448, "%zu tracepoints with every site decoded, the review found 448 of the plain form", all_ok);
    plain(&t, "sched_switch", "sched", 4, "[rbp-68]:4 r13 r12 [rbp-72]:4");
    plain(&t, "sched_wakeup", "sched", 1, "rbp;rbx");   /* mov %rbp,%rsi in try_to_wake_up's block */
    plain(&t, "sched_process_fork", "sched", 2, NULL);
    plain(&t, "sched_process_exec", "sched", 3, NULL);
    plain(&t, "sched_process_exit", "sched", 1, NULL);
    const sdt_point *se = point(&t, "sys_enter");
    CHECK(se && se->group && !strcmp(se->group, "raw_syscalls") && se->unsafe && strstr(se->unsafe, "slow path"),
          "sys_enter: group raw_syscalls, refused (the slow path): %s", se && se->unsafe ? se->unsafe : "offered");
    for (uint32_t i = 0; se && i < se->nsites; i++)
        CHECK(!se->sites[i].refused, "sys_enter site %u decodes (refused for the path, not the block)", i);
    plain(&t, "block_rq_issue", "block", 1, NULL);
    plain(&t, "kfree_skb", "skb", 3, NULL);
    /* test %ebx,%ebx; setne %r8b; movzbl %r8b,%r8d (group), mov %r13d,%esi; mov %rbp,%rdx;
     * mov %r14,%rcx; mov %r12d,%r9d in __send_signal_locked's block */
    const sdt_point *sg = point(&t, "signal_generate");
    char r[256] = "";
    if (sg && sg->nsites)
        sdt_recipe_str(sg->sites[0].recipe, sg->nargs, r, sizeof r);
    CHECK(sg && !sg->unsafe && !strcmp(r, "r13:4 rbp r14 rbx!=0:4 r12:4"),
          "signal_generate site 0: \"%s\", want \"r13:4 rbp r14 rbx!=0:4 r12:4\"", r);
    /* refused, with the reason: a trace_X_enabled() helper's block calls its helper first */
    const sdt_point *m = point(&t, "mmap_lock_released");
    CHECK(m && m->unsafe && strstr(m->unsafe, "calls __mmap_lock_do_trace_released before"),
          "mmap_lock_released: %s", m && m->unsafe ? m->unsafe : "offered");
    const sdt_point *bare = point(&t, "pelt_cfs_tp");
    CHECK(bare && !bare->group && bare->unsafe, "pelt_cfs_tp (no trace event): no group, not offered");
    /* the stable providers on this kernel: every one of proc's 12, sched's 9 and lockstat's 7
     * probes has a row here; a probe's argument types are its first row's that is no helper;
     * signal-handle takes its fallback (signal_deliver's site is refused here) */
    probe_list l;
    size_t nstable = 0, nok = 0, match_fallback = 0;
    if (probe_list_build(&ki.syms, &l) == 0 && probe_list_add_sdt(&l, &t) == 0 && probe_list_add_stable(&l) == 0) {
        for (size_t i = 0; i < l.n; i++) {
            const probe_desc *d = &l.p[i];
            if (!(d->kind & PL_STABLE))
                continue;
            nstable++;
            nok += !d->unsafe && !d->stable->helper;
            if (!strcmp(d->name, "adaptive-block"))
                CHECK(d->stable->types[1] && !strcmp(d->stable->types[1], "uint64_t"), "adaptive-block's args[1] type");
        }
        for (size_t i = 0; i < l.n; i++)
            match_fallback += probe_desc_match(&l.p[i], "fbt::signal_setup_done:entry");
        probe_list_free(&l);
    }
    const sdt_point *sd = point(&t, "signal_deliver");
    CHECK(nstable == 28 && nok == 28, "stable probes listed %zu, probeable %zu, want 28", nstable, nok);
    CHECK(sd && sd->unsafe && match_fallback == 1, "signal-handle: signal_deliver refused, signal_setup_done there");
    sdt_free(&t);
    kimg_free(&k);
    kinfo_close(&ki);
    return check_summary("test-sdt");
}
