/*
 * d_fold.h - folded stacks and flame graphs straight from a D aggregation keyed by stacks
 * (`@[stack()] = count();`), for hvt's --folded and --flame: the same files
 * host-tools/stacks/flame.h writes for hvt -n profile-N and hvt analyze --view profile.
 *
 * Contract:
 *  - d_fold_pick(): the aggregation to fold: the first count() or sum() whose keys include a
 *    stack( ) or ustack( ) key; -1 when the program has none.
 *  - d_fold_write(): one folded line (or SVG frame path) per entry, its value the count:
 *    the keys in order, root first: a string key as its text, an integer as its decimal, a
 *    sym() key as its function; a kernel stack as "[user]" when its unwind reached the user
 *    registers (or the firing was in user mode), then its frames from the outermost to the
 *    leaf, each by its function's name (a return address looked up at pc - 1, an exact pc at
 *    pc), 0x... for an address no symbol holds; a user stack as its 0x... addresses. So
 *    `@[execname, stack()]` folds exactly as the sample path's "comm;[user];...;leaf" lines.
 *    Entries of value <= 0 are left out. 0, or -1 with the message printed on stderr.
 */
#ifndef HVT_D_FOLD_H
#define HVT_D_FOLD_H
#include <stdint.h>
#include "dprog.h"
#include "d_agg.h"
#include "ksym.h"

int d_fold_pick(const dprog *p);
int d_fold_write(d_aggs *a, const dprog *p, int agg, const ksym_table *syms, int64_t slide, const char *path,
                 int svg);

#endif
