# host-tools/stacks/tests/tests.mk - unit test of the stack unwinders and flame graphs (orc.c,
# flame.c), linked against libhvthost like hvt (host-tools/host.mk; `make test-host-unit`).
# unit_stacks unwinds synthetic stacks against the real ORC tables of the pinned kernels that
# are already in the cache (tests/analyze/kernels.txt; fetched by test-analyze): it is given
# them through HVT_STACKS_KERNELS (colon-separated) and prints SKIP for its kernel checks when
# there are none, so the unit tests never download anything.
$(HOST_OUT)/unit_stacks: $(HOST_DIR)/stacks/tests/unit_stacks.c $(HOST_LIB) $(HOST_HDRS) tests/lib/check.h
	$(HOST_CC) $(HOST_CFLAGS) $(HOST_INC) -Itests/lib $< $(HOST_LIB) $(HOST_LIBS) -o $@
STACKS_KERNEL_FILES = $(foreach p,$(shell awk '!/^\#/ && NF == 2 { print $$1 "_" $$2 }' $(ANALYZE_KERNELS)),\
                        $(firstword $(wildcard $(HVT_CACHE)/kernels/$(p)/root/boot/vmlinuz-*)))
STACKS_KERNELS = $(subst $(eval) ,:,$(strip $(STACKS_KERNEL_FILES)))
