#!/bin/sh
# A real Prometheus with exemplar storage scrapes the daemon (it asks for
# OpenMetrics) on a simulated Sapphire Rapids whose socket 1 channel 2
# DIMMs are hot: the DRAM throttled series of socket 1 carry an exemplar
# whose episode_id resolves through /api/v1/episodes?id= to an episode of
# socket 1, channel 2; socket 0 has no exemplar and no episode.
. "$(dirname "$0")/lib.sh"

write_conf "$TEST_TMP/u.conf" 0
start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" \
	--simulate sapphire-rapids-2s:dimm-hot-channel
PROM_FLAGS=--enable-feature=exemplar-storage
start_prometheus "" "127.0.0.1:$DAEMON_PORT"

exemplars() {
	now=$(date +%s)
	curl -fsS --max-time 5 "$PROM_URL/api/v1/query_exemplars" \
		--data-urlencode "query=uncored_dram_throttled_seconds_total{socket=\"$1\"}" \
		--data-urlencode "start=$((now - 600))" --data-urlencode "end=$((now + 60))" |
		jq -r '[.data[].exemplars[].labels.episode_id] | unique | .[]'
}
id=""
have_exemplar() { id=$(exemplars 1 | head -n 1); [ -n "$id" ]; }
wait_until 60 have_exemplar ||
	fail "no exemplar for socket 1 after 60 s; targets: $(curl -s "$PROM_URL/api/v1/targets" | jq -c '.data.activeTargets[] | {health, lastError}')"
[ -z "$(exemplars 0)" ] || fail "socket 0 has exemplars: $(exemplars 0)"

ep=$(curl -fsS --max-time 5 "$DAEMON_URL/api/v1/episodes?id=$id")
echo "$ep" | jq -e --argjson id "$id" '.episodes | length == 1 and .[0].id == $id and
	.[0].socket == 1 and .[0].labels.channel == "2" and
	.[0].family == "uncored_dram_throttled_seconds_total"' >/dev/null ||
	fail "episode $id: $ep"
# An id no episode has is a 404, one that is no number a 400.
code=$(curl -s -o /dev/null -w '%{http_code}' "$DAEMON_URL/api/v1/episodes?id=999999")
[ "$code" = 404 ] || fail "unknown id: HTTP $code, expected 404"
code=$(curl -s -o /dev/null -w '%{http_code}' "$DAEMON_URL/api/v1/episodes?id=1x")
[ "$code" = 400 ] || fail "bad id: HTTP $code, expected 400"
all=$(curl -fsS --max-time 5 "$DAEMON_URL/api/v1/episodes")
echo "$all" | jq -e '[.episodes[] | select(.socket == 0)] | length == 0' >/dev/null ||
	fail "socket 0 has episodes: $all"
echo "prometheus_exemplars: episode $id of socket 1 channel 2 through its exemplar: ok"
