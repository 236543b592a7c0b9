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

# Boot that root with systemd as PID 1 (systemd-nspawn, private network)
# and install the package there again with dpkg -i: the postinst starts
# the units under a real service manager.  The container has no
# /dev/cpu/N/msr, so the shipped service must fail once with the reason
# and not restart; with a drop-in that adds --simulate westmere-ep-2s it
# must run as the user uncored in its sandbox and answer /metrics through
# uncored.socket; an upgrade (reinstall) restarts it, remove stops it,
# purge cleans up.
chroot "$inst" apt-get install -y -q --no-install-recommends systemd-sysv curl >"$work/boot-deps.log" 2>&1 || {
	tail -n 30 "$work/boot-deps.log" >&2
	fail "cannot install systemd-sysv and curl in the root to boot"
}
umount -R -l "$inst/proc" "$inst/dev"
cp "$build/build/$deb" "$inst/root/"
# nspawn wants /run to be a tmpfs of its own (private to this namespace).
mount -t tmpfs -o mode=0755 uncored-hostrun /run
timeout 300 systemd-nspawn -D "$inst" --register=no --keep-unit --private-network -b --console=pipe \
	>"$work/boot.log" 2>&1 &
guard=$!
leader=""
for _ in $(seq 1 300); do
	nspawn=$(pgrep -P "$guard" -x systemd-nspawn || true)
	# The container's PID 1 once it is systemd (before, nspawn's helper).
	[ -n "$nspawn" ] && leader=$(pgrep -P "$nspawn" -x systemd || true)
	[ -n "$leader" ] && break
	kill -0 "$guard" 2>/dev/null || break
	sleep 0.1
done
[ -n "$leader" ] || fail "systemd-nspawn did not boot the root: $(tail -n 20 "$work/boot.log")"
stop_container() {
	kill -TERM "$nspawn" 2>/dev/null || true
	wait "$guard" 2>/dev/null || true
}
trap 'stop_container; cleanup' EXIT INT TERM
inside() {
	nsenter -t "$leader" -a "$@"
}
# Until its manager answers on the bus, then until the boot is done.
for _ in $(seq 1 600); do
	state=$(inside systemctl is-system-running --wait 2>&1) || true
	case "$state" in
	*"connect to bus"* | offline) sleep 0.1 ;;
	*) break ;;
	esac
done
case "$state" in
running | degraded) ;;
*) fail "the booted root is '$state'" ;;
esac
echo "booted with systemd $(inside systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p') as PID 1: $state"

inside dpkg -i "/root/$deb" >"$work/boot-install.log" 2>&1 || {
	cat "$work/boot-install.log" >&2
	fail "dpkg -i under systemd failed"
}
sleep 7   # past RestartSec=5s: a restart would have happened by now
show() { # show UNIT PROPERTY
	inside systemctl show -p "$2" --value "$1"
}
[ "$(show uncored.service ActiveState)" = failed ] ||
	fail "without msr the service is $(show uncored.service ActiveState), expected failed"
[ "$(show uncored.service ExecMainStatus)" = 1 ] || fail "exit status $(show uncored.service ExecMainStatus), expected 1"
[ "$(show uncored.service NRestarts)" = 0 ] || fail "restarted $(show uncored.service NRestarts) times"
inside systemctl status --no-pager uncored.service >"$work/status" 2>&1 || true
grep -q 'the msr driver is not loaded' "$work/status" ||
	fail "systemctl status does not say why: $(cat "$work/status")"
[ "$(show uncored.socket ActiveState)" = active ] || fail "uncored.socket is $(show uncored.socket ActiveState)"
echo "without msr: install ok, service failed once (status 1, 0 restarts), 'systemctl status' says: $(grep -o '/dev/cpu/0/msr: .*' "$work/status" | head -n 1)"

inside mkdir -p /etc/systemd/system/uncored.service.d
printf '[Service]\nExecStart=\nExecStart=%s --simulate westmere-ep-2s\n' \
	"$(sed -n 's/^ExecStart=//p' "$inst/lib/systemd/system/uncored.service")" \
	>"$inst/etc/systemd/system/uncored.service.d/simulate.conf"
inside systemctl daemon-reload
inside systemctl reset-failed uncored.service uncored.socket
inside systemctl start uncored.socket uncored.service || {
	inside systemctl status --no-pager uncored.service >&2 || true
	fail "uncored.service with --simulate did not start"
}
inside curl -fsS -m 10 http://127.0.0.1:9796/metrics >"$work/metrics" || fail "no /metrics through uncored.socket"
grep -q '^uncored_collector_up{collector="uncore"} 1' "$work/metrics" || fail "/metrics: uncore collector not up"
pid=$(show uncored.service MainPID)
uid=$(inside getent passwd uncored | cut -d: -f3)
inside grep -q "^Uid:[[:space:]]*$uid[[:space:]]" "/proc/$pid/status" ||
	fail "the daemon does not run as uncored ($uid): $(inside grep ^Uid "/proc/$pid/status")"
