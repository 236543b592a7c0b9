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
# own-paths: --check-config names the shipped file's state file; nothing opens it.
cat >"$TEST_TMP/want" <<EOF
$shipped: configuration ok
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
[core]
engine = kernel
CONF
rc=0
"$UNCORED_BIN" --check-config "$TEST_TMP/bad.conf" 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] || fail "bad config: exit $rc, expected 1"
grep -q "^$TEST_TMP/bad.conf:2: interval: " "$TEST_TMP/err" || fail "no located interval error: $(cat "$TEST_TMP/err")"
grep -q "^$TEST_TMP/bad.conf:3: nonsense: " "$TEST_TMP/err" || fail "no located unknown-key error"
grep -q "^$TEST_TMP/bad.conf:5: on_conflict: " "$TEST_TMP/err" || fail "no located enum error"
grep -qxF "$TEST_TMP/bad.conf:7: engine: expected auto, perf or msr, got 'kernel'" "$TEST_TMP/err" ||
	fail "no located engine error: $(cat "$TEST_TMP/err")"

# A missing config file.
rc=0
"$UNCORED_BIN" --check-config "$TEST_TMP/missing.conf" 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "missing.conf" "$TEST_TMP/err" || fail "missing config: $(cat "$TEST_TMP/err")"

# Usage errors: one line naming the problem and pointing at --help, exit 2.
# The test's own configuration, a port the kernel picks and a root of its
# own come first, so that a run the parser let through by mistake would
# touch nothing shared.
usage_error() {
	want=$1
	shift
	rc=0
	"$UNCORED_BIN" --config "$DEFAULTS_CONF" --listen 127.0.0.1:0 --root "$TEST_TMP/none" "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err" || rc=$?
	[ "$rc" = 2 ] || fail "uncored $*: exit $rc, expected 2"
	[ "$(cat "$TEST_TMP/err")" = "uncored: $want; see 'uncored --help'" ] ||
		fail "uncored $*: said '$(cat "$TEST_TMP/err")', expected 'uncored: $want; ...'"
	[ ! -s "$TEST_TMP/out" ] || fail "uncored $*: printed on stdout"
}
usage_error "--format: expected text, json or prometheus, got 'yaml'" --format yaml --once
usage_error "unknown option '--bogus'" --bogus
usage_error "unknown option '-x'" -x
usage_error "--config needs an argument" --config
usage_error "unexpected argument 'extra'" --once extra
usage_error "--json and --format text ask for different outputs" --once --json --format text
usage_error "--format prometheus and --json ask for different outputs" --once --format prometheus --json
usage_error "--json goes with --once" --json
usage_error "--once and --check-config cannot be used together" --once --check-config x.conf
usage_error "--model goes with --list-events" --once --model westmere-ep
usage_error "--model and --simulate both name the machine; give one" --list-events --model westmere-ep --simulate westmere-ep-2s
# The same format twice is no conflict.
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --json --format json --simulate westmere-ep-2s >/dev/null 2>&1 || fail "--json --format json"

# An unknown model names the known ones.
rc=0
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --simulate pentium-4 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "westmere-ep-2s" "$TEST_TMP/err" || fail "unknown model: $(cat "$TEST_TMP/err")"

# An unknown scenario names the directory and the known ones.
rc=0
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --simulate westmere-ep-2s:nope --scenario-dir "$SCENARIOS" 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -qx "uncored: --simulate 'westmere-ep-2s:nope': unknown scenario 'nope' in $SCENARIOS; known: .*conflict, counter-wrap, .*dram-heatwave, .*idle, .*prochot-storm.*" "$TEST_TMP/err" ||
	fail "unknown scenario: $(cat "$TEST_TMP/err")"

# --help names a scenario directory that exists, and its scenarios (e2e-doc_lists holds the
# documents to them).
dir=$("$UNCORED_BIN" --help | sed -n 's/^ *scenarios in \(.*\): .*/\1/p')
[ -d "$dir" ] && [ -f "$dir/idle.ini" ] || fail "--help names scenario directory '$dir'"
"$UNCORED_BIN" --help --scenario-dir "$SCENARIOS" | grep -qE "^ +scenarios in $SCENARIOS: amd-dimm-hot .* idle .* vr-prochot$" ||
	fail "--help does not list the scenarios: $("$UNCORED_BIN" --help --scenario-dir "$SCENARIOS")"
mkdir "$TEST_TMP/empty"
"$UNCORED_BIN" --help --scenario-dir "$TEST_TMP/empty" | grep -qxE " +scenarios in $TEST_TMP/empty: none" ||
	fail "--help with no scenarios: $("$UNCORED_BIN" --help --scenario-dir "$TEST_TMP/empty")"

# AMD EPYC is not refused: the Intel-only collectors say they are not applicable, and why;
# the core collector counts through perf.
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --simulate rome-2s >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
	fail "rome-2s: $(cat "$TEST_TMP/err")"
