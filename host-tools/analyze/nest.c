/* nest: see nest.h. */
#include "nest.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TRIE_INIT_BITS = 12, TRIE_MEMO = 4 };

typedef struct {
    uint32_t parent;
    int32_t fid;
    uint64_t count;
    /* the last children looked up from here: most calls repeat, so most lookups end here */
    int32_t memo_fid[TRIE_MEMO];
    uint32_t memo_node[TRIE_MEMO]; /* 0 = empty (node 0 is the root, never a child) */
    uint32_t memo_next;
} trie_node;

struct nest_trie {
    trie_node *nodes; /* node 0 = root */
    uint32_t n, cap;
    uint32_t *slots; /* hash (parent, fid) -> node id + 1 */
    uint32_t bits;
};

static uint64_t th(uint32_t parent, int32_t fid)
{
    uint64_t h = ((uint64_t)parent << 32 | (uint32_t)fid) * UTIL_GOLDEN64;
    return h ^ (h >> 29);
}

nest_trie *nest_trie_new(void)
{
    nest_trie *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->cap = 1024;
    t->nodes = calloc(t->cap, sizeof *t->nodes);
    t->bits = TRIE_INIT_BITS;
    t->slots = calloc((size_t)1 << t->bits, sizeof *t->slots);
    if (!t->nodes || !t->slots) {
        nest_trie_free(t);
        return NULL;
    }
    t->n = 1;
    return t;
}

void nest_trie_free(nest_trie *t)
{
    if (!t) return;
    free(t->nodes);
    free(t->slots);
    free(t);
}

static uint32_t trie_lookup(nest_trie *t, uint32_t parent, int32_t fid);

static uint32_t trie_child(nest_trie *t, uint32_t parent, int32_t fid)
{
    trie_node *p = &t->nodes[parent];
    for (int m = 0; m < TRIE_MEMO; m++)
        if (p->memo_node[m] && p->memo_fid[m] == fid) return p->memo_node[m];
    uint32_t id = trie_lookup(t, parent, fid);
    p = &t->nodes[parent]; /* the node array may have moved */
    int m = (int)(p->memo_next++ % TRIE_MEMO);
    p->memo_fid[m] = fid;
    p->memo_node[m] = id;
    return id;
}

static uint32_t trie_lookup(nest_trie *t, uint32_t parent, int32_t fid)
{
    size_t mask = ((size_t)1 << t->bits) - 1;
    size_t i = th(parent, fid) & mask;
    for (; t->slots[i]; i = (i + 1) & mask) {
        trie_node *nd = &t->nodes[t->slots[i] - 1];
        if (nd->parent == parent && nd->fid == fid) return t->slots[i] - 1;
    }
    if (t->n == t->cap) {
        trie_node *nn = realloc(t->nodes, (size_t)t->cap * 2 * sizeof *nn);
        if (!nn) return 0;
        t->nodes = nn;
        t->cap *= 2;
    }
    uint32_t id = t->n++;
    memset(&t->nodes[id], 0, sizeof t->nodes[id]);
    t->nodes[id].parent = parent;
    t->nodes[id].fid = fid;
    t->slots[i] = id + 1;
    if ((size_t)t->n * 2 > mask) { /* rehash */
        size_t nb = mask * 2 + 1;
        uint32_t *ns = calloc(nb + 1, sizeof *ns);
        if (!ns) return id;
        for (uint32_t k = 1; k < t->n; k++) {
            size_t j = th(t->nodes[k].parent, t->nodes[k].fid) & nb;
            while (ns[j]) j = (j + 1) & nb;
            ns[j] = k + 1;
        }
        free(t->slots);
        t->slots = ns;
        t->bits++;
    }
    return id;
}

void nest_trie_fold(const nest_trie *t, const char *(*name)(void *, int32_t), void *ctx, void *out_file)
{
    FILE *out = out_file;
    uint32_t path[NEST_MAX_DEPTH + 1];
    for (uint32_t k = 1; k < t->n; k++) {
        if (!t->nodes[k].count) continue;
        int n = 0;
        for (uint32_t x = k; x && n <= NEST_MAX_DEPTH; x = t->nodes[x].parent) path[n++] = x;
        for (int i = n - 1; i >= 0; i--) fprintf(out, "%s%s", name(ctx, t->nodes[path[i]].fid), i ? ";" : "");
        fprintf(out, " %llu\n", (unsigned long long)t->nodes[k].count);
    }
}

