/* coll_peer.c - who may stream to the collector; see coll_peer.h. */
#include "coll_peer.h"
#include "coll_link.h"
#include "coll_parse.h"
#include "coll_store.h"
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <stdio.h>
#include <unistd.h>

void coll_peer_init(struct coll_peers *ps)
{
    memset(ps, 0, sizeof *ps);
    for (int i = 0; i < COLL_PEER_PENDING; i++)
        ps->p[i].fd = -1;
}

static void refuse(struct coll_peers *ps, int fd, const char *peer, const char *why)
{
    close(fd);
    ps->refused++;
    coll_log("hvtrace-collector: refused connection from %s: %s\n", peer, why);
}

bool coll_peer_arrived(struct coll_peers *ps, int fd, uint32_t ip, const char *peer,
                       const struct coll_live *live, uint64_t now_ns)
{
    if (ps->pin_fixed && ip != ps->pin_ip) {
        refuse(ps, fd, peer, "not the hypervisor's address (--peer)");
        return false;
    }
    if (!live->live)
        return true;
    if (ip != live->ip) {
        refuse(ps, fd, peer, "a hypervisor session from another address is live");
        return false;
    }
    if (!live->authenticated)
        return true;
    for (int i = 0; i < COLL_PEER_PENDING; i++) {
        struct coll_pending *q = &ps->p[i];
        if (q->fd >= 0)
            continue;
        q->fd = fd;
        q->ip = ip;
        snprintf(q->peer, sizeof q->peer, "%s", peer);
        q->have = 0;
        q->since_ns = now_ns;
        return false;
    }
    refuse(ps, fd, peer, "too many connections waiting for their HELLO");
    return false;
}

void coll_peer_session(struct coll_peers *ps, uint32_t ip)
{
    if (!ps->pin_fixed)
        ps->pin_ip = ip;
}

int coll_peer_pollfds(const struct coll_peers *ps, struct pollfd *pf)
{
    int n = 0;
    for (int i = 0; i < COLL_PEER_PENDING; i++)
        pf[n++] = (struct pollfd){ .fd = ps->p[i].fd, .events = POLLIN };
    return n;
}

static void drop(struct coll_peers *ps, int i, const char *why)
{
    refuse(ps, ps->p[i].fd, ps->p[i].peer, why);
    ps->p[i].fd = -1;
}

/* Read what is there up to the end of the HELLO: 1 complete, 0 more to come, -1 dropped. */
static int read_hello(struct coll_peers *ps, int i)
{
    struct coll_pending *q = &ps->p[i];
    const size_t hl = sizeof(struct hvt_msg_hdr);
    for (;;) {
        size_t want = hl;
        if (q->have >= hl) {
            struct hvt_msg_hdr h;
            memcpy(&h, q->buf, hl);
            if (h.len > sizeof q->buf - hl - HVT_STREAM_TAG_LEN) {
                drop(ps, i, "not an hvtrace HELLO (too long)");
                return -1;
            }
            want = hl + h.len + HVT_STREAM_TAG_LEN;
            if (q->have == want)
                return 1;
        }
        ssize_t r = recv(q->fd, q->buf + q->have, want - q->have, MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            drop(ps, i, r == 0 ? "closed before its HELLO" : strerror(errno));
            return -1;
        }
        if (r < 0)
            return 0;
        q->have += (size_t)r;
    }
}

int coll_peer_service(struct coll_peers *ps, const struct pollfd *pf, int n,
                      const struct ctl_key *key, const struct coll_live *live, uint64_t now_ns)
{
    for (int i = 0; i < COLL_PEER_PENDING && i < n; i++) {
        struct coll_pending *q = &ps->p[i];
        if (q->fd < 0)
            continue;
        if (pf[i].fd == q->fd && (pf[i].revents & (POLLIN | POLLHUP | POLLERR))) {
            int r = read_hello(ps, i);
            if (r < 0)
                continue;
            if (r == 1) {
                struct hvt_hello h;
                char err[400];
                if (coll_parse_hello_verify(key, q->buf, q->have, &h, err, sizeof err) < 0) {
                    drop(ps, i, err);
                    continue;
                }
                bool same_boot = !memcmp(h.boot_id, live->boot_id, HVT_BOOT_ID_LEN);
                if (live->live && same_boot && h.connection <= live->connection) {
                    drop(ps, i, "its HELLO is not newer than the live session's (a replay)");
                    continue;
                }
                /* and not an older boot's or an older connection's (the live session stays) */
                if (live->out && !coll_store_hello_fresh(live->out, &h, err, sizeof err)) {
                    drop(ps, i, err);
                    continue;
                }
                return i;
            }
        }
        if (q->fd >= 0 && now_ns - q->since_ns > COLL_PEER_WAIT_NS)
            drop(ps, i, "no HELLO in time");
    }
    return -1;
}

void coll_peer_release(struct coll_peers *ps, int i)
{
    ps->p[i].fd = -1;
}

void coll_peer_close(struct coll_peers *ps)
{
    for (int i = 0; i < COLL_PEER_PENDING; i++)
        if (ps->p[i].fd >= 0) {
            close(ps->p[i].fd);
            ps->p[i].fd = -1;
        }
}

bool coll_peer_cfg_pinned(const char *text, size_t len, const char *pin, char *err, size_t errlen)
{
    static const char key[] = "cfg_sha256=";
    size_t pos = 0;
    while (pos < len) {
        size_t end = pos;
        while (end < len && text[end] != '\n') end++;
        if (end - pos >= sizeof key - 1 && !memcmp(text + pos, key, sizeof key - 1)) {
            const char *v = text + pos + sizeof key - 1;
            size_t vn = end - pos - (sizeof key - 1);
            if (vn == strlen(pin) && !strncasecmp(v, pin, vn))
                return true;
            snprintf(err, errlen, "its configuration (cfg_sha256=%.*s) is not the pinned one (%s)",
                     (int)(vn > 64 ? 64 : vn), v, pin);
            return false;
        }
        pos = end + 1;
    }
    snprintf(err, errlen, "its HELLO names no configuration hash (cfg_sha256), and --pin-cfg is set");
    return false;
}
