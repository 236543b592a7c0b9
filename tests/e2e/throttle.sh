#!/bin/sh
# The server PCU and iMC collectors on every simulated server model, through the simulated
# kernel's perf: /metrics passes promtool, the generation-independent families say the
# right thing on the right socket and channel, and nothing where the hardware is quiet.
. "$(dirname "$0")/lib.sh"

UNCORED_TEST_INTERVAL=1 write_conf "$TEST_TMP/u.conf" 9
SCENARIO="$UNCORED_SOURCE_ROOT/tests/data/scenarios/throttle-steady.ini"

# value FILE SERIES: the sample value of one exact series line, or nothing.
value() {
	awk -v s="$2" 'index($0, s " ") == 1 { print $2 }' "$1"
}

# positive FILE SERIES, zero FILE SERIES
positive() {
	v=$(value "$1" "$2")
	awk -v v="$v" 'BEGIN { exit !(v != "" && v + 0 > 0) }' || fail "$model: $2 = '$v', expected > 0"
}
zero() {
	v=$(value "$1" "$2")
	[ "$v" = 0 ] || fail "$model: $2 = '$v', expected 0"
}

for model in skylake-sp-2s sandy-bridge-ep-2s cascade-lake-ap-2s icelake-sp-2s sapphire-rapids-2s \
	granite-rapids-2s; do
	out="$TEST_TMP/$model.prom"
	"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --format prometheus \
		--simulate "$model:$SCENARIO" >"$out" 2>"$TEST_TMP/log" ||
		{ cat "$TEST_TMP/log"; fail "$model: --once failed"; }
	if command -v promtool >/dev/null; then
		promtool check metrics <"$out" >"$TEST_TMP/promtool.out" 2>&1 ||
			fail "$model: promtool: $(cat "$TEST_TMP/promtool.out")"
		[ ! -s "$TEST_TMP/promtool.out" ] || fail "$model: promtool: $(cat "$TEST_TMP/promtool.out")"
	fi
	grep -q 'uncored_collector_up{collector="pcu"} 1' "$out" || fail "$model: pcu collector not up"
	[ "$(grep -c '^# TYPE uncored_dram_throttled_seconds_total ' "$out")" -le 1 ] ||
		fail "$model: the DRAM family is written twice"
	case $model in
	cascade-lake-ap-2s)
		# Two dies per package: a PCU and channels per die, labelled by die.
		positive "$out" 'uncored_prochot_seconds_total{socket="0",die="0",source="external"}'
		positive "$out" 'uncored_prochot_seconds_total{socket="0",die="1",source="external"}'
		zero "$out" 'uncored_prochot_seconds_total{socket="1",die="1",source="external"}'
		positive "$out" 'uncored_dram_throttled_seconds_total{socket="1",die="1",channel="2",cause="thermal_or_power"}'
		zero "$out" 'uncored_dram_throttled_seconds_total{socket="0",die="1",channel="2",cause="thermal_or_power"}'
		continue
		;;
	esac
	positive "$out" 'uncored_prochot_seconds_total{socket="0",source="external"}'
	zero "$out" 'uncored_prochot_seconds_total{socket="1",source="external"}'
	case $model in
	skylake-sp-2s|sandy-bridge-ep-2s)
		grep -q 'uncored_collector_up{collector="imc"} 1' "$out" || fail "$model: imc collector not up"
		# The heat of channel 2 and the socket's DRAM power cap are one cause here.
		positive "$out" 'uncored_dram_throttled_seconds_total{socket="1",channel="2",cause="thermal_or_power"}'
		positive "$out" 'uncored_dram_throttled_seconds_total{socket="1",channel="0",cause="thermal_or_power"}'
		zero "$out" 'uncored_dram_throttled_seconds_total{socket="0",channel="2",cause="thermal_or_power"}'
		;;
	granite-rapids-2s)
		grep -q 'uncored_collector_up{collector="imc"} 1' "$out" || fail "$model: imc collector not up"
		# Granite Rapids keeps them apart: heat on channel 2 only, power on every channel.
		positive "$out" 'uncored_dram_throttled_seconds_total{socket="1",channel="2",cause="thermal"}'
		zero "$out" 'uncored_dram_throttled_seconds_total{socket="1",channel="0",cause="thermal"}'
		positive "$out" 'uncored_dram_throttled_seconds_total{socket="1",channel="0",cause="power"}'
		zero "$out" 'uncored_dram_throttled_seconds_total{socket="0",channel="2",cause="thermal"}'
		zero "$out" 'uncored_dram_throttled_seconds_total{socket="0",channel="2",cause="power"}'
		;;
	icelake-sp-2s)
		grep -q 'uncored_collector_up{collector="imc"} 1' "$out" || fail "$model: imc collector not up"
		# A 6.12 kernel's channel 2 here has no memory behind it (the third of its
		# controller): never clocked, left out. The socket's DRAM power cap throttles
		# channel 0, each DIMM slot on its own.
		! grep -q 'uncored_dram_throttled_seconds_total{socket="1",channel="2",' "$out" ||
			fail "$model: channel 2 exported, but it has no clock"
		positive "$out" 'uncored_dram_throttled_seconds_total{socket="1",channel="0",slot="0",cause="thermal_or_power"}'
		zero "$out" 'uncored_dram_throttled_seconds_total{socket="0",channel="0",slot="0",cause="thermal_or_power"}'
		;;
	sapphire-rapids-2s)
		grep -q 'uncored_collector_up{collector="imc"} 1' "$out" || fail "$model: imc collector not up"
		# Each DIMM slot on its own.
		positive "$out" 'uncored_dram_throttled_seconds_total{socket="1",channel="2",slot="0",cause="thermal_or_power"}'
		positive "$out" 'uncored_dram_throttled_seconds_total{socket="1",channel="2",slot="1",cause="thermal_or_power"}'
		zero "$out" 'uncored_dram_throttled_seconds_total{socket="0",channel="2",slot="0",cause="thermal_or_power"}'
		;;
	*)
		fail "$model: no expectations"
		;;
	esac
done
exit 0
