#!/bin/sh
# Install, run, remove and purge the package in a throwaway root: run by
# package.sh under "unshare --mount", so every mount made here is private to
# this process and vanishes with it.  See package.sh for what is checked and
# why the root is an overlay of this machine's own.
#
# Nothing here removes files: on exit the mounts are undone (trap), and
# package.sh deletes WORKDIR afterwards, when the mounts no longer exist.
# The root gets its own /dev (a tmpfs with null, zero, full, random and
# urandom), never the host's.
#
# usage: package_root.sh WORKDIR DEB
set -eu
work=$1
deb=$2
here=$(cd "$(dirname "$0")" && pwd)
layer="$work/layer"
root="$work/root"
PIDS=""

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

# A port free a moment ago (the caller retries when it is taken meanwhile).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

cleanup() {
	for pid in $PIDS; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in $PIDS; do
		wait "$pid" 2>/dev/null || true
	done
	umount -R -l "$root" 2>/dev/null || true
	umount -l "$layer" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

[ "$(readlink /proc/self/ns/mnt)" != "$(readlink /proc/1/ns/mnt)" ] ||
	fail "not in a mount namespace of its own: refusing to mount anything"
mkdir -p "$layer" "$root"
mount -t tmpfs -o mode=0755 uncored-layer "$layer" || skip "cannot mount a tmpfs"
mkdir "$layer/upper" "$layer/work"
mount -t overlay -o "lowerdir=/,upperdir=$layer/upper,workdir=$layer/work" uncored-root "$root" ||
	skip "cannot mount an overlay of / (no throwaway root)"
[ -s "$root/var/lib/dpkg/status" ] && [ -x "$root/usr/bin/dpkg" ] ||
	skip "the overlay of / has no dpkg (is /var or /usr a file system of its own?)"
mount -t proc proc "$root/proc"
mount -t tmpfs -o mode=0755 uncored-dev "$root/dev"
mknod -m 0666 "$root/dev/null" c 1 3
mknod -m 0666 "$root/dev/zero" c 1 5
mknod -m 0666 "$root/dev/full" c 1 7
mknod -m 0666 "$root/dev/random" c 1 8
mknod -m 0666 "$root/dev/urandom" c 1 9
ln -s /proc/self/fd "$root/dev/fd"
# Fresh /run and /tmp: no /run/systemd/system, so nothing is started; and
# what lands there is not part of the upper layer.
mount -t tmpfs -o mode=0755 uncored-run "$root/run"
mount -t tmpfs -o mode=1777 uncored-tmp "$root/tmp"
mkdir "$root/run/pkg"
cp "$deb" "$root/run/pkg/"
debname=/run/pkg/$(basename "$deb")
TEST_TMP="$work/files"
mkdir -p "$TEST_TMP"

in_root() {
	chroot "$root" "$@"
}

# The user must be created by the install, so it must not exist before.
if in_root dpkg -s uncored >/dev/null 2>&1; then
	in_root dpkg -P uncored >/dev/null
fi
for u in uncored uncored-http; do
	if in_root getent passwd "$u" >/dev/null; then
		in_root userdel "$u"
	fi
	if in_root getent group "$u" >/dev/null; then
		in_root groupdel "$u"
	fi
done

# What the upper layer holds before the install: one line per path, with
# the content's checksum for files and the target for links.
layer_state() {
	(
		cd "$layer/upper"
		find . ! -type f -printf '%y %p %l\n'
		find . -type f -exec md5sum {} + | awk '{ print "f", $2, $1 }'
	) | sort
}
layer_state >"$TEST_TMP/layer.before"
for f in passwd group shadow gshadow; do
	cp "$root/etc/$f" "$TEST_TMP/$f.before"
done

# Install.
in_root dpkg -i "$debname" >"$TEST_TMP/install.log" 2>&1 || {
	cat "$TEST_TMP/install.log" >&2
	fail "dpkg -i failed"
}
in_root dpkg -s uncored | grep -q '^Status: install ok installed' || fail "not installed after dpkg -i"
for f in /usr/sbin/uncored /etc/uncored/uncored.conf /lib/systemd/system/uncored.service \
	/lib/systemd/system/uncored.socket /usr/lib/sysusers.d/uncored.conf \
	/usr/lib/modules-load.d/uncored.conf /usr/share/man/man8/uncored.8.gz; do
	[ -e "$root$f" ] || fail "$f not installed"
done
user=$(in_root getent passwd uncored) || fail "the install did not create the user uncored"
uid=$(echo "$user" | cut -d: -f3)
[ "$uid" -lt 1000 ] || fail "uncored is not a system user: $user"
# The HTTP server's own user (server_user): another uid than the hardware side's.
http_user=$(in_root getent passwd uncored-http) || fail "the install did not create the user uncored-http"
http_uid=$(echo "$http_user" | cut -d: -f3)
[ "$http_uid" -lt 1000 ] && [ "$http_uid" != "$uid" ] ||
	fail "uncored-http is not a system user of its own: $http_user"
case "$user" in
*:/usr/sbin/nologin | *:/sbin/nologin) ;;
*) fail "uncored can log in: $user" ;;
esac
[ -L "$root/etc/systemd/system/multi-user.target.wants/uncored.service" ] ||
	fail "uncored.service not enabled"
