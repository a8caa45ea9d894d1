# guest/tests/tests.mk - host unit test of the guest tool's agent (guest/hvt_agent.h: how hvt -c's
# command is started, held at its exec and let go), run by test-host-unit (make check).
$(HOST_OUT)/unit_agent: guest/tests/test_agent.c guest/hvt_agent.h tests/lib/check.h
	@mkdir -p $(dir $@)
	$(HOST_CC) $(HOST_CFLAGS) -Iguest -Itests/lib $< -o $@
