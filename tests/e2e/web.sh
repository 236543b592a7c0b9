#!/bin/sh
# The web page in headless Chromium against a simulated Westmere-EP whose
# socket 1 DRAM overheats: the assets are served with their types, the grid
# has one cell per physical core, socket 1 shows DRAM throttling and socket 0
# does not, the package status it lacks is "not on this CPU", a screenshot goes to tests/artifacts/web.png, and after the
# daemon stops the page says it is not answering.
# Needs Debian's chromium and npm (playwright-core is installed into
# ~/.cache/uncored-npm on first use); skips (77) without them.
lib="$UNCORED_SOURCE_ROOT/tests/e2e/lib.sh"
[ -f "$lib" ] || { echo "SKIP: $lib (from the integ branch) is not there yet" >&2; exit 77; }
. "$lib"

write_conf "$TEST_TMP/uncored.conf" 0
start_daemon 0 "$TEST_TMP/daemon.log" --config "$TEST_TMP/uncored.conf" \
	--simulate westmere-ep-2s:dram-heatwave

# The embedded assets, with the right content types.
check_asset() {
	type=$(curl -fsS --max-time 5 -o "$TEST_TMP/asset" -w '%{content_type}' "$DAEMON_URL$1") ||
		fail "GET $1 failed"
	case "$type" in
	"$2"*) ;;
	*) fail "GET $1: content type '$type', expected $2" ;;
	esac
	[ -s "$TEST_TMP/asset" ] || fail "GET $1: empty body"
}
check_asset / text/html
check_asset /index.html text/html
check_asset /app.js text/javascript
check_asset /style.css text/css
curl -fsS --max-time 5 "$DAEMON_URL/" | grep -q 'src="/app.js"' || fail "/ is not the uncored page"

[ -x /usr/bin/chromium ] || skip "/usr/bin/chromium is not installed (apt install chromium)"
command -v node >/dev/null || skip "node is not installed"
pw=$(playwright_core) || skip "could not install playwright-core from npm"

artifacts="$UNCORED_SOURCE_ROOT/tests/artifacts"
mkdir -p "$artifacts"
rm -f "$artifacts/web.png" "$artifacts/web-down.png"

PLAYWRIGHT_CORE="$pw" UNCORED_URL="$DAEMON_URL" USER_DATA_DIR="$TEST_TMP/chromium-profile" \
SCREENSHOT="$artifacts/web.png" SCREENSHOT_DOWN="$artifacts/web-down.png" \
STOP_REQUEST="$TEST_TMP/stop-request" STOPPED="$TEST_TMP/stopped" EXPECT_CORES=12 \
	timeout -s KILL 240 node "$UNCORED_SOURCE_ROOT/tests/e2e/web_check.js" &
node_pid=$!
PIDS="$PIDS $node_pid"

# Stop the daemon when the page asks for it, while the browser watches.
for _ in $(seq 1 900); do
	[ -f "$TEST_TMP/stop-request" ] && break
	kill -0 "$node_pid" 2>/dev/null || break
	sleep 0.1
done
if [ -f "$TEST_TMP/stop-request" ]; then
	stop_daemon "$DAEMON_PID" || fail "daemon exited with status $? on SIGTERM"
	touch "$TEST_TMP/stopped"
fi

rc=0
wait "$node_pid" || rc=$?
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$node_pid" | tr '\n' ' ')
[ "$rc" -eq 0 ] || { cat "$TEST_TMP/daemon.log" >&2; fail "web page check failed (status $rc)"; }
[ -s "$artifacts/web.png" ] || fail "no screenshot at $artifacts/web.png"
echo "web: ok (screenshot $artifacts/web.png)"
