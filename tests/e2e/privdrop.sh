#!/bin/sh
# Privilege drop, as root: after start-up the daemon runs as the configured
# user with empty capability sets and no-new-privileges, and /metrics keeps
# updating through the msr fds opened before the drop.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root"
id nobody >/dev/null 2>&1 || skip "no 'nobody' user"

tree="$TEST_TMP/tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree"
chmod 755 "$TEST_TMP"
port=$(free_port)
write_conf "$TEST_TMP/u.conf" "$port"
sed -i 's/^user =.*/user = nobody/' "$TEST_TMP/u.conf"
start_daemon "$port" "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --root "$tree"

status=/proc/$DAEMON_PID/status
uid=$(id -u nobody)
grep -q "^Uid:[[:space:]]*$uid[[:space:]]*$uid[[:space:]]*$uid[[:space:]]*$uid" "$status" || fail "uid: $(grep Uid "$status")"
for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
	grep -q "^$cap:[[:space:]]*0000000000000000" "$status" || fail "$cap not empty: $(grep "^$cap" "$status")"
done
grep -q '^NoNewPrivs:[[:space:]]*1' "$status" || fail "no-new-privileges not set"
s1=$(metric_value "$(curl -fsS "$DAEMON_URL/metrics")" uncored_samples_total)
sleep 1
s2=$(metric_value "$(curl -fsS "$DAEMON_URL/metrics")" uncored_samples_total)
[ "$s2" -gt "$s1" ] || fail "metrics stopped updating after the drop"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/running"
stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$TEST_TMP/fresh"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$TEST_TMP/fresh" --dump >"$TEST_TMP/before"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/after"
diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "registers not restored by the unprivileged daemon"
echo "privdrop: uid $uid, no capabilities, still sampling and restoring: ok"
