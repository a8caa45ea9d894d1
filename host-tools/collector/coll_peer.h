/*
 * coll_peer.h - who may stream to the collector. One hypervisor session is live at a time; a
 * connection that arrives while it is live does not replace it on arrival (anyone on the LAN
 * can connect): it is held aside until its HELLO is read and judged.
 *
 * Contract:
 *  - The address of the first session (or --peer ADDR) is pinned: a connection from any other
 *    address is refused at once while a session is live, and always with --peer.
 *  - With an authenticated live session, a newcomer from the pinned address replaces it only
 *    with a HELLO whose tag verifies under the key and that is newer: the same boot with a
 *    higher connection number (the hypervisor reconnected), or another boot (the machine
 *    started again). Anything else (a stranger without the key, a replayed HELLO, garbage, a
 *    HELLO that does not arrive within COLL_PEER_WAIT_NS) is refused, counted, and never
 *    touches the live session. Without authentication nothing tells the hypervisor from a
 *    stranger at the pinned address, so one from there replaces the session on arrival.
 *  - The module reads a newcomer's bytes up to the end of its HELLO and no further; the caller
 *    that adopts it feeds those bytes to its parser first.
 */
#ifndef HVT_COLL_PEER_H
#define HVT_COLL_PEER_H
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include "hvt_stream.h"
#include "ctl.h"

#define COLL_PEER_PENDING 4
#define COLL_PEER_WAIT_NS 5000000000ull
#define COLL_PEER_HELLO_MAX (sizeof(struct hvt_msg_hdr) + sizeof(struct hvt_hello) + 4096 + \
                             HVT_STREAM_TAG_LEN)

struct coll_pending {
    int      fd;                       /* -1: free */
    uint32_t ip;                       /* network order */
    char     peer[64];
    uint8_t  buf[COLL_PEER_HELLO_MAX];
    size_t   have;
    uint64_t since_ns;
};

struct coll_peers {
    uint32_t pin_ip;                   /* network order; 0: not pinned yet */
    bool     pin_fixed;                /* --peer: pinned from the start, for good */
    uint64_t refused;                  /* connections refused */
    struct coll_pending p[COLL_PEER_PENDING];
};

/* What the session a newcomer would replace looks like (live == false: none). */
struct coll_live {
    bool live, authenticated;
    uint32_t ip;
    uint8_t  boot_id[HVT_BOOT_ID_LEN];
    uint32_t connection;
    const char *out;                   /* the trace directory (its boots' accepted HELLOs) */
};

/* --pin-cfg: true when the HELLO's text (key=value lines) says cfg_sha256=PIN (hex, any
 * case), i.e. the hypervisor was started from exactly the configuration file the operator
 * pinned; else false with the reason in err. */
bool coll_peer_cfg_pinned(const char *text, size_t len, const char *pin, char *err, size_t errlen);

void coll_peer_init(struct coll_peers *ps);
/* A new connection. Returns true when the caller should adopt it now (no session is live, or
 * an unauthenticated one from the pinned address); false: refused (closed) or held pending. */
bool coll_peer_arrived(struct coll_peers *ps, int fd, uint32_t ip, const char *peer,
                       const struct coll_live *live, uint64_t now_ns);
/* The session's address once a HELLO was accepted from it (pins it unless --peer did). */
void coll_peer_session(struct coll_peers *ps, uint32_t ip);
int  coll_peer_pollfds(const struct coll_peers *ps, struct pollfd *pf);
/* Read pending connections and time them out. Returns the index of one whose HELLO earns it
 * the session (the caller adopts p[i].fd with p[i].buf[0..have) and then frees the slot with
 * coll_peer_release), or -1. */
int  coll_peer_service(struct coll_peers *ps, const struct pollfd *pf, int n,
                       const struct ctl_key *key, const struct coll_live *live, uint64_t now_ns);
void coll_peer_release(struct coll_peers *ps, int i);   /* slot free; the fd now the caller's */
void coll_peer_close(struct coll_peers *ps);

#endif