void nest_init(nest_cpu *c, unsigned cpu)
{
    memset(c, 0, sizeof *c);
    c->cpu = cpu;
    c->pending = 1;
    snprintf(c->reason, sizeof c->reason, "trace start");
}

void nest_level(nest_cpu *c, const char *reason)
{
    if (c->pending && c->pending_switch && c->nprior < NEST_PRIOR)
        memcpy(c->prior[c->nprior++], c->reason, sizeof c->reason);
    c->pending_switch = 0;
    c->pending = 1;
    snprintf(c->reason, sizeof c->reason, "%s", reason);
}

static void save_stack(const nest_cpu *c, nest_saved *sv);

void nest_event(nest_cpu *c, const char *reason)
{
    if (c->nsaved == NEST_SAVED_MAX) { /* drop the outermost */
        memmove(c->saved, c->saved + 1, (NEST_SAVED_MAX - 1) * sizeof c->saved[0]);
        c->nsaved--;
    }
    save_stack(c, &c->saved[c->nsaved++]);
    nest_level(c, reason);
}

enum { NEST_TASKS = 1024 };
struct nest_tasks { int64_t key[NEST_TASKS]; uint8_t used[NEST_TASKS]; nest_saved st[NEST_TASKS]; };

nest_tasks *nest_tasks_new(void) { return calloc(1, sizeof(nest_tasks)); }
void nest_tasks_free(nest_tasks *t) { free(t); }

static nest_saved *task_slot(nest_tasks *t, int64_t key, int create)
{
    size_t h = (size_t)((uint64_t)key * 0x9e3779b97f4a7c15ull >> 54) & (NEST_TASKS - 1);
    for (size_t n = 0; n < NEST_TASKS; n++, h = (h + 1) & (NEST_TASKS - 1)) {
        if (t->used[h] && t->key[h] == key) return &t->st[h];
        if (!t->used[h]) {
            if (!create) return NULL;
            t->used[h] = 1;
            t->key[h] = key;
            return &t->st[h];
        }
    }
    return NULL; /* full: that task's stack is not kept */
}

static void save_stack(const nest_cpu *c, nest_saved *sv)
{
    sv->valid = !c->pending && c->depth > 0 && c->depth <= NEST_SAVED_FRAMES;
    if (!sv->valid) return;
    sv->depth = c->depth;
    sv->prev_kind = c->prev_kind;
    sv->prev_next = c->prev_next;
    memcpy(sv->frames, c->frames, (size_t)c->depth * sizeof c->frames[0]);
}

void nest_switch(nest_cpu *c, nest_tasks *tasks, int64_t from, int64_t to, const char *reason)
{
    c->nsaved = 0;
    c->task_resume.valid = 0;
    if (tasks) {
        nest_saved *out = task_slot(tasks, from, 1);
        if (out) save_stack(c, out);
        nest_saved *in = task_slot(tasks, to, 0);
        if (in && in->valid) {
            c->task_resume = *in;
            in->valid = 0;
        }
    }
    nest_level(c, reason);
    c->pending_switch = 1;
}

static void pop(nest_cpu *c, const nest_sink *s);

/* An iret into fid: resume the stack the matching event interrupted if fid belongs to it (or
 * the interrupt came between a call and its callee's first instruction). On success the
 * interrupted flow (prev_kind, prev_next) is back, for the caller to apply to fid. */
static int take_up(nest_cpu *c, const nest_sink *s, const nest_saved *sv, int32_t fid, const char *why)
{
    if (!sv->valid) return 0;
    int member = sv->prev_kind == DISASM_CALL;
    for (int i = 0; i < sv->depth && !member; i++) member = sv->frames[i].fid == fid;
    if (!member) return 0;
    while (c->depth > 0) pop(c, s);
    if (s->on_level) s->on_level(s->ctx, c, why);
    for (int i = 0; i < sv->depth; i++) {
        c->frames[i] = sv->frames[i];
        if (s->on_flow) s->on_flow(s->ctx, c, 2, i, sv->frames[i].fid);
    }
    c->depth = sv->depth;
    c->prev_kind = sv->prev_kind;
    c->prev_next = sv->prev_next;
    c->resumed++;
    return 1;
}

