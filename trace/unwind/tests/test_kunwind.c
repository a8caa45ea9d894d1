/* test_kunwind: the hypervisor's ORC unwinder (trace/unwind/kunwind.c) against the host's
 * (host-tools/stacks/orc.c) on the pinned kernels' real ORC tables (paths as arguments, or
 * HVT_STACKS_KERNELS, colon-separated; none: SKIP), with synthetic guest memory: the image's
 * raw .orc_unwind_ip / .orc_unwind placed at their slid addresses, an orc_lookup index built
 * the way the kernel's unwind_init() builds it, and a stack.
 *  1. chains of real functions laid out from their own entries unwind to exactly that chain;
 *  2. 20000 random stacks (text addresses, stack addresses, junk) and random registers: both
 *     unwinders give the same pcs, exact mask, stop, guess and user registers, with the
 *     lookup index and without it;
 *  3. a table read that fails ends the unwind (stop TABLE); a broken lookup index still finds
 *     the right entries; kunwind_tables_check refuses bad descriptors;
 *  4. the host's description for the hypervisor (orc_korc) names the same tables.
 */
#include "kunwind.h"
#include "orc.h"
#include "hvt_dif.h"
#include "dif.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

static const uint64_t SLIDE = 0x2a00000ull;            /* KASLR moves in 2 MiB steps */
static const uint64_t STACK_BASE = 0xffffc90000abc000ull;
static const uint64_t LOOKUP_ADDR = 0xffffffff90000000ull;  /* the test's own place for it */
enum { STK = 4096, KERNEL_CS = 0x10, USER_CS = 0x33 };

/* Guest memory: a few regions; a read outside them (or into the "broken" one) copies nothing. */
struct region { uint64_t va; const uint8_t *p; size_t len; };
struct gmem { struct region r[4]; int n; uint64_t broken; };

static size_t gm_read(void *ctx, uint64_t va, void *buf, size_t len)
{
    struct gmem *g = ctx;
    for (int i = 0; i < g->n; i++) {
        const struct region *r = &g->r[i];
        if (va >= r->va && va - r->va <= r->len && r->len - (va - r->va) >= len) {
            if (g->broken && r->va == g->broken)
                return 0;
            memcpy(buf, r->p + (va - r->va), len);
            return len;
        }
    }
    return 0;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The kernel's __orc_find over the host's sorted rows (link addresses): index of the last row
 * at or below ip, or 0 (its "found = first"). */
static uint32_t orc_find_idx(const orc_table *t, uint64_t ip)
{
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->rows[mid].ip <= ip) lo = mid + 1;
        else hi = mid;
    }
    return lo ? (uint32_t)(lo - 1) : 0;
}

struct kernel {
    const char *rel;
    orc_table t;
    ksym_table s;
    struct kunwind_tables kt;        /* with the lookup index */
    uint32_t *lookup;
    struct gmem g;
    uint8_t stack[STK];
    struct kunwind_cache cache;      /* one for all the unwinds of a kernel: the tables stay */
};

static int same(const char *what, struct kernel *K, const struct kunwind_tables *kt, const struct orc_regs *r,
                unsigned max, int verbose)
{
    uint64_t hp[KUNWIND_MAX_DEPTH], kp[KUNWIND_MAX_DEPTH];
    orc_status hs;
    struct kunwind_result kr;
    int hn = orc_unwind(&K->t, SLIDE, r, STACK_BASE, K->stack, STK, hp, (int)max, &hs);
    struct kunwind_regs kr_in = { r->rip, r->rsp, r->rbp, r->pt_regs };
    int ok = 1;
    unsigned kn = 0;
    for (int cached = 0; cached < 3; cached++) {    /* without, with the lookup cache, and
                                                       with a mapped window of the stack's
                                                       first half too */
        struct kunwind_mem m = { gm_read, &K->g, cached ? &K->cache : NULL, cached == 2 ? K->stack : NULL,
                                 STACK_BASE, STACK_BASE + STK / 2 };
        kn = kunwind(kt, &m, &kr_in, STACK_BASE, STACK_BASE + STK, kp, max, &kr);
        ok &= hn >= 0 && kn == (unsigned)hn && kr.n == kn && !memcmp(hp, kp, kn * 8) && kr.stop == (unsigned)hs.stop &&
              kr.exact_mask == hs.exact_mask && kr.guessed == !!hs.guessed &&
              (hs.stop != ORC_STOP_USER || (kr.user_rip == hs.user_rip && kr.user_rsp == hs.user_rsp &&
                                            kr.user_rbp == hs.user_rbp));
    }
    if (!ok && verbose)
        printf("  %s: %s: host %d pcs stop %s exact %llx, hypervisor %u pcs stop %u exact %llx\n", K->rel, what, hn,
               orc_stop_name(hs.stop), (unsigned long long)hs.exact_mask, kn, kr.stop,
               (unsigned long long)kr.exact_mask);
    return ok;
}

