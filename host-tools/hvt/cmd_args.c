/* cmd_args: the argument helpers hvt's subcommands share (see hvt_cmd.h). */
#include "hvt_cmd.h"
#include <errno.h>
#include <stdlib.h>

int hvt_parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    *out = strtoull(s, &end, 0);
    return errno || end == s || *end ? -1 : 0;
}

int hvt_get_slide(const kinfo *ki, const char *slide_s, const char *lstar_s, int64_t *slide)
{
    uint64_t v;
    *slide = 0;
    if (slide_s) {
        if (hvt_parse_u64(slide_s, &v)) return -1;
        *slide = (int64_t)v;
    } else if (lstar_s) {
        if (hvt_parse_u64(lstar_s, &v) || kinfo_slide_from_lstar(ki, v, slide)) return -1;
    }
    return 0;
}
