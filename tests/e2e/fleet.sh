#!/bin/sh
# A fleet of 20 simulated daemons on loopback: 17 Westmere-EP, 3 of them
# with socket 1 DRAM overheating (dram-heatwave), the rest idle, and 3
# Skylake-SP, where the Nehalem/Westmere uncore collector does not apply,
# scraped by a real Prometheus loading conf/prometheus/uncored.rules.yml:
# the DRAM throttling alert fires for exactly those 3 instances, socket 1,
# and for nothing else, and no collector counts as down anywhere.
# Bounded: about a minute; every process stopped by PID.
lib="$UNCORED_SOURCE_ROOT/tests/e2e/lib.sh"
[ -f "$lib" ] || { echo "SKIP: $lib (from the integ branch) is not there yet" >&2; exit 77; }
. "$lib"
command -v jq >/dev/null || skip "jq is not installed"
command -v prometheus >/dev/null || skip "prometheus is not installed"

FLEET=20
HOT="4 11 17"                  # which daemons run dram-heatwave
SKY="7 14 20"                  # which daemons are Skylake-SP (idle)
export UNCORED_TEST_INTERVAL=1 # 20 daemons share two CPUs with the rest

targets=""
expected=""
for i in $(seq 1 "$FLEET"); do
	scenario=idle
	model=westmere-ep-2s
	for h in $HOT; do
		[ "$i" -eq "$h" ] && scenario=dram-heatwave
	done
	for h in $SKY; do
		[ "$i" -eq "$h" ] && model=skylake-sp-2s
	done
	port=$(free_port)
	write_conf "$TEST_TMP/uncored-$i.conf" "$port"
	start_daemon "$port" "$TEST_TMP/daemon-$i.log" --config "$TEST_TMP/uncored-$i.conf" \
		--simulate "$model:$scenario"
	targets="$targets 127.0.0.1:$port"
	if [ "$scenario" = dram-heatwave ]; then
		expected="$expected 127.0.0.1:$port/1"
	fi
done
expected=$(echo "$expected" | tr ' ' '\n' | sed '/^$/d' | sort | tr '\n' ' ')

# A test copy of the shipped rules with only the DRAM warning's `for: 1m`
# shortened to 5s, so the alert can fire within the test's time limit;
# everything else (expressions, labels, the other alerts) is unchanged.
rules="$TEST_TMP/uncored.rules.yml"
awk '
	/^ *- alert: / { in_dram = ($3 == "UncoredDramThermalThrottling") }
	in_dram && /^ *for: 1m$/ { sub(/1m$/, "5s"); in_dram = 0 }
	{ print }
' "$UNCORED_SOURCE_ROOT/conf/prometheus/uncored.rules.yml" >"$rules"
grep -q 'for: 5s' "$rules" || fail "could not shorten the DRAM alert's for: in the test rules"

# shellcheck disable=SC2086 # one argument per target
start_prometheus "$rules" $targets

# DRAM alerts as "instance/socket state" lines, sorted.
dram_alerts() {
	curl -fsS --max-time 5 "$PROM_URL/api/v1/alerts" |
		jq -r '.data.alerts[] | select(.labels.alertname == "UncoredDramThermalThrottling")
			| "\(.labels.instance)/\(.labels.socket) \(.state)"' | sort
}

want=$(for e in $expected; do echo "$e firing"; done)
got=""
for _ in $(seq 1 90); do
	got=$(dram_alerts || true)
	[ "$got" = "$want" ] && break
	sleep 1
done
if [ "$got" != "$want" ]; then
	echo "expected:" >&2
	echo "$want" >&2
	echo "got:" >&2
	echo "$got" >&2
	curl -fsS --max-time 5 "$PROM_URL/api/v1/rules" | jq -c '.data.groups[].rules[] | {name, health, lastError}' >&2 || true
	fail "UncoredDramThermalThrottling does not fire for exactly the three hot instances, socket 1"
fi

# Every target is up and the fraction is 0 on all other sockets.
up=$(prom_query 'count(up{job="uncored"} == 1)' | jq -r '.[0].value[1]')
[ "$up" = "$FLEET" ] || fail "$up of $FLEET targets are up"
# Skylake-SP has no DRAM series of this build (its iMC needs the imc collector).
westmere=$((FLEET - 3))
others=$(prom_query 'count(uncored:dram_throttled_fraction:rate1m{cause="thermal"} == 0)' | jq -r '.[0].value[1]')
[ "$others" = "$((westmere * 2 - 3))" ] ||
	fail "$others sockets have a zero DRAM throttled fraction, expected $((westmere * 2 - 3))"
# The uncore collector does not apply on Skylake-SP: not applicable there, and
# nothing for UncoredCollectorDown to fire on anywhere.
na=$(prom_query 'count(uncored_collector_applicable{collector="uncore"} == 0)' | jq -r '.[0].value[1]')
[ "$na" = 3 ] || fail "$na hosts report the uncore collector not applicable, expected 3"
down=$(prom_query 'uncored_collector_up == 0' | jq -r 'length')
[ "$down" = 0 ] || fail "collectors down: $(prom_query 'uncored_collector_up == 0' | jq -c .)"
echo "fleet: ok ($(echo "$want" | tr '\n' ';'))"
