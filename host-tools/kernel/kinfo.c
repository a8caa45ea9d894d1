/* kinfo: see kinfo.h. */
#include "kinfo.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { PATH_MAX_LEN = 4096 };

static void cache_root(char *out, size_t n)
{
    const char *k = getenv("HVT_KINFO_CACHE");
    if (k && *k) {
        snprintf(out, n, "%s", k);
        return;
    }
    const char *c = getenv("HVT_CACHE");
    const char *home = getenv("HOME");
    if (c && *c) snprintf(out, n, "%s/kinfo", c);
    else snprintf(out, n, "%s/.cache/hvtrace/kinfo", home ? home : "/tmp");
}

static int from_cache(kinfo *ki, const char *dir)
{
    char p[PATH_MAX_LEN];
    snprintf(p, sizeof p, "%s/syms.bin", dir);
    if (ksym_load(&ki->syms, p) != 0) return -1;
    snprintf(p, sizeof p, "%s/btf.bin", dir);
    if (util_read_file(p, &ki->btf_blob) != 0) {
        ksym_free(&ki->syms);
        return -1;
    }
    return 0;
}

/* Parse the BTF blob, if there is one (an empty blob means the kernel has none). */
static int attach_btf(kinfo *ki, const char *name)
{
    memset(&ki->btf, 0, sizeof ki->btf);
    if (!ki->btf_blob.len) return 0;
    return btf_parse(&ki->btf, name, ki->btf_blob.data, ki->btf_blob.len);
}

int kinfo_open(kinfo *ki, const char *vmlinuz, int use_cache)
{
    memset(ki, 0, sizeof *ki);
    char root[PATH_MAX_LEN], alias[PATH_MAX_LEN], dir[PATH_MAX_LEN * 2];
    util_buf file = {0};
    cache_root(root, sizeof root);
    if (use_cache) {
        if (util_read_file(vmlinuz, &file) != 0) return -1;
        uLong crc = crc32(0, Z_NULL, 0);
        for (size_t o = 0; o < file.len; o += 1u << 30) {
            size_t l = file.len - o < (1u << 30) ? file.len - o : (1u << 30);
            crc = crc32(crc, file.data + o, (uInt)l);
        }
        snprintf(alias, sizeof alias, "%s/img-%zu-%08lx", root, file.len, (unsigned long)crc);
        util_buf a;
        FILE *f = fopen(alias, "r");
        if (f) {
            fclose(f);
            if (util_read_file(alias, &a) == 0) {
                size_t l = a.len < sizeof ki->build_id - 1 ? a.len : sizeof ki->build_id - 1;
                memcpy(ki->build_id, a.data, l);
                ki->build_id[l] = 0;
                util_buf_free(&a);
                snprintf(dir, sizeof dir, "%s/%s", root, ki->build_id);
                if (from_cache(ki, dir) == 0 && attach_btf(ki, vmlinuz) == 0) {
                    ki->source = "cache";
                    util_buf_free(&file);
                    return 0;
                }
                ksym_free(&ki->syms);
                util_buf_free(&ki->btf_blob);
            }
        }
    }
    kimg k;
    int rc = file.data ? kimg_load_mem(&k, vmlinuz, file) : kimg_load(&k, vmlinuz);
    if (rc != 0) {
        kimg_free(&k);
        return -1;
    }
    kimg_build_id_hex(&k, ki->build_id);
    const uint8_t *blob;
    size_t blen;
    if (ksym_extract(&k, &ki->syms) != 0) {
        kimg_free(&k);
        kinfo_close(ki);
        return -1;
    }
    if (btf_find_blob(&k, &blob, &blen) != 0) { /* symbols still work; layouts will not */
        fprintf(stderr, "hvt: %s: continuing without BTF (no struct layouts)\n", vmlinuz);
        blen = 0;
    }
    ki->btf_blob.data = malloc(blen ? blen : 1);
    if (!ki->btf_blob.data) {
        kimg_free(&k);
        kinfo_close(ki);
        return -1;
    }
    if (blen) memcpy(ki->btf_blob.data, blob, blen);
    ki->btf_blob.len = blen;
    kimg_free(&k);
    if (attach_btf(ki, vmlinuz) != 0) {
        kinfo_close(ki);
        return -1;
    }
    ki->source = "image";
    if (use_cache && ki->build_id[0]) {
        snprintf(dir, sizeof dir, "%s/%s", root, ki->build_id);
        char p[PATH_MAX_LEN * 3];
        if (util_mkdirs(dir) == 0) {
            snprintf(p, sizeof p, "%s/syms.bin", dir);
            int ok = ksym_save(&ki->syms, p) == 0;
            snprintf(p, sizeof p, "%s/btf.bin", dir);
            ok = ok && util_write_file(p, ki->btf_blob.data, ki->btf_blob.len) == 0;
            if (ok) util_write_file(alias, ki->build_id, strlen(ki->build_id));
        }
    }
    return 0;
}

