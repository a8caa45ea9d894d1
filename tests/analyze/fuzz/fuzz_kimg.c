/* libFuzzer target: bzImage header + payload decompression (gzip/xz/lz4/zstd) + ELF parsing,
 * then BTF location and kallsyms on whatever decompressed. */
#include "btf.h"
#include "kimg.h"
#include "ksym.h"
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    util_err_quiet = 1;
    kimg_max_vmlinux = 16u << 20; /* keep each run small; the limit path itself is exercised */
    util_buf b = {malloc(size ? size : 1), size};
    memcpy(b.data, data, size);
    kimg k;
    if (kimg_load_mem(&k, "fuzz", b) == 0) {
        const uint8_t *blob;
        size_t len;
        btf_find_blob(&k, &blob, &len);
        ksym_table t;
        if (ksym_extract(&k, &t) == 0) ksym_free(&t);
        kimg_ptr(&k, k.segs[0].vaddr, 16);
    }
    kimg_free(&k);
    return 0;
}
