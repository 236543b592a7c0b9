#!/bin/sh
# Hostile clients cannot blind the HTTP front (SPEC §6).  Under each attack
# (640 send-and-leave connections a second from 80 addresses; 320
# connections trickling header bytes from 40 addresses; 2000 idle
# connections from 250 addresses; 128 connections from 16 addresses
# pipelining 400 requests each and never reading; 10000 keep-alive
# connections from 1250 addresses, reopened as soon as closed), a scraper
# from another loopback address gets every /metrics answered within 1.5 s (below write_timeout, 2 s, which a scraper queued behind the attackers would wait),
# during the attack and after it, and the sampler keeps its cadence
# (tests/e2e/http_attack.py).  Each attack runs 5 times in a row against
# one daemon, with the default connection limits, while a CPU hog keeps
# every CPU busy: a run that passes only on an idle machine fails here.
. "$(dirname "$0")/lib.sh"

python3 -c 'import socket; s = socket.socket(); s.bind(("127.1.4.250", 0))' 2>/dev/null ||
	skip "cannot bind to 127.1.4.250 (no 127.0.0.0/8 on lo)"

runs=${UNCORED_ATTACK_RUNS:-5}
# One busy loop per CPU at normal priority, stopped by its PID (cleanup).
for _ in $(seq 1 "$(nproc)"); do
	sh -c 'while :; do :; done' &
	PIDS="$PIDS $!"
done

for attack in burst trickle idle slowread keepalive; do
	write_conf "$TEST_TMP/$attack.conf" 0
	start_daemon 0 "$TEST_TMP/$attack.log" --config "$TEST_TMP/$attack.conf" \
		--simulate westmere-ep-2s
	timeout 120 python3 "$UNCORED_SOURCE_ROOT/tests/e2e/http_attack.py" "$DAEMON_PORT" "$attack" \
		1.5 0.5 "${UNCORED_TEST_INTERVAL:-0.25}" "$runs" || {
		tail -20 "$TEST_TMP/$attack.log" >&2
		fail "$attack: the scraper was not served"
	}
	stop_daemon "$DAEMON_PID" || fail "$attack: exit status after SIGTERM"
done
echo "http_attacks: burst, trickle, idle, slowread and keepalive, $runs runs each under a CPU hog: every scrape answered"
