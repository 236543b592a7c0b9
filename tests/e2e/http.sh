#!/bin/sh
# Every HTTP route with curl, the exposition through promtool, and bad
# requests answered with the right status without disturbing sampling.
. "$(dirname "$0")/lib.sh"

write_conf "$TEST_TMP/u.conf" 0
start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --simulate westmere-ep-2s:prochot-storm
url=$DAEMON_URL

code() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$@"; }

[ "$(code "$url/metrics")" = 200 ] || fail "/metrics"
curl -fsS -D "$TEST_TMP/h" -o "$TEST_TMP/metrics" "$url/metrics"
grep -qi '^content-type: text/plain; version=0.0.4' "$TEST_TMP/h" || fail "metrics content type: $(cat "$TEST_TMP/h")"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TEST_TMP/metrics" >"$TEST_TMP/promtool.out" 2>&1 || fail "promtool: $(cat "$TEST_TMP/promtool.out")"
	[ ! -s "$TEST_TMP/promtool.out" ] || fail "promtool complaints: $(cat "$TEST_TMP/promtool.out")"
fi
for family in uncored_build_info uncored_cpu_info uncored_collector_up uncored_samples_total \
	uncored_sample_errors_total uncored_last_sample_duration_seconds uncored_uncore_events_total \
	uncored_uncore_clockticks_total uncored_pmu_conflicts_total uncored_core_temperature_celsius \
	uncored_tjmax_celsius uncored_core_thermal_throttling uncored_core_prochot_active \
	uncored_kernel_core_throttles_total uncored_core_instructions_total uncored_core_cycles_total \
	uncored_core_ref_cycles_total uncored_core_events_total; do
	grep -q "^# TYPE $family " "$TEST_TMP/metrics" || fail "family $family missing"
done
# Westmere has no package thermal MSR and no RAPL: those families are omitted, not zero.
grep -q '^uncored_package_temperature_celsius' "$TEST_TMP/metrics" && fail "package temperature on westmere"
grep -q '^uncored_rapl_' "$TEST_TMP/metrics" && fail "RAPL on westmere"

curl -fsS "$url/api/v1/snapshot" | jq -e '.sockets | length == 2' >/dev/null || fail "/api/v1/snapshot"
curl -fsS "$url/api/v1/episodes" | jq -e '.episodes | type == "array"' >/dev/null || fail "/api/v1/episodes"
[ "$(code "$url/healthz")" = 200 ] || fail "/healthz"
[ "$(code "$url/")" = 200 ] || fail "/"
[ "$(code "$url/nope")" = 404 ] || fail "unknown path not 404"
[ "$(code -X POST -d x=1 "$url/metrics")" = 405 ] || fail "POST not 405"
curl -s -D - -o /dev/null -X DELETE "$url/metrics" | grep -qi '^allow: GET, HEAD' || fail "405 without Allow"
[ "$(code -I "$url/metrics")" = 200 ] || fail "HEAD"

# A header far beyond the limit is refused; the daemon keeps serving.
big=$(head -c 100000 /dev/zero | tr '\0' 'a')
c=$(code -H "X-Big: $big" "$url/metrics" || true)
case "$c" in 2*) fail "100 kB header accepted ($c)";; esac
[ "$(code "$url/metrics")" = 200 ] || fail "not serving after a huge header"

# A malformed request line.
printf 'GARBAGE\r\n\r\n' | timeout 5 python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(sys.stdin.buffer.read())
print(s.recv(100).decode(errors="replace").split("\r\n")[0])' "$DAEMON_PORT" >"$TEST_TMP/garbage" || true
grep -q ' 4[0-9][0-9] \|^$' "$TEST_TMP/garbage" || fail "garbage request: $(cat "$TEST_TMP/garbage")"
[ "$(code "$url/metrics")" = 200 ] || fail "not serving after a garbage request"

# Samples keep coming: totals grow and never go backwards.
s1=$(samples_total "$url")
samples_grow "$url" || fail "samples_total did not grow from $s1 in 30 s"
s2=$(samples_total "$url")
[ "$s2" -gt "$s1" ] || fail "samples_total went backwards ($s1 -> $s2)"
stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"
echo "http: ok"
