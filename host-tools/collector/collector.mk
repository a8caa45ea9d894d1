# collector.mk - host side of the dedicated-NIC stream: hvtrace-collector, the fake hypervisor
# used to test it, unit tests, fuzzers. Included from host-tools/host.mk.
#   make collector      build/host/hvtrace-collector (+ build/host/fake_hv)
#   make net-unit-test  unit tests + host integration tests: the collector's stream handling
#                       (test-collector.sh) and its trace file and hvt trace (test-trace-coll.sh);
#                       part of `make unit-test`
#   make fuzz-net       libFuzzer runs of the control and stream parsers (FUZZ_SECONDS each)
HOST_CC      ?= cc
HOST_BUILD   := $(BUILD)/host
NET_HOST_CFLAGS := $(HOST_STD) -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-format-truncation \
                   -DHVT_HOST -Iinclude -Inet -Ihost-tools/collector -Ihost-tools -Ihost-tools/tracefile $(TRACE_DIRS:%=-I%)
# The protocol code the hypervisor runs, compiled for the host (net_port.h).
NET_PORTABLE := net/sha256.c net/aead.c net/ctl.c net/net_config.c net/stream_core.c
# The collector writes trace.hvt through the host tools' chunk layer (the one hvt-import uses).
COLL_TRACE_SRCS := host-tools/collector/coll_trace.c host-tools/tracefile/trace_chunkw.c host-tools/tracefile/trace_scan.c
COLL_SRCS    := host-tools/collector/coll_main.c host-tools/collector/coll_parse.c \
                host-tools/collector/coll_store.c host-tools/collector/coll_verify.c \
                host-tools/collector/coll_sock.c host-tools/collector/coll_cmd.c \
                host-tools/collector/coll_link.c host-tools/collector/coll_peer.c \
                host-tools/collector/coll_hvstatus.c $(COLL_TRACE_SRCS)
