/* task.c - current-task attribution (see task.h). */
#include "task.h"
#include "hv_api.h"
#include "hv_core.h"
#include "hv_guest.h"
#include "gmem.h"
#include "cpu.h"

#define KERNEL_HALF 0xffff800000000000ull
#define MSR_IA32_KERNEL_GS_BASE 0xc0000102

static struct { bool on; uint64_t current_off, pid_off, tgid_off, comm_off; } lay;
struct task_cpu { uint64_t *slot; uint64_t last; };   /* host pointer to this CPU's current_task */
static struct task_cpu tc[HVT_MAX_CPUS];

static const char *parse_num(const char *s, uint64_t *v)
{
    uint64_t x = 0;
    int base = 10, digits = 0;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) { base = 16; s += 2; }
    for (;; s++, digits++) {
        int d = (*s >= '0' && *s <= '9') ? *s - '0' : (base == 16 && *s >= 'a' && *s <= 'f') ? *s - 'a' + 10 :
                (base == 16 && *s >= 'A' && *s <= 'F') ? *s - 'A' + 10 : -1;
        if (d < 0)
            break;
        x = x * (uint64_t)base + (uint64_t)d;
    }
    *v = x;
    return digits ? s : 0;
}

int task_config(const char *text)
{
    const char *p = text;
    while (p && *p) {
        if (!strncmp(p, "task=", 5)) {
            uint64_t v[4];
            const char *q = p + 5;
            for (int i = 0; i < 4; i++) {
                q = parse_num(q, &v[i]);
                if (!q || (i < 3 && *q++ != ':')) {
                    hv_log("hvtrace: trace option 'task=' wants CURRENT:PID:TGID:COMM offsets\n");
                    return -1;
                }
            }
            lay.current_off = v[0]; lay.pid_off = v[1]; lay.tgid_off = v[2]; lay.comm_off = v[3];
            lay.on = true;
            p = q;
        }
        while (*p && *p != ',')
            p++;
        if (*p == ',')
            p++;
    }
    return 0;
}

bool task_enabled(void) { return lay.on; }

void task_reset(unsigned cpu) { tc[cpu].slot = 0; tc[cpu].last = 0; }

/* The kernel's per-CPU base: GS while in the kernel, KERNEL_GS_BASE while in user space
 * (SWAPGS exchanges them); whichever holds a kernel-half address. */
static uint64_t percpu_base(void)
{
    uint64_t gs = hv_guest_read(HV_GUEST_GS_BASE);
    if (gs >= KERNEL_HALF)
        return gs;
    uint64_t kgs = cpu_rdmsr(MSR_IA32_KERNEL_GS_BASE);   /* not switched by VMX: the guest's */
    return kgs >= KERNEL_HALF ? kgs : 0;
}

bool task_check(unsigned cpu, struct task_info *out)
{
    struct task_cpu *t = &tc[cpu];
    if (!lay.on)
        return false;
    if (!t->slot) {
        uint64_t base = percpu_base();
        if (!base)
            return false;
        struct gmem_paging pg;
        struct gmem_xlat x;
        hv_guest_paging(&pg);
        uint64_t va = base + lay.current_off;
        if ((va & 7) || gmem_walk(&pg, va, &x))
            return false;
        uint8_t *page = gmem_map_gpa(x.gpa);
        if (!page)
            return false;
        t->slot = (uint64_t *)(page + (x.gpa & 0xfff));   /* per-CPU data never moves */
    }
    uint64_t task = *(volatile uint64_t *)t->slot;
    if (task == t->last || task < KERNEL_HALF)
        return false;
    t->last = task;
    struct gmem_paging pg;
    hv_guest_paging(&pg);
    uint32_t pid = 0, tgid = 0;
    memset(out, 0, sizeof *out);
    out->task = task;
    gmem_read_gva(&pg, task + lay.pid_off, &pid, sizeof pid);
    gmem_read_gva(&pg, task + lay.tgid_off, &tgid, sizeof tgid);
    gmem_read_gva(&pg, task + lay.comm_off, out->comm, sizeof out->comm - 1);
    out->pid = pid;
    out->tgid = tgid;
    return true;
}