[ -L "$root/etc/systemd/system/sockets.target.wants/uncored.socket" ] ||
	fail "uncored.socket not enabled"
echo "install: ok (user uncored uid $uid, uncored.service and uncored.socket enabled)"

# The installed binary and its paths.
in_root /usr/sbin/uncored --once --simulate westmere-ep-2s >"$TEST_TMP/once" 2>&1 || {
	cat "$TEST_TMP/once" >&2
	fail "the installed uncored --once --simulate westmere-ep-2s failed"
}
grep -q '^socket 1:' "$TEST_TMP/once" || fail "--once printed no socket 1: $(cat "$TEST_TMP/once")"
in_root /usr/sbin/uncored --help >"$TEST_TMP/help"
grep -q '(default /etc/uncored/uncored.conf)' "$TEST_TMP/help" || fail "--help: default config is not /etc/uncored/uncored.conf"
grep -q 'scenarios in /usr/share/uncored/scenarios: .*dram-heatwave' "$TEST_TMP/help" || fail "--help: scenarios are not in /usr/share/uncored/scenarios"
in_root /usr/sbin/uncored --check-config /etc/uncored/uncored.conf >/dev/null ||
	fail "the shipped configuration does not pass --check-config"
zcat "$root/usr/share/man/man8/uncored.8.gz" | grep -q '^\.I /etc/uncored/uncored.conf' ||
	fail "uncored(8) does not name /etc/uncored/uncored.conf"
echo "installed binary: ok (--once --simulate westmere-ep-2s, --help, --check-config)"

# The packaged unit's command line under socket activation (see package.sh).
execstart=$(sed -n 's/^ExecStart=//p' "$root/lib/systemd/system/uncored.service")
mkdir -m 0755 "$root/run/notify"
timeout 60 python3 "$here/notify_listen.py" "$root/run/notify/sock" 50 >"$TEST_TMP/notes" &
listener=$!
PIDS="$PIDS $listener"
for _ in $(seq 1 300); do [ -S "$root/run/notify/sock" ] && break; sleep 0.1; done
[ -S "$root/run/notify/sock" ] || fail "notify socket not created"
chmod 0666 "$root/run/notify/sock"   # the daemon has dropped to uncored when it sends READY=1
# systemd-socket-activate takes no port 0: a port that was free a moment ago,
# and another when a test running beside this one took it meanwhile.
for try in 1 2 3 4 5; do
	port=$(free_port)
	# shellcheck disable=SC2086 # ExecStart= is a command line
	timeout 60 systemd-socket-activate -l "127.0.0.1:$port" -E NOTIFY_SOCKET=/run/notify/sock \
		chroot "$root" $execstart --simulate westmere-ep-2s >"$TEST_TMP/daemon.log" 2>&1 &
	daemon=$!
	PIDS="$PIDS $daemon"
	for _ in $(seq 1 300); do
		grep -q '^Listening on ' "$TEST_TMP/daemon.log" && break
		kill -0 "$daemon" 2>/dev/null || break
		sleep 0.1
	done
	grep -q '^Listening on ' "$TEST_TMP/daemon.log" && break
	grep -q 'Address already in use' "$TEST_TMP/daemon.log" && [ "$try" -lt 5 ] ||
		{ cat "$TEST_TMP/daemon.log" >&2; fail "systemd-socket-activate did not listen"; }
	wait "$daemon" 2>/dev/null || true
done
for _ in $(seq 1 300); do
	curl -fs -o /dev/null "http://127.0.0.1:$port/healthz" && break
	kill -0 "$daemon" 2>/dev/null || break
	sleep 0.1
done
curl -fsS "http://127.0.0.1:$port/metrics" >"$TEST_TMP/metrics" || {
	cat "$TEST_TMP/daemon.log" >&2
	fail "no /metrics through the passed socket"
}
grep -q '^uncored_collector_up{collector="uncore"} 1' "$TEST_TMP/metrics" ||
	fail "/metrics: uncore collector not up: $(grep collector_up "$TEST_TMP/metrics")"
# The server process (uncored(8), PROCESS MODEL): the child of the daemon's
# child (its keeper), as uncored-http, with no capability, no-new-privileges
# and its seccomp filter.  timeout(1) runs systemd-socket-activate as its
# child, which with chroot execs the daemon in the same process.
hw=$(pgrep -P "$daemon") || fail "no daemon under timeout $daemon"
[ "$(cat "/proc/$hw/comm")" = uncored ] || fail "process $hw is $(cat "/proc/$hw/comm"), not uncored"
keeper=$(pgrep -P "$hw") || fail "no server keeper under the daemon $hw"
server=$(pgrep -P "$keeper") || fail "no server process under the keeper $keeper"
for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
	grep -q "^$cap:[[:space:]]*0000000000000000$" "/proc/$server/status" ||
		fail "server $cap: $(grep "^$cap" "/proc/$server/status")"
