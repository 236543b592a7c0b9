#!/bin/sh
# Kernel lockdown: every MSR write is refused (the lockdown scenario).  The
# daemon stays up read-only: /metrics serves the thermal collector's data,
# the uncore and core collectors are down, the log says writes are refused
# and that it falls back to read-only collectors, and SIGTERM exits 0.
. "$(dirname "$0")/lib.sh"

port=$(free_port)
write_conf "$TEST_TMP/u.conf" "$port"
start_daemon "$port" "$TEST_TMP/log" --config "$TEST_TMP/u.conf" \
	--scenario-dir "$SCENARIOS" --simulate westmere-ep-2s:lockdown

sleep 0.6   # a few samples
metrics=$(curl -fsS "$DAEMON_URL/metrics") || fail "/metrics did not answer 200"
up() { metric_value "$metrics" "uncored_collector_up{collector=\"$1\"}" || fail "no collector_up for $1"; }
[ "$(up uncore)" = 0 ] || fail "uncore collector up although writes are refused"
[ "$(up core)" = 0 ] || fail "core collector up although writes are refused"
[ "$(up thermal)" = 1 ] || fail "thermal collector down: $(cat "$TEST_TMP/log")"
# Temperatures are read: socket 1 runs at 80 C in the scenario's first 20 s.
printf '%s\n' "$metrics" | grep -q '^uncored_core_temperature_celsius{socket="1",core="0"} 80$' ||
	fail "no temperature for socket 1 core 0: $(printf '%s\n' "$metrics" | grep temperature | head -5)"
printf '%s\n' "$metrics" | grep -q '^uncored_uncore_events_total' &&
	fail "uncore counters exported although the collector never ran"

grep -q 'collector uncore: off: .*refuses MSR writes.*read-only' "$TEST_TMP/log" ||
	fail "the log does not say uncore writes are refused: $(cat "$TEST_TMP/log")"
grep -q 'collector core: off: .*refuses MSR writes.*read-only' "$TEST_TMP/log" ||
	fail "the log does not say core writes are refused: $(cat "$TEST_TMP/log")"
grep -q 'collector thermal: up' "$TEST_TMP/log" || fail "thermal collector not reported up"

kill -0 "$DAEMON_PID" || fail "daemon died"
stop_daemon "$DAEMON_PID" || fail "exit status $? after SIGTERM"
echo "lockdown: read-only, thermal served, writes refused and said so: ok"
