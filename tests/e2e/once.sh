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
jq -e '.collectors | map(select(.up)) | length == 3' "$TEST_TMP/once.json" >/dev/null || fail "collectors up"

# Text table.
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --simulate westmere-ep-2s:dram-heatwave >"$TEST_TMP/once.txt" 2>"$TEST_TMP/log" ||
	fail "--once text failed"
grep -qi "socket 1" "$TEST_TMP/once.txt" || fail "text table: $(cat "$TEST_TMP/once.txt")"
grep -qi "ipc" "$TEST_TMP/once.txt" || fail "text table has no IPC"

# Prometheus form passes promtool.
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --format prometheus --simulate skylake-sp-2s >"$TEST_TMP/once.prom" 2>"$TEST_TMP/log" ||
	fail "--once prometheus failed"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TEST_TMP/once.prom" >"$TEST_TMP/promtool.out" 2>&1 ||
		fail "promtool: $(cat "$TEST_TMP/promtool.out")"
	[ ! -s "$TEST_TMP/promtool.out" ] || fail "promtool complaints: $(cat "$TEST_TMP/promtool.out")"
fi
grep -q '^uncored_uncore_' "$TEST_TMP/once.prom" && fail "skylake must not export uncore metrics"
grep -q '^uncored_rapl_dram_throttled_seconds_total{socket="1"}' "$TEST_TMP/once.prom" || fail "skylake RAPL"
grep -q 'uncored_collector_up{collector="uncore"} 0' "$TEST_TMP/once.prom" || fail "skylake uncore collector must be down"
grep -q "uncore" "$TEST_TMP/log" || fail "skylake: no word on why the uncore collector is off"
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
write_conf "$TEST_TMP/e.conf" "$(free_port)" "[uncore]" "engine = perf" "[core]" "engine = msr"
"$UNCORED_BIN" --config "$TEST_TMP/e.conf" --once --json --simulate westmere-ep-2s >"$TEST_TMP/e.json" 2>"$TEST_TMP/log" ||
	{ cat "$TEST_TMP/log"; fail "engines swapped: --once failed"; }
jq -e '[.collectors[] | select(.engine) | "\(.name)=\(.engine.name)"] == ["uncore=perf", "core=msr"]' \
	"$TEST_TMP/e.json" >/dev/null || fail "engines swapped: $(jq -c .collectors "$TEST_TMP/e.json")"
jq -e '[.sockets[].uncore.clockticks > 0, .cpus[].instructions > 0] | all' "$TEST_TMP/e.json" >/dev/null ||
	fail "engines swapped: nothing counted"
grep -qxF 'uncored: collector uncore: perf engine: engine = perf in [uncore]' "$TEST_TMP/log" ||
	fail "engines swapped: no uncore engine line: $(cat "$TEST_TMP/log")"
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --simulate nehalem-ep-2s 2>/dev/null | grep -q "IPC per cpu" || fail "no per-CPU IPC in the table"
echo "once: ok"