static int resume(nest_cpu *c, const nest_sink *s, int32_t fid)
{
    if (!c->nsaved) return 0;
    return take_up(c, s, &c->saved[--c->nsaved], fid, "after iret (resumed)");
}

static void push(nest_cpu *c, const nest_sink *s, int32_t fid, int by_call, int quiet)
{
    if (c->depth == NEST_MAX_DEPTH) {
        c->overflow++;
        return;
    }
    uint32_t parent = c->depth ? c->frames[c->depth - 1].node : 0;
    uint32_t node = s->trie ? trie_child(s->trie, parent, fid) : 0;
    if (!quiet && s->on_flow) s->on_flow(s->ctx, c, 1, c->depth, fid);
    c->frames[c->depth++] = (nest_frame){fid, (uint8_t)by_call, node};
}

static void pop(nest_cpu *c, const nest_sink *s)
{
    c->depth--;
    if (s->on_flow) s->on_flow(s->ctx, c, 0, c->depth, c->frames[c->depth].fid);
}

/* Control moved to fid without call/ret. */
static void flow(nest_cpu *c, const nest_sink *s, int32_t fid)
{
    if (c->frames[c->depth - 1].fid == fid) return;
    for (int i = c->depth - 2; i >= 0; i--) {
        if (c->frames[i].fid == fid) {
            while (c->depth > i + 1) pop(c, s);
            c->irregular++;
            return;
        }
    }
    push(c, s, fid, 0, 0);
}

void nest_insn(nest_cpu *c, const nest_sink *s, uint64_t rip, const disasm_entry *e)
{
    int32_t fid = nest_fid(e);
    for (int i = 0; i < c->nprior; i++)      /* headers of levels that held no instruction */
        if (s->on_level) s->on_level(s->ctx, c, c->prior[i]);
    c->nprior = 0;
    if (c->pending && c->task_resume.valid) {
        /* a switched-in task: take its stack up again if this instruction belongs to it */
        char why[sizeof c->reason + 12];
        snprintf(why, sizeof why, "%s (resumed)", c->reason);
        nest_saved sv = c->task_resume;
        c->task_resume.valid = 0;
        if (take_up(c, s, &sv, fid, why)) c->pending = c->pending_switch = 0;
    }
    if (c->pending || c->depth == 0) {
        c->depth = 0;
        c->pending = c->pending_switch = 0;
        if (s->on_level) s->on_level(s->ctx, c, c->reason);
        push(c, s, fid, 1, 0);
    } else {
        /* an iret back into an interrupted stack: continue its flow with this instruction */
        if (c->prev_kind == DISASM_IRET) resume(c, s, fid);
        switch (c->prev_kind) {
        case DISASM_CALL:
            /* A call to the next instruction, or into the middle of the calling function (the
             * RSB-stuffing and retpoline idiom "call 1f; ...; 1: add $8, %rsp"), is not a call:
             * nothing returns to it. Recursion enters at the function's start. */
            if (rip != c->prev_next && !(fid == c->frames[c->depth - 1].fid && e->sym_off != 0))
                push(c, s, fid, 1, 0);
            else
                flow(c, s, fid);
            break;
        case DISASM_RET:
            while (c->depth > 0) {
                int by_call = c->frames[c->depth - 1].by_call;
                pop(c, s);
                if (by_call) break;
            }
            if (c->depth == 0) { /* returned above the level's first function */
                c->irregular++;
                push(c, s, fid, 1, 1);
            } else {
                flow(c, s, fid);
            }
            break;
        case DISASM_IRET:   /* not resumed */
        case DISASM_SYSRET:
            while (c->depth > 0) pop(c, s);
            if (s->on_level) s->on_level(s->ctx, c, c->prev_kind == DISASM_IRET ? "after iret" : "after sysret");
            push(c, s, fid, 1, 0);
            break;
        default:
            flow(c, s, fid);
            break;
        }
    }
    if (s->trie && c->depth) s->trie->nodes[c->frames[c->depth - 1].node].count++;
    c->prev_kind = e->kind;
    c->prev_next = rip + e->len;
}
