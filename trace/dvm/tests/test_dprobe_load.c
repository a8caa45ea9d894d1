/* test_dprobe_load.c - trace/dprobe.c's loader under concurrent loads, on the host: two
 * threads (two CPUs issuing the guest's load hypercall, or one of them the collector's
 * HVT_CTL_D_LOAD parts) race loads of a verified image A and a forged image B of the same
 * size (A's lquantize nbuckets changed, which the verifier refuses: nbuckets is recomputed).
 * After every round: the live program, if any, is an image that verifies; one firing of it
 * leaves the guard bytes after its state untouched. Also: a zero-length part after a complete
 * load never lays the state out again under the live program.
 * dprobe.c is compiled into this file (its statics are what is checked) over the host shim
 * (tests/fuzz/host_hv/hv_api.h); the services it calls are stubbed below, the guest's memory
 * read being a plain copy (the va is a host pointer) that yields half-way. Half the rounds
 * hold A's loader in the window after its verification (as a slow state layout does on real
 * CPUs) until B's loader is done; the others run free. Each round the collector path is taken
 * by B's loader every other time. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "d_runtime.c"
#include "dif_asm.h"
#include "check.h"

/* ---- the services dprobe.c calls ---- */
const uint16_t hv_guest_fields[HV_GUEST_REG_COUNT];
uint64_t hvfuzz_vmread(enum vmcs_field f) { return 0; }
static __thread unsigned my_cpu;
static uint64_t fake_tsc = 1;
uint64_t hv_rdtsc(void) { return __atomic_add_fetch(&fake_tsc, 1000, __ATOMIC_RELAXED); }
unsigned hv_cpu_id(void) { return my_cpu; }
/* The race's window, made certain on even rounds: the loader of A, at its first
 * hv_cpu_count() after dif_verify() accepted A (finish_load), waits there until the loader of
 * B has returned; B's loader starts only once A's is in that window (or done). */
static int window_armed, in_window, b_done, a_done;
unsigned hv_cpu_count(void)
{
    if (my_cpu == 0 && __atomic_exchange_n(&window_armed, 0, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&in_window, 1, __ATOMIC_SEQ_CST);
        while (!__atomic_load_n(&b_done, __ATOMIC_SEQ_CST))
            sched_yield();
    }
    return 2;
}
uint64_t hv_rdmsr(uint32_t msr) { return 0; }
void hv_wrmsr(uint32_t msr, uint64_t v) { abort(); }
void hv_outb(uint16_t port, uint8_t v) { abort(); }
void hv_outw(uint16_t port, uint16_t v) { abort(); }
void hv_outl(uint16_t port, uint32_t v) { abort(); }
uint8_t hv_inb(uint16_t port) { abort(); }
uint16_t hv_inw(uint16_t port) { abort(); }
uint32_t hv_inl(uint16_t port) { abort(); }
void hv_guest_paging(struct gmem_paging *p) { memset(p, 0, sizeof *p); }
size_t gmem_read_gva(const struct gmem_paging *p, uint64_t gva, void *buf, size_t len)
{
    memcpy(buf, (const void *)(uintptr_t)gva, len / 2);
    sched_yield();
    memcpy((uint8_t *)buf + len / 2, (const uint8_t *)(uintptr_t)gva + len / 2, len - len / 2);
    return len;
}
/* Stack keys' unwinder (never reached: no probe fires here) */
int gmem_walk(const struct gmem_paging *p, uint64_t gva, struct gmem_xlat *out) { return GMEM_ENOTPRESENT; }
void *gmem_map_gpa(uint64_t gpa) { return NULL; }
uint64_t kaslr_slide(void) { return 0; }
/* The state's pages: each block followed by GUARD bytes of a pattern nothing may change. */
#define GUARD (1u << 20)           /* the forged image's write lands 605 KB past */
#define GUARD_BYTE 0xa5
static pthread_mutex_t alloc_mu = PTHREAD_MUTEX_INITIALIZER;
void *hv_alloc(size_t bytes)
{
    void *p = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095);
    if (p)
        memset(p, 0, bytes);
    return p;
}
static struct { uint8_t *p; size_t len; } blocks[64];
static int nblocks;
void *hv_alloc_pages(size_t npages)
{
    size_t len = npages * 4096;
    uint8_t *p = aligned_alloc(4096, len + GUARD);
    memset(p, 0, len);
    memset(p + len, GUARD_BYTE, GUARD);
    pthread_mutex_lock(&alloc_mu);
    if (nblocks < 64)
        blocks[nblocks++] = (typeof(blocks[0])){ p, len };
    pthread_mutex_unlock(&alloc_mu);
    return p;
}
void spin_lock(struct spinlock *l)
{
    while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}
