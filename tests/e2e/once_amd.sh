#!/bin/sh
# uncored --once on AMD EPYC (Genoa, Turin): the socket blocks have the rows an
# Intel host's have where AMD has the signal.  Socket 1 has a DIMM at 90 C on
# channel 3 slot 0, PROCHOT and a thermal frequency limit all along; socket 0
# is cool.  Each socket's header has its IPC and none of Intel's TjMax,
# package sensor and package throttling; it names its temperature sensors (k10temp's Tctl, no
# package sensor), its PROCHOT time and frequency limits (hsmp), and its
# hottest DIMM with the DIMMs at twice the refresh rate; the JSON has the
# same DIMM, the throttling signals say which of them the host sees, and PROCHOT with
# the frequency it limits is one episode.  Then the shipped AMD scenarios (amd-prochot,
# amd-dimm-hot, amd-frequency-limits) on Genoa, Turin and Milan.
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

	# HSMP's PROCHOT and its frequency limit for PROCHOT are one episode, the thermal limit another.
	sed -n '/^episodes:$/,/^$/p' "$TEST_TMP/$model.txt" >"$TEST_TMP/$model.episodes"
	printf 'episodes:\n%s\n%s\n\n' \
		'  socket 1: PROCHOT asserted, frequency limited started, still running' \
		'  socket 1: frequency limited by heat started, still running' |
		diff -u - "$TEST_TMP/$model.episodes" || fail "$model: the episodes of the interval"

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

# The shipped AMD scenarios show their heat in its family and place from the first seconds.
for model in genoa-2s turin-2s milan-2s; do
	once() {
		"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once ${2:+--json} --simulate "$model:$1" \
			--scenario-dir "$SCENARIOS" >"$TEST_TMP/$model-$1.${2:-txt}" 2>"$TEST_TMP/log" ||
			fail "$model:$1: --once failed: $(cat "$TEST_TMP/log")"
	}
	in_block() {
		sed -n "/^socket $2:/,/^$/p" "$TEST_TMP/$model-$1.txt" | grep -qxE "$3" ||
			fail "$model:$1 socket $2 has no line /$3/: $(cat "$TEST_TMP/$model-$1.txt")"
	}
	# amd-prochot: PROCHOT on socket 0 with cores 0 and 1 at 98 C and 94 C (Tccd1, Tccd2 where
	# k10temp has them); from Genoa on the frequency limit says PROCHOT too.
	once amd-prochot
	in_block amd-prochot 0 '  PROCHOT +any: 1\.000 s'
	in_block amd-prochot 1 '  PROCHOT +0 s in all 1 series'
	if [ "$model" = turin-2s ]; then
		in_block amd-prochot 0 '  temperature sensors +Tctl 98 C'
	else
		in_block amd-prochot 0 '  temperature sensors +Tctl 98 C, hottest of [0-9]+ more: Tccd1 98 C'
	fi
	in_block amd-prochot 1 '  temperature sensors +Tctl 45 C.*'
	once amd-prochot json
	jq -e '.sockets[0].prochot_seconds.any == 1 and .sockets[1].prochot_seconds.any == 0' \
		"$TEST_TMP/$model-amd-prochot.json" >/dev/null || fail "$model:amd-prochot JSON"
	if [ "$model" = milan-2s ]; then
		# Milan's HSMP has no DIMMs and no frequency-limit sources: their scenarios are refused.
		for sc in amd-dimm-hot amd-frequency-limits; do
			rc=0
			"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --simulate "$model:$sc" \
				--scenario-dir "$SCENARIOS" >/dev/null 2>"$TEST_TMP/log" || rc=$?
			[ "$rc" = 1 ] && grep -qE "^uncored: --simulate '$model:$sc': $SCENARIOS/$sc\.ini:[0-9]+: \[[a-z-]+\.1\]: expected a model whose HSMP reports .*, model '$model' has none$" "$TEST_TMP/log" ||
				fail "$model:$sc: exit $rc: $(cat "$TEST_TMP/log")"
		done
		echo "$model: shipped scenarios ok"
		continue
	fi
	in_block amd-prochot 0 '  frequency limited +prochot: 1\.000 s'

	# amd-dimm-hot: socket 1 channel 4 slot 0 at 90 C and twice the refresh rate, channel 5 at
	# 80 C and 1x; socket 0 idles at 40 C.
	once amd-dimm-hot
	in_block amd-dimm-hot 1 '  DIMM temperature +hottest channel 4 slot 0: 90 C; refresh 2x: channel 4 slot 0'
	in_block amd-dimm-hot 0 '  DIMM temperature +hottest channel [0-9]+ slot 0: 40 C; refresh 1x on all 12'
	in_block amd-dimm-hot 1 '  PROCHOT +0 s in all 1 series'
	once amd-dimm-hot json
	jq -e '.sockets[1].dimm_refresh_multiplier["0"]["4"] == 2 and
		.sockets[1].dimm_refresh_multiplier["0"]["5"] == 1 and
		([.sockets[1].dimm_temperature_celsius[]["4"]["0"]] | max == 90) and
		([.sockets[1].dimm_temperature_celsius[]["5"]["0"]] | max == 80) and
		([.sockets[0].dimm_temperature_celsius[][][]] | max == 40)' \
		"$TEST_TMP/$model-amd-dimm-hot.json" >/dev/null ||
		fail "$model:amd-dimm-hot JSON: $(jq -c '.sockets[1].dimm_temperature_celsius' "$TEST_TMP/$model-amd-dimm-hot.json")"

	# amd-frequency-limits: socket 1 limited for heat and power at once, its cores at 92 C;
	# socket 0 at its rated maximum (OPN Max), which accrues nothing.
	once amd-frequency-limits
	in_block amd-frequency-limits 1 '  frequency limited, thermal +1\.000 s'
	in_block amd-frequency-limits 1 '  frequency limited, power +1\.000 s'
	in_block amd-frequency-limits 1 '  temperature sensors +Tctl 92 C.*'
	in_block amd-frequency-limits 0 '  frequency limited +0 s in all 8 series'
	once amd-frequency-limits json
	jq -e '.sockets[1].frequency_limited_seconds | .thermal == 1 and .power == 1 and
		.current == 0 and .vr_hot == 0' "$TEST_TMP/$model-amd-frequency-limits.json" >/dev/null ||
		fail "$model:amd-frequency-limits JSON: $(jq -c '.sockets[].frequency_limited_seconds' "$TEST_TMP/$model-amd-frequency-limits.json")"
	echo "$model: shipped scenarios ok"
done
echo "once_amd: ok"
