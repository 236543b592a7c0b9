#!/bin/sh
# CPUs that go offline and come back, on the device-file tree, where the
# case concerns restore.  Each case checks the registers byte for byte
# against the tree before start, what was logged, and the exit code.
#  - A stop while a CPU is offline cannot restore that CPU's registers: it
#    logs each one, keeps them in the state file and exits 4.
#  - The next start finishes the job when the CPU is online again;
#  - or, when it is still offline, once it comes online during the run.
#  - A CPU offline at start is monitored once it comes online.
#  - Going offline and coming online are each logged once and counted
#    (uncored_cpu_hotplug_total), and the counters carry on.
# cpu 1 is used: the uncore of socket 0 is reached through cpu 0, so only
# core PMU registers (per CPU, like the tree's files) are on it.
. "$(dirname "$0")/lib.sh"

tree="$TEST_TMP/tree"
ledger="$TEST_TMP/ledger"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/before"
write_conf "$TEST_TMP/u.conf" 0

set_online() { # set_online CPU 0|1
	echo "$2" >"$tree/sys/devices/system/cpu/cpu$1/online"
}

dump() {
	python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$1"
}

same_tree() { # same_tree NAME
	dump "$TEST_TMP/after"
	diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "$1: registers differ from the tree before start"
}

wait_log() { # wait_log FILE TEXT NAME: until TEXT is logged (the daemon samples every 0.25 s)
	for _ in $(seq 1 300); do
		grep -qF "$2" "$1" && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || fail "$3: the daemon exited: $(cat "$1")"
		sleep 0.1
	done
	fail "$3: '$2' not logged after 30 s: $(cat "$1")"
}

wait_samples() { # wait_samples N: until N more samples were taken
	s0=$(metric_value "$(curl -fsS "$DAEMON_URL/metrics")" uncored_samples_total)
	for _ in $(seq 1 300); do
		s=$(metric_value "$(curl -fsS "$DAEMON_URL/metrics")" uncored_samples_total)
		[ "$s" -ge $((s0 + $1)) ] && return 0
		sleep 0.1
	done
	fail "fewer than $1 samples in 30 s"
}

count() { # count FILE TEXT: lines of FILE holding TEXT
	grep -cF "$2" "$1" || true
}

stop_offline() { # stop_offline NAME: stop while cpu 1 is offline; expect exit 4, cpu 1 left
	rc=0
	stop_daemon "$DAEMON_PID" || rc=$?
	log=$TEST_TMP/log.$1
	[ "$rc" = 4 ] || fail "$1: exit status $rc, expected 4: $(cat "$log")"
	grep -q '^.*cpu 1 MSR 0x[0-9a-f]*: not restored (.*): .*; kept in the state file '"$ledger" "$log" ||
		fail "$1: the registers left are not logged: $(cat "$log")"
	grep -qF "registers could not be restored and stay in the state file" "$log" ||
		fail "$1: no stop message: $(cat "$log")"
	if grep -q 'every register restored' "$log"; then
		fail "$1: claims every register restored: $(cat "$log")"
	fi
	grep -q '^own 1 ' "$ledger" || fail "$1: cpu 1's registers are not in the state file: $(cat "$ledger")"
	if grep -v '^uncored-ledger\|^state \|^own 1 \|^bits 1 ' "$ledger" | grep -q .; then
		fail "$1: the state file holds more than cpu 1's registers: $(cat "$ledger")"
	fi
	dump "$TEST_TMP/after"
	diff "$TEST_TMP/before" "$TEST_TMP/after" | grep '^[<>]' | grep -v ' cpu1 ' >"$TEST_TMP/diff" || true
	[ ! -s "$TEST_TMP/diff" ] || fail "$1: registers of other CPUs not restored: $(cat "$TEST_TMP/diff")"
	diff "$TEST_TMP/before" "$TEST_TMP/after" | grep -q '^> cpu1 ' ||
		fail "$1: cpu 1 shows no programming left (was anything programmed on it?)"
}

stop_clean() { # stop_clean NAME: expect exit 0, every register restored, the state file empty
	rc=0
	stop_daemon "$DAEMON_PID" || rc=$?
	[ "$rc" = 0 ] || fail "$1: exit status $rc, expected 0: $(cat "$TEST_TMP/log.$1")"
	grep -q 'stopped, every register restored' "$TEST_TMP/log.$1" || fail "$1: no stop message"
	[ ! -s "$ledger" ] || fail "$1: state file not emptied: $(cat "$ledger")"
	same_tree "$1"
}

# --- Stop while cpu 1 is offline, then the next start finishes the job.
start_daemon 0 "$TEST_TMP/log.offline" --config "$TEST_TMP/u.conf" --root "$tree"
set_online 1 0
wait_log "$TEST_TMP/log.offline" "cpu 1 went offline" "offline"
stop_offline offline
set_online 1 1
start_daemon 0 "$TEST_TMP/log.next" --config "$TEST_TMP/u.conf" --root "$tree"
grep -q 'cleaned up [1-9][0-9]* registers it left programmed, left 0 ' "$TEST_TMP/log.next" ||
	fail "next start: no clean-up notice: $(cat "$TEST_TMP/log.next")"
stop_clean next

