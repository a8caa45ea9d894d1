/* client: see client.h. One request line per connection; the answer is key=value lines, then
 * "end ok" or "end error <reason>". */
#include "client.h"
#include "coll_sock.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int hvt_coll_ask(const char *dir, const char *sock, const char *line, char *out, size_t cap)
{
    char path[sizeof ((struct sockaddr_un *)0)->sun_path];
    int pl = sock ? snprintf(path, sizeof path, "%s", sock)
                  : snprintf(path, sizeof path, "%s/%s", dir, COLL_SOCK_NAME);
    if (pl < 0 || (size_t)pl >= sizeof path) {
        snprintf(out, cap, "the socket path is longer than %zu bytes: give a shorter -d or -s",
                 sizeof path - 1);
        return -1;
    }
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        snprintf(out, cap, "cannot reach the collector at %s: %s (is hvtrace-collector running "
                 "with --out %s?)", path, strerror(errno), dir);
        if (fd >= 0) close(fd);
        return -1;
    }
    char req[COLL_SOCK_LINE_MAX];
    int n = snprintf(req, sizeof req, "%s\n", line);
    if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
        snprintf(out, cap, "sending to %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    size_t len = 0;
    ssize_t r;
    while (len < cap - 1 && (r = recv(fd, out + len, cap - 1 - len, 0)) > 0)
        len += (size_t)r;
    out[len] = 0;
    close(fd);
    char *end = len ? strstr(out, "end ") : NULL;
    while (end && end != out && end[-1] != '\n')
        end = strstr(end + 1, "end ");
    if (!end) {
        snprintf(out, cap, "the collector closed the connection without an answer");
        return -1;
    }
    *end = 0;
    if (!strncmp(end + 4, "ok", 2))
        return 0;
    char why[300];
    snprintf(why, sizeof why, "%s", end + 4 + (strncmp(end + 4, "error ", 6) ? 0 : 6));
    why[strcspn(why, "\n")] = 0;
    snprintf(out, cap, "%s", why);
    return 1;
}

const char *hvt_coll_val(const char *ans, const char *key, char *buf, size_t n)
{
    size_t kl = strlen(key);
    for (const char *l = ans; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (!strncmp(l, key, kl) && l[kl] == '=') {
            snprintf(buf, n, "%.*s", (int)strcspn(l + kl + 1, "\n"), l + kl + 1);
            return buf;
        }
    return NULL;
}

uint64_t hvt_coll_uval(const char *ans, const char *key)
{
    char b[64];
    return hvt_coll_val(ans, key, b, sizeof b) ? strtoull(b, NULL, 0) : 0;
}
