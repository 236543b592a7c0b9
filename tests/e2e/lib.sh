# Shared helpers for the end-to-end tests.  Sourced by each test script.
#
# Every server a test starts listens on 127.0.0.1 only, is stopped by its
# PID when the test ends (trap), and has a time limit of its own.
set -eu

: "${UNCORED_BIN:?UNCORED_BIN must point at the uncored binary}"
: "${UNCORED_SOURCE_ROOT:?UNCORED_SOURCE_ROOT must point at the source tree}"
SCENARIOS="$UNCORED_SOURCE_ROOT/conf/scenarios"
TEST_TMP=$(mktemp -d /tmp/uncored-e2e.XXXXXX)
PIDS=""

# Every uncored a test runs goes through tests/e2e/own_paths_guard, which
# refuses a run that would touch a machine-wide default (no --config, the
# machine's root or state file, the default port) and records it here; the
# cleanup below fails the test for it, whatever the test made of the refusal.
# A test of another binary sets UNCORED_REAL_BIN before sourcing this file.
UNCORED_REAL_BIN=${UNCORED_REAL_BIN:-$UNCORED_BIN}
UNCORED_GUARD_LOG=$TEST_TMP/own-paths-refusals
export UNCORED_REAL_BIN UNCORED_GUARD_LOG
UNCORED_BIN=$UNCORED_SOURCE_ROOT/tests/e2e/own_paths_guard
# For a run that tests what the defaults do: every default but the state
# file, which is the test's own.
DEFAULTS_CONF=$TEST_TMP/defaults.conf
printf '[daemon]\nstate_file = %s\n' "$TEST_TMP/defaults-ledger" >"$DEFAULTS_CONF"

cleanup() {
	for pid in $PIDS; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in $PIDS; do
		wait "$pid" 2>/dev/null || true
	done
	if [ -s "$UNCORED_GUARD_LOG" ]; then
		echo "FAIL: uncored was run on the machine's own paths (tests/e2e/own_paths_guard):" >&2
		cat "$UNCORED_GUARD_LOG" >&2
		rm -rf "$TEST_TMP"
		exit 1
	fi
	rm -rf "$TEST_TMP"
}
trap cleanup EXIT INT TERM

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

# Poll until COMMAND succeeds, for at most SECONDS (whole seconds) of wall
# time; returns 1 when it never did.  Every wait in a test is one of these:
# no fixed sleeps, which are too short on a busy machine and too long on an
# idle one.  Usage: wait_until SECONDS COMMAND [ARGS...]
wait_until() {
	wu_end=$(($(date +%s) + $1))
	shift
	while ! "$@"; do
		[ "$(date +%s)" -lt "$wu_end" ] || return 1
		sleep 0.05
	done
}

# True when PID has no signal SIGNUM (a number) pending: the daemon has
# taken it from its signalfd.  Usage: wait_until 10 signal_taken PID SIGNUM
signal_taken() {
	st_pending=$(sed -n 's/^ShdPnd:[[:space:]]*//p' "/proc/$1/status" 2>/dev/null) || return 0
	[ -n "$st_pending" ] || return 0
	[ $((0x$st_pending >> ($2 - 1) & 1)) = 0 ]
}

# True when FILE has a line matching the extended regular expression RE.
# Usage: log_has FILE RE
log_has() {
	grep -Eq "$2" "$1" 2>/dev/null
}

# Fail unless the log FILE of a running daemon gets a line matching the
# extended regular expression RE within ${UNCORED_TEST_LOG_LIMIT:-30} s: a
# line a daemon writes is waited for, never grepped at once (on a busy
# machine the grep can come first).  Usage: expect_log FILE RE WHAT
expect_log() {
	wait_until "${UNCORED_TEST_LOG_LIMIT:-30}" log_has "$1" "$2" ||
		fail "$3: no line matching '$2' after ${UNCORED_TEST_LOG_LIMIT:-30} s: $(cat "$1")"
}

# The port a daemon reports in its "serving on 127.0.0.1:PORT" line, once
# it has logged it; fails when the daemon exits first.
# Usage: port=$(served_port LOGFILE PID) || fail ...
served_port() {
	sp_port=""
	sp_end=$(($(date +%s) + ${UNCORED_TEST_START_LIMIT:-30}))
	while [ -z "$sp_port" ]; do
		sp_port=$(sed -n 's/.*serving on 127\.0\.0\.1:\([0-9][0-9]*\)[ ,].*/\1/p' "$1" | head -n 1)
		[ -n "$sp_port" ] && break
		kill -0 "$2" 2>/dev/null || return 1
		[ "$(date +%s)" -lt "$sp_end" ] || return 1
		sleep 0.05
	done
	echo "$sp_port"
}

