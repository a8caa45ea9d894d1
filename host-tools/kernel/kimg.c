/* kimg: see kimg.h. The bzImage layout is the x86 boot protocol (Documentation/x86/boot.rst):
 * setup_sects at 0x1f1, "HdrS" at 0x202, payload_offset/length at 0x248/0x24c (protocol
 * >= 2.08); the payload starts after the real-mode setup, (setup_sects + 1) * 512 bytes in. */
#include "kimg.h"
#include "decompress.h"
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum {
    BOOT_SETUP_SECTS = 0x1f1,
    BOOT_SYSSIZE = 0x1f4,         /* protected-mode part size in 16-byte paragraphs */
    BOOT_PARAGRAPH = 16,
    BOOT_CRC_BYTES = 4,           /* build.c appends a CRC32 of everything before it */
    BOOT_HDR_MAGIC = 0x202,
    BOOT_VERSION = 0x206,
    BOOT_PAYLOAD_OFFSET = 0x248,
    BOOT_PAYLOAD_LENGTH = 0x24c,
    BOOT_HDR_END = 0x250,
    BOOT_SECTOR = 512,
    BOOT_DEFAULT_SETUP_SECTS = 4, /* setup_sects == 0 means 4 */
    BOOT_MIN_VERSION = 0x0208,    /* first protocol with payload_offset */
    ELF_NOTE_ALIGN = 4,
};

size_t kimg_max_vmlinux = 1u << 30; /* refuse to inflate beyond 1 GiB */

static int parse_elf(kimg *k)
{
    const uint8_t *e = k->elf.data;
    size_t n = k->elf.len;
    const char *f = k->path;
    if (n < sizeof(Elf64_Ehdr) || memcmp(e, ELFMAG, SELFMAG) != 0) {
        util_err(f, k->payload_offset, "decompressed payload is not an ELF file");
        return -1;
    }
    Elf64_Ehdr eh;
    memcpy(&eh, e, sizeof eh);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
        eh.e_machine != EM_X86_64) {
        util_err(f, k->payload_offset, "vmlinux is not a little-endian x86-64 ELF64");
        return -1;
    }
    if (eh.e_phentsize != sizeof(Elf64_Phdr) ||
        !util_fits(n, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr))) {
        util_err(f, k->payload_offset, "vmlinux program headers at ELF offset 0x%llx out of range",
                 (unsigned long long)eh.e_phoff);
        return -1;
    }
    for (int i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        memcpy(&ph, e + eh.e_phoff + (uint64_t)i * sizeof ph, sizeof ph);
        if (!util_fits(n, ph.p_offset, ph.p_filesz)) {
            util_err(f, k->payload_offset, "vmlinux segment %d (ELF offset 0x%llx) runs past the end", i,
                     (unsigned long long)ph.p_offset);
            return -1;
        }
        if (ph.p_type == PT_LOAD && k->nsegs < KIMG_MAX_SEGS) {
            k->segs[k->nsegs++] = (kimg_seg){ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz};
        } else if (ph.p_type == PT_NOTE) {
            uint64_t pos = ph.p_offset, end = ph.p_offset + ph.p_filesz;
            while (pos + sizeof(Elf64_Nhdr) <= end) {
                Elf64_Nhdr nh;
                memcpy(&nh, e + pos, sizeof nh);
                uint64_t name_at = pos + sizeof nh;
                uint64_t desc_at = name_at + ((nh.n_namesz + ELF_NOTE_ALIGN - 1) & ~(uint64_t)(ELF_NOTE_ALIGN - 1));
                uint64_t next = desc_at + ((nh.n_descsz + ELF_NOTE_ALIGN - 1) & ~(uint64_t)(ELF_NOTE_ALIGN - 1));
                if (next > end) break;
                if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(e + name_at, "GNU", 4) == 0 &&
                    nh.n_descsz <= KIMG_BUILD_ID_MAX) {
                    memcpy(k->build_id, e + desc_at, nh.n_descsz);
                    k->build_id_len = nh.n_descsz;
                }
                pos = next;
            }
        }
    }
    if (k->nsegs == 0) {
        util_err(f, k->payload_offset, "vmlinux has no loadable segments");
        return -1;
    }
    return 0;
}

