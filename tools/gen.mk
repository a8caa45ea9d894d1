# tools/gen.mk - constants generated from the C headers for the Python scripts, the way the
# assembly's are (vmm/vmm.mk, tools/gen-asm-inc.sh): the compiler evaluates them.
#   build/gen/hvt_abi.py   hypercall numbers and sub-operations, probe spec kinds, the
#                          stream's magic, version and message types (tools/hvt_abi.c)
GEN_DIR    := $(BUILD)/gen
HVT_ABI_PY := $(GEN_DIR)/hvt_abi.py
$(GEN_DIR)/hvt_abi.s: tools/hvt_abi.c
	@mkdir -p $(dir $@)
	$(HV_CC) $(HV_STD) -Wall -Iinclude -MMD -MP -MT $@ -S $< -o $@
$(HVT_ABI_PY): $(GEN_DIR)/hvt_abi.s tools/gen-asm-inc.sh
	bash tools/gen-asm-inc.sh $< $@
-include $(GEN_DIR)/hvt_abi.d
