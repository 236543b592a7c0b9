#!/bin/sh
# systemd notification protocol: with NOTIFY_SOCKET pointing at a datagram
# socket this test owns, the daemon sends READY=1 after its first sample,
# STATUS= lines, WATCHDOG=1 while sampling (WATCHDOG_USEC set), RELOADING=1
# and READY=1 around SIGHUP, and STOPPING=1 on SIGTERM, in that order.
. "$(dirname "$0")/lib.sh"

sock="$TEST_TMP/notify.sock"
timeout 60 python3 "$(dirname "$0")/notify_listen.py" "$sock" 40 >"$TEST_TMP/notes" &
listener=$!
PIDS="$PIDS $listener"
wait_until 30 test -S "$sock" || fail "notify socket not created"

write_conf "$TEST_TMP/u.conf" 0
NOTIFY_SOCKET="$sock" WATCHDOG_USEC=2000000 \
	start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --simulate westmere-ep-2s
notes="$TEST_TMP/notes"
wait_until 30 log_has "$notes" '^WATCHDOG=1' || fail "no WATCHDOG=1 in 30 s: $(cat "$notes")"
wait_until 30 log_has "$notes" '^STATUS=' || fail "no STATUS= in 30 s: $(cat "$notes")"
kill -HUP "$DAEMON_PID"
ready_again() { awk '/^RELOADING=1$/ { r = 1 } r && /^READY=1$/ { f = 1 } END { exit !f }' "$notes"; }
wait_until 30 ready_again || fail "no READY=1 after RELOADING=1 in 30 s: $(cat "$notes")"
stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"
wait "$listener" || true

order=$(grep -E '^(READY|WATCHDOG|RELOADING|STOPPING)=' "$TEST_TMP/notes" | cut -d= -f1 | uniq | tr '\n' ' ')
case "$order" in
"READY WATCHDOG "*"RELOADING READY "*"STOPPING ") ;;
*) fail "notification order: '$order'; got: $(cat "$TEST_TMP/notes")" ;;
esac
# Westmere-EP: uncore, thermal and core up; the server pcu and imc collectors are enabled but not
# applicable (no such hardware), so they are not counted as down.
grep -q '^STATUS=2 sockets, collectors up 3/3' "$TEST_TMP/notes" || fail "no STATUS line: $(cat "$TEST_TMP/notes")"
echo "notify: $order: ok"
