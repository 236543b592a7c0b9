#!/bin/sh
# 200 connections held open without finishing their requests neither slow
# the sampler down nor stop another client from being served; with the
# default per-address limit, the excess connections of one address are
# refused while a client from another loopback address is still served.
. "$(dirname "$0")/lib.sh"

hog() { # hog PORT COUNT SECONDS: open COUNT connections that never finish a request
	timeout 30 python3 - "$@" <<'PY' &
import socket, sys, time
port, count, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
conns = []
for i in range(count):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=2)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        conns.append(s)
    except OSError:
        pass
time.sleep(hold)
PY
	HOG_PID=$!
	PIDS="$PIDS $HOG_PID"
}
samples() {
	metric_value "$(curl -fsS --max-time 5 "$@")" uncored_samples_total
}

port=$(free_port)
write_conf "$TEST_TMP/u.conf" "$port" "max_connections = 512" "max_connections_per_ip = 256" "request_timeout = 30"
start_daemon "$port" "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --simulate westmere-ep-2s
url=$DAEMON_URL

hog "$port" 200 7
sleep 1.5
s1=$(samples "$url/metrics") || fail "not served while 200 connections hang"
sleep 4
s2=$(samples "$url/metrics") || fail "not served while 200 connections hang"
# 4 s at 0.25 s per sample is 16 samples; allow for scheduling jitter on a busy machine.
[ $((s2 - s1)) -ge 12 ] || fail "sampler slowed down under 200 hanging connections: $s1 -> $s2 in 4 s"
kill "$HOG_PID" 2>/dev/null || true
stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"

# Default per-address limit: one address cannot take the server.
port=$(free_port)
write_conf "$TEST_TMP/d.conf" "$port" "max_connections_per_ip = 8"
start_daemon "$port" "$TEST_TMP/log2" --config "$TEST_TMP/d.conf" --simulate westmere-ep-2s
hog "$port" 50 5
sleep 1.5
samples --interface 127.0.0.2 "http://127.0.0.1:$port/metrics" >/dev/null ||
	fail "a client from another address was not served while one address hogged"
stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"
echo "slow_clients: $((s2 - s1)) samples in 4 s with 200 hanging connections: ok"