void spin_unlock(struct spinlock *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELEASE); }
unsigned probe_armed(void) { return 0; }
unsigned probe_nprofiles;                 /* no profile armed */
void probe_set_action(probe_action_fn fn) {}
void probe_set_action_args(bool need) {}
void probe_kernel_paging(struct gmem_paging *pg) { memset(pg, 0, sizeof *pg); }
struct task_cpu task_cpus[HVT_MAX_CPUS];  /* no slot: probe_current takes the slow path */
struct task_who task_whos[HVT_MAX_CPUS];
const char *probe_current_slow(unsigned cpu, uint32_t *pid, uint32_t *tid) { *pid = *tid = 1; return "t"; }
uint64_t task_current(unsigned cpu) { return 0; }
void step_request_reason(bool on, unsigned reason) {}
bool step_request_thread(uint32_t tid, uint64_t end_rip, uint64_t end_rsp, unsigned reason) { return true; }
void trace_sink_debug_blob(const char *head, const void *p, size_t len) {}
enum trace_sink_sent trace_sink_message(unsigned cpu, uint16_t type, const void *p, size_t len)
{
    return TRACE_SINK_SENT;
}

/* ---- the images ---- */

static uint8_t *img_a, *img_b;
static size_t img_len;

/* lquantize(100000, 0, 10, 1) with weight 0x41414141: 12 buckets (below, 10 levels, above).
 * With nbuckets 1 the interpreter would take levels = 2^32 - 1 and add the weight 800 KB past
 * the entry. */
static void make_images(void)
{
    a_new();
    a_agg(HVT_DIF_AGG_LQUANTIZE, 0, 0, 0, 0, 10, 1, 0, 12);
    a_i(HVT_DIF_OP_TCLR, 0, 0, 0, 0);
    a_i(HVT_DIF_OP_LDI, 1, 0, 0, 100000);
    a_i(HVT_DIF_OP_LDI, 2, 0, 0, 0x41414141);
    a_i(HVT_DIF_OP_AGGW, 0, 1, 2, 0);
    a_end();
    a_probe(1, 1, 0);
    img_a = a_build(&img_len);
    struct dif_verr e;
    if (dif_verify(img_a, img_len, &e) != DIF_OK) {
        printf("image A refused: clause %d insn %d: %s\n", e.clause, e.insn, e.reason);
        exit(2);
    }
    img_b = malloc(img_len);
    memcpy(img_b, img_a, img_len);
    struct hvt_dif_hdr h;
    memcpy(&h, img_a, sizeof h);
    uint32_t one = 1;
    memcpy(img_b + h.off_aggs + offsetof(struct hvt_dif_agg, nbuckets), &one, sizeof one);
    if (dif_verify(img_b, img_len, &e) == DIF_OK) {
        printf("image B accepted\n");
        exit(2);
    }
}

/* ---- the checks ---- */
static bool guards_intact(void)
{
    static uint8_t want[GUARD];
    if (!want[0])
        memset(want, GUARD_BYTE, GUARD);
    for (int i = 0; i < nblocks; i++) {
        if (!memcmp(blocks[i].p + blocks[i].len, want, GUARD))
            continue;
        for (size_t j = 0; j < GUARD; j++)
            if (blocks[i].p[blocks[i].len + j] != GUARD_BYTE) {
                printf("  guard byte changed %zu bytes past a state block of %zu\n", j,
                       blocks[i].len);
                return false;
            }
    }
    return true;
}

