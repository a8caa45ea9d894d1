/*
 * hvt_agent.h - how the guest tool's agent (hvtrace-guest agent) starts a command for hvt -c,
 * header only (the guest tools are one file each; the host test includes it too).
 *
 * The command's traced life begins at its exec, as dtrace -c's does: the child asks to be
 * traced (PTRACE_TRACEME) and execs at once; the kernel stops a traced process with SIGTRAP
 * once execve has replaced its image, before its first instruction. Only then is its pid
 * handed to the host, and letting it go is a PTRACE_DETACH: nothing the agent's child does
 * before the exec (a read of a go byte, the exec system call itself) happens while the host's
 * probes for that pid are armed. (A child that waited for a go byte on a pipe before its exec
 * would have that 1-byte read counted against $target.)
 *
 * Contract:
 *   agent_cmd_start(c, line)  split line on blanks (no shell, as dtrace -c), fork, exec, and
 *                             return with the command stopped at its first instruction:
 *                             c->pid is its pid, to be the host's $target. 0, or -1 (the fork
 *                             failed; nothing to wait for). A command that cannot be run has
 *                             exited (127) by then; go and wait report that.
 *   agent_cmd_go(c)           the host has armed its probes: let the command run.
 *   agent_cmd_cancel(c)       the host gave up: the command is killed before it ran.
 *   agent_cmd_wait(c)         after go or cancel: its wait status (exit 127: it could not be
 *                             run).
 */
#ifndef HVT_AGENT_H
#define HVT_AGENT_H
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>

struct agent_cmd {
    pid_t pid;
    int ended;                             /* it exited before it was let go: status holds why */
    int status;
};

static int agent_cmd_start(struct agent_cmd *c, char *line)
{
    c->ended = 0;
    c->status = 0;
    c->pid = fork();
    if (c->pid < 0)
        return -1;
    if (c->pid == 0) {
        char *argv[64], *save = NULL;
        int n = 0;
        for (char *t = strtok_r(line, " \t", &save); t && n < 63; t = strtok_r(NULL, " \t", &save))
            argv[n++] = t;
        argv[n] = NULL;
        if (!n || ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
            _exit(127);
        execvp(argv[0], argv);
        fprintf(stderr, "hvtrace-guest: agent: cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    /* Until the exec's SIGTRAP stop; a signal that came before it is handed on (a traced
     * child stops for every signal). */
    for (;;) {
        int st;
        if (waitpid(c->pid, &st, 0) < 0) {
            if (errno == EINTR)
                continue;
            c->ended = 1;
            c->status = 127 << 8;
            return 0;
        }
        if (!WIFSTOPPED(st)) {
            c->ended = 1;
            c->status = st;
            return 0;
        }
        if (WSTOPSIG(st) == SIGTRAP)
            return 0;
        ptrace(PTRACE_CONT, c->pid, NULL, (void *)(long)WSTOPSIG(st));
    }
}

static void agent_cmd_go(struct agent_cmd *c)
{
    if (!c->ended && ptrace(PTRACE_DETACH, c->pid, NULL, NULL) != 0)
        perror("hvtrace-guest: agent");
}

static void agent_cmd_cancel(struct agent_cmd *c)
{
    if (!c->ended)
        kill(c->pid, SIGKILL);
}

static int agent_cmd_wait(struct agent_cmd *c)
{
    int status = 0;
    if (c->ended)
        return c->status;
    while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
        ;
    return status;
}

#endif
