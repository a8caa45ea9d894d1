/* hvt_cmd: the subcommands of the hvt command (main.c's table) and what they share.
 * Contract: each cmd_* gets the arguments after its name, prints its usage with -h or on a
 * bad argument, and returns the exit status: 0 ok, HVT_EXIT_BAD bad input, HVT_EXIT_USAGE. */
#ifndef HVT_CMD_H
#define HVT_CMD_H
#include "kinfo.h"
#include <stdint.h>

enum { HVT_EXIT_BAD = 1, HVT_EXIT_USAGE = 2 };

int cmd_syms(int argc, char **argv);      /* cmd_syms.c: symbols, addresses, BTF layouts */
int cmd_analyze(int argc, char **argv);   /* cmd_analyze.c: listings, nesting, summaries, profiles */
int cmd_bench(int argc, char **argv);     /* cmd_analyze.c: decode+symbolize+nest rate */
int cmd_export(int argc, char **argv);    /* cmd_export.c: Perfetto/Chrome JSON, CTF, speedscope */
int cmd_options(int argc, char **argv);   /* cmd_options.c: the hypervisor's "trace =" line */
int cmd_cfg(int argc, char **argv);      /* cmd_cfg.c: keys to enroll, hvtrace.cfg sealed */
int cmd_check_host(int argc, char **argv); /* checkhost/check_host.c: can hvtrace run here;
                                             0 qualifies, 1 does not, 2 could not decide */
int cmd_trace(int argc, char **argv);     /* cmd_trace.c: hvt trace start|stop|status through
                                             the running collector; 1 also refused, timed out
                                             or no collector (docs/trace-cli.md) */

/* A whole-string number (C's 0x/0 prefixes): 0, or -1 when s is not one. */
int hvt_parse_u64(const char *s, uint64_t *out);
/* The KASLR slide from --slide N, else from --lstar ADDR (the runtime entry_SYSCALL_64),
 * else 0: 0, or -1 on a bad number or an LSTAR that matches no entry. */
int hvt_get_slide(const kinfo *ki, const char *slide_s, const char *lstar_s, int64_t *slide);
/* Symbols and slide for a trace: none without vmlinuz (*have = 0); else --slide/--lstar when
 * given, else the trace header's LSTAR; a vmlinuz of another build than the trace's is refused.
 * 0, or -1 (said why; *have tells whether ki must be closed). */
int hvt_trace_syms(const char *vmlinuz, const char *slide_s, const char *lstar_s, const char *trace, kinfo *ki,
                   int *have, int64_t *slide);
#endif
