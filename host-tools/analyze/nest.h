/* nest: call nesting reconstructed from an instruction stream, STDB-style.
 * Contract (per CPU; feed each CPU's instructions in its own order):
 *  - A top level ("big level") begins at an interrupt/exception (EVENT marker), a syscall
 *    entry, a context switch, a trace start or gap, and after iret/sysret; its first
 *    function is printed at depth 0.
 *  - After a call whose next instruction is not the fall-through, the new function is pushed
 *    ("->"), unless the target is inside the calling function past its start (the
 *    RSB-stuffing / retpoline "call 1f" idiom, which never returns). After a ret, frames are popped up to and including the innermost frame entered
 *    by a call ("<-" for each). Control reaching another function without call/ret (jmp,
 *    tail call, fall-through) pushes it, unless that function is already on the stack, in
 *    which case the stack is popped back to it (an "irregular" point, counted).
 *  - Returning above the level's first function re-roots the level at the caller (counted
 *    as irregular) without printing.
 *  - An interrupt or exception (nest_event) keeps the interrupted stack and flow; the iret
 *    that returns into a function of that stack (or to the callee of a call the interrupt came
 *    right after) resumes it: a level "after iret (resumed)" whose frames are restated with
 *    enter = 2 ("=>", not calls), then the instruction is taken as the interrupted flow's next,
 *    so a call nesting that an interrupt cut in two reads as one. A context switch forgets
 *    kept stacks (the resumed task differs).
 * A function is a kernel symbol (ksym index), NEST_USER for user space, NEST_UNKNOWN for a
 * kernel address without symbol. The engine calls back on every push/pop; it also keeps a
 * trie of stacks so folded stacks (flame graphs) cost one increment per instruction. */
#ifndef HVT_NEST_H
#define HVT_NEST_H
#include "disasm.h"

enum { NEST_USER = -2, NEST_UNKNOWN = -1, NEST_MAX_DEPTH = 512, NEST_SAVED_MAX = 8,
       NEST_SAVED_FRAMES = 64 };

typedef struct {
    int32_t fid;
    uint8_t by_call;
    uint32_t node; /* trie node of the stack up to here */
} nest_frame;

typedef struct nest_trie nest_trie;

typedef struct {
    int valid, depth;
    uint8_t prev_kind;       /* the interrupted flow: e.g. a call whose callee had not begun */
    uint64_t prev_next;
    nest_frame frames[NEST_SAVED_FRAMES];
} nest_saved;

enum { NEST_PRIOR = 4 };

typedef struct {
    unsigned cpu;
    nest_frame frames[NEST_MAX_DEPTH];
    int depth;
    int pending; /* a new level begins at the next instruction */
    char reason[96];
    /* task switches followed by another level before any instruction (a switch and an
     * interrupt at one step): their headers print first, so who runs is never lost */
    char prior[NEST_PRIOR][96];
    int nprior, pending_switch;
    uint8_t prev_kind;
    uint64_t prev_next;
    uint64_t irregular, overflow;
    nest_saved saved[NEST_SAVED_MAX]; /* stacks interrupted by events, innermost last */
    int nsaved;
    uint64_t resumed;
    nest_saved task_resume;           /* the switched-in task's stack, taken up at the next insn */
} nest_cpu;

/* Each task's stack while it is switched out (tasks move between CPUs: one table for all). */
typedef struct nest_tasks nest_tasks;
nest_tasks *nest_tasks_new(void);
void nest_tasks_free(nest_tasks *t);

typedef struct {
    /* depth is the indentation level; enter = 1 for "->", 0 for "<-", 2 for "=>" (a frame
     * restated when an iret resumes an interrupted stack) */
    void (*on_flow)(void *ctx, const nest_cpu *c, int enter, int depth, int32_t fid);
    void (*on_level)(void *ctx, const nest_cpu *c, const char *reason);
    void *ctx;
    nest_trie *trie; /* optional: folded stack counts */
} nest_sink;

void nest_init(nest_cpu *c, unsigned cpu);
/* Start a new level at the next instruction (reason is printed in the level header). */
void nest_level(nest_cpu *c, const char *reason);
/* An interrupt/exception entry: like nest_level, and keeps the interrupted stack. */
void nest_event(nest_cpu *c, const char *reason);
/* A context switch from task key 'from' to 'to' (keys unique per task; tasks may be NULL):
 * like nest_level, forgets the kept event stacks, keeps the outgoing task's stack and takes up
 * the incoming one's at the next instruction when that instruction belongs to it (a task
 * resumes inside the scheduler where it left): level "... (resumed)" with "=>" frames. */
void nest_switch(nest_cpu *c, nest_tasks *tasks, int64_t from, int64_t to, const char *reason);
void nest_insn(nest_cpu *c, const nest_sink *s, uint64_t rip, const disasm_entry *e);
static inline int32_t nest_fid(const disasm_entry *e)
{
    return e->sym >= 0 ? e->sym : disasm_is_kernel(e->rip) ? NEST_UNKNOWN : NEST_USER;
}

nest_trie *nest_trie_new(void);
void nest_trie_free(nest_trie *t);
/* Emit "f1;f2;...;fn count" lines; name(fid) gives function names. */
void nest_trie_fold(const nest_trie *t, const char *(*name)(void *, int32_t), void *ctx, void *out_file);
#endif
