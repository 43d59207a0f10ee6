# SPDX-License-Identifier: MIT
# sbx — sandboxes for untrusted code. Plain GNU make.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec/sbx
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
# systemd's units: Debian 12 keeps a package's in /lib/systemd/system
ifeq ($(PREFIX),/usr)
SYSTEMDUNITDIR ?= /lib/systemd/system
else
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
endif
VERSION := 0.1.0

CC ?= cc
CFLAGS ?= -O2 -g
# lib/'s folders are layers, bottom first (lib/README): each is compiled with
# only itself and the folders below it on the include path, so an include
# that points up fails the build; cmd/ and the tests see them all.
LAYERS := core store host tier life
inc_core := -Ilib/core
inc_store := -Ilib/store $(inc_core)
inc_host := -Ilib/host $(inc_store)
inc_tier := -Ilib/tier $(inc_host)
inc_life := -Ilib/life $(inc_tier)
ALL_INC := $(LAYERS:%=-Ilib/%)
SBX_CFLAGS := -std=c11 -D_GNU_SOURCE -DSBX_VERSION='"$(VERSION)"' -DSBX_LIBEXEC='"$(LIBEXECDIR)"' \
	-Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wformat=2 -Wno-format-truncation \
	-fstack-protector-strong -fstack-clash-protection -fPIE -pthread
SBX_LDFLAGS := -pthread -pie -Wl,-z,relro,-z,now,-z,noexecstack
# libyaml, libseccomp and libcap linked in (their -dev packages ship the
# archives): every sbx-* program starts about 0.2 ms sooner without loading
# three shared libraries, which a run pays on every sbx-run (make bench).
LIBS := -Wl,-Bstatic -lyaml -lseccomp -lcap -Wl,-Bdynamic -lm

ifeq ($(SANITIZE),1)
SBX_CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SBX_LDFLAGS += -fsanitize=address,undefined
B := build/san
else
SBX_CFLAGS += -D_FORTIFY_SOURCE=3
B := build/rel
endif

