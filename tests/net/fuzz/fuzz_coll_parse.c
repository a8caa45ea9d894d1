/*
 * fuzz_coll_parse.c - libFuzzer target for the collector's stream parser (coll_parse.c).
 * The first input byte chooses where the stream is cut into two read() buffers, so message
 * straddling is exercised; the parser must never crash, never read outside the buffer (ASan),
 * never consume more than it was given, and always explain an error.
 */
#include "coll_parse.h"
#include <stdlib.h>
#include <string.h>

static void on_msg(void *ctx, const struct hvt_msg_hdr *h, const uint8_t *pl, const uint8_t *raw)
{
    volatile uint8_t x = 0;
    for (uint32_t i = 0; i < h->len; i++)            /* touch every payload byte (ASan) */
        x ^= pl[i];
    (void)raw;
}

static int on_hello(void *ctx, const struct hvt_hello *h, const char *t, size_t n)
{
    volatile char x = 0;
    for (size_t i = 0; i < n; i++)
        x ^= t[i];
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct coll_parser p;
    /* the unit tests' key (bytes 0..31), so their session streams are seeds that verify */
    static struct ctl_key key = { .len = 32 };
    for (unsigned i = 0; i < key.len; i++)
        key.bytes[i] = (uint8_t)i;
    if (size < 1)
        return 0;
    size_t cut = size > 1 ? data[0] % size : 0;
    data++, size--;
    if (cut > size)
        cut = size;
    coll_parse_init(&p, &key);
    p.allow_unauth = data[-1] & 1;        /* the first byte's low bit: both HELLO policies */
    struct coll_sink sink = { .on_hello = on_hello, .on_msg = on_msg };
    uint8_t *buf = malloc(size + 1);
    memcpy(buf, data, cut);
    size_t have = cut, used = 0;
    int r = coll_parse_feed(&p, buf, have, &used, &sink);
    if (used > have)
        abort();
    if (r == 0) {
        memmove(buf, buf + used, have - used);
        have -= used;
        memcpy(buf + have, data + cut, size - cut);
        have += size - cut;
        r = coll_parse_feed(&p, buf, have, &used, &sink);
        if (used > have)
            abort();
    }
    if (r == COLL_EMALFORMED && p.err[0] == 0)
        abort();                                       /* every rejection has a reason */
    free(buf);
    return 0;
}
