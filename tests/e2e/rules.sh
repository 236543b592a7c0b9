#!/bin/sh
# Prometheus rules and the Grafana dashboard: `promtool check rules`, the
# promtool unit tests of every alert and recording rule, the dashboard is
# valid JSON, and every PromQL expression of the dashboard parses.
# Skips (77) when promtool is not installed.
set -eu

: "${UNCORED_SOURCE_ROOT:?UNCORED_SOURCE_ROOT must point at the source tree}"
command -v promtool >/dev/null || { echo "SKIP: promtool is not installed" >&2; exit 77; }

prom="$UNCORED_SOURCE_ROOT/conf/prometheus"
dash="$UNCORED_SOURCE_ROOT/conf/grafana/uncored-fleet.json"
tmp=$(mktemp -d /tmp/uncored-rules.XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM

timeout 60 promtool check rules "$prom/uncored.rules.yml"
(cd "$prom" && timeout 120 promtool test rules uncored.rules.test.yml)

python3 -m json.tool "$dash" >/dev/null || { echo "FAIL: $dash is not valid JSON" >&2; exit 1; }

# Each dashboard query becomes a recording rule (Grafana variables replaced
# by plain values) so promtool's parser checks it.
python3 - "$dash" "$tmp/dashboard.rules.yml" <<'PY'
import json, sys
dash = json.load(open(sys.argv[1]))
assert dash.get("schemaVersion", 0) >= 36, "schemaVersion too old"
names = [v["name"] for v in dash["templating"]["list"]]
assert "datasource" in names and "instance" in names, names
out = ["groups:", "  - name: dashboard", "    rules:"]
n = 0
for panel in dash["panels"]:
    for target in panel.get("targets", []):
        expr = target["expr"].replace("$__rate_interval", "1m").replace("$instance", ".*")
        n += 1
        out.append(f"      - record: dashboard:query{n}")
        out.append("        expr: " + json.dumps(expr))
assert n > 0, "no queries in the dashboard"
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
timeout 60 promtool check rules "$tmp/dashboard.rules.yml" >/dev/null
echo "rules and dashboard: ok"
