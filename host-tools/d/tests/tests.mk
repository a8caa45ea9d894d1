# host-tools/d/tests/tests.mk - unit tests of the D compiler (host-tools/d/compile/) and of the
# D consumer (host-tools/d/consume/): no guest, no VM. Included by host-tools/host.mk (needs its
# HOST_CC, HOST_CFLAGS, HOST_INC, HOST_LIB, HOST_LIBS and HOST_OUT); the source lists below are
# also what tests/d/d_tests.mk's and tests/fuzz/fuzz.mk's D fuzzers link.
#   make test-d-unit          build/host/unit_d, run
#   make test-dconsume-unit   build/host/unit_dconsume, run
#   make test-predict-unit    build/host/unit_predict, run
D_COMPILER_SRC  := $(addprefix host-tools/d/compile/,d_compile.c util.c d_lex.c d_parse.c d_parse_top.c d_type.c d_sema.c d_sema_act.c \
                     d_pfcheck.c d_cg.c d_cg_stmt.c d_image.c d_dump.c d_resolve.c d_xlate.c d_stable.c)
D_COMPILER_HDRS := $(addprefix host-tools/d/compile/,d_compile.h d_int.h) host-tools/d/dprog.h include/hvt_dif.h include/hvt_probe.h

# unit_d: the exact code of small programs, error messages with line:col and caret, the image
# layout, aggregations, probe resolution, and BTF member access against the pinned 6.1 cloud
# kernel when it is in the cache (SKIP otherwise). Every image it compiles also goes through the
# hypervisor's verifier (host build), so the compiler cannot emit what the hypervisor refuses.
D_VERIFIER_SRC  := trace/unwind/kunwind.c $(addprefix trace/dvm/,dif_verify.c dif_vm.c dif_lean.c dif_str.c dif_state.c dif_agg.c dif_dyn.c dif_spec.c dif_budget.c)

$(HOST_OUT)/unit_d: host-tools/d/tests/unit_d.c host-tools/d/tests/desc_fields.h $(D_COMPILER_SRC) $(D_COMPILER_HDRS) $(D_VERIFIER_SRC) trace/dvm/dif.h trace/dvm/dif_impl.h trace/unwind/kunwind.h \
                    $(HOST_LIB) $(HOST_HDRS) tests/lib/check.h
	@mkdir -p $(dir $@)
	$(HOST_CC) $(HOST_CFLAGS) -Wno-unused-parameter $(HOST_INC) -Itests/lib -Ivmm -Ivmm/include -DD_WITH_VERIFIER $< \
	  $(D_COMPILER_SRC) $(D_VERIFIER_SRC) $(HOST_LIB) $(HOST_LIBS) -lpthread -o $@

# unit_dconsume: printf() conversions, records, -q/-F, errors, drops, malformed records
# (unit_dconsume.c) and aggregations (unit_dconsume_agg.c), on hand-made programs and records
# (no compiler).
DCONSUME_SRC   := $(addprefix host-tools/d/consume/,d_format.c d_agg.c d_aggview.c d_aggprint.c d_consume.c d_records.c d_print.c) \
                  host-tools/util.c
DCONSUME_HDRS  := $(addprefix host-tools/d/consume/,d_format.h d_agg.h d_agg_priv.h d_consume.h d_consume_priv.h) host-tools/d/dprog.h \
                  include/hvt_dif.h include/hvt_probe.h
DCONSUME_TESTS := host-tools/d/tests/unit_dconsume.c host-tools/d/tests/unit_dconsume_agg.c

$(HOST_OUT)/unit_dconsume: $(DCONSUME_TESTS) host-tools/d/tests/unit_dconsume.h $(DCONSUME_SRC) $(DCONSUME_HDRS) tests/lib/check.h
	@mkdir -p $(dir $@)
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -Itests/lib $(DCONSUME_TESTS) $(DCONSUME_SRC) -o $@

# unit_predict: the probe effect's model (host-tools/d/d_predict.c, hvt -e's prediction): the
# calibration table, a firing's counts of compiled programs, prices by phase, the lean path
# told apart as the hypervisor tells it (its loader, host build, beside the model), the keys'
# kinds and the counting run's mix, the counting run's rate and the slowdown.
$(HOST_OUT)/unit_predict: host-tools/d/tests/unit_predict.c host-tools/d/tests/desc_fields.h $(D_COMPILER_SRC) $(D_COMPILER_HDRS) host-tools/d/d_predict.h \
                          $(D_VERIFIER_SRC) trace/dvm/dif.h trace/dvm/dif_impl.h $(HOST_LIB) $(HOST_HDRS) tests/lib/check.h
	@mkdir -p $(dir $@)
	$(HOST_CC) $(HOST_CFLAGS) -Wno-unused-parameter $(HOST_INC) -Itests/lib -Ivmm -Ivmm/include $< $(D_COMPILER_SRC) \
	  $(D_VERIFIER_SRC) $(HOST_LIB) $(HOST_LIBS) -lpthread -lm -o $@

.PHONY: test-d-unit test-dconsume-unit test-predict-unit
test-d-unit: $(HOST_OUT)/unit_d
	$(HOST_OUT)/unit_d
test-dconsume-unit: $(HOST_OUT)/unit_dconsume
	$(HOST_OUT)/unit_dconsume
test-predict-unit: $(HOST_OUT)/unit_predict
	$(HOST_OUT)/unit_predict
unit-test: test-d-unit test-dconsume-unit test-predict-unit