/* 1. A chain of n frames of real functions whose entries keep the return address at sp +
 * offset - 8 (CALL, sp-based, nothing from bp): laid out leaf first. */
static void chains(struct kernel *K)
{
    int good = 0, tries = 0;
    for (int c = 0; c < 200 && tries < 200000; c++) {
        const orc_row *rows[11];
        int n = 0;
        while (n < 11 && tries++ < 200000) {
            const orc_row *r = &K->t.rows[rnd() % K->t.count];
            const orc_entry *e = &r->e;
            if (e->type != ORC_TYPE_CALL || e->signal || e->sp_reg != ORC_REG_SP || e->sp_offset < 8 ||
                e->sp_offset > 0x100 || e->bp_reg != ORC_REG_UNDEFINED || orc_find(&K->t, r->ip) != e)
                continue;
            rows[n++] = r;
        }
        if (n < 11)
            break;
        memset(K->stack, 0, STK);
        uint64_t sp = STACK_BASE, want[11];
        want[0] = rows[0]->ip + SLIDE;
        int fits = 1;
        for (int i = 0; i < 10 && fits; i++) {
            uint64_t cfa = sp + (uint64_t)rows[i]->e.sp_offset;
            if (cfa - STACK_BASE > STK) { fits = 0; break; }
            want[i + 1] = rows[i + 1]->ip + 1 + SLIDE;      /* a return address: looked up at - 1 */
            memcpy(K->stack + (cfa - 8 - STACK_BASE), &want[i + 1], 8);
            sp = cfa;
        }
        if (!fits)
            continue;
        uint64_t pcs[16];
        struct kunwind_mem m = { gm_read, &K->g, NULL, NULL, 0, 0 };
        struct kunwind_regs r = { want[0], STACK_BASE, 0, NULL };
        struct kunwind_result res;
        unsigned got = kunwind(&K->kt, &m, &r, STACK_BASE, STACK_BASE + STK, pcs, 11, &res);
        struct orc_regs hr = { want[0], STACK_BASE, 0, NULL };
        int ok = got == 11 && !memcmp(pcs, want, sizeof want) && res.stop == KUNWIND_STOP_MAX && res.exact_mask == 1 &&
                 same("chain", K, &K->kt, &hr, 11, 1);
        CHECK(ok, "%s: chain %d: %u frames, stop %u", K->rel, c, got, res.stop);
        good += ok;
    }
    CHECK(good >= 50, "%s: only %d chains of 11 frames laid out", K->rel, good);
    printf("  %s: %d chains of 11 frames unwound to their functions\n", K->rel, good);
}

/* 2. Random stacks: the two unwinders agree. */
static void garbage(struct kernel *K)
{
    struct kunwind_tables nolookup = K->kt;
    nolookup.lookup = 0;
    uint64_t regs[ORC_PT_REGS_WORDS];
    int bad = 0, bad_nl = 0;
    long frames = 0, multi = 0;
    rng = 0x9e3779b97f4a7c15ull;
    for (int it = 0; it < 20000; it++) {
        for (size_t i = 0; i < STK; i += 8) {
            uint64_t v, k = rnd() % 4;
            if (k == 0) v = K->t.rows[rnd() % K->t.count].ip + SLIDE + rnd() % 8;
            else if (k == 1) v = STACK_BASE + rnd() % (STK + 64);
            else if (k == 2) v = rnd() % 512;
            else v = rnd();
            memcpy(K->stack + i, &v, 8);
        }
        for (int i = 0; i < ORC_PT_REGS_WORDS; i++) regs[i] = STACK_BASE + rnd() % STK;
        regs[ORC_PT_CS / 8] = rnd() % 4 ? KERNEL_CS : USER_CS;
        struct orc_regs r = { K->t.rows[rnd() % K->t.count].ip + SLIDE + rnd() % 16, STACK_BASE + rnd() % 256,
                              STACK_BASE + rnd() % STK, rnd() & 1 ? regs : NULL };
        unsigned max = it % 7 == 0 ? 64 : 1 + (unsigned)(rnd() % 64);
        if (!same("random", K, &K->kt, &r, max, bad < 5)) bad++;
        if (!same("random, no lookup", K, &nolookup, &r, max, bad_nl < 5)) bad_nl++;
        uint64_t pcs[64];
        orc_status st;
        int n = orc_unwind(&K->t, SLIDE, &r, STACK_BASE, K->stack, STK, pcs, (int)max, &st);
        frames += n;
        multi += n > 2;
    }
    CHECK(!bad && !bad_nl, "%s: random stacks: %d differ (lookup), %d differ (no lookup)", K->rel, bad, bad_nl);
    CHECK(multi > 1000, "%s: only %ld random stacks had more than 2 frames", K->rel, multi);
    printf("  %s: 2 x 20000 random unwinds agree (%ld frames, %ld with more than 2)\n", K->rel, frames, multi);
}

