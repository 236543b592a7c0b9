#!/bin/sh
# Command-line behaviour: version, help, config checking, and bad input of
# every kind getting one clear error and a non-zero exit, never a crash.
. "$(dirname "$0")/lib.sh"

"$UNCORED_BIN" --version | grep -q '^uncored [0-9]' || fail "--version"
"$UNCORED_BIN" --help | grep -q -- '--check-config' || fail "--help"

# The shipped configuration is valid, except that its user (created by the
# package) may be missing here.
shipped="$UNCORED_SOURCE_ROOT/conf/uncored.conf"
rc=0
"$UNCORED_BIN" --check-config "$shipped" >"$TEST_TMP/out" 2>"$TEST_TMP/err" || rc=$?
if getent passwd uncored >/dev/null; then
	[ "$rc" = 0 ] || fail "shipped conf/uncored.conf refused: $(cat "$TEST_TMP/err")"
else
	[ "$rc" = 1 ] && [ "$(cat "$TEST_TMP/err")" = "$shipped: user: no user 'uncored' on this machine (create it, for example with systemd-sysusers) (the default value)" ] ||
		fail "shipped conf/uncored.conf without its user: exit $rc: $(cat "$TEST_TMP/err")"
	printf '[daemon]\nuser = root\n' | cat "$shipped" - >"$TEST_TMP/shipped.conf"
	"$UNCORED_BIN" --check-config "$TEST_TMP/shipped.conf" >"$TEST_TMP/out" ||
		fail "shipped conf/uncored.conf with user = root refused"
	shipped="$TEST_TMP/shipped.conf"
fi
cat >"$TEST_TMP/want" <<EOF
$shipped: configuration ok
$shipped: not checked: whether [::]:9796 is free (start-up binds it, unless systemd passes the socket)
$shipped: not checked: the CPU and its msr and cpuid devices under / (start-up opens them)
$shipped: not checked: whether another uncored holds the machine or /run/uncored/ledger (start-up takes their locks)
EOF
diff "$TEST_TMP/want" "$TEST_TMP/out" >&2 || fail "--check-config output"

# A bad file: every error with file, line and key; exit 1.
cat >"$TEST_TMP/bad.conf" <<'CONF'
[daemon]
interval = 0.001
nonsense = 1
[uncore]
on_conflict = ignore
CONF
rc=0
"$UNCORED_BIN" --check-config "$TEST_TMP/bad.conf" 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] || fail "bad config: exit $rc, expected 1"
grep -q "^$TEST_TMP/bad.conf:2: interval: " "$TEST_TMP/err" || fail "no located interval error: $(cat "$TEST_TMP/err")"
grep -q "^$TEST_TMP/bad.conf:3: nonsense: " "$TEST_TMP/err" || fail "no located unknown-key error"
grep -q "^$TEST_TMP/bad.conf:5: on_conflict: " "$TEST_TMP/err" || fail "no located enum error"

# A missing config file.
rc=0
"$UNCORED_BIN" --check-config "$TEST_TMP/missing.conf" 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "missing.conf" "$TEST_TMP/err" || fail "missing config: $(cat "$TEST_TMP/err")"

# Usage errors exit 2.
rc=0
"$UNCORED_BIN" --format yaml --once 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "bad --format: exit $rc"

# An unknown model names the known ones.
rc=0
"$UNCORED_BIN" --once --simulate pentium-4 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "westmere-ep-2s" "$TEST_TMP/err" || fail "unknown model: $(cat "$TEST_TMP/err")"

# AMD is refused with one sentence naming what was found and what is supported.
rc=0
"$UNCORED_BIN" --once --simulate amd-epyc 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "AuthenticAMD" "$TEST_TMP/err" && grep -qi "intel" "$TEST_TMP/err" ||
	fail "amd-epyc: $(cat "$TEST_TMP/err")"

# A malformed scenario is refused with its location.
printf '[scenario]\nperiod = soon\n' >"$TEST_TMP/broken.ini"
rc=0
"$UNCORED_BIN" --once --simulate "westmere-ep-2s:$TEST_TMP/broken.ini" 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "broken.ini:2" "$TEST_TMP/err" || fail "broken scenario: $(cat "$TEST_TMP/err")"

# Garbage in a topology file of a device tree.
python3 "$(dirname "$0")/make_tree.py" --boot linux "$TEST_TMP/tree"
echo "banana" >"$TEST_TMP/tree/sys/devices/system/cpu/cpu3/topology/core_id"
rc=0
"$UNCORED_BIN" --once --root "$TEST_TMP/tree" 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "cpu3/topology/core_id" "$TEST_TMP/err" || fail "garbage topology: $(cat "$TEST_TMP/err")"

# No msr driver: the hint says modprobe.
mkdir -p "$TEST_TMP/nomsr/sys/devices/system/cpu/cpu0/topology"
echo 0 >"$TEST_TMP/nomsr/sys/devices/system/cpu/cpu0/topology/physical_package_id"
echo 0 >"$TEST_TMP/nomsr/sys/devices/system/cpu/cpu0/topology/core_id"
rc=0
"$UNCORED_BIN" --once --root "$TEST_TMP/nomsr" 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "modprobe msr" "$TEST_TMP/err" || fail "no msr driver: $(cat "$TEST_TMP/err")"

# --list-events: Westmere has the thermal events, Nehalem marks them unavailable.
"$UNCORED_BIN" --list-events --simulate westmere-ep-2s >"$TEST_TMP/wsm"
grep -q "dram_thermal_throttled_cycles *event=0x67 umask=0x01$" "$TEST_TMP/wsm" || fail "list-events westmere: $(cat "$TEST_TMP/wsm")"
grep -q "llc_misses" "$TEST_TMP/wsm" || fail "list-events core events"
"$UNCORED_BIN" --list-events --simulate nehalem-ep-2s >"$TEST_TMP/nhm"
grep -q "dram_thermal_throttled_cycles.*not available" "$TEST_TMP/nhm" || fail "list-events nehalem"
"$UNCORED_BIN" --list-events --simulate skylake-sp-2s | grep -q "uncore: not available" || fail "list-events skylake"
echo "cli: ok"
