#!/bin/sh
# Check the manual pages as installed: the version is filled in, groff
# formats them with every warning enabled, and man(1) --warnings and
# mandoc -Tlint (each where installed) find nothing to say.  Any complaint
# fails the test.  Exit 77 (skipped) when groff is not installed.
#
# usage: man_pages.sh PAGE...
set -eu
command -v groff >/dev/null 2>&1 || { echo "groff not found, skipping"; exit 77; }
status=0
complain() {
	echo "$1: $2:" >&2
	echo "$3" >&2
	status=1
}
for page in "$@"; do
	grep -q '@[A-Z_]*@' "$page" && complain "$page" "placeholder left" "$(grep -n '@[A-Z_]*@' "$page")"
	warnings=$(groff -man -ww -z "$page" 2>&1)
	[ -z "$warnings" ] || complain "$page" groff "$warnings"
	if command -v man >/dev/null 2>&1; then
		warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
		[ -z "$warnings" ] || complain "$page" "man --warnings" "$warnings"
	fi
	if command -v mandoc >/dev/null 2>&1; then
		# STYLE-level notes (e.g. a missing SEE ALSO cross-check) are not errors.
		warnings=$(mandoc -Tlint -W warning "$page" 2>&1 || true)
		[ -z "$warnings" ] || complain "$page" "mandoc -Tlint" "$warnings"
	fi
	[ "$status" -ne 0 ] || echo "$page: ok"
done
exit $status
