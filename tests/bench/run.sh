#!/bin/sh
# Benchmark: uncored on the simulated 'big' machine (2 sockets x 56 cores x
# 2 threads) against prometheus-node-exporter on the same machine, in the
# same run, both on 127.0.0.1.  Prints one table with both figures, their
# ratio and whether the target is met.  Resident memory is also shown for
# uncored on device files of the same machine (no simulator in the process),
# with its total PSS and anonymous memory after three scrapes of each
# document against node_exporter's after three scrapes, and for bench_floor
# (uncored's libraries alone).  Not part of the test suite: it
# asserts nothing and always exits 0 unless something could not be run.
#
# Usage: tests/bench/run.sh            (from the source tree, as root)
# Environment: BUILD_DIR (default build), BENCH_WRK_S (default 10),
#              BENCH_RSS_S (default 60).
#
# It installs wrk and prometheus-node-exporter with apt-get if missing,
# builds uncored if BUILD_DIR has no binary, and takes about 4 minutes.
set -eu

SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD_DIR:-build}
case "$BUILD" in /*) ;; *) BUILD="$SRC/$BUILD" ;; esac
WRK_S=${BENCH_WRK_S:-10}
RSS_S=${BENCH_RSS_S:-60}

if ! command -v wrk >/dev/null || ! command -v prometheus-node-exporter >/dev/null; then
	apt-get install -y wrk prometheus-node-exporter >/dev/null
fi
if [ ! -x "$BUILD/daemon/uncored" ] || [ ! -x "$BUILD/tests/bench/bench_sample" ] ||
	[ ! -x "$BUILD/tests/bench/bench_floor" ]; then
	[ -d "$BUILD" ] || meson setup "$BUILD" "$SRC" >/dev/null
	meson compile -C "$BUILD" >/dev/null
fi

UNCORED_BIN="$BUILD/daemon/uncored"
UNCORED_SOURCE_ROOT="$SRC"
UNCORED_TEST_INTERVAL=1
UNCORED_TEST_DAEMON_LIMIT=$((RSS_S + 4 * WRK_S + 120))
export UNCORED_BIN UNCORED_SOURCE_ROOT
. "$SRC/tests/e2e/lib.sh"
# The binary itself, not the tests' guard (tests/e2e/own_paths_guard): its
# exec would count in the start-up time, and perf probes the binary.
UNCORED_BIN=$UNCORED_REAL_BIN
. "$SRC/tests/bench/lib.sh"
# A free TCP port on 127.0.0.1 (the benchmark runs alone, nothing else binds meanwhile).
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}
NODE_EXPORTER=$(command -v prometheus-node-exporter)

# ---------------------------------------------------------------- helpers

# Milliseconds from exec to ready, median of 3 fresh starts; the process is
# stopped by its PID each time.  Ready is READY=1 on a NOTIFY_SOCKET of our
# own ("notify"), or the first 200 from URL ("http URL").
# Usage: startup_ms notify|URL LOG CMD...
STARTUP_PY='
import os, socket, subprocess, sys, time, urllib.request
mode, log, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
times = []
for run in range(3):
    env = dict(os.environ)
    sock = None
    if mode == "notify":
        path = "%s.%d.sock" % (log, run)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        env["NOTIFY_SOCKET"] = path
    with open(log, "ab") as out:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, env=env, stdout=out, stderr=out)
    ready = None
    try:
        while time.monotonic() - t0 < 20 and p.poll() is None:
            if sock:
                sock.settimeout(0.5)
                try:
                    data = sock.recv(4096).decode()
                except socket.timeout:
                    continue
                if "READY=1" in data.splitlines():
                    ready = time.monotonic()
            else:
                try:
                    with urllib.request.urlopen(mode, timeout=1) as r:
                        if r.status == 200:
                            ready = time.monotonic()
                except OSError:
                    time.sleep(0.002)
            if ready:
                break
    finally:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if sock:
            sock.close()
            os.unlink(path)
    if ready is None:
        sys.exit("not ready after 20 s: " + " ".join(cmd))
    times.append((ready - t0) * 1000)
print("%.1f" % sorted(times)[1])
'
startup_ms() {
	timeout 90 python3 -c "$STARTUP_PY" "$@"
}

# A line of /proc/PID/status summed over PID and its children.
rss_kb() {
	for p in $(procs "$1"); do cat /proc/"$p"/status; done |
		awk -v k="$2:" '$1 == k { s += $2 } END { print s }'
}

samples_total() {
	metric_value "$(curl -fsS --max-time 5 "$1/metrics")" uncored_samples_total
}

# CPU time of uncored PID (all its processes) per sample over SECS s with no
# client, in microseconds; URL is where it serves (the sample count is read
# before and after the window).
idle_sample_us() {
	s0=$(samples_total "$2")
	c0=$(cpu_ns "$1")
	sleep "$3"
	c1=$(cpu_ns "$1")
	s1=$(samples_total "$2")
	awk -v a="$c0" -v b="$c1" -v n=$((s1 - s0)) 'BEGIN { printf "%.1f\n", (b - a) / 1e3 / n }'
}

# Convert a wrk latency ("60.00us", "5.24ms", "1.02s") to microseconds.
to_us() {
	echo "$1" | awk '{ v = $1 + 0; u = $1; sub(/^[0-9.]+/, "", u);
		if (u == "ms") v *= 1e3; else if (u == "s") v *= 1e6;
		else if (u == "m") v *= 6e7; printf "%.0f\n", v }'
}

# Run wrk against URL with THREADS and CONNS (and any further wrk arguments,
# such as a header) while measuring the CPU time of PID; sets W_RPS, W_P50,
# W_P99 (us), W_REQ, W_ERR and W_CPU_US (per request).
run_wrk() {
	url=$1 threads=$2 conns=$3 pid=$4
	shift 4
	out="$TEST_TMP/wrk.out"
	c0=$(cpu_ns "$pid")
	timeout $((WRK_S + 30)) wrk -t"$threads" -c"$conns" -d"${WRK_S}s" --timeout 5s --latency "$@" \
		"$url/metrics" >"$out"
	c1=$(cpu_ns "$pid")
	W_RPS=$(awk '$1 == "Requests/sec:" { print $2 }' "$out")
	W_P50=$(to_us "$(awk '$1 == "50%" { print $2 }' "$out")")
	W_P99=$(to_us "$(awk '$1 == "99%" { print $2 }' "$out")")
	W_REQ=$(awk '$2 == "requests" && $3 == "in" { print $1 }' "$out")
	W_ERR=$(awk '/Socket errors|Non-2xx/ { print; }' "$out" | tr '\n' ' ')
	W_CPU_US=$(awk -v a="$c0" -v b="$c1" -v n="$W_REQ" 'BEGIN { printf "%.1f\n", (b - a) / 1e3 / n }')
	[ -n "$W_ERR" ] && echo "note: wrk against $url: $W_ERR" >&2
	return 0
}

ROWS="$TEST_TMP/rows"
: >"$ROWS"
# row NAME UNIT UNCORED OTHER OP TARGET: OP is ge (ratio >= TARGET), le, eq,
# or - (no target, ratio printed for information).
row() {
	printf '%s|%s|%s|%s|%s|%s\n' "$@" >>"$ROWS"
}

# ---------------------------------------------------------------- run

HOST="$(nproc) cpus ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), $(uname -sr)"
NE_VERSION=$("$NODE_EXPORTER" --version 2>&1 | awk 'NR == 1 { print $3 }')
echo "host: $HOST" >&2
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

u_port=$(free_port)
n_port=$(free_port)
# One client opens 16 connections: the per-address limit (default 8) must
# let them all in, as node_exporter does.
write_conf "$TEST_TMP/u.conf" "$u_port" "max_connections_per_ip = 32" "max_connections = 64"
U_URL="http://127.0.0.1:$u_port"
N_URL="http://127.0.0.1:$n_port"

echo "start-up times (3 fresh starts each) ..." >&2
u_start=$(startup_ms notify "$TEST_TMP/start-u.log" "$UNCORED_BIN" --config "$TEST_TMP/u.conf" \
	--simulate big:idle)
n_start=$(startup_ms "$N_URL/metrics" "$TEST_TMP/start-n.log" "$NODE_EXPORTER" \
	--web.listen-address="127.0.0.1:$n_port")

# Resident memory is also taken, in the same window, of uncored on device
# files of the same 2 x 56 x 2 machine (the production backend, with no
# simulator in the process) and of bench_floor: the same libraries serving a
# fixed body, the least any server built on them holds.
d_port=$(free_port)
f_port=$(free_port)
mkdir "$TEST_TMP/devtree"
UNCORED_TEST_STATE_FILE="$TEST_TMP/devtree/ledger" write_conf "$TEST_TMP/d.conf" "$d_port"
python3 "$SRC/tests/e2e/make_tree.py" "$TEST_TMP/devtree" --cores 56

echo "sampling and idling for $RSS_S s ..." >&2
start_daemon "$u_port" "$TEST_TMP/u.log" --config "$TEST_TMP/u.conf" --simulate big:idle
U_PID=$DAEMON_PID
start_daemon "$d_port" "$TEST_TMP/d.log" --config "$TEST_TMP/d.conf" --root "$TEST_TMP/devtree"
D_PID=$DAEMON_PID
"$BUILD/tests/bench/bench_floor" "$f_port" "$UNCORED_TEST_DAEMON_LIMIT" >"$TEST_TMP/f.log" 2>&1 &
F_PID=$!
PIDS="$PIDS $F_PID"
"$NODE_EXPORTER" --web.listen-address="127.0.0.1:$n_port" >"$TEST_TMP/n.log" 2>&1 &
N_PID=$!
(sleep "$UNCORED_TEST_DAEMON_LIMIT"; kill -TERM "$N_PID" 2>/dev/null) &
PIDS="$PIDS $N_PID $!"
t_start=$(date +%s)
s0=$(samples_total "$U_URL")
c0=$(cpu_ns "$U_PID")
sleep "$RSS_S"
for pid in "$U_PID" "$N_PID" "$D_PID" "$F_PID"; do
	kill -0 "$pid" 2>/dev/null || { cat "$TEST_TMP/"[udnf].log >&2; fail "server $pid exited"; }
done
c1=$(cpu_ns "$U_PID")
s1=$(samples_total "$U_URL")
u_rss=$(rss_kb "$U_PID" VmRSS)
n_rss=$(rss_kb "$N_PID" VmRSS)
u_anon=$(rss_kb "$U_PID" RssAnon)
n_anon=$(rss_kb "$N_PID" RssAnon)
# uncored on device files: after three scrapes of each document, what a
# host that Prometheus scrapes pays.
scrape_all "http://127.0.0.1:$d_port"
d_rss=$(rss_kb "$D_PID" VmRSS)
d_anon=$(rss_kb "$D_PID" RssAnon)
d_pss=$(pss_kb "$D_PID" Pss)
d_pss_anon=$(pss_kb "$D_PID" Pss_Anon)
# ... against node_exporter after three scrapes too (the rows above take it
# as it idled).
for i in 1 2 3; do curl -fsS -o /dev/null --max-time 5 "$N_URL/metrics" || true; done
n_rss_scraped=$(rss_kb "$N_PID" VmRSS)
n_anon_scraped=$(rss_kb "$N_PID" RssAnon)
f_rss=$(rss_kb "$F_PID" VmRSS)
f_anon=$(rss_kb "$F_PID" RssAnon)
curl -fsS -o /dev/null --max-time 5 "$N_URL/metrics" || fail "node_exporter does not answer"
curl -fsS -o /dev/null --max-time 5 "http://127.0.0.1:$d_port/metrics" || fail "uncored on device files does not answer"
curl -fsS -o /dev/null --max-time 5 "http://127.0.0.1:$f_port/metrics" || fail "bench_floor does not answer"
stop_daemon "$D_PID" || fail "uncored on device files: exit status"
kill -TERM "$F_PID"
u_sample=$(awk -v a="$c0" -v b="$c1" -v n=$((s1 - s0)) 'BEGIN { printf "%.1f\n", (b - a) / 1e3 / n }')
echo "  $((s1 - s0)) samples in $(($(date +%s) - t_start)) s" >&2

for conns in 1 16; do
	threads=$([ "$conns" = 1 ] && echo 1 || echo 2)
	echo "wrk -t$threads -c$conns -d${WRK_S}s against both ..." >&2
	run_wrk "$U_URL" "$threads" "$conns" "$U_PID"
	u_rps=$W_RPS u_p50=$W_P50 u_p99=$W_P99 u_cpu=$W_CPU_US
	run_wrk "$N_URL" "$threads" "$conns" "$N_PID"
	[ "$conns" = 16 ] && n_rps16=$W_RPS
	row "requests/s, $conns conn" "req/s" "$u_rps" "$W_RPS" ge 20
	row "latency p50, $conns conn" "us" "$u_p50" "$W_P50" - -
	row "latency p99, $conns conn" "us" "$u_p99" "$W_P99" le 0.1
	row "CPU per scrape, $conns conn" "us" "$u_cpu" "$W_CPU_US" - -
done
# Prometheus always asks for gzip: the same runs with Accept-Encoding: gzip.
echo "wrk -t2 -c16 -d${WRK_S}s with Accept-Encoding: gzip against both ..." >&2
run_wrk "$U_URL" 2 16 "$U_PID" -H "Accept-Encoding: gzip"
u_rps=$W_RPS u_p99=$W_P99 u_cpu=$W_CPU_US
run_wrk "$N_URL" 2 16 "$N_PID" -H "Accept-Encoding: gzip"
row "requests/s, 16 conn, gzip" "req/s" "$u_rps" "$W_RPS" ge 20
row "latency p99, 16 conn, gzip" "us" "$u_p99" "$W_P99" le 0.1
row "CPU per scrape, gzip" "us" "$u_cpu" "$W_CPU_US" - -
u_bytes=$(curl -fsS --max-time 5 "$U_URL/metrics" | wc -c)
n_bytes=$(curl -fsS --max-time 5 "$N_URL/metrics" | wc -c)
u_gz=$(curl -fsS --max-time 5 -H 'Accept-Encoding: gzip' "$U_URL/metrics" | wc -c)
n_gz=$(curl -fsS --max-time 5 -H 'Accept-Encoding: gzip' "$N_URL/metrics" | wc -c)
stop_daemon "$U_PID" || fail "uncored exit status"
kill -TERM "$N_PID"

# A server model, whose pcu and imc collectors count through the simulated
# kernel's uncore_pcu and uncore_imc_N PMUs: scrape throughput and CPU per
# scrape against node_exporter's figure of the same client above.
echo "wrk -t2 -c16 -d${WRK_S}s against uncored on sapphire-rapids-2s ..." >&2
start_daemon "$u_port" "$TEST_TMP/spr.log" --config "$TEST_TMP/u.conf" \
	--simulate sapphire-rapids-2s:idle
SPR_PID=$DAEMON_PID
wait_until 20 has_samples "$U_URL" 2
spr_idle=$(idle_sample_us "$SPR_PID" "$U_URL" 20)
run_wrk "$U_URL" 2 16 "$SPR_PID"
spr_rps=$W_RPS spr_p99=$W_P99 spr_cpu=$W_CPU_US
spr_bytes=$(curl -fsS --max-time 5 "$U_URL/metrics" | wc -c)
stop_daemon "$SPR_PID" || fail "uncored on sapphire-rapids-2s: exit status"

# An AMD model, genoa-2s (2 x 24 cores, no SMT; hardware-amd.md): the
# k10temp and hsmp collectors, the hsmp one reading PROCHOT and the
# frequency limits on its own 0.1 s tick; HSMP messages per second over a
# window of their own (lib.sh hsmp_per_s).
G_PID=
if "$UNCORED_BIN" --help 2>&1 | grep -qw genoa-2s; then
	echo "genoa-2s: CPU per sample, HSMP messages, wrk -t2 -c16 -d${WRK_S}s ..." >&2
	start_daemon "$u_port" "$TEST_TMP/genoa.log" --config "$TEST_TMP/u.conf" --simulate genoa-2s:idle
	G_PID=$DAEMON_PID
	wait_until 20 has_samples "$U_URL" 2
	g_idle=$(idle_sample_us "$G_PID" "$U_URL" 20)
	g_hsmp=$(hsmp_per_s "$UNCORED_BIN" "$G_PID" 10)
	run_wrk "$U_URL" 2 16 "$G_PID"
	g_rps=$W_RPS g_p99=$W_P99 g_cpu=$W_CPU_US
	g_bytes=$(curl -fsS --max-time 5 "$U_URL/metrics" | wc -c)
	stop_daemon "$G_PID" || fail "uncored on genoa-2s: exit status"
	"$BUILD/tests/bench/bench_sample" 200 genoa-2s:idle 20 >"$TEST_TMP/sample-genoa.out"
	g_sample_cpu=$(bench_default_cpu "$TEST_TMP/sample-genoa.out")
fi

# The sum of VmRSS counts each library page once per process (two since the
# server is a process of its own) and holds the simulator: the memory
# targets are the PSS and anonymous rows on device files below.
row "RSS after ${RSS_S} s (VmRSS)" "KiB" "$u_rss" "$n_rss" - -
row "  of which anonymous" "KiB" "$u_anon" "$n_anon" - -
row "  RSS, on device files" "KiB" "$d_rss" "$n_rss" - -
row "  of which anonymous" "KiB" "$d_anon" "$n_anon" - -
row "  PSS on device files, total" "KiB" "$d_pss" "$n_rss_scraped" le 0.4
row "  anonymous there (Pss_Anon)" "KiB" "$d_pss_anon" "$n_anon_scraped" le 0.5
row "  RSS, libraries alone" "KiB" "$f_rss" "$n_rss" - -
row "  of which anonymous" "KiB" "$f_anon" "$n_anon" - -
row "  uncored above libraries" "KiB" $((u_rss - f_rss)) "$n_rss" - -
row "  on device files, above" "KiB" $((d_rss - f_rss)) "$n_rss" - -
row "start-up to ready" "ms" "$u_start" "$n_start" - -
row "/metrics body" "bytes" "$u_bytes" "$n_bytes" - -
row "/metrics body, gzip" "bytes" "$u_gz" "$n_gz" - -
row "  uncored gzip / identity" "bytes" "$u_gz" "$u_bytes" le 0.1

echo "MSR reads, system calls and cross-CPU reads per sample (bench_sample) ..." >&2
"$BUILD/tests/bench/bench_sample" 200 big:idle 20 >"$TEST_TMP/sample.out"
# Rows: collector engine msr-reads minimum syscalls cross-cpu cpu-us default.
# The shipped configuration is the sum of the rows marked default.
awk 'f && NF == 8 && $8 == "yes" { r += $3; m += $4; sc += $5; x += $6; c += $7 }
	/^collector/ { f = 1 }
	END { printf "%s %s %s %s %s\n", r, m, sc, x, c }' "$TEST_TMP/sample.out" >"$TEST_TMP/sample.sum"
read -r msr_reads msr_min sample_calls sample_cross sample_cpu <"$TEST_TMP/sample.sum"
row "CPU per sample (daemon)" "us" "$u_sample" "$(bench_paced_cpu "$TEST_TMP/sample.out")" le 1.5
row "  against collectors, warm loop" "us" "$u_sample" "$sample_cpu" - -
row "  collectors paced, against back to back" "us" "$(bench_paced_cpu "$TEST_TMP/sample.out")" "$(bench_back_to_back_cpu "$TEST_TMP/sample.out")" - -
row "CPU per sample (bench_sample)" "us" "$sample_cpu" "-" - -
row "MSR reads per sample" "reads" "$msr_reads" "$msr_min" eq 1
row "system calls per sample" "calls" "$sample_calls" "-" - -
row "cross-CPU reads per sample" "reads" "$sample_cross" "-" - -
# The core collector on each engine: the perf engine reads each CPU's group once.
for engine in msr perf; do
	awk -v e="$engine" 'f && $1 == "core" && $2 == e { printf "%s %s %s\n", $3, $5, $6 }
		/^collector/ { f = 1 }' "$TEST_TMP/sample.out" >"$TEST_TMP/core.$engine"
	read -r c_reads c_calls c_cross <"$TEST_TMP/core.$engine"
	row "  core, $engine engine: MSR reads" "reads" "$c_reads" "-" - -
	row "  core, $engine engine: syscalls" "calls" "$c_calls" "-" - -
	row "  core, $engine engine: cross-CPU" "reads" "$c_cross" "-" - -
done

# The same figures on sapphire-rapids-2s (2 x 32 x 2), where the pcu and imc
# collectors run and the Nehalem/Westmere uncore does not apply.
echo "the same per sample on sapphire-rapids-2s (bench_sample) ..." >&2
"$BUILD/tests/bench/bench_sample" 200 sapphire-rapids-2s:idle 20 >"$TEST_TMP/sample-spr.out"
awk 'f && NF == 8 && $8 == "yes" { r += $3; m += $4; sc += $5; x += $6; c += $7 }
	/^collector/ { f = 1 }
	END { printf "%s %s %s %s %s\n", r, m, sc, x, c }' "$TEST_TMP/sample-spr.out" >"$TEST_TMP/spr.sum"
read -r spr_reads spr_min spr_calls spr_cross spr_sample_cpu <"$TEST_TMP/spr.sum"
row "sapphire-rapids-2s:" "" "" "" - -
row "  requests/s, 16 conn" "req/s" "$spr_rps" "$n_rps16" ge 20
row "  latency p99, 16 conn" "us" "$spr_p99" "-" - -
row "  CPU per scrape" "us" "$spr_cpu" "-" - -
row "  /metrics body" "bytes" "$spr_bytes" "-" - -
row "  CPU per sample (daemon)" "us" "$spr_idle" "$(bench_paced_cpu "$TEST_TMP/sample-spr.out")" le 1.5
row "    against collectors, warm loop" "us" "$spr_idle" "$spr_sample_cpu" - -
row "    collectors paced, against back to back" "us" "$(bench_paced_cpu "$TEST_TMP/sample-spr.out")" "$(bench_back_to_back_cpu "$TEST_TMP/sample-spr.out")" - -
row "  CPU per sample (bench)" "us" "$spr_sample_cpu" "-" - -
row "  MSR reads per sample" "reads" "$spr_reads" "$spr_min" - -
row "  system calls per sample" "calls" "$spr_calls" "-" - -
row "  cross-CPU reads per sample" "reads" "$spr_cross" "-" - -
for c in pcu imc; do
	awk -v c="$c" 'f && $1 == c && $8 == "yes" { printf "%s %s %s\n", $5, $6, $7 }
		/^collector/ { f = 1 }' "$TEST_TMP/sample-spr.out" >"$TEST_TMP/spr.$c"
	read -r c_calls c_cross c_cpu <"$TEST_TMP/spr.$c"
	row "  $c: system calls" "calls" "$c_calls" "-" - -
	row "  $c: CPU per sample" "us" "$c_cpu" "-" - -
done
if [ -n "$G_PID" ]; then
	row "genoa-2s:" "" "" "" - -
	row "  requests/s, 16 conn" "req/s" "$g_rps" "$n_rps16" ge 20
	row "  latency p99, 16 conn" "us" "$g_p99" "-" - -
	row "  CPU per scrape" "us" "$g_cpu" "-" - -
	row "  /metrics body" "bytes" "$g_bytes" "-" - -
	row "  CPU per sample (daemon)" "us" "$g_idle" "$(bench_paced_cpu "$TEST_TMP/sample-genoa.out")" le 1.5
	row "    against collectors, warm loop" "us" "$g_idle" "$g_sample_cpu" - -
	row "    collectors paced, against back to back" "us" "$(bench_paced_cpu "$TEST_TMP/sample-genoa.out")" "$(bench_back_to_back_cpu "$TEST_TMP/sample-genoa.out")" - -
	row "  CPU per sample (bench)" "us" "$g_sample_cpu" "-" - -
	row "  HSMP messages per second" "msg/s" "$g_hsmp" "-" - -
fi

# ---------------------------------------------------------------- table

echo
echo "host: $HOST; both servers on 127.0.0.1"
echo "load average before: $LOAD0, after: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the host skews the tails)"
echo "uncored $("$UNCORED_BIN" --version | awk '{ print $NF; exit }'): --simulate big:idle (2 sockets x 56 cores x 2 threads), interval 1 s;"
echo "  the sapphire-rapids-2s rows: --simulate sapphire-rapids-2s:idle (2 sockets x 32 cores x 2 threads),"
echo "  the genoa-2s rows: --simulate genoa-2s:idle (2 sockets x 24 cores);"
echo "  a 'CPU per sample (daemon)' row is with no client, its ratio to the same collectors paced"
echo "  one sample a second (bench_sample PACED: the collectors' own cost as the daemon runs them)"
echo "node_exporter $NE_VERSION: default collectors; wrk ${WRK_S} s per run"
echo
awk -F'|' '
BEGIN {
	printf "%-30s %-6s %12s %14s %9s %8s %4s\n", "measure", "unit", "uncored",
	       "node_exporter", "ratio", "target", "met"
}
{
	name = $1; unit = $2; u = $3; n = $4; op = $5; t = $6
	if ($1 == "MSR reads per sample") {
		printf "%-30s %-6s %12s %14s %9.2f %8s %4s\n", name, unit, u, n " (min)",
		       u / n, "= 1", (u == n) ? "yes" : "no"
		next
	}
	ratio = (n + 0 > 0) ? sprintf("%.3g", u / n) : "-"
	met = "-"; tgt = "-"
	if (op == "ge") { tgt = ">= " t; met = (u / n >= t) ? "yes" : "no" }
	if (op == "le") { tgt = "<= " t; met = (u / n <= t) ? "yes" : "no" }
	printf "%-30s %-6s %12s %14s %9s %8s %4s\n", name, unit, u, n, ratio, tgt, met
}' "$ROWS"
