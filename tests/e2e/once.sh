#!/bin/sh
# uncored --once on simulated hardware: the JSON, text and Prometheus forms.
. "$(dirname "$0")/lib.sh"

UNCORED_TEST_INTERVAL=1 write_conf "$TEST_TMP/u.conf" 9

"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --json --simulate westmere-ep-2s:dram-heatwave \
	>"$TEST_TMP/once.json" 2>"$TEST_TMP/log" || { cat "$TEST_TMP/log"; fail "--once --json failed"; }
s0=$(jq '.sockets[] | select(.socket == 0) | .uncore.events.dram_thermal_throttled_cycles' "$TEST_TMP/once.json")
s1=$(jq '.sockets[] | select(.socket == 1) | .uncore.events.dram_thermal_throttled_cycles' "$TEST_TMP/once.json")
[ "$s0" = 0 ] || fail "socket 0 DRAM throttled cycles: '$s0', expected 0"
[ -n "$s1" ] && [ "$s1" -gt 0 ] || fail "socket 1 DRAM throttled cycles: '$s1', expected > 0"
jq -e '.cpu.model == 44 and .cpu.vendor == "GenuineIntel"' "$TEST_TMP/once.json" >/dev/null || fail "cpu identity"
jq -e '[.sockets[].cores | length] == [6, 6]' "$TEST_TMP/once.json" >/dev/null || fail "cores per socket"
jq -e '.cpus | length == 24' "$TEST_TMP/once.json" >/dev/null || fail "cpus"
jq -e '[.cpus[] | select(.instructions > 0)] | length == 24' "$TEST_TMP/once.json" >/dev/null || fail "core counters"
jq -e '.collectors | map(select(.up and .state == "up")) | length == 3' "$TEST_TMP/once.json" >/dev/null || fail "collectors up"

# Text table.
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --simulate westmere-ep-2s:dram-heatwave >"$TEST_TMP/once.txt" 2>"$TEST_TMP/log" ||
	fail "--once text failed"
grep -qi "socket 1" "$TEST_TMP/once.txt" || fail "text table: $(cat "$TEST_TMP/once.txt")"
grep -qi "ipc" "$TEST_TMP/once.txt" || fail "text table has no IPC"

# Episodes are rows of the table, not log lines: one over within the interval, one running
# through it, one first seen at its end.  The second sample comes 2 s after the first, which
# comes before 1 s of simulated time has passed.
cat >"$TEST_TMP/episodes.ini" <<'EOF'
[scenario]
description = core 1 throttled for the first second, core 2 throughout, socket 1 DRAM from the start

[core-throttle.1]
socket = 0
core = 1
start = 0
end = 1

[core-throttle.2]
socket = 0
core = 2
start = 0

[dram-throttle.1]
socket = 1
start = 0
EOF
UNCORED_TEST_INTERVAL=2 write_conf "$TEST_TMP/u2.conf" 9
"$UNCORED_BIN" --config "$TEST_TMP/u2.conf" --once --simulate "westmere-ep-2s:$TEST_TMP/episodes.ini" \
	>"$TEST_TMP/episodes.txt" 2>"$TEST_TMP/log" || { cat "$TEST_TMP/log"; fail "--once with episodes failed"; }
grep -q 'throttl' "$TEST_TMP/log" && fail "episodes logged besides the table: $(cat "$TEST_TMP/log")"
sed -n '/^episodes:$/,/^$/p' "$TEST_TMP/episodes.txt" | sed 's/after [0-9]*\.[0-9] s$/after N s/' >"$TEST_TMP/episodes.got"
cat >"$TEST_TMP/episodes.want" <<'EOF'
episodes:
  socket 0 core 1: core throttled for heat ended after N s
  socket 0 core 2: core throttled for heat still running after N s
  socket 1: DRAM throttled for heat started, still running

EOF
diff -u "$TEST_TMP/episodes.want" "$TEST_TMP/episodes.got" || fail "episodes in the table"
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --simulate westmere-ep-2s 2>/dev/null |
	grep -qx 'episodes: none' || fail "an idle interval does not say 'episodes: none'"

