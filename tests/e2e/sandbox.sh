#!/bin/sh
# The daemon under the shipped unit's own sandboxing, at Debian's
# kernel.perf_event_paranoid 3.  The properties are read from the built
# unit (its last line for each), not copied: systemd is not PID 1 on every
# test host, so they are applied by hand, in a mount namespace (unshare -m),
# as systemd would:
#   ProcSubset=, ProtectProc=  a procfs of its own, mounted with subset=pid
#                              and hidepid= as the values say
#                              (hardware-linux.md §7.1);
#   ProtectKernelTunables=yes  /proc/sys read-only;
#   CapabilityBoundingSet=     the bounding set, with no inheritable set
#                              (setpriv), so root starts with these alone;
#   NoNewPrivileges=, UMask=   as given.
# The simulated kernel's own /proc is the unit's too: a scenario with
# proc_subset = the unit's ProcSubset= value.  The system call filter and
# the namespaces that need systemd are not applied; the test is about what
# the daemon can read.  Cases:
#  1. --once, the unit as shipped (no CAP_SYS_ADMIN): the trial open is
#     refused, and the core collector counts through the msr driver, with
#     the reason, which names the level; nothing the daemon reads is hidden.
#  2. A daemon with the drop-in the unit suggests (CAP_SYS_ADMIN added),
#     dropping to a user: the opens would succeed now and every reopen after
#     the drop would be refused, so the core collector takes the msr route
#     and says why, with the level.
#  3. The same with ProcSubset=pid (the file hidden): the level counts as the
#     strictest, the log says it could not be read, and the core collector
#     still takes the msr route.
# Skipped (77) when not root or without unshare, setpriv or mount.
#
# usage: sandbox.sh BUILT_SERVICE_UNIT
. "$(dirname "$0")/lib.sh"

unit=$1
[ "$(id -u)" = 0 ] || skip "needs root (a mount namespace and capability sets)"
for tool in unshare setpriv mount jq; do
	command -v "$tool" >/dev/null 2>&1 || skip "$tool is not installed"
done
grep -q '^CapEff:.*[1-9a-f]' /proc/self/status || skip "no capabilities to give up"

# The unit's value of KEY (its last assignment), or DEFAULT.
prop() {
	pv=$(sed -n "s/^$1=//p" "$unit" | tail -n 1)
	echo "${pv:-$2}"
}
subset=$(prop ProcSubset all)
protect_proc=$(prop ProtectProc default)
tunables=$(prop ProtectKernelTunables no)
caps=$(prop CapabilityBoundingSet "")
nnp=$(prop NoNewPrivileges no)
umask_value=$(prop UMask 0022)
[ -n "$caps" ] || fail "no CapabilityBoundingSet= in $unit"
case $subset in all | pid) ;; *) fail "ProcSubset=$subset in $unit" ;; esac

# Write an executable $TEST_TMP/NAME that runs uncored (the guard of lib.sh)
# in the sandbox, with ProcSubset=SUBSET and EXTRA_CAPS beyond the unit's.
# Every step execs: the daemon keeps the script's PID.
# Usage: sandbox NAME SUBSET EXTRA_CAPS
sandbox() {
	sb_caps=$(echo "$caps $3" | tr ' ' '\n' | sed -n 's/^CAP_\(.*\)/+\1/p' | tr 'A-Z' 'a-z' |
		tr '\n' ',' | sed 's/,$//')
	sb_opts=
	[ "$2" = pid ] && sb_opts=subset=pid
	[ "$protect_proc" != default ] && sb_opts="${sb_opts:+$sb_opts,}hidepid=$protect_proc"
	sb_nnp=
	[ "$nnp" = yes ] && sb_nnp=--no-new-privs
	{
		echo '#!/bin/sh'
		echo 'set -eu'
		echo "exec unshare -m --propagation private sh -c '"
		echo "mount -t proc ${sb_opts:+-o $sb_opts} proc /proc"
		if [ "$tunables" = yes ]; then
			echo "if [ -d /proc/sys ]; then mount --bind /proc/sys /proc/sys &&" \
				"mount -o remount,bind,ro /proc/sys; fi"
		fi
		echo "umask $umask_value"
		echo "exec setpriv $sb_nnp --inh-caps -all --bounding-set -all,$sb_caps \"\$0\" \"\$@\"" \
			"' \"$UNCORED_BIN\" \"\$@\""
	} >"$TEST_TMP/$1"
	chmod +x "$TEST_TMP/$1"
}