# A configuration for tests: loopback listener, no privilege drop, fast sampling,
# the state file in the test's directory (never the host's /run/uncored):
# $UNCORED_TEST_STATE_FILE, default $TEST_TMP/ledger (one per concurrent daemon
# that should journal; a second daemon on a locked file journals nothing).
# PORT 0: the listener is chosen at start (start_daemon 0 passes
# --listen 127.0.0.1:0), the file names port 9 (a configured port is never 0).
# Tests run side by side: a port is never picked in advance and bound later.
# Usage: write_conf FILE PORT [extra ini lines...]
write_conf() {
	file=$1
	port=$2
	shift 2
	{
		echo "[daemon]"
		echo "listen = 127.0.0.1:$([ "$port" = 0 ] && echo 9 || echo "$port")"
		echo "interval = ${UNCORED_TEST_INTERVAL:-0.25}"
		echo "user ="
		echo "log_level = info"
		echo "state_file = ${UNCORED_TEST_STATE_FILE:-$TEST_TMP/ledger}"
		for line in "$@"; do
			echo "$line"
		done
	} >"$file"
}

# Start the daemon in the background with a time limit; sets DAEMON_PID,
# DAEMON_PORT and DAEMON_URL, waits until /healthz answers 200.  PORT 0
# (what tests use): the daemon listens on 127.0.0.1:0 and DAEMON_PORT is the
# port its "serving on" line names.
# Usage: start_daemon PORT LOGFILE uncored-args...
start_daemon() {
	port=$1
	log=$2
	shift 2
	if [ "$port" = 0 ]; then
		set -- "$@" --listen 127.0.0.1:0
	fi
	# Emptied here, not only by the background job's redirection, which may
	# come after served_port has read an earlier daemon's port from it.
	: >"$log"
	"$UNCORED_BIN" "$@" >"$log" 2>&1 &
	DAEMON_PID=$!
	# A guard stops the daemon after its time limit even if this script dies.
	# (Not timeout(1): it forwards SIGHUP to its whole process group, so the
	# daemon would see every reload signal twice.)
	# Its output goes to /dev/null so it holds no pipe of the test runner
	# open, and on SIGTERM (cleanup) it takes its sleep down with it.
	(
		exec >/dev/null 2>&1
		sleep "${UNCORED_TEST_DAEMON_LIMIT:-280}" &
		sleeper=$!
		trap 'kill "$sleeper"; exit 0' TERM
		wait "$sleeper"
		kill -TERM "$DAEMON_PID"
	) &
	PIDS="$PIDS $DAEMON_PID $!"
	if [ "$port" = 0 ]; then
		port=$(served_port "$log" "$DAEMON_PID") || {
			cat "$log" >&2
			fail "daemon did not say which port it serves on"
		}
	fi
	DAEMON_PORT=$port
	DAEMON_URL="http://127.0.0.1:$port"
	wait_healthy "$DAEMON_URL" "$DAEMON_PID" "$log"
}

wait_healthy() {
	url=$1
	pid=$2
	log=$3
	wh_end=$(($(date +%s) + ${UNCORED_TEST_START_LIMIT:-30}))
	while [ "$(date +%s)" -lt "$wh_end" ]; do
		if curl -fsS -o /dev/null --max-time 2 "$url/healthz" 2>/dev/null; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			cat "$log" >&2
			fail "daemon exited before it was healthy"
		fi
		sleep 0.05
	done
	cat "$log" >&2
	fail "daemon not healthy at $url after ${UNCORED_TEST_START_LIMIT:-30} s"
}

# Stop a daemon by PID with SIGTERM and return its exit status.
stop_daemon() {
	pid=$1
	kill -TERM "$pid"
	rc=0
	wait "$pid" || rc=$?
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$pid" | tr '\n' ' ')
	return $rc
}

# Value of one sample in Prometheus text: metric_value TEXT 'name{labels}'
metric_value() {
	printf '%s\n' "$1" | awk -v m="$2" '$1 == m { print $2; found=1 } END { if (!found) exit 1 }'
}