# Prometheus form passes promtool.
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --format prometheus --simulate skylake-sp-2s >"$TEST_TMP/once.prom" 2>"$TEST_TMP/log" ||
	fail "--once prometheus failed"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TEST_TMP/once.prom" >"$TEST_TMP/promtool.out" 2>&1 ||
		fail "promtool: $(cat "$TEST_TMP/promtool.out")"
	[ ! -s "$TEST_TMP/promtool.out" ] || fail "promtool complaints: $(cat "$TEST_TMP/promtool.out")"
fi
# Every AMD model passes promtool too, with no Intel-only series (absent, never 0) and none down.
for model in rome-2s milan-2s genoa-2s turin-2s; do
	"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --format prometheus --simulate "$model" \
		>"$TEST_TMP/amd.prom" 2>"$TEST_TMP/log" || fail "$model: --once prometheus failed: $(cat "$TEST_TMP/log")"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$TEST_TMP/amd.prom" >"$TEST_TMP/promtool.out" 2>&1 ||
			fail "$model promtool: $(cat "$TEST_TMP/promtool.out")"
		[ ! -s "$TEST_TMP/promtool.out" ] || fail "$model promtool complaints: $(cat "$TEST_TMP/promtool.out")"
	fi
	grep -E '^uncored_(tjmax_celsius|core_temperature|thermal_|collector_up)' "$TEST_TMP/amd.prom" |
		grep -vxE 'uncored_collector_up\{collector="(k10temp|hsmp|core)"\} 1' >"$TEST_TMP/intel.series" &&
		fail "$model: Intel-only or down series: $(cat "$TEST_TMP/intel.series")"
	grep -qx "uncored_collector_applicable{collector=\"thermal\"} 0" "$TEST_TMP/amd.prom" ||
		fail "$model: thermal must be not applicable"
done
grep -q '^uncored_uncore_' "$TEST_TMP/once.prom" && fail "skylake must not export uncore metrics"
grep -q '^uncored_rapl_dram_throttled_seconds_total{socket="1"}' "$TEST_TMP/once.prom" || fail "skylake RAPL"
# The Nehalem/Westmere uncore does not apply to Skylake-SP: not applicable, never down.
grep -q 'uncored_collector_up{collector="uncore"}' "$TEST_TMP/once.prom" &&
	fail "skylake: the uncore collector does not apply and must not be in uncored_collector_up"
grep -q '^uncored_collector_applicable{collector="uncore"} 0$' "$TEST_TMP/once.prom" ||
	fail "skylake: uncore collector must be reported not applicable"
grep -q '^uncored_collector_up{collector="thermal"} 1$' "$TEST_TMP/once.prom" || fail "skylake: thermal collector"
grep -q "uncore" "$TEST_TMP/log" || fail "skylake: no word on why the uncore collector is off"
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --json --simulate skylake-sp-2s >"$TEST_TMP/sky.json" 2>"$TEST_TMP/log" ||
	fail "--once --json skylake failed"
jq -e '.collectors[] | select(.name == "uncore") | .state == "not_applicable" and .enabled and (.up | not)' \
	"$TEST_TMP/sky.json" >/dev/null || fail "skylake JSON: uncore state: $(jq -c .collectors "$TEST_TMP/sky.json")"
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --simulate skylake-sp-2s >"$TEST_TMP/sky.txt" 2>"$TEST_TMP/log" ||
	fail "--once text skylake failed"
grep -q '^  uncore   not applicable errors 0: this CPU (skylake-sp' "$TEST_TMP/sky.txt" ||
	fail "skylake table: uncore not applicable: $(grep uncore "$TEST_TMP/sky.txt")"
# The shared throttling seconds in the socket block (declared once, throttle_families.c), every
# series with --verbose: socket 1
# channel 2 is throttled from the first sample on (0-1 s of every 2 s), nothing else is.
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --verbose --simulate skylake-sp-2s:dimm-hot-channel >"$TEST_TMP/hot.txt" \
	2>"$TEST_TMP/log" || { cat "$TEST_TMP/log"; fail "--once skylake dimm-hot-channel failed"; }