grep -q "AuthenticAMD family 23 model 0x31 (rome)" "$TEST_TMP/out" &&
	grep -q "thermal  not applicable .*no IA32_THERM_STATUS.*k10temp" "$TEST_TMP/out" &&
	grep -q "core     up " "$TEST_TMP/out" ||
	fail "rome-2s: $(cat "$TEST_TMP/out")"

# --list-events --model works for AMD generations; an unknown AMD part is refused with one sentence.
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --list-events --model turin >"$TEST_TMP/out" 2>&1 &&
	grep -q "AuthenticAMD family 26 model 0x0 (turin), from the model table" "$TEST_TMP/out" ||
	fail "--list-events --model turin: $(cat "$TEST_TMP/out")"

# A malformed scenario is refused with its location.
printf '[scenario]\nperiod = soon\n' >"$TEST_TMP/broken.ini"
rc=0
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --simulate "westmere-ep-2s:$TEST_TMP/broken.ini" 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "broken.ini:2" "$TEST_TMP/err" || fail "broken scenario: $(cat "$TEST_TMP/err")"

# A rule for hardware the model lacks is refused with its location: slot 1 on a board with one
# DIMM per channel, a DIMM sensor on Westmere-EP (no HSMP), a frequency limit on Milan (HSMP
# without GET_SOCKET_FREQ_LIMIT), a channel beyond the model's.
write_conf "$TEST_TMP/u.conf" 0
lacks() {
	model=$1 text=$2 want=$3
	printf '%b' "$text" >"$TEST_TMP/lacks.ini"
	rc=0
	"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --simulate "$model:$TEST_TMP/lacks.ini" \
		>"$TEST_TMP/out" 2>"$TEST_TMP/err" || rc=$?
	[ "$rc" = 1 ] && grep -qxF "uncored: --simulate '$model:$TEST_TMP/lacks.ini': $TEST_TMP/lacks.ini:$want" "$TEST_TMP/err" ||
		fail "$model: exit $rc, expected ...lacks.ini:$want, got: $(cat "$TEST_TMP/err")"
}
lacks genoa-2s '[dimm-temperature.1]\nsocket = 1\nchannel = 4\nslot = 1\ncelsius = 90\n' \
	"4: slot: expected 0 or 'all' (model 'genoa-2s' has one DIMM, in slot 0, on each channel)"
lacks westmere-ep-2s '[scenario]\nperiod = 60\n[dimm-temperature.1]\nsocket = 0\nchannel = 0\nslot = 0\ncelsius = 90\n' \
	"3: [dimm-temperature.1]: expected a model whose HSMP reports DIMM temperatures (GET_DIMM_THERMAL: AMD Genoa and later), model 'westmere-ep-2s' has none"
lacks milan-2s '[frequency-limit.1]\nsocket = 0\nreason = thermal\n' \
	"1: [frequency-limit.1]: expected a model whose HSMP reports frequency-limit sources (GET_SOCKET_FREQ_LIMIT: AMD Genoa and later), model 'milan-2s' has none"
lacks genoa-2s '[dimm-temperature.1]\nsocket = 0\nchannel = 12\nslot = 0\ncelsius = 90\n' \
	"3: channel: expected 0 to 11 or 'all' (model 'genoa-2s' has 12 memory channels per socket)"
lacks sapphire-rapids-2s '[dram-throttle.1]\nsocket = 1\nchannel = 8\n' \
	"3: channel: expected 0 to 7 or 'all' (model 'sapphire-rapids-2s' has 8 memory channels per socket)"

# A rule nothing on the model reads runs, and start-up says so with its location: AMD EPYC
# counts no DRAM throttling, so dram-heatwave's DRAM rule shows nothing on genoa-2s.
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --simulate genoa-2s:dram-heatwave \
	--scenario-dir "$SCENARIOS" >"$TEST_TMP/out" 2>"$TEST_TMP/err" || fail "genoa-2s:dram-heatwave: $(cat "$TEST_TMP/err")"
line=$(grep -nxF '[dram-throttle.1]' "$SCENARIOS/dram-heatwave.ini" | cut -d: -f1)
grep -qxF "uncored: --simulate 'genoa-2s:dram-heatwave': $SCENARIOS/dram-heatwave.ini:$line: [dram-throttle.1]: nothing on model 'genoa-2s' reads it: AMD EPYC counts no DRAM throttling; a [dimm-temperature.N] rule heats a DIMM, which HSMP reports from Genoa on; the rule changes nothing there" "$TEST_TMP/err" ||
	fail "genoa-2s:dram-heatwave: no notice of its DRAM rule: $(cat "$TEST_TMP/err")"
[ "$(grep -c 'reads it' "$TEST_TMP/err")" = 1 ] || fail "genoa-2s:dram-heatwave: notices: $(cat "$TEST_TMP/err")"

