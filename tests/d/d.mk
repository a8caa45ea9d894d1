# tests/d/d.mk - the D compiler (host-tools/d/compile/, see d_compile.h) and its unit test: the
# exact code of small programs, error messages with line:col and caret, the image layout,
# aggregations, probe resolution, and BTF member access against the pinned 6.1 cloud kernel
# when it is in the cache (SKIP otherwise); every image compiled passes the hypervisor's
# verifier. No guest, no VM. Needs host.mk's HOST_CC, HOST_CFLAGS, HOST_INC, HOST_LIB,
# HOST_LIBS and HOST_OUT.
#   make test-d-unit    build/host/unit_d, run
D_COMPILER_SRC  := $(addprefix host-tools/d/compile/,d_compile.c util.c d_lex.c d_parse.c d_parse_top.c d_type.c d_sema.c d_sema_act.c \
                     d_pfcheck.c d_cg.c d_cg_stmt.c d_image.c d_dump.c d_resolve.c)
D_COMPILER_HDRS := $(addprefix host-tools/d/compile/,d_compile.h d_int.h) host-tools/d/dprog.h include/hvt_dif.h include/hvt_probe.h

# Every image the test compiles also goes through the hypervisor's verifier (host build).
D_VERIFIER_SRC  := $(addprefix trace/dvm/,dif_verify.c dif_vm.c dif_str.c dif_state.c dif_agg.c dif_dyn.c dif_spec.c)

$(HOST_OUT)/unit_d: tests/d/unit_d.c $(D_COMPILER_SRC) $(D_COMPILER_HDRS) $(D_VERIFIER_SRC) trace/dvm/dif.h trace/dvm/dif_impl.h \
                    $(HOST_LIB) $(HOST_HDRS)
	@mkdir -p $(dir $@)
	$(HOST_CC) $(HOST_CFLAGS) -Wno-unused-parameter $(HOST_INC) -Itests/lib -Ivmm -Ivmm/include -DD_WITH_VERIFIER $< \
	  $(D_COMPILER_SRC) $(D_VERIFIER_SRC) $(HOST_LIB) $(HOST_LIBS) -lpthread -o $@

.PHONY: test-d-unit
test-d-unit: $(HOST_OUT)/unit_d
	$(HOST_OUT)/unit_d
