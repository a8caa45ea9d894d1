# vmm.mk - the freestanding hypervisor image: vmm/ (mechanism), trace/ (policy), hv/ (the
# image's composition); net/ (transport) is added by net/net.mk through HV_EXTRA_OBJS/LIBS.
#   make hv          build/hv/hvtrace-hv.bin
#   make hv-bare     build/bare/hvtrace.efi: the loader with an image of vmm/ alone
#   make hv-nettest  build/nettest/hvtrace.efi: vmm/'s services and net/ without VMX; the
#                    loader skips the VT-x check and powers off after the transport's selftest
# Layering: vmm/ is compiled with its own folder on the include path; every module above it
# (trace/, net/, hv/) sees vmm/ only through vmm/include/ (tests/layering checks it).
HV_CC      ?= gcc
NASM       ?= nasm
HV_GCC_INC := $(shell $(HV_CC) -print-file-name=include)
# No SSE/FPU anywhere in the hypervisor: the guest's FPU state is never saved or touched.
HV_CFLAGS  := $(HV_STD) -O2 -g -Wall -Wextra -Wno-unused-parameter -ffreestanding \
              -fno-stack-protector -fno-pic -fno-pie -mno-red-zone -mcmodel=kernel \
              -mgeneral-regs-only -fno-asynchronous-unwind-tables -fno-omit-frame-pointer \
              -fno-builtin -nostdinc -isystem $(HV_GCC_INC) -Iinclude -Ivmm/include
HV_BUILD   := $(BUILD)/hv
HV_GEN     := $(HV_BUILD)/gen
# Per-module include paths: vmm/ its internals; the layers above it vmm/include/ only.
HV_INC_vmm   := -Ivmm -Ivmm/lib
# trace/: the layer's root and its subsystems (step/, x86/, probe/, dvm/, unwind/), one include
# path each.
TRACE_DIRS   := trace trace/step trace/x86 trace/probe trace/dvm trace/unwind
HV_INC_trace := $(TRACE_DIRS:%=-I%) -Ihv
HV_INC_hv    := -Ihv $(TRACE_DIRS:%=-I%) -Inet
# HV_IMAGE=bare: vmm/ alone (no transport, no policy); HVT_NET=0: no transport.
HV_IMAGE   ?= full
ifeq ($(HV_IMAGE),bare)
HV_IMAGE_DEFS := -DHV_IMAGE_BARE
else ifeq ($(HV_IMAGE),nettest)
HV_IMAGE_DEFS := -DHV_IMAGE_NETTEST
else ifeq ($(HVT_NET),0)
HV_IMAGE_DEFS := -DHV_IMAGE_NO_NET
endif
# *_asm.c files are compiled with -S only, for their constants (vmm/include/hv_asm.h).
VMM_SRCS   := $(filter-out %_asm.c,$(wildcard vmm/*.c vmm/lib/*.c))
TRACE_SRCS := $(filter-out %_asm.c,$(wildcard $(TRACE_DIRS:%=%/*.c)))
HV_NO_POLICY := $(filter bare nettest,$(HV_IMAGE))
HV_SRCS    := $(VMM_SRCS) hv/hv_image.c $(if $(HV_NO_POLICY),,$(TRACE_SRCS))
HV_ASMS    := vmm/vmx_stub.asm $(if $(HV_NO_POLICY),,trace/step/step_fast.asm)
HV_OBJS    := $(patsubst %.c,$(HV_BUILD)/%.o,$(HV_SRCS)) $(patsubst %.asm,$(HV_BUILD)/%.o,$(HV_ASMS))
HV_EXTRA_OBJS ?=
HV_EXTRA_LIBS ?=
hv_mod = $(firstword $(subst /, ,$(1)))

$(HV_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(HV_CC) $(HV_CFLAGS) $(HV_INC_$(call hv_mod,$<)) $(HV_IMAGE_DEFS) -MMD -MP -c $< -o $@

# Assembly constants generated from C: NAME_asm.c -> NAME_asm.inc (tools/gen-asm-inc.sh).
$(HV_GEN)/%_asm.s: %_asm.c
	@mkdir -p $(dir $@)
	$(HV_CC) $(HV_CFLAGS) $(HV_INC_$(call hv_mod,$<)) -MMD -MP -MT $@ -S $< -o $@
$(HV_GEN)/%_asm.inc: $(HV_GEN)/%_asm.s tools/gen-asm-inc.sh
	bash tools/gen-asm-inc.sh $< $@
.SECONDARY: $(HV_GEN)/vmm/vmm_asm.s $(HV_GEN)/trace/step/step_fast_asm.s $(HV_GEN)/vmm/vmm_asm.inc $(HV_GEN)/trace/step/step_fast_asm.inc
HV_ASM_INC_vmm   := $(HV_GEN)/vmm/vmm_asm.inc
HV_ASM_INC_trace := $(HV_GEN)/trace/step/step_fast_asm.inc

$(HV_BUILD)/%.o: %.asm $(HV_GEN)/vmm/vmm_asm.inc $(HV_GEN)/trace/step/step_fast_asm.inc
	@mkdir -p $(dir $@)
	$(NASM) -f elf64 -g -I$(dir $(HV_ASM_INC_$(call hv_mod,$<))) -o $@ $<

$(HV_BUILD)/hvtrace-hv.elf: $(HV_OBJS) $(HV_EXTRA_OBJS) $(HV_EXTRA_LIBS) linker.ld
	$(HV_CC) -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-T,linker.ld -Wl,-z,max-page-size=4096 \
	  -o $@ $(HV_OBJS) $(HV_EXTRA_OBJS) $(HV_EXTRA_LIBS) -lgcc

$(HV_BUILD)/hvtrace-hv.bin: $(HV_BUILD)/hvtrace-hv.elf
	objcopy -O binary $< $@

.PHONY: hv hv-bare hv-nettest
hv: $(HV_BUILD)/hvtrace-hv.bin
all: hv
hv-bare:
	$(MAKE) BUILD=$(BUILD)/bare HV_IMAGE=bare HVT_NET=0 efi
hv-nettest:
	$(MAKE) BUILD=$(BUILD)/nettest HV_IMAGE=nettest efi

-include $(HV_OBJS:.o=.d) $(wildcard $(HV_GEN)/*/*.d $(HV_GEN)/*/*/*.d)