# Garbage in a topology file of a device tree.
python3 "$(dirname "$0")/make_tree.py" --boot linux "$TEST_TMP/tree"
echo "banana" >"$TEST_TMP/tree/sys/devices/system/cpu/cpu3/topology/core_id"
rc=0
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --root "$TEST_TMP/tree" 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "cpu3/topology/core_id" "$TEST_TMP/err" || fail "garbage topology: $(cat "$TEST_TMP/err")"

# No msr driver: the hint says modprobe.
mkdir -p "$TEST_TMP/nomsr/sys/devices/system/cpu/cpu0/topology"
echo 0 >"$TEST_TMP/nomsr/sys/devices/system/cpu/cpu0/topology/physical_package_id"
echo 0 >"$TEST_TMP/nomsr/sys/devices/system/cpu/cpu0/topology/core_id"
rc=0
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --root "$TEST_TMP/nomsr" 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "modprobe msr" "$TEST_TMP/err" || fail "no msr driver: $(cat "$TEST_TMP/err")"

# --list-events: Westmere has the thermal events, Nehalem marks them unavailable.
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --list-events --simulate westmere-ep-2s >"$TEST_TMP/wsm"
grep -q "^  \* dram_thermal_throttled_cycles *event=0x67 umask=0x01$" "$TEST_TMP/wsm" || fail "list-events westmere: $(cat "$TEST_TMP/wsm")"
grep -q "^  \* dram_thermal_throttle_episodes *event=0x67 umask=0x01 edge cmask=1$" "$TEST_TMP/wsm" || fail "list-events episodes encoding"
grep -q "^    thermal_throttling_temp_core0 *event=0x80 umask=0x01$" "$TEST_TMP/wsm" || fail "list-events: a non-default event"
grep -q "^  \* llc_misses" "$TEST_TMP/wsm" || fail "list-events core events"
grep -q "which Linux core each one watches is documented nowhere" "$TEST_TMP/wsm" || fail "list-events: coreN mapping"
# What is always counted is not offered for event lines, which refuse it.
for name in clockticks instructions cycles ref_cycles; do
	grep -q "^    $name " "$TEST_TMP/wsm" || fail "list-events: $name not under always counted"
	grep -q "^  [* ] $name  *event=0x" "$TEST_TMP/wsm" && fail "list-events offers $name for event lines"
done
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --list-events --simulate nehalem-ep-2s >"$TEST_TMP/nhm"
grep -q "dram_thermal_throttled_cycles.*(not on this model)$" "$TEST_TMP/nhm" || fail "list-events nehalem"
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --list-events --simulate skylake-sp-2s | grep -q "uncore: not available" || fail "list-events skylake"

# --list-events --model needs no privilege and no hardware: run it as nobody,
# who reads the test's configuration.
chmod 711 "$TEST_TMP"
as_nobody() {
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"
	else
		"$@"
	fi
}
as_nobody "$UNCORED_BIN" --config "$DEFAULTS_CONF" --list-events --model westmere-ep >"$TEST_TMP/model" 2>"$TEST_TMP/err" ||
	fail "--list-events --model as nobody: $(cat "$TEST_TMP/err")"
head -1 "$TEST_TMP/model" | grep -qx "GenuineIntel family 6 model 0x2c (westmere-ep), from the model table" ||
	fail "--list-events --model header: $(head -1 "$TEST_TMP/model")"
grep -q "number of counters is read from CPUID at start" "$TEST_TMP/model" || fail "--model core block"
as_nobody "$UNCORED_BIN" --config "$DEFAULTS_CONF" --list-events --model broadwell-de | grep -q "uncore: not available" || fail "--model broadwell-de"
as_nobody "$UNCORED_BIN" --config "$DEFAULTS_CONF" --list-events --model nehalem-ep-2s | head -1 | grep -q "(nehalem-ep), from simulated" ||
	fail "--model with a simulated model"
rc=0
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --list-events --model pentium-4 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -q "^uncored: --model: unknown CPU model 'pentium-4'; known: .*westmere-ep, .*skylake-sp" "$TEST_TMP/err" &&
	grep -q "(or a simulated model: westmere-ep-2s" "$TEST_TMP/err" || fail "--model pentium-4: $(cat "$TEST_TMP/err")"
# Without --model, as nobody, the machine is read from /proc/cpuinfo.
rc=0
as_nobody "$UNCORED_BIN" --config "$DEFAULTS_CONF" --list-events >"$TEST_TMP/self" 2>"$TEST_TMP/err" || rc=$?
# Intel and AMD EPYC are listed; other parts refused with the vendor named.
vendor=$(awk -F': ' '/^vendor_id/ { print $2; exit }' /proc/cpuinfo)
if [ "$rc" = 0 ]; then
	grep -q "^$vendor family .*, from /proc/cpuinfo" "$TEST_TMP/self" || fail "--list-events here: $(cat "$TEST_TMP/self")"
else
	[ "$rc" = 1 ] && grep -q "^uncored: unsupported CPU: $vendor" "$TEST_TMP/err" ||
		fail "--list-events on this machine: $(cat "$TEST_TMP/err")"
fi
echo "cli: ok"
