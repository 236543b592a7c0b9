#!/bin/sh
# Benchmark: what uncored costs the host when nobody looks, beside
# prometheus-node-exporter in the same run.  For each simulated model given
# (default: big sapphire-rapids-2s, and genoa-2s where this build has it):
#   - CPU per sample with no client (a window with no request at all; the
#     sample count is read before and after it),
#   - CPU per sample with one gzip scrape of /metrics per 15 s (what
#     Prometheus does),
#   - PSS (/proc/PID/smaps_rollup) of each uncored process (hardware side,
#     server, opener when there is one), their sum, and their anonymous
#     memory, after three scrapes of each document, against node_exporter's
#     RSS and anonymous memory after three scrapes,
#   - the collectors' own CPU per sample as the daemon runs them: all at
#     once, paced one sample a second (bench_sample PACED), the base of the
#     ratios above and of the target (no client: at most 1.5 times it),
#     and the same collectors in bench_sample's warm loop, back to back,
#     with the daemon's ratio to that too,
#   - where the model has AMD's HSMP mailbox (genoa-2s), HSMP messages per
#     second, over a window of its own (lib.sh hsmp_per_s),
# and, once, the history document's cost with a full ring (bench_history).
# Not part of the test suite: it asserts nothing.
#
# Usage: tests/bench/idle.sh [MODEL...]   (from the source tree)
# Environment: BUILD_DIR (default build), BENCH_IDLE_S (default 30: each
#              window's length), BENCH_PACED_N (default 20: bench_sample's
#              paced samples, one a second).  About 1.5 * BENCH_IDLE_S +
#              BENCH_PACED_N s per model.
set -eu

SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD_DIR:-build}
case "$BUILD" in /*) ;; *) BUILD="$SRC/$BUILD" ;; esac
IDLE_S=${BENCH_IDLE_S:-30}
PACED_N=${BENCH_PACED_N:-20}

command -v prometheus-node-exporter >/dev/null || apt-get install -y prometheus-node-exporter >/dev/null
UNCORED_BIN="$BUILD/daemon/uncored"
UNCORED_SOURCE_ROOT="$SRC"
UNCORED_TEST_INTERVAL=1
UNCORED_TEST_DAEMON_LIMIT=$((4 * IDLE_S + 120))
export UNCORED_BIN UNCORED_SOURCE_ROOT
. "$SRC/tests/e2e/lib.sh"
# The binary itself, not the tests' guard (tests/e2e/own_paths_guard): its
# exec would count in the start-up time, and perf probes the binary.
UNCORED_BIN=$UNCORED_REAL_BIN
. "$SRC/tests/bench/lib.sh"
NODE_EXPORTER=$(command -v prometheus-node-exporter)

if [ $# -eq 0 ]; then
	set -- big sapphire-rapids-2s
	"$UNCORED_BIN" --help 2>&1 | grep -qw genoa-2s && set -- "$@" genoa-2s
fi

# A field of /proc/PID/smaps_rollup, KiB.
rollup() {
	awk -v k="$2:" '$1 == k { print $2 }' /proc/"$1"/smaps_rollup
}

echo "node_exporter ..." >&2
n_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$NODE_EXPORTER" --web.listen-address="127.0.0.1:$n_port" >"$TEST_TMP/n.log" 2>&1 &
N_PID=$!
PIDS="$PIDS $N_PID"
wait_until 20 curl -fsS -o /dev/null "http://127.0.0.1:$n_port/metrics"
for i in 1 2 3; do curl -fsS -o /dev/null "http://127.0.0.1:$n_port/metrics"; done
n_rss=$(awk '$1 == "VmRSS:" { print $2 }' /proc/$N_PID/status)
n_anon=$(awk '$1 == "RssAnon:" { print $2 }' /proc/$N_PID/status)
n_pss=$(rollup "$N_PID" Pss)

echo
printf '%-22s %-44s %10s %10s %8s\n' model measure uncored node_exp ratio
for model in "$@"; do
	echo "$model ..." >&2
	write_conf "$TEST_TMP/u.conf" 0
	start_daemon 0 "$TEST_TMP/u.log" --config "$TEST_TMP/u.conf" --simulate "$model:idle"
	U_PID=$DAEMON_PID
	wait_until 20 has_samples "$DAEMON_URL" 2

	# No client: nothing but the two sample counts around the window.
	s0=$(samples_total "$DAEMON_URL")
	c0=$(cpu_ns "$U_PID")
	sleep "$IDLE_S"
	c1=$(cpu_ns "$U_PID")
	s1=$(samples_total "$DAEMON_URL")
	idle_us=$(awk -v a="$c0" -v b="$c1" -v n=$((s1 - s0)) 'BEGIN { printf "%.1f", (b - a) / 1e3 / n }')

	# One gzip scrape of /metrics per 15 s.
	s0=$(samples_total "$DAEMON_URL")
	c0=$(cpu_ns "$U_PID")
	t=0
	while [ "$t" -lt "$IDLE_S" ]; do
		curl -fsS -o /dev/null --max-time 5 -H 'Accept-Encoding: gzip' "$DAEMON_URL/metrics"
		sleep 15
		t=$((t + 15))
	done
	c1=$(cpu_ns "$U_PID")
	s1=$(samples_total "$DAEMON_URL")
	scrape_us=$(awk -v a="$c0" -v b="$c1" -v n=$((s1 - s0)) 'BEGIN { printf "%.1f", (b - a) / 1e3 / n }')

	scrape_all "$DAEMON_URL"
	total=0 anon=0
	for p in $(procs "$U_PID"); do
		role=$([ "$p" = "$U_PID" ] && echo "hardware side" || echo "child $(cat /proc/$p/comm)")
		pss=$(rollup "$p" Pss)
		pa=$(rollup "$p" Pss_Anon)
		total=$((total + pss))
		anon=$((anon + pa))
		printf '%-22s %-44s %10s %10s %8s\n' "$model" "PSS KiB, $role (pid $p)" "$pss" - -
	done
	ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
	printf '%-22s %-44s %10s %10s %8s\n' "$model" "PSS KiB, total vs node_exporter RSS" "$total" "$n_rss" "$(ratio $total $n_rss)"
	printf '%-22s %-44s %10s %10s %8s\n' "$model" "anonymous KiB (Pss_Anon)" "$anon" "$n_anon" "$(ratio $anon $n_anon)"

	"$BUILD/tests/bench/bench_sample" 100 "$model:idle" "$PACED_N" >"$TEST_TMP/sample.out"
	paced=$(bench_paced_cpu "$TEST_TMP/sample.out")
	warm=$(bench_default_cpu "$TEST_TMP/sample.out")
	b2b=$(bench_back_to_back_cpu "$TEST_TMP/sample.out")
	printf '%-22s %-44s %10s %10s %8s\n' "$model" "CPU us per sample, no client" "$idle_us" - "$(ratio $idle_us $paced)"
	printf '%-22s %-44s %10s %10s %8s\n' "$model" "CPU us per sample, 1 scrape / 15 s" "$scrape_us" - "$(ratio $scrape_us $paced)"
	printf '%-22s %-44s %10s %10s %8s\n' "$model" "CPU us per sample, collectors paced 1 s" "$paced" - -
	printf '%-22s %-44s %10s %10s %8s\n' "$model" "CPU us per sample, collectors, warm loop" "$warm" - -
	printf '%-22s %-44s %10s %10s %8s\n' "$model" "  no client, against the warm loop" "$idle_us" - "$(ratio $idle_us $warm)"
	printf '%-22s %-44s %10s %10s %8s\n' "$model" "  collectors back to back, paced against it" "$b2b" - "$(ratio $paced $b2b)"
	if curl -fsS --max-time 5 "$DAEMON_URL/metrics" | grep -q '^uncored_collector_up{collector="hsmp"} 1'; then
		printf '%-22s %-44s %10s %10s %8s\n' "$model" "HSMP messages per second" \
			"$(hsmp_per_s "$UNCORED_BIN" "$U_PID" 10)" - -
	fi
	stop_daemon "$U_PID" || echo "note: uncored on $model: exit status $?" >&2
done
echo "(node_exporter PSS $n_pss KiB; the first two CPU rows' ratios are to the collectors paced 1 s)"
# What the windows above cannot show: the history ring fills over an hour,
# and its document, formatted only when a client reads it, costs this much
# a step then (bench_history).
[ -x "$BUILD/tests/bench/bench_history" ] && "$BUILD/tests/bench/bench_history" 20
kill -TERM "$N_PID"
