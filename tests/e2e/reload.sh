#!/bin/sh
# SIGHUP reload: a bad file is refused with its errors and the running
# configuration stays; a good one with a changed event list is applied at a
# sample boundary, and no exported counter goes backwards.
. "$(dirname "$0")/lib.sh"

write_conf "$TEST_TMP/u.conf" 0
start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --simulate westmere-ep-2s:dram-heatwave
url=$DAEMON_URL
key='uncored_uncore_events_total{socket="1",event="dram_thermal_throttled_cycles"}'
before=$(metric_value "$(curl -fsS "$url/metrics")" "$key")

cp "$TEST_TMP/u.conf" "$TEST_TMP/good.conf"
printf '[daemon]\nlisten = 127.0.0.1:9\nbogus = 1\n' >"$TEST_TMP/u.conf"
kill -HUP "$DAEMON_PID"
wait_until 30 log_has "$TEST_TMP/log" "running one stays" || fail "bad reload: no word in 30 s: $(cat "$TEST_TMP/log")"
expect_log "$TEST_TMP/log" "u.conf:3: bogus: " "bad reload not reported with its location"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$url/healthz")" = 200 ] || fail "unhealthy after a bad reload"

{ cat "$TEST_TMP/good.conf"; printf '[uncore]\nevent = thermal_throttling_prochot_core0\n'; } >"$TEST_TMP/u.conf"
kill -HUP "$DAEMON_PID"
new_event() { curl -fsS --max-time 5 "$url/metrics" | grep -q 'event="thermal_throttling_prochot_core0"'; }
wait_until 30 new_event || fail "new event not counted 30 s after reload: $(cat "$TEST_TMP/log")"
m=$(curl -fsS "$url/metrics")
printf "%s\n" "$m" | grep -q "event=\"thermal_throttling_prochot_core0\"" || fail "new event not counted after reload: $(cat "$TEST_TMP/log")"
after=$(metric_value "$m" "$key")
[ "$after" -ge "$before" ] || fail "counter went backwards across reload: $before -> $after"
for _ in $(seq 1 20); do
	kill -HUP "$DAEMON_PID"
	v=$(metric_value "$(curl -fsS "$url/metrics")" "$key")
	[ "$v" -ge "$after" ] || fail "counter went backwards during reload loop: $after -> $v"
	after=$v
	wait_until 30 signal_taken "$DAEMON_PID" 1 || fail "SIGHUP not taken in 30 s"
done
stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"
echo "reload: ok"
