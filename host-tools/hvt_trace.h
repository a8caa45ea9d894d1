/* hvt_trace: `hvt trace start|stop|status` - tracing driven from the host through the running
 * hvtrace-collector's command socket (host-tools/collector/coll_sock.h; docs/trace-cli.md).
 * Exit status: 0 ok, 1 refused / failed / timed out / no collector, 2 usage. */
#ifndef HVT_TRACE_CLI_H
#define HVT_TRACE_CLI_H
#include <stddef.h>
#include <stdint.h>
int cmd_trace(int argc, char **argv);

/* The collector's command socket, for the other commands that drive the hypervisor (hvt -n):
 * one request line (socket SOCK, or DIR/control.sock); the answer without its "end" line in
 * out. 0 ok, 1 refused, -1 no collector or no answer (why in out). */
int hvt_coll_ask(const char *dir, const char *sock, const char *line, char *out, size_t cap);
/* The value of "key=" at a line start of an answer (NULL if absent), and as a number (0). */
const char *hvt_coll_val(const char *ans, const char *key, char *buf, size_t n);
uint64_t hvt_coll_uval(const char *ans, const char *key);
#endif
