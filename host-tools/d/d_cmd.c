/* d_cmd.c - hvt -c through the collector (d_cmd.h). */
#include "d_cmd.h"
#include "hvt_stream.h"
#include "client.h"
#include "util.h"
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define ANS 4096

static int ask(d_cmd *c, const char *line, char *ans)
{
    int rc = hvt_coll_ask(c->dir, c->sock, line, ans, ANS);
    if (rc != 0)
        fprintf(stderr, "hvt: %s: %s\n", line, ans);
    return rc;
}

int d_cmd_start(d_cmd *c, const char *line, double wait_s)
{
    char req[64 + HVT_D_CMD_MAX], ans[ANS];
    if (!*line || strlen(line) > 480 || strpbrk(line, "\n\r")) {
        fprintf(stderr, "hvt: -c: the command must be one line of 1 to 480 bytes\n");
        return -1;
    }
    snprintf(req, sizeof req, "d cmd set %s", line);
    if (ask(c, req, ans) != 0)
        return -1;
    c->seq = (uint32_t)hvt_coll_uval(ans, "cmd_seq");
    c->started = 1;                        /* from now on, cancel it if the run stops early */
    double t0 = util_now();
    while (util_now() - t0 < wait_s) {
        if (ask(c, "d cmd status", ans) != 0)
            return -1;
        uint64_t st = hvt_coll_uval(ans, "cmd_state");
        if (hvt_coll_uval(ans, "cmd_seq") != c->seq)
            break;
        if (st == HVT_D_CMDS_STARTED) {
            c->pid = (uint32_t)hvt_coll_uval(ans, "cmd_pid");
            return 0;
        }
        if (st != HVT_D_CMDS_POSTED && st != HVT_D_CMDS_TAKEN) {
            fprintf(stderr, "hvt: -c: the guest's agent could not start '%s' (state %llu)\n",
                    line, (unsigned long long)st);
            return -1;
        }
        usleep(50000);
    }
    fprintf(stderr, "hvt: -c: no agent in the guest started the command within %.0f s "
            "(run 'hvtrace-guest agent' in the guest)\n", wait_s);
    return -1;
}

int d_cmd_go(d_cmd *c)
{
    char req[64], ans[ANS];
    snprintf(req, sizeof req, "d cmd go %u", c->seq);
    if (ask(c, req, ans) != 0)
        return -1;
    c->went = 1;
    return 0;
}

int d_cmd_poll(d_cmd *c, int *wait_status)
{
    char ans[ANS];
    if (ask(c, "d cmd status", ans) != 0)
        return -1;
    uint64_t st = hvt_coll_uval(ans, "cmd_state");
    if (hvt_coll_uval(ans, "cmd_seq") == c->seq &&
        (st == HVT_D_CMDS_STARTED || st == HVT_D_CMDS_RUNNING))
        return 1;
    c->ended = 1;
    *wait_status = (int)(int32_t)hvt_coll_uval(ans, "cmd_wait_status");
    fprintf(stderr, "hvt: pid %u has exited\n", c->pid);   /* dtrace's words */
    return 0;
}

void d_cmd_cancel(d_cmd *c)
{
    char req[64], ans[ANS];
    if (!c->started)
        return;
    snprintf(req, sizeof req, "d cmd cancel %u", c->seq);
    hvt_coll_ask(c->dir, c->sock, req, ans, sizeof ans);   /* kills it, or acknowledges its end */
}