COLL_HDRS    := $(wildcard host-tools/collector/*.h net/*.h) include/hvt_stream.h \
                include/hvt_trace_format.h host-tools/tracefile/trace_chunkw.h host-tools/tracefile/trace_scan.h
COLL_LIBS    := -lzstd -lz

COLL_NET := net/ctl.c net/sha256.c net/aead.c
$(HOST_BUILD)/hvtrace-collector: $(COLL_SRCS) $(COLL_NET) $(COLL_HDRS)
	@mkdir -p $(dir $@)
	$(HOST_CC) $(NET_HOST_CFLAGS) -o $@ $(COLL_SRCS) $(COLL_NET) $(COLL_LIBS)

# fake_hv also runs the tracer's control code (trace/trace_ctl.c) and replays debug-port logs.
# Its D engine is the hypervisor's own verifier and interpreter (trace/dvm/dif_*.c).
FAKE_HV_SRCS := tests/net/fake_hv.c tests/net/fake_hv_d.c $(NET_PORTABLE) trace/trace_ctl.c host-tools/tracefile/e9_lines.c \
                host-tools/tracefile/trace_scan.c $(wildcard trace/dvm/dif_*.c) trace/unwind/kunwind.c
$(HOST_BUILD)/fake_hv: $(FAKE_HV_SRCS) $(COLL_HDRS) trace/trace_ctl.h host-tools/tracefile/e9_lines.h tests/net/fake_hv_d.h \
                       trace/dvm/dif.h include/hvt_dif.h
	@mkdir -p $(dir $@)
	$(HOST_CC) $(NET_HOST_CFLAGS) -Itests/net -Ivmm/include -o $@ $(FAKE_HV_SRCS)

# A synthetic debug-port log (real chunk payloads from the host trace writer) for the tests.
$(HOST_BUILD)/gen_e9: tests/net/gen_e9.c host-tools/tracefile/trace_writer.c host-tools/tracefile/trace_chunkw.c trace/step/rec_enc.c trace/step/rec_enc.h \
                      host-tools/tracefile/trace_writer.h host-tools/tracefile/trace_chunkw.h include/hvt_trace_format.h
	@mkdir -p $(dir $@)
	$(HOST_CC) $(NET_HOST_CFLAGS) -o $@ tests/net/gen_e9.c host-tools/tracefile/trace_writer.c \
	  host-tools/tracefile/trace_chunkw.c trace/step/rec_enc.c -lzstd -lz

.PHONY: collector net-unit-test fuzz-net
collector: $(HOST_BUILD)/hvtrace-collector $(HOST_BUILD)/fake_hv
all: collector

# The unit tests' rules are beside them: net/tests/tests.mk (test_aead, test_net) and
# host-tools/collector/tests/tests.mk (test_trace_link).
include $(HOST_DIR)/collector/tests/tests.mk
net-unit-test: $(HOST_BUILD)/test_aead $(HOST_BUILD)/test_net $(HOST_BUILD)/test_e1000_models $(HOST_BUILD)/test_trace_link $(HOST_BUILD)/hvtrace-collector \
               $(HOST_BUILD)/fake_hv $(HOST_BUILD)/gen_e9 $(HOST_BUILD)/hvt $(HOST_BUILD)/hvt-import \
               $(HOST_BUILD)/hvt-check
	$(HOST_BUILD)/test_aead
	$(HOST_BUILD)/test_net
	$(HOST_BUILD)/test_e1000_models
	$(HOST_BUILD)/test_trace_link
	tests/net/test-collector.sh $(HOST_BUILD)
	tests/net/test-trace-coll.sh $(HOST_BUILD)
unit-test: net-unit-test test-coll-replay
# Replayed HELLOs (cross-boot and same-boot, live, idle and restarted collector): refused.
.PHONY: test-coll-replay
test-coll-replay: $(HOST_BUILD)/hvtrace-collector $(HOST_BUILD)/fake_hv
	tests/net/test-coll-replay.sh $(HOST_BUILD)

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -g -O1 -fsanitize=fuzzer,address,undefined -DHVT_HOST -Iinclude -Inet -Ihost-tools/collector
$(HOST_BUILD)/fuzz/fuzz_ctl: tests/net/fuzz/fuzz_ctl.c net/stream_core.c net/ctl.c net/sha256.c net/aead.c $(COLL_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/net/fuzz/fuzz_ctl.c net/stream_core.c net/ctl.c net/sha256.c net/aead.c
$(HOST_BUILD)/fuzz/fuzz_coll_parse: tests/net/fuzz/fuzz_coll_parse.c host-tools/collector/coll_parse.c net/ctl.c net/sha256.c net/aead.c $(COLL_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ tests/net/fuzz/fuzz_coll_parse.c host-tools/collector/coll_parse.c net/ctl.c net/sha256.c net/aead.c
FUZZ_TRACE_SRCS := tests/net/fuzz/fuzz_coll_trace.c $(COLL_TRACE_SRCS) host-tools/tracefile/trace_reader.c host-tools/util.c
$(HOST_BUILD)/fuzz/fuzz_coll_trace: $(FUZZ_TRACE_SRCS) $(COLL_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Ihost-tools -Ihost-tools/tracefile -o $@ $(FUZZ_TRACE_SRCS) -lzstd -lz
$(HOST_BUILD)/fuzz/seeds: $(HOST_BUILD)/fake_hv tests/net/fuzz/make-seeds.sh
	tests/net/fuzz/make-seeds.sh $(HOST_BUILD)

fuzz-net: $(HOST_BUILD)/fuzz/fuzz_ctl $(HOST_BUILD)/fuzz/fuzz_coll_parse $(HOST_BUILD)/fuzz/fuzz_coll_trace \
          $(HOST_BUILD)/fuzz/seeds
	tests/net/fuzz/run-fuzz.sh $(HOST_BUILD)/fuzz $(FUZZ_SECONDS)
