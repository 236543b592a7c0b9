#!/bin/sh
# Clients that do not read cannot pin the host's TCP memory (SPEC §6): 1000
# connections from one address (UNCORED_TCPMEM_SOCKETS), each pipelining 16
# 'GET /metrics' to --simulate big (165 KB an answer) and never reading,
# reopened 0.5 s after the server closes them, add at most 64 MiB to the
# host's TCP memory (/proc/net/sockstat), and a scraper from another
# loopback address gets every answer (tests/e2e/http_attack.py tcpmem).
# Before the send buffer was capped and such clients reset, 100 of them
# held 276 MiB.  The daemon runs with the default connection limits.
. "$(dirname "$0")/lib.sh"

[ -r /proc/net/sockstat ] || skip "no /proc/net/sockstat"
python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.3.1", 0))' 2>/dev/null ||
	skip "cannot bind to 127.0.3.1 (no 127.0.0.0/8 on lo)"

write_conf "$TEST_TMP/u.conf" 0
start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --simulate big
timeout 120 python3 "$UNCORED_SOURCE_ROOT/tests/e2e/http_attack.py" "$DAEMON_PORT" tcpmem \
	15 2 "${UNCORED_TEST_INTERVAL:-0.25}" || {
	tail -20 "$TEST_TMP/log" >&2
	fail "the host's TCP memory grew past its bound, or the scraper was not served"
}
stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"
echo "tcp_memory: ${UNCORED_TCPMEM_SOCKETS:-1000} non-reading sockets from one address: host TCP memory within bound, every scrape answered"
