#!/bin/sh
# One uncored per machine: two started together on the same device-file
# tree, each with its own port and state file.  Exactly one serves; the
# other exits 1 with a clear message before it touches any register (no
# state file of its own either).  After the winner stops the tree is byte
# for byte as before.
. "$(dirname "$0")/lib.sh"

tree="$TEST_TMP/tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/before"
UNCORED_TEST_STATE_FILE="$TEST_TMP/ledger.a" write_conf "$TEST_TMP/a.conf" 0
UNCORED_TEST_STATE_FILE="$TEST_TMP/ledger.b" write_conf "$TEST_TMP/b.conf" 0

"$UNCORED_BIN" --config "$TEST_TMP/a.conf" --root "$tree" --listen 127.0.0.1:0 >"$TEST_TMP/log.a" 2>&1 &
pid_a=$!
"$UNCORED_BIN" --config "$TEST_TMP/b.conf" --root "$tree" --listen 127.0.0.1:0 >"$TEST_TMP/log.b" 2>&1 &
pid_b=$!
PIDS="$pid_a $pid_b"

# The loser exits by itself; the winner serves until stopped.
one_gone() { ! kill -0 "$pid_a" 2>/dev/null || ! kill -0 "$pid_b" 2>/dev/null; }
wait_until 30 one_gone || fail "both uncored still run after 30 s"
if kill -0 "$pid_a" 2>/dev/null; then
	winner=a pid=$pid_a loser=b lpid=$pid_b
else
	winner=b pid=$pid_b loser=a lpid=$pid_a
fi
rc=0
wait "$lpid" || rc=$?
[ "$rc" = 1 ] || fail "the second uncored ($loser) exited with $rc, expected 1: $(cat "$TEST_TMP/log.$loser")"
expected="uncored: another uncored (pid $pid) already owns the PMU of this machine ($tree/run/uncored/instance.lock is locked); refusing to start before touching any register"
[ "$(cat "$TEST_TMP/log.$loser")" = "$expected" ] ||
	fail "the second uncored said: $(cat "$TEST_TMP/log.$loser")"
[ ! -e "$TEST_TMP/ledger.$loser" ] || fail "the second uncored created its state file"
kill -0 "$pid" 2>/dev/null || fail "no uncored is running: $(cat "$TEST_TMP/log.$winner")"
port=$(served_port "$TEST_TMP/log.$winner" "$pid") || fail "the winner names no port: $(cat "$TEST_TMP/log.$winner")"
wait_healthy "http://127.0.0.1:$port" "$pid" "$TEST_TMP/log.$winner"
if grep -qi 'busy\|in use' "$TEST_TMP/log.$winner"; then
	fail "the winner found counters taken: $(cat "$TEST_TMP/log.$winner")"
fi
stop_daemon "$pid" || fail "exit status $? after SIGTERM"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/after"
diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "registers differ after both stopped"

# --- Nobody else can take the lock: another user cannot open the lock file
# (0600 in a 0700 directory), and the lock of earlier versions, an flock on
# ROOT/dev/cpu, is nothing to uncored any more.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	chmod 755 "$TEST_TMP"
	if setpriv --reuid=nobody --regid=nogroup --clear-groups \
		flock -n "$tree/run/uncored/instance.lock" true 2>/dev/null; then
		fail "user nobody could take the instance lock"
	fi
	setpriv --reuid=nobody --regid=nogroup --clear-groups flock "$tree/dev/cpu" sleep 60 >/dev/null 2>&1 &
	squatter=$!
	PIDS="$PIDS $squatter"
	squatted() { ! flock -n "$tree/dev/cpu" true; }
	wait_until 30 squatted || fail "squat: nobody did not take the lock of $tree/dev/cpu in 30 s"
	start_daemon 0 "$TEST_TMP/log.squat" --config "$TEST_TMP/a.conf" --root "$tree"
	stop_daemon "$DAEMON_PID" || fail "squat: exit status $? after SIGTERM: $(cat "$TEST_TMP/log.squat")"
	kill "$squatter"
fi

# --- A lock directory that another user may write to is refused.
chmod 777 "$tree/run/uncored"
rc=0
"$UNCORED_BIN" --config "$TEST_TMP/a.conf" --root "$tree" --listen 127.0.0.1:0 >"$TEST_TMP/log.open" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "a world-writable lock directory: exit $rc: $(cat "$TEST_TMP/log.open")"
grep -qF "instance lock: $tree/run/uncored is owned by uid $(id -u) with mode 777" "$TEST_TMP/log.open" ||
	fail "a world-writable lock directory: $(cat "$TEST_TMP/log.open")"
chmod 700 "$tree/run/uncored"
echo "instance: one serves, the other refuses before touching anything; nobody else can take the lock: ok"
