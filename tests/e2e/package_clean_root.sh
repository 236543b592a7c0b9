#!/bin/sh
# Run by package_clean.sh under "unshare --mount": every mount made here
# (by debootstrap too) is private to this process and vanishes with it.
# Nothing here removes files; package_clean.sh deletes WORKDIR afterwards.
#
# usage: package_clean_root.sh WORKDIR SOURCE_COPY
set -eu
work=$1
src=$2
mirror=${UNCORED_DEBIAN_MIRROR:-http://deb.debian.org/debian}
base="$work/base"
build="$work/build"
inst="$work/install"
export DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# The mounts of one root: /proc and a /dev of its own (a tmpfs with the
# usual nodes, never the host's).
enter() {
	mount -t proc proc "$1/proc"
	mount -t tmpfs -o mode=0755 uncored-dev "$1/dev"
	mknod -m 0666 "$1/dev/null" c 1 3
	mknod -m 0666 "$1/dev/zero" c 1 5
	mknod -m 0666 "$1/dev/full" c 1 7
	mknod -m 0666 "$1/dev/random" c 1 8
	mknod -m 0666 "$1/dev/urandom" c 1 9
	ln -s /proc/self/fd "$1/dev/fd"
	cp /etc/resolv.conf "$1/etc/resolv.conf"
}

cleanup() {
	for r in "$build" "$inst" "$base"; do
		umount -R -l "$r/proc" 2>/dev/null || true
		umount -R -l "$r/dev" 2>/dev/null || true
	done
}
trap cleanup EXIT INT TERM

[ "$(readlink /proc/self/ns/mnt)" != "$(readlink /proc/1/ns/mnt)" ] ||
	fail "not in a mount namespace of its own: refusing to mount anything"
mkdir -p "$work"
t0=$(date +%s)
debootstrap --variant=minbase bookworm "$base" "$mirror" >"$work/debootstrap.log" 2>&1 || {
	tail -n 30 "$work/debootstrap.log" >&2
	fail "debootstrap bookworm from $mirror failed"
}
cp -a "$base" "$build"
cp -a "$base" "$inst"
t1=$(date +%s)
echo "debootstrap: ok ($((t1 - t0)) s)"

# Build with only build-essential and the Build-Depends.
enter "$build"
mkdir "$build/build"
cp -a "$src" "$build/build/uncored"
{
	chroot "$build" apt-get update -q &&
		chroot "$build" apt-get install -y -q --no-install-recommends build-essential &&
		chroot "$build" sh -c 'cd /build/uncored && apt-get build-dep -y -q --no-install-recommends ./'
} >"$work/deps.log" 2>&1 || {
	tail -n 30 "$work/deps.log" >&2
	fail "cannot install build-essential and the Build-Depends"
}
chroot "$build" sh -c 'cd /build/uncored && dpkg-checkbuilddeps && dpkg-buildpackage -b -us -uc' \
	>"$work/build.log" 2>&1 || {
	tail -n 60 "$work/build.log" >&2
	fail "dpkg-buildpackage failed in a root with only the Build-Depends"
}
grep -q 'meson test --suite unit' "$work/build.log" || fail "the package build ran no unit tests"
deb=$(cd "$build/build" && ls uncored_*_amd64.deb)
t2=$(date +%s)
echo "build with only the Build-Depends: ok, unit tests run ($((t2 - t1)) s)"

# Again without cmocka, with the nocheck profile.
chroot "$build" apt-get purge -y -q libcmocka-dev libcmocka0 >"$work/purge-cmocka.log" 2>&1 ||
	fail "cannot remove cmocka: $(tail -n 5 "$work/purge-cmocka.log")"
mkdir "$build/nocheck"
cp -a "$src" "$build/nocheck/uncored"
chroot "$build" sh -c 'cd /nocheck/uncored && DEB_BUILD_PROFILES=nocheck DEB_BUILD_OPTIONS=nocheck dpkg-checkbuilddeps &&
	DEB_BUILD_PROFILES=nocheck DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -b -us -uc' >"$work/nocheck.log" 2>&1 || {
	tail -n 60 "$work/nocheck.log" >&2
	fail "the nocheck build failed without cmocka"
}
dpkg-deb -c "$build/build/$deb" | awk '{ print $6 }' | sort >"$work/files.check"
dpkg-deb -c "$build/nocheck/$deb" | awk '{ print $6 }' | sort >"$work/files.nocheck"
cmp -s "$work/files.check" "$work/files.nocheck" || fail "the nocheck package has other files"
t3=$(date +%s)
echo "nocheck build without cmocka: ok, same files ($((t3 - t2)) s)"

# Install with apt into a fresh root: apt must find every dependency.
enter "$inst"
cp "$build/build/$deb" "$inst/tmp/"
{
	chroot "$inst" apt-get update -q &&
		chroot "$inst" apt-get install -y -q --no-install-recommends "/tmp/$deb"
} >"$work/install.log" 2>&1 || {
	tail -n 30 "$work/install.log" >&2
	fail "apt-get install ./$deb failed on a fresh root"
}
chroot "$inst" getent passwd uncored >/dev/null || fail "the install did not create the user uncored"
chroot "$inst" /usr/sbin/uncored --once --simulate westmere-ep-2s >"$work/once" 2>&1 || {
	cat "$work/once" >&2
	fail "uncored --once --simulate westmere-ep-2s failed on a fresh root"
}
grep -q '^socket 1:' "$work/once" || fail "--once printed no socket 1: $(cat "$work/once")"
chroot "$inst" apt-get purge -y -q uncored >"$work/purge.log" 2>&1 || {
	tail -n 30 "$work/purge.log" >&2
	fail "apt-get purge uncored failed"
}
[ ! -e "$inst/etc/uncored" ] || fail "purge left /etc/uncored"
[ ! -e "$inst/usr/sbin/uncored" ] || fail "purge left /usr/sbin/uncored"
chroot "$inst" getent passwd uncored >/dev/null || fail "purge removed the system user"
t4=$(date +%s)
echo "apt install on a fresh root, --once --simulate, purge: ok ($((t4 - t3)) s)"
