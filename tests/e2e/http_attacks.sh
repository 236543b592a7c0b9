#!/bin/sh
# Hostile clients cannot blind the HTTP front (SPEC §6).  Under each attack
# (640 send-and-leave connections a second from 80 addresses; 320
# connections trickling header bytes from 40 addresses; 2000 idle
# connections from 250 addresses; 128 connections from 16 addresses
# pipelining 400 requests each and never reading), a scraper from another loopback address
# gets every /metrics answered within 1 s, during the attack and after it,
# and the sampler keeps its cadence (tests/e2e/http_attack.py).  The daemon
# runs with the default connection limits.
. "$(dirname "$0")/lib.sh"

python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.250", 0))' 2>/dev/null ||
	skip "cannot bind to 127.0.0.250 (no 127.0.0.0/8 on lo)"

for attack in burst trickle idle slowread; do
	write_conf "$TEST_TMP/$attack.conf" 0
	start_daemon 0 "$TEST_TMP/$attack.log" --config "$TEST_TMP/$attack.conf" \
		--simulate westmere-ep-2s
	timeout 60 python3 "$UNCORED_SOURCE_ROOT/tests/e2e/http_attack.py" "$DAEMON_PORT" "$attack" 6 4 \
		"${UNCORED_TEST_INTERVAL:-0.25}" || {
		tail -20 "$TEST_TMP/$attack.log" >&2
		fail "$attack: the scraper was not served"
	}
	stop_daemon "$DAEMON_PID" || fail "$attack: exit status after SIGTERM"
done
echo "http_attacks: burst, trickle, idle and slowread: every scrape answered"
