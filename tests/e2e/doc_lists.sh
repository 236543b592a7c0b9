#!/bin/sh
# The simulated models and the shipped scenarios are listed alike everywhere a
# user reads them: --help (the simulator's model table, and the scenario files
# of the directory it looks in) is the truth, and the README's tables,
# uncored(8) (SIMULATED MACHINES) and uncored-scenario(5) (MODELS, FILES)
# must name exactly the same, each once.  The README cannot be generated at
# build time, so every list is held to --help here instead.
#
# Each list is extracted as one name a line, sorted; any difference fails
# with the names missing (<) or extra (>) in that document.
. "$(dirname "$0")/lib.sh"

root=$UNCORED_SOURCE_ROOT
status=0

# --help: the names after "models:" and after "scenarios in DIR:".
"$UNCORED_BIN" --help --scenario-dir "$SCENARIOS" >"$TEST_TMP/help" || fail "--help"
sed -n 's/^.*--simulate SPEC .*models: //p' "$TEST_TMP/help" | tr ' ' '\n' | sed '/^$/d' |
	sort >"$TEST_TMP/models.help"
sed -n "s|^ *scenarios in $SCENARIOS: ||p" "$TEST_TMP/help" | tr ' ' '\n' | sed '/^$/d' |
	sort >"$TEST_TMP/scenarios.help"
[ "$(wc -l <"$TEST_TMP/models.help")" -ge 13 ] || fail "--help lists no models: $(cat "$TEST_TMP/help")"
# The scenario list is the directory's files.
for f in "$SCENARIOS"/*.ini; do basename "$f" .ini; done | sort >"$TEST_TMP/scenarios.files"
diff "$TEST_TMP/scenarios.files" "$TEST_TMP/scenarios.help" >&2 ||
	fail "--help does not list the files of $SCENARIOS"

# The first column of the README table whose header row starts with "| HEADER |".
readme_table() {
	awk -v header="| $1 |" '
		index($0, header) == 1 { on = 1; next }
		on && !/^\|/ { on = 0 }
		on && /^\| `/ { name = $0; sub(/^\| `/, "", name); sub(/`.*/, "", name); print name }
	' "$root/README.md" | sort
}

# The names of a man page's section (the line that starts it given whole): each .TP's
# tag line, ".B NAME", up to the next .SH or .SS.
man_section() {
	awk -v start="$2" '
		$0 == start { on = 1; next }
		on && /^\.S[HS]( |$)/ { on = 0 }
		on && tag && /^\.B / { name = $2; gsub(/\\-/, "-", name); print name }
		{ tag = on && $0 == ".TP" }
	' "$root/$1" | sort
}

compare() {
	what=$1 where=$2 got=$3
	if ! diff "$TEST_TMP/$what.help" "$got" >"$TEST_TMP/diff"; then
		echo "FAIL: $where does not list the $what of --help (<: missing, >: not in --help):" >&2
		grep '^[<>]' "$TEST_TMP/diff" >&2
		status=1
	fi
}

readme_table 'simulated model' >"$TEST_TMP/got"
compare models "README.md (table 'simulated model')" "$TEST_TMP/got"
readme_table scenario >"$TEST_TMP/got"
compare scenarios "README.md (table 'scenario')" "$TEST_TMP/got"
man_section man/uncored.8 '.SS Models' >"$TEST_TMP/got"
compare models "uncored(8) SIMULATED MACHINES, Models" "$TEST_TMP/got"
man_section man/uncored.8 '.SS Scenarios' >"$TEST_TMP/got"
compare scenarios "uncored(8) SIMULATED MACHINES, Scenarios" "$TEST_TMP/got"
man_section man/uncored-scenario.5 '.SH MODELS' >"$TEST_TMP/got"
compare models "uncored-scenario(5) MODELS" "$TEST_TMP/got"
man_section man/uncored-scenario.5 '.SH FILES' >"$TEST_TMP/got"
compare scenarios "uncored-scenario(5) FILES" "$TEST_TMP/got"

[ "$status" = 0 ] || exit 1
echo "doc_lists: $(wc -l <"$TEST_TMP/models.help") models and $(wc -l <"$TEST_TMP/scenarios.help") scenarios, the same in --help, README.md, uncored(8) and uncored-scenario(5)"
