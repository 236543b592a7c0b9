#!/bin/sh
# Every test owns its paths: no test touches a machine-wide default (the
# configuration /etc/uncored/uncored.conf, the state file and instance lock
# under /run/uncored, port 9796), so the suite runs beside another uncored,
# another test or the daemon the README's first command leaves running.
#
# 1. The guard every test's uncored runs through (tests/e2e/own_paths_guard,
#    set up by lib.sh) refuses each way of reaching a default, and lets a
#    private run through: checked here with a stand-in binary, so nothing runs.
# 2. No test goes around the guard, and no test script names a default path,
#    except those that check the installed package in a throwaway root or
#    the unit files' text, and lines marked "own-paths:" with the reason.
. "$(dirname "$0")/lib.sh"

tree=$TEST_TMP/tree
mkdir -p "$tree"
write_conf "$TEST_TMP/u.conf" 0
printf '[daemon]\nlisten = 127.0.0.1:9796\n' >"$TEST_TMP/default-port.conf"
printf '[daemon]\nroot = %s\n' "$tree" >"$TEST_TMP/no-state.conf"
printf '[daemon]\nroot = %s\nstate_file = /run/uncored/ledger\n' "$tree" >"$TEST_TMP/host-state.conf"

# guard_says ok|refused ARGS...: what the guard does with a run of uncored ARGS.
n=0
guard_says() {
	want=$1
	shift
	n=$((n + 1))
	rc=0
	UNCORED_GUARD_LOG=$TEST_TMP/probe.log UNCORED_REAL_BIN=true "$UNCORED_BIN" "$@" \
		>/dev/null 2>"$TEST_TMP/probe.err" || rc=$?
	case $want in
	ok) [ "$rc" = 0 ] || fail "refused: uncored $*: $(cat "$TEST_TMP/probe.err")" ;;
	refused)
		[ "$rc" = 125 ] || fail "let through (exit $rc): uncored $*"
		grep -q "^own_paths_guard: " "$TEST_TMP/probe.err" || fail "refused without a reason: uncored $*"
		[ "$(wc -l <"$TEST_TMP/probe.log")" = 1 ] || fail "refusal not recorded: uncored $*"
		;;
	esac
	rm -f "$TEST_TMP/probe.log"
}
sim=westmere-ep-2s
guard_says ok --version
guard_says ok --help
guard_says ok --check-config "$TEST_TMP/u.conf"
guard_says ok --config "$DEFAULTS_CONF" --once --simulate "$sim"
guard_says ok --config "$DEFAULTS_CONF" --list-events --model westmere-ep
guard_says ok --config "$DEFAULTS_CONF" --list-events
guard_says ok --config "$DEFAULTS_CONF" --simulate "$sim" --listen 127.0.0.1:0
guard_says ok --config "$TEST_TMP/u.conf" --simulate "$sim"
guard_says ok --config "$TEST_TMP/u.conf" --once --root "$tree"
guard_says ok --config "$TEST_TMP/u.conf" --root "$tree" --listen 127.0.0.1:0
guard_says refused --once --simulate "$sim"
guard_says refused --list-events --model westmere-ep
guard_says refused --simulate "$sim" --listen 127.0.0.1:0
guard_says refused --config "$DEFAULTS_CONF" --once
guard_says refused --config "$TEST_TMP/u.conf" --once --root /
guard_says refused --config "$TEST_TMP/no-state.conf" --once
guard_says refused --config "$TEST_TMP/host-state.conf" --once
guard_says refused --config "$DEFAULTS_CONF" --simulate "$sim"
guard_says refused --config "$TEST_TMP/default-port.conf" --simulate "$sim"
guard_says refused --config "$DEFAULTS_CONF" --simulate "$sim" --listen 127.0.0.1:9796
guard_says refused --config "$DEFAULTS_CONF" --simulate "$sim" --listen 0.0.0.0:0
guard_says refused --config "$DEFAULTS_CONF" --simulate "$sim" --listen "[::]:9000"

# The guard's refusal fails the test that made it, whatever the test did with it.
cat >"$TEST_TMP/careless.sh" <<'EOF'
. "$UNCORED_SOURCE_ROOT/tests/e2e/lib.sh"
"$UNCORED_BIN" --once --simulate westmere-ep-2s >/dev/null 2>&1 || true
exit 0
EOF
rc=0
UNCORED_BIN=$UNCORED_REAL_BIN sh "$TEST_TMP/careless.sh" 2>"$TEST_TMP/careless.err" || rc=$?
[ "$rc" = 1 ] && grep -q "run on the machine's own paths" "$TEST_TMP/careless.err" ||
	fail "a test that ran uncored without --config passed (exit $rc): $(cat "$TEST_TMP/careless.err")"

# --- No test goes around the guard.
tests=$UNCORED_SOURCE_ROOT/tests
cd "$tests"
# The real binary is run only by the guard (lib.sh sets it up; the
# benchmarks measure the binary itself).
around=$(grep -rlE '\$\{?UNCORED_REAL_BIN' --include='*.sh' --include='*.py' --include='*.js' . |
	grep -vx './e2e/lib.sh\|./e2e/own_paths.sh\|./bench/run.sh\|./bench/idle.sh' || true)
[ -z "$around" ] || fail "these name the real binary, around the guard: $around"
# A script that runs uncored (it names UNCORED_BIN) sources lib.sh, or is a
# package test, which runs the package's own binary in a throwaway root.
for f in e2e/*.sh; do
	grep -q '\$UNCORED_BIN' "$f" || continue
	grep -q 'lib\.sh"' "$f" && continue
	case $f in e2e/lib.sh | e2e/package*.sh) continue ;; esac
	fail "$f runs uncored without lib.sh, so without the guard"
done

# --- No test names a default path.  Comments name them freely; a line that
# must (to compare a message, say) has "own-paths: WHY" on it or in the five
# lines above.  The package tests work in throwaway roots and the unit test
# on the unit files' text; the C unit tests compare the defaults' values and
# open nothing there (their machines live under temporary roots), and the
# fuzzers' corpus is input, never a daemon's configuration; the flake hunt
# (tests/flake-hunt) runs an uncored on the defaults on purpose, beside the
# suite.  A path under a test's own root ($tree/run/uncored) is the test's.
found=$(find . \( -path ./golden -o -path ./fuzz/corpus \) -prune -o -type f \( -name '*.sh' -o -name '*.py' -o -name '*.js' -o \
	-name run-all -o -name qualify -o -name '*.ini' -o -name '*.conf' \) -print |
	grep -v '^\./e2e/package[^/]*\.sh$\|^\./e2e/systemd_units\.sh$\|^\./e2e/own_paths\.sh$\|^\./e2e/own_paths_guard$\|^\./flake-hunt/' |
	sort | while read -r f; do
		awk -v f="$f" '
			{ marked[NR % 6] = ($0 ~ /own-paths:/) }
			/^[ \t]*(#|\/\/|\/?\*|;)/ { next }
			/(^|[^A-Za-z0-9_}])\/(run|etc|var\/lib)\/uncored|:9796([^0-9]|$)/ {
				ok = 0
				for (i = 0; i < 6; i++) ok = ok || marked[i]
				if (!ok) print f ":" NR ": " $0
			}' "$f"
	done)
[ -z "$found" ] || fail "default paths named by tests (give the test its own, or mark the line own-paths: WHY):
$found"
echo "own_paths: the guard decides its $n cases as it should; no test goes around it or names a default path: ok"
