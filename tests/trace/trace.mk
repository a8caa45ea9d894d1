# trace.mk - the whole-system tracer's tests (issue 5).
#   make test-trace   in Bochs: getpid-loop 1000 between two hvtrace marks; the trace must pass
#                     the continuity check (hvt-check), output includes violations=0
TRACE_TEST   := $(BUILD)/test/trace
TRACE_CPUS   ?= 2
TRACE_TIMEOUT ?= 600
HVT_IMPORT   := $(BUILD)/host/hvt-import
HVT_CHECK    := $(BUILD)/host/hvt-check
TRACE_GUEST_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -static -Iinclude

$(HVT_IMPORT): host-tools/hvt_import.c host-tools/trace_chunkw.c host-tools/trace_chunkw.h host-tools/e9_lines.c host-tools/e9_lines.h include/hvt_trace_format.h
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -Iinclude -Ihost-tools $< host-tools/trace_chunkw.c host-tools/e9_lines.c -lzstd -lz -o $@
$(HVT_CHECK): host-tools/hvt_check.c $(HOST_LIB)
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Ihost-tools -Iinclude $< $(HOST_LIB) $(HOST_LIBS) -o $@
all: $(HVT_IMPORT) $(HVT_CHECK)
test-all: test-trace

$(TRACE_TEST)/guest/%: tests/guest/%.c tests/guest/hvt_guest.h include/hvt_hypercall.h
	@mkdir -p $(dir $@)
	$(CC) $(TRACE_GUEST_CFLAGS) -o $@ $<

$(TRACE_TEST)/initrd.img: $(TEST_BUILD)/guest/hvtrace-guest $(TRACE_TEST)/guest/getpid-loop $(TRACE_TEST)/guest/hvtrace-mark $(TRACE_TEST)/guest/trace-run tests/guest/init tests/guest/mkinitramfs.sh
	bash tests/guest/mkinitramfs.sh $@ $(TEST_BUILD)/guest/hvtrace-guest \
	  $(TRACE_TEST)/guest/getpid-loop:bin/getpid-loop $(TRACE_TEST)/guest/hvtrace-mark:bin/hvtrace-mark \
	  $(TRACE_TEST)/guest/trace-run:bin/trace-run

.PHONY: test-trace
test-trace: $(HVT_IMPORT) $(HVT_CHECK) $(TRACE_TEST)/initrd.img
	$(MAKE) efi
	$(MAKE) $(TEST_BUILD)/vmlinuz
	@mkdir -p $(TRACE_TEST)
	$(MAKE) $(HVT)
	printf '%s\n' 'kernel = \vmlinuz' 'initrd = \initrd.img' \
	  'cmdline = $(TEST_CMDLINE) hvt_mode=cmd hvt_cmd=/bin/getpid-loop,1000' 'hypervisor = on' 'log = e9' \
	  "trace = $$(bash tests/trace/task-option.sh $(HVT) $(TEST_BUILD)/vmlinuz)" > $(TRACE_TEST)/hvtrace.cfg
	bash tests/platform/make-esp.sh $(TRACE_TEST)/esp.img $(BUILD)/hvtrace.efi $(TEST_BUILD)/vmlinuz \
	  $(TRACE_TEST)/initrd.img $(TRACE_TEST)/hvtrace.cfg
	BOCHS_PREFIX=$$(HVT_BOCHS_ORACLE=1 bash tests/platform/build-bochs.sh) \
	  bash tests/platform/bochs-run.sh -c $(TRACE_CPUS) -t $(TRACE_TIMEOUT) $(TRACE_TEST)/esp.img $(TRACE_TEST)/run || true
	bash tests/trace/check-trace.sh $(TRACE_TEST)/run $(HVT_IMPORT) $(HVT_CHECK) $(HVT) $(TEST_BUILD)/vmlinuz

# The main job (README: make run): boot Linux under hvtrace in Bochs, trace getpid-loop 1000
# from its start mark to its stop mark on every CPU, and show what the trace holds.
.PHONY: demo
demo: test-trace
	@echo "=== hypervisor exit summary (port 0xE9) ==="
	@grep -a "^hvtrace:" $(TRACE_TEST)/run/e9.log | tail -n 25
	@echo "=== instructions per function (top 15) ==="
	@$(HVT) analyze --vmlinuz $(TEST_BUILD)/vmlinuz --view funcs $(TRACE_TEST)/run/trace.hvt | head -n 16
	@echo "=== one getpid system call, nested (flowindent) ==="
	@$(HVT) analyze --vmlinuz $(TEST_BUILD)/vmlinuz --view nest $(TRACE_TEST)/run/trace.hvt | \
	  grep -m1 -A40 -- "-> entry_SYSCALL_64" | head -n 40
	@echo "trace file: $(TRACE_TEST)/run/trace.hvt (hvt analyze --help for more views)"

# A longer trace: "ls -l /bin" from exec to exit (kernel and user, every CPU), which must hold at
# least TRACE_BIG_MIN instructions with no continuity violation and no gap.
TRACE_BIG_MIN ?= 5000000
TRACE_BIG_CMD ?= /bin/trace-run,/bin/ls,/
.PHONY: test-trace-big
test-trace-big: $(HVT_IMPORT) $(HVT_CHECK) $(TRACE_TEST)/initrd.img
	$(MAKE) efi
	$(MAKE) $(TEST_BUILD)/vmlinuz $(HVT)
	@mkdir -p $(TRACE_TEST)/big
	printf '%s\n' 'kernel = \vmlinuz' 'initrd = \initrd.img' \
	  'cmdline = $(TEST_CMDLINE) hvt_mode=cmd hvt_cmd=$(TRACE_BIG_CMD)' 'hypervisor = on' 'log = e9' \
	  "trace = $$(bash tests/trace/task-option.sh $(HVT) $(TEST_BUILD)/vmlinuz)" > $(TRACE_TEST)/big/hvtrace.cfg
	bash tests/platform/make-esp.sh $(TRACE_TEST)/big/esp.img $(BUILD)/hvtrace.efi $(TEST_BUILD)/vmlinuz \
	  $(TRACE_TEST)/initrd.img $(TRACE_TEST)/big/hvtrace.cfg
	bash tests/platform/bochs-run.sh -c $(TRACE_CPUS) -t $(TRACE_TIMEOUT) $(TRACE_TEST)/big/esp.img $(TRACE_TEST)/big/run || true
	bash tests/trace/check-big.sh $(TRACE_TEST)/big/run $(HVT_IMPORT) $(HVT_CHECK) $(TRACE_BIG_MIN)
# Not in test-all yet: it exposes a livelock on user-page faults under MTF (see issue notes).
# test-all: test-trace-big

# The trace streamed over the dedicated NIC to hvtrace-collector (tests/net/test-trace-net.sh):
# run A = test-trace's window through the stream, judged by check-trace.sh on the collector's
# trace.hvt (oracle Bochs); run B = tracing started and stopped from the host with hvt trace.
.PHONY: test-trace-net
test-trace-net: $(HVT_IMPORT) $(HVT_CHECK) $(TRACE_TEST)/initrd.img
	$(MAKE) efi collector
	$(MAKE) $(TEST_BUILD)/vmlinuz $(HVT)
	BUILD=$(BUILD) TRACE_CPUS=$(TRACE_CPUS) TEST_CMDLINE="$(TEST_CMDLINE)" bash tests/net/test-trace-net.sh
