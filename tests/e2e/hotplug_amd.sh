#!/bin/sh
# A CPU offline at start on the simulated AMD EPYC models (tests/data/
# scenarios/cpu-offline-at-start.ini: cpu 12, online 2 s later): the core
# collector, which counts AMD's core PMU through perf, is up on the other
# CPUs from the start, waits for cpu 12 as on Intel, and counts it once it
# is back, where the first open of its events turned the collector off for
# the whole run.
. "$(dirname "$0")/lib.sh"

SCENARIO="$UNCORED_SOURCE_ROOT/tests/data/scenarios/cpu-offline-at-start.ini"
core='.collectors[] | select(.name == "core")'

# True when the snapshot shows cpu 12 counting instructions.
cpu12_counts() {
	curl -fsS --max-time 5 "$DAEMON_URL/api/v1/snapshot" >"$TEST_TMP/now.json" || return 1
	jq -e '.cpus[] | select(.cpu == 12) | .online and .instructions > 0' "$TEST_TMP/now.json" \
		>/dev/null
}

for model in genoa-2s rome-2s turin-2s; do
	write_conf "$TEST_TMP/$model.conf" 0
	start_daemon 0 "$TEST_TMP/$model.log" --config "$TEST_TMP/$model.conf" \
		--simulate "$model:$SCENARIO"
	curl -fsS --max-time 5 "$DAEMON_URL/api/v1/snapshot" >"$TEST_TMP/start.json" || fail "no snapshot"
	jq -e "$core | .up" "$TEST_TMP/start.json" >/dev/null ||
		fail "$model: core at start: $(jq -c "$core" "$TEST_TMP/start.json")"
	expect_log "$TEST_TMP/$model.log" "cpu 12 came online" "$model: cpu 12 back"
	wait_until 60 cpu12_counts || fail "$model: cpu 12 never counts: $(jq -c '.cpus[12]' "$TEST_TMP/now.json")"
	jq -e "$core | .state == \"up\" and .units_counting == .units and .errors == 0" \
		"$TEST_TMP/now.json" >/dev/null || fail "$model: core: $(jq -c "$core" "$TEST_TMP/now.json")"
	log_has "$TEST_TMP/$model.log" "collector core: (off|down)" &&
		fail "$model: the core collector went off: $(cat "$TEST_TMP/$model.log")"
	stop_daemon "$DAEMON_PID" || fail "$model: exit status after SIGTERM"
done
echo "hotplug_amd: ok"
