/* test_agent.c - the agent's command start (guest/hvt_agent.h) on this host: the life hvt -c
 * traces as $target's is the command's own, from its exec, as dtrace -c's is. When the agent
 * hands the pid over (agent_cmd_start returned) the command's image must already be in
 * place and stopped, so nothing the agent's child does before the exec (waiting to be let go,
 * its read of the pipe, the exec itself) can fire a probe armed for that pid. */
#include "hvt_agent.h"
#include "check.h"
#include <limits.h>

/* The process's executable (/proc/PID/exe), or "" */
static void exe_of(pid_t pid, char *out, size_t cap)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(p, out, cap - 1);
    out[n > 0 ? n : 0] = 0;
}

/* Its state letter in /proc/PID/stat (R, S, T, t, Z ...), or '?' */
static char state_of(pid_t pid)
{
    char p[64], buf[512];
    snprintf(p, sizeof p, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(p, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    char *r = strrchr(buf, ')');
    return r && r[1] == ' ' ? r[2] : '?';
}

int main(void)
{
    char want[PATH_MAX], got[PATH_MAX], line[256];
    if (!realpath("/bin/false", want)) {
        printf("test_agent: no /bin/false\n");
        return 1;
    }
    /* 1. a command run: held at its exec, then its own exit status */
    struct agent_cmd c;
    snprintf(line, sizeof line, "/bin/false");
    CHECK(agent_cmd_start(&c, line) == 0, "the command started");
    usleep(200000);                        /* (a child still on its way would show it now) */
    exe_of(c.pid, got, sizeof got);
    CHECK(!strcmp(got, want), "held at its exec: pid %d's image is the command's (%s), not the agent's (%s)",
          (int)c.pid, want, got);
    char st = state_of(c.pid);
    CHECK(st == 't' || st == 'T', "held stopped (state %c), not running the agent's code", st);
    agent_cmd_go(&c);
    int s = agent_cmd_wait(&c);
    CHECK(WIFEXITED(s) && WEXITSTATUS(s) == 1, "once let go it runs to its own end (status %#x, want exit 1)", s);

    /* 2. cancelled: it never runs (no exit of its own) */
    snprintf(line, sizeof line, "/bin/true");
    CHECK(agent_cmd_start(&c, line) == 0, "the second command started");
    agent_cmd_cancel(&c);
    s = agent_cmd_wait(&c);
    CHECK(!(WIFEXITED(s) && WEXITSTATUS(s) == 0), "cancelled: it did not run (status %#x)", s);

    /* 3. a command that cannot be run: exit 127 once let go, as before */
    snprintf(line, sizeof line, "/nonexistent/hvt-agent-test");
    CHECK(agent_cmd_start(&c, line) == 0, "the third command forked");
    agent_cmd_go(&c);
    s = agent_cmd_wait(&c);
    CHECK(WIFEXITED(s) && WEXITSTATUS(s) == 127, "a command that cannot be run: exit 127 (status %#x)", s);
    return check_summary("test_agent");
}