/* 3. Failing reads, a broken index, bad descriptors. */
static void failures(struct kernel *K)
{
    uint64_t pcs[16];
    struct kunwind_result res;
    struct kunwind_mem m = { gm_read, &K->g, NULL, NULL, 0, 0 };
    /* a text address with a CALL entry: frame 0 found, then the table read fails */
    const orc_row *row = NULL;
    for (size_t i = K->t.count / 2; i < K->t.count && !row; i++)
        if (K->t.rows[i].e.type == ORC_TYPE_CALL && orc_find(&K->t, K->t.rows[i].ip) == &K->t.rows[i].e)
            row = &K->t.rows[i];
    struct kunwind_regs r = { row->ip + SLIDE, STACK_BASE, 0, NULL };
    K->g.broken = K->t.orc_addr + SLIDE;
    unsigned n = kunwind(&K->kt, &m, &r, STACK_BASE, STACK_BASE + STK, pcs, 16, &res);
    CHECK(n == 1 && res.stop == KUNWIND_STOP_TABLE, "%s: entries unreadable: %u pcs, stop %u", K->rel, n, res.stop);
    K->g.broken = K->t.ip_addr + SLIDE;
    n = kunwind(&K->kt, &m, &r, STACK_BASE, STACK_BASE + STK, pcs, 16, &res);
    CHECK(n == 1 && res.stop == KUNWIND_STOP_TABLE, "%s: ip table unreadable: %u pcs, stop %u", K->rel, n, res.stop);
    K->g.broken = LOOKUP_ADDR;
    n = kunwind(&K->kt, &m, &r, STACK_BASE, STACK_BASE + STK, pcs, 16, &res);
    CHECK(n == 1 && res.stop == KUNWIND_STOP_TABLE, "%s: lookup unreadable: %u pcs, stop %u", K->rel, n, res.stop);
    K->g.broken = 0;
    /* the stack unreadable: a READ stop after frame 0 (whatever the entry is, sp-based or bp) */
    n = kunwind(&K->kt, &m, &r, STACK_BASE + 0x100000, STACK_BASE + 0x100000 + STK, pcs, 16, &res);
    CHECK(n == 1 && (res.stop == KUNWIND_STOP_READ || res.stop == KUNWIND_STOP_BAD), "%s: no stack: %u pcs, stop %u",
          K->rel, n, res.stop);
    /* a lookup index the guest scribbled over (reversed, out of range): still the right entries */
    size_t words = K->kt.lookup_words;
    uint32_t *saved = malloc(words * 4);
    memcpy(saved, K->lookup, words * 4);
    for (size_t i = 0; i < words; i++) K->lookup[i] = i % 3 == 0 ? 0xffffffffu : i % 3 == 1 ? saved[i] + 7 : 0;
    int bad = 0;
    rng = 12345;
    for (int it = 0; it < 2000; it++) {
        struct orc_regs hr = { K->t.rows[rnd() % K->t.count].ip + SLIDE, STACK_BASE, STACK_BASE + 64, NULL };
        for (size_t i = 0; i < STK; i += 8) {
            uint64_t v = rnd() & 1 ? K->t.rows[rnd() % K->t.count].ip + SLIDE + 1 : STACK_BASE + rnd() % STK;
            memcpy(K->stack + i, &v, 8);
        }
        /* a broken index may find a wrong entry inside its block, never one outside the table:
         * compare with the whole-table search only where the block is still right */
        uint64_t b = (hr.rip - K->kt.lookup_start) / KUNWIND_LOOKUP_BLOCK;
        if (hr.rip >= K->kt.lookup_start && hr.rip < K->kt.lookup_end && b + 1 < words &&
            K->lookup[b] <= K->lookup[b + 1] && K->lookup[b + 1] < K->t.count)
            continue;                         /* a usable-looking but wrong block: skip */
        if (!same("broken lookup", K, &K->kt, &hr, 16, bad < 3)) bad++;
    }
    memcpy(K->lookup, saved, words * 4);
    free(saved);
    CHECK(!bad, "%s: broken lookup index: %d unwinds differ", K->rel, bad);

    struct kunwind_tables t = K->kt;
    CHECK(!kunwind_tables_check(&t), "%s: the good descriptor passes: %s", K->rel, kunwind_tables_check(&t));
    t.count = 0;
    CHECK(kunwind_tables_check(&t) != NULL, "count 0 refused");
    t = K->kt, t.count = KUNWIND_MAX_COUNT + 1;
    CHECK(kunwind_tables_check(&t) != NULL, "count too large refused");
    t = K->kt, t.layout = 4;
    CHECK(kunwind_tables_check(&t) != NULL, "layout 4 refused");
    t = K->kt, t.ip_table = ~0ull - 8;
    CHECK(kunwind_tables_check(&t) != NULL, "ip table wrapping refused");
    t = K->kt, t.nranges = 0;
    CHECK(kunwind_tables_check(&t) != NULL, "no ranges refused");
    t = K->kt, t.range_end[0] = t.range_start[0];
    CHECK(kunwind_tables_check(&t) != NULL, "empty range refused");
    t = K->kt, t.lookup_words = 1;
    CHECK(kunwind_tables_check(&t) != NULL, "lookup of 1 word refused");
    /* the depth bound whatever max says */
    uint64_t big[KUNWIND_MAX_DEPTH + 8];
    n = kunwind(&K->kt, &m, &r, STACK_BASE, STACK_BASE + STK, big, KUNWIND_MAX_DEPTH + 8, &res);
    CHECK(n <= KUNWIND_MAX_DEPTH, "depth bound: %u", n);
}

