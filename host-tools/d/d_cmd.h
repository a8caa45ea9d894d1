/* d_cmd.h - hvt -c: a command run in the guest by the guest tool's agent (hvtrace-guest
 * agent), through the collector's "d cmd" requests (include/hvt_stream.h HVT_CTL_D_CMD).
 *
 * Contract:
 *  - d_cmd_start() posts the command line and waits (up to wait_s) until the agent has
 *    started it, held stopped at its exec (its first instruction): its pid is then $target.
 *    Errors are printed ("hvt: ..."); an agent that never takes it gets the command cancelled.
 *  - d_cmd_go() lets it run (after the probes are armed: nothing it does is missed).
 *  - d_cmd_poll() says whether it is still running (1), ended (0: *wait_status set; dtrace's
 *    "pid N has exited" printed), or the collector failed (-1).
 *  - d_cmd_cancel() when the run ends: a command still running is killed by the agent, an
 *    exited one acknowledged (an agent serving one command then ends). */
#ifndef HVT_D_CMD_H
#define HVT_D_CMD_H
#include <stdint.h>

typedef struct {
    const char *dir, *sock;                /* the collector */
    uint32_t seq, pid;
    int started, went, ended;
} d_cmd;

int d_cmd_start(d_cmd *c, const char *line, double wait_s);
int d_cmd_go(d_cmd *c);
int d_cmd_poll(d_cmd *c, int *wait_status);
void d_cmd_cancel(d_cmd *c);

#endif