PROGS := sbx sbx-provision sbx-run sbx-inspect sbx-ls sbx-gc sbx-watchdog sbx-pause sbx-snap sbx-fork sbx-cp sbx-mcp
LIB_SRC := $(wildcard $(LAYERS:%=lib/%/*.c))
LIB_H := $(wildcard $(LAYERS:%=lib/%/*.h))
LIB_OBJ := $(LIB_SRC:lib/%.c=$(B)/lib/%.o)
BINS := $(PROGS:%=$(B)/bin/%)
UNIT_SRC := $(wildcard tests/unit/*.c)
UNITS := $(UNIT_SRC:tests/unit/%.c=$(B)/unit/%)
MANS := $(patsubst man/%.scd,build/man/%,$(wildcard man/*.scd))
FUZZ_SRC := $(wildcard tests/fuzz/fuzz-*.c)
FUZZ_REPLAY := $(FUZZ_SRC:tests/fuzz/%.c=$(B)/replay/%)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=build/fuzz/%)
FUZZ_SECONDS ?= 30
HOSTILE := $(patsubst tests/hostile/%.c,$(B)/hostile/%,$(wildcard tests/hostile/*.c)) \
	$(patsubst tests/hostile/%.sh,$(B)/hostile/%.sh,$(wildcard tests/hostile/*.sh))

# systemd's units (contrib/systemd/*.in), made by make install with BINDIR in them
SD_UNITS := $(patsubst contrib/systemd/%.in,%,$(wildcard contrib/systemd/*.in))

GUEST := $(B)/libexec/sbx-guest-exec $(B)/libexec/sbx-agent $(B)/libexec/guest/build.sh \
	$(B)/libexec/guest/init

all: $(BINS) $(GUEST) $(MANS)

$(B)/lib/%.o: lib/%.c $(LIB_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SBX_CFLAGS) $(inc_$(firstword $(subst /, ,$*))) -c -o $@ $<

$(B)/libsbx.a: $(LIB_OBJ)
	$(AR) rcs $@ $^

$(B)/bin/%: cmd/%.c $(B)/libsbx.a $(LIB_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SBX_CFLAGS) $(ALL_INC) $(LDFLAGS) $(SBX_LDFLAGS) -o $@ $< $(B)/libsbx.a $(LIBS)

$(B)/unit/%: tests/unit/%.c $(B)/libsbx.a $(LIB_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SBX_CFLAGS) $(ALL_INC) $(LDFLAGS) $(SBX_LDFLAGS) -o $@ $< $(B)/libsbx.a $(LIBS)

# Run inside gVisor sandboxes: static, as their root may have no C library.
$(B)/libexec/sbx-guest-exec: cmd/guest/sbx-guest-exec.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -static -o $@ $<

# The microVM tier's guest agent: the guest's PID 1, static (its initramfs has no C library).
$(B)/libexec/sbx-agent: cmd/guest/sbx-agent.c lib/tier/vm_proto.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Ilib/tier -static -o $@ $<

# The guest kit's builder, run by the microVM tier on first use.
$(B)/libexec/guest/%: contrib/guest/%
	@mkdir -p $(@D)
	install -m 755 $< $@

# Hostile programs, run inside sandboxes by tests/35-hostile.bats.
$(B)/hostile/%: tests/hostile/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o $@ $<

$(B)/hostile/%.sh: tests/hostile/%.sh
	@mkdir -p $(@D)
	install -m 755 $< $@

# The fuzz targets built without libFuzzer: the suite replays the corpora with them.
$(B)/replay/%: tests/fuzz/%.c tests/fuzz/driver.c $(B)/libsbx.a $(LIB_H)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(SBX_CFLAGS) $(ALL_INC) $(LDFLAGS) $(SBX_LDFLAGS) -o $@ $< tests/fuzz/driver.c \
		$(B)/libsbx.a $(LIBS)

# libFuzzer (clang) with ASan and UBSan, the library instrumented too.
build/fuzz/%: tests/fuzz/%.c $(LIB_SRC) $(LIB_H)
	@mkdir -p $(@D)
	clang -g -O1 -std=c11 -D_GNU_SOURCE -DSBX_VERSION='"$(VERSION)"' $(ALL_INC) \
		-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
		-o $@ $< $(LIB_SRC) $(LIBS)

fuzz: deps
	@contrib/install-deps.sh fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BIN)
	@$(MAKE) --no-print-directory fuzz-run

fuzz-run:
	@for t in $(FUZZ_BIN); do \
		n=$$(basename $$t); c=tests/fuzz/corpus/$${n#fuzz-}; \
		mkdir -p build/fuzz/corpus-$$n; \
		echo "fuzz: $$n for $(FUZZ_SECONDS) s"; \
		$$t -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -print_final_stats=1 \
			-artifact_prefix=build/fuzz/$$n- build/fuzz/corpus-$$n $$c \
			> build/fuzz/$$n.log 2>&1; rc=$$?; \
		grep -E "^stat::number_of_executed_units|^stat::new_units_added" build/fuzz/$$n.log; \
		if [ $$rc -ne 0 ]; then tail -40 build/fuzz/$$n.log; exit 1; fi; \
	done

build/man/%: man/%.scd
	@mkdir -p $(@D)
	@if command -v scdoc >/dev/null; then scdoc < $< > $@; else echo "scdoc missing: $@ not built" >&2; fi

deps:
	@contrib/install-deps.sh
	@contrib/install-deps.sh s3
	@contrib/install-deps.sh guest

# The whole suite: C unit tests, then the bats files; the last line is the summary.
# The microVM tier's tests use the guest kit (contrib/guest/build.sh, from
# Debian's kernel package); without one they are skipped, saying so.
check: deps
	@$(MAKE) --no-print-directory all $(UNITS) $(FUZZ_REPLAY) $(HOSTILE)
	@kit=$$(contrib/guest/build.sh $(CURDIR)/$(B)/guest) || { kit=""; echo "check: no guest kit: the microvm tests are skipped" >&2; }; \
	SBX_GUEST_KIT=$${SBX_GUEST_KIT-$$kit} \
	SBX_BIN=$(CURDIR)/$(B)/bin SBX_UNIT=$(CURDIR)/$(B)/unit SBX_REPLAY=$(CURDIR)/$(B)/replay \
		SBX_LIBEXEC=$(CURDIR)/$(B)/libexec \
		SBX_HOSTILE=$(CURDIR)/$(B)/hostile SBX_SANITIZE=$(SANITIZE) tests/run $(TESTS)

# The cgroup v2 proof: the files that use cgroups, run in a guest that has
# cgroup2 alone (tests/v2/run, contrib/guest/build.sh), against this build;
# of the snapshots, the tests that freeze, fork live sandboxes or need the
# watchdog (FILE:REGEX, no spaces: the rest is the store's, the same on v1).
V2_TESTS ?= tests/20-lifecycle.bats tests/25-crash.bats tests/40-resources.bats \
	tests/45-watchdog.bats tests/60-rootless.bats \
	'tests/55-snapshot.bats:in.each.of.3.forks|from.a.live.sandbox|freezes.the.sandbox|periodic.snapshots|before_destroy:'

check-v2: deps
	@contrib/install-deps.sh guest
	@$(MAKE) --no-print-directory all $(HOSTILE)
	@kit=$$(contrib/guest/build.sh $(B)/guest) && \
		SBX_BIN=$(CURDIR)/$(B)/bin SBX_LIBEXEC=$(CURDIR)/$(B)/libexec \
		SBX_HOSTILE=$(CURDIR)/$(B)/hostile SBX_SANITIZE=$(SANITIZE) tests/v2/run "$$kit" $(V2_TESTS)

# make bench's cgroup rows (CLONE_INTO_CGROUP against the cgroup.procs
# write) in the same guest, where v2 makes them differ.
bench-v2: deps
	@contrib/install-deps.sh guest
	@contrib/install-deps.sh bench
	@$(MAKE) --no-print-directory all
	@kit=$$(contrib/guest/build.sh $(B)/guest) && \
		SBX_BIN=$(CURDIR)/$(B)/bin SBX_LIBEXEC=$(CURDIR)/$(B)/libexec \
		tests/v2/run "$$kit" --exec tests/bench/v2-guest.sh

demo: deps
	@$(MAKE) --no-print-directory all
	@SBX_BIN=$(CURDIR)/$(B)/bin contrib/demo.sh

bench: deps
	@contrib/install-deps.sh bench
	@contrib/install-deps.sh s3
	@contrib/install-deps.sh guest
	@$(MAKE) --no-print-directory all $(B)/bench/floor
	@kit=$$(contrib/guest/build.sh $(CURDIR)/$(B)/guest) || kit=""; \
	SBX_GUEST_KIT=$${SBX_GUEST_KIT-$$kit} \
	SBX_BIN=$(CURDIR)/$(B)/bin SBX_LIBEXEC=$(CURDIR)/$(B)/libexec \
		SBX_FLOOR=$(CURDIR)/$(B)/bench/floor tests/bench/run

$(B)/bench/floor: tests/bench/floor.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -o $@ $<

# Static checks: C (cppcheck, clang-tidy, gcc -fanalyzer, every header on its
# own), lib/'s layers and include circles (contrib/lint/layers.sh), every shell
# script, bats file and completion (shellcheck, bash -n, zsh -n, fish -n).
lint:
	@contrib/install-deps.sh lint
	CC="$(CC)" contrib/lint/headers.sh lib
	cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
		-D_GNU_SOURCE $(ALL_INC) lib cmd
	clang-tidy --quiet $(LIB_SRC) cmd/*.c cmd/guest/*.c -- -std=c11 -D_GNU_SOURCE -DSBX_VERSION='"lint"' $(ALL_INC)
	contrib/lint/layers.sh lib
	contrib/lint/func-length.sh lib
	@for f in $(LIB_SRC) cmd/*.c; do \
		$(CC) -std=c11 -D_GNU_SOURCE -DSBX_VERSION='"lint"' $(ALL_INC) -fanalyzer -Werror -O1 \
			-c -o /dev/null $$f || exit 1; \
	done
	shellcheck tests/run tests/helpers.bash tests/netlib.bash tests/*.bats tests/bench/run tests/bench/v2-guest.sh tests/hostile/*.sh \
		tests/s3/*.sh tests/s3/lib.bash tests/slurm/*.sh contrib/*.sh contrib/lint/*.sh \
		contrib/scale-out/*.sbatch contrib/guest/build.sh contrib/guest/init tests/v2/run tests/v2/guest.sh \
		contrib/debian/build.sh contrib/debian/postinst contrib/debian/prerm contrib/debian/postrm \
		.ci/run \
		completions/sbx.bash
	bash -n completions/sbx.bash
	zsh -n completions/_sbx
	fish -n completions/sbx.fish

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) \
		$(DESTDIR)$(FISHCOMPDIR) $(DESTDIR)$(DATADIR)/sbx/manifests
	install -m 755 $(BINS) $(DESTDIR)$(BINDIR)
	install -d $(DESTDIR)$(LIBEXECDIR)
	install -d $(DESTDIR)$(LIBEXECDIR)/guest
	install -m 755 $(B)/libexec/sbx-guest-exec $(B)/libexec/sbx-agent $(DESTDIR)$(LIBEXECDIR)
	install -m 755 $(B)/libexec/guest/build.sh $(B)/libexec/guest/init $(DESTDIR)$(LIBEXECDIR)/guest
	install -m 644 manifests/* $(DESTDIR)$(DATADIR)/sbx/manifests
	for m in $(MANS); do s=$${m##*.}; install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s; done
	install -m 644 completions/sbx.bash $(DESTDIR)$(BASHCOMPDIR)/sbx
	for p in $(PROGS); do [ $$p = sbx ] || ln -sf sbx $(DESTDIR)$(BASHCOMPDIR)/$$p; done
	install -m 644 completions/_sbx $(DESTDIR)$(ZSHCOMPDIR)/_sbx
	install -m 644 completions/sbx.fish $(DESTDIR)$(FISHCOMPDIR)/sbx.fish
	install -d $(DESTDIR)$(DATADIR)/sbx/examples
	sed '1a : "$${SBX_BIN:=$(BINDIR)}"   # installed: the programs of $(BINDIR)' contrib/demo.sh \
		> $(DESTDIR)$(DATADIR)/sbx/examples/demo.sh
	chmod 755 $(DESTDIR)$(DATADIR)/sbx/examples/demo.sh
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	for u in $(SD_UNITS); do \
		sed 's|@BINDIR@|$(BINDIR)|g' contrib/systemd/$$u.in > $(DESTDIR)$(SYSTEMDUNITDIR)/$$u && \
		chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit 1; \
	done

uninstall:
	for p in $(PROGS); do rm -f $(DESTDIR)$(BINDIR)/$$p $(DESTDIR)$(BASHCOMPDIR)/$$p; done
	for m in $(MANS); do s=$${m##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$${m##*/}; done
	rm -f $(DESTDIR)$(ZSHCOMPDIR)/_sbx $(DESTDIR)$(FISHCOMPDIR)/sbx.fish
	rm -f $(DESTDIR)$(LIBEXECDIR)/sbx-guest-exec $(DESTDIR)$(LIBEXECDIR)/sbx-agent
	rm -rf $(DESTDIR)$(LIBEXECDIR)/guest
	rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null || true
	rm -rf $(DESTDIR)$(DATADIR)/sbx/manifests $(DESTDIR)$(DATADIR)/sbx/examples
	rmdir $(DESTDIR)$(DATADIR)/sbx 2>/dev/null || true
	for u in $(SD_UNITS); do rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/$$u; done

# A Debian package (contrib/debian/): this tree built for PREFIX=/usr in an
# object directory of its own (the libexec path is compiled in), installed
# into build/deb/debian/sbx and packed by contrib/debian/build.sh.
DEB_ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
DEB := build/sbx_$(VERSION)_$(DEB_ARCH).deb
deb:
	@contrib/install-deps.sh
	@contrib/install-deps.sh package
	rm -rf build/deb/debian/sbx
	$(MAKE) --no-print-directory install B=build/deb/obj SANITIZE= PREFIX=/usr \
		DESTDIR=$(CURDIR)/build/deb/debian/sbx
	contrib/debian/build.sh build/deb/debian/sbx $(VERSION) $(DEB)
	@echo $(DEB)

clean:
	rm -rf build

dist:
	git archive --prefix=sbx-$(VERSION)/ -o sbx-$(VERSION).tar.gz HEAD

.PHONY: all deps check check-v2 bench-v2 demo bench fuzz fuzz-run lint install uninstall deb clean dist
.SECONDARY:
