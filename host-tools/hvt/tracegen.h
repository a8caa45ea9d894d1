/* tracegen: `hvt gen`, a test tool: builds test traces from real kernel code, with the truth
 * to check the analyzer against. It is linked into hvt only, not into libhvthost.
 * It walks the kernel image's own instructions from chosen entry symbols: direct calls and
 * jumps are followed, returns pop a simulated stack, conditional branches are decided by a
 * seeded PRNG (backward branches give up after a few loops), indirect calls are stepped over
 * (as if the callee returned at once), and a walk ends at an indirect jump, iret/sysret,
 * int3/ud2/hlt, a return from its entry function, or its instruction budget.
 * Each walk is framed as the tracer frames it: syscall walks are preceded by a
 * context switch (pid/comm), two user-mode instructions (mov eax, nr; syscall) and a SYSCALL
 * marker; interrupt/exception walks by an EVENT marker. Registers change plausibly (RSP on
 * push/pop/call/ret, written GPRs and RFLAGS get new values).
 * Output: the trace (with a KASLR slide applied, header LSTAR set) and, with --truth, the
 * nest diagram the walk implies, from the walker's own control-flow decisions. */
#ifndef HVT_TRACEGEN_H
#define HVT_TRACEGEN_H
int tracegen_main(int argc, char **argv);
#endif
