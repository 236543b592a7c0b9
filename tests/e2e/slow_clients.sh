#!/bin/sh
# 200 connections held open without finishing their requests neither stop
# the sampler nor stop another client from being served; with the
# default per-address limit, the excess connections of one address are
# refused while a client from another loopback address is still served.
. "$(dirname "$0")/lib.sh"

# hog PORT COUNT SECONDS: open COUNT connections that never finish a request,
# hold them SECONDS; $TEST_TMP/hog.PORT exists once all were tried.
hog() {
	rm -f "$TEST_TMP/hog.$1"
	timeout 30 python3 - "$@" "$TEST_TMP/hog.$1" <<'PY' &
import os, socket, sys, time
port, count, hold, ready = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
conns = []
for i in range(count):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        conns.append(s)
    except OSError:
        pass
with open(ready + ".tmp", "w") as f:
    f.write("%d\n" % len(conns))
os.rename(ready + ".tmp", ready)
time.sleep(hold)
PY
	HOG_PID=$!
	PIDS="$PIDS $HOG_PID"
	wait_until 30 test -f "$TEST_TMP/hog.$1" || fail "the hog opened no connections in 30 s"
}
samples() {
	metric_value "$(curl -fsS --max-time 5 "$@")" uncored_samples_total
}

write_conf "$TEST_TMP/u.conf" 0 "max_connections = 512" "max_connections_per_ip = 256" "request_timeout = 30"
start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --simulate westmere-ep-2s
url=$DAEMON_URL

hog "$DAEMON_PORT" 200 25
s1=$(samples "$url/metrics") || fail "not served while 200 connections hang"
# The sampler goes on while they hang: 12 more samples (3 s at 0.25 s per sample) arrive
# while the hog still holds them. The deadline is generous, as a busy machine may be slow;
# a sampler the connections blocked would add none.
deadline=$(($(date +%s) + 20))
while :; do
	s2=$(samples "$url/metrics") || fail "not served while 200 connections hang"
	[ $((s2 - s1)) -ge 12 ] && break
	[ "$(date +%s)" -lt "$deadline" ] || fail "sampler stopped under 200 hanging connections: $s1 -> $s2 in 20 s"
	sleep 0.1
done
kill "$HOG_PID" 2>/dev/null || true
stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"

# Default per-address limit: one address cannot take the server.
write_conf "$TEST_TMP/d.conf" 0 "max_connections_per_ip = 8"
start_daemon 0 "$TEST_TMP/log2" --config "$TEST_TMP/d.conf" --simulate westmere-ep-2s
hog "$DAEMON_PORT" 50 5
samples --interface 127.0.0.2 "$DAEMON_URL/metrics" >/dev/null ||
	fail "a client from another address was not served while one address hogged"
stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"
echo "slow_clients: $((s2 - s1)) samples with 200 hanging connections: ok"
