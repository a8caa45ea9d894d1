# net.mk - the dedicated NIC, hypervisor side: e1000 driver, lwIP (built at build time
# from Debian's lwip source package, never copied into the repo), the stream protocol core.
# Objects go to $(HV_BUILD)/net/ and are linked through HV_EXTRA_OBJS / HV_EXTRA_LIBS.
# The host side (collector, fake hypervisor, tests, fuzzers) is host-tools/collector/collector.mk,
# included by host-tools/host.mk: host tools are built the same whatever HVT_NET says.
#   make net-hv      compile net/ and lwIP with the hypervisor's flags (no core needed)
#   make test-net    Bochs end-to-end test (needs the booting hypervisor): tests/net/test-net.sh
#   make test-net-qemu  QEMU TCG, no VT-x: the nettest image (vmm.mk, make hv-nettest) drives
#                    QEMU's e1000e (82574L) and streams to the collector, link down and up
#                    midway: tests/net/test-net-qemu.sh (NIC=e1000 NIC_MODEL=82540EM for the 8254x)
#   make test-net-qemu-igb  the same against QEMU's igb (82576), in a QEMU built by
#                    tests/platform/build-qemu-igb.sh (tens of minutes once; not in tests/TESTS)
#   make bench-net   throughput benchmarks: bench/net/bench-net.sh
NET_HV_BUILD := $(HV_BUILD)/net
LWIP_BUILD   := $(HV_BUILD)/lwip
LWIP_LIB     := $(LWIP_BUILD)/liblwip.a
# lwIP's headers through a stable link to the cached source (made by the lwIP rule)
LWIP_INC     := -Inet/lwip -Inet/lwip/libc -I$(LWIP_BUILD)/src/src/include
NET_HV_SRCS  := $(wildcard net/*.c)
NET_HV_OBJS  := $(patsubst net/%.c,$(NET_HV_BUILD)/%.o,$(NET_HV_SRCS))

$(LWIP_LIB): net/build-lwip.sh net/lwip/lwipopts.h net/lwip/arch/cc.h net/net.mk
	@mkdir -p $(LWIP_BUILD)
	HV_CC="$(HV_CC)" HV_CFLAGS="$(HV_CFLAGS)" net/build-lwip.sh $(LWIP_BUILD)

$(NET_HV_BUILD)/%.o: net/%.c | $(LWIP_LIB)
	@mkdir -p $(dir $@)
	$(HV_CC) $(HV_CFLAGS) -Inet -Ihv $(LWIP_INC) -MMD -MP -c $< -o $@

HV_EXTRA_OBJS += $(NET_HV_OBJS)
HV_EXTRA_LIBS += $(LWIP_LIB)
# vmm.mk's link rule was read before this file: add our inputs to its prerequisites here.
$(HV_BUILD)/hvtrace-hv.elf: $(NET_HV_OBJS) $(LWIP_LIB)

.PHONY: net-hv test-net test-net-qemu test-net-qemu-igb bench-net
net-hv: $(NET_HV_OBJS) $(LWIP_LIB)

test-net: collector hv
	BUILD=$(BUILD) tests/net/test-net.sh

test-net-qemu:
	BUILD=$(BUILD) tests/net/test-net-qemu.sh

test-net-qemu-igb:
	q=$$(bash tests/platform/build-qemu-igb.sh) && \
	  BUILD=$(BUILD) NIC=igb NIC_MODEL=82576 QEMU="$$q" tests/net/test-net-qemu.sh

bench-net: collector hv
	bash bench/record.sh net bash bench/net/bench-net.sh

-include $(NET_HV_OBJS:.o=.d)
