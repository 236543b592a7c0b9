#!/bin/sh
# The page's last-hour charts in headless Chromium, in the light and the dark
# colour scheme, against a simulated Westmere-EP whose socket 1 DRAM
# throttles from 1 s to 8 s of every 600 s (tests/data/scenarios/dram-pulse.ini):
# one chart per socket with as many points as /api/v1/history has, a DRAM
# area on socket 1 at the pulse and none on socket 0, readouts on hover and
# keyboard focus, and charts that stay when a fetch fails.  Screenshots go
# to tests/artifacts/web-history-{light,dark}.png.
# UNCORED_SCREENSHOT_TO=FILE also copies the light screenshot there (the
# README's picture: docs/web-history.png).
# Needs Debian's chromium and npm (playwright-core is installed into
# ~/.cache/uncored-npm on first use); skips (77) without them.
. "$UNCORED_SOURCE_ROOT/tests/e2e/lib.sh"

[ -x /usr/bin/chromium ] || skip "/usr/bin/chromium is not installed (apt install chromium)"
command -v node >/dev/null || skip "node is not installed"
pw=$(playwright_core) || skip "could not install playwright-core from npm"

write_conf "$TEST_TMP/uncored.conf" 0
t_before=$(date +%s.%N)
start_daemon 0 "$TEST_TMP/daemon.log" --config "$TEST_TMP/uncored.conf" \
	--simulate "westmere-ep-2s:$UNCORED_SOURCE_ROOT/tests/data/scenarios/dram-pulse.ini"
t_healthy=$(date +%s.%N)

artifacts="$UNCORED_SOURCE_ROOT/tests/artifacts"
mkdir -p "$artifacts"
# Both schemes at once, each in a browser of its own.
for scheme in light dark; do
	rm -f "$artifacts/web-history-$scheme.png"
	PLAYWRIGHT_CORE="$pw" UNCORED_URL="$DAEMON_URL" USER_DATA_DIR="$TEST_TMP/chromium-$scheme" \
	SCREENSHOT="$artifacts/web-history-$scheme.png" T_BEFORE="$t_before" T_HEALTHY="$t_healthy" \
	COLOR_SCHEME="$scheme" timeout -s KILL 120 node "$UNCORED_SOURCE_ROOT/tests/e2e/web_history_check.js" \
		>"$TEST_TMP/check-$scheme.log" 2>&1 &
	eval "check_$scheme=\$!"
	PIDS="$PIDS $!"
done
for scheme in light dark; do
	rc=0
	eval "wait \"\$check_$scheme\"" || rc=$?
	cat "$TEST_TMP/check-$scheme.log"
	[ "$rc" = 0 ] || { cat "$TEST_TMP/daemon.log" >&2; fail "history charts check failed ($scheme)"; }
	[ -s "$artifacts/web-history-$scheme.png" ] || fail "no screenshot at $artifacts/web-history-$scheme.png"
done
if [ -n "${UNCORED_SCREENSHOT_TO:-}" ]; then
	cp "$artifacts/web-history-light.png" "$UNCORED_SCREENSHOT_TO"
fi
stop_daemon "$DAEMON_PID" || fail "daemon exited with status $? on SIGTERM"
echo "web_history: ok (screenshots in $artifacts)"
