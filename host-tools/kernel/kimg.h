/* kimg: a kernel image in memory: a bzImage (vmlinuz) whose payload is decompressed by decompress.c,
 * or a plain vmlinux ELF. Gives the ELF's link-time view (PT_LOAD segments: vaddr -> bytes) and
 * the GNU build id (from PT_NOTE), which keys the kinfo cache.
 * Contract: kimg_load() validates every header field it uses against the file size and reports
 * problems as "FILE: offset N: ..."; all later accessors are bounds-checked and return NULL/0 on
 * addresses outside the image. */
#ifndef HVT_KIMG_H
#define HVT_KIMG_H
#include "util.h"

enum { KIMG_MAX_SEGS = 16, KIMG_BUILD_ID_MAX = 64 };

typedef struct {
    uint64_t vaddr, offset, filesz, memsz;
} kimg_seg;

typedef struct {
    const char *path;
    util_buf file; /* the file as read */
    util_buf elf;  /* decompressed vmlinux (or a copy of file if it was ELF already) */
    const char *compression; /* "lz4", "xz", ... or "none" */
    uint64_t payload_offset; /* file offset of the compressed payload */
    kimg_seg segs[KIMG_MAX_SEGS];
    int nsegs;
    uint8_t build_id[KIMG_BUILD_ID_MAX];
    size_t build_id_len;
} kimg;

/* Largest decompressed kernel accepted (bytes); the fuzzer lowers it. */
extern size_t kimg_max_vmlinux;
int kimg_load(kimg *k, const char *path);
/* Same, from bytes already in memory (used by the fuzzers); takes ownership of `file`. */
int kimg_load_mem(kimg *k, const char *name, util_buf file);
void kimg_free(kimg *k);
/* Pointer to `len` bytes at link address `vaddr`, or NULL. */
const uint8_t *kimg_ptr(const kimg *k, uint64_t vaddr, size_t len);
/* Link address of ELF file offset `off`, or 0 if not inside a loaded segment. */
uint64_t kimg_vaddr_of(const kimg *k, uint64_t off);
/* Build id as lowercase hex into `out` (size >= 2*KIMG_BUILD_ID_MAX+1). */
void kimg_build_id_hex(const kimg *k, char *out);
#endif
