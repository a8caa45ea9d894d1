# hv_unit.mk - host unit tests of the hypervisor's host-testable logic (vmm/, trace/).
HV_UNIT_BUILD := $(BUILD)/test/unit-hv
HV_UNIT_CFLAGS := $(HV_STD) -O2 -g -Wall -Wextra -Wno-unused-parameter -Itests/lib -Ivmm -Ivmm/include -Iinclude $(TRACE_DIRS:%=-I%)

$(HV_UNIT_BUILD)/test_ept_mtrr: tests/unit/test_ept_mtrr.c vmm/ept.c vmm/mtrr.c vmm/ept.h vmm/mtrr.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_ept_mtrr.c vmm/ept.c vmm/mtrr.c
$(HV_UNIT_BUILD)/test_msr_policy: tests/unit/test_msr_policy.c vmm/msr_class.c vmm/msr_policy.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_msr_policy.c vmm/msr_class.c
$(HV_UNIT_BUILD)/test_ept_view: tests/unit/test_ept_view.c vmm/ept.c vmm/ept.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_ept_view.c vmm/ept.c
$(HV_UNIT_BUILD)/test_gmem: tests/unit/test_gmem.c vmm/gmem.c vmm/include/gmem.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_gmem.c vmm/gmem.c
$(HV_UNIT_BUILD)/test_x86_len: tests/unit/test_x86_len.c tests/unit/elf_sweep.h trace/x86/x86_len.c trace/x86/x86_len.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_x86_len.c trace/x86/x86_len.c -lcapstone
$(HV_UNIT_BUILD)/test_x86_wregs: tests/unit/test_x86_wregs.c tests/unit/elf_sweep.h trace/x86/x86_wregs.c trace/x86/x86_wregs.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_x86_wregs.c trace/x86/x86_wregs.c -lcapstone
$(HV_UNIT_BUILD)/test_trace_opts: tests/unit/test_trace_opts.c trace/trace_opts.c trace/trace_opts.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_trace_opts.c trace/trace_opts.c
$(HV_UNIT_BUILD)/test_rec_enc: tests/unit/test_rec_enc.c tests/unit/rand_regs.h trace/step/rec_enc.c trace/step/rec_enc.h host-tools/tracefile/trace_reader.c host-tools/tracefile/trace_chunkw.c host-tools/util.c include/hvt_trace_format.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -Ihost-tools -Ihost-tools/tracefile -o $@ tests/unit/test_rec_enc.c trace/step/rec_enc.c host-tools/tracefile/trace_reader.c host-tools/tracefile/trace_chunkw.c host-tools/util.c -lzstd -lz
# The D verifier and interpreter; again under ASan+UBSan (the mutation test's mutants run there).
DIF_SRCS := trace/dvm/dif_verify.c trace/dvm/dif_vm.c trace/dvm/dif_str.c trace/dvm/dif_state.c trace/dvm/dif_agg.c trace/dvm/dif_dyn.c trace/dvm/dif_spec.c
DIF_DEPS := tests/unit/test_dif.c tests/unit/dif_asm.h $(DIF_SRCS) trace/dvm/dif.h trace/dvm/dif_impl.h include/hvt_dif.h
$(HV_UNIT_BUILD)/test_dif: $(DIF_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_dif.c $(DIF_SRCS) -lpthread
$(HV_UNIT_BUILD)/test_dif_asan: $(DIF_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -o $@ tests/unit/test_dif.c $(DIF_SRCS) -lpthread
# The MTF fast path (assembly) run on the host: its HOST_TEST build reads a VMCS in memory
# (TV_* generated from tests/unit/step_fast_test.h like the hypervisor's own constants).
$(HV_UNIT_BUILD)/gen/step_fast_test_asm.s: tests/unit/step_fast_test_asm.c tests/unit/step_fast_test.h vmm/include/hv_asm.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -S $< -o $@
$(HV_UNIT_BUILD)/gen/step_fast_test.inc: $(HV_UNIT_BUILD)/gen/step_fast_test_asm.s tools/gen-asm-inc.sh
	bash tools/gen-asm-inc.sh $< $@
$(HV_UNIT_BUILD)/step_fast_host.o: trace/step/step_fast.asm $(HV_GEN)/trace/step/step_fast_asm.inc $(HV_UNIT_BUILD)/gen/step_fast_test.inc
	@mkdir -p $(dir $@)
	nasm -f elf64 -DHOST_TEST -I$(HV_GEN)/trace/step/ -I$(HV_UNIT_BUILD)/gen/ -o $@ $<
$(HV_UNIT_BUILD)/step_fast_harness.o: tests/unit/step_fast_harness.asm
	@mkdir -p $(dir $@)
	nasm -f elf64 -o $@ $<
$(HV_UNIT_BUILD)/test_step_fast: tests/unit/test_step_fast.c tests/unit/rand_regs.h tests/unit/step_fast_test.h $(HV_UNIT_BUILD)/step_fast_host.o $(HV_UNIT_BUILD)/step_fast_harness.o trace/step/step_cpu.h trace/step/rec_enc.c trace/step/rec_enc.h host-tools/tracefile/trace_reader.c host-tools/tracefile/trace_chunkw.c host-tools/util.c include/hvt_trace_format.h
	$(CC) $(HV_UNIT_CFLAGS) -no-pie -Ihost-tools -Ihost-tools/tracefile -o $@ tests/unit/test_step_fast.c $(HV_UNIT_BUILD)/step_fast_host.o \
	  $(HV_UNIT_BUILD)/step_fast_harness.o trace/step/rec_enc.c host-tools/tracefile/trace_reader.c host-tools/tracefile/trace_chunkw.c host-tools/util.c -lzstd -lz

# x86_len is checked against capstone over real code: Debian's bash, libc and QEMU binaries.
X86_LEN_CORPUS := /usr/bin/bash /usr/lib/x86_64-linux-gnu/libc.so.6 /usr/bin/qemu-system-x86_64
.PHONY: unit-test-hv
unit-test-hv: $(HV_UNIT_BUILD)/test_ept_mtrr $(HV_UNIT_BUILD)/test_msr_policy $(HV_UNIT_BUILD)/test_ept_view $(HV_UNIT_BUILD)/test_gmem $(HV_UNIT_BUILD)/test_x86_len $(HV_UNIT_BUILD)/test_trace_opts $(HV_UNIT_BUILD)/test_rec_enc $(HV_UNIT_BUILD)/test_x86_wregs $(HV_UNIT_BUILD)/test_step_fast $(HV_UNIT_BUILD)/test_dif $(HV_UNIT_BUILD)/test_dif_asan
	$(HV_UNIT_BUILD)/test_dif
	$(HV_UNIT_BUILD)/test_dif_asan
	$(HV_UNIT_BUILD)/test_trace_opts
	$(HV_UNIT_BUILD)/test_rec_enc
	$(HV_UNIT_BUILD)/test_step_fast
	$(HV_UNIT_BUILD)/test_ept_mtrr
	$(HV_UNIT_BUILD)/test_msr_policy
	$(HV_UNIT_BUILD)/test_ept_view
	$(HV_UNIT_BUILD)/test_gmem
	$(HV_UNIT_BUILD)/test_x86_len $(X86_LEN_CORPUS)
	$(HV_UNIT_BUILD)/test_x86_wregs $(X86_LEN_CORPUS)
unit-test: unit-test-hv

# Firmware-table parsers and IOMMU/ECAM logic (vmm/acpi_dmar, pci_mcfg, iommu_tables, iommu_hw,
# iommu_boot, insn_store; NAME:SRC+SRC...):
# host builds, and again under ASan+UBSan since their input is hostile firmware data.
IOMMU_UNIT_TESTS := test_dmar:vmm/acpi_dmar.c test_pci_mcfg:vmm/pci_mcfg.c test_iommu_tables:vmm/iommu_tables.c test_iommu_hw:vmm/iommu_hw.c \
  test_iommu_boot:vmm/iommu_boot.c+vmm/acpi_dmar.c+vmm/iommu_tables.c+vmm/iommu_hw.c test_insn_store:vmm/insn_store.c
define iommu_unit_rule
$(HV_UNIT_BUILD)/$(1): tests/unit/$(1).c $(2) $(wildcard $(2:.c=.h) $(2:vmm/%.c=vmm/include/%.h)) vmm/le_bytes.h
	@mkdir -p $$(dir $$@)
	$$(CC) $$(HV_UNIT_CFLAGS) -o $$@ tests/unit/$(1).c $(2)
$(HV_UNIT_BUILD)/$(1)_asan: tests/unit/$(1).c $(2) $(wildcard $(2:.c=.h) $(2:vmm/%.c=vmm/include/%.h)) vmm/le_bytes.h
	@mkdir -p $$(dir $$@)
	$$(CC) $$(HV_UNIT_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -o $$@ tests/unit/$(1).c $(2)
IOMMU_UNIT_BINS += $(HV_UNIT_BUILD)/$(1) $(HV_UNIT_BUILD)/$(1)_asan
endef
$(foreach t,$(IOMMU_UNIT_TESTS),$(eval $(call iommu_unit_rule,$(word 1,$(subst :, ,$(t))),$(subst +, ,$(word 2,$(subst :, ,$(t)))))))
.PHONY: unit-test-iommu
unit-test-iommu: $(IOMMU_UNIT_BINS)
	@set -e; for t in $(IOMMU_UNIT_BINS); do $$t tests/unit/data; done
unit-test-hv: unit-test-iommu
# The trace status's IOMMU and refusal fields: trace/trace_ctl.c (host build) and the
# collector's printer, under ASan+UBSan.
HVSTATUS_SRCS := tests/unit/test_hvstatus.c trace/trace_ctl.c host-tools/collector/coll_hvstatus.c
$(HV_UNIT_BUILD)/test_hvstatus: $(HVSTATUS_SRCS) trace/trace_ctl.h host-tools/collector/coll_hvstatus.h include/hvt_stream.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O1 -g -Wall -Wextra -DHVT_HOST -Itests/lib -Iinclude $(TRACE_DIRS:%=-I%) -Ihost-tools/collector \
	  -fsanitize=address,undefined -fno-sanitize-recover=all -o $@ $(HVSTATUS_SRCS)
.PHONY: unit-test-hvstatus
unit-test-hvstatus: $(HV_UNIT_BUILD)/test_hvstatus
	$(HV_UNIT_BUILD)/test_hvstatus
unit-test-hv: unit-test-hvstatus
# The same builder and programming code against QEMU's VT-d model, 3- then 4-level tables
# (boots a guest under TCG twice, ~10 s each; not part of unit-test-hv): tests/unit/vtd-qemu/run-vtd-qemu.sh.
.PHONY: test-vtd-qemu
test-vtd-qemu:
	bash tests/unit/vtd-qemu/run-vtd-qemu.sh $(BUILD)/test/vtd-qemu
	VTD_OPTS=,aw-bits=48 bash tests/unit/vtd-qemu/run-vtd-qemu.sh $(BUILD)/test/vtd-qemu-48
# trace/dvm/d_runtime.c's loader on the host shim: two threads racing loads of a verified and a
# forged image (and a zero-length part after a load), under ASan+UBSan; VMREAD reads 0
# (hv_guest.h generated as for the hypercall fuzzer).
DPROBE_LOAD_DEPS := tests/unit/test_dprobe_load.c tests/unit/dif_asm.h trace/dvm/d_runtime.c trace/dvm/d_runtime.h $(DIF_SRCS) trace/dvm/dif.h trace/dvm/dif_impl.h \
  tests/fuzz/host_hv/hv_api.h tests/fuzz/host_hv/hv_log_host.c
$(HV_UNIT_BUILD)/inc/hv_guest.h: vmm/include/hv_guest.h tests/fuzz/host_hv/gen-hv-guest.sh
	bash tests/fuzz/host_hv/gen-hv-guest.sh $@
$(HV_UNIT_BUILD)/test_dprobe_load: $(DPROBE_LOAD_DEPS) $(HV_UNIT_BUILD)/inc/hv_guest.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_STD) -O1 -g -Wall -Wno-unused-parameter -fsanitize=address,undefined -fno-sanitize-recover=all \
	  -include tests/fuzz/host_hv/hv_api.h -include $(HV_UNIT_BUILD)/inc/hv_guest.h -Itests/lib -Ivmm -Ivmm/include -Iinclude $(TRACE_DIRS:%=-I%) -Ihv \
	  -o $@ tests/unit/test_dprobe_load.c tests/fuzz/host_hv/hv_log_host.c $(DIF_SRCS) -lpthread
.PHONY: unit-test-dprobe-load
unit-test-dprobe-load: $(HV_UNIT_BUILD)/test_dprobe_load
	$(HV_UNIT_BUILD)/test_dprobe_load 5000
unit-test-hv: unit-test-dprobe-load
# The guest kernel's per-CPU base at an exit (trace/task_base.c): never a GS base user code set.
$(HV_UNIT_BUILD)/test_task_base: tests/unit/test_task_base.c trace/task_base.c trace/task_base.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_task_base.c trace/task_base.c
.PHONY: unit-test-task-base
unit-test-task-base: $(HV_UNIT_BUILD)/test_task_base
	$(HV_UNIT_BUILD)/test_task_base
unit-test-hv: unit-test-task-base
# Bounds on one firing and one load: repeated, backward or shared clause lists and AGGCLR refused.
$(HV_UNIT_BUILD)/test_dif_bounds: tests/unit/test_dif_bounds.c tests/unit/dif_asm.h $(DIF_SRCS) trace/dvm/dif.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_dif_bounds.c $(DIF_SRCS) -lpthread
.PHONY: unit-test-dif-bounds
unit-test-dif-bounds: $(HV_UNIT_BUILD)/test_dif_bounds
	$(HV_UNIT_BUILD)/test_dif_bounds
unit-test-hv: unit-test-dif-bounds
# Speculation and PMU isolation at exit/entry (vmm/spec_ctrl.c): the decision table against the
# capability values of real CPUs (Skylake, Cascade Lake, Ice Lake, Sapphire Rapids, Bochs).
$(HV_UNIT_BUILD)/test_spec_ctrl: tests/unit/test_spec_ctrl.c vmm/spec_ctrl.c vmm/spec_ctrl.h vmm/include/x86_arch.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_spec_ctrl.c vmm/spec_ctrl.c
.PHONY: unit-test-spec-ctrl
unit-test-spec-ctrl: $(HV_UNIT_BUILD)/test_spec_ctrl
	$(HV_UNIT_BUILD)/test_spec_ctrl
unit-test-hv: unit-test-spec-ctrl
# The boot id's randomness (net/boot_rand.c): RDSEED/RDRAND retried, an authenticated stream
# refused without a hardware RNG.
$(HV_UNIT_BUILD)/test_boot_rand: tests/unit/test_boot_rand.c net/boot_rand.c net/boot_rand.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -Inet -o $@ tests/unit/test_boot_rand.c net/boot_rand.c
.PHONY: unit-test-boot-rand
unit-test-boot-rand: $(HV_UNIT_BUILD)/test_boot_rand
	$(HV_UNIT_BUILD)/test_boot_rand
unit-test-hv: unit-test-boot-rand
# The D hash keyed per load (trace/dvm/dif_impl.h dif_key_hash, dif_env.hash_key).
$(HV_UNIT_BUILD)/test_dif_hash_key: tests/unit/test_dif_hash_key.c tests/unit/dif_asm.h $(DIF_SRCS) trace/dvm/dif.h trace/dvm/dif_impl.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_dif_hash_key.c $(DIF_SRCS) -lpthread
.PHONY: unit-test-dif-hash-key
unit-test-dif-hash-key: $(HV_UNIT_BUILD)/test_dif_hash_key
	$(HV_UNIT_BUILD)/test_dif_hash_key
unit-test-hv: unit-test-dif-hash-key
# A budget on one firing: instructions (string and guest-copy loops by their bytes) and a clock
# deadline end the firing with one BUDGET error record (the review's NOP and STRJOIN storms).
$(HV_UNIT_BUILD)/test_dif_budget: tests/unit/test_dif_budget.c tests/unit/dif_asm.h $(DIF_SRCS) trace/dvm/dif.h trace/dvm/dif_impl.h include/hvt_dif.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_dif_budget.c $(DIF_SRCS) -lpthread
.PHONY: unit-test-dif-budget
unit-test-dif-budget: $(HV_UNIT_BUILD)/test_dif_budget
	$(HV_UNIT_BUILD)/test_dif_budget
unit-test-hv: unit-test-dif-budget
# Decode work per arming request (trace/probe/probe_budget.c): 1024 return probes of 1 MiB
# stop at PROBE_DECODE_MAX and are finished by further requests.
$(HV_UNIT_BUILD)/test_probe_budget: tests/unit/test_probe_budget.c trace/probe/probe_budget.c trace/probe/probe_budget.h include/hvt_hypercall.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_probe_budget.c trace/probe/probe_budget.c
.PHONY: unit-test-probe-budget
unit-test-probe-budget: $(HV_UNIT_BUILD)/test_probe_budget
	$(HV_UNIT_BUILD)/test_probe_budget
unit-test-hv: unit-test-probe-budget
# Probe slots not reused under a firing (trace/probe/probe_epoch.c): scenarios, then a firing
# thread racing a disarm-and-rearm thread over one slot.
$(HV_UNIT_BUILD)/test_probe_epoch: tests/unit/test_probe_epoch.c trace/probe/probe_epoch.c trace/probe/probe_epoch.h
	@mkdir -p $(dir $@)
	$(CC) $(HV_UNIT_CFLAGS) -o $@ tests/unit/test_probe_epoch.c trace/probe/probe_epoch.c -lpthread
.PHONY: unit-test-probe-epoch
unit-test-probe-epoch: $(HV_UNIT_BUILD)/test_probe_epoch
	$(HV_UNIT_BUILD)/test_probe_epoch 200000
unit-test-hv: unit-test-probe-epoch
