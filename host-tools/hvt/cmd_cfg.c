/*
 * cmd_cfg.c - hvt cfg: the machine's keys to enroll, and hvtrace.cfg sealed with them.
 *
 *   hvt cfg keys DIR                      DIR/hvtrace.enroll (copy it to the ESP's root: the
 *                                         loader stores its keys in the firmware at the next
 *                                         boot and deletes it), DIR/seal.key and
 *                                         DIR/stream.key (the collector's --key-file); new
 *                                         random keys, files mode 0600, none overwritten
 *   hvt cfg seal --key-file SEAL.KEY CFG  CFG rewritten with one `seal = HEX` line at its end
 *                                         (any earlier seal line removed)
 *   hvt cfg check --key-file SEAL.KEY CFG exit 0 when CFG's seal verifies, else 1 with why
 *
 * The seal is computed by the loader's own code (boot/cfg_seal.c), so what this command
 * writes is what the loader verifies.
 */
#include "hvt_cmd.h"
#include "../../boot/cfg_seal.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static int cfg_usage(void)
{
    fprintf(stderr, "usage: hvt cfg keys DIR\n"
                    "       hvt cfg seal --key-file SEAL.KEY HVTRACE.CFG\n"
                    "       hvt cfg check --key-file SEAL.KEY HVTRACE.CFG\n");
    return HVT_EXIT_USAGE;
}

static void cfg_hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
}

static int cfg_write_new(const char *dir, const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) {
        fprintf(stderr, "hvt cfg keys: %s: %s%s\n", path, strerror(errno),
                errno == EEXIST ? " (keys are never overwritten: remove it first)" : "");
        return -1;
    }
    size_t n = strlen(text);
    int ok = write(fd, text, n) == (ssize_t)n;
    if (close(fd) != 0) ok = 0;
    if (!ok) fprintf(stderr, "hvt cfg keys: %s: write failed\n", path);
    return ok ? 0 : -1;
}

static int cfg_keys(const char *dir)
{
    uint8_t seal[CFG_SEAL_KEY_LEN], stream[32];
    if (getrandom(seal, sizeof seal, 0) != sizeof seal ||
        getrandom(stream, sizeof stream, 0) != sizeof stream) {
        fprintf(stderr, "hvt cfg keys: getrandom: %s\n", strerror(errno));
        return HVT_EXIT_BAD;
    }
    char sh[2 * sizeof seal + 1], th[2 * sizeof stream + 1], enroll[256], line[200];
    cfg_hex(seal, sizeof seal, sh);
    cfg_hex(stream, sizeof stream, th);
    snprintf(enroll, sizeof enroll, "seal_key = %s\nstream_key = %s\n", sh, th);
    /* The loader's own parser must take what is written. */
    struct cfg_keys k;
    if (cfg_keys_parse(&k, enroll, strlen(enroll))) {
        fprintf(stderr, "hvt cfg keys: internal error: the enrollment file does not parse\n");
        return HVT_EXIT_BAD;
    }
    memset(&k, 0, sizeof k);
    int rc = cfg_write_new(dir, "hvtrace.enroll", enroll);
    snprintf(line, sizeof line, "%s\n", sh);
    if (!rc) rc = cfg_write_new(dir, "seal.key", line);
    snprintf(line, sizeof line, "%s\n", th);
    if (!rc) rc = cfg_write_new(dir, "stream.key", line);
    memset(enroll, 0, sizeof enroll);
    memset(seal, 0, sizeof seal);
    memset(stream, 0, sizeof stream);
    if (rc) return HVT_EXIT_BAD;
    printf("%s/hvtrace.enroll  copy to the ESP's root (the loader enrolls it and deletes it)\n"
           "%s/seal.key        keep: hvt cfg seal --key-file %s/seal.key hvtrace.cfg\n"
           "%s/stream.key      the collector's --key-file\n", dir, dir, dir, dir);
    return 0;
}

static char *cfg_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "hvt cfg: %s: %s\n", path, strerror(errno)); return NULL; }
    size_t cap = 4096, n = 0;
    char *b = malloc(cap);
    for (size_t got; b && (got = fread(b + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) { char *nb = realloc(b, cap *= 2); if (!nb) { free(b); b = NULL; } else b = nb; }
    }
    fclose(f);
    if (!b) { fprintf(stderr, "hvt cfg: %s: out of memory\n", path); return NULL; }
    *len = n;
    return b;
}

static int cfg_read_key(const char *path, uint8_t key[CFG_SEAL_KEY_LEN])
{
    size_t n;
    char *t = cfg_slurp(path, &n);
    if (!t) return -1;
    while (n && (t[n - 1] == '\n' || t[n - 1] == '\r' || t[n - 1] == ' ')) n--;
    int ok = n == 2 * CFG_SEAL_KEY_LEN;
    for (size_t i = 0; ok && i < CFG_SEAL_KEY_LEN; i++) {
        unsigned v;
        char two[3] = { t[2 * i], t[2 * i + 1], 0 };
        if (sscanf(two, "%2x", &v) != 1 || strspn(two, "0123456789abcdefABCDEF") != 2) ok = 0;
        else key[i] = (uint8_t)v;
    }
    memset(t, 0, n);
    free(t);
    if (!ok) fprintf(stderr, "hvt cfg: %s: expected the 64 hex digits of a seal key\n", path);
    return ok ? 0 : -1;
}

static int cfg_seal_cmd(int check, const char *key_file, const char *path)
{
    uint8_t key[CFG_SEAL_KEY_LEN], mac[CFG_SEAL_MAC_LEN];
    if (cfg_read_key(key_file, key)) return HVT_EXIT_BAD;
    size_t n;
    char *t = cfg_slurp(path, &n);
    if (!t) return HVT_EXIT_BAD;
    int rc = 0;
    if (check) {
        enum cfg_seal_state s = cfg_seal_check(key, t, n);
        printf("%s: %s\n", path, cfg_seal_state_name(s));
        rc = s == CFG_SEAL_OK ? 0 : HVT_EXIT_BAD;
    } else {
        n = cfg_seal_strip(t, n);
        char *nt = realloc(t, n + 2 + 80);
        if (!nt) { free(t); return HVT_EXIT_BAD; }
        t = nt;
        if (n && t[n - 1] != '\n') t[n++] = '\n';
        cfg_seal_mac(key, t, n, mac);
        n += cfg_seal_line(mac, t + n);
        if (cfg_seal_check(key, t, n) != CFG_SEAL_OK) {
            fprintf(stderr, "hvt cfg seal: internal error: the sealed file does not verify\n");
            rc = HVT_EXIT_BAD;
        } else {
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.seal-tmp", path);
            FILE *f = fopen(tmp, "wb");
            int ok = f && fwrite(t, 1, n, f) == n;
            if (f && fclose(f) != 0) ok = 0;
            if (!ok || rename(tmp, path) != 0) {
                fprintf(stderr, "hvt cfg seal: %s: %s\n", path, strerror(errno));
                unlink(tmp);
                rc = HVT_EXIT_BAD;
            } else {
                printf("%s: sealed\n", path);
            }
        }
    }
    memset(key, 0, sizeof key);
    free(t);
    return rc;
}

int cmd_cfg(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[0], "keys"))
        return cfg_keys(argv[1]);
    if (argc == 4 && (!strcmp(argv[0], "seal") || !strcmp(argv[0], "check")) &&
        !strcmp(argv[1], "--key-file"))
        return cfg_seal_cmd(!strcmp(argv[0], "check"), argv[2], argv[3]);
    return cfg_usage();
}
