#!/bin/sh
# Episodes a person can read, against a simulated Granite Rapids in a
# PROCHOT storm (socket 0, a 30 s period): the log names each episode's
# place and condition in words, once as it starts and once as it ends; in
# headless Chromium the page has one episode row per place and condition
# (six), an ongoing row gives its running length, and 15 minutes of the
# storm are still six rows in an episode section of less than half a
# screen (web_episodes_check.js).  Screenshot: tests/artifacts/web-episodes.png.
# Needs Debian's chromium and npm (playwright-core is installed into
# ~/.cache/uncored-npm on first use); skips (77) without them.
. "$UNCORED_SOURCE_ROOT/tests/e2e/lib.sh"

[ -x /usr/bin/chromium ] || skip "/usr/bin/chromium is not installed (apt install chromium)"
command -v node >/dev/null || skip "node is not installed"
command -v jq >/dev/null || skip "jq is not installed"
pw=$(playwright_core) || skip "could not install playwright-core from npm"

write_conf "$TEST_TMP/uncored.conf" 0
start_daemon 0 "$TEST_TMP/daemon.log" --config "$TEST_TMP/uncored.conf" \
	--simulate granite-rapids-2s:prochot-storm

# The first period's episodes have all ended: one ended episode at each of the six places.
eps=""
six_places_ended() {
	eps=$(curl -fsS --max-time 5 "$DAEMON_URL/api/v1/episodes") &&
		echo "$eps" | jq -e '[.episodes[] | select(.end != null) |
			[.kind, .socket, .labels.die, .labels.channel, .core]] | unique | length >= 6' >/dev/null
}
wait_until 60 six_places_ended || fail "no ended episode at six places after 60 s: $eps"
echo "$eps" | jq -e '.episodes | all(.socket == 0 and (.place | type == "string") and
	(.what | type == "string"))' >/dev/null || fail "an episode off socket 0 or without words: $eps"

# Each episode is logged in words once as it starts and once as it ends.
expect_log "$TEST_TMP/daemon.log" 'socket 0 core 0: core throttled for heat ended after [0-9]+\.[0-9] s' \
	"the end of core 0's episode"
expect_log "$TEST_TMP/daemon.log" 'socket 0: PROCHOT asserted' "a PROCHOT episode"
grep -E '^uncored: socket [0-9].*(_seconds|_throttling)' "$TEST_TMP/daemon.log" &&
	fail "the log names an episode by its key, not in words"
# The episodes the API shows as ended were logged before the snapshot that
# shows them was published: one end line each (one more may have ended since).
ended_core0=$(echo "$eps" | jq '[.episodes[] | select(.kind == "core_thermal_throttling" and .core == 0 and .end != null)] | length')
logged_core0=$(grep -c 'socket 0 core 0: core throttled for heat ended after' "$TEST_TMP/daemon.log")
[ "$logged_core0" -ge "$ended_core0" ] && [ "$logged_core0" -le $((ended_core0 + 1)) ] ||
	fail "core 0: $ended_core0 episodes ended, $logged_core0 end lines logged"

artifacts="$UNCORED_SOURCE_ROOT/tests/artifacts"
mkdir -p "$artifacts"
rm -f "$artifacts/web-episodes.png"
PLAYWRIGHT_CORE="$pw" UNCORED_URL="$DAEMON_URL" USER_DATA_DIR="$TEST_TMP/chromium-profile" \
SCREENSHOT="$artifacts/web-episodes.png" \
	timeout -s KILL 150 node "$UNCORED_SOURCE_ROOT/tests/e2e/web_episodes_check.js" \
	>"$TEST_TMP/check.log" 2>&1 &
node_pid=$!
PIDS="$PIDS $node_pid"
rc=0
wait "$node_pid" || rc=$?
cat "$TEST_TMP/check.log"
[ "$rc" = 0 ] || { cat "$TEST_TMP/daemon.log" >&2; fail "episode rows check failed (status $rc)"; }
[ -s "$artifacts/web-episodes.png" ] || fail "no screenshot at $artifacts/web-episodes.png"
stop_daemon "$DAEMON_PID" || fail "daemon exited with status $? on SIGTERM"
echo "web_episodes: ok (screenshot $artifacts/web-episodes.png)"
