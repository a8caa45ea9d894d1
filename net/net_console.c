/*
 * net_console.c - the guest's serial console as a stream payload. Bytes arrive one at a time
 * from the COM1 intercept; they are batched into HVT_MSG_CONSOLE messages at each newline, when
 * the buffer fills, or when the oldest byte has waited NET_CONSOLE_MAX_AGE_MS (so a prompt
 * without newline still shows up live). The first "Linux version ..." line is also sent as
 * META guest_kernel=... (the collector's header records the guest kernel's identity).
 */
#include "net_internal.h"

#define NET_CONSOLE_BUF         512
#define NET_CONSOLE_MAX_AGE_MS  20
#define NET_LINE_MAX            240
static const char linux_banner[] = "Linux version ";

static struct {
    net_spinlock lock;
    uint8_t  buf[NET_CONSOLE_BUF];
    size_t   len;
    uint64_t first_tsc;                 /* when buf[0] arrived */
    char     line[NET_LINE_MAX + 1];    /* current line, for the banner */
    size_t   line_len;
    bool     banner_sent;
    char     meta[NET_LINE_MAX + 32];
    bool     meta_pending;
} con;

/* Enqueue the buffer; block (poll) only if asked. Console lock held. */
static void flush_locked(bool wait)
{
    if (con.len == 0)
        return;
    int r;
    if (wait) {
        r = stream_send(hv_cpu_id(), HVT_MSG_CONSOLE, con.buf, con.len);
    } else {
        r = stream_core_append(&net.sc, hv_cpu_id(), HVT_MSG_CONSOLE, con.buf, con.len);
        if (r == STREAM_EAGAIN)
            return;                     /* try again at the next poll */
    }
    if (r == 0)
        net.console_bytes += con.len;
    con.len = 0;
}

static void track_line(uint8_t b)
{
    if (b == '\n' || b == '\r') {
        con.line[con.line_len] = 0;
        if (!con.banner_sent && con.line_len >= sizeof linux_banner - 1 &&
            !memcmp(con.line, linux_banner, sizeof linux_banner - 1)) {
            hv_snprintf(con.meta, sizeof con.meta, "guest_kernel=%s\n", con.line);
            con.banner_sent = true;
            con.meta_pending = true;
        }
        con.line_len = 0;
        return;
    }
    if (con.line_len < NET_LINE_MAX)
        con.line[con.line_len++] = (b >= ' ' && b < 127) ? (char)b : '?';
}

void net_console_byte(uint8_t b)
{
    if (!net.active)
        return;
    net_lock(&con.lock);
    if (con.len == 0)
        con.first_tsc = hv_rdtsc();
    con.buf[con.len++] = b;
    track_line(b);
    if (b == '\n' || con.len == sizeof con.buf)
        flush_locked(true);
    if (con.meta_pending) {
        con.meta_pending = false;
        net_meta(con.meta);             /* after the console bytes it describes */
    }
    net_unlock(&con.lock);
}

void net_console_poll(void)
{
    if (con.len == 0 || !net_trylock(&con.lock))
        return;
    if (con.len && hv_rdtsc() - con.first_tsc > NET_CONSOLE_MAX_AGE_MS * net.tsc_per_ms)
        flush_locked(false);
    net_unlock(&con.lock);
}

void net_console_flush(void)
{
    if (!net.active)
        return;
    net_lock(&con.lock);
    flush_locked(true);
    net_unlock(&con.lock);
}
