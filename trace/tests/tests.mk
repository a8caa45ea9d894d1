# trace/tests/tests.mk - host unit tests of trace/ and its subsystems, each beside its code
# (trace/tests, trace/step/tests, trace/x86/tests, trace/probe/tests, trace/dvm/tests;
# tests/lib/unit.mk). trace/tests/test_X.c tests trace/X.c, trace/probe/tests/test_probe_X.c
# tests trace/probe/probe_X.c, trace/x86/tests/test_x86_X.c tests trace/x86/x86_X.c.
$(HV_UNIT_BUILD)/test_%: trace/tests/test_%.c trace/%.c trace/%.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ $< trace/$*.c
$(HV_UNIT_BUILD)/test_probe_%: trace/probe/tests/test_probe_%.c trace/probe/probe_%.c trace/probe/probe_%.h include/hvt_hypercall.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ $< trace/probe/probe_$*.c $(test_probe_$*_LIBS)
test_probe_epoch_LIBS := -lpthread
# x86_len and x86_wregs are checked against capstone over real code: Debian's bash, libc and
# QEMU binaries.
$(HV_UNIT_BUILD)/test_x86_%: trace/x86/tests/test_x86_%.c trace/x86/tests/elf_sweep.h trace/x86/x86_%.c trace/x86/x86_%.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ $< trace/x86/x86_$*.c -lcapstone
X86_LEN_CORPUS := /usr/bin/bash /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/bin/qemu-system-x86_64

# The D verifier and interpreter (trace/dvm/tests/test_dif*.c); test_dif again under ASan+UBSan
# (the mutation test's mutants run there).
DIF_SRCS := trace/unwind/kunwind.c trace/dvm/dif_verify.c trace/dvm/dif_vm.c trace/dvm/dif_str.c trace/dvm/dif_state.c trace/dvm/dif_agg.c trace/dvm/dif_dyn.c trace/dvm/dif_spec.c trace/dvm/dif_budget.c trace/dvm/dif_lean.c
DIF_DEPS := trace/dvm/tests/dif_asm.h $(DIF_SRCS) trace/unwind/kunwind.h trace/dvm/dif.h trace/dvm/dif_impl.h trace/dvm/dif_lean.h include/hvt_dif.h tests/lib/check.h
$(HV_UNIT_BUILD)/test_dif_%: trace/dvm/tests/test_dif_%.c $(DIF_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ $< $(DIF_SRCS) -lpthread
$(HV_UNIT_BUILD)/test_dif: trace/dvm/tests/test_dif.c $(DIF_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ $< $(DIF_SRCS) -lpthread
$(HV_UNIT_BUILD)/test_dif_asan: trace/dvm/tests/test_dif.c $(DIF_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) $(HV_ASAN) -o $@ $< $(DIF_SRCS) -lpthread

$(HV_UNIT_BUILD)/test_rec_enc: trace/step/tests/test_rec_enc.c trace/step/tests/rand_regs.h trace/step/rec_enc.c trace/step/rec_enc.h host-tools/tracefile/trace_reader.c host-tools/tracefile/trace_reader.h host-tools/tracefile/trace_scan.c host-tools/tracefile/trace_scan.h host-tools/tracefile/trace_chunkw.c host-tools/util.c include/hvt_trace_format.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -Ihost-tools -Ihost-tools/tracefile -o $@ $< trace/step/rec_enc.c host-tools/tracefile/trace_reader.c host-tools/tracefile/trace_scan.c host-tools/tracefile/trace_chunkw.c host-tools/util.c -lzstd -lz
# The scope's switch probe through its probe ops (armed, lost to a disarm of every probe and
# armed again), scope.c on the host shim with the hypervisor stubbed.
$(HV_UNIT_BUILD)/test_scope_probe: trace/step/tests/test_scope_probe.c trace/step/scope.c trace/step/scope.h trace/step/scope_threads.c tests/fuzz/host_hv/hv_api.h tests/fuzz/host_hv/hv_log_host.c $(HV_UNIT_BUILD)/inc/hv_guest.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_STD) -O1 -g -Wall -Wno-unused-parameter -fsanitize=address,undefined -fno-sanitize-recover=all \
	  -include tests/fuzz/host_hv/hv_api.h -include $(HV_UNIT_BUILD)/inc/hv_guest.h -Itests/lib -Ivmm -Ivmm/include -Iinclude $(TRACE_DIRS:%=-I%) -Ihv \
	  -o $@ trace/step/tests/test_scope_probe.c trace/step/scope.c trace/step/scope_threads.c tests/fuzz/host_hv/hv_log_host.c
# The table of threads D's step() steps at once (pure bookkeeping: scope.c holds it under its lock).
$(HV_UNIT_BUILD)/test_scope_threads: trace/step/tests/test_scope_threads.c trace/step/scope_threads.c trace/step/scope_threads.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) $(HV_ASAN) -Itrace/step -o $@ $< trace/step/scope_threads.c
# The MTF fast path (assembly) run on the host: its HOST_TEST build reads a VMCS in memory
# (TV_* generated from trace/step/tests/step_fast_test.h like the hypervisor's own constants).
$(HV_UNIT_BUILD)/gen/step_fast_test_asm.s: trace/step/tests/step_fast_test_asm.c trace/step/tests/step_fast_test.h vmm/include/hv_asm.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -S $< -o $@
$(HV_UNIT_BUILD)/gen/step_fast_test.inc: $(HV_UNIT_BUILD)/gen/step_fast_test_asm.s tools/gen-asm-inc.sh
	bash tools/gen-asm-inc.sh $< $@
