#!/bin/sh
# 10,000 scrapes of /metrics over keep-alive connections while SIGHUP
# reloads run in a loop every 50 ms, alternating between two configurations
# whose conflict policies differ so every applied reload restarts the uncore
# and core collectors (their totals carried over).  Every scrape must answer
# 200 and no counter (uncored_samples_total, every uncore and core total) may
# go backwards between two scrapes of one client; SIGTERM then exits 0.
#
# This is also the leak check after a run with reloads and scrapes: in the
# sanitizer build (tests/run-all, -Db_sanitize=address with
# ASAN_OPTIONS=detect_leaks=1) LeakSanitizer runs at exit and turns any leak
# into a non-zero exit status, which fails the test below, and its report in
# the log is named in the failure.
. "$(dirname "$0")/lib.sh"

UNCORED_TEST_INTERVAL=0.1
write_conf "$TEST_TMP/a.conf" 0 "[uncore]" "on_conflict = reclaim" "[core]" "on_conflict = reclaim"
write_conf "$TEST_TMP/b.conf" 0 "[uncore]" "on_conflict = yield" "[core]" "on_conflict = yield"
cp "$TEST_TMP/a.conf" "$TEST_TMP/u.conf"
start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" \
	--scenario-dir "$SCENARIOS" --simulate westmere-ep-2s:dram-heatwave

# The reload loop: swap the file atomically, then SIGHUP, every 50 ms.
touch "$TEST_TMP/reloading"
(
	n=0
	while [ -e "$TEST_TMP/reloading" ]; do
		if [ $((n % 2)) = 0 ]; then src=b; else src=a; fi
		cp "$TEST_TMP/$src.conf" "$TEST_TMP/u.tmp" && mv "$TEST_TMP/u.tmp" "$TEST_TMP/u.conf"
		kill -HUP "$DAEMON_PID" 2>/dev/null || break
		n=$((n + 1))
		sleep 0.05
	done
	echo "$n" >"$TEST_TMP/n_reloads"
) &
reloader=$!
PIDS="$PIDS $reloader"

storm_rc=0
timeout 50 python3 "$(dirname "$0")/scrape_storm.py" 127.0.0.1 "$DAEMON_PORT" 10000 4 || storm_rc=$?
rm -f "$TEST_TMP/reloading"
wait "$reloader" || true
[ "$storm_rc" = 0 ] || fail "scrape storm failed (status $storm_rc); daemon log: $(tail -20 "$TEST_TMP/log")"
n_reloads=$(cat "$TEST_TMP/n_reloads")
[ "$n_reloads" -ge 20 ] || fail "only $n_reloads reloads ran during the storm"
applied=$(grep -c "configuration applied" "$TEST_TMP/log" || true)
[ "$applied" -ge 5 ] || fail "only $applied reloads were applied during the storm"
kill -0 "$DAEMON_PID" || fail "daemon died during the storm"

rc=0
stop_daemon "$DAEMON_PID" || rc=$?
if grep -q "LeakSanitizer" "$TEST_TMP/log"; then
	cat "$TEST_TMP/log" >&2
	fail "LeakSanitizer reports a leak after $n_reloads reloads and 10000 scrapes"
fi
grep -q "ERROR: AddressSanitizer\|runtime error:" "$TEST_TMP/log" && fail "sanitizer report: $(cat "$TEST_TMP/log")"
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM: $(tail -20 "$TEST_TMP/log")"
echo "scrape_reload_storm: 10000 scrapes, $n_reloads reloads ($applied applied), no leak: ok"
