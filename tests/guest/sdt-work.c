/* sdt-work - the guest side of the sdt run of test-probes-net (tests/probe/test-probes-net.sh,
 * its D program tests/d/programs/sdt-work.d): a workload that knows its own counts of forks,
 * execs, exits and voluntary context switches, for the static tracepoints to count. It says
 * "probe-net: waiting" and makes a getpid() call every 0.2 s until the engine's firing counter
 * moves (the host's program is armed: it probes getpid), then, between two getppid() calls
 * (the program's window: nothing else in the guest calls getppid in this run):
 *   1. N children forked one after the other, each exec'ing /bin/sdt-kid (this program under
 *      another name: it exits at once), waited for;
 *   2. the guest's own ftrace switched on for sched_process_fork/exec/exit, sched_switch and
 *      sched_wakeup (tracefs: the kernel patches each tracepoint's site from its NOP to a JMP
 *      under our probe), N more children the same way, ftrace switched off again and its
 *      own count of sched_process_exec lines for sdt-kid read back (the guest's tracing works);
 *   3. P round trips over two pipes with a child (each read blocks: a voluntary switch);
 *   4. C TCP connections over the loopback interface (brought up here) to a listener of its
 *      own on 127.0.0.1:SDT_PORT, each accepted and both ends closed;
 * and prints its counts: 2N forks, execs and exits, the voluntary switches getrusage()
 * counted in the window (ru_nvcsw after - before, the window's own) and the connections. Then "probe-net: workload
 * done" and waits for the disarm ("probe-net: disarmed"). As sdt-kid it just exits. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "hvt_guest.h"
#include "probe_wait.h"

#define KIDS   10                          /* per phase */
#define PINGS  50
#define CONNS  5
#define SDT_PORT 7777                      /* tests/d/programs/sdt-work.d knows it */

static int kids(int n)
{
    int ok = 1;
    for (int i = 0; i < n; i++) {
        pid_t c = fork();
        if (c == 0) {
            execl("/bin/sdt-kid", "sdt-kid", (char *)NULL);
            _exit(127);
        }
        int st = 0;
        ok &= c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    return ok;
}

static int tracefs(const char *what)
{
    static const char *ev[] = { "sched_process_fork", "sched_process_exec", "sched_process_exit",
                                "sched_switch", "sched_wakeup" };
    int ok = 1;
    for (unsigned i = 0; i < sizeof ev / sizeof ev[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "/sys/kernel/tracing/events/sched/%s/enable", ev[i]);
        FILE *f = fopen(path, "w");
        ok &= f && fputs(what, f) >= 0;
        ok &= f && fclose(f) == 0;
    }
    return ok;
}

/* The guest's own trace buffer: sched_process_exec lines of sdt-kid. */
static long ftrace_execs(void)
{
    FILE *f = fopen("/sys/kernel/tracing/trace", "r");
    char line[512];
    long n = 0;
    while (f && fgets(line, sizeof line, f))
        n += strstr(line, "sched_process_exec:") && strstr(line, "filename=/bin/sdt-kid");
    if (f)
        fclose(f);
    return f ? n : -1;
}

/* Round trips with a child over two pipes: each read waits for the other side. */
static int pings(int n)
{
    int a[2], b[2];
    char c = 'x';
    if (pipe(a) || pipe(b))
        return 0;
    pid_t k = fork();
    if (k == 0) {
        for (int i = 0; i < n; i++)
            if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
                _exit(1);
        _exit(0);
    }
    int ok = k > 0;
    for (int i = 0; ok && i < n; i++)
        ok &= write(a[1], &c, 1) == 1 && read(b[0], &c, 1) == 1;
    int st = 0;
    ok &= waitpid(k, &st, 0) == k && WIFEXITED(st) && WEXITSTATUS(st) == 0;
    close(a[0]); close(a[1]); close(b[0]); close(b[1]);
    return ok;
}

static int lo_up(void)
{
    struct ifreq r = { 0 };
    int s = socket(AF_INET, SOCK_DGRAM, 0), ok = s >= 0;
    snprintf(r.ifr_name, sizeof r.ifr_name, "lo");
    ok = ok && ioctl(s, SIOCGIFFLAGS, &r) == 0;
    r.ifr_flags |= IFF_UP;
    ok = ok && ioctl(s, SIOCSIFFLAGS, &r) == 0;
    if (s >= 0)
        close(s);
    return ok;
}

/* n connections to a listener of this process: each established at both ends, then closed. */
static int conns(int n)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(SDT_PORT) };
    int one = 1, l = socket(AF_INET, SOCK_STREAM, 0), ok = l >= 0;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok = ok && setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
         bind(l, (struct sockaddr *)&a, sizeof a) == 0 && listen(l, n) == 0;
    for (int i = 0; ok && i < n; i++) {
        int c = socket(AF_INET, SOCK_STREAM, 0), s = -1;
        ok = c >= 0 && connect(c, (struct sockaddr *)&a, sizeof a) == 0 && (s = accept(l, NULL, NULL)) >= 0;
        if (s >= 0)
            close(s);
        if (c >= 0)
            close(c);
    }
    if (l >= 0)
        close(l);
    return ok;
}

int main(int argc, char **argv)
{
    (void)argc;
    if (strstr(argv[0], "sdt-kid"))
        return 0;
    if (!hvt_present())
        return 2;
    int ok = lo_up();
    ok &= !system("mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; "
                     "echo 0 > /sys/kernel/tracing/tracing_on; echo > /sys/kernel/tracing/trace; "
                     "echo 1 > /sys/kernel/tracing/tracing_on");
    printf("probe-net: waiting for the host to arm\n");
    fflush(stdout);
    if (probe_wait_armed(probe_poke_getpid))
        return 1;
    struct rusage r0, r1;
    syscall(SYS_getppid);                  /* the window opens */
    getrusage(RUSAGE_SELF, &r0);
    ok &= kids(KIDS);
    ok &= tracefs("1");
    ok &= kids(KIDS);
    ok &= tracefs("0");
    ok &= pings(PINGS);
    ok &= conns(CONNS);
    getrusage(RUSAGE_SELF, &r1);
    syscall(SYS_getppid);                  /* and closes */
    long fx = ftrace_execs();
    printf("sdt-work: kids=%d nvcsw=%ld conns=%d ftrace_execs=%ld pid=%d\n", 2 * KIDS, r1.ru_nvcsw - r0.ru_nvcsw,
           CONNS, fx, (int)getpid());
    printf("probe-net: workload done calls=%d %s\n", 2 * KIDS, ok && fx == KIDS ? "ok" : "FAIL");
    fflush(stdout);
    probe_wait_disarmed(probe_poke_getpid);
    return 0;
}
