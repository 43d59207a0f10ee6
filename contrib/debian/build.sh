#!/bin/sh
# SPDX-License-Identifier: MIT
# Pack a Debian binary package from a tree that make install filled
# (DESTDIR=.../debian/sbx PREFIX=/usr; `make deb` does both):
#
#   contrib/debian/build.sh PKGDIR VERSION OUT.deb
#
# It adds what Debian's policy asks of a package (copyright, changelog,
# compressed man pages, stripped binaries, md5sums), the control file from
# control.in (Depends from dpkg-shlibdeps for the linked libraries, plus the
# ones sbx loads with dlopen or runs, named in control.in) and the maintainer
# scripts, and runs dpkg-deb. DEB_MAINTAINER names the packager.
set -eu
pkg=${1:?usage: build.sh PKGDIR VERSION OUT.deb}
version=${2:?usage: build.sh PKGDIR VERSION OUT.deb}
out=${3:?usage: build.sh PKGDIR VERSION OUT.deb}
here=$(cd "$(dirname "$0")" && pwd)
maint=${DEB_MAINTAINER:-The sbx authors <sbx@example.org>}
for t in dpkg-deb dpkg-shlibdeps strip; do
	command -v "$t" >/dev/null || {
		echo "deb: $t missing (contrib/install-deps.sh package)" >&2
		exit 69
	}
done
[ -x "$pkg/usr/bin/sbx-run" ] || {
	echo "deb: $pkg: no usr/bin/sbx-run (make install DESTDIR=$pkg PREFIX=/usr first)" >&2
	exit 66
}
case $(basename "$(dirname "$pkg")") in
debian) ;;
*) echo "deb: $pkg: must be .../debian/PACKAGE (dpkg-shlibdeps reads .../debian/)" >&2; exit 64 ;;
esac
umask 022
pkg=$(cd "$pkg" && pwd)
arch=$(dpkg --print-architecture)
# The changelog's date: the commit's, so that a rebuild of one tree is the same
when=$(git -C "$here" log -1 --format=%ct 2>/dev/null || date +%s)
rev=$(git -C "$here" describe --always --dirty 2>/dev/null || echo unknown)

doc=$pkg/usr/share/doc/sbx
install -d "$doc"
{
	cat "$here/copyright.in"
	# LICENSE, as a paragraph of the copyright file: indented, "." for blank lines
	sed -n '3,$p' "$here/../../LICENSE" | sed -e 's/^$/./' -e 's/^/ /'
} > "$doc/copyright"
printf 'sbx (%s) unstable; urgency=medium\n\n  * Built from the sbx tree at %s.\n\n -- %s  %s\n' \
	"$version" "$rev" "$maint" "$(LC_ALL=C date -u -R -d "@$when")" | gzip -9n > "$doc/changelog.gz"
find "$pkg/usr/share/man" -type f -name '*.[1-9]' -exec gzip -9nf {} +
for f in "$pkg"/usr/bin/* "$pkg"/usr/libexec/sbx/sbx-*; do
	strip --strip-unneeded --remove-section=.comment --remove-section=.note "$f"
done
install -d "$pkg/usr/share/lintian/overrides"
install -m 644 "$here/lintian-overrides" "$pkg/usr/share/lintian/overrides/sbx"

rm -rf "$pkg/DEBIAN"
install -d "$pkg/DEBIAN"
# dpkg-shlibdeps wants debian/control beside the package's directory
top=$(cd "$pkg/../.." && pwd)
[ -f "$top/debian/control" ] || printf 'Source: sbx\n\nPackage: sbx\nArchitecture: any\n' > "$top/debian/control"
shlibs=$(cd "$top" && dpkg-shlibdeps -O "$pkg"/usr/bin/* | sed -n 's/^shlibs:Depends=//p')
[ -n "$shlibs" ] || { echo "deb: dpkg-shlibdeps found no libraries" >&2; exit 70; }
size=$(du -sk "$pkg" | cut -f1)
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@SIZE@|$size|" \
	-e "s|@SHLIBS@|$shlibs|" -e "s|@MAINTAINER@|$maint|" "$here/control.in" > "$pkg/DEBIAN/control"
install -m 755 "$here/postinst" "$here/prerm" "$here/postrm" "$pkg/DEBIAN/"
(cd "$pkg" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort |
	xargs md5sum) > "$pkg/DEBIAN/md5sums"
chmod 644 "$pkg/DEBIAN/md5sums"
mkdir -p "$(dirname "$out")"
dpkg-deb --root-owner-group -Zxz --build "$pkg" "$out" >&2
