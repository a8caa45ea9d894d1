/* unit_nest: the nesting rules of nest.h on hand-made instruction streams (no kernel needed):
 * call/ret, tail jumps, returns above the level start, jumps back into a caller, iret levels,
 * the "call 1f" idiom, and folded-stack counts. Expected diagrams are written out by hand. */
#include "nest.h"
#include <stdio.h>
#include <string.h>
#include "check.h"

static char got[8192];
static const char *const names[] = {"main", "f", "g", "h", "stuff"};

static void on_flow(void *ctx, const nest_cpu *c, int enter, int depth, int32_t fid)
{
    (void)ctx;
    (void)c;
    size_t l = strlen(got);
    snprintf(got + l, sizeof got - l, "%*s%s %s\n", 2 * depth, "", enter == 2 ? "=>" : enter ? "->" : "<-",
             fid >= 0 ? names[fid] : "?");
}

static void on_level(void *ctx, const nest_cpu *c, const char *why)
{
    (void)ctx;
    (void)c;
    size_t l = strlen(got);
    snprintf(got + l, sizeof got - l, "== %s ==\n", why);
}

typedef struct { uint64_t rip; int32_t sym; uint32_t off; uint8_t len, kind; } step;

/* level_at per step: L level, E event (interrupt), 1/2 context switch to task 1/2 */
static void run(const char *what, const step *st, int n, const char *want, const char *level_at)
{
    nest_cpu c;
    nest_init(&c, 0);
    nest_sink s = {on_flow, on_level, NULL, NULL};
    nest_tasks *tasks = nest_tasks_new();
    int64_t task = 1;
    got[0] = 0;
    for (int i = 0; i < n; i++) {
        if (level_at && level_at[i] == 'L') nest_level(&c, "event");
        if (level_at && level_at[i] == 'E') nest_event(&c, "event");
        if (level_at && (level_at[i] == '1' || level_at[i] == '2')) {
            nest_switch(&c, tasks, task, level_at[i] - '0', "sw");
            task = level_at[i] - '0';
        }
        disasm_entry e;
        memset(&e, 0, sizeof e);
        e.rip = st[i].rip;
        e.sym = st[i].sym;
        e.sym_off = st[i].off;
        e.len = st[i].len;
        e.kind = st[i].kind;
        nest_insn(&c, &s, e.rip, &e);
    }
    nest_tasks_free(tasks);
    if (strcmp(got, want) == 0) check_passed++;
    else {
        check_failed++;
        fprintf(stderr, "FAIL %s\n--- want\n%s--- got\n%s", what, want, got);
    }
}

const char *unit_name(void *ctx, int32_t fid);

#define K(x) (0xffffffff81000000ull + (x))
enum { MAIN = 0, F = 1, G = 2, H = 3, STUFF = 4 };

