# tests/fuzz/fuzz.mk - every libFuzzer target of the project, together:
#   make fuzz [FUZZ_SECONDS=N]  run every fuzzer for N seconds each, one after the other (the
#                               machine's cores are shared): fuzz-analyze, fuzz-net, fuzz-d,
#                               fuzz-config; corpora and findings under build/host/fuzz/
#   make test-fuzz-replay       part of the default test run: each fuzzer built once, every
#                               input of its regression corpus (tests/*/fuzz/regress/NAME/) and
#                               of its seed corpus run once (seconds); any crash fails
#   make fuzz-config            the configuration parsers: boot/cfg.c's cfg_parse (with the
#                               trace= value it keeps) and trace/trace_opts.c's trace_opts_parse;
#                               and trace/dcmd.c's mailbox (host requests + guest hypercalls)
# A fuzzer's finding (build/host/fuzz/crash-*, */crashes/) is fixed and then copied into its
# regress directory, so the replay keeps it fixed.
FUZZERS := fuzz_trace fuzz_ksym fuzz_btf fuzz_kimg fuzz_ctl fuzz_coll_parse fuzz_coll_trace \
           fuzz_dcompile fuzz_dverify fuzz_cfg fuzz_trace_opts fuzz_dcmd fuzz_lwip_rx fuzz_hypercall

CONFIG_FUZZ_FLAGS := -O1 -g $(HV_STD) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
                     -Iinclude -Iboot -Itrace -Ivmm -Ivmm/include
$(HOST_OUT)/fuzz/fuzz_cfg: tests/unit/fuzz/fuzz_cfg.c boot/cfg.c boot/cfg.h trace/trace_opts.c trace/trace_opts.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CONFIG_FUZZ_FLAGS) -o $@ tests/unit/fuzz/fuzz_cfg.c boot/cfg.c trace/trace_opts.c
$(HOST_OUT)/fuzz/fuzz_trace_opts: tests/unit/fuzz/fuzz_trace_opts.c trace/trace_opts.c trace/trace_opts.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CONFIG_FUZZ_FLAGS) -o $@ tests/unit/fuzz/fuzz_trace_opts.c trace/trace_opts.c

$(HOST_OUT)/fuzz/fuzz_dcmd: tests/unit/fuzz/fuzz_dcmd.c trace/dcmd.c trace/dcmd.h include/hvt_stream.h include/hvt_hypercall.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CONFIG_FUZZ_FLAGS) -o $@ tests/unit/fuzz/fuzz_dcmd.c

# ---- fuzz-hv: hypervisor code built for the host over tests/fuzz/host_hv/ (see its hv_api.h) ----
# lwIP from Debian's source, built again by net/build-lwip.sh with the sanitizers (and
# LWIP_TESTMODE: only exposes the timeout list, which the harness empties between inputs).
FUZZ_HV_DIR   := $(HOST_OUT)/fuzz/hv
FUZZ_HV_FLAGS := -O1 -g $(HV_STD) -fsanitize=address,undefined -fno-sanitize-recover=undefined \
                 -DLWIP_TESTMODE=1 -include tests/fuzz/host_hv/hv_api.h -Ivmm/include -Iinclude -Ihv
FUZZ_LWIP_INC := -Inet -Inet/lwip -I$(FUZZ_HV_DIR)/lwip/src/src/include
$(FUZZ_HV_DIR)/lwip/liblwip.a: net/build-lwip.sh net/lwip/lwipopts.h net/lwip/arch/cc.h tests/fuzz/host_hv/hv_api.h
	@mkdir -p $(dir $@)
	HV_CC="$(FUZZ_CC)" HV_CFLAGS="$(FUZZ_HV_FLAGS) -fsanitize=fuzzer-no-link" net/build-lwip.sh $(@D)
# e1000.c without comparison tracing: the fake NIC's EEPROM never answers and the driver's
# 3 x 100000-read wait would otherwise cost most of each run.
$(FUZZ_HV_DIR)/e1000.o: net/e1000.c net/e1000.h net/e1000_regs.h tests/fuzz/host_hv/hv_api.h $(FUZZ_HV_DIR)/lwip/liblwip.a
	$(FUZZ_CC) $(FUZZ_HV_FLAGS) $(FUZZ_LWIP_INC) -fsanitize=fuzzer-no-link -fno-sanitize-coverage=trace-cmp -c -o $@ $<
FUZZ_LWIP_RX_SRCS := tests/net/fuzz/fuzz_lwip_rx.c net/net.c net/e1000_netif.c net/lwip_port.c net/net_console.c \
                     net/stream_core.c net/ctl.c net/aead.c net/sha256.c net/pci.c net/net_config.c
