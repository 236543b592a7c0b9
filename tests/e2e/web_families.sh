#!/bin/sh
# The throttle families on the page, for every simulated server model whose
# socket 1 channel 2 DIMMs are hot (dimm-hot-channel): /api/v1/episodes has
# DRAM episodes for socket 1 channel 2 and nothing else; in headless
# Chromium socket 1's card says DRAM is throttling on channel 2, socket 0's
# says it is not, and "not measured" appears only for a family the
# snapshot has no field of; the history (the "Last hour" charts) draws the
# DRAM family on Sapphire Rapids.
# Ice Lake-SP's kernel registers a third channel per controller with no
# memory behind it (channel 2 among them): there channel 1 is the hot one.
# AMD EPYC (Genoa, Turin) has no DRAM throttle counter: with a DIMM of
# socket 1 at 90 C and PROCHOT on socket 1, socket 1's card and DIMM map
# name that DIMM at twice the refresh rate, socket 0's none, and the rows
# of Intel-only registers say the CPU has none; its history draws Tctl as
# the package line and names it.
# Needs Debian's chromium and npm (playwright-core); skips (77) without them.
. "$(dirname "$0")/lib.sh"

models="westmere-ep-2s sandy-bridge-ep-2s skylake-sp-2s cascade-lake-ap-2s icelake-sp-2s
sapphire-rapids-2s granite-rapids-2s"
write_conf "$TEST_TMP/u.conf" 0
sed 's/^channel = 2$/channel = 1/' "$UNCORED_SOURCE_ROOT/conf/scenarios/dimm-hot-channel.ini" \
	>"$TEST_TMP/hot-channel-1.ini"
hot_channel() { [ "$1" = icelake-sp-2s ] && echo 1 || echo 2; }
urls=""
for m in $models; do
	scenario=dimm-hot-channel
	[ "$(hot_channel "$m")" = 1 ] && scenario="$TEST_TMP/hot-channel-1.ini"
	start_daemon 0 "$TEST_TMP/$m.log" --config "$TEST_TMP/u.conf" --simulate "$m:$scenario"
	urls="$urls $m=$DAEMON_URL"
done