void kinfo_close(kinfo *ki)
{
    ksym_free(&ki->syms);
    btf_free(&ki->btf);
    util_buf_free(&ki->btf_blob);
}

static int member(const kinfo *ki, const char *st, const char *field, uint32_t *off, uint32_t *size)
{
    uint32_t sid = btf_find_struct(&ki->btf, st);
    btf_member m;
    if (!sid || btf_member_find(&ki->btf, sid, field, &m) != 0 || m.bit_size || m.bit_offset % 8) {
        fprintf(stderr, "hvt: kernel %s: BTF has no usable struct %s.%s\n", ki->build_id, st, field);
        return -1;
    }
    *off = (uint32_t)(m.bit_offset / 8);
    if (size) *size = (uint32_t)m.size;
    return 0;
}

int kinfo_layout_get(const kinfo *ki, kinfo_layout *out)
{
    memset(out, 0, sizeof *out);
    if (member(ki, "task_struct", "pid", &out->task_pid, NULL) ||
        member(ki, "task_struct", "tgid", &out->task_tgid, NULL) ||
        member(ki, "task_struct", "comm", &out->task_comm, &out->task_comm_len) ||
        member(ki, "task_struct", "mm", &out->task_mm, NULL) ||
        member(ki, "mm_struct", "pgd", &out->mm_pgd, NULL) ||
        member(ki, "task_struct", "cred", &out->task_cred, NULL) ||
        member(ki, "cred", "euid", &out->cred_euid, NULL))
        return -1;
    int64_t hot = ksym_find(&ki->syms, "pcpu_hot");
    if (hot >= 0 && ki->syms.syms[hot].abs) { /* 6.2+: struct pcpu_hot { ... current_task ... } */
        uint32_t off;
        if (member(ki, "pcpu_hot", "current_task", &off, NULL)) return -1;
        out->percpu_current = ki->syms.syms[hot].addr + off;
        out->uses_pcpu_hot = 1;
        return 0;
    }
    int64_t ct = ksym_find(&ki->syms, "current_task");
    if (ct < 0 || !ki->syms.syms[ct].abs || !btf_has_var(&ki->btf, "current_task")) {
        fprintf(stderr, "hvt: kernel %s: no per-CPU current_task or pcpu_hot\n", ki->build_id);
        return -1;
    }
    out->percpu_current = ki->syms.syms[ct].addr;
    return 0;
}

int kinfo_slide_from_lstar(const kinfo *ki, uint64_t lstar, int64_t *slide)
{
    int64_t i = ksym_find(&ki->syms, "entry_SYSCALL_64");
    if (i < 0) {
        fprintf(stderr, "hvt: kernel %s: no entry_SYSCALL_64 symbol\n", ki->build_id);
        return -1;
    }
    uint64_t d = lstar - ki->syms.syms[i].addr;
    if (d % KINFO_KASLR_ALIGN) {
        fprintf(stderr, "hvt: LSTAR 0x%llx is not entry_SYSCALL_64 (0x%llx) plus a 2 MiB-aligned slide\n",
                (unsigned long long)lstar, (unsigned long long)ki->syms.syms[i].addr);
        return -1;
    }
    *slide = (int64_t)d;
    return 0;
}
