#!/bin/sh
# A collector added by one file and one registration line: the daemon built
# with tests/collectors/col_tick.c (UNCORED_TICK_BIN) and nothing else
# edited shows it in --list-events, --check-config, --once (table, JSON,
# Prometheus), /metrics, /api/v1/snapshot and across a reload.
: "${UNCORED_TICK_BIN:?UNCORED_TICK_BIN must point at the daemon built with the tick collector}"
UNCORED_REAL_BIN=$UNCORED_TICK_BIN
. "$(dirname "$0")/lib.sh"

# --list-events asks every collector.
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --list-events --simulate westmere-ep-2s >"$TEST_TMP/events"
grep -q "^tick (a test collector, one count per sample):$" "$TEST_TMP/events" ||
	fail "--list-events: no tick block: $(cat "$TEST_TMP/events")"
grep -q "^  ticks  *one per sample$" "$TEST_TMP/events" || fail "--list-events: no ticks event"

# --check-config parses its section like any other.
write_conf "$TEST_TMP/u.conf" 0 "[tick]" "degrade = no"
"$UNCORED_BIN" --check-config "$TEST_TMP/u.conf" >"$TEST_TMP/out" 2>"$TEST_TMP/err" ||
	fail "--check-config of a good [tick]: $(cat "$TEST_TMP/err")"
write_conf "$TEST_TMP/bad.conf" 0 "[tick]" "degrade = sometimes"
rc=0
"$UNCORED_BIN" --check-config "$TEST_TMP/bad.conf" >/dev/null 2>"$TEST_TMP/err" || rc=$?
[ "$rc" -ne 0 ] || fail "--check-config accepted degrade = sometimes"
grep -q "bad.conf:8: degrade: " "$TEST_TMP/err" || fail "--check-config: no FILE:LINE: key: error: $(cat "$TEST_TMP/err")"

# --once in its three forms.
UNCORED_TEST_INTERVAL=0.25 write_conf "$TEST_TMP/once.conf" 0
"$UNCORED_BIN" --config "$TEST_TMP/once.conf" --once --simulate westmere-ep-2s >"$TEST_TMP/once.txt" \
	2>"$TEST_TMP/log" || fail "--once: $(cat "$TEST_TMP/log")"
grep -q "^  tick samples  *1$" "$TEST_TMP/once.txt" || fail "--once table: $(cat "$TEST_TMP/once.txt")"
grep -q "^  tick  *up  *errors 0$" "$TEST_TMP/once.txt" || fail "--once table: no tick status"
"$UNCORED_BIN" --config "$TEST_TMP/once.conf" --once --json --simulate westmere-ep-2s \
	>"$TEST_TMP/once.json" 2>"$TEST_TMP/log" || fail "--once --json: $(cat "$TEST_TMP/log")"
jq -e '[.sockets[].tick_samples] == [1, 1]' "$TEST_TMP/once.json" >/dev/null ||
	fail "--once --json: tick_samples: $(jq -c '[.sockets[].tick_samples]' "$TEST_TMP/once.json")"
jq -e '.collectors[] | select(.name == "tick") | .up' "$TEST_TMP/once.json" >/dev/null ||
	fail "--once --json: no tick collector"
"$UNCORED_BIN" --config "$TEST_TMP/once.conf" --once --format prometheus --simulate westmere-ep-2s \
	>"$TEST_TMP/once.prom" 2>"$TEST_TMP/log" || fail "--once prometheus: $(cat "$TEST_TMP/log")"
grep -q '^uncored_tick_samples_total{socket="1"} 1$' "$TEST_TMP/once.prom" ||
	fail "--once prometheus: $(grep tick "$TEST_TMP/once.prom")"

# The daemon: /metrics, /api/v1/snapshot, and a reload that restarts it.
start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --simulate westmere-ep-2s
url=$DAEMON_URL
m=$(curl -fsS "$url/metrics")
before=$(metric_value "$m" 'uncored_tick_samples_total{socket="0"}') || fail "/metrics: no tick samples"
[ "$(metric_value "$m" 'uncored_collector_up{collector="tick"}')" = 1 ] || fail "/metrics: tick not up"
curl -fsS "$url/api/v1/snapshot" >"$TEST_TMP/snap.json"
jq -e '.sockets[0].tick_samples >= 1' "$TEST_TMP/snap.json" >/dev/null || fail "snapshot: no tick_samples"

write_conf "$TEST_TMP/u.conf" 0 "[tick]" "degrade = yes"
kill -HUP "$DAEMON_PID"
tick_degraded() {
	curl -fsS "$url/api/v1/snapshot" >"$TEST_TMP/snap.json" &&
		jq -e '.collectors[] | select(.name == "tick") | .reason == "degraded by its configuration"' \
			"$TEST_TMP/snap.json" >/dev/null
}
wait_until 30 tick_degraded || true
jq -e '.collectors[] | select(.name == "tick") | .reason == "degraded by its configuration"' \
	"$TEST_TMP/snap.json" >/dev/null || fail "reload: tick not restarted with degrade = yes: $(cat "$TEST_TMP/log")"
# Its counter restarted at 0, but the carry keeps the total going up.
after=$(metric_value "$(curl -fsS "$url/metrics")" 'uncored_tick_samples_total{socket="0"}')
[ "$after" -gt "$before" ] || fail "reload: tick samples went from $before to $after"
stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"
echo "tick: ok"
