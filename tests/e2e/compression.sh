#!/bin/sh
# gzip on the dynamic routes: a client that accepts gzip gets a gzip body
# with Content-Encoding and Vary; one that does not, or refuses it with
# q=0, gets identity (with Vary, so caches keep the two apart).  The
# gzip body is valid: promtool and jq read what gunzip gives.
. "$(dirname "$0")/lib.sh"

write_conf "$TEST_TMP/u.conf" 0
start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --simulate westmere-ep-2s:dram-heatwave
url=$DAEMON_URL

for path in /metrics /api/v1/snapshot /api/v1/episodes /api/v1/history; do
	curl -fsS --max-time 5 -H 'Accept-Encoding: gzip' -D "$TEST_TMP/h" -o "$TEST_TMP/body.gz" "$url$path" ||
		fail "GET $path with gzip"
	grep -qi '^content-encoding: gzip' "$TEST_TMP/h" || fail "$path: no Content-Encoding: gzip: $(cat "$TEST_TMP/h")"
	grep -qi '^vary: accept-encoding' "$TEST_TMP/h" || fail "$path: no Vary: $(cat "$TEST_TMP/h")"
	gunzip -c "$TEST_TMP/body.gz" >"$TEST_TMP/body" || fail "$path: the gzip body does not inflate"
	case $path in
	/metrics)
		if command -v promtool >/dev/null; then
			promtool check metrics <"$TEST_TMP/body" >"$TEST_TMP/promtool.out" 2>&1 ||
				fail "promtool: $(cat "$TEST_TMP/promtool.out")"
		fi
		grep -q '^uncored_samples_total ' "$TEST_TMP/body" || fail "inflated /metrics lacks samples_total"
		;;
	*) jq -e 'type == "object"' "$TEST_TMP/body" >/dev/null || fail "$path: inflated body is not JSON" ;;
	esac

	for ae in '' 'identity' 'gzip;q=0' 'br'; do
		if [ -n "$ae" ]; then
			curl -fsS --max-time 5 -H "Accept-Encoding: $ae" -D "$TEST_TMP/h" -o "$TEST_TMP/plain" "$url$path"
		else
			curl -fsS --max-time 5 -D "$TEST_TMP/h" -o "$TEST_TMP/plain" "$url$path"
		fi
		grep -qi '^content-encoding:' "$TEST_TMP/h" && fail "$path with '$ae': encoded: $(cat "$TEST_TMP/h")"
		grep -qi '^vary: accept-encoding' "$TEST_TMP/h" || fail "$path with '$ae': no Vary"
		[ "$(head -c 2 "$TEST_TMP/plain" | od -An -tx1 | tr -d ' ')" != 1f8b ] || fail "$path with '$ae': gzip body"
	done
done

# A gzip body is much smaller than the identity body.
curl -fsS -o "$TEST_TMP/plain" "$url/metrics"
curl -fsS -H 'Accept-Encoding: gzip' -o "$TEST_TMP/gz" "$url/metrics"
plain=$(wc -c <"$TEST_TMP/plain")
gz=$(wc -c <"$TEST_TMP/gz")
[ $((gz * 4)) -lt "$plain" ] || fail "gzip body $gz bytes, identity $plain bytes"
stop_daemon "$DAEMON_PID" || fail "exit status after SIGTERM"
echo "compression: ok (/metrics $plain bytes, gzip $gz bytes)"
