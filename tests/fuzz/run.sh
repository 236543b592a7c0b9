#!/bin/sh
# Build the libFuzzer targets in their own clang build directory
# (build-fuzz, or $UNCORED_FUZZ_BUILD) and run each one for a bounded
# time from the seed corpus in tests/fuzz/corpus/.  New inputs go to a
# scratch directory, never into the tree.  Fails when any target finds a
# crash, leak, undefined behaviour or timeout; the offending input is left
# in tests/artifacts/fuzz/ (add it to the corpus once fixed).
#
# Environment: UNCORED_FUZZ_SECONDS (per target, default 30),
# UNCORED_FUZZ_TARGETS (default "conf scenario http").
set -eu
cd "$(dirname "$0")/../.."
root=$(pwd)
build=${UNCORED_FUZZ_BUILD:-build-fuzz}
seconds=${UNCORED_FUZZ_SECONDS:-30}
targets=${UNCORED_FUZZ_TARGETS:-conf scenario http}
artifacts=$root/tests/artifacts/fuzz

if [ -d "$build/meson-private" ]; then
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
failed=""
for t in $targets; do
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
		failed="$failed $t"
	fi
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1)
	echo "fuzz_$t: $status, ${runs:-?} runs in $(($(date +%s) - start)) s, ${cov:-cov: ?}" \
		"(log: $log)"
	if [ "$status" = FAILED ]; then
		grep -E 'ERROR:|runtime error:|SUMMARY:|Test unit written' "$log" | head -n 20 || true
	fi
done
if [ -n "$failed" ]; then
	echo "fuzzing found problems in:$failed" >&2
	exit 1
fi
