#!/bin/sh
# Crash recovery on device-file trees: a daemon killed with SIGKILL leaves
# its programming in the registers and its records in the state file; the
# restarted daemon recognises that programming as its own, cleans it up
# (one notice, nothing refused) and counts on those counters again instead
# of treating them as busy; after SIGTERM every register holds its original
# value and the file is empty.  Twice:
#   - a Westmere-EP tree: uncore counters 0-6 (another agent's counter 7 is
#     never touched);
#   - a Skylake-SP tree with [pcu] engine = msr: the PCU box's selects
#     0x711-0x714, so that the restart exports PROCHOT seconds again.
# Then a fixed counter another agent took over while uncored was dead is
# left to it by the restart.
. "$(dirname "$0")/lib.sh"

reg() { # reg CPU MSR -> value as 0x%x, in the current $tree
	python3 -c 'import struct,sys; f=open(sys.argv[1],"rb"); f.seek(int(sys.argv[2],0)*8); print(hex(struct.unpack("<Q",f.read(8))[0]))' \
		"$tree/dev/cpu/$1/msr" "$2"
}

# crash_cycle WHAT RECORD MAKE_TREE_ARGS...: build the tree, then start,
# kill -9, restart and stop the daemon with $TEST_TMP/u.conf, checking with
# the part's check_programmed and up_everywhere, and that the state file
# held a line matching RECORD after the kill.
crash_cycle() {
	what=$1
	record=$2
	shift 2
	tree="$TEST_TMP/$what"
	python3 "$(dirname "$0")/make_tree.py" "$tree" "$@"
	python3 "$(dirname "$0")/make_tree.py" "$tree" "$@" --dump >"$TEST_TMP/$what.before"

	start_daemon 0 "$TEST_TMP/$what.log1" --config "$TEST_TMP/u.conf" --root "$tree"
	up_everywhere "$what: first run"
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null || true
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$DAEMON_PID" | tr '\n' ' ')

	# The dead daemon's programming is still there, and so is its journal.
	check_programmed "$what: after SIGKILL"
	grep -Eq "$record" "$TEST_TMP/ledger" ||
		fail "$what: the state file has no line '$record': $(head -5 "$TEST_TMP/ledger")"

	start_daemon 0 "$TEST_TMP/$what.log2" --config "$TEST_TMP/u.conf" --root "$tree"
	grep -q 'did not stop cleanly; cleaned up [1-9][0-9]* registers it left programmed, left 0 ' \
		"$TEST_TMP/$what.log2" || fail "$what: no clean-up notice: $(cat "$TEST_TMP/$what.log2")"
	if grep -qi 'never changes\|busy\|in use\|taken' "$TEST_TMP/$what.log2"; then
		fail "$what: the restart refused its own leftovers or saw them as another agent's: $(cat "$TEST_TMP/$what.log2")"
	fi
	up_everywhere "$what: after restart"
	check_programmed "$what: after restart"

	stop_daemon "$DAEMON_PID" || fail "$what: exit status $? after SIGTERM"
	python3 "$(dirname "$0")/make_tree.py" "$tree" "$@" --dump >"$TEST_TMP/$what.after"
	diff "$TEST_TMP/$what.before" "$TEST_TMP/$what.after" >&2 ||
		fail "$what: registers differ from the original tree after the restart's stop"
	[ ! -s "$TEST_TMP/ledger" ] || fail "$what: state file not emptied on a clean stop: $(cat "$TEST_TMP/ledger")"
}


# ---- Westmere-EP: the uncore ----
check_programmed() { # what the daemon writes at start, hardware.md §1.3-1.7
	for cpu in 0 6; do
		[ "$(reg $cpu 0x3c0)" = 0x400167 ] || fail "$1: cpu $cpu 0x3c0 = $(reg $cpu 0x3c0), expected 0x400167"
		[ "$(reg $cpu 0x3c2)" = 0x400182 ] || fail "$1: cpu $cpu 0x3c2 = $(reg $cpu 0x3c2), expected 0x400182"
		[ "$(reg $cpu 0x3c7)" = 0x400166 ] || fail "$1: another agent's counter 7 was touched: $(reg $cpu 0x3c7)"
		[ "$(reg $cpu 0x391)" = 0x1000000ff ] || fail "$1: cpu $cpu 0x391 = $(reg $cpu 0x391), expected 0x1000000ff"
	done
}

up_everywhere() { # no event unavailable (busy), both sockets counting
	m=$(curl -fsS "$DAEMON_URL/metrics")
	[ "$(metric_value "$m" 'uncored_collector_up{collector="uncore"}')" = 1 ] || fail "$1: uncore collector down"
	[ "$(metric_value "$m" uncored_journal_up)" = 1 ] || fail "$1: uncored_journal_up is not 1"
	n=$(printf '%s\n' "$m" | grep -c '^uncored_uncore_events_total{socket="[01]",event="dram_thermal_throttled_cycles"}' || true)
	[ "$n" = 2 ] || fail "$1: dram counter missing on some socket: $(printf '%s\n' "$m" | grep uncore_events)"
	if printf '%s\n' "$m" | grep -q 'busy\|in use'; then
		fail "$1: a counter reported busy: $(printf '%s\n' "$m" | grep 'busy\|in use')"
	fi
}

