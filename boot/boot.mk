# boot.mk - hvtrace.efi, the GNU-EFI loader (boot/*.c), built into $(BUILD)/hvtrace.efi.
#   make efi           build $(BUILD)/hvtrace.efi
# Every boot/*.c is part of the loader (the hypervisor launcher boot/hv_launch.c included).
# Modules that embed more into the loader (the hypervisor image) append objects to
# BOOT_EXTRA_OBJS. gnu-efi 3.0.15 layout (Debian 12): crt0, linker script and libs in /usr/lib.
BUILD        ?= build
EFI_CC       ?= gcc
EFI_LIBDIR   ?= /usr/lib
EFI_INC      ?= /usr/include/efi
# GNU_EFI_USE_MS_ABI: EFIAPI = ms_abi, so our own protocol tables (efi_mp.h) and gnu-efi's
# are called with the UEFI calling convention directly (no uefi_call_wrapper).
BOOT_CFLAGS  := $(HV_STD) -O2 -g -Wall -Wextra -Wno-unused-parameter -ffreestanding \
                -fno-stack-protector -fpic -fshort-wchar -mno-red-zone -maccumulate-outgoing-args \
                -DGNU_EFI_USE_MS_ABI -I$(EFI_INC) -I$(EFI_INC)/x86_64 -Iinclude -Iboot -Inet
# The nettest image (vmm.mk) needs no VT-x: its loader skips the check and powers off after.
BOOT_CFLAGS  += $(if $(filter nettest,$(HV_IMAGE)),-DHVT_LOADER_NETTEST)
BOOT_BUILD   := $(BUILD)/boot
BOOT_SRCS    := $(wildcard boot/*.c)
# SHA-256 and HMAC (the configuration's seal and hash) and the MTRR reader: the same code net/
# and vmm/ link into the hypervisor, built again with the loader's flags.
BOOT_OBJS    := $(patsubst %.c,$(BUILD)/%.o,$(BOOT_SRCS)) $(BOOT_BUILD)/sha256.o $(BOOT_BUILD)/mtrr.o
BOOT_EXTRA_OBJS ?=

$(BOOT_BUILD)/%.o: boot/%.c
	@mkdir -p $(dir $@)
	$(EFI_CC) $(BOOT_CFLAGS) -MMD -MP -c $< -o $@

# hv_launch.c reads the MTRRs with vmm/'s reader (mtrr.h).
$(BOOT_BUILD)/hv_launch.o: BOOT_CFLAGS += -Ivmm

$(BOOT_BUILD)/sha256.o: net/sha256.c
	@mkdir -p $(dir $@)
	$(EFI_CC) $(BOOT_CFLAGS) -MMD -MP -c $< -o $@

# The MTRRs' memory types (the direct map's page sizes, boot/dmap.h): the hypervisor's own reader.
$(BOOT_BUILD)/mtrr.o: vmm/mtrr.c
	@mkdir -p $(dir $@)
	$(EFI_CC) $(BOOT_CFLAGS) -Ivmm -Ivmm/include -MMD -MP -c $< -o $@

$(BOOT_BUILD)/hvtrace.so: $(BOOT_OBJS) $(BOOT_EXTRA_OBJS)
	ld -nostdlib -znocombreloc -shared -Bsymbolic -T $(EFI_LIBDIR)/elf_x86_64_efi.lds \
	  -L$(EFI_LIBDIR) $(EFI_LIBDIR)/crt0-efi-x86_64.o $(BOOT_OBJS) $(BOOT_EXTRA_OBJS) \
	  -o $@ -lefi -lgnuefi
	@# ld -shared accepts undefined symbols; in an EFI app they become calls to address 0.
	@if nm -u $@ | grep -q .; then echo "boot.mk: undefined symbols in $@:"; nm -u $@; rm -f $@; exit 1; fi

$(BUILD)/hvtrace.efi: $(BOOT_BUILD)/hvtrace.so
	objcopy -j .text -j .sdata -j .data -j .dynamic -j .dynsym -j .rel -j .rela -j .rel.* \
	  -j .rela.* -j .reloc --target efi-app-x86_64 --subsystem=10 $< $@

.PHONY: efi
efi: $(BUILD)/hvtrace.efi
all: efi

-include $(BOOT_OBJS:.o=.d)
