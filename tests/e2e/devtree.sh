#!/bin/sh
# The device-file backend against a tree of sparse files: the exact values
# written to the uncore event selects and global control while running
# (another agent's counter 7 and its enable bit left alone), and every file
# holding its original value after SIGTERM.
. "$(dirname "$0")/lib.sh"

tree="$TEST_TMP/tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/before"

reg() { # reg CPU MSR -> value as 0x%x
	python3 -c 'import struct,sys; f=open(sys.argv[1],"rb"); f.seek(int(sys.argv[2],0)*8); print(hex(struct.unpack("<Q",f.read(8))[0]))' \
		"$tree/dev/cpu/$1/msr" "$2"
}

write_conf "$TEST_TMP/u.conf" 0
start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --root "$tree"

# Socket 0 is programmed through cpu 0, socket 1 through cpu 6 (their first CPUs).
for cpu in 0 6; do
	[ "$(reg $cpu 0x3c0)" = 0x400167 ] || fail "cpu $cpu 0x3c0 = $(reg $cpu 0x3c0), expected 0x400167 (DRAM throttled cycles, no OCC_CTR_RST)"
	[ "$(reg $cpu 0x3c1)" = 0x1440167 ] || fail "cpu $cpu 0x3c1 = $(reg $cpu 0x3c1), expected 0x1440167 (edge, cmask 1)"
	[ "$(reg $cpu 0x3c2)" = 0x400182 ] || fail "cpu $cpu 0x3c2 = $(reg $cpu 0x3c2), expected 0x400182 (PROCHOT assertions)"
	[ "$(reg $cpu 0x3c7)" = 0x400166 ] || fail "cpu $cpu: another agent's counter 7 was touched: $(reg $cpu 0x3c7)"
	[ "$(reg $cpu 0x391)" = 0x1000000ff ] || fail "cpu $cpu 0x391 = $(reg $cpu 0x391), expected 0x1000000ff (ours 0-6 and fixed, theirs 7)"
	[ "$(reg $cpu 0x395)" = 0x1 ] || fail "cpu $cpu 0x395 = $(reg $cpu 0x395)"
done
metrics=$(curl -fsS "$DAEMON_URL/metrics")
printf '%s\n' "$metrics" | grep -q 'uncored_uncore_events_total{socket="1",event="dram_thermal_throttled_cycles"} 0' ||
	fail "no dram counter for socket 1 in /metrics"

stop_daemon "$DAEMON_PID" || fail "daemon exit status $? after SIGTERM"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/after"
diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "registers differ after exit"
grep -q "every register restored" "$TEST_TMP/log" || fail "no stop message: $(cat "$TEST_TMP/log")"
echo "devtree: ok"