$(HV_UNIT_BUILD)/step_fast_host.o: trace/step/step_fast.asm $(HV_GEN)/trace/step/step_fast_asm.inc $(HV_UNIT_BUILD)/gen/step_fast_test.inc
	@mkdir -p $(dir $@)
	nasm -f elf64 -DHOST_TEST -I$(HV_GEN)/trace/step/ -I$(HV_UNIT_BUILD)/gen/ -o $@ $<
$(HV_UNIT_BUILD)/step_fast_harness.o: trace/step/tests/step_fast_harness.asm
	@mkdir -p $(dir $@)
	nasm -f elf64 -o $@ $<
$(HV_UNIT_BUILD)/test_step_fast: trace/step/tests/test_step_fast.c trace/step/tests/rand_regs.h trace/step/tests/step_fast_test.h $(HV_UNIT_BUILD)/step_fast_host.o $(HV_UNIT_BUILD)/step_fast_harness.o trace/step/step_cpu.h trace/step/rec_enc.c trace/step/rec_enc.h host-tools/tracefile/trace_reader.c host-tools/tracefile/trace_chunkw.c host-tools/util.c include/hvt_trace_format.h
	$(CC) $(HV_UNIT_CFLAGS) -no-pie -Ihost-tools -Ihost-tools/tracefile -o $@ trace/step/tests/test_step_fast.c $(HV_UNIT_BUILD)/step_fast_host.o \
	  $(HV_UNIT_BUILD)/step_fast_harness.o trace/step/rec_enc.c host-tools/tracefile/trace_reader.c host-tools/tracefile/trace_chunkw.c host-tools/util.c -lzstd -lz
# The trace status's IOMMU and refusal fields: trace/trace_ctl.c (host build) and the
# collector's printer, under ASan+UBSan.
HVSTATUS_SRCS := trace/tests/test_hvstatus.c trace/trace_ctl.c host-tools/collector/coll_hvstatus.c
$(HV_UNIT_BUILD)/test_hvstatus: $(HVSTATUS_SRCS) trace/trace_ctl.h host-tools/collector/coll_hvstatus.h include/hvt_stream.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -DHVT_HOST -Itests/lib -Iinclude $(TRACE_DIRS:%=-I%) -Ihost-tools/collector \
	  -fsanitize=address,undefined -fno-sanitize-recover=all -o $@ $(HVSTATUS_SRCS)
# trace/dvm/d_runtime.c's loader on the host shim: two threads racing loads of a verified and a
# forged image (and a zero-length part after a load), under ASan+UBSan; VMREAD reads 0
# (hv_guest.h generated as for the hypercall fuzzer).
DPROBE_LOAD_DEPS := trace/dvm/tests/test_dprobe_load.c trace/dvm/tests/dif_asm.h trace/dvm/d_runtime.c trace/dvm/d_runtime.h $(DIF_SRCS) trace/dvm/dif.h trace/dvm/dif_impl.h \
  tests/fuzz/host_hv/hv_api.h tests/fuzz/host_hv/hv_log_host.c tests/fuzz/host_hv/hv_budget_host.c vmm/mem_budget.c vmm/hv_rand.c
$(HV_UNIT_BUILD)/inc/hv_guest.h: vmm/include/hv_guest.h tests/fuzz/host_hv/gen-hv-guest.sh
	bash tests/fuzz/host_hv/gen-hv-guest.sh $@
$(HV_UNIT_BUILD)/test_dprobe_load: $(DPROBE_LOAD_DEPS) $(HV_UNIT_BUILD)/inc/hv_guest.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_STD) -O1 -g -Wall -Wno-unused-parameter -fsanitize=address,undefined -fno-sanitize-recover=all \
	  -include tests/fuzz/host_hv/hv_api.h -include $(HV_UNIT_BUILD)/inc/hv_guest.h -Itests/lib -Ivmm -Ivmm/include -Iinclude $(TRACE_DIRS:%=-I%) -Ihv \
	  -o $@ trace/dvm/tests/test_dprobe_load.c tests/fuzz/host_hv/hv_log_host.c tests/fuzz/host_hv/hv_budget_host.c vmm/mem_budget.c vmm/hv_rand.c $(DIF_SRCS) -lpthread


# Every test; a test given arguments runs with them (test_probe_epoch: rounds of the race).
TRACE_UNIT_TESTS := test_trace_opts test_task_base test_hvstatus test_probe_budget test_probe_epoch test_probe_module test_x86_len test_x86_wregs \
  test_dif test_dif_asan test_dif_bounds test_dif_hash_key test_dif_budget test_dprobe_load test_rec_enc test_step_fast test_scope_threads test_scope_probe
test_x86_len_ARGS    := $(X86_LEN_CORPUS)
test_x86_wregs_ARGS  := $(X86_LEN_CORPUS)
test_probe_epoch_ARGS := 200000
test_dprobe_load_ARGS := 5000
.PHONY: unit-test-trace
unit-test-trace: $(TRACE_UNIT_TESTS:%=$(HV_UNIT_BUILD)/%)
	@set -e; $(foreach t,$(TRACE_UNIT_TESTS),echo '$(HV_UNIT_BUILD)/$(t) $($(t)_ARGS)'; $(HV_UNIT_BUILD)/$(t) $($(t)_ARGS);)
	@# the fast path's FLOW entry, its bytes against rec_insn's at every step
	$(HV_UNIT_BUILD)/test_step_fast 7 300000 flow
unit-test-hv: unit-test-trace
