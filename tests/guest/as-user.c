/* as-user UID PROG [ARG...] - run PROG as an unprivileged user (uid and gid UID, no
 * supplementary groups): the guest tests' way to call hvtrace as a non-root process. */
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: as-user UID PROG [ARG...]\n");
        return 2;
    }
    uid_t id = (uid_t)strtoul(argv[1], NULL, 10);
    if (setgroups(0, NULL) || setgid(id) || setuid(id)) {
        perror("as-user");
        return 2;
    }
    execv(argv[2], argv + 2);
    perror("as-user: exec");
    return 127;
}
