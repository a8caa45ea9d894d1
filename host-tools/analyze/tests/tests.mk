# host-tools/analyze/tests/tests.mk - unit test of the call nesting (nest.c), linked against
# libhvthost like hvt (host-tools/host.mk; `make test-host-unit`).
# unit_nest: nest.h's rules on hand-made instruction streams (no kernel needed).
$(HOST_OUT)/unit_nest: $(HOST_DIR)/analyze/tests/unit_nest.c $(HOST_LIB) $(HOST_HDRS) tests/lib/check.h
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -Itests/lib $< $(HOST_LIB) $(HOST_LIBS) -o $@
# unit_export: the exports' encoders (JSON strings, speedscope's file) on hand-made input.
$(HOST_OUT)/unit_export: $(HOST_DIR)/analyze/tests/unit_export.c $(HOST_LIB) $(HOST_HDRS) tests/lib/check.h
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -Itests/lib $< $(HOST_LIB) $(HOST_LIBS) -o $@
# test-analyze-modes: hvt-check and `hvt analyze` on one small trace of real code written in
# every record mode (mode_trace: FULL, FLOW, REGS): same instructions, same continuity and
# nesting, registers only where the mode carries them (test-modes.sh).
$(HOST_OUT)/mode_trace: $(HOST_DIR)/analyze/tests/mode_trace.c $(HOST_LIB) $(HOST_HDRS)
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) $< $(HOST_LIB) $(HOST_LIBS) -o $@
.PHONY: test-analyze-modes
test-analyze-modes: $(HOST_OUT)/mode_trace $(HVT) $(HVT_CHECK)
	bash $(HOST_DIR)/analyze/tests/test-modes.sh $(HOST_OUT)
