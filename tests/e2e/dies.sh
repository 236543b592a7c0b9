#!/bin/sh
# Package-scope registers read once per die, through the device-file
# backend: a tree of two sockets whose cores 0-2 are on die 0 and 8-10 on
# die 1, each die with its own TjMax (95 and 100 C) and kernel package
# throttle count (3 and 4).  Each core's temperature comes from its own
# die's TjMax, the socket's TjMax is the lowest, and the package count is
# both dies' together.
. "$(dirname "$0")/lib.sh"

tree="$TEST_TMP/tree"
python3 "$(dirname "$0")/make_tree.py" --dies 2 "$tree"
UNCORED_TEST_INTERVAL=0.2 write_conf "$TEST_TMP/u.conf" 9
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --json --root "$tree" >"$TEST_TMP/once.json" 2>"$TEST_TMP/log" ||
	{ cat "$TEST_TMP/log"; fail "--once on a tree of two dies per socket failed"; }
got=$(jq -c '[.sockets[] | {socket, tjmax_celsius, kernel_package_throttles,
	temperatures: [.cores[] | [.core, .temperature_celsius]]}]' "$TEST_TMP/once.json")
want='[{"socket":0,"tjmax_celsius":95,"kernel_package_throttles":7,"temperatures":[[0,55],[1,55],[2,55],[8,60],[9,60],[10,60]]},{"socket":1,"tjmax_celsius":95,"kernel_package_throttles":7,"temperatures":[[0,55],[1,55],[2,55],[8,60],[9,60],[10,60]]}]'
[ "$got" = "$want" ] || fail "per-die readings: got $got, expected $want"
grep -q "die" "$TEST_TMP/log" && fail "a die was not read: $(cat "$TEST_TMP/log")"
echo "dies: ok"
