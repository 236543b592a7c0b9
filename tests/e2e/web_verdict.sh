#!/bin/sh
# The page answers first, in headless Chromium, on Westmere-EP, Sapphire
# Rapids, Granite Rapids and Genoa, each with heat on socket 1 that comes
# and stops (tests/data/scenarios: dram-pulse.ini on Westmere, no channels;
# dram-channel-pulse.ini, channel 2; dimm-pulse.ini, Genoa's DIMM of
# channel 3 at 90 C): while hot, the verdict names socket 1 and, where the
# hardware has channels, the channel; a page opened after the heat stopped
# still names it over the last hour and its DIMM map marks where it was,
# on socket 1 alone; Genoa's core grid shows its CCD temperatures; no card
# says "not asserted" beside a PROCHOT share above zero (also on Granite
# Rapids' prochot-storm); no T/P badge overlaps a core's number or
# temperature, by their element boxes (prochot-storm: cores at TjMax and
# throttled).  An idle Sapphire Rapids says there was no heat.
# Screenshots: tests/artifacts/web-verdict-MODEL.png.
# Needs Debian's chromium and npm (playwright-core); skips (77) without them.
. "$(dirname "$0")/lib.sh"

[ -x /usr/bin/chromium ] || skip "/usr/bin/chromium is not installed (apt install chromium)"
command -v node >/dev/null || skip "node is not installed"
pw=$(playwright_core) || skip "could not install playwright-core from npm"

data="$UNCORED_SOURCE_ROOT/tests/data/scenarios"
write_conf "$TEST_TMP/u.conf" 0
urls=""
# MODEL=SCENARIO NAME: the channel the verdict must name ("-": none, the socket only).
for run in "westmere-ep-2s=$data/dram-pulse.ini=-" "sapphire-rapids-2s=$data/dram-channel-pulse.ini=2" \
	"granite-rapids-2s=$data/dram-channel-pulse.ini=2" "genoa-2s=$data/dimm-pulse.ini=3"; do
	m=${run%%=*}
	rest=${run#*=}
	start_daemon 0 "$TEST_TMP/$m.log" --config "$TEST_TMP/u.conf" --simulate "$m:${rest%=*}"
	urls="$urls $m=${rest##*=}=$DAEMON_URL=$(date +%s.%N)"
done
start_daemon 0 "$TEST_TMP/storm.log" --config "$TEST_TMP/u.conf" --simulate granite-rapids-2s:prochot-storm
storm=$DAEMON_URL
start_daemon 0 "$TEST_TMP/idle.log" --config "$TEST_TMP/u.conf" --simulate sapphire-rapids-2s:idle
idle=$DAEMON_URL

artifacts="$UNCORED_SOURCE_ROOT/tests/artifacts"
mkdir -p "$artifacts"
PLAYWRIGHT_CORE="$pw" RUNS="$urls" STORM_URL="$storm" IDLE_URL="$idle" ARTIFACTS="$artifacts" \
USER_DATA_DIR="$TEST_TMP/chromium-profile" \
	timeout -s KILL 240 node "$UNCORED_SOURCE_ROOT/tests/e2e/web_verdict_check.js" ||
	{ tail -n 20 "$TEST_TMP"/*.log >&2; fail "web page verdict check failed"; }
for m in westmere-ep-2s sapphire-rapids-2s granite-rapids-2s genoa-2s; do
	[ -s "$artifacts/web-verdict-$m.png" ] || fail "no screenshot at $artifacts/web-verdict-$m.png"
done
echo "web_verdict: ok"
