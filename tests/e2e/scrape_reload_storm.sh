#!/bin/sh
# Up to 10,000 scrapes of /metrics (or 40 s of them, whichever comes first)
# over keep-alive connections while SIGHUP reloads run in a loop every
# 50 ms, alternating between two configurations whose conflict policies
# differ so every applied reload restarts the uncore and core collectors
# (their totals carried over).  Every scrape made must answer 200 and no
# counter (uncored_samples_total, every uncore and core total) may go
# backwards between two scrapes of one client; SIGTERM then exits 0.  How
# many scrapes and reloads fit in the time is the machine's speed, not the
# daemon's behaviour, and is not checked (tests/bench measures it): the
# storm starts once a reload has been applied, and the reloads go on until
# five have been.
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

applied() { [ "$(grep -c "configuration applied" "$TEST_TMP/log")" -ge "$1" ]; }
wait_until 60 applied 1 || fail "no reload applied in 60 s: $(tail -20 "$TEST_TMP/log")"
storm_rc=0
timeout 120 python3 "$(dirname "$0")/scrape_storm.py" 127.0.0.1 "$DAEMON_PORT" 10000 4 40 >"$TEST_TMP/storm" ||
	storm_rc=$?
wait_until 60 applied 5 || fail "only $(grep -c "configuration applied" "$TEST_TMP/log") reloads applied in 60 s"
rm -f "$TEST_TMP/reloading"
wait "$reloader" || true
[ "$storm_rc" = 0 ] || fail "scrape storm failed (status $storm_rc); daemon log: $(tail -20 "$TEST_TMP/log")"
n_reloads=$(cat "$TEST_TMP/n_reloads")
applied=$(grep -c "configuration applied" "$TEST_TMP/log")
kill -0 "$DAEMON_PID" || fail "daemon died during the storm"

rc=0
stop_daemon "$DAEMON_PID" || rc=$?
if grep -q "LeakSanitizer" "$TEST_TMP/log"; then
	cat "$TEST_TMP/log" >&2
	fail "LeakSanitizer reports a leak after $n_reloads reloads and $(cat "$TEST_TMP/storm")"
fi
grep -q "ERROR: AddressSanitizer\|runtime error:" "$TEST_TMP/log" && fail "sanitizer report: $(cat "$TEST_TMP/log")"
[ "$rc" = 0 ] || fail "exit status $rc after SIGTERM: $(tail -20 "$TEST_TMP/log")"
echo "scrape_reload_storm: $(cat "$TEST_TMP/storm"), $n_reloads reloads ($applied applied), no leak: ok"
