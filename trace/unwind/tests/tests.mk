# trace/unwind/tests/tests.mk - test_kunwind: the hypervisor's ORC unwinder (trace/unwind/kunwind.c)
# held to the host's (host-tools/stacks/orc.c) on the pinned kernels' real ORC tables with
# synthetic guest memory; linked against libhvthost for the host unwinder and the image readers,
# run by test-host-unit with the cached kernels (HVT_STACKS_KERNELS; none: SKIP).
$(HOST_OUT)/test_kunwind: trace/unwind/tests/test_kunwind.c trace/unwind/kunwind.c trace/unwind/kunwind.h trace/dvm/dif.h $(HOST_LIB) $(HOST_HDRS) tests/lib/check.h
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -Itests/lib -Ivmm/include $< trace/unwind/kunwind.c $(HOST_LIB) $(HOST_LIBS) -o $@
