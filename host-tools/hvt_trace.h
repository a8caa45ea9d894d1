/* hvt_trace: `hvt trace start|stop|status` - tracing driven from the host through the running
 * hvtrace-collector's command socket (host-tools/collector/coll_sock.h; docs/trace-cli.md).
 * Exit status: 0 ok, 1 refused / failed / timed out / no collector, 2 usage. */
#ifndef HVT_TRACE_CLI_H
#define HVT_TRACE_CLI_H
int cmd_trace(int argc, char **argv);
#endif
