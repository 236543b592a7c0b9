#!/bin/sh
# A mixed Intel and AMD fleet under a real Prometheus with the shipped
# alert rules: Westmere-EP with socket 1 DRAM overheating (dram-heatwave),
# Sapphire Rapids with hot DIMMs on socket 1 channel 2 (dimm-hot-channel),
# Genoa and Turin with a DIMM of socket 1 at 90 C (refresh 2) and PROCHOT
# on socket 1 (amd_dimm_heat.ini), and two cool hosts (Westmere-EP and
# Genoa, idle).
# UncoredDimmHeat fires once for socket 1 of each hot host, on both vendors
# (with its channel where the host counts channels) and for nothing else;
# UncoredProchotSustained and UncoredCpuThermalThrottling (the frequency
# limited for heat) for the two AMD ones; the cool hosts fire nothing; and
# no daemon or collector counts as down anywhere, though each host has
# collectors up to fire on.
# The test's copy of the rules has every duration divided by 10 (the
# shipped minutes would not fit a test of seconds: 5m is 30 s, for: 1m is
# 6 s); the expressions, labels and annotations are the shipped ones.
# Bounded: about 30 s; every process stopped by PID.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"
command -v prometheus >/dev/null || skip "prometheus is not installed"
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed (tests/e2e/scale_rules.py)"
export UNCORED_TEST_INTERVAL=1 # six daemons share two CPUs with the rest

# The AMD hot hosts: socket 1 has a DIMM at 90 C (refresh 2) and PROCHOT all along.
amd_hot="$UNCORED_SOURCE_ROOT/tests/e2e/amd_dimm_heat.ini"

# name model scenario: hot hosts first
hosts="westmere-hot westmere-ep-2s dram-heatwave
spr-hot sapphire-rapids-2s dimm-hot-channel
genoa-hot genoa-2s $amd_hot
turin-hot turin-2s $amd_hot
westmere-cool westmere-ep-2s idle
genoa-cool genoa-2s idle"

write_conf "$TEST_TMP/u.conf" 0
targets=""
names=""
while read -r name model scenario; do
	start_daemon 0 "$TEST_TMP/$name.log" --config "$TEST_TMP/u.conf" --simulate "$model:$scenario"
	targets="$targets 127.0.0.1:$DAEMON_PORT"
	names="$names 127.0.0.1:$DAEMON_PORT=$name"
done <<EOF
$hosts
EOF
n_hosts=$(echo "$targets" | wc -w)

rules="$TEST_TMP/uncored.rules.yml"
python3 "$UNCORED_SOURCE_ROOT/tests/e2e/scale_rules.py" 10 \
	"$UNCORED_SOURCE_ROOT/conf/prometheus/uncored.rules.yml" "$rules" ||
	fail "could not scale the test rules"

# shellcheck disable=SC2086 # one argument per target
start_prometheus "$rules" $targets

# Every alert, pending or firing, as "host alertname socket channel state" lines, sorted.
alerts() {
	curl -fsS --max-time 5 "$PROM_URL/api/v1/alerts" |
		jq -r '.data.alerts[] | "\(.labels.instance) \(.labels.alertname) \(.labels.socket // "-") \(.labels.channel // "-") \(.state)"' |
		while read -r instance alert socket channel st; do
			name=$(echo "$names" | tr ' ' '\n' | sed -n "s/^$instance=//p")
			echo "${name:-$instance} $alert $socket $channel $st"
		done | sort
}

want_firing="genoa-hot UncoredCpuThermalThrottling 1 - firing
genoa-hot UncoredDimmHeat 1 3 firing
genoa-hot UncoredProchotSustained 1 - firing
spr-hot UncoredDimmHeat 1 2 firing
turin-hot UncoredCpuThermalThrottling 1 - firing
turin-hot UncoredDimmHeat 1 3 firing
turin-hot UncoredProchotSustained 1 - firing
westmere-hot UncoredDimmHeat 1 - firing"
got=""
all_fire() {
	got=$(alerts) || return 1
	[ "$(echo "$got" | grep -Fxc "$want_firing")" = "$(echo "$want_firing" | wc -l)" ]
}
if ! wait_until 60 all_fire; then
	echo "expected (at least):" >&2
	echo "$want_firing" >&2
	echo "got:" >&2
	echo "$got" >&2
	curl -fsS --max-time 5 "$PROM_URL/api/v1/rules" | jq -c '.data.groups[].rules[] | {name, health, lastError}' >&2 || true
	fail "the hot hosts' alerts do not all fire"
fi

# By then every host has been scraped and evaluated as often as the hot ones, whose alerts went
# through pending to firing: nothing, not even pending, on the cool hosts or on socket 0, no heat
# alert but those expected, and no down alert anywhere.
got=$(alerts)
echo "$got"
echo "$got" | grep -E '^(westmere-cool|genoa-cool) ' && fail "a cool host fires an alert"
echo "$got" | grep -E ' (UncoredDown|UncoredCollectorDown) ' && fail "a daemon or collector counts as down"
echo "$got" | grep -E ' (UncoredDimmHeat|UncoredCpuThermalThrottling|UncoredProchotSustained|UncoredTemperatureNearTjMax) 0 ' &&
	fail "a heat alert on socket 0"
# One alert per condition and place: no heat alert but those expected, none twice.
echo "$got" | grep -E ' Uncored(DimmHeat|CpuThermalThrottling|ProchotSustained|TemperatureNearTjMax) ' |
	sed 's/ [a-z]*$//' | sort | uniq -c | awk '$1 > 1' | grep . && fail "a heat alert twice for one place"
echo "$got" | grep -E ' Uncored(DimmHeat|CpuThermalThrottling|ProchotSustained|TemperatureNearTjMax) ' |
	sed 's/ [a-z]*$/ firing/' | grep -Fxv "$want_firing" && fail "a heat alert not expected"

# Not down because nothing could be: every target is up, and every host has collectors up.
up=$(prom_value 'count(up{job="uncored"} == 1)')
hosts_up=$(prom_value 'count(count by (instance) (uncored_collector_up == 1))')
down=$(prom_value 'count(uncored_collector_up == 0)')
[ "$up/$hosts_up/$down" = "$n_hosts/$n_hosts/" ] ||
	fail "of $n_hosts hosts $up are up and $hosts_up have a collector up; ${down:-no} collectors are down"
# The AMD hosts' DIMM: refresh 2 where hot, and no DRAM throttle family on AMD.
hot=$(prom_value 'count(uncored_dimm_refresh_multiplier{socket="1",channel="3",slot="0"} == 2)')
amd_dram=$(prom_value 'count(uncored_dram_throttled_seconds_total and on(instance) uncored_dimm_refresh_multiplier)')
[ "$hot/$amd_dram" = 2/ ] || fail "$hot AMD hosts with refresh 2 on socket 1 channel 3 slot 0, ${amd_dram:-no} AMD DRAM throttled series"
echo "fleet_vendors: ok"
