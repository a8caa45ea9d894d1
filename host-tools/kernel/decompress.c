/* decompress: see decompress.h. Each format uses its reference library (liblz4, zlib, liblzma, libzstd). */
#include "decompress.h"
#include <lz4.h>
#include <lzma.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

enum {
    LZ4_LEGACY_MAGIC = 0x184C2102,
    LZ4_LEGACY_BLOCK = 8 << 20, /* the legacy frame's fixed uncompressed block size */
    SIZE_TRAILER = 4,           /* le32 decompressed size the kernel build appends */
};

static const uint8_t magic_gzip[] = {0x1f, 0x8b};
static const uint8_t magic_xz[] = {0xfd, '7', 'z', 'X', 'Z', 0x00};
static const uint8_t magic_zstd[] = {0x28, 0xb5, 0x2f, 0xfd};
static const uint8_t magic_lz4[] = {0x02, 0x21, 0x4c, 0x18};

#define HAS_MAGIC(p, len, m) ((len) >= sizeof(m) && memcmp((p), (m), sizeof(m)) == 0)

const char *decompress_format(const uint8_t *p, size_t len)
{
    if (HAS_MAGIC(p, len, magic_gzip)) return "gzip";
    if (HAS_MAGIC(p, len, magic_xz)) return "xz";
    if (HAS_MAGIC(p, len, magic_zstd)) return "zstd";
    if (HAS_MAGIC(p, len, magic_lz4)) return "lz4";
    return NULL;
}

static int do_lz4(const char *file, uint64_t base, const uint8_t *p, size_t len, uint8_t *out,
                  size_t cap, size_t *got)
{
    size_t pos = sizeof magic_lz4, o = 0;
    while (pos + SIZE_TRAILER <= len && o < cap) {
        uint32_t csize = util_le32(p + pos);
        if (csize == LZ4_LEGACY_MAGIC) { /* concatenated frames */
            pos += 4;
            continue;
        }
        pos += 4;
        if (!util_fits(len, pos, csize) || csize > (uint32_t)LZ4_compressBound(LZ4_LEGACY_BLOCK)) {
            util_err(file, base + pos - 4, "lz4: block size %u runs past the payload", csize);
            return -1;
        }
        size_t room = cap - o < LZ4_LEGACY_BLOCK ? cap - o : LZ4_LEGACY_BLOCK;
        int n = LZ4_decompress_safe((const char *)p + pos, (char *)out + o, (int)csize, (int)room);
        if (n < 0) {
            util_err(file, base + pos, "lz4: corrupt block");
            return -1;
        }
        o += (size_t)n;
        pos += csize;
    }
    *got = o;
    return 0;
}

static int do_gzip(const char *file, uint64_t base, const uint8_t *p, size_t len, uint8_t *out,
                   size_t cap, size_t *got)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return -1;
    int rc = Z_OK;
    size_t in_pos = 0, out_pos = 0;
    /* zlib counts in uInt: feed in slices so huge buffers stay correct. */
    while (rc == Z_OK) {
        size_t in_left = len - in_pos, out_left = cap - out_pos;
        z.next_in = (Bytef *)p + in_pos;
        z.avail_in = in_left > (1u << 30) ? (1u << 30) : (uInt)in_left;
        z.next_out = out + out_pos;
        z.avail_out = out_left > (1u << 30) ? (1u << 30) : (uInt)out_left;
        uInt ai = z.avail_in, ao = z.avail_out;
        rc = inflate(&z, Z_NO_FLUSH);
        in_pos += ai - z.avail_in;
        out_pos += ao - z.avail_out;
        if (rc == Z_BUF_ERROR || (rc == Z_OK && ai == z.avail_in && ao == z.avail_out)) break;
    }
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
        util_err(file, base + in_pos, "gzip: %s", rc == Z_OK || rc == Z_BUF_ERROR ? "truncated stream"
                                                                                 : "corrupt stream");
        return -1;
    }
    *got = out_pos;
    return 0;
}

static int do_xz(const char *file, uint64_t base, const uint8_t *p, size_t len, uint8_t *out,
                 size_t cap, size_t *got)
{
    lzma_stream s = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&s, UINT64_MAX, 0) != LZMA_OK) return -1;
    s.next_in = p;
    s.avail_in = len;
    s.next_out = out;
    s.avail_out = cap;
    lzma_ret rc = lzma_code(&s, LZMA_FINISH);
    size_t consumed = len - s.avail_in;
    *got = cap - s.avail_out;
    lzma_end(&s);
    if (rc != LZMA_STREAM_END) {
        util_err(file, base + consumed, "xz: %s (lzma error %d)",
                 rc == LZMA_BUF_ERROR ? "truncated stream" : "corrupt stream", (int)rc);
        return -1;
    }
    return 0;
}

static int do_zstd(const char *file, uint64_t base, const uint8_t *p, size_t len, uint8_t *out,
                   size_t cap, size_t *got)
{
    ZSTD_DStream *d = ZSTD_createDStream();
    if (!d) return -1;
    ZSTD_initDStream(d);
    /* The kernel compresses with a large window (--long): allow it. */
    ZSTD_DCtx_setParameter(d, ZSTD_d_windowLogMax, 31);
    ZSTD_inBuffer in = {p, len, 0};
    ZSTD_outBuffer ob = {out, cap, 0};
    size_t rc;
    do {
        rc = ZSTD_decompressStream(d, &ob, &in);
        if (ZSTD_isError(rc)) {
            util_err(file, base + in.pos, "zstd: %s", ZSTD_getErrorName(rc));
            ZSTD_freeDStream(d);
            return -1;
        }
    } while (rc != 0 && in.pos < in.size && ob.pos < ob.size);
    ZSTD_freeDStream(d);
    if (rc != 0) {
        util_err(file, base + in.pos, "zstd: truncated stream");
        return -1;
    }
    *got = ob.pos;
    return 0;
}

int decompress_payload(const char *file, uint64_t base, const uint8_t *p, size_t len, size_t expect,
                 size_t max_out, util_buf *out)
{
    const char *fmt = decompress_format(p, len);
    if (!fmt) {
        util_err(file, base, "unknown payload compression (magic %02x %02x %02x %02x)",
                 len > 0 ? p[0] : 0, len > 1 ? p[1] : 0, len > 2 ? p[2] : 0, len > 3 ? p[3] : 0);
        return -1;
    }
    size_t cap = expect ? expect : max_out;
    if (cap > max_out) {
        util_err(file, base + len - SIZE_TRAILER, "claimed decompressed size %zu is too large", expect);
        return -1;
    }
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf) return -1;
    size_t got = 0;
    int rc;
    if (fmt[0] == 'g') rc = do_gzip(file, base, p, len, buf, cap, &got);
    else if (fmt[0] == 'x') rc = do_xz(file, base, p, len, buf, cap, &got);
    else if (fmt[1] == 's') rc = do_zstd(file, base, p, len, buf, cap, &got);
    else rc = do_lz4(file, base, p, len, buf, cap, &got);
    if (rc == 0 && expect && got != expect) {
        util_err(file, base + len, "%s: decompressed %zu bytes, trailer says %zu (truncated?)", fmt,
                 got, expect);
        rc = -1;
    }
    if (rc != 0) {
        free(buf);
        return -1;
    }
    out->data = buf;
    out->len = got;
    return 0;
}
