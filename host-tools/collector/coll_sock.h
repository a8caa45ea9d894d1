/*
 * coll_sock.h - the collector's local command socket: how `hvt trace` (host-tools/hvt/cmd_trace.c)
 * talks to the running collector, which holds the hypervisor connection and the control key.
 * Protocol and rationale: docs/trace-cli.md.
 *
 * Contract:
 *  - A Unix stream socket (default OUT/control.sock, mode 0600: whoever may use it may start
 *    and stop tracing, like whoever holds the key). One request per connection: one text line
 *    (at most COLL_SOCK_LINE_MAX bytes, '\n'-terminated); the answer is text lines, the last one
 *    "end ok" or "end error <reason>", then the collector closes the connection.
 *  - The module only moves bytes: coll_sock_service() accepts clients, collects request lines
 *    and hands each complete one to the callback; the callback (the collector) answers with
 *    coll_sock_printf() and ends with coll_sock_end(), at once or later (a request that waits
 *    for the hypervisor's reply). A line that is too long, or a client that sends nothing within
 *    COLL_SOCK_IDLE_NS, is ended with an error. Single-threaded, non-blocking except for short
 *    writes to local clients (bounded by a send timeout).
 */
#ifndef HVT_COLL_SOCK_H
#define HVT_COLL_SOCK_H
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COLL_SOCK_NAME      "control.sock"
#define COLL_SOCK_CLIENTS   8
#define COLL_SOCK_LINE_MAX  512
#define COLL_SOCK_IDLE_NS   5000000000ull     /* a request line must arrive within 5 s */

struct coll_sock_client {
    int      fd;                     /* -1: free slot */
    char     in[COLL_SOCK_LINE_MAX];
    size_t   in_len;
    bool     taken;                  /* request handed to the callback, answer pending */
    uint64_t since_ns;
    uint64_t wait_seq;               /* the collector's: control request it waits for */
    uint64_t deadline_ns;            /* the collector's: give up waiting then */
    uint16_t wait_cmd;
    uint64_t sent_off;               /* the collector's: the stream offset every message below
                                        which had arrived when the request was sent */
};

struct coll_sock {
    int  lfd;
    char path[108];                  /* sun_path */
    struct coll_sock_client cl[COLL_SOCK_CLIENTS];
};

typedef void (*coll_sock_fn)(void *ctx, int client, char *line);

int  coll_sock_open(struct coll_sock *s, const char *path, char *err, size_t errlen);
/* Fill pf (room for 1 + COLL_SOCK_CLIENTS); returns how many. */
int  coll_sock_pollfds(const struct coll_sock *s, struct pollfd *pf);
void coll_sock_service(struct coll_sock *s, const struct pollfd *pf, int n, uint64_t now_ns,
                       coll_sock_fn fn, void *ctx);
void coll_sock_printf(struct coll_sock *s, int client, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "end ok" (err NULL) or "end error <err>", then close. */
void coll_sock_end(struct coll_sock *s, int client, const char *err);
void coll_sock_close(struct coll_sock *s);

#endif
