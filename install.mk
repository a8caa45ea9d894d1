# install.mk - hvtrace on a real machine (docs/install.md). Included by the top Makefile.
#   make install [PREFIX=/usr/local] [DESTDIR=STAGE]   the host tools, the guest tools, the
#                        loader, man pages and docs (GNU conventions: DESTDIR staged, no root
#                        needed with DESTDIR)
#   make uninstall [PREFIX=...] [DESTDIR=...]         removes exactly what install wrote
#   make esp DEST=DIR | DEST=FILE.img [KERNEL=vmlinuz INITRD=initrd.img] [CMDLINE='...']
#                        hvtrace.efi and a commented hvtrace.cfg on an ESP (tools/hvtrace-esp.sh);
#                        ESP_EFI and ESP_TEMPLATE choose other inputs (default: this tree's)
#   make test-install    follows docs/install.md in QEMU (TCG, no VT-x): tests/install/test-install.sh
PREFIX       ?= /usr/local
DESTDIR      ?=
INSTALL      ?= install
BINDIR       := $(PREFIX)/bin
SBINDIR      := $(PREFIX)/sbin
HVT_LIBDIR   := $(PREFIX)/lib/hvtrace
MAN1DIR      := $(PREFIX)/share/man/man1
MAN8DIR      := $(PREFIX)/share/man/man8
HVT_DOCDIR   := $(PREFIX)/share/doc/hvtrace
# The collector's systemd unit: PREFIX/lib/systemd/system is on systemd's unit path for /usr
# and /usr/local alike; its ExecStart names PREFIX's sbin.
SYSTEMD_UNITDIR ?= $(PREFIX)/lib/systemd/system
COLL_UNIT    := host-tools/collector/systemd/hvtrace-collector.service
COLL_ENV     := host-tools/collector/systemd/collector.env
# The guest tools run inside the traced Linux, often from an initramfs without a C library:
# linked statically, like the test initramfs's copies.
GUEST_TOOLS  := hvtrace-guest hvtrace-mark
INSTALL_BIN  := hvt hvt-import hvt-check
INSTALL_DOCS := README.md $(wildcard docs/*.md)
INSTALL_MAN1 := docs/man/hvt.1
INSTALL_MAN8 := docs/man/hvtrace-collector.8
ESP_EFI      ?= $(BUILD)/hvtrace.efi
ESP_TEMPLATE ?= boot/hvtrace.cfg.template

.PHONY: install uninstall esp guest-tools test-install
all: guest-tools

$(GUEST_OUT)/%: guest/%.c guest/hvt_guest.h guest/hvt_agent.h include/hvt_hypercall.h
	@mkdir -p $(dir $@)
	$(GUEST_CC) $(GUEST_CFLAGS) -o $@ $<
guest-tools: $(GUEST_TOOLS:%=$(GUEST_OUT)/%)

# The man pages name the installed docs' folder, the unit the collector's path: rewritten
# for this PREFIX.
install: efi host-tools collector guest-tools
	$(INSTALL) -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(HVT_LIBDIR) \
	  $(DESTDIR)$(MAN1DIR) $(DESTDIR)$(MAN8DIR) $(DESTDIR)$(HVT_DOCDIR) $(DESTDIR)$(SYSTEMD_UNITDIR)
	$(INSTALL) -m 755 $(INSTALL_BIN:%=$(HOST_OUT)/%) $(GUEST_TOOLS:%=$(GUEST_OUT)/%) $(DESTDIR)$(BINDIR)/
	$(INSTALL) -m 755 $(HOST_OUT)/hvtrace-collector $(DESTDIR)$(SBINDIR)/
	$(INSTALL) -m 644 $(BUILD)/hvtrace.efi boot/hvtrace.cfg.template $(DESTDIR)$(HVT_LIBDIR)/
	$(INSTALL) -m 755 tools/hvtrace-esp.sh $(DESTDIR)$(HVT_LIBDIR)/hvtrace-esp
	sed 's#/usr/local/#$(PREFIX)/#g' $(INSTALL_MAN1) > $(DESTDIR)$(MAN1DIR)/hvt.1
	sed 's#/usr/local/#$(PREFIX)/#g' $(INSTALL_MAN8) > $(DESTDIR)$(MAN8DIR)/hvtrace-collector.8
	sed 's#/usr/local/#$(PREFIX)/#g' $(COLL_UNIT) > $(DESTDIR)$(SYSTEMD_UNITDIR)/hvtrace-collector.service
	chmod 644 $(DESTDIR)$(MAN1DIR)/hvt.1 $(DESTDIR)$(MAN8DIR)/hvtrace-collector.8 \
	  $(DESTDIR)$(SYSTEMD_UNITDIR)/hvtrace-collector.service
	$(INSTALL) -m 644 $(COLL_ENV) $(DESTDIR)$(HVT_LIBDIR)/collector.env.example
	$(INSTALL) -m 644 $(INSTALL_DOCS) $(DESTDIR)$(HVT_DOCDIR)/

uninstall:
	rm -f $(INSTALL_BIN:%=$(DESTDIR)$(BINDIR)/%) $(GUEST_TOOLS:%=$(DESTDIR)$(BINDIR)/%) \
	  $(DESTDIR)$(SBINDIR)/hvtrace-collector \
	  $(DESTDIR)$(HVT_LIBDIR)/hvtrace.efi $(DESTDIR)$(HVT_LIBDIR)/hvtrace.cfg.template \
	  $(DESTDIR)$(HVT_LIBDIR)/hvtrace-esp $(DESTDIR)$(HVT_LIBDIR)/collector.env.example \
	  $(DESTDIR)$(SYSTEMD_UNITDIR)/hvtrace-collector.service \
	  $(DESTDIR)$(MAN1DIR)/hvt.1 $(DESTDIR)$(MAN8DIR)/hvtrace-collector.8 \
	  $(addprefix $(DESTDIR)$(HVT_DOCDIR)/,$(notdir $(INSTALL_DOCS)))
	-rmdir $(DESTDIR)$(HVT_LIBDIR) $(DESTDIR)$(HVT_DOCDIR) 2>/dev/null

# The default inputs are built first; given ones (an installed hvtrace.efi) are taken as is.
esp: $(if $(filter $(BUILD)/hvtrace.efi,$(ESP_EFI)),efi)
	@[ -n "$(DEST)" ] || { echo "make esp: say DEST=DIR (a mounted ESP) or DEST=FILE.img" >&2; exit 2; }
	bash tools/hvtrace-esp.sh -e "$(ESP_EFI)" -t "$(ESP_TEMPLATE)" $(if $(KERNEL),-k "$(KERNEL)") \
	  $(if $(INITRD),-i "$(INITRD)") $(if $(CMDLINE),-c '$(CMDLINE)') "$(DEST)"

# QEMU + OVMF under TCG, one boot (17 s measured): the kernel and initramfs of the test platform.
test-install: test-guest-inputs
	TEST_CMDLINE='$(TEST_CMDLINE)' bash tests/install/test-install.sh
