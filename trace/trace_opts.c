/* trace_opts.c - parser of the tracer's options (see trace_opts.h). Freestanding: no library
 * calls, so the host unit test compiles this very file. */
#include "trace_opts.h"

/* --- tiny string helpers (no libc in the hypervisor's view of this file) --- */

static size_t slen(const char *s) { size_t n = 0; while (s[n]) n++; return n; }

static bool item_is(const char *p, size_t n, const char *word)
{
    size_t w = slen(word);
    if (n != w)
        return false;
    for (size_t i = 0; i < n; i++)
        if (p[i] != word[i])
            return false;
    return true;
}

struct errbuf { char *s; size_t cap, len; };

static void err_put(struct errbuf *e, const char *s, size_t n)
{
    for (size_t i = 0; i < n && e->len + 1 < e->cap; i++)
        e->s[e->len++] = s[i];
    if (e->cap)
        e->s[e->len] = 0;
}

static void err_num(struct errbuf *e, uint64_t v)
{
    char b[24];
    int n = 0;
    do { b[n++] = (char)('0' + v % 10); v /= 10; } while (v);
    char r[24];
    for (int i = 0; i < n; i++)
        r[i] = b[n - 1 - i];
    err_put(e, r, (size_t)n);
}

/* Number: decimal, or hex with 0x. Returns characters used, 0 if none or overflow. */
static size_t parse_u64(const char *p, size_t n, uint64_t *v)
{
    size_t i = 0;
    unsigned base = 10;
    if (n >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        i = 2;
    }
    size_t start = i;
    uint64_t x = 0;
    for (; i < n; i++) {
        char c = p[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
                     base == 16 && c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) :
                     base == 16 && c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 99;
        if (d >= base)
            break;
        if (x > (UINT64_MAX - d) / base)
            return 0;
        x = x * base + d;
    }
    if (i == start)
        return 0;
    *v = x;
    return i;
}

/* The whole value must be one number. */
static bool whole_u64(const char *p, size_t n, uint64_t *v)
{
    return n && parse_u64(p, n, v) == n;
}

/* A list of numbers separated by 'sep' (at most max). */
static bool u64_list(const char *p, size_t n, char sep, uint64_t *out, unsigned max, unsigned *count)
{
    unsigned k = 0;
    size_t i = 0;
    while (i < n) {
        if (k == max)
            return false;
        size_t used = parse_u64(p + i, n - i, &out[k]);
        if (!used)
            return false;
        k++;
        i += used;
        if (i < n) {
            if (p[i] != sep || i + 1 == n)
                return false;
            i++;
        }
    }
    *count = k;
    return k > 0;
}