sed -n '/^socket 1:/,/^$/p' "$TEST_TMP/hot.txt" | grep -E '^  (DRAM throttled|PROCHOT|frequency limited),' |
	sed -E '/ 0\.000 s$/!s/ +[0-9]+\.[0-9]{3} s$/ MORE THAN 0 s/' >"$TEST_TMP/hot.got"
cat >"$TEST_TMP/hot.want" <<'EOF'
  DRAM throttled, channel 0, thermal_or_power         0.000 s
  DRAM throttled, channel 1, thermal_or_power         0.000 s
  DRAM throttled, channel 2, thermal_or_power MORE THAN 0 s
  DRAM throttled, channel 3, thermal_or_power         0.000 s
  DRAM throttled, channel 4, thermal_or_power         0.000 s
  DRAM throttled, channel 5, thermal_or_power         0.000 s
  PROCHOT, external                                   0.000 s
  PROCHOT, internal                                   0.000 s
  frequency limited, thermal                          0.000 s
EOF
# FREQ_MAX_POWER is a fifth PCU event, in a second group that perf rotates onto the box's four
# counters: the first sample may come before it has counted, and then the interval has no value.
grep -v '^  frequency limited, power' "$TEST_TMP/hot.got" | diff -u "$TEST_TMP/hot.want" - ||
	fail "throttling seconds in the socket 1 block"
grep -qxE '  frequency limited, power +(0\.000 s|-)' "$TEST_TMP/hot.got" ||
	fail "socket 1 power-limited frequency: $(grep power "$TEST_TMP/hot.got")"
# The core collector on every Intel model: instructions and cycles on every CPU, IPC per CPU in the table.
for model in westmere-ep-2s nehalem-ep-2s skylake-sp-2s big; do
	"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --json --simulate "$model" >"$TEST_TMP/m.json" 2>"$TEST_TMP/log" ||
		{ cat "$TEST_TMP/log"; fail "$model: --once failed"; }
	n=$(jq '.cpus | length' "$TEST_TMP/m.json")
	jq -e '(.cpus | length) as $n | [.cpus[] | select(.instructions > 0 and .cycles > 0 and .ref_cycles > 0)] | length == $n' \
		"$TEST_TMP/m.json" >/dev/null || fail "$model: a CPU without core counts"
	jq -e '.collectors[] | select(.name == "core") | .up' "$TEST_TMP/m.json" >/dev/null || fail "$model: core collector down"
	# By default through the simulated kernel's perf, said in the JSON and the log.
	jq -e '.collectors[] | select(.name == "core") | .engine.name == "perf"' "$TEST_TMP/m.json" >/dev/null ||
		fail "$model: core collector not on the perf engine: $(jq -c .collectors "$TEST_TMP/m.json")"
	grep -qxF 'uncored: collector core: perf engine: the kernel has a core PMU (engine = auto)' "$TEST_TMP/log" ||
		fail "$model: no engine line in the log: $(cat "$TEST_TMP/log")"
	echo "$model: $n cpus counted"
done
# engine = msr for the core, engine = perf for the Westmere uncore: counted all the same.
write_conf "$TEST_TMP/e.conf" 9 "[uncore]" "engine = perf" "[core]" "engine = msr"
"$UNCORED_BIN" --config "$TEST_TMP/e.conf" --once --json --simulate westmere-ep-2s >"$TEST_TMP/e.json" 2>"$TEST_TMP/log" ||
	{ cat "$TEST_TMP/log"; fail "engines swapped: --once failed"; }
jq -e '[.collectors[] | select(.engine) | "\(.name)=\(.engine.name)"] == ["uncore=perf", "core=msr"]' \
	"$TEST_TMP/e.json" >/dev/null || fail "engines swapped: $(jq -c .collectors "$TEST_TMP/e.json")"
jq -e '[.sockets[].uncore.clockticks > 0, .cpus[].instructions > 0] | all' "$TEST_TMP/e.json" >/dev/null ||
	fail "engines swapped: nothing counted"
grep -qxF 'uncored: collector uncore: perf engine: engine = perf in [uncore]' "$TEST_TMP/log" ||
	fail "engines swapped: no uncore engine line: $(cat "$TEST_TMP/log")"