/* The live program (nothing in flight): its image verifies, one firing stays in bounds. */
static bool check_live(long round)
{
    if (!__atomic_load_n(&loaded, __ATOMIC_SEQ_CST))
        return true;
    struct dif_verr e;
    bool ok = dif_verify(hdr, img_len, &e) == DIF_OK;
    CHECK(ok, "round %ld: the live image does not verify (%s)", round, e.reason);
    struct dif_firing f;
    memset(&f, 0, sizeof f);
    f.execname = "t";
    f.execname_max = 1;
    my_cpu = 0;
    dif_fire(st, 0, 1, &f);
    bool intact = guards_intact();
    CHECK(intact, "round %ld: a firing wrote past its state", round);
    ok = ok && intact;
    return ok;
}

/* ---- the race ---- */
static pthread_barrier_t start, done;
static volatile bool stop;
static long rounds;
static int results[2][16];

/* Thread 0 loads A, thread 1 B; thread 1 as the collector (two parts) on odd rounds. */
static int load_as_collector(const uint8_t *img)
{
    static uint8_t args[2][sizeof(struct hvt_d_load) + 8192];
    uint32_t half = (uint32_t)img_len / 2;
    uint8_t out[sizeof(struct hvt_d_status)];
    uint32_t out_len;
    for (uint32_t off = 0; off < img_len; off += half) {
        uint32_t n = off + half > img_len ? (uint32_t)img_len - off : half;
        struct hvt_d_load h = { .offset = off, .total = (uint32_t)img_len };
        memcpy(args[0], &h, sizeof h);
        memcpy(args[0] + sizeof h, img + off, n);
        dprobe_ctl_handle(HVT_CTL_D_LOAD, args[0], (uint32_t)sizeof h + n, out, &out_len);
        struct hvt_d_status s;
        memcpy(&s, out, sizeof s);
        if (s.error)
            return s.error;
        sched_yield();
    }
    return 0;
}

static void *loader(void *arg)
{
    unsigned who = (unsigned)(uintptr_t)arg;
    my_cpu = who;
    for (;;) {
        pthread_barrier_wait(&start);
        if (stop)
            return NULL;
        const uint8_t *img = who ? img_b : img_a;
        if (who == 1 && rounds % 4 < 2)
            while (!__atomic_load_n(&in_window, __ATOMIC_SEQ_CST) &&
                   !__atomic_load_n(&a_done, __ATOMIC_SEQ_CST))
                sched_yield();
        int rc = who && rounds % 2 ? load_as_collector(img)
                                   : dprobe_load_guest((uint64_t)(uintptr_t)img, (uint32_t)img_len);
        results[who][-rc & 15]++;
        __atomic_store_n(who ? &b_done : &a_done, 1, __ATOMIC_SEQ_CST);
        pthread_barrier_wait(&done);
    }
}

static void test_race(long n)
{
    pthread_t t[2];
    pthread_barrier_init(&start, NULL, 3);
    pthread_barrier_init(&done, NULL, 3);
    for (uintptr_t i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, loader, (void *)i);
    long bad = 0, live_a = 0;
    for (rounds = 0; rounds < n && bad < 5; rounds++) {
        window_armed = rounds % 4 < 2;
        in_window = b_done = a_done = 0;
        pthread_barrier_wait(&start);
        pthread_barrier_wait(&done);
        window_armed = 0;
        if (!check_live(rounds))
            bad++;
        else if (__atomic_load_n(&loaded, __ATOMIC_SEQ_CST))
            live_a++;
    }
    stop = true;
    pthread_barrier_wait(&start);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("race: %ld rounds, %ld with A live, %ld bad; A's results 0:%d busy:%d, B's verify-refused:%d busy:%d\n",
           rounds, live_a, bad, results[0][0], results[0][-HVT_D_EBUSY], results[1][-HVT_D_EVERIFY],
           results[1][-HVT_D_EBUSY]);
}

/* A complete collector load, then a zero-length part at offset == total: refused, and the
 * live program's state is not laid out again (a count it holds survives). */
