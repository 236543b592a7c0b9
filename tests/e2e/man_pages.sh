#!/bin/sh
# Format the manual pages with every groff warning enabled; any output on
# stderr fails the test.  Exit 77 (skipped) when groff is not installed.
#
# usage: man_pages.sh PAGE...
set -eu
command -v groff >/dev/null 2>&1 || { echo "groff not found, skipping"; exit 77; }
status=0
for page in "$@"; do
	warnings=$(groff -man -ww -z "$page" 2>&1)
	if [ -n "$warnings" ]; then
		echo "$page:" >&2
		echo "$warnings" >&2
		status=1
	else
		echo "$page: ok"
	fi
done
exit $status
