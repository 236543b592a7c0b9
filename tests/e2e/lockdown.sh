#!/bin/sh
# Kernel lockdown: every MSR write is refused (the lockdown scenario).  The
# daemon stays up: /metrics serves the thermal collector's data, the uncore
# collector (msr engine) is down, the log says writes are refused and that
# it falls back to read-only collectors, and SIGTERM exits 0.  The core
# collector counts through the kernel's perf, which lockdown does not
# block (hardware-linux.md §3.1); with [core] engine = msr it is down too.
. "$(dirname "$0")/lib.sh"

write_conf "$TEST_TMP/u.conf" 0
start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" \
	--scenario-dir "$SCENARIOS" --simulate westmere-ep-2s:lockdown

wait_until 30 has_samples "$DAEMON_URL" 3 || fail "not 3 samples after 30 s"
metrics=$(curl -fsS "$DAEMON_URL/metrics") || fail "/metrics did not answer 200"
up() { metric_value "$metrics" "uncored_collector_up{collector=\"$1\"}" || fail "no collector_up for $1"; }
[ "$(up uncore)" = 0 ] || fail "uncore collector up although writes are refused"
[ "$(up core)" = 1 ] || fail "core collector down although perf counts under lockdown"
[ "$(up thermal)" = 1 ] || fail "thermal collector down: $(cat "$TEST_TMP/log")"
# Temperatures are read: socket 1 runs at 80 C in the scenario's first 20 s.
printf '%s\n' "$metrics" | grep -q '^uncored_core_temperature_celsius{socket="1",core="0"} 80$' ||
	fail "no temperature for socket 1 core 0: $(printf '%s\n' "$metrics" | grep temperature | head -5)"
printf '%s\n' "$metrics" | grep -q '^uncored_uncore_events_total' &&
	fail "uncore counters exported although the collector never ran"

expect_log "$TEST_TMP/log" 'collector uncore: off: .*refuses MSR writes.*read-only' \
	"the log does not say uncore writes are refused"
expect_log "$TEST_TMP/log" 'collector core: perf engine: ' \
	"the log does not say the core collector counts through perf"
expect_log "$TEST_TMP/log" 'collector thermal: up' "thermal collector not reported up"

kill -0 "$DAEMON_PID" || fail "daemon died"
stop_daemon "$DAEMON_PID" || fail "exit status $? after SIGTERM"

# The msr engine for the core: refused like the uncore.
write_conf "$TEST_TMP/msr.conf" 0 "[core]" "engine = msr"
"$UNCORED_BIN" --once --format prometheus --config "$TEST_TMP/msr.conf" --scenario-dir "$SCENARIOS" \
	--simulate westmere-ep-2s:lockdown >"$TEST_TMP/msr.prom" 2>"$TEST_TMP/msr.log" ||
	fail "--once with engine = msr: $(cat "$TEST_TMP/msr.log")"
grep -qx 'uncored_collector_up{collector="core"} 0' "$TEST_TMP/msr.prom" ||
	fail "core collector up on the msr engine although writes are refused"
grep -q 'collector core: off: .*refuses MSR writes.*read-only' "$TEST_TMP/msr.log" ||
	fail "the log does not say core writes are refused: $(cat "$TEST_TMP/msr.log")"
echo "lockdown: read-only, thermal served, writes refused and said so: ok"
