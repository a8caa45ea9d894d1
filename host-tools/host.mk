# host-tools/host.mk: the host tools (hvt, hvt-import, hvt-check, the collector). Included by the
# top Makefile.
#   make host-tools      build/host/hvt
#   make test-analyze    real-kernel checks (fetches the pinned kernels on first use)
#   make test-exports    hvt export's files read back by babeltrace2, speedscope and TracerBench
#                        (tests/analyze/test-exports.sh; the npm readers are cached, pinned)
#   make bench-analyze   decode+symbolize+nest rate vs capstone (last line: recs_per_s=, capstone_per_s=)
#   make fuzz-analyze    libFuzzer runs of the trace reader and the kallsyms/BTF/image parsers
#   make unit-test       includes test-host-unit (trace writer/reader round trips, no kernel needed)
HOST_DIR     := host-tools
HOST_OUT     := $(BUILD)/host
HOST_CC      ?= cc
# One C standard for every host-side build (host tools, collector, their tests and fuzzers).
HOST_STD     := -std=gnu11
HOST_CFLAGS  ?= -O2 -g $(HOST_STD) -D_GNU_SOURCE -Wall -Wextra -Wno-format-truncation
# One folder per job (README, "Layout"); a header is included by its name alone.
HOST_SUBDIRS := hvt kernel tracefile analyze collector probes stacks d d/compile d/consume
HOST_INC     := -I$(HOST_DIR) $(HOST_SUBDIRS:%=-I$(HOST_DIR)/%) -Iinclude $(TRACE_DIRS:%=-I%)
HOST_LIBS    := -lcapstone -llz4 -lzstd -llzma -lz
# libhvthost: everything but the hvt command's own files (hvt/).
HOST_LIB_SRC := util.c \
                kernel/decompress.c kernel/kimg.c kernel/ksym.c kernel/btf.c kernel/kinfo.c \
                tracefile/trace_chunkw.c tracefile/trace_writer.c tracefile/trace_reader.c tracefile/e9_lines.c \
                analyze/disasm.c analyze/nest.c analyze/view.c \
                analyze/export_json.c analyze/export_ctf.c analyze/export_speedscope.c \
                collector/client.c collector/follow.c \
                probes/probe_list.c probes/kmod.c probes/kmod_sdt.c probes/kmod_btf.c probes/kbuiltin.c probes/io_prov.c probes/hvt_probes.c probes/probe_live.c probes/sdt.c probes/stable.c \
                $(patsubst $(HOST_DIR)/%,%,$(wildcard $(HOST_DIR)/d/*.c $(HOST_DIR)/d/compile/*.c $(HOST_DIR)/d/consume/*.c)) \
                ../trace/x86/x86_len.c ../trace/step/rec_enc.c stacks/orc.c stacks/flame.c
HOST_HDRS    := $(wildcard $(HOST_DIR)/*.h $(HOST_SUBDIRS:%=$(HOST_DIR)/%/*.h)) include/hvt_trace_format.h include/hvt_stream.h include/hvt_dif.h \
                include/hvt_probe.h include/hvt_hypercall.h trace/step/rec_enc.h
HOST_OBJS    := $(HOST_LIB_SRC:%.c=$(HOST_OUT)/obj/%.o)
# The same library for the fuzzers, compiled once with libFuzzer's coverage, ASan and UBSan:
# every fuzzer of it links these objects (analyze's four, the D compiler's).
FUZZ_LIB_FLAGS := -O1 -g $(HOST_STD) -D_GNU_SOURCE -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB_OBJS  := $(patsubst %.c,$(HOST_OUT)/fuzzobj/lib/%.o,$(filter-out analyze/view.c analyze/export_%,$(HOST_LIB_SRC)))
HOST_LIB     := $(HOST_OUT)/libhvthost.a
HVT          := $(HOST_OUT)/hvt
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 120
FUZZ_TARGETS := trace ksym btf kimg
ANALYZE_KERNELS := tests/analyze/kernels.txt

.PHONY: host-tools test-analyze test-exports bench-analyze fuzz-analyze test-host-unit
all: host-tools
unit-test: test-host-unit
host-tools: $(HVT)

$(HOST_OUT)/obj/%.o: $(HOST_DIR)/%.c $(HOST_HDRS)
	@mkdir -p $(dir $@)
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -c $< -o $@

$(HOST_LIB): $(HOST_OBJS)
	rm -f $@ && ar rcs $@ $^

# hvt options links the hypervisor's own option parser (one definition of the syntax).
# hvt-import (debug-port log -> trace file) and hvt-check (continuity of a trace).
HVT_IMPORT   := $(HOST_OUT)/hvt-import
HVT_CHECK    := $(HOST_OUT)/hvt-check
$(HVT_IMPORT): $(HOST_DIR)/analyze/hvt_import.c $(HOST_LIB) $(HOST_HDRS)
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) $< $(HOST_LIB) $(HOST_LIBS) -o $@
$(HVT_CHECK): $(HOST_DIR)/analyze/hvt_check.c $(HOST_LIB) $(HOST_HDRS)
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) $< $(HOST_LIB) $(HOST_LIBS) -o $@
host-tools: $(HVT_IMPORT) $(HVT_CHECK)

# The hvt command: its table of subcommands (hvt/main.c), one file per subcommand, and the test
# trace generator (hvt gen: a test tool, kept out of libhvthost).
# hvt cfg seals hvtrace.cfg with the loader's own code (boot/cfg_seal.c, net/sha256.c).
HVT_SRCS     := $(wildcard $(HOST_DIR)/hvt/*.c) trace/trace_opts.c
HVT_SEAL_OBJS := $(HOST_OUT)/obj/boot/cfg_seal.o $(HOST_OUT)/obj/boot/sha256.o
$(HOST_OUT)/obj/boot/cfg_seal.o: boot/cfg_seal.c boot/cfg_seal.h boot/cfg.h net/sha256.h
	@mkdir -p $(dir $@)
	$(HOST_CC) $(HOST_CFLAGS) -Iboot -Inet -c $< -o $@
$(HOST_OUT)/obj/boot/sha256.o: net/sha256.c net/sha256.h
	@mkdir -p $(dir $@)
	$(HOST_CC) $(HOST_CFLAGS) -Inet -c $< -o $@
# hvt check-host judges with the hypervisor's own rules: vmm/vmx_caps.c (what VMX must offer),
# vmm/acpi_dmar.c (the DMAR parser) and net/e1000_models.c (the NICs the driver takes), linked
# in, not copied.
CHECK_HOST_DIR   := $(HOST_DIR)/checkhost
CHECK_HOST_FLAGS := $(HOST_CFLAGS) -DHVT_HOST -I$(CHECK_HOST_DIR) -Ivmm -Ivmm/include -Inet -Iinclude
CHECK_HOST_OBJS  := $(addprefix $(HOST_OUT)/obj/checkhost/,check_host.o host_facts.o vmx_caps.o acpi_dmar.o \
                      e1000_models.o)
CHECK_HOST_DEPS  := $(wildcard $(CHECK_HOST_DIR)/*.h) vmm/vmx_caps.h vmm/include/vmx_arch.h vmm/include/x86_arch.h \
                    vmm/acpi_dmar.h vmm/le_bytes.h \
                    net/e1000_models.h net/e1000_regs.h include/hvt_bootinfo.h
$(HOST_OUT)/obj/checkhost/check_host.o: $(CHECK_HOST_DIR)/check_host.c $(CHECK_HOST_DEPS)
$(HOST_OUT)/obj/checkhost/host_facts.o: $(CHECK_HOST_DIR)/host_facts.c $(CHECK_HOST_DEPS)
$(HOST_OUT)/obj/checkhost/vmx_caps.o: vmm/vmx_caps.c $(CHECK_HOST_DEPS)
$(HOST_OUT)/obj/checkhost/acpi_dmar.o: vmm/acpi_dmar.c $(CHECK_HOST_DEPS)
$(HOST_OUT)/obj/checkhost/e1000_models.o: net/e1000_models.c $(CHECK_HOST_DEPS)
$(CHECK_HOST_OBJS):
	@mkdir -p $(dir $@)
	$(HOST_CC) $(CHECK_HOST_FLAGS) -c $< -o $@
$(HVT): $(HVT_SRCS) $(HVT_SEAL_OBJS) $(CHECK_HOST_OBJS) trace/trace_opts.h boot/cfg_seal.h $(HOST_LIB) $(HOST_HDRS)
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) $(HVT_SRCS) $(HVT_SEAL_OBJS) $(CHECK_HOST_OBJS) $(HOST_LIB) $(HOST_LIBS) -o $@

# hvt check-host on the recorded machines (host-tools/checkhost/tests), against the output
# checked in beside each, plus red cases made from them.
.PHONY: test-check-host
test-check-host: $(HVT)
	bash $(CHECK_HOST_DIR)/tests/test-check-host.sh $(HVT)

# The host tools' unit tests, each beside what it tests (its folder's tests/tests.mk), all run
# by test-host-unit; tests/lib/run-units.sh prints their summaries and one total.
include $(HOST_DIR)/tracefile/tests/tests.mk $(HOST_DIR)/analyze/tests/tests.mk $(HOST_DIR)/stacks/tests/tests.mk \
        trace/unwind/tests/tests.mk
# The D compiler's and consumer's unit tests (make test-d-unit test-dconsume-unit).
include $(HOST_DIR)/d/tests/tests.mk
# The static tracepoint reader on the pinned kernel (make test-sdt).
include $(HOST_DIR)/probes/tests/tests.mk
test-host-unit: $(HOST_OUT)/unit_trace $(HOST_OUT)/unit_nest $(HOST_OUT)/unit_export $(HOST_OUT)/unit_stacks $(HOST_OUT)/unit_agent $(HOST_OUT)/test_kunwind
	HVT_STACKS_KERNELS='$(STACKS_KERNELS)' bash tests/lib/run-units.sh $^

test-analyze: $(HVT)
	bash tests/analyze/test-analyze.sh $(HVT)

test-exports: $(HVT)
	bash tests/analyze/test-exports.sh $(HVT)

bench-analyze: $(HVT)
	bash bench/record.sh analyze bash tests/analyze/bench-analyze.sh $(HVT)

# libFuzzer + ASan/UBSan builds of each parser; corpora and findings under build/host/fuzz/.
$(HOST_OUT)/fuzzobj/lib/%.o: $(HOST_DIR)/%.c $(HOST_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_LIB_FLAGS) -fsanitize=fuzzer-no-link $(HOST_INC) -c $< -o $@
$(HOST_OUT)/fuzz/fuzz_%: tests/analyze/fuzz/fuzz_%.c $(FUZZ_LIB_OBJS) $(HOST_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_LIB_FLAGS) -fsanitize=fuzzer $(HOST_INC) $< $(FUZZ_LIB_OBJS) $(HOST_LIBS) -o $@

fuzz-analyze: $(FUZZ_TARGETS:%=$(HOST_OUT)/fuzz/fuzz_%)
	bash tests/analyze/fuzz-analyze.sh $(HOST_OUT)/fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# The collector and its tests: host tools like the others, whatever HVT_NET says (HVT_NET only
# leaves the NIC out of the hypervisor).
include $(HOST_DIR)/collector/collector.mk