# Within two sample intervals of the first throttled sample: episodes of socket 1's hot channel only.
for pair in $urls; do
	m=${pair%%=*}
	url=${pair#*=}
	ch=$(hot_channel "$m")
	eps=""
	has_episode() {
		eps=$(curl -fsS --max-time 5 "$url/api/v1/episodes") &&
			echo "$eps" | jq -e '[.episodes[] | select(.kind == "dram_throttled_seconds")] | length > 0' >/dev/null
	}
	wait_until 30 has_episode || fail "$m: no DRAM episode: $eps"
	echo "$eps" | jq -e --arg ch "$ch" '.episodes | all(.socket == 1 and
		(.labels.channel // $ch) == $ch)' >/dev/null || fail "$m: an episode off socket 1 channel $ch: $eps"
done

# Nehalem-EP has no DRAM throttle event: its hot channel is measured by nothing, so it has no
# episode and both cards say DRAM throttling is not measured.
start_daemon 0 "$TEST_TMP/nehalem.log" --config "$TEST_TMP/u.conf" --simulate nehalem-ep-2s:dimm-hot-channel
unmeasured_urls="nehalem-ep-2s=$DAEMON_URL"
wait_until 30 curl -fsS --max-time 5 -o "$TEST_TMP/nehalem.json" "$DAEMON_URL/api/v1/snapshot" ||
	fail "nehalem-ep-2s: no snapshot"
curl -fsS --max-time 5 "$DAEMON_URL/api/v1/episodes" | jq -e '.episodes == []' >/dev/null ||
	fail "nehalem-ep-2s: an episode without a DRAM throttle event"

# PROCHOT on socket 1 only, on an Intel and an AMD server: its episodes are socket 1's alone.
printf '[scenario]\nperiod = 60\n\n[prochot.1]\nsocket = 1\nstart = 0\nend = 60\nduty = 0.5\ncycle = 2\n' \
	>"$TEST_TMP/prochot-1.ini"
prochot_urls=""
for m in sapphire-rapids-2s genoa-2s; do
	start_daemon 0 "$TEST_TMP/$m-prochot.log" --config "$TEST_TMP/u.conf" \
		--simulate "$m:$TEST_TMP/prochot-1.ini"
	prochot_urls="$prochot_urls $m=$DAEMON_URL"
done
for pair in $prochot_urls; do
	m=${pair%%=*}
	url=${pair#*=}
	eps=""
	has_prochot_episode() {
		eps=$(curl -fsS --max-time 5 "$url/api/v1/episodes") &&
			echo "$eps" | jq -e '[.episodes[] | select(.kind == "prochot_seconds")] | length > 0' >/dev/null
	}
	wait_until 30 has_prochot_episode || fail "$m: no PROCHOT episode: $eps"
	echo "$eps" | jq -e '.episodes | all(.socket == 1)' >/dev/null ||
		fail "$m: a PROCHOT-scenario episode off socket 1: $eps"
done

# The last hour draws the family too: on Sapphire Rapids (no uncore cycles, no PROCHOT bit for DRAM)
# socket 1's DRAM fraction is above zero once a step has closed, socket 0's is zero.
spr=$(echo "$urls" | tr ' ' '\n' | sed -n 's/^sapphire-rapids-2s=//p')
hist=""
has_step() {
	hist=$(curl -fsS --max-time 5 "$spr/api/v1/history") &&
		echo "$hist" | jq -e '.sockets[1].dram_throttled_fraction | length > 0' >/dev/null
}
wait_until 30 has_step || fail "sapphire-rapids-2s: no history step: $hist"
echo "$hist" | jq -e '(.sockets[1].dram_throttled_fraction | max > 0) and
	(.sockets[0].dram_throttled_fraction | max == 0) and
	(.sockets[0].frequency_limited_fraction | all(. != null))' >/dev/null ||
	fail "sapphire-rapids-2s: history does not draw the families: $hist"

# AMD: socket 1 has a DIMM at 90 C (channel 3, slot 0) and PROCHOT all along.
amd_urls=""
for m in genoa-2s turin-2s; do
	start_daemon 0 "$TEST_TMP/$m-amd.log" --config "$TEST_TMP/u.conf" --simulate "$m:$UNCORED_SOURCE_ROOT/tests/e2e/amd_dimm_heat.ini"
	amd_urls="$amd_urls $m=$DAEMON_URL"
done

# The last hour of an AMD socket draws k10temp's Tctl as its package line, says so, and has no
# margin to TjMax (AMD has none) rather than a made-up one.
genoa=$(echo "$amd_urls" | tr ' ' '\n' | sed -n 's/^genoa-2s=//p')
has_amd_step() {
	hist=$(curl -fsS --max-time 5 "$genoa/api/v1/history") &&
		echo "$hist" | jq -e '.sockets[0].time | length > 0' >/dev/null
}
wait_until 30 has_amd_step || fail "genoa-2s: no history step: $hist"
echo "$hist" | jq -e '.sockets | length == 2 and all(.package_sensor == "Tctl" and
	(.package_celsius | all(. == 45)) and (.margin_celsius | all(. == null)) and
	(.hottest_core_celsius | all(. == null)))' >/dev/null ||
	fail "genoa-2s: history has no Tctl line: $hist"
curl -fsS --max-time 5 "$spr/api/v1/history" | jq -e '.sockets | all(has("package_sensor") | not)' >/dev/null ||
	fail "sapphire-rapids-2s: history names a package sensor it has"

[ -x /usr/bin/chromium ] || skip "/usr/bin/chromium is not installed (apt install chromium)"
command -v node >/dev/null || skip "node is not installed"
pw=$(playwright_core) || skip "could not install playwright-core from npm"
artifacts="$UNCORED_SOURCE_ROOT/tests/artifacts"
mkdir -p "$artifacts"
rm -f "$artifacts/web-families.png" "$artifacts/web-families-genoa.png"
PLAYWRIGHT_CORE="$pw" UNCORED_URLS="$urls" HOT_CHANNELS="icelake-sp-2s=1" \
PROCHOT_URLS="$prochot_urls" UNMEASURED_URLS="$unmeasured_urls" AMD_URLS="$amd_urls" \
AMD_SCREENSHOT="$artifacts/web-families-genoa.png" AMD_SCREENSHOT_MODEL=genoa-2s USER_DATA_DIR="$TEST_TMP/chromium-profile" \
SCREENSHOT="$artifacts/web-families.png" SCREENSHOT_MODEL=sapphire-rapids-2s \
	timeout -s KILL 240 node "$UNCORED_SOURCE_ROOT/tests/e2e/web_families_check.js" ||
	fail "web page check of the throttle families failed"
[ -s "$artifacts/web-families.png" ] || fail "no screenshot at $artifacts/web-families.png"
# UNCORED_SCREENSHOT_TO=FILE copies the Sapphire Rapids picture there (the README's: docs/web-sapphire-rapids.png).
if [ -n "${UNCORED_SCREENSHOT_TO:-}" ]; then
	cp "$artifacts/web-families.png" "$UNCORED_SCREENSHOT_TO"
fi
[ -s "$artifacts/web-families-genoa.png" ] || fail "no screenshot at $artifacts/web-families-genoa.png"
echo "web_families: ok ($(echo $models | wc -w) Intel models, genoa-2s and turin-2s)"