# The simulated kernel at paranoid 3, its /proc as ProcSubset=SUBSET mounts
# it.  Usage: scenario FILE SUBSET
scenario() {
	printf '[scenario]\ndescription = paranoid 3 under ProcSubset=%s\nperf_event_paranoid = 3\nproc_subset = %s\n' \
		"$2" "$2" >"$1"
}

core='.collectors[] | select(.name == "core")'

# 1. The unit as shipped, --once.
sandbox unit "$subset" ""
scenario "$TEST_TMP/unit.ini" "$subset"
UNCORED_TEST_INTERVAL=1 write_conf "$TEST_TMP/once.conf" 9
"$TEST_TMP/unit" --config "$TEST_TMP/once.conf" --once --json \
	--simulate "skylake-sp-2s:$TEST_TMP/unit.ini" >"$TEST_TMP/once.json" 2>"$TEST_TMP/once.log" ||
	fail "--once in the unit's sandbox failed: $(cat "$TEST_TMP/once.log")"
jq -e "$core | .up and .engine.name == \"msr\" and (.engine.reason |
	test(\"perf_event_paranoid is 3, and this process lacks CAP_SYS_ADMIN\") and
	test(\"falls back to msr\"))" "$TEST_TMP/once.json" >/dev/null ||
	fail "ProcSubset=$subset: core: $(jq -c "$core" "$TEST_TMP/once.json"); log: $(cat "$TEST_TMP/once.log")"
n=$(jq '.cpus | length' "$TEST_TMP/once.json")
jq -e "[.cpus[] | select(.instructions > 0)] | length == $n" "$TEST_TMP/once.json" >/dev/null ||
	fail "not every CPU counts instructions: $(jq -c '[.cpus[] | .instructions]' "$TEST_TMP/once.json")"
if grep -q "cannot be read" "$TEST_TMP/once.log"; then
	fail "the unit hides what the daemon reads: $(cat "$TEST_TMP/once.log")"
fi

# 2 and 3: the drop-in with CAP_SYS_ADMIN, a daemon that drops to a user.
if id nobody >/dev/null 2>&1 && id daemon >/dev/null 2>&1; then
	UNCORED_TEST_INTERVAL=1 write_conf "$TEST_TMP/drop.conf" 0 "server_user = daemon"
	sed -i 's/^user =.*/user = nobody/' "$TEST_TMP/drop.conf"
	for s in "$subset" pid; do
		sandbox "admin-$s" "$s" CAP_SYS_ADMIN
		scenario "$TEST_TMP/admin-$s.ini" "$s"
		UNCORED_BIN="$TEST_TMP/admin-$s" start_daemon 0 "$TEST_TMP/admin-$s.log" \
			--config "$TEST_TMP/drop.conf" --simulate "skylake-sp-2s:$TEST_TMP/admin-$s.ini"
		curl -fsS --max-time 5 "$DAEMON_URL/api/v1/snapshot" >"$TEST_TMP/admin.json" ||
			fail "no snapshot"
		level=3
		[ "$s" = pid ] && level=unreadable
		jq -e "$core | .up and .engine.name == \"msr\" and (.engine.reason |
			test(\"perf_event_paranoid is $level and CAP_SYS_ADMIN is dropped at start\"))" \
			"$TEST_TMP/admin.json" >/dev/null ||
			fail "ProcSubset=$s with CAP_SYS_ADMIN: core: $(jq -c "$core" "$TEST_TMP/admin.json")"
		if [ "$s" = pid ]; then
			expect_log "$TEST_TMP/admin-$s.log" \
				"perf_event_paranoid cannot be read \(No such file or directory\): taken as the strictest level" \
				"ProcSubset=pid: the log does not say the level was unreadable"
		elif grep -q "cannot be read" "$TEST_TMP/admin-$s.log"; then
			fail "ProcSubset=$s hides what the daemon reads: $(cat "$TEST_TMP/admin-$s.log")"
		fi
		stop_daemon "$DAEMON_PID" || fail "ProcSubset=$s: exit status after SIGTERM"
	done
fi
echo "sandbox: ProcSubset=$subset, ProtectProc=$protect_proc: ok"