int main(void)
{
    /* main calls f, f tail-jumps to g, g returns (to main), main calls h (recursion h->h) */
    const step a[] = {
        {K(0x100), MAIN, 0, 5, DISASM_CALL},  {K(0x200), F, 0, 2, DISASM_OTHER}, {K(0x202), F, 2, 5, DISASM_JMP},
        {K(0x300), G, 0, 1, DISASM_RET},      {K(0x105), MAIN, 5, 5, DISASM_CALL}, {K(0x400), H, 0, 5, DISASM_CALL},
        {K(0x400), H, 0, 1, DISASM_RET},      {K(0x405), H, 5, 1, DISASM_RET},   {K(0x10a), MAIN, 10, 1, DISASM_OTHER},
    };
    run("call, tail jump, return through both, recursion", a, 9,
        "== trace start ==\n-> main\n  -> f\n    -> g\n    <- g\n  <- f\n  -> h\n    -> h\n    <- h\n  <- h\n", NULL);

    /* returning above the level start re-roots silently; jumping back into a caller pops to it */
    const step b[] = {
        {K(0x200), F, 0, 1, DISASM_RET},      {K(0x105), MAIN, 5, 5, DISASM_CALL}, {K(0x300), G, 0, 5, DISASM_CALL},
        {K(0x400), H, 0, 2, DISASM_JMP},      {K(0x108), MAIN, 8, 1, DISASM_OTHER},
    };
    run("return above start, jump back into the caller", b, 5,
        "== trace start ==\n-> f\n<- f\n  -> g\n    -> h\n    <- h\n  <- g\n", NULL);

    /* an event starts a new level; iret ends one */
    const step c2[] = {
        {K(0x100), MAIN, 0, 5, DISASM_CALL},  {K(0x200), F, 0, 2, DISASM_OTHER}, {K(0x300), G, 0, 2, DISASM_IRET},
        {K(0x202), F, 2, 1, DISASM_RET},      {K(0x105), MAIN, 5, 1, DISASM_OTHER},
    };
    run("event level and iret", c2, 5,
        "== trace start ==\n-> main\n  -> f\n== event ==\n-> g\n<- g\n== after iret ==\n-> f\n<- f\n", "..L..");

    /* an interrupt (nest_event) keeps the stack; the iret back into f resumes it */
    run("interrupt and resuming iret", c2, 5,
        "== trace start ==\n-> main\n  -> f\n== event ==\n-> g\n<- g\n== after iret (resumed) ==\n"
        "=> main\n  => f\n  <- f\n", "..E..");
    /* an interrupt between a call and its callee's first instruction: the call still counts */
    const step c4[] = {
        {K(0x100), MAIN, 0, 5, DISASM_CALL},  {K(0x300), G, 0, 2, DISASM_IRET},   {K(0x200), F, 0, 1, DISASM_RET},
        {K(0x105), MAIN, 5, 1, DISASM_OTHER},
    };
    run("interrupt before the callee's first instruction", c4, 4,
        "== trace start ==\n-> main\n== event ==\n-> g\n<- g\n== after iret (resumed) ==\n=> main\n"
        "  -> f\n  <- f\n", ".E..");
    /* a context switch keeps the outgoing task's stack; switching back takes it up again */
    const step c5[] = {
        {K(0x100), MAIN, 0, 5, DISASM_CALL},  {K(0x200), F, 0, 2, DISASM_OTHER}, {K(0x300), G, 0, 2, DISASM_OTHER},
        {K(0x202), F, 2, 1, DISASM_RET},      {K(0x105), MAIN, 5, 1, DISASM_OTHER},
    };
    run("context switch away and back", c5, 5,
        "== trace start ==\n-> main\n  -> f\n== sw ==\n-> g\n<- g\n== sw (resumed) ==\n=> main\n  => f\n"
        "  <- f\n", "..21.");
    /* an iret elsewhere (another task's context) does not resume: a new level */
    const step c3[] = {
        {K(0x100), MAIN, 0, 5, DISASM_CALL},  {K(0x200), F, 0, 2, DISASM_OTHER}, {K(0x300), G, 0, 2, DISASM_IRET},
        {K(0x402), H, 2, 1, DISASM_OTHER},
    };
    run("iret that does not return to the interrupted function", c3, 4,
        "== trace start ==\n-> main\n  -> f\n== event ==\n-> g\n<- g\n== after iret ==\n-> h\n", "..E.");

    /* "call 1f" inside a function (RSB stuffing) is not a call; a call to the next insn neither */
    const step d[] = {
        {K(0x500), STUFF, 0, 5, DISASM_CALL}, {K(0x50a), STUFF, 10, 5, DISASM_CALL}, {K(0x50f), STUFF, 15, 4, DISASM_OTHER},
        {K(0x513), STUFF, 19, 5, DISASM_CALL}, {K(0x200), F, 0, 1, DISASM_RET},    {K(0x518), STUFF, 24, 1, DISASM_OTHER},
    };
    run("intra-function calls", d, 6, "== trace start ==\n-> stuff\n  -> f\n  <- f\n", NULL);

    /* folded stacks: one count per instruction on the current stack */
    nest_trie *t = nest_trie_new();
    nest_cpu cc;
    nest_init(&cc, 0);
    nest_sink s = {NULL, NULL, NULL, t};
    for (int i = 0; i < 9; i++) {
        disasm_entry e;
        memset(&e, 0, sizeof e);
        e.rip = a[i].rip; e.sym = a[i].sym; e.sym_off = a[i].off; e.len = a[i].len; e.kind = a[i].kind;
        nest_insn(&cc, &s, e.rip, &e);
    }
    char buf[1024] = "";
    FILE *m = fmemopen(buf, sizeof buf, "w");
    nest_trie_fold(t, unit_name, NULL, m);
    fclose(m);
    const char *want = "main 3\nmain;f 2\nmain;f;g 1\nmain;h 2\nmain;h;h 1\n";
    /* order is trie-node order (first seen), which is deterministic */
    if (strcmp(buf, want) == 0 && strlen(buf)) check_passed++;
    else { check_failed++; fprintf(stderr, "FAIL folded\n--- want\n%s--- got\n%s", want, buf); }
    nest_trie_free(t);
    return check_summary("unit_nest");
}

const char *unit_name(void *ctx, int32_t fid)
{
    (void)ctx;
    return fid >= 0 ? names[fid] : "?";
}
