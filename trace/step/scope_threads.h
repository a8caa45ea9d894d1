/*
 * scope_threads.h - the threads D's step() steps at once, each up to its own end: a small
 * fixed table of (thread id, end RIP, end RSP, state). Pure bookkeeping, no locking and no
 * guest access: scope.c holds the one table under its lock (readers that only ask "is this
 * thread live" may read it without: each field is one aligned word).
 *
 * A thread's window ends at the instruction its firing function returns to, with the stack
 * pointer above that call's return address (end_rip, end_rsp): that call's return, not a
 * recursive one's. end_rip 0: the thread has no end of its own (it is stepped until the whole
 * window ends: unstep(), stop()).
 *
 * Contract:
 *  - scope_threads_add(): a thread joins (SCOPE_ADD_NEW), or is already live and keeps its
 *    first end (SCOPE_ADD_LIVE: a step() again inside its own window), or the table has no
 *    free slot (SCOPE_ADD_FULL: refused, nothing changes). A thread whose window ended joins
 *    again with its new end. Done entries are free slots.
 *  - scope_threads_live(): is this thread stepped now;
 *  - scope_threads_end(): the thread reached (rip, rsp): if that is its end it is done, and
 *    the answer says whether any thread is still live (SCOPE_END_MORE) or not (SCOPE_END_LAST);
 *    SCOPE_END_NO otherwise;
 *  - scope_threads_end_all(): every thread is done (the window was ended for all: unstep(),
 *    stop(), a host stop);
 *  - scope_threads_sweep(): forget the done ones (the window closed on every CPU); returns how
 *    many are still live (threads that joined while the window was closing);
 *  - gen counts the changes of the set of ends (a CPU that caches where the ends are compares it).
 */
#ifndef HVT_SCOPE_THREADS_H
#define HVT_SCOPE_THREADS_H
#include <stdbool.h>
#include <stdint.h>

#define SCOPE_MAX_THREADS 8

enum { SCOPE_THR_FREE, SCOPE_THR_LIVE, SCOPE_THR_DONE };
enum { SCOPE_ADD_NEW, SCOPE_ADD_LIVE, SCOPE_ADD_FULL };
enum { SCOPE_END_NO, SCOPE_END_MORE, SCOPE_END_LAST };

struct scope_thread {
    uint64_t end_rip, end_rsp;
    uint32_t tid;
    uint32_t state;                        /* SCOPE_THR_* */
};
struct scope_threads {
    struct scope_thread t[SCOPE_MAX_THREADS];
    uint32_t gen;
};

int scope_threads_add(struct scope_threads *s, uint32_t tid, uint64_t end_rip, uint64_t end_rsp);
bool scope_threads_live(const struct scope_threads *s, uint32_t tid);
unsigned scope_threads_nlive(const struct scope_threads *s);
int scope_threads_end(struct scope_threads *s, uint32_t tid, uint64_t rip, uint64_t rsp);
void scope_threads_end_all(struct scope_threads *s);
unsigned scope_threads_sweep(struct scope_threads *s);
/* Is rip the end of any live thread (a quick test before scope_threads_end)? */
bool scope_threads_is_end_rip(const struct scope_threads *s, uint64_t rip);

#endif