static const char *one_item(struct trace_opts *o, const char *key, size_t kn, const char *val,
                            size_t vn)
{
    uint64_t v;
    unsigned cnt;
    if (item_is(key, kn, "task")) {
        if (!u64_list(val, vn, ':', o->task, 6, &cnt) || (cnt != 4 && cnt != 6))
            return "wants CURRENT:PID:TGID:COMM[:CRED:EUID] offsets";
        if (cnt == 4)
            o->task[4] = o->task[5] = 0;
        o->task_set = true;
    } else if (item_is(key, kn, "start")) {
        static const char *const names[] = { "mark", "boot", "host", "passes", "entry" };
        unsigned i;
        for (i = 0; i < 5 && !item_is(val, vn, names[i]); i++)
            ;
        if (i == 5)
            return "wants mark, boot, host, passes or entry";
        o->start = (enum trace_start)i;
    } else if (item_is(key, kn, "at")) {
        if (!whole_u64(val, vn, &o->at) || !o->at)
            return "wants an address";
    } else if (item_is(key, kn, "passes")) {
        if (!whole_u64(val, vn, &o->passes) || !o->passes)
            return "wants a count >= 1";
    } else if (item_is(key, kn, "pid")) {
        if (!whole_u64(val, vn, &o->pid))
            return "wants a number";
        o->pid_set = true;
    } else if (item_is(key, kn, "comm")) {
        if (!vn || vn >= TRACE_COMM_MAX)
            return "wants 1 to 15 characters";
        for (size_t i = 0; i < vn; i++)
            o->comm[i] = val[i];
        o->comm[vn] = 0;
    } else if (item_is(key, kn, "budget")) {
        if (!whole_u64(val, vn, &o->budget) || !o->budget)
            return "wants an instruction count >= 1";
    } else if (item_is(key, kn, "hc_user")) {
        if (item_is(val, vn, "root"))
            o->hc_user = TRACE_HC_ROOT;
        else if (item_is(val, vn, "none"))
            o->hc_user = TRACE_HC_NONE;
        else if (item_is(val, vn, "all"))
            o->hc_user = TRACE_HC_ALL;
        else
            return "wants root, none or all";
    } else if (item_is(key, kn, "only")) {
        if (item_is(val, vn, "kernel"))
            o->only = TRACE_ONLY_KERNEL;
        else if (item_is(val, vn, "user"))
            o->only = TRACE_ONLY_USER;
        else
            return "wants kernel or user";
    } else if (item_is(key, kn, "cr3")) {
        if (!whole_u64(val, vn, &o->cr3) || !o->cr3)
            return "wants a page-table root address";
    } else if (item_is(key, kn, "range")) {
        uint64_t lh[2];
        if (o->nrange == TRACE_MAX_RANGES)
            return "too many ranges";
        if (!u64_list(val, vn, '-', lh, 2, &cnt) || cnt != 2 || lh[0] >= lh[1])
            return "wants LO-HI with LO < HI";
        o->range[o->nrange].lo = lh[0];
        o->range[o->nrange].hi = lh[1];
        o->nrange++;
    } else if (item_is(key, kn, "stop_at")) {
        if (!u64_list(val, vn, ':', o->stop_at, TRACE_MAX_STOP_AT, &o->nstop_at))
            return "wants up to 8 addresses separated by ':'";
    } else if (item_is(key, kn, "flight")) {
        if (!whole_u64(val, vn, &v) || !v || v > 4096)
            return "wants a size in MB (1 to 4096)";
        o->flight_mb = v;
    } else if (item_is(key, kn, "record")) {
        if (o->record == HVT_MODE_REGS)
            return "conflicts with regs= (a record mode of its own)";
        if (item_is(val, vn, "full"))
            o->record = HVT_MODE_FULL;
        else if (item_is(val, vn, "flow"))
            o->record = HVT_MODE_FLOW;
        else
            return "wants full or flow";
    } else if (item_is(key, kn, "regs")) {
        static const char *const names[HVT_NREGS] = HVT_REG_NAMES;
        if (o->record != HVT_MODE_FULL)
            return "conflicts with record= (regs= is a record mode of its own)";
        o->regmask = 0;
        /* One name between single ':' each: an empty one (none at all, a leading, doubled or
         * trailing ':') is refused, as on the host (tr_mode_parse). */
        for (size_t i = 0, j;; i = j + 1) {
            for (j = i; j < vn && val[j] != ':'; j++)
                ;
            int r = 0;
            while (r < HVT_NREGS && !item_is(val + i, j - i, names[r]))
                r++;
            if (r == HVT_NREGS)
                return "wants register names (rax..r15, rflags) separated by ':'";
            o->regmask |= 1u << r;
            if (j >= vn)
                break;
        }
        o->record = HVT_MODE_REGS;
    } else if (item_is(key, kn, "checkregs")) {
        if (item_is(val, vn, "on"))
            o->checkregs = true;
        else if (item_is(val, vn, "off"))
            o->checkregs = false;
        else
            return "wants on or off";
    } else if (item_is(key, kn, "scope")) {
        if (vn > 4 && item_is(val, 4, "pid:") && whole_u64(val + 4, vn - 4, &o->scope_id))
            o->scope = TRACE_SCOPE_PID;
        else if (vn > 4 && item_is(val, 4, "tid:") && whole_u64(val + 4, vn - 4, &o->scope_id))
            o->scope = TRACE_SCOPE_TID;
        else if (vn > 5 && vn - 5 < TRACE_COMM_MAX && item_is(val, 5, "comm:")) {
            for (size_t i = 5; i < vn; i++)
                o->scope_comm[i - 5] = val[i];
            o->scope_comm[vn - 5] = 0;
            o->scope = TRACE_SCOPE_COMM;
        } else
            return "wants pid:N, tid:N or comm:NAME (1 to 15 characters)";
    } else if (item_is(key, kn, "irq")) {
        if (item_is(val, vn, "in"))
            o->irq_out = false;
        else if (item_is(val, vn, "out"))
            o->irq_out = true;
        else
            return "wants in or out";
    } else if (item_is(key, kn, "switch_at")) {
        if (!whole_u64(val, vn, &o->switch_at) || !trace_opts_is_kernel(o->switch_at))
            return "wants the link-time kernel address of __switch_to";
    } else if (item_is(key, kn, "probe")) {
        /* KIND:ADDR, return:LO-HI (the function's extent) */
        static const char *const kinds[] = { "entry:", "return:", "addr:" };
        unsigned k = 0;
        size_t kl = 0;
        for (; k < 3; k++) {
            kl = slen(kinds[k]);
            if (vn > kl && item_is(val, kl, kinds[k]))
                break;
        }
        if (k == 3)
            return "wants entry:ADDR, return:LO-HI or addr:ADDR";
        if (o->nprobe == TRACE_MAX_PROBES)
            return "too many probes";
        struct trace_probe *tp = &o->probe[o->nprobe];
        tp->kind = (uint8_t)(k + 1);
        if (k == 1) {
            uint64_t lh[2];
            if (!u64_list(val + kl, vn - kl, '-', lh, 2, &cnt) || cnt != 2 || lh[0] >= lh[1])
                return "return: wants LO-HI, the function's extent";
            tp->lo = lh[0];
            tp->hi = lh[1];
        } else if (!whole_u64(val + kl, vn - kl, &tp->lo) || !trace_opts_is_kernel(tp->lo)) {
            return "wants a kernel address";
        } else {
            tp->hi = tp->lo + 1;
        }
        o->nprobe++;
    } else if (item_is(key, kn, "lstar")) {
        if (!whole_u64(val, vn, &o->lstar) || !trace_opts_is_kernel(o->lstar))
            return "wants the link-time kernel address of entry_SYSCALL_64";
    } else {
        return "unknown option";
    }
    return 0;
}