static void test_zero_part(void)
{
    my_cpu = 0;
    int rc;
    for (int tries = 0; (rc = load_as_collector(img_a)) == HVT_D_EBUSY && tries < 100; tries++)
        ;
    CHECK(!rc && loaded, "zero-length part: the collector's load of A: %d", rc);
    if (rc || !loaded)
        return;
    struct dif_firing f;
    memset(&f, 0, sizeof f);
    f.execname = "t";
    dif_fire(st, 0, 1, &f);
    uint8_t snap[4096];
    uint32_t cursor = 0;
    long before = dif_agg_snapshot(st, 0, snap, sizeof snap, &cursor);
    struct hvt_d_load h = { .offset = (uint32_t)img_len, .total = (uint32_t)img_len };
    uint8_t out[sizeof(struct hvt_d_status)];
    uint32_t out_len;
    dprobe_ctl_handle(HVT_CTL_D_LOAD, (const uint8_t *)&h, sizeof h, out, &out_len);
    struct hvt_d_status s;
    memcpy(&s, out, sizeof s);
    cursor = 0;
    long after = dif_agg_snapshot(st, 0, snap, sizeof snap, &cursor);
    CHECK(s.error == HVT_D_EORDER, "zero-length part after a complete load: error %d, want EORDER", s.error);
    CHECK(after == before && after > 0, "zero-length part after a complete load: the state was laid out again "
             "(snapshot %ld bytes before, %ld after)", before, after);
}

/* enter()/unload() as a store-buffering litmus test on two threads: one unloads, the other
 * enters, released together; unload() seeing no CPU inside while enter() got the program is
 * the outcome that must never happen (the loader would lay the state out under that CPU).
 * With release/acquire only, x86 allows it: it shows whenever the two threads really run at
 * once on two cores. */
static long sb_go, sb_done, sb_bad;
static int sb_unloaded[2];
static void *sb_enterer(void *arg)
{
    for (long i = 1;; i++) {
        long go;
        for (unsigned n = 0; (go = __atomic_load_n(&sb_go, __ATOMIC_ACQUIRE)) != i && go != -1; n++)
            if (n % 4096 == 4095)
                sched_yield();             /* the other thread is not running: let it */
        if (go == -1)
            return NULL;
        sb_unloaded[1] = enter();
        __atomic_store_n(&sb_done, i, __ATOMIC_RELEASE);
    }
}
static void test_handshake(long iters, long seconds)
{
    time_t deadline = time(NULL) + seconds;
    pthread_t t;
    pthread_create(&t, NULL, sb_enterer, NULL);
    for (long i = 1; i <= iters; i++) {
        __atomic_store_n(&loaded, true, __ATOMIC_SEQ_CST);
        __atomic_store_n(&inflight, 0, __ATOMIC_SEQ_CST);
        __atomic_store_n(&sb_go, i, __ATOMIC_RELEASE);
        sb_unloaded[0] = unload();
        for (unsigned n = 0; __atomic_load_n(&sb_done, __ATOMIC_ACQUIRE) != i; n++)
            if (n % 4096 == 4095)
                sched_yield();
        if (sb_unloaded[0] && sb_unloaded[1])
            sb_bad++;
        if (i % 1024 == 0 && time(NULL) > deadline)
            iters = i;
    }
    __atomic_store_n(&sb_go, -1, __ATOMIC_RELEASE);
    pthread_join(t, NULL);
    __atomic_store_n(&loaded, false, __ATOMIC_SEQ_CST);
    __atomic_store_n(&inflight, 0, __ATOMIC_SEQ_CST);
    printf("handshake: %ld rounds, %ld with both the unloader and a user inside\n", iters, sb_bad);
    CHECK(!sb_bad, "enter()/unload(): the store-buffering outcome happened %ld times", sb_bad);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 5000;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (dprobe_init())
        return 2;
    make_images();
    test_race(n);
    test_zero_part();
    test_handshake(argc > 2 ? atol(argv[2]) : 2000000, argc > 3 ? atol(argv[3]) : 8);
    return check_summary("test_dprobe_load");
}