done
grep -q '^NoNewPrivs:[[:space:]]*1$' "/proc/$server/status" || fail "server without no-new-privileges"
grep -q '^Seccomp:[[:space:]]*2$' "/proc/$server/status" || fail "server without a seccomp filter"
grep -q "^Uid:[[:space:]]*$http_uid[[:space:]]" "/proc/$server/status" ||
	fail "server uid: $(grep ^Uid "/proc/$server/status"), expected uncored-http's $http_uid"
for fd in /proc/"$server"/fd/*; do
	t=$(readlink "$fd") || continue
	case "${fd##*/}:$t" in
	0:* | 1:* | 2:* | *:socket:* | *:anon_inode:\[eventfd\]) ;;
	*) fail "server holds fd ${fd##*/} -> $t" ;;
	esac
done
kill -TERM "$daemon"
wait "$daemon" || true
wait "$listener" || true
grep -q 'stopped, every register restored' "$TEST_TMP/daemon.log" ||
	fail "no clean stop: $(cat "$TEST_TMP/daemon.log")"
grep -qx 'READY=1' "$TEST_TMP/notes" || fail "no READY=1: $(cat "$TEST_TMP/notes")"
grep -qx 'STOPPING=1' "$TEST_TMP/notes" || fail "no STOPPING=1: $(cat "$TEST_TMP/notes")"
echo "socket activation: ok (packaged ExecStart= as user uncored, READY=1, /metrics through the passed socket, the server process confined)"

# A changed conffile survives a reinstall.
echo "# changed by the administrator" >>"$root/etc/uncored/uncored.conf"
in_root dpkg -i --force-confold "$debname" >"$TEST_TMP/reinstall.log" 2>&1 || {
	cat "$TEST_TMP/reinstall.log" >&2
	fail "reinstall failed"
}
grep -q '^# changed by the administrator' "$root/etc/uncored/uncored.conf" ||
	fail "reinstall replaced the changed conffile"
echo "reinstall: ok (changed conffile kept)"

# Remove: the program goes, the configuration stays.
in_root dpkg -r uncored >"$TEST_TMP/remove.log" 2>&1 || {
	cat "$TEST_TMP/remove.log" >&2
	fail "dpkg -r failed"
}
[ ! -e "$root/usr/sbin/uncored" ] || fail "dpkg -r left /usr/sbin/uncored"
[ ! -e "$root/lib/systemd/system/uncored.service" ] || fail "dpkg -r left uncored.service"
[ -f "$root/etc/uncored/uncored.conf" ] || fail "dpkg -r removed the configuration"
echo "remove: ok (configuration kept)"

# Purge: the configuration, the state file and the enable links go; the
# user stays.
mkdir -p "$root/run/uncored"
echo "a state file" >"$root/run/uncored/ledger"
in_root dpkg -P uncored >"$TEST_TMP/purge.log" 2>&1 || {
	cat "$TEST_TMP/purge.log" >&2
	fail "dpkg -P failed"
}
for f in /etc/uncored /run/uncored /etc/systemd/system/multi-user.target.wants/uncored.service \
	/etc/systemd/system/sockets.target.wants/uncored.socket; do
	[ ! -e "$root$f" ] && [ ! -L "$root$f" ] || fail "dpkg -P left $f"
done
left=$(cd "$root/var/lib/dpkg/info" && ls | grep '^uncored\.' || true)
[ -z "$left" ] || fail "dpkg -P left dpkg records: $left"
in_root getent passwd uncored >/dev/null || fail "dpkg -P removed the system user"
in_root getent passwd uncored-http >/dev/null || fail "dpkg -P removed the system user uncored-http"

# Nothing else is left: every change in the upper layer since before the
# install is the users' entries in the account files, dpkg's own records
# and logs, or the manual page index.
for f in passwd group shadow gshadow; do
	extra=$(diff "$TEST_TMP/$f.before" "$root/etc/$f" | grep '^[<>]' | grep -v '^> uncored\(-http\)\?:' || true)
	[ -z "$extra" ] || fail "/etc/$f changed beyond the uncored and uncored-http entries: $extra"
done
# A directory that this machine has too was only copied up (an entry in it
# came and went).
layer_state >"$TEST_TMP/layer.after"
changes=$(comm -13 "$TEST_TMP/layer.before" "$TEST_TMP/layer.after" |
	while read -r type path _; do
		[ "$type" = d ] && [ -d "${path#.}" ] || echo "$path"
	done |
	grep -v -e '^\./etc/\(passwd\|group\|shadow\|gshadow\)-\?$' -e '^\./etc/\.pwd\.lock$' \
		-e '^\./var/lib/dpkg/' \
		-e '^\./var/log/' -e '^\./var/cache/man/' -e '^\./var/cache/debconf/' \
		-e '^\./var/lib/systemd/deb-systemd-helper-enabled$' || true)
[ -z "$changes" ] || fail "left after the purge: $changes"
printf "changed in the throwaway root by install, reinstall, remove and purge:"
comm -13 "$TEST_TMP/layer.before" "$TEST_TMP/layer.after" |
	awk '$1 != "d" && $2 !~ /CACHEDIR.TAG$/ { printf " %s", $2 } END { print "" }'
echo "purge: ok (only the system user is left)"