int trace_opts_parse(const char *text, struct trace_opts *o, char *err, size_t errlen)
{
    struct trace_opts z = { .passes = 1 };
    *o = z;
    struct errbuf e = { err, errlen, 0 };
    if (errlen)
        err[0] = 0;
    const char *p = text ? text : "";
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        const char *item = p;
        while (*p && *p != ',' && *p != ' ')
            p++;
        size_t n = (size_t)(p - item), kn = 0;
        while (kn < n && item[kn] != '=')
            kn++;
        const char *why = kn == n || !kn ? "wants key=value" :
                          one_item(o, item, kn, item + kn + 1, n - kn - 1);
        if (why) {
            err_put(&e, "trace option at column ", 23);
            err_num(&e, (uint64_t)(item - text) + 1);
            err_put(&e, " ('", 3);
            err_put(&e, item, n);
            err_put(&e, "'): ", 4);
            err_put(&e, why, slen(why));
            return -1;
        }
    }
    /* Combinations that cannot work. */
    const char *why = 0;
    if ((o->start == TRACE_START_PASSES || o->start == TRACE_START_ENTRY) && !o->at)
        why = "start=passes and start=entry need at=ADDR";
    else if ((o->start == TRACE_START_PASSES || o->start == TRACE_START_ENTRY) &&
             !trace_opts_is_kernel(o->at))
        why = "at= must be a kernel address (an EPT trap on a user page would follow one process's mapping)";
    else if ((o->pid_set || o->comm[0]) && o->start != TRACE_START_ENTRY)
        why = "pid= and comm= belong to start=entry";
    else if (o->scope != TRACE_SCOPE_ALL && (!o->switch_at || !o->task_set))
        why = "scope= needs switch_at= and task= (hvt options adds both)";
    else if (o->checkregs && o->record != HVT_MODE_FULL)
        why = "checkregs=on checks the full record's registers: not with record=flow or regs=";

    if (why) {
        err_put(&e, "trace options: ", 15);
        err_put(&e, why, slen(why));
        return -1;
    }
    return 0;
}