static void test_kernel(const char *path)
{
    static struct kernel K;
    memset(&K, 0, sizeof K);
    K.rel = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    kimg k;
    char err[256];
    memset(&k, 0, sizeof k);
    if (kimg_load(&k, path) < 0 || ksym_extract(&k, &K.s) < 0 ||
        orc_load_ex(&k, &K.s, ORC_LAYOUT_AUTO, &K.t, err, sizeof err) < 0) {
        CHECK(0, "%s: cannot load the image, its symbols or ORC tables", K.rel);
        kimg_free(&k);
        return;
    }
    /* 4. the host's description for the hypervisor */
    struct hvt_dif_korc korc;
    int rc = orc_korc(&K.t, &K.s, &korc, err, sizeof err);
    CHECK(rc == 0 && korc.lookup && korc.lookup_words > 1000 && korc.count == K.t.count &&
          korc.layout == (uint32_t)K.t.layout, "%s: orc_korc: %s", K.rel, rc ? err : "incomplete");
    const uint8_t *ipb = kimg_ptr(&k, K.t.ip_addr, K.t.count * 4);
    const uint8_t *orcb = kimg_ptr(&k, K.t.orc_addr, K.t.count * ORC_RAW_ENTRY);
    CHECK(ipb && orcb && K.t.was_sorted, "%s: raw tables in the image, sorted", K.rel);
    if (rc || !ipb || !orcb) {
        orc_free(&K.t);
        ksym_free(&K.s);
        kimg_free(&k);
        return;
    }
    /* orc_lookup as unwind_init() builds it: block i's first entry, the last one for _etext */
    K.lookup = calloc(korc.lookup_words, 4);
    for (uint32_t i = 0; i + 1 < korc.lookup_words; i++)
        K.lookup[i] = orc_find_idx(&K.t, korc.lookup_start + (uint64_t)KUNWIND_LOOKUP_BLOCK * i);
    K.lookup[korc.lookup_words - 1] = orc_find_idx(&K.t, korc.lookup_end);
    korc.lookup = LOOKUP_ADDR - SLIDE;
    dif_korc_tables(&korc, SLIDE, &K.kt);
    K.g = (struct gmem){ { { K.t.ip_addr + SLIDE, ipb, K.t.count * 4 },
                           { K.t.orc_addr + SLIDE, orcb, K.t.count * ORC_RAW_ENTRY },
                           { LOOKUP_ADDR, (const uint8_t *)K.lookup, korc.lookup_words * 4ull },
                           { STACK_BASE, K.stack, STK } }, 4, 0 };
    printf("== %s: %zu ORC entries, layout V%d, %u lookup blocks, %u text ranges\n", K.rel, K.t.count, K.t.layout,
           korc.lookup_words, korc.nranges);
    chains(&K);
    garbage(&K);
    failures(&K);
    free(K.lookup);
    orc_free(&K.t);
    ksym_free(&K.s);
    kimg_free(&k);
}

int main(int argc, char **argv)
{
    char *paths = NULL;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) test_kernel(argv[i]);
    } else if (getenv("HVT_STACKS_KERNELS") && *getenv("HVT_STACKS_KERNELS")) {
        paths = strdup(getenv("HVT_STACKS_KERNELS"));
        for (char *save = NULL, *p = strtok_r(paths, ":", &save); p; p = strtok_r(NULL, ":", &save))
            if (access(p, R_OK) == 0) test_kernel(p);
            else printf("SKIP %s: not readable\n", p);
    } else {
        printf("SKIP the ORC unwinder on a real kernel: no image (give paths or HVT_STACKS_KERNELS)\n");
    }
    free(paths);
    return check_summary("test_kunwind");
}
