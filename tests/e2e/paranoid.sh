#!/bin/sh
# kernel.perf_event_paranoid = 3 (Debian's default; tests/data/scenarios/
# paranoid.ini): the simulated kernel refuses every perf_event_open of a
# caller without CAP_SYS_ADMIN.  Run without CAP_SYS_ADMIN (out of the
# bounding, inheritable and so effective sets), uncored --once finds perf
# refused by its trial open, counts the core PMU of every CPU through the
# msr engine, and says why in the log and the JSON.  With CAP_SYS_ADMIN
# (root) the same scenario counts through perf.  Dropped to a user, AMD's
# core PMU, which has no msr route, cannot be opened again on a CPU that
# comes back online, and the collector says why.
. "$(dirname "$0")/lib.sh"

SCENARIO="$UNCORED_SOURCE_ROOT/tests/data/scenarios/paranoid.ini"
UNCORED_TEST_INTERVAL=1 write_conf "$TEST_TMP/u.conf" 9

without_sys_admin() {
	if [ "$(id -u)" = 0 ]; then
		command -v setpriv >/dev/null || skip "setpriv is not installed"
		setpriv --bounding-set -sys_admin --inh-caps -sys_admin "$@"
	else
		"$@"
	fi
}

without_sys_admin "$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --json \
	--simulate "skylake-sp-2s:$SCENARIO" >"$TEST_TMP/once.json" 2>"$TEST_TMP/log" ||
	{ cat "$TEST_TMP/log"; fail "--once without CAP_SYS_ADMIN failed"; }
core='.collectors[] | select(.name == "core")'
jq -e "$core | .up and .engine.name == \"msr\"" "$TEST_TMP/once.json" >/dev/null ||
	fail "core collector: $(jq -c "$core" "$TEST_TMP/once.json")"
jq -e "$core | .engine.reason | test(\"perf_event_paranoid is 3\") and test(\"CAP_SYS_ADMIN\") and test(\"falls back to msr\")" \
	"$TEST_TMP/once.json" >/dev/null || fail "core engine reason: $(jq -c "$core.engine" "$TEST_TMP/once.json")"
n=$(jq '.cpus | length' "$TEST_TMP/once.json")
[ "$n" -gt 0 ] || fail "no cpus"
jq -e "[.cpus[] | select(.instructions > 0)] | length == $n" "$TEST_TMP/once.json" >/dev/null ||
	fail "not every CPU counts instructions: $(jq -c '[.cpus[] | .instructions]' "$TEST_TMP/once.json")"
grep -q "perf_event_paranoid is 3" "$TEST_TMP/log" || fail "the log does not say why: $(cat "$TEST_TMP/log")"

if [ "$(id -u)" = 0 ] && grep -q '^CapEff:.*[1-9a-f]' /proc/self/status; then
	"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --json --simulate "skylake-sp-2s:$SCENARIO" \
		>"$TEST_TMP/root.json" 2>"$TEST_TMP/log" || fail "--once as root failed"
	jq -e "$core | .up and .engine.name == \"perf\"" "$TEST_TMP/root.json" >/dev/null ||
		fail "with CAP_SYS_ADMIN: $(jq -c "$core" "$TEST_TMP/root.json")"
fi

# Root with CAP_SYS_ADMIN but a configured user: the opens would succeed now
# and every reopen after the privilege drop would be refused, so the core
# collector takes the msr route and says why.
if [ "$(id -u)" = 0 ] && grep -q '^CapEff:.*[1-9a-f]' /proc/self/status && id nobody >/dev/null 2>&1 &&
	id daemon >/dev/null 2>&1; then
	UNCORED_TEST_INTERVAL=1 write_conf "$TEST_TMP/drop.conf" 0 "server_user = daemon"
	sed -i 's/^user =.*/user = nobody/' "$TEST_TMP/drop.conf"
	grep -q '^user = nobody' "$TEST_TMP/drop.conf" || fail "write_conf gave no user line"
	start_daemon 0 "$TEST_TMP/drop.log" --config "$TEST_TMP/drop.conf" \
		--simulate "skylake-sp-2s:$SCENARIO"
	curl -fsS --max-time 5 "$DAEMON_URL/api/v1/snapshot" >"$TEST_TMP/drop.json" || fail "no snapshot"
	jq -e "$core | .up and .engine.name == \"msr\" and
		(.engine.reason | test(\"CAP_SYS_ADMIN is dropped at start\"))" "$TEST_TMP/drop.json" \
		>/dev/null || fail "with a user to drop to: $(jq -c "$core" "$TEST_TMP/drop.json")"
	stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"
fi
# AMD's core PMU has no msr route: the core collector counts through perf,
# and says at start what the drop will cost.  A CPU that comes back online
# after the drop cannot be opened again: the collector says so, and why,
# where it said the CPU was still offline; the same for a CPU offline at
# start (paranoid-offline-at-start.ini), which the collector waits for.
if [ "$(id -u)" = 0 ] && grep -q '^CapEff:.*[1-9a-f]' /proc/self/status && id nobody >/dev/null 2>&1 &&
	id daemon >/dev/null 2>&1; then
	UNCORED_TEST_INTERVAL=0.25 write_conf "$TEST_TMP/amd.conf" 0 "server_user = daemon"
	sed -i 's/^user =.*/user = nobody/' "$TEST_TMP/amd.conf"
	for scn in paranoid-hotplug paranoid-offline-at-start; do
		start_daemon 0 "$TEST_TMP/$scn.log" --config "$TEST_TMP/amd.conf" \
			--simulate "genoa-2s:$UNCORED_SOURCE_ROOT/tests/data/scenarios/$scn.ini"
		expect_log "$TEST_TMP/$scn.log" "privileges: perf_event_paranoid is 3: running as 'nobody' without CAP_SYS_ADMIN" \
			"amd, $scn: no warning at start"
		wait_until 30 log_has "$TEST_TMP/$scn.log" "cpu 6 came online" ||
			fail "amd, $scn: cpu 6 did not come back: $(cat "$TEST_TMP/$scn.log")"
		s0=$(samples_total "$DAEMON_URL")
		wait_until 30 has_samples "$DAEMON_URL" $((s0 + 2)) || fail "amd, $scn: no samples"
		curl -fsS --max-time 5 "$DAEMON_URL/api/v1/snapshot" >"$TEST_TMP/amd.json" || fail "no snapshot"
		jq -e "$core | .engine.name == \"perf\" and
			(.engine.reason | test(\"at perf_event_paranoid 3, without CAP_SYS_ADMIN after the drop\"))" \
			"$TEST_TMP/amd.json" >/dev/null ||
			fail "amd, $scn: engine: $(jq -c "$core.engine" "$TEST_TMP/amd.json")"
		jq -e "$core | .state == \"partial\" and .errors > 0 and .units_counting == .units - 1 and
			(.reason | test(\"back online, but the kernel refuses its events at perf_event_paranoid 3\"))" \
			"$TEST_TMP/amd.json" >/dev/null ||
			fail "amd, $scn: cpu 6 back: $(jq -c "$core" "$TEST_TMP/amd.json")"
		expect_log "$TEST_TMP/$scn.log" "collector core: partial: .*back online, but the kernel refuses its events" \
			"amd, $scn: the log does not say so"
		stop_daemon "$DAEMON_PID" || fail "amd, $scn: exit status after SIGTERM"
	done
fi
echo "paranoid: ok"
