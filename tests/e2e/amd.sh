#!/bin/sh
# AMD EPYC on the simulator: k10temp's Tctl and Tccd temperatures from the
# scenario's [temperature.N] rules, per socket, as the driver lists them
# per generation (hardware-amd.md §2.1), the core PMU through perf (§3),
# and the Intel-only collectors not applicable.
. "$(dirname "$0")/lib.sh"

cat >"$TEST_TMP/hot.ini" <<'INI'
[scenario]
description = one core of socket 1 at 90 C

[temperature.1]
socket = 1
core = 3
celsius = 90
INI
once() {
	"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --format prometheus --simulate "$1:$TEST_TMP/hot.ini" >"$TEST_TMP/$1.prom" \
		2>"$TEST_TMP/log" || fail "$1: --once failed: $(cat "$TEST_TMP/log")"
}
value() {
	sed -n "s/^uncored_cpu_temperature_celsius{socket=\"$2\",sensor=\"$3\"} //p" "$TEST_TMP/$1.prom"
}

# Genoa: twelve CCDs, one core each here; core 3 is on CCD 4.
once genoa-2s
[ "$(value genoa-2s 1 Tctl)" = 90 ] || fail "genoa socket 1 Tctl: $(grep cpu_temp "$TEST_TMP/genoa-2s.prom")"
[ "$(value genoa-2s 1 Tccd4)" = 90 ] || fail "genoa socket 1 Tccd4"
[ "$(value genoa-2s 1 Tccd3)" = 45 ] || fail "genoa socket 1 Tccd3"
[ "$(value genoa-2s 0 Tctl)" = 45 ] || fail "genoa socket 0 Tctl"
[ "$(grep -c "^uncored_cpu_temperature_celsius{socket=\"0\"" "$TEST_TMP/genoa-2s.prom")" = 13 ] ||
	fail "genoa: Tctl and Tccd1-12 per socket"
grep -qx 'uncored_collector_up{collector="k10temp"} 1' "$TEST_TMP/genoa-2s.prom" || fail "genoa: k10temp not up"

# Turin: the driver lists Tctl only on family 1Ah EPYC.
once turin-2s
[ "$(value turin-2s 1 Tctl)" = 90 ] || fail "turin socket 1 Tctl"
grep -q 'sensor="Tccd' "$TEST_TMP/turin-2s.prom" && fail "turin has no Tccd channels"

# Rome: eight CCDs; no TjMax and no Intel thermal series, absent rather than 0.
once rome-2s
[ "$(value rome-2s 1 Tccd4)" = 90 ] || fail "rome socket 1 Tccd4"
grep -qE '^uncored_(tjmax_celsius|package_temperature_celsius|core_temperature_celsius)' "$TEST_TMP/rome-2s.prom" &&
	fail "rome: Intel thermal series present"

# The core PMU through perf (hardware-amd.md §3): instructions and cycles on every model,
# reference cycles on Genoa and Turin only (absent on Rome and Milan, not 0), AMD's default
# events, multiplexed on the 5 counters the NMI watchdog leaves; promtool takes every model.
for m in rome-2s milan-2s genoa-2s turin-2s; do
	[ -s "$TEST_TMP/$m.prom" ] || once "$m"
	grep -qx 'uncored_collector_up{collector="core"} 1' "$TEST_TMP/$m.prom" || fail "$m: core not up"
	grep -q '^uncored_core_instructions_total{socket="1",core="3",cpu=' "$TEST_TMP/$m.prom" &&
		grep -q '^uncored_core_cycles_total{socket="0",core="0",cpu="0"} [1-9]' "$TEST_TMP/$m.prom" &&
		grep -q '^uncored_core_events_total{.*event="l2_cache_misses"} [1-9]' "$TEST_TMP/$m.prom" &&
		grep -q '^uncored_core_multiplexing_ratio{socket="0",core="0",cpu="0"} 0\.' "$TEST_TMP/$m.prom" ||
		fail "$m core series: $(grep '^uncored_core_' "$TEST_TMP/$m.prom" | head -12)"
	if command -v promtool >/dev/null; then
		promtool check metrics <"$TEST_TMP/$m.prom" >"$TEST_TMP/promtool.out" 2>&1 ||
			fail "$m: promtool: $(cat "$TEST_TMP/promtool.out")"
	fi
done
for m in rome-2s milan-2s; do
	grep -q '^uncored_core_ref_cycles_total{' "$TEST_TMP/$m.prom" && fail "$m: ref cycles exported"
done
for m in genoa-2s turin-2s; do
	grep -q '^uncored_core_ref_cycles_total{socket="1",core="3",cpu=".*"} [1-9]' "$TEST_TMP/$m.prom" ||
		fail "$m: no ref cycles"
done
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --list-events --model genoa-2s >"$TEST_TMP/events.txt" 2>&1 || fail "--list-events genoa"
grep -q "ref_cycles  *event=0x120 umask=0x01" "$TEST_TMP/events.txt" &&
	grep -q "l2_cache_misses  *event=0x64 umask=0x09" "$TEST_TMP/events.txt" ||
	fail "genoa events: $(cat "$TEST_TMP/events.txt")"
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --list-events --model milan >"$TEST_TMP/events.txt" 2>&1 || fail "--list-events milan"
grep -q "ref_cycles  *not counted" "$TEST_TMP/events.txt" || fail "milan ref cycles: $(cat "$TEST_TMP/events.txt")"
printf '[core]\nengine = msr\n' >"$TEST_TMP/msr.conf"
"$UNCORED_BIN" --once --config "$TEST_TMP/msr.conf" --simulate genoa-2s >"$TEST_TMP/msr.txt" 2>&1 || fail "genoa msr --once"
grep -q "core     not applicable .*msr engine programs Intel's core PMU only" "$TEST_TMP/msr.txt" ||
	fail "genoa engine = msr: $(grep core "$TEST_TMP/msr.txt")"
echo "core ok"

# Intel: k10temp is not applicable, and says so.
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --simulate skylake-sp-2s >"$TEST_TMP/sky.txt" 2>&1 || fail "skylake --once"
grep -q "k10temp  not applicable .*AMD's temperature driver" "$TEST_TMP/sky.txt" || fail "skylake k10temp: $(grep k10temp "$TEST_TMP/sky.txt")"


# HSMP: not applicable on Rome (Zen 2) with why; on Genoa PROCHOT seconds with source "any",
# the frequency-limit reasons, and the sampling resolution; on a device-file tree said absent.
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --simulate rome-2s >"$TEST_TMP/rome.txt" 2>&1 || fail "rome --once"
grep -q "hsmp     not applicable .*no HSMP mailbox" "$TEST_TMP/rome.txt" || fail "rome hsmp: $(grep hsmp "$TEST_TMP/rome.txt")"
grep -q '^uncored_prochot_seconds_total{socket="1",source="any"} ' "$TEST_TMP/genoa-2s.prom" &&
	grep -q '^uncored_frequency_limited_seconds_total{socket="1",reason="power"} 0' "$TEST_TMP/genoa-2s.prom" &&
	grep -q '^uncored_sample_resolution_seconds{collector="hsmp"} ' "$TEST_TMP/genoa-2s.prom" ||
	fail "genoa hsmp series: $(grep -E 'prochot|frequency|resolution' "$TEST_TMP/genoa-2s.prom")"
grep -q '^uncored_frequency_limited_seconds_total' "$TEST_TMP/turin-2s.prom" || fail "turin freq limit"
echo "hsmp ok"

# A DIMM at 90 C on Genoa: exported at 90 C with refresh 2, and promtool takes it.
cat >"$TEST_TMP/dimm.ini" <<'INI'
[dimm-temperature.1]
socket = 1
channel = 3
slot = 0
celsius = 90
INI
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --format prometheus --simulate "genoa-2s:$TEST_TMP/dimm.ini" >"$TEST_TMP/dimm.prom" 2>"$TEST_TMP/log" ||
	fail "dimm --once: $(cat "$TEST_TMP/log")"
grep -qx 'uncored_dimm_temperature_celsius{socket="1",channel="3",slot="0",sensor="0"} 90' "$TEST_TMP/dimm.prom" &&
	grep -qx 'uncored_dimm_refresh_multiplier{socket="1",channel="3",slot="0"} 2' "$TEST_TMP/dimm.prom" &&
	grep -qx 'uncored_dimm_refresh_multiplier{socket="0",channel="3",slot="0"} 1' "$TEST_TMP/dimm.prom" ||
	fail "hot DIMM: $(grep 'channel="3"' "$TEST_TMP/dimm.prom")"
grep -q '^uncored_dram_throttled_seconds_total' "$TEST_TMP/dimm.prom" && fail "AMD has no DRAM throttle counter"
if command -v promtool >/dev/null; then
	promtool check metrics <"$TEST_TMP/dimm.prom" >"$TEST_TMP/promtool.out" 2>&1 || fail "promtool: $(cat "$TEST_TMP/promtool.out")"
fi
echo "dimm ok"

# A device-file tree of Genoa carries the k10temp files; HSMP, an ioctl, is said absent.
"$UNCORED_SIM_TREE_BIN" --machine genoa-2s "$TEST_TMP/tree" || fail "sim-tree genoa-2s"
"$UNCORED_BIN" --config "$DEFAULTS_CONF" --once --root "$TEST_TMP/tree" >"$TEST_TMP/tree.txt" 2>&1 || fail "--root genoa tree: $(cat "$TEST_TMP/tree.txt")"
grep -q "k10temp  up " "$TEST_TMP/tree.txt" &&
	grep -q "hsmp     not applicable .*HSMP is an ioctl on /dev/hsmp, which a device-file tree cannot carry" "$TEST_TMP/tree.txt" ||
	fail "genoa tree: $(grep -A9 '^collectors' "$TEST_TMP/tree.txt")"
echo "tree ok"

# The fast tick on a running daemon (the simulator's real clock): with a 4 s interval and the
# default 0.1 s tick, HSMP is read between samples, so the longest gap between readings is
# below the interval. Only that is asserted: how far below depends on how busy the machine is.
UNCORED_TEST_INTERVAL=4 write_conf "$TEST_TMP/u.conf" 0
start_daemon 0 "$TEST_TMP/daemon.log" --config "$TEST_TMP/u.conf" --simulate genoa-2s:prochot-storm
wait_until 60 has_samples "$DAEMON_URL" 3 || fail "no samples: $(cat "$TEST_TMP/daemon.log")"
res=$(metric_value "$(curl -fsS --max-time 5 "$DAEMON_URL/metrics")" 'uncored_sample_resolution_seconds{collector="hsmp"}') ||
	fail "no hsmp resolution"
awk -v r="$res" 'BEGIN { exit !(r > 0 && r < 4) }' || fail "hsmp resolution $res s with a 0.1 s tick and a 4 s interval"
stop_daemon "$DAEMON_PID" || fail "daemon exit"
echo "tick ok ($res s)"
