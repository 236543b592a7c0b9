#!/bin/sh
# Every signal whose default action ends the process goes through the
# restore path (SIGHUP reloads): SIGTERM, SIGINT, SIGQUIT, SIGUSR1,
# SIGUSR2 and SIGALRM each stop the daemon with "received ..., stopping",
# "stopped, every register restored", exit status 0 and every register of
# the device-file tree byte for byte as before.  SIGPIPE is ignored: with
# stderr's reader gone, log lines fail quietly and the daemon keeps
# serving until stopped.
. "$(dirname "$0")/lib.sh"

tree="$TEST_TMP/tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/before"
write_conf "$TEST_TMP/u.conf" 0

tree_programmed() {
	! python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump | cmp -s - "$TEST_TMP/before"
}

same_tree() {
	python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/after"
	diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "$1: registers differ after the stop"
	[ ! -s "$TEST_TMP/ledger" ] || fail "$1: state file not emptied"
}

for sig in TERM INT QUIT USR1 USR2 ALRM; do
	start_daemon 0 "$TEST_TMP/log.$sig" --config "$TEST_TMP/u.conf" --root "$tree"
	if python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump | cmp -s - "$TEST_TMP/before"; then
		fail "SIG$sig: nothing was programmed"
	fi
	kill -"$sig" "$DAEMON_PID"
	rc=0
	wait "$DAEMON_PID" || rc=$?
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$DAEMON_PID" | tr '\n' ' ')
	[ "$rc" = 0 ] || fail "SIG$sig: exit status $rc: $(cat "$TEST_TMP/log.$sig")"
	grep -qxF "uncored: received SIG$sig, stopping" "$TEST_TMP/log.$sig" ||
		fail "SIG$sig: no 'received SIG$sig, stopping': $(cat "$TEST_TMP/log.$sig")"
	tail -n 1 "$TEST_TMP/log.$sig" | grep -qxF 'uncored: stopped, every register restored' ||
		fail "SIG$sig: no stop message: $(cat "$TEST_TMP/log.$sig")"
	same_tree "SIG$sig"
done

# SIGPIPE: stderr is a pipe whose reader goes away; a reload then logs.
mkfifo "$TEST_TMP/fifo"
cat "$TEST_TMP/fifo" >"$TEST_TMP/log.pipe" &
reader=$!
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --root "$tree" --listen 127.0.0.1:0 >/dev/null 2>"$TEST_TMP/fifo" &
DAEMON_PID=$!
PIDS="$PIDS $DAEMON_PID"
port=$(served_port "$TEST_TMP/log.pipe" "$DAEMON_PID") || fail "SIGPIPE: nothing logged through the pipe"
DAEMON_URL="http://127.0.0.1:$port"
wait_healthy "$DAEMON_URL" "$DAEMON_PID" "$TEST_TMP/log.pipe"
kill "$reader"
wait "$reader" 2>/dev/null || true
kill -HUP "$DAEMON_PID"
# Taken from the signalfd, the reload logs into the broken pipe.
wait_until 30 signal_taken "$DAEMON_PID" 1 || fail "SIGPIPE: SIGHUP not taken after 30 s"
curl -fsS -o /dev/null --max-time 5 "$DAEMON_URL/healthz" || fail "SIGPIPE: no longer serving after the reload"
kill -0 "$DAEMON_PID" 2>/dev/null || fail "SIGPIPE: the daemon died when stderr's reader went away"
curl -fsS -o /dev/null "$DAEMON_URL/healthz" || fail "SIGPIPE: no longer serving"
stop_daemon "$DAEMON_PID" || fail "SIGPIPE: exit status $? after SIGTERM"
same_tree "SIGPIPE"
# --once: a stop signal during its interval restores too, and it exits 1
# with no output (it has no second sample).
UNCORED_TEST_INTERVAL=30 write_conf "$TEST_TMP/once.conf" 0
for sig in QUIT USR2; do
	"$UNCORED_BIN" --once --config "$TEST_TMP/once.conf" --root "$tree" >"$TEST_TMP/out.$sig" 2>"$TEST_TMP/log.once.$sig" &
	pid=$!
	PIDS="$PIDS $pid"
	wait_until 30 tree_programmed || fail "--once SIG$sig: nothing programmed after 30 s"
	kill -"$sig" "$pid"
	rc=0
	wait "$pid" || rc=$?
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$pid" | tr '\n' ' ')
	[ "$rc" = 1 ] || fail "--once SIG$sig: exit status $rc: $(cat "$TEST_TMP/log.once.$sig")"
	[ ! -s "$TEST_TMP/out.$sig" ] || fail "--once SIG$sig: printed a result"
	grep -qxF "uncored: received SIG$sig, stopping" "$TEST_TMP/log.once.$sig" ||
		fail "--once SIG$sig: no 'received SIG$sig, stopping': $(cat "$TEST_TMP/log.once.$sig")"
	same_tree "--once SIG$sig"
done
echo "signals: TERM INT QUIT USR1 USR2 ALRM restore and exit 0, PIPE ignored, --once restores: ok"
