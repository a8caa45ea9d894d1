# host-tools/tracefile/tests/tests.mk - unit test of the trace file layer, linked against
# libhvthost like the tools that use it (host-tools/host.mk; `make test-host-unit`).
# unit_trace: round trips through trace_writer.c and trace_reader.c, seeking, a truncated and
# damaged copies (no kernel needed).
$(HOST_OUT)/unit_trace: $(HOST_DIR)/tracefile/tests/unit_trace.c $(HOST_LIB) $(HOST_HDRS) tests/lib/check.h
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -Itests/lib $< $(HOST_LIB) $(HOST_LIBS) -o $@
