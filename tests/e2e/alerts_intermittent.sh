#!/bin/sh
# Heat that comes and goes, under a real Prometheus with the shipped rules:
# a Genoa DIMM hot 45 s of every minute, a Skylake-SP core at TjMax 25 s of
# every minute, a Sapphire Rapids channel throttled 20 s of every minute,
# each for 10 minutes; a cool Westmere-EP; an Intel and an AMD host with one
# 5 s spike each (DRAM, a core at TjMax and PROCHOT; a DIMM).  Each hot host
# fires its one alert, naming the socket (and the channel, and the slots or
# the core), within 5 minutes of the heat's start, holds it to the end, and
# resolves within 10 minutes of the end; the others never have an alert,
# not even pending.
#
# Time is scaled: the rules are the shipped file with every duration divided
# by UNCORED_TEST_TIME_SCALE (10: 5m is 30 s, for: 1m is 6 s), the scrape and
# evaluation interval is 15 s divided by it, and so are the daemons'
# interval (1 s) and the scenarios' times, so every share, and so every
# alert decision, is the one at full scale.  All times below are full-scale
# seconds; the test takes about 22 minutes of them (2.2 minutes).  Every
# wait polls the Prometheus API against a deadline; every process is
# stopped by PID.
. "$(dirname "$0")/lib.sh"
command -v jq >/dev/null || skip "jq is not installed"
command -v prometheus >/dev/null || skip "prometheus is not installed"
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed (tests/e2e/scale_rules.py)"

F=${UNCORED_TEST_TIME_SCALE:-10}
HEAT_START=120 # full-scale seconds after each daemon's start
HEAT_END=720   # 10 minutes of heat
FIRE_BY=300    # after the heat's start
RESOLVE_BY=600 # after its end
# Full-scale seconds as scaled ones.
s() { echo "$1 $F" | awk '{ printf "%g", $1 / $2 }'; }

rules="$TEST_TMP/uncored.rules.yml"
python3 "$UNCORED_SOURCE_ROOT/tests/e2e/scale_rules.py" "$F" \
	"$UNCORED_SOURCE_ROOT/conf/prometheus/uncored.rules.yml" "$rules" ||
	fail "the shipped rules do not scale by $F"
timeout 60 promtool check rules "$rules" >/dev/null || fail "the scaled rules do not load"

# One scenario per host: heat in cycles of a minute between HEAT_START and
# HEAT_END (a cycle's first DUTY of it hot), or a single 5 s spike.
# Usage: scenario NAME KIND SOCKET KEY=VALUE... ; KIND is a rule kind
# (dimm-temperature, temperature, dram-throttle, prochot); DUTY, or spike.
scenario() {
	f="$TEST_TMP/$1.ini"
	[ -f "$f" ] || printf '[scenario]\ndescription = %s\nperiod = 0\n' "$1" >"$f"
	n=$(grep -c '^\[' "$f")
	kind=$2
	duty=$3
	shift 3
	{
		printf '\n[%s.%s]\n' "$kind" "$n"
		for kv in "$@"; do
			echo "$kv" | sed 's/=/ = /'
		done
		if [ "$duty" = spike ]; then
			echo "start = $(s $HEAT_START)"
			echo "end = $(s $((HEAT_START + 5)))"
		else
			echo "start = $(s $HEAT_START)"
			echo "end = $(s $HEAT_END)"
			echo "duty = $duty"
			echo "cycle = $(s 60)"
		fi
	} >>"$f"
}
scenario genoa-dimm dimm-temperature 0.75 socket=1 channel=4 slot=0 celsius=90
scenario skylake-core temperature 0.41667 socket=1 core=3 celsius=101
scenario spr-channel dram-throttle 0.33333 socket=1 channel=5
scenario spike-intel dram-throttle spike socket=0 channel=1
scenario spike-intel temperature spike socket=0 core=2 celsius=101
scenario spike-intel prochot spike socket=0
scenario spike-amd dimm-temperature spike socket=0 channel=2 slot=0 celsius=90

# name model scenario
hosts="genoa-dimm genoa-2s $TEST_TMP/genoa-dimm.ini
skylake-core skylake-sp-2s $TEST_TMP/skylake-core.ini
spr-channel sapphire-rapids-2s $TEST_TMP/spr-channel.ini
cool westmere-ep-2s idle
spike-intel sapphire-rapids-2s $TEST_TMP/spike-intel.ini
spike-amd genoa-2s $TEST_TMP/spike-amd.ini"

export UNCORED_TEST_INTERVAL
UNCORED_TEST_INTERVAL=$(s 1)
export UNCORED_TEST_DAEMON_LIMIT=280
write_conf "$TEST_TMP/u.conf" 0
: >"$TEST_TMP/hosts"
targets=""
while read -r name model scen; do
	started=$(date +%s.%N)
	start_daemon 0 "$TEST_TMP/$name.log" --config "$TEST_TMP/u.conf" --simulate "$model:$scen"
	targets="$targets 127.0.0.1:$DAEMON_PORT"
	echo "127.0.0.1:$DAEMON_PORT $name $started" >>"$TEST_TMP/hosts"
