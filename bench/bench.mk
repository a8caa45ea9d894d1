# bench.mk - benchmarks that print ratios measured side by side in one run.
include bench/step.mk
include bench/probe.mk
