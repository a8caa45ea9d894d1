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
           fuzz_dcompile fuzz_dverify fuzz_cfg fuzz_trace_opts fuzz_dcmd

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

.PHONY: fuzz fuzz-config test-fuzz-replay
fuzz-config: $(HOST_OUT)/fuzz/fuzz_cfg $(HOST_OUT)/fuzz/fuzz_trace_opts $(HOST_OUT)/fuzz/fuzz_dcmd
	bash tests/fuzz/fuzz-run.sh $(HOST_OUT)/fuzz $(FUZZ_SECONDS) fuzz_cfg fuzz_trace_opts fuzz_dcmd

# Each family in turn; a failing one does not keep the others from running.
fuzz:
	@rc=0; for t in fuzz-analyze fuzz-net fuzz-d fuzz-config; do \
	  echo "== $$t ($(FUZZ_SECONDS) s per fuzzer)"; $(MAKE) --no-print-directory $$t FUZZ_SECONDS=$(FUZZ_SECONDS) || rc=1; \
	done; exit $$rc

test-fuzz-replay: $(FUZZERS:%=$(HOST_OUT)/fuzz/%) $(HOST_OUT)/fuzz/seeds
	bash tests/fuzz/replay.sh $(HOST_OUT)/fuzz $(FUZZERS)
test-all: test-fuzz-replay
