#!/bin/sh
# The Debian package (debian/): build it, inspect it, install, run, remove
# and purge it.
#
# 1. Build: dpkg-checkbuilddeps, then "dpkg-buildpackage -b -us -uc" (unit
#    tests included) in a copy of the source tree, which stays untouched.
# 2. Inspect the .deb: the file list, the conffiles, the maintainer scripts,
#    lintian (no error and no warning) and "systemd-analyze security
#    --offline=true" on the packaged unit (exposure 2.0 or lower).
# 3. Install it with dpkg -i into a throwaway root, never into this machine:
#    the postinst enables and, where systemd runs, starts uncored.service,
#    which programs the MSRs of a real host, and a test must leave its host
#    as it found it.  The throwaway root is a copy-on-write overlay of this
#    machine's own root file system (upper layer on a tmpfs) in a private
#    mount namespace (package_root.sh), entered with chroot, with its own
#    /dev, /tmp and empty /run: there deb-systemd-invoke sees no running
#    systemd and starts nothing, and every
#    file that dpkg and the maintainer scripts write lands in the upper
#    layer, which the test lists at the end and then drops.  In it:
#    - the user is removed first, so that the install must create it;
#    - after dpkg -i: the files, the user, the enable symlinks; the installed
#      binary runs --once --simulate westmere-ep-2s; its --help and
#      --check-config name /etc/uncored/uncored.conf;
#    - socket activation, as far as a machine without systemd as PID 1
#      allows: systemd-socket-activate binds a loopback port and runs the
#      packaged unit's own ExecStart= command line (plus --simulate
#      westmere-ep-2s: no test may touch real MSRs) inside the root, with
#      NOTIFY_SOCKET; the daemon takes the passed socket, drops to the
#      packaged "uncored" user, sends READY=1 and serves /metrics through
#      that socket.  The unit's sandboxing, its dependencies and systemd's
#      own start and restart logic are not exercised here, but in
#      package_clean.sh, which boots a root with systemd as PID 1;
#    - a changed conffile survives a reinstall (dpkg --force-confold);
#    - dpkg -r stops nothing (no systemd) and keeps the conffile; dpkg -P
#      removes the conffile, /etc/uncored, the state file /run/uncored/ledger
#      and the enable symlinks; then nothing is left but the system user:
#      apart from the user's lines in /etc/passwd, group, shadow and
#      gshadow and dpkg's own records and log, the upper layer holds no
#      change.
#
# Exit 77 (skipped), saying why, where the tools are missing (dpkg-
# buildpackage, debhelper, lintian, systemd-analyze, systemd-socket-
# activate, unshare, curl), when not root, not on amd64, in a sanitizer
# build (the package is built with Debian's flags either way: testing it
# once is enough), or when an overlay of / cannot be mounted.
#
# usage: package.sh SANITIZE    (SANITIZE: the build's b_sanitize, "none" for a plain build)
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
sanitize=${1:-none}
[ "$sanitize" = none ] || skip "sanitizer build ($sanitize): the package is tested in the plain build"
for tool in dpkg-buildpackage dpkg-checkbuilddeps dh lintian systemd-analyze systemd-socket-activate \
	unshare chroot curl; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool not found (install .ci/install-deps' packaging tools)"
done
[ "$(id -u)" = 0 ] || skip "not root: dpkg -i into a throwaway root needs mount and chroot"
[ "$(dpkg --print-architecture)" = amd64 ] || skip "the package is Architecture: amd64"

# 1. Build, in a copy of the source tree (dpkg-buildpackage writes into the
# tree and its parent).  A git work tree gives its tracked and untracked,
# not ignored files; otherwise everything but build directories.
pkgdir="$TEST_TMP/pkg"
mkdir -p "$pkgdir/uncored"
if git -C "$UNCORED_SOURCE_ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$UNCORED_SOURCE_ROOT" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - --) |
		tar -C "$pkgdir/uncored" -xf -
else
	tar -C "$UNCORED_SOURCE_ROOT" --exclude='./build*' --exclude='./obj-*' --exclude=./.git \
		--exclude=./tests/artifacts -cf - . | tar -C "$pkgdir/uncored" -xf -
fi
cd "$pkgdir/uncored"
dpkg-checkbuilddeps || fail "Build-Depends not installed (see above)"
version=$(dpkg-parsechangelog -S Version)
meson_version=$(sed -n "s/^ *version : '\([^']*\)'.*/\1/p" meson.build | head -n 1)
[ "$version" = "$meson_version" ] || fail "debian/changelog has $version, meson.build $meson_version"
# The package build runs the unit suite (dh_auto_test), which the plain
# build has run already.  Where package-clean-root runs too (CI), that test
# builds the package with its tests on a fresh root, and this build takes
# the nocheck option: the tests are neither built nor run a third time.
if [ "${CI:-}" = true ] || [ "${UNCORED_PACKAGE_CLEAN_ROOT:-}" = 1 ]; then
	DEB_BUILD_OPTIONS="nocheck${DEB_BUILD_OPTIONS:+ $DEB_BUILD_OPTIONS}"
	export DEB_BUILD_OPTIONS
