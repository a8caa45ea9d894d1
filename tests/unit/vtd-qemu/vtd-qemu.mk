# vtd-qemu.mk - vmm/'s IOMMU builder and programming code against QEMU's VT-d model, 3- then
# 4-level tables (boots a guest under TCG twice, ~10 s each; not in the manifest).
.PHONY: test-vtd-qemu
test-vtd-qemu:
	bash tests/unit/vtd-qemu/run-vtd-qemu.sh $(BUILD)/test/vtd-qemu
	VTD_OPTS=,aw-bits=48 bash tests/unit/vtd-qemu/run-vtd-qemu.sh $(BUILD)/test/vtd-qemu-48
