/* coll_sock.c - the collector's command socket; see coll_sock.h. */
#define _GNU_SOURCE                      /* accept4 */
#include "coll_sock.h"
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define COLL_SOCK_SEND_TIMEOUT_S 1   /* a local client that does not read is dropped */

int coll_sock_open(struct coll_sock *s, const char *path, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->lfd = -1;
    for (int i = 0; i < COLL_SOCK_CLIENTS; i++)
        s->cl[i].fd = -1;
    struct sockaddr_un a = { .sun_family = AF_UNIX };
    if (strlen(path) >= sizeof a.sun_path) {
        snprintf(err, errlen, "socket path %s is longer than %zu bytes: use --socket", path,
                 sizeof a.sun_path - 1);
        return -1;
    }
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    /* a socket file left by a collector that died: replace it, but never another kind of file */
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (!S_ISSOCK(sb.st_mode)) {
            snprintf(err, errlen, "%s exists and is not a socket", path);
            return -1;
        }
        int probe = socket(AF_UNIX, SOCK_STREAM, 0);
        if (probe >= 0 && connect(probe, (struct sockaddr *)&a, sizeof a) == 0) {
            close(probe);
            snprintf(err, errlen, "%s is in use by another running collector", path);
            return -1;
        }
        if (probe >= 0)
            close(probe);
        unlink(path);
    }
    s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    mode_t old = umask(077);             /* 0600 from the start: no window for others */
    int r = s->lfd < 0 ? -1 : bind(s->lfd, (struct sockaddr *)&a, sizeof a);
    umask(old);
    if (r == 0)
        r = chmod(path, 0600);           /* exactly owner read/write, as the trace files */
    if (r < 0 || listen(s->lfd, COLL_SOCK_CLIENTS) < 0) {
        snprintf(err, errlen, "cannot listen on %s: %s", path, strerror(errno));
        if (s->lfd >= 0)
            close(s->lfd);
        s->lfd = -1;
        return -1;
    }
    snprintf(s->path, sizeof s->path, "%s", path);
    return 0;
}

int coll_sock_pollfds(const struct coll_sock *s, struct pollfd *pf)
{
    int n = 0;
    if (s->lfd < 0)
        return 0;
    pf[n++] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
    for (int i = 0; i < COLL_SOCK_CLIENTS; i++)
        if (s->cl[i].fd >= 0)
            pf[n++] = (struct pollfd){ .fd = s->cl[i].fd, .events = s->cl[i].taken ? 0 : POLLIN };
    return n;
}

static void drop(struct coll_sock_client *c)
{
    close(c->fd);
    c->fd = -1;
    c->taken = false;
}

static void accept_one(struct coll_sock *s, uint64_t now)
{
    int fd = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0)
        return;
    for (int i = 0; i < COLL_SOCK_CLIENTS; i++) {
        struct coll_sock_client *c = &s->cl[i];
        if (c->fd >= 0)
            continue;
        memset(c, 0, sizeof *c);
        c->fd = fd;
        c->since_ns = now;
        struct timeval tv = { .tv_sec = COLL_SOCK_SEND_TIMEOUT_S };
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        return;
    }
    static const char busy[] = "end error the collector is busy with other requests\n";
    if (send(fd, busy, sizeof busy - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) { /* nothing to do */ }
    close(fd);
}

static void read_client(struct coll_sock *s, int i, coll_sock_fn fn, void *ctx)
{
    struct coll_sock_client *c = &s->cl[i];
    ssize_t r = recv(c->fd, c->in + c->in_len, sizeof c->in - 1 - c->in_len, 0);
    if (r <= 0) {
        if (r == 0 || (errno != EAGAIN && errno != EINTR))
            drop(c);                     /* went away before asking anything */
        return;
    }
    c->in_len += (size_t)r;
    c->in[c->in_len] = 0;
    char *nl = memchr(c->in, '\n', c->in_len);
    if (!nl) {
        if (c->in_len >= sizeof c->in - 1)
            coll_sock_end(s, i, "request line too long");
        return;
    }
    *nl = 0;
    if (nl > c->in && nl[-1] == '\r')
        nl[-1] = 0;
    c->taken = true;
    fn(ctx, i, c->in);
}

void coll_sock_service(struct coll_sock *s, const struct pollfd *pf, int n, uint64_t now_ns,
                       coll_sock_fn fn, void *ctx)
{
    if (s->lfd < 0)
        return;
    for (int k = 1; k < n; k++) {
        if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        for (int i = 0; i < COLL_SOCK_CLIENTS; i++)
            if (s->cl[i].fd == pf[k].fd && !s->cl[i].taken)
                read_client(s, i, fn, ctx);
    }
    for (int i = 0; i < COLL_SOCK_CLIENTS; i++)
        if (s->cl[i].fd >= 0 && !s->cl[i].taken && now_ns - s->cl[i].since_ns > COLL_SOCK_IDLE_NS)
            coll_sock_end(s, i, "no request line received");
    if (n > 0 && (pf[0].revents & POLLIN))
        accept_one(s, now_ns);
}

static void put(struct coll_sock_client *c, const char *p, size_t n)
{
    while (n && c->fd >= 0) {
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EAGAIN) {
            struct pollfd pf = { .fd = c->fd, .events = POLLOUT };
            if (poll(&pf, 1, COLL_SOCK_SEND_TIMEOUT_S * 1000) <= 0) {
                drop(c);
                return;
            }
            continue;
        }
        if (w < 0) {
            if (errno == EINTR)
                continue;
            drop(c);
            return;
        }
        p += w;
        n -= (size_t)w;
    }
}

void coll_sock_printf(struct coll_sock *s, int client, const char *fmt, ...)
{
    if (client < 0 || client >= COLL_SOCK_CLIENTS || s->cl[client].fd < 0)
        return;
    struct coll_sock_client *c = &s->cl[client];
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n > 0)
        put(c, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

void coll_sock_end(struct coll_sock *s, int client, const char *err)
{
    if (client < 0 || client >= COLL_SOCK_CLIENTS || s->cl[client].fd < 0)
        return;
    if (err)
        coll_sock_printf(s, client, "end error %s\n", err);
    else
        coll_sock_printf(s, client, "end ok\n");
    if (s->cl[client].fd >= 0)
        drop(&s->cl[client]);
}

void coll_sock_close(struct coll_sock *s)
{
    for (int i = 0; i < COLL_SOCK_CLIENTS; i++)
        if (s->cl[i].fd >= 0)
            coll_sock_end(s, i, "the collector is stopping");
    if (s->lfd >= 0) {
        close(s->lfd);
        unlink(s->path);
    }
    s->lfd = -1;
}
