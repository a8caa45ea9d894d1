# vmm.mk - the freestanding hypervisor image (vmm/ mechanism + trace/ policy + net/).
# Modules included later append objects to HV_EXTRA_OBJS and archives to HV_EXTRA_LIBS.
HV_CC      ?= gcc
NASM       ?= nasm
HV_GCC_INC := $(shell $(HV_CC) -print-file-name=include)
# No SSE/FPU anywhere in the hypervisor: the guest's FPU state is never saved or touched.
HV_CFLAGS  := -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -ffreestanding \
              -fno-stack-protector -fno-pic -fno-pie -mno-red-zone -mcmodel=kernel \
              -mgeneral-regs-only -fno-asynchronous-unwind-tables -fno-omit-frame-pointer \
              -fno-builtin -nostdinc -isystem $(HV_GCC_INC) -Iinclude -Ivmm -Ivmm/lib
HV_BUILD   := $(BUILD)/hv
HV_SRCS    := $(wildcard vmm/*.c vmm/lib/*.c trace/*.c)
HV_ASMS    := $(wildcard vmm/*.asm trace/*.asm)
HV_OBJS    := $(patsubst %.c,$(HV_BUILD)/%.o,$(HV_SRCS)) $(patsubst %.asm,$(HV_BUILD)/%.o,$(HV_ASMS))
HV_EXTRA_OBJS ?=
HV_EXTRA_LIBS ?=

$(HV_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(HV_CC) $(HV_CFLAGS) -MMD -MP -c $< -o $@

$(HV_BUILD)/%.o: %.asm
	@mkdir -p $(dir $@)
	$(NASM) -f elf64 -g -o $@ $<

$(HV_BUILD)/hvtrace-hv.elf: $(HV_OBJS) $(HV_EXTRA_OBJS) $(HV_EXTRA_LIBS) linker.ld
	$(HV_CC) -nostdlib -static -no-pie -Wl,--build-id=none -Wl,-T,linker.ld -Wl,-z,max-page-size=4096 \
	  -o $@ $(HV_OBJS) $(HV_EXTRA_OBJS) $(HV_EXTRA_LIBS) -lgcc

$(HV_BUILD)/hvtrace-hv.bin: $(HV_BUILD)/hvtrace-hv.elf
	objcopy -O binary $< $@

.PHONY: hv
hv: $(HV_BUILD)/hvtrace-hv.bin
all: hv

-include $(HV_OBJS:.o=.d)
