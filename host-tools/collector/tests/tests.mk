# host-tools/collector/tests/tests.mk - unit tests of the collector's side of the link, run by
# `make net-unit-test` (host-tools/collector/collector.mk, which includes this file).
# test_trace_link: the pieces a trace crosses the link with: the tracer's control
# (trace/trace_ctl.c, host build), the payload scanner and the chunk layer the collector writes
# trace.hvt through (host-tools/tracefile/); under ASan/UBSan, since the scanner reads what the
# wire carries.
TRACE_LINK_SRCS := host-tools/collector/tests/test_trace_link.c trace/trace_ctl.c host-tools/tracefile/trace_scan.c \
                   host-tools/tracefile/trace_chunkw.c host-tools/tracefile/trace_reader.c host-tools/util.c
$(HOST_BUILD)/test_trace_link: $(TRACE_LINK_SRCS) $(COLL_HDRS) trace/trace_ctl.h host-tools/tracefile/trace_reader.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(HOST_CC) $(NET_HOST_CFLAGS) -O1 -fsanitize=address,undefined -fno-sanitize-recover=all -Itests/lib \
	  -o $@ $(TRACE_LINK_SRCS) -lzstd -lz
