/*
 * d_run.h - hvt as dtrace: compile a D program, load it into the hypervisor through the
 * collector, arm its probes, print what it records, and end it the DTrace way.
 *
 *   hvt [-s FILE | -n 'PROGRAM'] [ARG...] [-q] [-F] [-w] [-Z] [-e] [-S] [-o FILE]
 *       [-x opt[=val]]... [-p PID] [--vmlinuz VMLINUZ] [-d DIR | --socket SOCK]
 *       [--duration S] [--drain S] [--tsc-khz N]
 *
 * Contract:
 *  - Compile errors print as the compiler prints them (file:line:col with a caret) and exit 1;
 *    -e stops after compiling, -S prints the bytecode.
 *  - Run: load (HVT_CTL_D_LOAD), BEGIN, arm every probe the program names with
 *    HVT_PROBE_F_ACTION, then print records as they arrive, in stream order; a buffer with a
 *    record that prints or changes an aggregation (printa, clear, trunc, normalize,
 *    denormalize) waits, with the buffers after it, for a snapshot asked after it arrived
 *    (DTrace's snapshot before it reads the buffers). It ends on
 *    SIGINT/SIGTERM, --duration, or a clause's exit(): probes disarmed first, then END runs,
 *    the records before it are drained, a last aggregation snapshot arrives, and the
 *    aggregations printa() did not print are printed; the program is unloaded.
 *  - Nothing is lost silently: "hvt: N records lost on the link" for records the link dropped,
 *    the hypervisor's own drops as DTrace prints them; exit status 1 then, or exit()'s status.
 */
#ifndef HVT_D_RUN_H
#define HVT_D_RUN_H

/* True when hvt's arguments ask for a D program (-s, or -n with a clause body/predicate). */
int d_run_wanted(int argc, char **argv);
int d_run_main(int argc, char **argv);

#endif
