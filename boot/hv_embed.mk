# hv_embed.mk - embed the hypervisor image (vmm.mk's hvtrace-hv.bin) and the CR3-switching
# trampoline into hvtrace.efi. Included before boot.mk; adds to BOOT_EXTRA_OBJS.
HV_EMBED_OBJ := $(BUILD)/boot/hv_trampoline.o
BOOT_EXTRA_OBJS += $(HV_EMBED_OBJ)

$(HV_EMBED_OBJ): boot/hv_trampoline.S $(BUILD)/hv/hvtrace-hv.bin
	@mkdir -p $(dir $@)
	$(CC) -c -fpic -DHV_IMAGE_PATH='"$(BUILD)/hv/hvtrace-hv.bin"' $< -o $@
