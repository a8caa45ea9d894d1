/*
 * coll_link.h - the collector's output side, shared by its main loop (coll_main.c) and its
 * command-socket handler (coll_cmd.c), so neither calls the other for it: stderr messages
 * that never share a line with the progress line, whole sends on the hypervisor connection,
 * unsequenced messages (WELCOME, ACK), control requests, the names of control commands and
 * statuses.
 * Contract: a failed send marks the connection (c->io_error); the main loop closes it.
 */
#ifndef HVT_COLL_LINK_H
#define HVT_COLL_LINK_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct coll;
extern bool coll_progress_shown;       /* a progress line is on the terminal, unterminated */

__attribute__((format(printf, 1, 2))) void coll_log(const char *fmt, ...);
/* All of [p, p + n) on fd (waits while the socket is full); 0 or -1. */
int  coll_send_all(int fd, const void *p, size_t n);
void coll_send_unsequenced(struct coll *c, uint16_t type, const void *p, uint32_t len);
/* Send a control request to the hypervisor; returns its ctl_seq, or -1 (not connected). */
int64_t coll_send_ctl(struct coll *c, uint16_t cmd, const void *data, uint32_t len);
const char *coll_ctl_cmd_name(uint16_t cmd);
const char *coll_ctl_status_name(int st);

#endif
