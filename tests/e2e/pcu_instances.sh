#!/bin/sh
# Granite Rapids' PCU instances stand alone under perf: with uncore_pcu_0 of
# each die counting nothing, its clock included (tests/data/scenarios/
# pcu-clock-stopped.ini), uncored --once says that instance is waiting and
# what was seen, its clock, not a BOX_CTL.FRZ that perf cannot show, and
# exports the package's PROCHOT and frequency-limit series from uncore_pcu_1;
# the throttling signals it provides say the collector is partial, not down.
. "$(dirname "$0")/lib.sh"

SCENARIO="$UNCORED_SOURCE_ROOT/tests/data/scenarios/pcu-clock-stopped.ini"
UNCORED_TEST_INTERVAL=1 write_conf "$TEST_TMP/u.conf" 9
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --json --simulate "granite-rapids-2s:$SCENARIO" \
	>"$TEST_TMP/once.json" 2>"$TEST_TMP/log" || { cat "$TEST_TMP/log"; fail "--once failed"; }
pcu='.collectors[] | select(.name == "pcu")'
jq -e "$pcu | .engine.name == \"perf\" and .state == \"partial\" and
	(.reason | test(\"die 0 PCU 0: waiting: its clock did not advance\")) and
	(.reason | test(\"FRZ|PCU 1\") | not)" "$TEST_TMP/once.json" >/dev/null ||
	fail "pcu: $(jq -c "$pcu" "$TEST_TMP/once.json")"
# The signals it provides say it is partial, not down.
jq -e '[.throttling_signals[] | select(.collector == "pcu")] | length > 0 and
	all(.why_not | startswith("the pcu collector is partial: "))' "$TEST_TMP/once.json" >/dev/null ||
	fail "signals: $(jq -c '[.throttling_signals[] | select(.collector == "pcu")]' "$TEST_TMP/once.json")"
"$UNCORED_BIN" --config "$TEST_TMP/u.conf" --once --format prometheus \
	--simulate "granite-rapids-2s:$SCENARIO" \
	>"$TEST_TMP/once.prom" 2>"$TEST_TMP/log" || { cat "$TEST_TMP/log"; fail "--once failed"; }
grep -q '^uncored_prochot_seconds_total{socket="0",source="external"}' "$TEST_TMP/once.prom" ||
	fail "no PROCHOT series: $(grep prochot "$TEST_TMP/once.prom")"
echo "pcu_instances: ok"