echo "uncored.socket and uncored.service (sandboxed, user uncored) started by systemd: /metrics through the socket ok"

# The server process under the unit's sandbox (uncored(8), PROCESS MODEL):
# no capability, no-new-privileges, its own seccomp filter, user uncored-http,
# no descriptor but sockets and eventfds beside the standard streams.
# The server is the child of the daemon's child, its keeper.
# (The fresh root has no procps: a child is found by its parent in /proc.)
children_of() {
	inside sh -c 'for f in /proc/[0-9]*/stat; do
		read -r p c s pp rest <"$f" && [ "$pp" = "$1" ] && echo "$p"; done' sh "$1" 2>/dev/null
}
server=
for keeper in $(children_of "$pid"); do
	server=$(children_of "$keeper" | head -n 1)
	[ -z "$server" ] || break
done
[ -n "$server" ] || fail "no server process under the daemon $pid and its keeper"
inside cat "/proc/$server/status" >"$work/server-status"
for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
	grep -q "^$cap:[[:space:]]*0000000000000000$" "$work/server-status" ||
		fail "server $cap: $(grep "^$cap" "$work/server-status")"
done
grep -q '^NoNewPrivs:[[:space:]]*1$' "$work/server-status" || fail "server without no-new-privileges"
grep -q '^Seccomp:[[:space:]]*2$' "$work/server-status" || fail "server without a seccomp filter"
http_uid=$(inside getent passwd uncored-http | cut -d: -f3)
[ -n "$http_uid" ] && [ "$http_uid" != "$uid" ] || fail "no user uncored-http of its own: '$http_uid'"
grep -q "^Uid:[[:space:]]*$http_uid[[:space:]]" "$work/server-status" ||
	fail "server uid: $(grep ^Uid "$work/server-status"), expected uncored-http's $http_uid"
inside sh -c "for f in /proc/$server/fd/*; do echo \"\${f##*/} \$(readlink \$f)\"; done" >"$work/server-fds"
while read -r n t; do
	case "$n:$t" in
	0:* | 1:* | 2:* | *:socket:* | *:anon_inode:\[eventfd\]) ;;
	*) fail "server holds fd $n -> $t" ;;
	esac
done <"$work/server-fds"
# Killed, the server takes the service down with status 3 and systemd restarts it.
inside sh -c 'kill -KILL "$1"' sh "$server"
for _ in $(seq 1 150); do
	[ "$(show uncored.service NRestarts)" = 1 ] && [ "$(show uncored.service ActiveState)" = active ] && break
	sleep 0.1
done
[ "$(show uncored.service NRestarts)" = 1 ] || fail "not restarted after the server was killed"
inside journalctl -u uncored.service --no-pager >"$work/journal" 2>&1 || true
grep -q "server process $server went away" "$work/journal" || fail "no word of the server's death"
grep -q 'status=3' "$work/journal" || fail "the daemon did not exit with status 3: $(tail -n 20 "$work/journal")"
inside curl -fsS -m 10 -o /dev/null http://127.0.0.1:9796/metrics || fail "no /metrics after the restart"
pid=$(show uncored.service MainPID)
echo "server process under the unit: no capability, no-new-privileges, seccomp, user uncored, sockets only; killed, restarted (status 3)"

inside dpkg -i "/root/$deb" >"$work/boot-upgrade.log" 2>&1 || fail "reinstall under systemd failed"
[ "$(show uncored.service ActiveState)" = active ] || fail "not active after the upgrade"
[ "$(show uncored.service MainPID)" != "$pid" ] || fail "the upgrade did not restart the service"
inside journalctl -u uncored.service --no-pager >"$work/journal" 2>&1 || true
grep -q 'stopped, every register restored' "$work/journal" || fail "no clean stop before the restart"
echo "upgrade: restarted, the old daemon stopped cleanly"

inside dpkg -r uncored >"$work/boot-remove.log" 2>&1 || fail "dpkg -r under systemd failed"
[ "$(show uncored.service ActiveState)" = inactive ] || fail "remove left the service $(show uncored.service ActiveState)"
[ "$(show uncored.socket ActiveState)" = inactive ] || fail "remove left the socket $(show uncored.socket ActiveState)"
inside rm -r /etc/systemd/system/uncored.service.d
inside dpkg -P uncored >"$work/boot-purge.log" 2>&1 || fail "dpkg -P under systemd failed"
for f in /etc/uncored /run/uncored /etc/systemd/system/multi-user.target.wants/uncored.service \
	/etc/systemd/system/sockets.target.wants/uncored.socket; do
	! inside test -e "$f" || fail "purge left $f"
done
inside getent passwd uncored >/dev/null || fail "purge removed the system user"
inside systemctl daemon-reload
failed=$(inside systemctl list-units --failed --plain --no-legend | grep uncored || true)
[ -z "$failed" ] || fail "failed units left: $failed"
echo "remove stopped both units; purge removed the configuration, the state directory and the links, kept the user"
