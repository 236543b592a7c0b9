#!/bin/sh
# A real Prometheus server scrapes the daemon on simulated hardware in the
# dram-heatwave scenario; through its query API the DRAM throttled-cycle
# rate of socket 1 is above zero and that of socket 0 is zero.
. "$(dirname "$0")/lib.sh"

write_conf "$TEST_TMP/u.conf" 0
start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --simulate westmere-ep-2s:dram-heatwave
start_prometheus "" "127.0.0.1:$DAEMON_PORT"

q1='rate(uncored_uncore_events_total{event="dram_thermal_throttled_cycles",socket="1"}[1m])'
q0='rate(uncored_uncore_events_total{event="dram_thermal_throttled_cycles",socket="0"}[1m])'
for _ in $(seq 1 60); do
	r1=$(prom_query "$q1" | jq -r '.[0].value[1] // empty')
	r0=$(prom_query "$q0" | jq -r '.[0].value[1] // empty')
	if [ -n "$r1" ] && [ -n "$r0" ]; then
		break
	fi
	sleep 1
done
[ -n "$r1" ] || fail "no rate for socket 1 after 60 s; targets: $(curl -s "$PROM_URL/api/v1/targets" | jq -c '.data.activeTargets[] | {health, lastError}')"
awk -v v="$r1" 'BEGIN { exit !(v > 0) }' || fail "socket 1 rate $r1, expected > 0"
awk -v v="$r0" 'BEGIN { exit !(v == 0) }' || fail "socket 0 rate $r0, expected 0"
up=$(prom_query 'up{job="uncored"}' | jq -r '.[0].value[1]')
[ "$up" = 1 ] || fail "scrape target not up"
echo "prometheus: socket 1 rate $r1 cycles/s, socket 0 rate $r0: ok"