int kimg_load_mem(kimg *k, const char *name, util_buf file)
{
    memset(k, 0, sizeof *k);
    k->path = name;
    k->file = file;
    const uint8_t *d = file.data;
    size_t n = file.len;
    if (n >= SELFMAG && memcmp(d, ELFMAG, SELFMAG) == 0) {
        k->compression = "none";
        k->elf.data = malloc(n ? n : 1);
        if (!k->elf.data) return -1;
        memcpy(k->elf.data, d, n);
        k->elf.len = n;
        return parse_elf(k);
    }
    if (n < BOOT_HDR_END) {
        util_err(name, n, "file too short for a bzImage setup header (%zu bytes)", n);
        return -1;
    }
    if (memcmp(d + BOOT_HDR_MAGIC, "HdrS", 4) != 0) {
        util_err(name, BOOT_HDR_MAGIC, "no \"HdrS\" boot header: not a bzImage or vmlinux");
        return -1;
    }
    uint16_t ver = util_le16(d + BOOT_VERSION);
    if (ver < BOOT_MIN_VERSION) {
        util_err(name, BOOT_VERSION, "boot protocol %u.%02u has no payload fields", ver >> 8, ver & 0xff);
        return -1;
    }
    unsigned sects = d[BOOT_SETUP_SECTS] ? d[BOOT_SETUP_SECTS] : BOOT_DEFAULT_SETUP_SECTS;
    uint64_t pm_start = (uint64_t)(sects + 1) * BOOT_SECTOR;
    uint64_t want_len = pm_start + (uint64_t)util_le32(d + BOOT_SYSSIZE) * BOOT_PARAGRAPH;
    if (n < want_len) {
        util_err(name, n, "file truncated: the boot header says %llu bytes, the file has %zu",
                 (unsigned long long)want_len, n);
        return -1;
    }
    if (n == want_len) {
        /* arch/x86/boot/tools/build.c: le32 CRC32 (init ~0, no final xor) of all bytes before
         * it. Signed images are longer (signature appended) and skip this check. */
        uint32_t crc = ~(uint32_t)crc32(0, d, (uInt)(n - BOOT_CRC_BYTES));
        if (crc != util_le32(d + n - BOOT_CRC_BYTES)) {
            util_err(name, n - BOOT_CRC_BYTES, "image CRC32 mismatch (corrupt file): computed %08x, stored %08x", crc,
                     util_le32(d + n - BOOT_CRC_BYTES));
            return -1;
        }
    }
    uint64_t poff = pm_start + util_le32(d + BOOT_PAYLOAD_OFFSET);
    uint64_t plen = util_le32(d + BOOT_PAYLOAD_LENGTH);
    if (!util_fits(n, poff, plen) || plen < 8) {
        util_err(name, BOOT_PAYLOAD_OFFSET, "payload [0x%llx, +0x%llx) lies outside the %zu-byte file (truncated?)",
                 (unsigned long long)poff, (unsigned long long)plen, n);
        return -1;
    }
    k->payload_offset = poff;
    k->compression = decompress_format(d + poff, plen);
    size_t expect = util_le32(d + poff + plen - 4);
    if (decompress_payload(name, poff, d + poff, plen, expect, kimg_max_vmlinux, &k->elf) != 0) return -1;
    return parse_elf(k);
}

int kimg_load(kimg *k, const char *path)
{
    util_buf b;
    memset(k, 0, sizeof *k);
    if (util_read_file(path, &b) != 0) return -1;
    return kimg_load_mem(k, path, b);
}

void kimg_free(kimg *k)
{
    util_buf_free(&k->file);
    util_buf_free(&k->elf);
}

const uint8_t *kimg_ptr(const kimg *k, uint64_t vaddr, size_t len)
{
    for (int i = 0; i < k->nsegs; i++) {
        const kimg_seg *s = &k->segs[i];
        if (vaddr >= s->vaddr && vaddr - s->vaddr <= s->filesz && len <= s->filesz - (vaddr - s->vaddr))
            return k->elf.data + s->offset + (vaddr - s->vaddr);
    }
    return NULL;
}

uint64_t kimg_vaddr_of(const kimg *k, uint64_t off)
{
    for (int i = 0; i < k->nsegs; i++) {
        const kimg_seg *s = &k->segs[i];
        if (off >= s->offset && off - s->offset < s->filesz) return s->vaddr + (off - s->offset);
    }
    return 0;
}

void kimg_build_id_hex(const kimg *k, char *out)
{
    static const char hex[] = "0123456789abcdef";
    size_t i;
    for (i = 0; i < k->build_id_len; i++) {
        out[2 * i] = hex[k->build_id[i] >> 4];
        out[2 * i + 1] = hex[k->build_id[i] & 15];
    }
    out[2 * i] = 0;
}