$(HOST_OUT)/fuzz/fuzz_lwip_rx: $(FUZZ_LWIP_RX_SRCS) $(FUZZ_HV_DIR)/e1000.o $(FUZZ_HV_DIR)/lwip/liblwip.a $(wildcard net/*.h) include/hvt_stream.h
	$(FUZZ_CC) $(FUZZ_HV_FLAGS) $(FUZZ_LWIP_INC) -fsanitize=fuzzer -o $@ $(FUZZ_LWIP_RX_SRCS) $(FUZZ_HV_DIR)/e1000.o $(FUZZ_HV_DIR)/lwip/liblwip.a
$(HOST_OUT)/fuzz/seeds-fuzz_lwip_rx: tests/net/fuzz/make-lwip-seeds.py
	rm -rf $@ && python3 $< $@
# fuzz_hypercall: vmx_exit.c and hv_guest.c are #included by the harness (see its header).
$(FUZZ_HV_DIR)/inc/hv_guest.h: vmm/include/hv_guest.h tests/fuzz/host_hv/gen-hv-guest.sh
	bash tests/fuzz/host_hv/gen-hv-guest.sh $@
FUZZ_HC_SRCS := tests/unit/fuzz/fuzz_hypercall.c vmm/exit_reg.c vmm/gmem.c $(filter-out trace/step_fast_asm.c,$(wildcard trace/*.c))
$(HOST_OUT)/fuzz/fuzz_hypercall: $(FUZZ_HC_SRCS) $(FUZZ_HV_DIR)/inc/hv_guest.h vmm/vmx_exit.c vmm/hv_guest.c \
                                 $(wildcard vmm/*.h vmm/include/*.h trace/*.h) tests/fuzz/host_hv/hv_api.h
	$(FUZZ_CC) $(FUZZ_HV_FLAGS) -fsanitize=fuzzer -include $(FUZZ_HV_DIR)/inc/hv_guest.h -Ivmm -Itrace \
	  -Wno-address-of-packed-member -Wno-atomic-alignment \
	  -o $@ $(FUZZ_HC_SRCS) -latomic
# Its seeds load D images: the D tests' programs compiled by the host's compiler (hc_dimages).
$(HOST_OUT)/fuzz/hc_dimages: tests/unit/fuzz/hc_dimages.c $(D_COMPILER_SRC) $(DFUZZ_VM) $(D_COMPILER_HDRS) trace/dif.h
	$(HOST_CC) -O1 -g $(HOST_STD) -D_GNU_SOURCE $(HOST_INC) -Ivmm/include $< $(DFUZZ_VM) \
	  $(addprefix $(HOST_DIR)/,$(filter-out tracegen.c view.c,$(HOST_LIB_SRC))) $(HOST_LIBS) -o $@
FUZZ_HC_D := tests/probe/test-probes-net.sh tests/d/test-d-coll.sh
$(HOST_OUT)/fuzz/seeds-fuzz_hypercall: tests/unit/fuzz/make-hypercall-seeds.py $(HOST_OUT)/fuzz/hc_dimages $(FUZZ_HC_D)
	rm -rf $@ $@.d && python3 $< --extract-d $@.d $(FUZZ_HC_D) && mkdir -p $@.d/img && \
	$(HOST_OUT)/fuzz/hc_dimages $@.d/img $@.d/*.d && python3 $< $@ $@.d/img/*.dif
FUZZ_HV := fuzz_lwip_rx fuzz_hypercall
fuzz-hv: $(FUZZ_HV:%=$(HOST_OUT)/fuzz/%) $(FUZZ_HV:%=$(HOST_OUT)/fuzz/seeds-%)
	bash tests/fuzz/fuzz-run.sh $(HOST_OUT)/fuzz $(FUZZ_SECONDS) $(FUZZ_HV)

.PHONY: fuzz fuzz-config fuzz-hv test-fuzz-replay
fuzz-config: $(HOST_OUT)/fuzz/fuzz_cfg $(HOST_OUT)/fuzz/fuzz_trace_opts $(HOST_OUT)/fuzz/fuzz_dcmd
	bash tests/fuzz/fuzz-run.sh $(HOST_OUT)/fuzz $(FUZZ_SECONDS) fuzz_cfg fuzz_trace_opts fuzz_dcmd

# Each family in turn; a failing one does not keep the others from running.
fuzz:
	@rc=0; for t in fuzz-analyze fuzz-net fuzz-d fuzz-config fuzz-hv; do \
	  echo "== $$t ($(FUZZ_SECONDS) s per fuzzer)"; $(MAKE) --no-print-directory $$t FUZZ_SECONDS=$(FUZZ_SECONDS) || rc=1; \
	done; exit $$rc

test-fuzz-replay: $(FUZZERS:%=$(HOST_OUT)/fuzz/%) $(HOST_OUT)/fuzz/seeds $(FUZZ_HV:%=$(HOST_OUT)/fuzz/seeds-%)
	bash tests/fuzz/replay.sh $(HOST_OUT)/fuzz $(FUZZERS)
test-all: test-fuzz-replay
