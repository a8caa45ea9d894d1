/*
 * task.h - which process runs: the guest's current task (pid, tgid, comm), read from guest
 * memory with offsets the host computed from the kernel's own BTF and kallsyms
 * (`hvt syms VMLINUZ --layout`) and passed in the boot configuration:
 *     trace = task=CURRENT_PERCPU_OFF:PID_OFF:TGID_OFF:COMM_OFF
 * Why the host computes them: the hypervisor has no BTF parser, and one line of config keeps it
 * that way; raw values would need the same offsets on the host anyway to mean anything.
 * Contract: task_config() parses the option (returns -1 and says why on a bad value);
 * task_check() is called at every step and returns true when the current task changed since
 * the last call on this CPU, filling *out. Guest memory is only read through gmem.
 */
#ifndef HVT_TASK_H
#define HVT_TASK_H
#include <stdint.h>
#include <stdbool.h>

struct task_info { uint64_t task, pid, tgid; char comm[16]; };

int  task_config(const char *text);
bool task_enabled(void);
void task_reset(unsigned cpu);
bool task_check(unsigned cpu, struct task_info *out);

#endif