# --- Stop while cpu 1 is offline; the next start finds it still offline,
# keeps its registers, and puts them back when it comes online.
start_daemon 0 "$TEST_TMP/log.offline2" --config "$TEST_TMP/u.conf" --root "$tree"
set_online 1 0
wait_log "$TEST_TMP/log.offline2" "cpu 1 went offline" "offline again"
stop_offline offline2
cp "$ledger" "$TEST_TMP/ledger.left"
start_daemon 0 "$TEST_TMP/log.later" --config "$TEST_TMP/u.conf" --root "$tree"
expect_log "$TEST_TMP/log.later" "state file $ledger: cpu 1 MSR 0x[0-9a-f]* could not be restored yet: .*; kept, and put back when its CPU comes online" \
	"still offline: the registers kept are not logged"
expect_log "$TEST_TMP/log.later" "cpu 1 is offline; it is monitored once it comes online" "offline at start: not logged"
grep -q '^own 1 ' "$ledger" || fail "still offline: the records were not kept: $(cat "$ledger")"
metrics=$(curl -fsS "$DAEMON_URL/metrics")
if printf '%s\n' "$metrics" | grep -q '^uncored_core_instructions_total{[^}]*cpu="1"'; then
	fail "cpu 1 is reported while offline: $(printf '%s\n' "$metrics" | grep 'cpu="1"' | head -3)"
fi
set_online 1 1
wait_log "$TEST_TMP/log.later" "cpu 1 came online; monitoring it" "online during the run"
wait_log "$TEST_TMP/log.later" "registers left unrestored when their CPU was offline" "online during the run"
grep -q 'put back [1-9][0-9]* registers left unrestored when their CPU was offline ([1-9][0-9]* restored, 0 left to the agent that took them over); 0 remain' \
	"$TEST_TMP/log.later" || fail "online during the run: $(cat "$TEST_TMP/log.later")"
# --- And cpu 1, offline at start, is monitored now that it is online.
wait_samples 3
metrics=$(curl -fsS "$DAEMON_URL/metrics")
printf '%s\n' "$metrics" | grep -q '^uncored_core_instructions_total{[^}]*cpu="1"' ||
	fail "cpu 1 not monitored after it came online: $(printf '%s\n' "$metrics" | grep 'cpu="0"' | head -3)"
[ "$(metric_value "$metrics" 'uncored_cpu_hotplug_total{event="online"}')" = 1 ] ||
	fail "online during the run: not counted: $(printf '%s\n' "$metrics" | grep hotplug)"
if grep -q 'cpu 1:' "$TEST_TMP/log.later"; then
	fail "cpu 1 reported unusable: $(grep 'cpu 1:' "$TEST_TMP/log.later")"
fi
stop_clean later

# --- Offline and back during a run: each logged once, the counters carry on
# from where they stopped.  cpu 1 counts instructions on fixed counter 0
# (MSR 0x309); the test advances that counter as the CPU would.
add_count() { # add_count N: add N to cpu 1's fixed counter 0
	python3 -c 'import struct,sys
f=open(sys.argv[1],"r+b"); f.seek(0x309*8); v=struct.unpack("<Q",f.read(8))[0]
f.seek(0x309*8); f.write(struct.pack("<Q",v+int(sys.argv[2])))' "$tree/dev/cpu/1/msr" "$1"
}
instructions() { # cpu 1's exported instruction total
	metric_value "$(curl -fsS "$DAEMON_URL/metrics")" 'uncored_core_instructions_total{socket="0",core="1",cpu="1"}'
}
wait_total() { # wait_total N NAME: until cpu 1's total is N
	for _ in $(seq 1 300); do
		[ "$(instructions || true)" = "$1" ] && return 0
		sleep 0.1
	done
	fail "$2: cpu 1's instruction total is $(instructions || true), expected $1"
}
start_daemon 0 "$TEST_TMP/log.flap" --config "$TEST_TMP/u.conf" --root "$tree"
wait_samples 2
add_count 1000
wait_total 1000 "before offline"
set_online 1 0
wait_log "$TEST_TMP/log.flap" "cpu 1 went offline" "flap"
wait_samples 4
total=$(instructions || true)   # not exported while offline
[ -z "$total" ] || [ "$total" = 1000 ] || fail "flap: the total changed while offline: $total"
add_count 500
set_online 1 1
wait_log "$TEST_TMP/log.flap" "cpu 1 came online" "flap"
wait_total 1500 "back online"
wait_samples 4
[ "$(count "$TEST_TMP/log.flap" "cpu 1 went offline")" = 1 ] || fail "flap: offline not logged exactly once: $(cat "$TEST_TMP/log.flap")"
[ "$(count "$TEST_TMP/log.flap" "cpu 1 came online")" = 1 ] || fail "flap: online not logged exactly once: $(cat "$TEST_TMP/log.flap")"
metrics=$(curl -fsS "$DAEMON_URL/metrics")
[ "$(metric_value "$metrics" 'uncored_cpu_hotplug_total{event="offline"}')" = 1 ] ||
	fail "flap: offline not counted once: $(printf '%s\n' "$metrics" | grep hotplug)"
[ "$(metric_value "$metrics" 'uncored_cpu_hotplug_total{event="online"}')" = 1 ] ||
	fail "flap: online not counted once: $(printf '%s\n' "$metrics" | grep hotplug)"
stop_clean flap
echo "hotplug: stop while offline, next start, online during the run, offline at start, logged once: ok"
