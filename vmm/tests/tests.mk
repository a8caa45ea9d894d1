# vmm/tests/tests.mk - host unit tests of vmm/ (tests/lib/unit.mk): EPT and MTRR types, MSR
# policy, guest memory, speculation control, and the firmware-table parsers and IOMMU logic.
# One row per test, NAME:SRC+SRC... (the sources it links besides vmm/tests/NAME.c).
VMM_UNIT_TESTS := test_ept_mtrr:vmm/ept.c+vmm/mtrr.c test_msr_policy:vmm/msr_class.c test_ept_view:vmm/ept.c \
  test_gmem:vmm/gmem.c test_spec_ctrl:vmm/spec_ctrl.c test_host_cr4:vmm/host_cr4.h test_nmi_decide:vmm/nmi_decide.h test_mc_decide:vmm/mc_decide.h test_pm1_sleep:vmm/pm1_sleep.h test_io_watch:vmm/io_watch.h test_vmx_caps:vmm/vmx_caps.c test_xcr0:vmm/xcr0.h test_pending_dbg:vmm/pending_dbg.h test_mem_budget:vmm/mem_budget.c test_dilate_calib:vmm/dilate_calib.h
# Firmware tables and IOMMU/ECAM: built again under ASan+UBSan (NAME_asan), since their input is
# hostile firmware data; run on the tables captured in vmm/tests/data.
VMM_ASAN_TESTS := test_dmar:vmm/acpi_dmar.c test_pci_mcfg:vmm/pci_mcfg.c test_iommu_tables:vmm/iommu_tables.c \
  test_iommu_hw:vmm/iommu_hw.c test_iommu_boot:vmm/iommu_boot.c+vmm/acpi_dmar.c+vmm/iommu_tables.c+vmm/iommu_hw.c \
  test_insn_store:vmm/insn_store.c
# $(1) NAME, $(2) its sources, $(3) the variant's suffix, $(4) its extra flags.
define vmm_unit_rule
$(HV_UNIT_BUILD)/$(1)$(3): vmm/tests/$(1).c $(2) $(wildcard $(2:.c=.h) $(2:vmm/%.c=vmm/include/%.h)) vmm/le_bytes.h vmm/include/x86_arch.h tests/lib/check.h
	@mkdir -p $$(dir $$@)
	$$(CC) $$(HV_UNIT_CFLAGS) $(4) -o $$@ vmm/tests/$(1).c $(2)
endef
vmm_name = $(word 1,$(subst :, ,$(1)))
vmm_srcs = $(subst +, ,$(word 2,$(subst :, ,$(1))))
$(foreach t,$(VMM_UNIT_TESTS),$(eval $(call vmm_unit_rule,$(call vmm_name,$(t)),$(call vmm_srcs,$(t)),,)))
$(foreach t,$(VMM_ASAN_TESTS),$(eval $(call vmm_unit_rule,$(call vmm_name,$(t)),$(call vmm_srcs,$(t)),,)))
$(foreach t,$(VMM_ASAN_TESTS),$(eval $(call vmm_unit_rule,$(call vmm_name,$(t)),$(call vmm_srcs,$(t)),_asan,$(HV_ASAN))))
VMM_UNIT_BINS  := $(foreach t,$(VMM_UNIT_TESTS),$(HV_UNIT_BUILD)/$(call vmm_name,$(t)))
VMM_ASAN_BINS  := $(foreach t,$(VMM_ASAN_TESTS),$(HV_UNIT_BUILD)/$(call vmm_name,$(t)) $(HV_UNIT_BUILD)/$(call vmm_name,$(t))_asan)
.PHONY: unit-test-vmm unit-test-iommu
unit-test-vmm: $(VMM_UNIT_BINS)
	@set -e; for t in $^; do $$t; done
unit-test-iommu: $(VMM_ASAN_BINS)
	@set -e; for t in $^; do $$t vmm/tests/data; done
unit-test-hv: unit-test-vmm unit-test-iommu
