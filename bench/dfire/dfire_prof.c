/*
 * dfire_prof.c - a D program's firing path (trace/dvm/d_runtime.c's action, dif_fire, the lean
 * path) run on the host, for callgrind: load an image (hvt --image-out), fire its first probe N
 * times with fbt-like arguments and a 16-byte process name. The hypervisor's flags (no SSE,
 * no builtins: the freestanding memcpy/memset below, whose rep iterations Bochs counts one by
 * one) keep the instruction counts close to bench-probe's (within a few percent per layer; the
 * probe engine's part and the exit are not here; the action is the one the runtime gives the
 * engine for the image). bench/dfire/prof.sh prints instructions per firing by function. A tool for finding where a firing's instructions go, not a test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "d_runtime.c"        /* its statics: on_fire, the loader */
#include "dif_impl.h"

/* the hypervisor's string routines (rep movs/stos: every iteration an instruction in Bochs) */
#define STRING_BULK 64
void *memcpy(void *d, const void *s, size_t n)
{
    void *ret = d;
    if (n >= STRING_BULK) { size_t q = n / 8; n %= 8;
        __asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(q) :: "memory"); }
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) :: "memory");
    return ret;
}
void *memset(void *d, int c, size_t n)
{
    void *ret = d;
    if (n >= STRING_BULK) { size_t q = n / 8; n %= 8;
        __asm__ volatile("rep stosq" : "+D"(d), "+c"(q) : "a"(0x0101010101010101ull * (uint8_t)c) : "memory"); }
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
    return ret;
}

const uint16_t hv_guest_fields[HV_GUEST_REG_COUNT];
uint64_t hvfuzz_vmread(enum vmcs_field f) { return 0; }
static uint64_t fake_tsc = 1;
uint64_t hv_rdtsc(void) { return fake_tsc += 1000; }
unsigned hv_cpu_id(void) { return 0; }
unsigned hv_cpu_count(void) { return 1; }
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
    memcpy(buf, (const void *)(uintptr_t)gva, len);
    return len;
}
int gmem_walk(const struct gmem_paging *p, uint64_t gva, struct gmem_xlat *out) { return GMEM_ENOTPRESENT; }
void *gmem_map_gpa(uint64_t gpa) { return NULL; }
uint64_t kaslr_slide(void) { return 0; }
void *hv_alloc(size_t bytes) { void *p = aligned_alloc(4096, (bytes + 4095) & ~(size_t)4095); if (p) memset(p, 0, bytes); return p; }
void *hv_alloc_pages(size_t npages) { void *p = aligned_alloc(4096, npages * 4096); memset(p, 0, npages * 4096); return p; }
void spin_lock(struct spinlock *l) { while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE)); }
void spin_unlock(struct spinlock *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELEASE); }
unsigned probe_armed(void) { return 0; }
unsigned probe_nprofiles;
static probe_action_fn action;          /* the one the runtime chose at the load */
void probe_set_action(probe_action_fn fn) { action = fn; }
void probe_set_action_args(bool need) {}
void probe_kernel_paging(struct gmem_paging *pg) { memset(pg, 0, sizeof *pg); }
struct task_cpu task_cpus[HVT_MAX_CPUS];
struct task_who task_whos[HVT_MAX_CPUS];
const char *probe_current_slow(unsigned cpu, uint32_t *pid, uint32_t *tid) { *pid = *tid = 1; return "t"; }
uint64_t task_current(unsigned cpu) { return 0; }
void step_request_reason(bool on, unsigned reason) {}
void step_request_thread(uint32_t tid, uint64_t end_rip, uint64_t end_rsp, unsigned reason) {}
void trace_sink_debug_blob(const char *head, const void *p, size_t len) {}
enum trace_sink_sent trace_sink_message(unsigned cpu, uint16_t type, const void *p, size_t len) { return TRACE_SINK_SENT; }

__attribute__((noinline)) void fire_once(uint32_t id, const uint64_t *arg, const struct probe_who *who, struct guest_regs *g)
{
    action(id, 0, 0, 0xffffffff81000000ull, arg, who, g);
}

int main(int argc, char **argv)
{
    static uint64_t gsarea[64];
    syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)gsarea);
    FILE *f = fopen(argv[1], "rb");
    static uint8_t buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    long reps = argc > 2 ? atol(argv[2]) : 10000;
    if (dprobe_init()) { printf("init\n"); return 1; }
    int rc = dprobe_load_guest((uint64_t)(uintptr_t)buf, (uint32_t)n);
    if (rc) { printf("load %d %s\n", rc, status.why); return 1; }
    uint32_t id = hdr->nprobes ? st->probes[0].id : 1;
    printf("probes %u id %u\n", hdr->nprobes, id);
    static const char comm[16] = "probe-bench";
    struct probe_who who = { comm, 100, 100, 0xffff888000000000ull, NULL };
    struct guest_regs g;
    memset(&g, 0, sizeof g);
    uint64_t arg[6] = { 1, 2, 4096, 0, 0, 0 };
    for (long i = 0; i < reps; i++) {
        fire_once(id, arg, &who, &g);
        if ((i & 1023) == 1023) { st->cpus[0].buf_tail = st->cpus[0].buf_head = 0; }
    }
    printf("fires %lu buf_tail %u agg_used %u\n", (unsigned long)status.fires, st->cpus[0].buf_tail, st->cpus[0].agg_used);
    return 0;
}
