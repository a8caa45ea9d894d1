#!/usr/bin/env python3
"""nest-check.py PID COMM FUNC[,ALIAS...] < nest view (hvt analyze --view nest)

Counts the calls of FUNC (any of its aliases: kallsyms keeps one name per address) that the
nesting view shows inside entry_SYSCALL_64 -> ... -> do_syscall_64, on a CPU whose current
process (last "== switch to PID/COMM ==" line on that CPU) is PID/COMM. Prints the count."""
import re
import sys

pid, comm, funcs = sys.argv[1], sys.argv[2], set(sys.argv[3].split(","))
line_re = re.compile(r"^\s*(\d+)  (\s*)(->|<-|=>) (\S+)")
switch_re = re.compile(r"^\s*(\d+)  == switch to (\S+?)/(.*?)(?: \(resumed\))? ==")
stacks, current, count, wrong_proc = {}, {}, 0, 0
for line in sys.stdin:
    m = switch_re.match(line)
    if m:
        current[m.group(1)] = (m.group(2), m.group(3).strip())
        continue
    m = line_re.match(line)
    if not m:
        continue
    cpu, depth, arrow, fn = m.group(1), len(m.group(2)) // 2, m.group(3), m.group(4)
    st = stacks.setdefault(cpu, [])
    del st[depth:]
    if arrow == "->":   # a call ("=>" restates a frame after an interrupt: not a new call)
        if fn in funcs and "do_syscall_64" in st and any(f.startswith("entry_SYSCALL_64") for f in st):
            if current.get(cpu) == (pid, comm):
                count += 1
            else:
                wrong_proc += 1
    st.append(fn)   # a call, or ("=>") a frame restated when an interrupted stack is resumed
print(f"nest_getpid_calls={count} other_process={wrong_proc}")
