/* unit_export: the exports' own encoders on hand-made input (no trace, no kernel): JSON string
 * literals for any bytes (export_json_str) and speedscope's file from a flame
 * (export_speedscope_write), against expected text written out by hand. */
#include "export.h"
#include <stdlib.h>
#include <string.h>
#include "check.h"

/* What fn writes into a memory stream, NUL-terminated (static buffer). */
static const char *json_of(const char *in)
{
    static char buf[1024];
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    if (!f) return "";
    export_json_str(f, in);
    fclose(f);
    return buf;
}

static void test_json_str(void)
{
    static const struct { const char *in, *want; } cases[] = {
        {"schedule", "\"schedule\""},
        {"a\"b\\c", "\"a\\\"b\\\\c\""},
        {"tab\there\nnl\x7f", "\"tab\\u0009here\\u000anl\\u007f\""},
        {"kworker/0:1H", "\"kworker/0:1H\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""}, /* valid UTF-8 kept */
        {"x\xff y", "\"x\\ufffd y\""},                       /* never a UTF-8 byte */
        {"\xc3", "\"\\ufffd\""},                              /* truncated sequence at the end */
        {"\xc0\xaf", "\"\\ufffd\\ufffd\""},                   /* overlong '/' */
        {"\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\""},        /* overlong, 3 bytes */
        {"\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\""},        /* a UTF-16 surrogate */
        {"\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\""}, /* above U+10FFFF */
        {"\xe2\x82", "\"\\ufffd\\ufffd\""},                   /* cut short */
        {"", "\"\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = json_of(cases[i].in);
        CHECK(!strcmp(got, cases[i].want), " json_str case %zu: got %s want %s", i, got, cases[i].want);
    }
}

static void test_speedscope(void)
{
    flame *f = flame_new();
    const char *a[] = {"entry", "do_syscall_64", "__x64_sys_read"};
    const char *b[] = {"entry", "do_syscall_64"};
    const char *c[] = {"[user]"};
    const char *d[] = {"entry", "q\"uote"};
    CHECK(f && flame_add(f, a, 3, 5) == 0 && flame_add(f, b, 2, 2) == 0 && flame_add(f, c, 1, 10) == 0 &&
          flame_add(f, a, 3, 1) == 0 && flame_add(f, d, 2, 1) == 0, " flame built");
    char buf[4096];
    FILE *o = fmemopen(buf, sizeof buf - 1, "w");
    int rc = o ? export_speedscope_write(f, o, "t", "none") : -1;
    if (o) fclose(o);
    /* stacks in flame_write_folded's byte order: "[user]" < "entry;do_syscall_64" < ... */
    const char *want =
        "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"hvtrace\",\"name\":\"t\","
        "\"activeProfileIndex\":0,\"shared\":{\"frames\":[\n{\"name\":\"[user]\"},\n{\"name\":\"entry\"},\n"
        "{\"name\":\"do_syscall_64\"},\n{\"name\":\"__x64_sys_read\"},\n{\"name\":\"q\\\"uote\"}]},"
        "\"profiles\":[{\"type\":\"sampled\",\"name\":\"t\",\"unit\":\"none\",\"startValue\":0,\"endValue\":19,"
        "\"samples\":[[0],[1,2],[1,2,3],[1,4]],\"weights\":[10,2,6,1]}]}\n";
    CHECK(rc == 0 && !strcmp(buf, want), " speedscope file:\n%s\nwant:\n%s", buf, want);
    flame_free(f);
}

int main(void)
{
    test_json_str();
    test_speedscope();
    return check_summary("unit_export");
}