# Conflicts exist only where an engine can have them: the msr engine's collector has the
# series and the JSON field, the perf engine's has neither.
jq -e '[.sockets[].uncore | has("conflicts") | not] + [.cpus[] | has("conflicts")] | all' \
	"$TEST_TMP/e.json" >/dev/null || fail "engines swapped: conflicts fields: $(jq -c '.cpus[0]' "$TEST_TMP/e.json")"
"$UNCORED_BIN" --config "$TEST_TMP/e.conf" --once --format prometheus --simulate westmere-ep-2s >"$TEST_TMP/e.prom" 2>/dev/null ||
	fail "engines swapped: --once prometheus failed"
[ "$(grep -c '^uncored_pmu_conflicts_total{collector="core",' "$TEST_TMP/e.prom")" = 24 ] ||
	fail "core on msr: not one conflicts series per CPU"
grep -q '^uncored_pmu_conflicts_total{collector="uncore",' "$TEST_TMP/e.prom" &&
	fail "uncore on perf: a conflicts series that cannot change"
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --format prometheus --simulate westmere-ep-2s 2>/dev/null |
	grep -q '^uncored_pmu_conflicts_total{collector="core",' && fail "core on perf: a conflicts series that cannot change"
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --verbose --simulate nehalem-ep-2s 2>/dev/null | grep -q "IPC per cpu" || fail "no per-CPU IPC in the table"
# A cool 128-CPU host fits on a screen; a hot channel is named in its socket's summary.
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --simulate sapphire-rapids-2s >"$TEST_TMP/spr.txt" 2>/dev/null ||
	fail "--once sapphire-rapids-2s failed"
[ "$(wc -l <"$TEST_TMP/spr.txt")" -le 40 ] || fail "cool sapphire-rapids-2s: $(wc -l <"$TEST_TMP/spr.txt") lines, expected at most 40"
grep -q '^  DRAM throttled  *0 s in all 16 series$' "$TEST_TMP/spr.txt" || fail "no DRAM summary: $(cat "$TEST_TMP/spr.txt")"
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --verbose --simulate sapphire-rapids-2s 2>/dev/null |
	grep -c '^ *[0-9][0-9]*  [0-9]*,[0-9]* ' | grep -qx 64 || fail "--verbose does not list the 64 cores"
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --simulate sapphire-rapids-2s:dimm-hot-channel >"$TEST_TMP/hot.txt" 2>/dev/null ||
	fail "--once dimm-hot-channel failed"
sed -n '/^socket 1:/,/^$/p' "$TEST_TMP/hot.txt" | grep -q '^  DRAM throttled  *channel 2, slot [01], thermal_or_power: [0-9.]* s$' ||
	fail "socket 1's summary does not name channel 2: $(cat "$TEST_TMP/hot.txt")"
sed -n '/^socket 0:/,/^$/p' "$TEST_TMP/hot.txt" | grep -q '^  DRAM throttled  *0 s in all' ||
	fail "socket 0's summary is not quiet: $(cat "$TEST_TMP/hot.txt")"

# Every channel of a socket hot: 8 episode lines, then how many more; --verbose lists them all.
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --simulate granite-rapids-2s:dram-heatwave >"$TEST_TMP/wave.txt" 2>/dev/null ||
	fail "--once on the heatwave failed"
n=$(sed -n '/^episodes:/,/^$/p' "$TEST_TMP/wave.txt" | grep -c '^  socket')
[ "$n" = 8 ] || fail "brief --once lists $n episodes, not 8: $(cat "$TEST_TMP/wave.txt")"
more=$(sed -n 's/^  \([0-9]*\) more (--verbose lists them)$/\1/p' "$TEST_TMP/wave.txt")
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --verbose --simulate granite-rapids-2s:dram-heatwave >"$TEST_TMP/wave-v.txt" \
	2>/dev/null || fail "--once --verbose on the heatwave failed"
nv=$(sed -n '/^episodes:/,/^$/p' "$TEST_TMP/wave-v.txt" | grep -c '^  socket')
[ -n "$more" ] && [ "$nv" = $((8 + more)) ] ||
	fail "--verbose lists $nv episodes, the brief one 8 and '$more' more"
echo "once: ok"