# uncored_samples_total of the daemon at URL.  Usage: samples_total URL
samples_total() {
	metric_value "$(curl -fsS --max-time 5 "$1/metrics")" uncored_samples_total
}

# True when the daemon at URL has taken at least N samples.  Usage: has_samples URL N
has_samples() {
	hs_n=$(samples_total "$1") && [ "$hs_n" -ge "$2" ]
}

# Wait until the daemon at URL takes a new sample, at most SECONDS (default
# 30); returns 1 when it took none.  Usage: samples_grow URL [SECONDS]
samples_grow() {
	sg_from=$(samples_total "$1") || return 1
	wait_until "${2:-30}" has_samples "$1" $((sg_from + 1))
}

# Start a real Prometheus server on loopback scraping the given targets
# every second (every PROM_INTERVAL, when set, e.g. 750ms), evaluating its
# rules as often; sets PROM_URL.
# Usage: start_prometheus RULES_FILE_OR_EMPTY TARGET...
# PROM_FLAGS, when set, adds flags (--enable-feature=exemplar-storage).
start_prometheus() {
	command -v prometheus >/dev/null || skip "prometheus is not installed"
	rules=$1
	shift
	{
		echo "global:"
		echo "  scrape_interval: ${PROM_INTERVAL:-1s}"
		echo "  evaluation_interval: ${PROM_INTERVAL:-1s}"
		if [ -n "$rules" ]; then
			echo "rule_files: ['$rules']"
		fi
		echo "scrape_configs:"
		echo "  - job_name: uncored"
		echo "    static_configs:"
		echo "      - targets: [$(printf "'%s'," "$@" | sed 's/,$//')]"
	} >"$TEST_TMP/prometheus.yml"
	timeout -s TERM "${UNCORED_TEST_PROM_LIMIT:-240}" prometheus \
		--config.file="$TEST_TMP/prometheus.yml" \
		--storage.tsdb.path="$TEST_TMP/tsdb" \
		--web.listen-address="127.0.0.1:0" ${PROM_FLAGS:-} \
		>"$TEST_TMP/prometheus.log" 2>&1 &
	PROM_PID=$!
	PIDS="$PIDS $PROM_PID"
	# The port the kernel chose, from its "Listening on" line.
	prom_port=""
	prom_end=$(($(date +%s) + 30))
	while [ -z "$prom_port" ]; do
		prom_port=$(sed -n 's/.*msg="Listening on" address=127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' \
			"$TEST_TMP/prometheus.log" | head -n 1)
		[ -n "$prom_port" ] && break
		kill -0 "$PROM_PID" 2>/dev/null || { cat "$TEST_TMP/prometheus.log" >&2; fail "prometheus exited"; }
		[ "$(date +%s)" -lt "$prom_end" ] || { cat "$TEST_TMP/prometheus.log" >&2; fail "prometheus names no port"; }
		sleep 0.05
	done
	PROM_URL="http://127.0.0.1:$prom_port"
	prom_ready() { curl -fsS -o /dev/null --max-time 1 "$PROM_URL/-/ready" 2>/dev/null; }
	wait_until 30 prom_ready || { cat "$TEST_TMP/prometheus.log" >&2; fail "prometheus not ready after 30 s"; }
}

# Run an instant PromQL query; prints the JSON result array.
prom_query() {
	curl -fsS --max-time 5 "$PROM_URL/api/v1/query" --data-urlencode "query=$1" | jq -c '.data.result'
}

# The value of an instant PromQL query that has one result, "" when it has
# none.  Usage: v=$(prom_value QUERY)
prom_value() {
	prom_query "$1" | jq -r '.[0].value[1] // ""'
}

# The directory of playwright-core (npm), installed into ~/.cache/uncored-npm
# on first use; prints it, or fails (status 1) when it cannot be installed.
playwright_core() {
	npm_dir="$HOME/.cache/uncored-npm"
	pw="$npm_dir/node_modules/playwright-core"
	if [ ! -f "$pw/package.json" ]; then
		command -v npm >/dev/null || return 1
		mkdir -p "$npm_dir"
		timeout 180 npm install --prefix "$npm_dir" --no-audit --no-fund --loglevel=error \
			playwright-core@1 >"$TEST_TMP/npm.log" 2>&1 || { cat "$TEST_TMP/npm.log" >&2; return 1; }
	fi
	echo "$pw"
}
