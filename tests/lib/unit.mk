# unit.mk - what the hypervisor side's host unit tests share (vmm/tests, trace/*/tests,
# net/tests): their build folder, flags, and `make unit-test-hv`, which every folder's
# tests.mk adds its tests to. A test prints "NAME: N passed, M failed" (tests/lib/check.h).
# A rule's extra libraries, when it has any: TEST_NAME_LIBS.
HV_UNIT_BUILD  := $(BUILD)/test/unit-hv
HV_UNIT_CFLAGS := $(HV_STD) -O2 -g -Wall -Wextra -Wno-unused-parameter -Itests/lib -Ivmm -Ivmm/include -Iinclude $(TRACE_DIRS:%=-I%)
HV_ASAN        := -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
.PHONY: unit-test-hv
unit-test: unit-test-hv
