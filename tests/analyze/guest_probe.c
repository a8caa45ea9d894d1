/* guest_probe: runs as /init's helper inside a QEMU guest to capture fixtures for
 * `make test-analyze`. It copies /proc/kallsyms and /sys/kernel/btf/vmlinux and dumps
 * raw kernel memory (through /proc/kcore) of its own task_struct, of init_task and of init_mm, so the
 * host test can check BTF-derived offsets against the running guest's memory.
 * Output goes to a serial port in raw mode as a tiny container:
 *   "HVTF <name> <size>\n" <size bytes> ... "HVTEND\n"
 * Built static on the host (gcc -static); it needs nothing from the guest but /proc, /sys.
 * It deliberately knows no struct offsets: the host side is what is being tested. */
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

enum { TASK_DUMP_BYTES = 16384, MM_DUMP_BYTES = 4096, MAX_PHDRS = 256 };

static Elf64_Phdr kcore_phdrs[MAX_PHDRS];
static int kcore_nphdrs;
static int kcore_fd = -1;

static void die(const char *what) { perror(what); exit(1); }

static char *slurp(const char *path, size_t *len_out)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) die(path);
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (len == cap) { cap *= 2; buf = realloc(buf, cap); if (!buf) die("realloc"); }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0) die(path);
        if (n == 0) break;
        len += (size_t)n;
    }
    close(fd);
    *len_out = len;
    return buf;
}

static uint64_t kallsyms_lookup(const char *ks, size_t len, const char *name)
{
    const char *p = ks, *end = ks + len;
    size_t nlen = strlen(name);
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) nl = end;
        /* line: 16 hex, space, type, space, name[\t[module]] */
        if (nl - p > 19 && (size_t)(nl - p - 19) >= nlen && memcmp(p + 19, name, nlen) == 0 &&
            (p + 19 + nlen == nl || p[19 + nlen] == '\t'))
            return strtoull(p, NULL, 16);
        p = nl + 1;
    }
    fprintf(stderr, "probe: symbol %s not found\n", name);
    exit(1);
}

static void kcore_open(void)
{
    kcore_fd = open("/proc/kcore", O_RDONLY);
    if (kcore_fd < 0) die("/proc/kcore");
    Elf64_Ehdr eh;
    if (pread(kcore_fd, &eh, sizeof eh, 0) != sizeof eh) die("kcore ehdr");
    kcore_nphdrs = eh.e_phnum < MAX_PHDRS ? eh.e_phnum : MAX_PHDRS;
    for (int i = 0; i < kcore_nphdrs; i++)
        if (pread(kcore_fd, &kcore_phdrs[i], sizeof(Elf64_Phdr),
                  (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) != sizeof(Elf64_Phdr))
            die("kcore phdr");
}

static void kread(uint64_t vaddr, void *buf, size_t len)
{
    for (int i = 0; i < kcore_nphdrs; i++) {
        const Elf64_Phdr *ph = &kcore_phdrs[i];
        if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr && vaddr + len <= ph->p_vaddr + ph->p_memsz) {
            if (pread(kcore_fd, buf, len, (off_t)(ph->p_offset + (vaddr - ph->p_vaddr))) != (ssize_t)len)
                die("kcore read");
            return;
        }
    }
    fprintf(stderr, "probe: 0x%" PRIx64 " not in /proc/kcore\n", vaddr);
    exit(1);
}

static void emit(int out, const char *name, const void *data, size_t len)
{
    char hdr[128];
    int n = snprintf(hdr, sizeof hdr, "HVTF %s %zu\n", name, len);
    if (write(out, hdr, (size_t)n) != n) die("write hdr");
    const char *p = data;
    while (len) {
        ssize_t w = write(out, p, len);
        if (w <= 0) die("write");
        p += w; len -= (size_t)w;
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) { fprintf(stderr, "usage: %s SERIAL_DEV\n", argv[0]); return 2; }
    int out = open(argv[1], O_WRONLY | O_NOCTTY);
    if (out < 0) die(argv[1]);
    struct termios t;
    if (tcgetattr(out, &t) == 0) { cfmakeraw(&t); cfsetospeed(&t, B115200); tcsetattr(out, TCSANOW, &t); }

    size_t ks_len, btf_len, comm_len;
    char *ks = slurp("/proc/kallsyms", &ks_len);
    char *btf = slurp("/sys/kernel/btf/vmlinux", &btf_len);
    char *comm = slurp("/proc/self/comm", &comm_len);
    while (comm_len && comm[comm_len - 1] == '\n') comm[--comm_len] = 0;

    kcore_open();
    uint64_t init_task = kallsyms_lookup(ks, ks_len, "init_task");
    uint64_t pcpu_off_tab = kallsyms_lookup(ks, ks_len, "__per_cpu_offset");
    uint64_t current_task = kallsyms_lookup(ks, ks_len, "current_task");
    uint64_t init_mm = kallsyms_lookup(ks, ks_len, "init_mm");
    static unsigned char mm_dump[MM_DUMP_BYTES];
    kread(init_mm, mm_dump, sizeof mm_dump);
    uint64_t cpu0_base, self_task;
    kread(pcpu_off_tab, &cpu0_base, sizeof cpu0_base);
    /* -smp 1: we are running on CPU 0, so CPU 0's current_task is this very process. */
    kread(cpu0_base + current_task, &self_task, sizeof self_task);
    static unsigned char self_dump[TASK_DUMP_BYTES], init_dump[TASK_DUMP_BYTES];
    kread(self_task, self_dump, sizeof self_dump);
    kread(init_task, init_dump, sizeof init_dump);

    char info[512];
    int info_len = snprintf(info, sizeof info,
        "pid=%d\ncomm=%.*s\nself_task=0x%016" PRIx64 "\ninit_task=0x%016" PRIx64
        "\ncpu0_percpu_base=0x%016" PRIx64 "\ncurrent_task=0x%016" PRIx64 "\ninit_mm=0x%016" PRIx64 "\n",
        (int)getpid(), (int)comm_len, comm, self_task, init_task, cpu0_base, current_task, init_mm);
    emit(out, "probe.txt", info, (size_t)info_len);
    emit(out, "task_self.bin", self_dump, sizeof self_dump);
    emit(out, "init_task.bin", init_dump, sizeof init_dump);
    emit(out, "init_mm.bin", mm_dump, sizeof mm_dump);
    emit(out, "kallsyms", ks, ks_len);
    emit(out, "btf", btf, btf_len);
    if (write(out, "HVTEND\n", 7) != 7) die("write end");
    tcdrain(out);
    close(out);
    return 0;
}
