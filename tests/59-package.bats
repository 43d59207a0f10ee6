#!/usr/bin/env bats
# The Debian package (make deb, contrib/debian/) on a fresh Debian 12 root:
# debootstrap's minbase (made once, kept as a tarball under build/pkgtest/,
# keyed by the debootstrap command), the package installed there by apt with
# the dependencies it names, then the installed programs, the installed demo,
# man pages, completions and systemd units used there. The root is entered
# in a private mount namespace, so its mounts go with its last process
# whatever happens; teardown_file destroys its sandboxes and ends its
# processes.
load helpers

REPO=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
MIRROR=http://deb.debian.org/debian
DEBOOTSTRAP=(debootstrap --variant=minbase bookworm DIR "$MIRROR")

setup_file() {
	local key tmp
	export PKG_CACHE=$REPO/build/pkgtest
	MAKEFLAGS='' make -s -j2 -C "$REPO" deb > "$BATS_FILE_TMPDIR/deb.log" ||
		{ cat "$BATS_FILE_TMPDIR/deb.log" >&2; false; }
	DEB=$(tail -n 1 "$BATS_FILE_TMPDIR/deb.log")
	DEB=$REPO/$DEB
	[ -f "$DEB" ]
	export DEB
	# Debian's archive is the one thing outside this machine the test needs
	# (debootstrap, then apt in the root): without it, the tests of the
	# installed package skip, saying so (bats 1.8 cannot skip in setup_file).
	if ! curl -sfI --retry 3 --max-time 60 "$MIRROR/dists/bookworm/InRelease" >/dev/null; then
		export PKG_SKIP="debootstrap cannot reach $MIRROR (Debian's archive): no fresh root to install into"
		return 0
	fi
	mkdir -p "$PKG_CACHE/apt-archives/partial"
	key=$(printf '%s\n' "${DEBOOTSTRAP[*]}" "$(dpkg --print-architecture)" | sha256sum | cut -c1-16)
	export PRISTINE=$PKG_CACHE/root-$key.tar.zst
	if [ ! -f "$PRISTINE" ]; then
		tmp=$(mktemp -d "$PKG_CACHE/debootstrap.XXXXXX")
		export PKG_BOOTSTRAP=$tmp
		# its own mount namespace: what debootstrap mounts goes with it;
		# a second try for a download cut short
		for try in 1 2; do
			rm -rf "$tmp/root"
			unshare -m --propagation private "${DEBOOTSTRAP[@]/#DIR/$tmp/root}" \
				> "$tmp/log" 2>&1 && break
			[ "$try" = 2 ] && { tail -n 40 "$tmp/log" >&2; false; }
		done
		tar --numeric-owner -C "$tmp/root" -cf - . | zstd -q -T0 -o "$tmp/root.tar.zst"
		mv "$tmp/root.tar.zst" "$PRISTINE"
		rm -rf "$tmp"
	fi
	PKG_WORK=$(mktemp -d /tmp/sbx-pkg.XXXXXX)
	export PKG_WORK R=$PKG_WORK/root
	mkdir "$R"
	zstd -q -dc "$PRISTINE" | tar --numeric-owner -C "$R" -xf -
	cp /etc/resolv.conf "$R/etc/resolv.conf"
	# a throwaway root: dpkg need not sync each file
	echo force-unsafe-io > "$R/etc/dpkg/dpkg.cfg.d/sbx-test-unsafe-io"
	cp "$DEB" "$R/tmp/"
	# the state roots the tests make in the root, for teardown_file
	: > "$PKG_WORK/roots"
}

# needs_root: skip unless setup_file made the fresh root.
needs_root() {
	if [ -n "${PKG_SKIP:-}" ]; then
		skip "$PKG_SKIP"
	fi
}

# in_root CMD...: CMD in the package's root $R as its own root: a private
# mount namespace with /proc, /sys (and its cgroup hierarchies) and /dev
# bound in, apt's download cache from build/pkgtest/, and the root pivoted
# to $R (a chrooted process gets no user namespace from the kernel, and
# sandboxes need one).
in_root() {
	unshare -m --propagation private /bin/sh -c '
		set -e
		r=$1 cache=$2
		shift 2
		mount --bind "$r" "$r"
		for d in proc sys dev; do mount --rbind "/$d" "$r/$d"; done
		mount --bind "$cache" "$r/var/cache/apt/archives"
		cd "$r"
		pivot_root . .
		umount -l .
		cd /
		exec /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
			DEBIAN_FRONTEND=noninteractive "$@"' sh "$R" "$PKG_CACHE/apt-archives" "$@"
}

# apt_in_root ARGS...: apt-get in the root, tried again (three times in
# all) when it fails, as a download from the archive may.
apt_in_root() {
	local try
	for try in 1 2 3; do
		in_root apt-get -q "$@" && return 0
		[ "$try" = 3 ] || sleep 5
	done
	return 1
}

