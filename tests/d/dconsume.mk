# tests/d/dconsume.mk - the D consumer's unit test: printf() conversions, records, -q/-F, errors,
# drops, malformed records, aggregations (no compiler, no guest, no VM). Needs host.mk's
# HOST_CC, HOST_CFLAGS, HOST_INC and HOST_OUT.
#   make test-dconsume-unit    build/host/unit_dconsume, run
DCONSUME_SRC   := $(addprefix host-tools/d/consume/,d_format.c d_agg.c d_aggview.c d_aggprint.c d_consume.c d_records.c d_print.c) \
                  host-tools/util.c
DCONSUME_HDRS  := $(addprefix host-tools/d/consume/,d_format.h d_agg.h d_agg_priv.h d_consume.h d_consume_priv.h) host-tools/d/dprog.h \
                  include/hvt_dif.h include/hvt_probe.h
DCONSUME_TESTS := tests/d/unit_dconsume.c tests/d/unit_dconsume_agg.c

$(HOST_OUT)/unit_dconsume: $(DCONSUME_TESTS) tests/d/unit_dconsume.h $(DCONSUME_SRC) $(DCONSUME_HDRS)
	@mkdir -p $(dir $@)
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -Itests/lib $(DCONSUME_TESTS) $(DCONSUME_SRC) -o $@

.PHONY: test-dconsume-unit
test-dconsume-unit: $(HOST_OUT)/unit_dconsume
	$(HOST_OUT)/unit_dconsume
