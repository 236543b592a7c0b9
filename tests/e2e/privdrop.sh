#!/bin/sh
# Privilege drop, as root: after start-up the daemon runs as the configured
# user with empty capability sets and no-new-privileges, and /metrics keeps
# updating through the msr fds opened before the drop.  A CPU that comes
# online after the drop is opened by the privileged opener (hwopen.h).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root"
id nobody >/dev/null 2>&1 || skip "no 'nobody' user"
id daemon >/dev/null 2>&1 || skip "no 'daemon' user (server_user)"

tree="$TEST_TMP/tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree"
chmod 755 "$TEST_TMP"
write_conf "$TEST_TMP/u.conf" 0 "server_user = daemon"
sed -i 's/^user =.*/user = nobody/' "$TEST_TMP/u.conf"
start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --root "$tree"

status=/proc/$DAEMON_PID/status
uid=$(id -u nobody)
grep -q "^Uid:[[:space:]]*$uid[[:space:]]*$uid[[:space:]]*$uid[[:space:]]*$uid" "$status" || fail "uid: $(grep Uid "$status")"
for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
	grep -q "^$cap:[[:space:]]*0000000000000000" "$status" || fail "$cap not empty: $(grep "^$cap" "$status")"
done
grep -q '^NoNewPrivs:[[:space:]]*1' "$status" || fail "no-new-privileges not set"
samples_grow "$DAEMON_URL" || fail "metrics stopped updating after the drop"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/running"
stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$TEST_TMP/fresh"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$TEST_TMP/fresh" --dump >"$TEST_TMP/before"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/after"
diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "registers not restored by the unprivileged daemon"
echo "privdrop: uid $uid, no capabilities, still sampling and restoring: ok"

# --- A CPU offline at start, online after the drop: its devices are opened
# by the opener, the one process that kept root and CAP_SYS_RAWIO (bit 17)
# and nothing else; the daemon itself still has no capability.
rm -rf "$tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree"
echo 0 >"$tree/sys/devices/system/cpu/cpu1/online"
start_daemon 0 "$TEST_TMP/log.late" --config "$TEST_TMP/u.conf" --root "$tree"
opener=""
for st in /proc/[0-9]*/status; do
	if grep -q "^PPid:[[:space:]]*$DAEMON_PID\$" "$st" 2>/dev/null && grep -q '^Uid:[[:space:]]*0[[:space:]]' "$st"; then
		opener=$st
	fi
done
[ -n "$opener" ] || fail "no opener process running as root under the daemon"
grep -q '^CapEff:[[:space:]]*0000000000020000' "$opener" || fail "opener CapEff: $(grep CapEff "$opener")"
grep -q '^CapPrm:[[:space:]]*0000000000020000' "$opener" || fail "opener CapPrm: $(grep CapPrm "$opener")"
grep -q '^CapBnd:[[:space:]]*0000000000020000' "$opener" || fail "opener CapBnd: $(grep CapBnd "$opener")"
grep -q '^CapInh:[[:space:]]*0000000000000000' "$opener" || fail "opener CapInh: $(grep CapInh "$opener")"
grep -q '^NoNewPrivs:[[:space:]]*1' "$opener" || fail "opener: no-new-privileges not set"
[ "$(ls "$(dirname "$opener")/fd" | wc -l)" -le 4 ] ||
	fail "opener holds more than its socket and the standard streams: $(ls -l "$(dirname "$opener")/fd")"
grep -q "^CapEff:[[:space:]]*0000000000000000" "/proc/$DAEMON_PID/status" || fail "the daemon kept a capability"
echo 1 >"$tree/sys/devices/system/cpu/cpu1/online"
late_cpu_metrics() {
	printf '%s\n' "$(curl -fsS "$DAEMON_URL/metrics")" | grep '^uncored_core_instructions_total{[^}]*cpu="1"'
}
wait_until 30 late_cpu_metrics >/dev/null || fail "cpu 1 not monitored after it came online: $(cat "$TEST_TMP/log.late")"
expect_log "$TEST_TMP/log.late" "cpu 1 came online; monitoring it" "cpu 1 online not logged"
if grep -q 'cpu 1:' "$TEST_TMP/log.late"; then
	fail "cpu 1 unusable: $(grep 'cpu 1:' "$TEST_TMP/log.late")"
fi
stop_daemon "$DAEMON_PID" || fail "late cpu: exit status after SIGTERM"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/after"
diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "late cpu: registers not restored"
echo "privdrop: a CPU online after the drop opened by the opener (root, CAP_SYS_RAWIO only): ok"