write_conf "$TEST_TMP/u.conf" 0
crash_cycle westmere-ep '^own 0 0x3c0 0x0 0x400167 \*[0-9a-f]{8}$' --boot linux

# ---- Skylake-SP: the PCU through the msr engine ----
check_programmed() { # every select of the box on both sockets enabled (PCU_CTL_EN, bit 22)
	for cpu in 0 28; do
		for msr in 0x711 0x712 0x713 0x714; do
			v=$(reg $cpu $msr)
			[ $((v & 0x400000)) != 0 ] || fail "$1: cpu $cpu $msr = $v, not enabled"
		done
	done
}

advance() { # advance CPU MSR...: add 1000 to each, as if the box counted
	cpu=$1
	shift
	python3 -c 'import struct,sys
f=open(sys.argv[1],"r+b")
for m in sys.argv[2:]:
    f.seek(int(m,0)*8); v=struct.unpack("<Q",f.read(8))[0]; f.seek(int(m,0)*8); f.write(struct.pack("<Q",v+1000))' \
		"$tree/dev/cpu/$cpu/msr" "$@"
}

# PROCHOT seconds on both sockets with the collector up.  The tree's
# counters stand still unless advanced, and seconds need the box's clock
# to move: every counter of the box advances once between two samples.
up_everywhere() {
	for cpu in 0 28; do
		advance $cpu 0x717 0x718 0x719 0x71a
	done
	# The next sample counts them: wait for it, then judge what it shows.
	counted() {
		m=$(curl -fsS --max-time 5 "$DAEMON_URL/metrics") &&
			metric_value "$m" 'uncored_prochot_seconds_total{socket="1",source="internal"}' >/dev/null
	}
	wait_until 30 counted || true
	m=$(curl -fsS "$DAEMON_URL/metrics")
	[ "$(metric_value "$m" 'uncored_collector_up{collector="pcu"}')" = 1 ] || fail "$1: pcu collector down"
	for s in 0 1; do
		for src in external internal; do
			metric_value "$m" "uncored_prochot_seconds_total{socket=\"$s\",source=\"$src\"}" >/dev/null ||
				fail "$1: no $src PROCHOT seconds on socket $s: $(printf '%s\n' "$m" | grep -i 'pcu\|prochot_sec')"
		done
	done
}

write_conf "$TEST_TMP/u.conf" 0 "[pcu]" "engine = msr"
crash_cycle skylake-sp '^own 0 0x711 0x0 0x[0-9a-f]+ \*[0-9a-f]{8}$' --model skylake-sp-2s
# ---- Westmere-EP: another agent takes a fixed counter over meanwhile ----
# With uncored killed, another agent takes fixed counter 1 on cpu 0 (its
# field of 0x38d becomes 0xb, its gate bit 33 of 0x38f set).  The restart
# leaves both, says so, and puts back everything else: after its stop the
# tree differs from the original in those two registers only.
setreg() { # setreg CPU MSR VALUE, in the current $tree
	python3 -c 'import struct,sys; f=open(sys.argv[1],"r+b"); f.seek(int(sys.argv[2],0)*8); f.write(struct.pack("<Q",int(sys.argv[3],0)))' \
		"$tree/dev/cpu/$1/msr" "$2" "$3"
}
tree="$TEST_TMP/taken"
python3 "$(dirname "$0")/make_tree.py" "$tree"
python3 "$(dirname "$0")/make_tree.py" "$tree" --dump >"$TEST_TMP/taken.before"
write_conf "$TEST_TMP/u.conf" 0
start_daemon 0 "$TEST_TMP/taken.log1" --config "$TEST_TMP/u.conf" --root "$tree"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$DAEMON_PID" | tr '\n' ' ')
[ "$(reg 0 0x38d)" = 0x333 ] || fail "taken: cpu 0 0x38d = $(reg 0 0x38d) after SIGKILL, expected 0x333"
setreg 0 0x38d $(($(reg 0 0x38d) | 0xb0))
setreg 0 0x38f $(($(reg 0 0x38f) | (1 << 33)))
start_daemon 0 "$TEST_TMP/taken.log2" --config "$TEST_TMP/u.conf" --root "$tree"
grep -q 'did not stop cleanly; cleaned up [1-9][0-9]* registers it left programmed, left [1-9][0-9]* untouched that another agent took over' \
	"$TEST_TMP/taken.log2" || fail "taken: no notice of what was left: $(cat "$TEST_TMP/taken.log2")"
stop_daemon "$DAEMON_PID" || fail "taken: exit status $? after SIGTERM"
python3 "$(dirname "$0")/make_tree.py" "$tree" --dump >"$TEST_TMP/taken.after"
diff "$TEST_TMP/taken.before" "$TEST_TMP/taken.after" | grep '^[<>]' >"$TEST_TMP/taken.diff" || true
printf '< cpu0 0x38d 0x0\n> cpu0 0x38d 0xb0\n< cpu0 0x38f 0x0\n> cpu0 0x38f 0x200000000\n' |
	cmp -s - "$TEST_TMP/taken.diff" ||
	fail "taken: expected only the other agent's 0x38d 0xb0 and 0x38f bit 33, got: $(cat "$TEST_TMP/taken.diff")"
echo "crash_restart: leftovers recognised, cleaned, counted again, restored (uncore, PCU), a fixed counter taken over left: ok"
