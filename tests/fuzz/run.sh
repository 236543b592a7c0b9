#!/bin/sh
# Build the libFuzzer targets in the clang sanitizer build directory
# (build-sanitize, as tests/run-all sets it up, or $UNCORED_FUZZ_BUILD) and
# run each one for a bounded time from the seed corpus in tests/fuzz/corpus/,
# as many at once as there are CPUs.  New inputs go to a
# scratch directory, never into the tree.  Fails when any target finds a
# crash, leak, undefined behaviour or timeout; the offending input is left
# in tests/artifacts/fuzz/ (add it to the corpus once fixed).
#
# Environment: UNCORED_FUZZ_SECONDS (per target, default 30),
# UNCORED_FUZZ_TARGETS (default "conf scenario http").
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)
build=${UNCORED_FUZZ_BUILD:-build-sanitize}
seconds=${UNCORED_FUZZ_SECONDS:-30}
targets=${UNCORED_FUZZ_TARGETS:-conf scenario http}
artifacts=$root/tests/artifacts/fuzz

if [ -d "$build/meson-private" ]; then
	meson introspect "$build" --buildoptions | grep -q '"name": "fuzz", "value": true' || {
		echo "$build was set up without -Dfuzz=true (and clang): remove it, or name another" \
			"in UNCORED_FUZZ_BUILD" >&2
		exit 1
	}
	meson setup --reconfigure "$build" >/dev/null
else
	CC=clang meson setup "$build" -Dfuzz=true -Dtests=true \
		-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
fi
meson compile -C "$build" tests/fuzz/fuzz_conf tests/fuzz/fuzz_scenario tests/fuzz/fuzz_http

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$artifacts"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
# One target: its run, then one line on it (and the findings when it failed).
fuzz_one() {
	t=$1
	mkdir -p "$scratch/$t"
	log=$artifacts/fuzz_$t.log
	start=$(date +%s)
	if "$build/tests/fuzz/fuzz_$t" -seed=1 -max_total_time="$seconds" -timeout=5 \
		-rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
		-artifact_prefix="$artifacts/$t-" \
		"$scratch/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
		status=ok
	else
		status=FAILED
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	echo "fuzz_$t: $status, ${runs:-?} runs in $(($(date +%s) - start)) s, ${cov:-cov: ?}" \
		"(log: $log)"
	if [ "$status" = FAILED ]; then
		grep -E 'ERROR:|runtime error:|SUMMARY:|Test unit written' "$log" | head -n 20 || true
		return 1
	fi
}

# At most $(nproc) at a time; each writes its own log and its result to $scratch/T.rc.
slots=$(nproc)
pids=""
for t in $targets; do
	(rc=0; fuzz_one "$t" || rc=$?; echo "$rc" >"$scratch/$t.rc") &
	pids="$pids $!"
	set -- $pids
	if [ $# -ge "$slots" ]; then
		wait "$1"
		shift
		pids="$*"
	fi
done
for pid in $pids; do
	wait "$pid"
done
failed=""
for t in $targets; do
	[ "$(cat "$scratch/$t.rc")" = 0 ] || failed="$failed $t"
done
if [ -n "$failed" ]; then
	echo "fuzzing found problems in:$failed" >&2
	exit 1
fi
