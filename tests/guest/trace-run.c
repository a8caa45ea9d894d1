/* trace-run PROG [ARGS...] - trace one program from exec to exit: hvtrace start mark, fork,
 * exec, wait, stop mark. Everything every CPU runs in between is traced (kernel, interrupts,
 * other processes); the exit status of PROG is printed and returned. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "hvt_guest.h"

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: trace-run PROG [ARGS...]\n"); return 2; }
    if (!hvt_present()) { fprintf(stderr, "trace-run: hvtrace not detected\n"); return 2; }
    hvt_mark(1);
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[1], argv + 1);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    hvt_mark(0);
    printf("trace-run: %s pid=%d status=%d\n", argv[1], (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : 128);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
