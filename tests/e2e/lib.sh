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

cleanup() {
	for pid in $PIDS; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in $PIDS; do
		wait "$pid" 2>/dev/null || true
	done
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

# A free TCP port on 127.0.0.1.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# A configuration for tests: loopback listener, no privilege drop, fast sampling,
# the state file in the test's directory (never the host's /run/uncored):
# $UNCORED_TEST_STATE_FILE, default $TEST_TMP/ledger (one per concurrent daemon
# that should journal; a second daemon on a locked file journals nothing).
# Usage: write_conf FILE PORT [extra ini lines...]
write_conf() {
	file=$1
	port=$2
	shift 2
	{
		echo "[daemon]"
		echo "listen = 127.0.0.1:$port"
		echo "interval = ${UNCORED_TEST_INTERVAL:-0.25}"
		echo "user ="
		echo "log_level = info"
		echo "state_file = ${UNCORED_TEST_STATE_FILE:-$TEST_TMP/ledger}"
		for line in "$@"; do
			echo "$line"
		done
	} >"$file"
}

# Start the daemon in the background with a time limit; sets DAEMON_PID and
# DAEMON_URL, waits until /healthz answers 200.
# Usage: start_daemon PORT LOGFILE uncored-args...
start_daemon() {
	port=$1
	log=$2
	shift 2
	"$UNCORED_BIN" "$@" >"$log" 2>&1 &
	DAEMON_PID=$!
	# A guard stops the daemon after its time limit even if this script dies.
	# (Not timeout(1): it forwards SIGHUP to its whole process group, so the
	# daemon would see every reload signal twice.)
	# Its output goes to /dev/null so it holds no pipe of the test runner
	# open, and on SIGTERM (cleanup) it takes its sleep down with it.
	(
		exec >/dev/null 2>&1
		sleep "${UNCORED_TEST_DAEMON_LIMIT:-120}" &
		sleeper=$!
		trap 'kill "$sleeper"; exit 0' TERM
		wait "$sleeper"
		kill -TERM "$DAEMON_PID"
	) &
	PIDS="$PIDS $DAEMON_PID $!"
	DAEMON_URL="http://127.0.0.1:$port"
	wait_healthy "$DAEMON_URL" "$DAEMON_PID" "$log"
}

wait_healthy() {
	url=$1
	pid=$2
	log=$3
	for _ in $(seq 1 100); do
		if curl -fsS -o /dev/null --max-time 1 "$url/healthz" 2>/dev/null; then
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			cat "$log" >&2
			fail "daemon exited before it was healthy"
		fi
		sleep 0.1
	done
	cat "$log" >&2
	fail "daemon not healthy at $url after 10 s"
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

# Start a real Prometheus server on loopback scraping the given targets
# every second; sets PROM_URL.  Usage: start_prometheus RULES_FILE_OR_EMPTY TARGET...
start_prometheus() {
	command -v prometheus >/dev/null || skip "prometheus is not installed"
	rules=$1
	shift
	prom_port=$(free_port)
	{
		echo "global:"
		echo "  scrape_interval: 1s"
		echo "  evaluation_interval: 1s"
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
		--web.listen-address="127.0.0.1:$prom_port" \
		>"$TEST_TMP/prometheus.log" 2>&1 &
	PROM_PID=$!
	PIDS="$PIDS $PROM_PID"
	PROM_URL="http://127.0.0.1:$prom_port"
	for _ in $(seq 1 200); do
		if curl -fsS -o /dev/null --max-time 1 "$PROM_URL/-/ready" 2>/dev/null; then
			return 0
		fi
		kill -0 "$PROM_PID" 2>/dev/null || { cat "$TEST_TMP/prometheus.log" >&2; fail "prometheus exited"; }
		sleep 0.1
	done
	fail "prometheus not ready after 20 s"
}

# Run an instant PromQL query; prints the JSON result array.
prom_query() {
	curl -fsS --max-time 5 "$PROM_URL/api/v1/query" --data-urlencode "query=$1" | jq -c '.data.result'
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
