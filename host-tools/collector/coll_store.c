/* coll_store.c - trace directory writer; see coll_store.h. */
#define _GNU_SOURCE                      /* strerrorname_np */
#include "coll_store.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void coll_hex(const uint8_t *b, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = 0;
}

static int write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = write(fd, b, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static void path_of(const struct coll_store *s, char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", s->dir, name);
}

/* Remember the first failure (errno from the failed call) and return -1. Later failures are
 * consequences of the first; the first one is what the user must fix. */
static int store_fail(struct coll_store *s, const char *op, const char *name)
{
    int e = errno ? errno : EIO;
    if (!s->fail_errno) {
        s->fail_errno = e;
        snprintf(s->fail_what, sizeof s->fail_what, "%s %s/%s", op, s->dir, name);
    }
    errno = e;
    return -1;
}

const char *coll_errno_name(int e)
{
    const char *n = strerrorname_np(e);
    return n ? n : "EIO";
}

/* Trace data holds every guest register: owner only, whatever the umask or an older run left. */
static int open_private(const char *path, int flags)
{
    int fd = open(path, flags | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0 && fchmod(fd, 0600) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int coll_mkdir_private(const char *path)
{
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        return -1;
    return chmod(path, 0700);
}

static void index_load(struct coll_store *s);

static int open_chunk(struct coll_store *s)
{
    char name[64], path[4200];
    snprintf(name, sizeof name, "chunk-%06u.hvts", s->st.chunk_no);
    path_of(s, path, sizeof path, name);
    if (s->chunk_fd >= 0) {              /* rotating: chunk_no already names the next one */
        int r = close(s->chunk_fd);      /* a late write error (NFS, quota) shows here */
        s->chunk_fd = -1;
        if (r < 0) {
            char prev[64];
            snprintf(prev, sizeof prev, "chunk-%06u.hvts", s->st.chunk_no - 1);
            return store_fail(s, "close", prev);
        }
    }
    s->chunk_fd = open_private(path, O_WRONLY);
    if (s->chunk_fd < 0)
        return store_fail(s, "open", name);
    /* cut back to the checkpoint: bytes after it were never ACKed and will be resent */
    if (ftruncate(s->chunk_fd, (off_t)s->st.chunk_len) < 0 ||
        lseek(s->chunk_fd, (off_t)s->st.chunk_len, SEEK_SET) < 0)
        return store_fail(s, "truncate", name);
    return 0;
}

static int open_cut(struct coll_store *s, const char *name, uint64_t len)
{
    char path[4200];
    path_of(s, path, sizeof path, name);
    int fd = open_private(path, O_WRONLY);
    if (fd < 0)
        return -1;
    if (ftruncate(fd, (off_t)len) < 0 || lseek(fd, (off_t)len, SEEK_SET) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* NAME replaced as a whole (write NAME.tmp, rename): a reader or a restart sees the old or the
 * new file, never half of one. With fsync_each the rename itself is made durable too. */
static int write_file_atomic(struct coll_store *s, const char *name, const void *p, size_t n)
{
    char tmp[4200], path[4200];
    path_of(s, path, sizeof path, name);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open_private(tmp, O_WRONLY | O_TRUNC);
    if (fd < 0)
        return store_fail(s, "open", name);
    const char *op = "write";
    int r = write_all(fd, p, n);
    if (r == 0 && s->fsync_each && (r = fsync(fd)) < 0)
        op = "fsync";
    int e = errno;
    if (close(fd) < 0 && r == 0) {
        r = -1;
        op = "close";
        e = errno;
    }
    if (r == 0 && rename(tmp, path) < 0) {
        r = -1;
        op = "rename";
        e = errno;
    }
    if (r < 0) {
        unlink(tmp);
        errno = e;
        return store_fail(s, op, name);
    }
    if (s->fsync_each) {
        int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        r = dfd < 0 ? -1 : fsync(dfd);
        e = errno;
        if (dfd >= 0)
            close(dfd);
        if (r < 0) {
            errno = e;
            return store_fail(s, "fsync the directory of", name);
        }
    }
    return 0;
}

int coll_store_open(struct coll_store *s, const char *out, const struct hvt_hello *h,
                    const char *text, size_t text_len, uint64_t chunk_max, bool fsync_each,
                    char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->chunk_fd = s->console_fd = s->control_fd = -1;
    s->chunk_max = chunk_max;
    s->fsync_each = fsync_each;
    s->hello = *h;
    if (text_len >= sizeof s->hello_text)
        text_len = sizeof s->hello_text - 1;
    memcpy(s->hello_text, text, text_len);
    for (size_t i = 0; i < text_len; i++)          /* header.txt stays printable text */
        if ((s->hello_text[i] < ' ' && s->hello_text[i] != '\n') || s->hello_text[i] == 127)
            s->hello_text[i] = '?';
    char id[2 * HVT_BOOT_ID_LEN + 1];
    coll_hex(h->boot_id, HVT_BOOT_ID_LEN, id);
    /* OUT: 0700 when we create it; an existing OUT is the user's choice and left alone */
    if (mkdir(out, 0700) == 0 && chmod(out, 0700) < 0) {
        snprintf(err, errlen, "cannot chmod %s: %s", out, strerror(errno));
        return -1;
    }
    snprintf(s->dir, sizeof s->dir, "%s/%s", out, id);
    if (coll_mkdir_private(s->dir) < 0) {
        snprintf(err, errlen, "cannot create %s: %s", s->dir, strerror(errno));
        return -1;
    }
    char path[4200];
    path_of(s, path, sizeof path, "state.bin");
    FILE *f = fopen(path, "rb");
    if (f) {
        struct coll_state st;
        size_t got = fread(&st, 1, sizeof st, f);
        fclose(f);
        if (got >= 2 * sizeof(uint32_t) && st.magic == COLL_STATE_MAGIC &&
            st.version != COLL_STATE_VERSION) {
            snprintf(err, errlen, "%s/state.bin is a version %u checkpoint, this collector writes "
                     "version %u: use a new --out directory", s->dir, st.version, COLL_STATE_VERSION);
            return -1;
        }
        if (got != sizeof st || st.magic != COLL_STATE_MAGIC ||
            memcmp(st.boot_id, h->boot_id, HVT_BOOT_ID_LEN) != 0) {
            snprintf(err, errlen, "%s holds a state.bin that is not this boot's checkpoint: "
                     "refusing to mix traces", s->dir);
            return -1;
        }
        s->st = st;
        s->resumed = true;
    } else {
        s->st.magic = COLL_STATE_MAGIC;
        s->st.version = COLL_STATE_VERSION;
        memcpy(s->st.boot_id, h->boot_id, HVT_BOOT_ID_LEN);
        s->st.cpu_count = h->cpu_count;
    }
    if (s->st.cpu_count != h->cpu_count) {
        snprintf(err, errlen, "boot %s announced %u CPUs, its checkpoint says %u", id,
                 h->cpu_count, s->st.cpu_count);
        return -1;
    }
    /* Chunks written after the checkpoint are unacknowledged: remove them. */
    for (uint32_t c = s->st.chunk_no + 1;; c++) {
        char name[64];
        snprintf(name, sizeof name, "chunk-%06u.hvts", c);
        path_of(s, path, sizeof path, name);
        if (unlink(path) < 0)
            break;
    }
    if (open_chunk(s) < 0 ||
        (s->console_fd = open_cut(s, "console.log", s->st.console_len)) < 0 ||
        (s->control_fd = open_cut(s, "control.log", s->st.control_len)) < 0) {
        snprintf(err, errlen, "cannot open files in %s: %s", s->dir, strerror(errno));
        return -1;
    }
    /* the guest kernel identity is recovered from header.txt on resume */
    path_of(s, path, sizeof path, "header.txt");
    f = fopen(path, "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "guest_kernel=", 13)) {
                line[strcspn(line, "\n")] = 0;
                snprintf(s->guest_kernel, sizeof s->guest_kernel, "%s", line + 13);
            }
        fclose(f);
    }
    index_load(s);
    if (s->fail_errno) {
        snprintf(err, errlen, "%s: %s", s->fail_what, strerror(s->fail_errno));
        return -1;
    }
    s->durable = s->st;                  /* what state.bin on disk says (nothing, for a new boot) */
    char link[4200];
    snprintf(link, sizeof link, "%s/current", out);
    unlink(link);
    if (symlink(id, link) < 0) { /* a convenience only */ }
    return 0;
}

int coll_store_write_msgs(struct coll_store *s, const uint8_t *raw, size_t n, uint64_t first_off,
                          uint64_t nmsgs)
{
    if (n == 0)
        return 0;
    if (s->st.chunk_len == 0)
        s->st.chunk_first_off = first_off;
    if (write_all(s->chunk_fd, raw, n) < 0) {
        char name[64];
        snprintf(name, sizeof name, "chunk-%06u.hvts", s->st.chunk_no);
        return store_fail(s, "write", name);
    }
    s->st.chunk_len += n;
    s->st.chunk_msgs += nmsgs;
    return 0;
}

int coll_store_console(struct coll_store *s, const uint8_t *p, size_t n)
{
    if (write_all(s->console_fd, p, n) < 0)
        return store_fail(s, "write", "console.log");
    s->st.console_len += n;
    return 0;
}

int coll_store_control_line(struct coll_store *s, const char *line)
{
    size_t n = strlen(line);
    if (write_all(s->control_fd, line, n) < 0)
        return store_fail(s, "write", "control.log");
    s->st.control_len += n;
    return 0;
}

void coll_store_meta(struct coll_store *s, const uint8_t *p, size_t n)
{
    /* META is key=value lines; remember the guest kernel identity for the header */
    for (size_t i = 0; i < n && s->meta_len < sizeof s->meta - 1; i++)
        s->meta[s->meta_len++] = (p[i] >= ' ' || p[i] == '\n') && p[i] != 127 ? (char)p[i] : '?';
    s->meta[s->meta_len] = 0;
    const char *k = strstr(s->meta, "guest_kernel=");
    if (k) {
        k += 13;
        size_t l = strcspn(k, "\n");
        if (l >= sizeof s->guest_kernel)
            l = sizeof s->guest_kernel - 1;
        memcpy(s->guest_kernel, k, l);
        s->guest_kernel[l] = 0;
    }
}

static int index_add_line(struct coll_store *s, const char *line)
{
    size_t n = strlen(line);
    char *p = realloc(s->index_closed, s->index_closed_len + n + 1);
    if (!p) {
        errno = ENOMEM;
        return store_fail(s, "build", "index.tsv");   /* an index missing a chunk misleads */
    }
    memcpy(p + s->index_closed_len, line, n + 1);
    s->index_closed = p;
    s->index_closed_len += n;
    return 0;
}

static void index_line(const struct coll_store *s, char *out, size_t n)
{
    snprintf(out, n, "chunk-%06u.hvts\t%llu\t%llu\t%llu\n", s->st.chunk_no,
             (unsigned long long)s->st.chunk_first_off, (unsigned long long)s->st.chunk_len,
             (unsigned long long)s->st.chunk_msgs);
}

/* index.tsv: a header line, one line per closed chunk, then the live chunk. */
static int write_index(struct coll_store *s)
{
    static const char head[] = "# chunk\tfirst_off\tbytes\tmessages\n";
    char live[128];
    index_line(s, live, sizeof live);
    size_t n = sizeof head - 1 + s->index_closed_len + strlen(live);
    char *buf = malloc(n + 1);
    if (!buf)
        return store_fail(s, "build", "index.tsv");
    snprintf(buf, n + 1, "%s%s%s", head, s->index_closed ? s->index_closed : "", live);
    int r = write_file_atomic(s, "index.tsv", buf, n);
    free(buf);
    return r;
}

static void index_load(struct coll_store *s)
{
    char path[4200], line[256];
    path_of(s, path, sizeof path, "index.tsv");
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        unsigned c;
        if (line[0] != '#' && sscanf(line, "chunk-%u.hvts", &c) == 1 && c < s->st.chunk_no)
            if (index_add_line(s, line) < 0)
                break;
    }
    fclose(f);
}

static uint64_t trace_sum(const struct coll_trace_state *t, int insns)
{
    uint64_t n = 0;
    for (unsigned c = 0; c < COLL_TRACE_MAX_CPUS; c++)
        n += insns ? t->cpu[c].insns : t->cpu[c].records;
    return n;
}

static int write_header(struct coll_store *s)
{
    char id[2 * HVT_BOOT_ID_LEN + 1];
    coll_hex(s->hello.boot_id, HVT_BOOT_ID_LEN, id);
    const struct coll_counters *c = &s->st.c;
    char buf[12288];
    int n = snprintf(buf, sizeof buf,
        "format=hvtrace-collector-dir\nformat_version=1\nstream_version=%u\nboot_id=%s\n"
        "hv_version=%u.%u.%u\ncpu_count=%u\ntsc_hz=%llu\nring_size=%llu\nguest_kernel=%s\n"
        "connections=%u\nnext_off=%llu\nmessages=%llu\nbytes=%llu\nconsole_bytes=%llu\n"
        "trace_msgs=%llu\ntrace_bytes=%llu\ngap_events=%llu\ngap_bytes=%llu\ngap_msgs=%llu\n"
        "loss_reports=%llu\nlost_msgs=%llu\nlost_bytes=%llu\nctl_replies=%llu\n"
        "ctl_bad_tag=%llu\nbye=%llu\n"
        "trace_file=%s\ntrace_bytes_on_disk=%llu\ntrace_batches=%llu\ntrace_bad_batches=%llu\n"
        "trace_gaps=%llu\ntrace_records=%llu\ntrace_insns=%llu\ntrace_lstar=0x%llx\n"
        "# hello text follows\n%s%s# meta follows\n%s%s",
        HVT_STREAM_VERSION, id, (s->hello.hv_version >> 16) & 0xff,
        (s->hello.hv_version >> 8) & 0xff, s->hello.hv_version & 0xff, s->hello.cpu_count,
        (unsigned long long)s->hello.tsc_hz, (unsigned long long)s->hello.ring_size,
        s->guest_kernel[0] ? s->guest_kernel : "unknown", s->connections,
        (unsigned long long)s->st.next_off, (unsigned long long)c->msgs,
        (unsigned long long)c->bytes, (unsigned long long)c->console_bytes,
        (unsigned long long)c->trace_msgs, (unsigned long long)c->trace_bytes,
        (unsigned long long)c->gap_events, (unsigned long long)c->gap_bytes,
        (unsigned long long)c->gap_msgs, (unsigned long long)c->loss_reports,
        (unsigned long long)c->lost_msgs, (unsigned long long)c->lost_bytes,
        (unsigned long long)c->ctl_replies, (unsigned long long)c->ctl_bad_tag,
        (unsigned long long)c->byes, s->st.trace.data_len ? COLL_TRACE_FILE : "none",
        (unsigned long long)s->st.trace.data_len, (unsigned long long)s->st.trace.batches,
        (unsigned long long)s->st.trace.bad_batches, (unsigned long long)s->st.trace.gaps,
        (unsigned long long)trace_sum(&s->st.trace, 0), (unsigned long long)trace_sum(&s->st.trace, 1),
        (unsigned long long)s->st.trace.lstar, s->hello_text,
        s->hello_text[0] && s->hello_text[strlen(s->hello_text) - 1] != '\n' ? "\n" : "",
        s->meta, s->meta_len && s->meta[s->meta_len - 1] != '\n' ? "\n" : "");
    if (n < 0 || (size_t)n >= sizeof buf)
        n = (int)sizeof buf - 1;
    return write_file_atomic(s, "header.txt", buf, (size_t)n);
}

int coll_store_checkpoint(struct coll_store *s, const struct coll_parser *p)
{
    s->st.next_off = p->next_off;
    s->st.c = p->c;
    memcpy(s->st.next_seq, p->next_seq, sizeof s->st.next_seq);
    if (s->fail_errno)
        return -1;                       /* sticky: nothing after a failure is trusted */
    if (s->fsync_each && fsync(s->chunk_fd) < 0) {
        char name[64];
        snprintf(name, sizeof name, "chunk-%06u.hvts", s->st.chunk_no);
        return store_fail(s, "fsync", name);
    }
    if (s->fsync_each && (fsync(s->console_fd) < 0 || fsync(s->control_fd) < 0))
        return store_fail(s, "fsync", "console.log/control.log");
    /* order: data first, then the checkpoint that points at it */
    if (write_file_atomic(s, "state.bin", &s->st, sizeof s->st) < 0)
        return -1;
    if (write_header(s) < 0 || write_index(s) < 0)
        return -1;
    if (s->st.chunk_len >= s->chunk_max) {
        /* rotate only at a checkpoint so state.bin always names the live chunk */
        char line[128];
        index_line(s, line, sizeof line);
        if (index_add_line(s, line) < 0)
            return -1;
        s->st.chunk_no++;
        s->st.chunk_len = 0;
        s->st.chunk_msgs = 0;
        s->st.chunk_first_off = p->next_off;
        if (open_chunk(s) < 0 || write_file_atomic(s, "state.bin", &s->st, sizeof s->st) < 0)
            return -1;
    }
    s->durable = s->st;
    return 0;
}

int coll_store_close(struct coll_store *s)
{
    int rc = 0;
    char name[64];
    snprintf(name, sizeof name, "chunk-%06u.hvts", s->st.chunk_no);
    if (s->chunk_fd >= 0 && close(s->chunk_fd) < 0)
        rc = store_fail(s, "close", name);
    if (s->console_fd >= 0 && close(s->console_fd) < 0)
        rc = store_fail(s, "close", "console.log");
    if (s->control_fd >= 0 && close(s->control_fd) < 0)
        rc = store_fail(s, "close", "control.log");
    s->chunk_fd = s->console_fd = s->control_fd = -1;
    free(s->index_closed);
    s->index_closed = NULL;
    s->index_closed_len = 0;
    return rc;
}

/* OUT/<boot>/NAME */
static void boot_path(const char *out, const struct hvt_hello *h, const char *name, char *path,
                      size_t n)
{
    char id[2 * HVT_BOOT_ID_LEN + 1];
    coll_hex(h->boot_id, HVT_BOOT_ID_LEN, id);
    snprintf(path, n, "%s/%s%s%s", out, id, name[0] ? "/" : "", name);
}

int coll_store_hello_fresh(const char *out, const struct hvt_hello *h, char *why, size_t whylen)
{
    char path[4200], id[2 * HVT_BOOT_ID_LEN + 1];
    struct stat sb;
    coll_hex(h->boot_id, HVT_BOOT_ID_LEN, id);
    boot_path(out, h, "", path, sizeof path);
    if (stat(path, &sb) < 0 && errno == ENOENT)
        return 1;                          /* a boot never seen here */
    char link[4200], cur[256];
    snprintf(link, sizeof link, "%s/current", out);
    ssize_t n = readlink(link, cur, sizeof cur - 1);
    cur[n > 0 ? n : 0] = 0;
    if (strcmp(cur, id)) {
        snprintf(why, whylen, "a HELLO of boot %s, which is not the newest boot here (a replay)", id);
        return 0;
    }
    boot_path(out, h, "hello.conn", path, sizeof path);
    FILE *f = fopen(path, "r");
    unsigned long long max = 0;
    bool have = f && fscanf(f, "%llu", &max) == 1;
    if (f)
        fclose(f);
    if (have && h->connection <= max) {
        snprintf(why, whylen, "its HELLO is not newer than connection %llu already accepted for "
                 "boot %s (a replay)", max, id);
        return 0;
    }
    return 1;
}

int coll_store_hello_accepted(const char *out, const struct hvt_hello *h, bool fsync_each)
{
    char path[4200], tmp[4300], line[32];
    boot_path(out, h, "hello.conn", path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int len = snprintf(line, sizeof line, "%u\n", h->connection);
    int rc = fchmod(fd, 0600) < 0 || write_all(fd, line, (size_t)len) < 0 ||
             (fsync_each && fsync(fd) < 0) ? -1 : 0;
    if (close(fd) < 0 || rc < 0 || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}
