#!/bin/sh
# Crash recovery on the device-file tree: a daemon killed with SIGKILL
# leaves its programming in the registers and its records in the state
# file; the restarted daemon recognises that programming as its own, cleans
# it up (one notice) and counts on uncore counters 0-6 again instead of
# treating them as busy; another agent's counter 7 is never touched; after
# SIGTERM every register holds its original value and the file is empty.
. "$(dirname "$0")/lib.sh"

tree="$TEST_TMP/tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/before"

reg() { # reg CPU MSR -> value as 0x%x
	python3 -c 'import struct,sys; f=open(sys.argv[1],"rb"); f.seek(int(sys.argv[2],0)*8); print(hex(struct.unpack("<Q",f.read(8))[0]))' \
		"$tree/dev/cpu/$1/msr" "$2"
}

check_programmed() { # what the daemon writes at start, hardware.md §1.3-1.7
	for cpu in 0 6; do
		[ "$(reg $cpu 0x3c0)" = 0x400167 ] || fail "$1: cpu $cpu 0x3c0 = $(reg $cpu 0x3c0), expected 0x400167"
		[ "$(reg $cpu 0x3c2)" = 0x400182 ] || fail "$1: cpu $cpu 0x3c2 = $(reg $cpu 0x3c2), expected 0x400182"
		[ "$(reg $cpu 0x3c7)" = 0x400166 ] || fail "$1: another agent's counter 7 was touched: $(reg $cpu 0x3c7)"
		[ "$(reg $cpu 0x391)" = 0x1000000ff ] || fail "$1: cpu $cpu 0x391 = $(reg $cpu 0x391), expected 0x1000000ff"
	done
}

uncore_up_everywhere() { # no event unavailable (busy), both sockets counting
	m=$(curl -fsS "$DAEMON_URL/metrics")
	[ "$(metric_value "$m" 'uncored_collector_up{collector="uncore"}')" = 1 ] || fail "$1: uncore collector down"
	n=$(printf '%s\n' "$m" | grep -c '^uncored_uncore_events_total{socket="[01]",event="dram_thermal_throttled_cycles"}' || true)
	[ "$n" = 2 ] || fail "$1: dram counter missing on some socket: $(printf '%s\n' "$m" | grep uncore_events)"
	if printf '%s\n' "$m" | grep -q 'busy\|in use'; then
		fail "$1: a counter reported busy: $(printf '%s\n' "$m" | grep 'busy\|in use')"
	fi
}

write_conf "$TEST_TMP/u.conf" 0
start_daemon 0 "$TEST_TMP/log1" --config "$TEST_TMP/u.conf" --root "$tree"
uncore_up_everywhere "first run"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$DAEMON_PID" | tr '\n' ' ')

# The dead daemon's programming is still there, and so is its journal.
check_programmed "after SIGKILL"
[ -s "$TEST_TMP/ledger" ] || fail "no state file after SIGKILL"
grep -Eq '^own 0 0x3c0 0x0 0x400167 \*[0-9a-f]{8}$' "$TEST_TMP/ledger" ||
	fail "the state file does not record 0x3c0 of cpu 0: $(head -5 "$TEST_TMP/ledger")"

start_daemon 0 "$TEST_TMP/log2" --config "$TEST_TMP/u.conf" --root "$tree"
grep -q 'did not stop cleanly; cleaned up [1-9][0-9]* registers it left programmed, left 0 ' "$TEST_TMP/log2" ||
	fail "no clean-up notice: $(cat "$TEST_TMP/log2")"
if grep -qi 'busy\|in use\|taken' "$TEST_TMP/log2"; then
	fail "the restart saw its own leftovers as another agent's: $(cat "$TEST_TMP/log2")"
fi
uncore_up_everywhere "after restart"
check_programmed "after restart"

stop_daemon "$DAEMON_PID" || fail "exit status $? after SIGTERM"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/after"
diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "registers differ from the original tree after the restart's stop"
[ ! -s "$TEST_TMP/ledger" ] || fail "state file not emptied on a clean stop: $(cat "$TEST_TMP/ledger")"
echo "crash_restart: leftovers recognised, cleaned, counted again, restored: ok"