done <<EOF
$hosts
EOF

PROM_INTERVAL="$(($(echo "15000 $F" | awk '{ printf "%d", $1 / $2 }')))ms"
PROM_FLAGS="--query.lookback-delta=$(($(echo "300000 $F" | awk '{ printf "%d", $1 / $2 }')))ms"
UNCORED_TEST_PROM_LIMIT=280
export PROM_INTERVAL PROM_FLAGS UNCORED_TEST_PROM_LIMIT
# shellcheck disable=SC2086 # one argument per target
start_prometheus "$rules" $targets

# The timeline: poll /api/v1/alerts until every hot host's alert resolved or
# a deadline passed; the checks and the times seen are the script's output.
python3 - "$PROM_URL" "$TEST_TMP/hosts" "$F" "$HEAT_START" "$HEAT_END" "$FIRE_BY" "$RESOLVE_BY" <<'PY'
import json, sys, time, urllib.request

url, hosts_file, F = sys.argv[1], sys.argv[2], float(sys.argv[3])
heat_start, heat_end, fire_by, resolve_by = map(float, sys.argv[4:8])
hosts = {}
for line in open(hosts_file):
    inst, name, started = line.split()
    hosts[inst] = (name, float(started))
# The one alert each hot host fires: its name and the labels that say where,
# and what its summary must name.
want = {
    'genoa-dimm': ('UncoredDimmHeat', {'socket': '1', 'channel': '4'}, 'socket 1 channel 4 slot 0'),
    'skylake-core': ('UncoredCpuThermalThrottling', {'socket': '1'}, 'socket 1 (core 3)'),
    'spr-channel': ('UncoredDimmHeat', {'socket': '1', 'channel': '5'}, 'socket 1 channel 5 slots 0, 1'),
}
start = {n: s for n, s in hosts.values()}
full = lambda name, t: (t - start[name]) * F   # full-scale seconds since the daemon started
fired, resolved, errors = {}, {}, []

def alerts():
    with urllib.request.urlopen(url + '/api/v1/alerts', timeout=5) as r:
        return json.load(r)['data']['alerts']

last = time.time() + (heat_end + resolve_by + 60) / F + 5
while True:
    now = time.time()
    try:
        got = alerts()
    except OSError as e:
        errors.append(f'the alerts API did not answer: {e}')
        break
    seen = set()
    for a in got:
        name = hosts.get(a['labels'].get('instance'), ('?',))[0]
        alert = a['labels']['alertname']
        w = want.get(name)
        ok = w and alert == w[0] and all(a['labels'].get(k) == v for k, v in w[1].items()) \
            and a['labels'].get('channel') == w[1].get('channel')
        if not ok:
            msg = f'{name}: unexpected {a["state"]} {alert} {json.dumps(a["labels"], sort_keys=True)}'
            if msg not in errors:
                errors.append(msg)
            continue
        if w[2] not in a['annotations'].get('summary', ''):
            msg = f'{name}: the summary {a["annotations"].get("summary")!r} does not name {w[2]!r}'
            if msg not in errors:
                errors.append(msg)
        if a['state'] == 'firing':
            seen.add(name)
            fired.setdefault(name, full(name, now))
    for name in want:
        if name in fired and name not in seen and name not in resolved:
            resolved[name] = full(name, now)
            if resolved[name] < heat_end:
                errors.append(f'{name}: resolved at {resolved[name]:.0f} s, before the heat ended at {heat_end:.0f} s')
        if name not in fired and full(name, now) > heat_start + fire_by:
            msg = f'{name}: not firing {fire_by:.0f} s after the heat started'
            if msg not in errors:
                errors.append(msg)
        if name in fired and name not in resolved and full(name, now) > heat_end + resolve_by:
            msg = f'{name}: still firing {resolve_by:.0f} s after the heat ended'
            if msg not in errors:
                errors.append(msg)
    if len(resolved) == len(want) or any('not firing' in e or 'still firing' in e for e in errors) \
            or now > last:
        break
    time.sleep(min(0.25, 1.5 / F))
for name in want:
    print(f'{name}: {want[name][0]} fired {fired[name] - heat_start:.0f} s after the heat started'
          if name in fired else f'{name}: never fired', end='')
    print(f', resolved {resolved[name] - heat_end:.0f} s after it ended' if name in resolved else '')
for e in errors:
    print('FAIL: ' + e, file=sys.stderr)
sys.exit(1 if errors or len(resolved) != len(want) else 0)
PY
echo "alerts_intermittent: ok (time scaled by $F)"