fi
start=$(date +%s)
dpkg-buildpackage -b -us -uc >"$pkgdir/build.log" 2>&1 || {
	tail -n 60 "$pkgdir/build.log" >&2
	fail "dpkg-buildpackage failed"
}
echo "build: ok ($(($(date +%s) - start)) s)"
deb="$pkgdir/uncored_${version}_amd64.deb"
[ -f "$deb" ] || fail "no $deb; built: $(ls "$pkgdir")"
cd "$pkgdir"

# 2. Inspect.
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|; s|/$||' | grep -v '^$' | sort >files
missing=""
for f in /usr/sbin/uncored /etc/uncored/uncored.conf /lib/systemd/system/uncored.service \
	/lib/systemd/system/uncored.socket /usr/lib/sysusers.d/uncored.conf \
	/usr/lib/modules-load.d/uncored.conf /usr/share/man/man8/uncored.8.gz \
	/usr/share/man/man5/uncored.conf.5.gz /usr/share/uncored/scenarios/dram-heatwave.ini \
	/usr/share/doc/uncored/copyright; do
	grep -qx "$f" files || missing="$missing $f"
done
[ -z "$missing" ] || fail "missing from the package:$missing"
stray=$(grep -v -e '^/usr/share/uncored' -e '^/usr/share/doc' -e '^/usr/share/man' \
	-e '^/usr/share/lintian\(/overrides\(/uncored\)\?\)\?$' \
	-e '^/etc/uncored' -e '^/lib/systemd/system' -e '^/usr/lib/sysusers.d' \
	-e '^/usr/lib/modules-load.d' -e '^/usr/sbin' \
	-e '^/$' -e '^/etc$' -e '^/lib$' -e '^/lib/systemd$' -e '^/usr$' -e '^/usr/lib$' -e '^/usr/share$' \
	files || true)
[ -z "$stray" ] || fail "unexpected files in the package: $stray"
echo "files: ok ($(wc -l <files) entries)"

dpkg-deb -e "$deb" control
[ "$(cat control/conffiles)" = /etc/uncored/uncored.conf ] ||
	fail "conffiles: '$(cat control/conffiles)', expected /etc/uncored/uncored.conf"
echo "conffiles: ok"
grep -q 'systemd-sysusers .*uncored.conf' control/postinst || fail "postinst does not create the user"
for unit in uncored.service uncored.socket; do
	grep -q "deb-systemd-helper enable '$unit'" control/postinst || fail "postinst does not enable $unit"
	grep -q "deb-systemd-invoke \$_dh_action .*'$unit'" control/postinst ||
		fail "postinst does not start or restart $unit"
	grep -q "deb-systemd-invoke stop .*'$unit'" control/prerm || fail "prerm does not stop $unit"
	grep -q "deb-systemd-helper purge .*'$unit'" control/postrm || fail "postrm does not purge $unit"
done
grep -q '_dh_action=restart' control/postinst || fail "postinst does not restart on upgrade"
grep -q 'rm -f /run/uncored/ledger' control/postrm || fail "postrm does not remove the state file"
for s in postinst prerm postrm; do
	sh -n "control/$s" || fail "$s: syntax error"
done
grep -q '^Depends:.*systemd' control/control || fail "no dependency for systemd-sysusers: $(grep ^Depends control/control)"
echo "maintainer scripts: ok"

lintian --fail-on error,warning \
	"$pkgdir/uncored_${version}_amd64.changes" >lintian.out 2>&1 || {
	cat lintian.out >&2
	fail "lintian reports errors or warnings"
}
grep -v 'root privileges is not recommended' lintian.out || true
echo "lintian: ok"

mkdir unpacked
dpkg-deb -x "$deb" unpacked
report=$(systemd-analyze security --offline=true --no-pager unpacked/lib/systemd/system/uncored.service 2>&1) || true
exposure=$(echo "$report" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9][0-9.]*\).*/\1/p' | tail -n 1)
[ -n "$exposure" ] || fail "no exposure level: $report"
awk -v e="$exposure" 'BEGIN { exit !(e <= 2.0) }' || fail "packaged unit's exposure $exposure is above 2.0"
echo "systemd-analyze security: $exposure (limit 2.0)"
grep -qx 'ExecStart=/usr/sbin/uncored --config /etc/uncored/uncored.conf' \
	unpacked/lib/systemd/system/uncored.service || fail "packaged ExecStart= is not /usr/sbin/uncored --config /etc/uncored/uncored.conf"

# 3. Install, run, remove and purge in a throwaway root (see the top).
unshare --mount true 2>/dev/null || skip "unshare --mount is not permitted here: no throwaway root"
rc=0
unshare --mount --propagation private sh "$here/package_root.sh" "$TEST_TMP/root" "$deb" || rc=$?
[ "$rc" != 77 ] || exit 77
[ "$rc" = 0 ] || fail "install, remove and purge in the throwaway root"
echo "package: ok"
