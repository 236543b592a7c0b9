#!/bin/sh
# What the daemon says at start: the address it really listens on (the
# port chosen for port 0; the socket systemd passed), and expected cases
# (a collector disabled by the configuration, one this CPU lacks) at info
# level, not as warnings; a failed start says its reason alone.
# JOURNAL_STREAM makes each line carry its level as journald reads it (<6>
# info, <5> notice, <4> warning).
. "$(dirname "$0")/lib.sh"

# --listen with port 0: the line names the port the kernel chose, and it answers there.
write_conf "$TEST_TMP/zero.conf" 9 "[core]" "enabled = no"
JOURNAL_STREAM=8:1 "$UNCORED_BIN" --config "$TEST_TMP/zero.conf" --listen 127.0.0.1:0 --simulate skylake-sp-2s \
	>"$TEST_TMP/zero.log" 2>&1 &
pid=$!
PIDS="$PIDS $pid"
served_port "$TEST_TMP/zero.log" "$pid" >/dev/null || true
line=$(grep 'serving on' "$TEST_TMP/zero.log") || fail "no 'serving on' line: $(cat "$TEST_TMP/zero.log")"
port=$(echo "$line" | sed -n 's/^<5>serving on 127\.0\.0\.1:\([0-9]*\), sampling every .*/\1/p')
[ -n "$port" ] && [ "$port" != 0 ] || fail "port 0: '$line'"
curl -fsS -o /dev/null --max-time 5 "http://127.0.0.1:$port/healthz" || fail "nothing answers on port $port"
expect_log "$TEST_TMP/zero.log" '^<6>collector core: disabled in the configuration$' "disabled collector"
expect_log "$TEST_TMP/zero.log" '^<6>collector uncore: not applicable: ' "uncore on skylake"
grep -q '^<[0-4]>' "$TEST_TMP/zero.log" && fail "a warning or worse at start: $(grep '^<[0-4]>' "$TEST_TMP/zero.log")"
stop_daemon "$pid" || fail "exit status after SIGTERM"

# A socket systemd passes: the line names it, and that 'listen' is not used.
# systemd-socket-activate takes no port 0: a port that was free a moment ago,
# tried again with another when a test beside this one took it meanwhile.
if command -v systemd-socket-activate >/dev/null; then
	write_conf "$TEST_TMP/sa.conf" 9
	for try in 1 2 3 4 5; do
		port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
		systemd-socket-activate -l "127.0.0.1:$port" -E JOURNAL_STREAM=8:1 -E UNCORED_REAL_BIN -E UNCORED_GUARD_LOG \
			"$UNCORED_BIN" --config "$TEST_TMP/sa.conf" --simulate westmere-ep-2s >"$TEST_TMP/sa.log" 2>&1 &
		pid=$!
		PIDS="$PIDS $pid"
		# It listens, and starts uncored at the first connection.
		sa_up() { log_has "$TEST_TMP/sa.log" '^Listening on ' || ! kill -0 "$pid" 2>/dev/null; }
		wait_until 30 sa_up || fail "socket activation: nothing in 30 s: $(cat "$TEST_TMP/sa.log")"
		log_has "$TEST_TMP/sa.log" '^Listening on ' && break
		wait "$pid" 2>/dev/null || true
		PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$pid" | tr '\n' ' ')
		log_has "$TEST_TMP/sa.log" 'Address already in use' || fail "socket activation: $(cat "$TEST_TMP/sa.log")"
		[ "$try" -lt 5 ] || fail "socket activation: 5 ports taken: $(cat "$TEST_TMP/sa.log")"
	done
	curl -fsS -o /dev/null --retry 50 --retry-connrefused --retry-delay 0 --max-time 10 \
		"http://127.0.0.1:$port/healthz" || fail "socket-activated daemon does not answer"
	wait_until 30 log_has "$TEST_TMP/sa.log" 'serving on' || fail "socket activation: no 'serving on' in 30 s"
	grep -qx "<5>serving on 127.0.0.1:$port (the socket systemd passed; 'listen' is not used), sampling every 0.25 s" \
		"$TEST_TMP/sa.log" || fail "socket activation: $(grep 'serving on' "$TEST_TMP/sa.log")"
	stop_daemon "$pid" || fail "socket-activated daemon: exit status after SIGTERM"
fi
# A start that fails once the server process is forked (the hardware does
# not open: a scenario that writes a register genoa-2s lacks) says what
# failed and nothing else: not how the server it stopped ended, nor the
# reset the server read when the start-up closed on its unread READY.
write_conf "$TEST_TMP/fail.conf" 0
for try in 1 2 3 4 5; do
	rc=0
	"$UNCORED_BIN" --config "$TEST_TMP/fail.conf" --listen 127.0.0.1:0 \
		--simulate genoa-2s:counter-wrap >"$TEST_TMP/fail.log" 2>&1 || rc=$?
	[ "$rc" = 1 ] || fail "failed start, try $try: exit $rc: $(cat "$TEST_TMP/fail.log")"
	[ "$(wc -l <"$TEST_TMP/fail.log")" = 1 ] && grep -q "counter-wrap.ini:[0-9]*: msr: " "$TEST_TMP/fail.log" ||
		fail "failed start, try $try: more than the reason: $(cat "$TEST_TMP/fail.log")"
done
echo "messages: ok"
