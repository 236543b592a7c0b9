#!/bin/sh
# The msr opener is watched (hwopen.h): the sampler waits at most a second
# for its answer, its death is logged by the main loop, and the stop does
# not wait on it.
#  - stopped (SIGSTOP) while a CPU comes online: sampling goes on, the stop
#    finishes in under 2 s although the opener cannot exit, and once
#    resumed it exits by itself;
#  - killed: logged at once, and sampling goes on when a CPU comes online.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root"
id nobody >/dev/null 2>&1 || skip "no 'nobody' user"
id daemon >/dev/null 2>&1 || skip "no 'daemon' user (server_user)"

tree="$TEST_TMP/tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree"
chmod 755 "$TEST_TMP"
write_conf "$TEST_TMP/u.conf" 0 "server_user = daemon"
sed -i 's/^user =.*/user = nobody/' "$TEST_TMP/u.conf"
online=$tree/sys/devices/system/cpu/cpu1/online

opener_pid() { # opener_pid LOG
	sed -n 's/.*msr opener started as pid \([0-9][0-9]*\).*/\1/p' "$1"
}
samples() {
	metric_value "$(curl -fsS "$DAEMON_URL/metrics")" uncored_samples_total
}
wait_log() { # wait_log FILE TEXT NAME
	for _ in $(seq 1 100); do
		grep -qF "$2" "$1" && return 0
		sleep 0.1
	done
	fail "$3: '$2' not logged in 10 s: $(cat "$1")"
}
more_samples() { # more_samples NAME: the sampler goes on (3 more samples within 10 s)
	s0=$(samples)
	for _ in $(seq 1 100); do
		[ "$(samples)" -ge $((s0 + 3)) ] && return 0
		sleep 0.1
	done
	fail "$1: sampling stopped at $(samples) samples"
}

# --- Stopped: cpu 1 comes online, the opener never answers.
echo 0 >"$online"
start_daemon 0 "$TEST_TMP/log.stopped" --config "$TEST_TMP/u.conf" --root "$tree"
opener=$(opener_pid "$TEST_TMP/log.stopped")
[ -n "$opener" ] || fail "stopped: the opener's pid is not logged: $(cat "$TEST_TMP/log.stopped")"
kill -STOP "$opener"
echo 1 >"$online"
wait_log "$TEST_TMP/log.stopped" "msr opener $opener did not answer within" stopped
wait_log "$TEST_TMP/log.stopped" "cpu 1 came online but cannot be monitored: the msr opener did not answer" stopped
more_samples stopped
t0=$(date +%s%N)
stop_daemon "$DAEMON_PID" || fail "stopped: exit status $?: $(cat "$TEST_TMP/log.stopped")"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
# Its stop does not wait on the stopped opener: the daemon gives it a second; 10 s
# leaves room for a busy machine, and a stop that waited on the opener would never end.
[ "$ms" -lt 10000 ] || fail "stopped: the stop took $ms ms"
# Left stopped, it holds nothing but its end of a closed socket: resumed,
# it reads end-of-file and exits.
kill -CONT "$opener"
for _ in $(seq 1 20); do
	state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$opener/status" 2>/dev/null || true)
	[ -z "$state" ] || [ "$state" = Z ] && break
	sleep 0.1
done
[ -z "$state" ] || [ "$state" = Z ] || fail "stopped: the opener did not exit once resumed (state $state)"
grep -qF "stopped, every register restored" "$TEST_TMP/log.stopped" || fail "stopped: $(cat "$TEST_TMP/log.stopped")"

# --- Killed: logged by the main loop; cpu 1 comes online afterwards.
echo 0 >"$online"
start_daemon 0 "$TEST_TMP/log.killed" --config "$TEST_TMP/u.conf" --root "$tree"
opener=$(opener_pid "$TEST_TMP/log.killed")
kill -KILL "$opener"
wait_log "$TEST_TMP/log.killed" "msr opener $opener was killed by SIGKILL" killed
echo 1 >"$online"
wait_log "$TEST_TMP/log.killed" "cpu 1 came online but cannot be monitored: the msr opener is gone" killed
more_samples killed
if grep -qF "cpu 1 came online; monitoring it" "$TEST_TMP/log.killed"; then
	fail "killed: cpu 1 claimed monitored: $(cat "$TEST_TMP/log.killed")"
fi
stop_daemon "$DAEMON_PID" || fail "killed: exit status $?: $(cat "$TEST_TMP/log.killed")"
echo "opener: a stopped opener hangs nothing, a killed one is logged: ok"
