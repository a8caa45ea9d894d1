# tests/security.mk - make test-security: every check of the trust boundary docs/security.md
# describes, in one target (its parts are in tests/TESTS; make runs each
# prerequisite once even where other groups name it too):
#   test-boot          Bochs: hypercalls refused to an unprivileged guest user (SIGILL, counted,
#                      no trace window) and allowed to root; root's MSR attack (APIC base above
#                      4 GiB, DS_AREA, IA32_TSC, ...) refused or contained, the guest's checks
#                      pass; string I/O on intercepted ports emulated
#   net-unit-test      the session: ChaCha20-Poly1305 vectors, forged/replayed messages both
#                      ways (unit), a stranger and a replayed HELLO refused while a trace streams,
#                      forged TRACE/ACK rejected and counted with nothing lost, the collector on a
#                      full tmpfs / under ulimit -f (no ACK past the last byte stored), 0600/0700
#   unit-test-hv       the MSR allow-list and policy; DMAR, MCFG, VT-d tables and register
#                      programming against QEMU q35's captured tables (unit-test-iommu)
#   test-reset         Bochs: a reset through 0xCF9 and a triple fault while traced: the trace
#                      ends with the reason, the file is clean, the machine boots again
#   test-fatal         Bochs: the hypervisor's fatal path (a self-test boot asks for it): every
#                      CPU stopped, PANIC with the reason at the collector, a clean file, reset;
#                      also NMI-only, a panic inside the panic path, and the MMIO bound
#   test-fuzz-replay   every fuzzer's regression corpus (parsers an attacker feeds)
#   test-coll-replay   replayed HELLOs (an earlier boot's, an earlier connection's) against a
#                      live, an idle and a restarted collector: refused, nothing answered; a
#                      boot from another configuration than --pin-cfg's refused
#   test-seal          QEMU: keys enrolled into a boot-services-only EFI variable Linux cannot
#                      see, a changed hvtrace.cfg's security lines not honoured, a second
#                      enrollment refused (unit: test_cfg_seal in unit-test-platform)
#   (unit-test-hv also holds the D load race, the per-CPU base decision, the bounds on one
#   firing and one arming request, and probe slot reuse: unit-test-dprobe-load,
#   unit-test-task-base, unit-test-dif-bounds, unit-test-dif-budget, unit-test-probe-budget,
#   unit-test-probe-epoch; the speculation and PMU decision table against real CPUs'
#   capability bits: unit-test-spec-ctrl; the boot id's hardware randomness and the refusal of
#   auth without it: unit-test-boot-rand; the D hash keyed per load: unit-test-dif-hash-key;
#   IA32_MISC_ENABLE writes in test_msr_policy; EPT permissions against the execute-only
#   capability in test_ept_view. test-boot's hc-user-gs-forged is a user's forged GS base.)
.PHONY: test-security
test-security: test-boot test-reset test-fatal net-unit-test unit-test-hv test-fuzz-replay test-coll-replay \
               test-seal unit-test-platform
