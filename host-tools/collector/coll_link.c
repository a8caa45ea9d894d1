/* coll_link.c - what the collector sends to the hypervisor and says on stderr: the pieces its
 * main loop (coll_main.c) and its command handler (coll_cmd.c) both use (coll_link.h). */
#include "coll_link.h"
#include "coll.h"
#include "ctl.h"
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

bool coll_progress_shown;

/* stderr messages: first clear a progress line so the two never share a line */
void coll_log(const char *fmt, ...)
{
    if (coll_progress_shown) {
        fputs("\r\033[K", stderr);
        coll_progress_shown = false;
    }
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
}

int coll_send_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n > 0) {
        ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN) {
                struct pollfd pf = { .fd = fd, .events = POLLOUT };
                poll(&pf, 1, 100);
                continue;
            }
            return -1;
        }
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

void coll_send_unsequenced(struct coll *c, uint16_t type, const void *p, uint32_t len)
{
    if (c->cfd < 0)
        return;
    uint8_t buf[sizeof(struct hvt_msg_hdr) + 64 + HVT_STREAM_TAG_LEN];
    struct hvt_msg_hdr h = {
        .magic = HVT_STREAM_MAGIC, .version = HVT_STREAM_VERSION,
        .hdr_len = sizeof h, .type = type, .len = len, .cpu = HVT_CPU_NONE,
    };
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, p, len);
    size_t n = coll_parse_seal(&c->parser, buf, sizeof h + len);
    if (coll_send_all(c->cfd, buf, n) < 0)
        c->io_error = true;
}

int64_t coll_send_ctl(struct coll *c, uint16_t cmd, const void *data, uint32_t len)
{
    if (c->cfd < 0 || !c->parser.have_hello || len > HVT_CTL_MAX_DATA)
        return -1;
    static uint8_t buf[sizeof(struct hvt_msg_hdr) + sizeof(struct hvt_ctl) + HVT_CTL_MAX_DATA + HVT_MAC_LEN +
                       HVT_STREAM_TAG_LEN];
    uint64_t seq = c->ctl_seq++;
    size_t n = ctl_build(buf, HVT_MSG_CTL_REQ, HVT_CPU_NONE, &c->key, c->parser.hello.boot_id, seq,
                         cmd, 0, data, len);
    n = coll_parse_seal(&c->parser, buf, n);
    if (coll_send_all(c->cfd, buf, n) < 0) {
        c->io_error = true;
        return -1;
    }
    return (int64_t)seq;
}

const char *coll_ctl_cmd_name(uint16_t cmd)
{
    switch (cmd) {
    case HVT_CTL_PING: return "ping";
    case HVT_CTL_STATUS: return "status";
    case HVT_CTL_TRACE_START: return "trace-start";
    case HVT_CTL_TRACE_STOP: return "trace-stop";
    case HVT_CTL_TRACE_STATUS: return "trace-status";
    case HVT_CTL_PROBE_ARM: return "probe-arm";
    case HVT_CTL_PROBE_DISARM: return "probe-disarm";
    case HVT_CTL_PROBE_STATUS: return "probe-status";
    case HVT_CTL_PROBE_COST: return "probe-cost";
    case HVT_CTL_D_LOAD: return "d-load";
    case HVT_CTL_D_RUN: return "d-run";
    case HVT_CTL_D_CMD: return "d-cmd";
    }
    return "cmd";
}

const char *coll_ctl_status_name(int st)
{
    switch (st) {
    case HVT_CTL_OK: return "ok";
    case HVT_CTL_EAUTH: return "refused-auth";
    case HVT_CTL_EREPLAY: return "refused-replay";
    case HVT_CTL_EMALFORMED: return "refused-malformed";
    case HVT_CTL_ENOSYS: return "unknown-command";
    case HVT_CTL_EINVAL: return "invalid";
    }
    return "error";
}

