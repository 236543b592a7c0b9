#!/bin/sh
# Check the systemd units: "systemd-analyze verify" accepts the service and
# socket units (with ExecStart= pointing at the freshly built binary and the
# man pages of Documentation= findable), and "systemd-analyze security"
# rates the service's exposure at 2.0 or lower.  Exit 77 (skipped) when
# systemd-analyze is not installed.
#
# usage: systemd_units.sh SOURCE_ROOT UNCORED_BINARY BUILT_SERVICE_UNIT
set -eu
src=$1
binary=$2
unit=$3
max_exposure=2.0

command -v systemd-analyze >/dev/null 2>&1 || { echo "systemd-analyze not found, skipping"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# A test copy of the units, as installed but with the build's binary.
sed "s|^ExecStart=[^ ]*/uncored |ExecStart=$binary |" "$unit" >"$tmp/uncored.service"
grep -q "^ExecStart=$binary " "$tmp/uncored.service" || { echo "no ExecStart= in $unit" >&2; exit 1; }
cp "$src/systemd/uncored.socket" "$tmp/uncored.socket"
if grep -q '@[a-z]*@' "$tmp/uncored.service"; then
	echo "unsubstituted variable left in uncored.service" >&2
	exit 1
fi

# The perf engine's needs, and no more: CAP_PERFMON among the start-up
# capabilities, perf_event_open allowed, one fd per event and CPU.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$tmp/uncored.service")
[ "$caps" = "CAP_SYS_RAWIO CAP_SETUID CAP_SETGID CAP_SETPCAP CAP_PERFMON" ] ||
	{ echo "CapabilityBoundingSet= is '$caps'" >&2; exit 1; }
grep -qx 'AmbientCapabilities=' "$tmp/uncored.service" || { echo "ambient capabilities granted" >&2; exit 1; }
grep -qx 'SystemCallFilter=perf_event_open' "$tmp/uncored.service" ||
	{ echo "perf_event_open not allowed" >&2; exit 1; }
grep -qx 'LimitNOFILE=16384' "$tmp/uncored.service" || { echo "no LimitNOFILE=16384" >&2; exit 1; }

# Documentation=man:... is checked with man(1); let it find ours.
mkdir -p "$tmp/man/man8" "$tmp/man/man5"
cp "$src/man/uncored.8" "$tmp/man/man8/"
cp "$src/man/uncored.conf.5" "$tmp/man/man5/"
export MANPATH="$tmp/man:"

cd "$tmp"
out=$(systemd-analyze verify "$tmp/uncored.service" "$tmp/uncored.socket" 2>&1) || {
	echo "$out" >&2
	echo "systemd-analyze verify failed" >&2
	exit 1
}
if [ -n "$out" ]; then
	echo "$out" >&2
	echo "systemd-analyze verify complained" >&2
	exit 1
fi
echo "verify: ok"

report=$(systemd-analyze security --offline=true --no-pager "$tmp/uncored.service" 2>&1) || true
echo "$report" | grep -v '^✓' || true
# Last line: "→ Overall exposure level for uncored.service: 1.6 OK 🙂"
exposure=$(echo "$report" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9][0-9.]*\).*/\1/p' | tail -n 1)
if [ -z "$exposure" ]; then
	echo "no overall exposure level in the report" >&2
	exit 1
fi
if awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e > m) }'; then
	echo "exposure $exposure is above $max_exposure" >&2
	exit 1
fi
echo "exposure: $exposure (limit $max_exposure)"

# The sysusers line must parse: create the user in a scratch root.
if command -v systemd-sysusers >/dev/null 2>&1; then
	mkdir -p "$tmp/root/etc"
	systemd-sysusers --root="$tmp/root" "$src/systemd/uncored.sysusers"
	grep -q '^uncored:' "$tmp/root/etc/passwd" || { echo "sysusers did not create uncored" >&2; exit 1; }
	echo "sysusers: ok"
fi
