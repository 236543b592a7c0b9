#!/bin/sh
# uncored --once on AMD EPYC (Genoa, Turin): the socket blocks have the rows an
# Intel host's have where AMD has the signal.  Socket 1 has a DIMM at 90 C on
# channel 3 slot 0, PROCHOT and a thermal frequency limit all along; socket 0
# is cool.  Each socket's header has its IPC and none of Intel's TjMax,
# package sensor and package throttling; it names its temperature sensors (k10temp's Tctl, no
# package sensor), its PROCHOT time and frequency limits (hsmp), and its
# hottest DIMM with the DIMMs at twice the refresh rate; the JSON has the
# same DIMM, and the throttling signals say which of them the host sees.
. "$(dirname "$0")/lib.sh"

UNCORED_TEST_INTERVAL=1 write_conf "$TEST_TMP/u.conf" 9
hot="$UNCORED_SOURCE_ROOT/tests/e2e/amd_dimm_heat.ini"

for model in genoa-2s turin-2s; do
	"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --simulate "$model:$hot" \
		>"$TEST_TMP/$model.txt" 2>"$TEST_TMP/log" || fail "$model: --once failed: $(cat "$TEST_TMP/log")"
	block() { sed -n "/^socket $1:/,/^$/p" "$TEST_TMP/$model.txt"; }
	has() {
		block "$1" | grep -qxE "$2" || fail "$model socket $1 has no line /$2/: $(cat "$TEST_TMP/$model.txt")"
	}
	for s in 0 1; do
		# No TjMax, package sensor or package throttling on AMD: the header leaves them out.
		has $s "socket $s: IPC [0-9.]+"
		has $s '  temperature sensors +Tctl 45 C.*'
		has $s '  frequency limited +.*'
	done
	has 1 '  PROCHOT +any: 1\.000 s'
	has 0 '  PROCHOT +0 s in all 1 series'
	has 1 '  frequency limited +thermal: 1\.000 s'
	has 1 '  DIMM temperature +hottest channel 3 slot 0: 90 C; refresh 2x: channel 3 slot 0'
	has 0 '  DIMM temperature +hottest channel [0-9]+ slot 0: 40 C; refresh 1x on all 12'
	# No DRAM throttled row: AMD has no counter, and the throttling signals say so.
	sed -n '/^socket /,/^$/p' "$TEST_TMP/$model.txt" | grep -q '^  DRAM throttled' &&
		fail "$model: a DRAM throttled row"
	grep -qE '^  DRAM throttled \(thermal\) +not seen: no collector measures it on this CPU' "$TEST_TMP/$model.txt" ||
		fail "$model: DRAM throttled not said unseen: $(cat "$TEST_TMP/$model.txt")"
	for sig in 'PROCHOT \(any\)' 'Frequency limited \(thermal\)' 'Frequency limited \(power\)'; do
		grep -qE "^  $sig +seen \(hsmp collector\)$" "$TEST_TMP/$model.txt" ||
			fail "$model: $sig not seen through hsmp: $(sed -n '/^throttling signals:/,$p' "$TEST_TMP/$model.txt")"
	done

	"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --json --simulate "$model:$hot" \
		>"$TEST_TMP/$model.json" 2>"$TEST_TMP/log" || fail "$model: --once --json failed"
	# The JSON nests the last label first: {sensor: {channel: {slot}}}, {slot: {channel}}.
	jq -e '.sockets[1].dimm_refresh_multiplier["0"]["3"] == 2 and
		([.sockets[0].dimm_refresh_multiplier[][]] | all(. == 1)) and
		([.sockets[1].dimm_temperature_celsius[]["3"]["0"]] | max == 90) and
		.sockets[1].prochot_seconds.any == 1 and .sockets[0].prochot_seconds.any == 0 and
		(.sockets[1] | has("dram_throttled_seconds") | not)' "$TEST_TMP/$model.json" >/dev/null ||
		fail "$model JSON: $(jq -c '.sockets[1] | del(.cores)' "$TEST_TMP/$model.json")"
	echo "$model: ok"
done
echo "once_amd: ok"
