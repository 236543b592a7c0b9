#!/bin/sh
# The Debian package on a fresh Debian 12: debootstrap a minimal bookworm
# root, install build-essential and the Build-Depends there (apt-get
# build-dep) and nothing else, build the package with its unit tests, then
# again with the nocheck profile after removing cmocka; install the .deb
# with apt into a second fresh root, where apt must find every dependency,
# check that the user is created and that the binary runs --once --simulate
# westmere-ep-2s, then purge it.  This proves the Build-Depends and Depends
# complete; package.sh checks the package itself.  Then boot that root with
# systemd as PID 1 (systemd-nspawn, private network) and install the
# package under it: without an msr driver (the container has none) the
# service fails once with the reason and is not restarted, and the install
# succeeds; with a drop-in adding --simulate, systemd starts uncored.socket
# and the sandboxed uncored.service, which answers /metrics through the
# socket as the user uncored; an upgrade restarts it, remove stops both
# units, purge cleans up.
#
# Needs debootstrap and Debian's package mirror ($UNCORED_DEBIAN_MIRROR,
# default http://deb.debian.org/debian) and takes about four minutes, so it
# runs only in CI (CI=true) or with UNCORED_PACKAGE_CLEAN_ROOT=1, and is
# skipped (exit 77) otherwise, as it is without debootstrap, not as root,
# not on amd64 and in a sanitizer build.  Everything happens under
# "unshare --mount" (package_clean_root.sh); the roots live in the test's
# temporary directory, removed at the end.
#
# usage: package_clean.sh SANITIZE    (the build's b_sanitize)
. "$(dirname "$0")/lib.sh"

here=$(cd "$(dirname "$0")" && pwd)
sanitize=${1:-none}
[ "$sanitize" = none ] || skip "sanitizer build ($sanitize): the package is tested in the plain build"
[ "${CI:-}" = true ] || [ "${UNCORED_PACKAGE_CLEAN_ROOT:-}" = 1 ] ||
	skip "set UNCORED_PACKAGE_CLEAN_ROOT=1 to build and install in fresh debootstrap roots (needs Debian's mirror, about 4 min)"
for tool in debootstrap unshare chroot systemd-nspawn nsenter pgrep; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool not found (install .ci/install-deps' packaging tools)"
done
[ "$(id -u)" = 0 ] || skip "not root: debootstrap and chroot need root"
[ "$(dpkg --print-architecture)" = amd64 ] || skip "the package is Architecture: amd64"

# The source as package.sh takes it.
mkdir -p "$TEST_TMP/src"
if git -C "$UNCORED_SOURCE_ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$UNCORED_SOURCE_ROOT" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - --) |
		tar -C "$TEST_TMP/src" -xf -
else
	tar -C "$UNCORED_SOURCE_ROOT" --exclude='./build*' --exclude='./obj-*' --exclude=./.git \
		--exclude=./tests/artifacts -cf - . | tar -C "$TEST_TMP/src" -xf -
fi
unshare --mount true 2>/dev/null || skip "unshare --mount is not permitted here"
rc=0
unshare --mount --propagation private sh "$here/package_clean_root.sh" "$TEST_TMP/work" "$TEST_TMP/src" || rc=$?
[ "$rc" != 77 ] || exit 77
[ "$rc" = 0 ] || fail "build or install in a fresh Debian 12 root"
echo "package on a fresh Debian 12: ok"
