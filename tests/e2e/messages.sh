#!/bin/sh
# What the daemon says at start: the address it really listens on (the
# port chosen for port 0; the socket systemd passed), and expected cases
# (a collector disabled by the configuration, one this CPU lacks) at info
# level, not as warnings.  JOURNAL_STREAM makes each line carry its level
# as journald reads it (<6> info, <5> notice, <4> warning).
. "$(dirname "$0")/lib.sh"

# --listen with port 0: the line names the port the kernel chose, and it answers there.
write_conf "$TEST_TMP/zero.conf" 9 "[core]" "enabled = no"
JOURNAL_STREAM=8:1 "$UNCORED_BIN" --config "$TEST_TMP/zero.conf" --listen 127.0.0.1:0 --simulate skylake-sp-2s \
	>"$TEST_TMP/zero.log" 2>&1 &
pid=$!
PIDS="$PIDS $pid"
for _ in $(seq 1 100); do
	grep -q 'serving on' "$TEST_TMP/zero.log" && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
line=$(grep 'serving on' "$TEST_TMP/zero.log") || fail "no 'serving on' line: $(cat "$TEST_TMP/zero.log")"
port=$(echo "$line" | sed -n 's/^<5>serving on 127\.0\.0\.1:\([0-9]*\), sampling every .*/\1/p')
[ -n "$port" ] && [ "$port" != 0 ] || fail "port 0: '$line'"
curl -fsS -o /dev/null --max-time 5 "http://127.0.0.1:$port/healthz" || fail "nothing answers on port $port"
grep -qx '<6>collector core: disabled in the configuration' "$TEST_TMP/zero.log" ||
	fail "disabled collector: $(grep 'collector core' "$TEST_TMP/zero.log")"
grep -q '^<6>collector uncore: not applicable: ' "$TEST_TMP/zero.log" ||
	fail "uncore on skylake: $(grep 'collector uncore' "$TEST_TMP/zero.log")"
grep -q '^<[0-4]>' "$TEST_TMP/zero.log" && fail "a warning or worse at start: $(grep '^<[0-4]>' "$TEST_TMP/zero.log")"
stop_daemon "$pid" || fail "exit status after SIGTERM"

# A socket systemd passes: the line names it, and that 'listen' is not used.
if command -v systemd-socket-activate >/dev/null; then
	port=$(free_port)
	write_conf "$TEST_TMP/sa.conf" 9
	systemd-socket-activate -l "127.0.0.1:$port" -E JOURNAL_STREAM=8:1 \
		"$UNCORED_BIN" --config "$TEST_TMP/sa.conf" --simulate westmere-ep-2s >"$TEST_TMP/sa.log" 2>&1 &
	pid=$!
	PIDS="$PIDS $pid"
	curl -fsS -o /dev/null --retry 50 --retry-connrefused --retry-delay 0 --max-time 10 \
		"http://127.0.0.1:$port/healthz" || fail "socket-activated daemon does not answer"
	for _ in $(seq 1 50); do
		grep -q 'serving on' "$TEST_TMP/sa.log" && break
		sleep 0.1
	done
	grep -qx "<5>serving on 127.0.0.1:$port (the socket systemd passed; 'listen' is not used), sampling every 0.25 s" \
		"$TEST_TMP/sa.log" || fail "socket activation: $(grep 'serving on' "$TEST_TMP/sa.log")"
	stop_daemon "$pid" || fail "socket-activated daemon: exit status after SIGTERM"
fi
echo "messages: ok"
