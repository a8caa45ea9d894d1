/*
 * desc_fields.h - the D unit tests' probe resolvers share this: a probe description's four
 * fields (provider:module:function:name), fewer given meaning the last ones, as dtrace reads
 * them. Each field holds at most DESC_FIELD_MAX - 1 characters (longer ones are cut).
 */
#ifndef HVT_DESC_FIELDS_H
#define HVT_DESC_FIELDS_H
#include <stdio.h>
#include <string.h>

#define DESC_FIELD_MAX 256

/* Split desc into f[0..3], right-aligned; -1 with err for more than four fields. */
static int desc_fields(const char *desc, char f[4][DESC_FIELD_MAX], char *err, size_t errlen)
{
    char g[4][DESC_FIELD_MAX];
    int n = 0;
    for (const char *p = desc;; n++) {
        const char *c = strchr(p, ':');
        if (n == 4) {
            snprintf(err, errlen, "too many fields");
            return -1;
        }
        snprintf(g[n], sizeof g[n], "%.*s", (int)(c ? (size_t)(c - p) : strlen(p)), p);
        if (!c)
            break;
        p = c + 1;
    }
    n++;
    for (int i = 0; i < 4; i++)
        f[i][0] = 0;
    for (int i = 0; i < n; i++)
        strcpy(f[4 - n + i], g[i]);
    return 0;
}

#endif