# state_root: a new state root in $R (its path there on stdout). Its own
# path: a state root's cgroups are named by its path's hash, and the host's
# /var/lib/sbx must not be this root's.
state_root() {
	local d
	d=$(mktemp -d "$R/tmp/sbx-state.XXXXXX")
	chmod 711 "$d"
	echo "${d#"$R"}" | tee -a "$PKG_WORK/roots"
}

# root_pids: the processes whose root directory is $R (tools, watchdogs),
# and those in the cgroups of the root's state roots (sandboxes, which have
# roots of their own): a state root's group is "r" and 12 hex digits of
# its path's SHA-256 (sbx(7)).
root_pids() {
	local p st groups=()
	while read -r st; do
		groups+=("/sbx/r$(printf %s "$st" | sha256sum | cut -c1-12)/")
	done < "$PKG_WORK/roots"
	for p in /proc/[0-9]*; do
		if [ "$p/root/" -ef "$R" ] 2>/dev/null ||
			{ [ ${#groups[@]} -gt 0 ] && grep -qF "${groups[@]/#/-e}" "$p/cgroup" 2>/dev/null; }; then
			echo "${p#/proc/}"
		fi
	done
	true
}

teardown_file() {
	local st p
	if [ -n "${PKG_BOOTSTRAP:-}" ]; then
		rm -rf "$PKG_BOOTSTRAP"
	fi
	if [ -z "${PKG_WORK:-}" ] || [ ! -d "$PKG_WORK" ]; then
		return 0
	fi
	if [ -x "$R/usr/bin/sbx-gc" ]; then
		while read -r st; do
			in_root env SBX_ROOT="$st" sh -c 'sbx-ls -q | xargs -r sbx-gc; sbx-gc' \
				>/dev/null 2>&1 || true
		done < "$PKG_WORK/roots"
	fi
	for p in $(root_pids); do
		kill -KILL "$p" 2>/dev/null || true
	done
	rm -rf "$PKG_WORK"
}

@test "package: make deb builds build/sbx_VERSION_ARCH.deb with the libraries sbx links and loads, and the units, pages, completions and demo" {
	run -0 dpkg-deb -f "$DEB" Package Version Architecture Depends Recommends Suggests
	echo "$output"
	[[ $DEB == */build/sbx_$(sed -n 's/^VERSION := //p' "$REPO/Makefile")_$(dpkg --print-architecture).deb ]]
	# linked (dpkg-shlibdeps), loaded with dlopen, run; libyaml, libseccomp
	# and libcap are linked into the programs (Makefile LIBS)
	depends=$(sed -n 's/^Depends: //p' <<< "$output")
	for p in libc6 libarchive13 e2fsprogs; do
		[[ ", $depends," == *", $p "* || ", $depends," == *", $p,"* ]]
	done
	[[ $depends != *libyaml* && $depends != *libseccomp* && $depends != *libcap* ]]
	[[ $output == *"Recommends: libcurl4 | libcurl3-gnutls, libnftables1"* ]]
	run -0 dpkg-deb -c "$DEB"
	[[ $output == *" ./usr/bin/sbx-run"* ]]
	[[ $output == *" ./usr/libexec/sbx/sbx-guest-exec"* ]]
	[[ $output == *" ./usr/share/man/man1/sbx-run.1.gz"* ]]
	[[ $output == *" ./usr/share/man/man7/sbx.7.gz"* ]]
	[[ $output == *" ./usr/share/bash-completion/completions/sbx"* ]]
	[[ $output == *" ./usr/share/sbx/manifests/minimal.yaml"* ]]
	[[ $output == *" ./usr/share/sbx/examples/demo.sh"* ]]
	[[ $output == *" ./usr/share/doc/sbx/copyright"* ]]
	for u in sbx-watchdog@.service sbx-gc@.service sbx-gc@.timer; do
		[[ $output == *" ./lib/systemd/system/$u"* ]]
	done
}

@test "package: make install writes the units with BINDIR in them, under PREFIX, and uninstall removes them" {
	run -0 make -s -C "$REPO" install DESTDIR="$WORK/dest" PREFIX=/opt/sbx
	u=$WORK/dest/opt/sbx/lib/systemd/system
	grep -qx 'ExecStart=/opt/sbx/bin/sbx-watchdog --all' "$u/sbx-watchdog@.service"
	grep -qx 'ExecStart=/opt/sbx/bin/sbx-gc $SBX_GC_OPTIONS' "$u/sbx-gc@.service"
	[ -f "$u/sbx-gc@.timer" ]
	run -1 grep -rl '@BINDIR@' "$u"
	# Debian 12's place for them, with PREFIX=/usr
	run -0 make -s -C "$REPO" install DESTDIR="$WORK/usr" PREFIX=/usr
	grep -qx 'ExecStart=/usr/bin/sbx-watchdog --all' "$WORK/usr/lib/systemd/system/sbx-watchdog@.service"
	run -0 make -s -C "$REPO" uninstall DESTDIR="$WORK/dest" PREFIX=/opt/sbx
	[ -z "$(find "$u" -type f)" ]
}

@test "package: apt installs it on a fresh Debian 12 root with its dependencies; its postinst enables the units and starts nothing (no systemd runs there)" {
	needs_root
	run -0 apt_in_root update
	run -0 apt_in_root install -y "/tmp/$(basename "$DEB")"
	echo "$output"
	[[ $output == *"Setting up sbx "* ]]
	run -0 in_root sbx-run -V
	[[ $output == "sbx-run "* ]]
	# enabled the Debian way (deb-systemd-helper's links), default instance /var/lib/sbx
	[ -L "$R/etc/systemd/system/multi-user.target.wants/sbx-watchdog@var-lib-sbx.service" ]
	[ -L "$R/etc/systemd/system/multi-user.target.wants/sbx-gc@var-lib-sbx.service" ]
	[ -L "$R/etc/systemd/system/timers.target.wants/sbx-gc@var-lib-sbx.timer" ]
	# nothing ran: no state root was made, no process is left
	[ ! -e "$R/var/lib/sbx" ]
	[ -z "$(root_pids)" ]
}

@test "package: on that root the installed programs provision, run, snapshot (libarchive, loaded at run time), fork and destroy" {
	needs_root
	st=$(state_root)
	run -0 in_root env SBX_ROOT="$st" sh -euc '
		id=$(printf "read_only_root: false\n" | sbx-provision)
		sbx-run "$id" -- sh -c "echo branch > /root/f"
		snap=$(sbx-snap "$id")
		kid=$(sbx-fork -n 1 "$snap")
		sbx-run "$kid" -- cat /root/f
		sbx-gc "$id" "$kid" > /dev/null
		sbx-gc > /dev/null
		sbx-ls -q | wc -l
		sbx-gc --verify-audit'
	echo "$output"
	[ "${lines[0]}" = branch ]
	[ "${lines[1]}" = 0 ]
	[[ $output == *"chain intact"* ]]
}

@test "package: the installed demo runs on that root (/usr/share/sbx/examples/demo.sh; python3 added, which it runs in the sandbox)" {
	needs_root
	run -0 apt_in_root install -y --no-install-recommends python3
	st=$(state_root)
	run -0 in_root env SBX_ROOT="$st" /usr/share/sbx/examples/demo.sh
	echo "$output"
	[[ $output == *"Read-only file system"* ]]
	[[ $output == *"kill_reason: null"* ]]
	[[ $output == *"chain intact"* ]]
	run -0 in_root env SBX_ROOT="$st" sbx-ls -q
	[ -z "$output" ]
}

@test "package: man finds its pages, bash completes its programs, and systemd-analyze verify passes on its units there (man-db and systemd added)" {
	needs_root
	run -0 apt_in_root install -y --no-install-recommends man-db systemd bash-completion
	run -0 in_root man -w sbx-run
	[ "$output" = /usr/share/man/man1/sbx-run.1.gz ]
	run -0 in_root man -w 7 sbx
	run -0 in_root man -w 5 sbx-manifest
	run -0 in_root bash -c '. /usr/share/bash-completion/bash_completion
		_completion_loader sbx-run; complete -p sbx-run'
	[[ $output == *"sbx-run"* ]]
	run -0 in_root systemd-analyze verify sbx-watchdog@var-lib-sbx.service \
		sbx-gc@var-lib-sbx.service sbx-gc@var-lib-sbx.timer
	echo "$output"
	[ -z "$output" ]
	run -0 in_root systemctl is-enabled sbx-watchdog@var-lib-sbx.service \
		sbx-gc@var-lib-sbx.service sbx-gc@var-lib-sbx.timer
	[ "$output" = "$(printf 'enabled\nenabled\nenabled')" ]
}

@test "package: purge removes its files and the units' links, and leaves no sandbox, process or mount behind" {
	needs_root
	local st
	while read -r st; do
		run -0 in_root env SBX_ROOT="$st" sbx-ls -q
		[ -z "$output" ]
	done < "$PKG_WORK/roots"
	run -0 in_root apt-get purge -y -q sbx
	# the download cache under build/pkgtest/ keeps what the archive still has
	run -0 in_root apt-get autoclean -q
	[ ! -e "$R/usr/bin/sbx-run" ]
	[ ! -e "$R/usr/share/sbx" ]
	[ ! -e "$R/lib/systemd/system/sbx-watchdog@.service" ]
	[ -z "$(find "$R/etc/systemd" "$R/var/lib/systemd" -name '*sbx*')" ]
	[ -z "$(root_pids)" ]
	if grep -F "$R" /proc/self/mountinfo; then false; fi
}
