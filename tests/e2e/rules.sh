#!/bin/sh
# Prometheus rules and the Grafana dashboard: `promtool check rules`, the
# promtool unit tests of every alert and recording rule, the dashboard is
# valid JSON, every PromQL expression of the dashboard parses, and the
# dashboard shows the generation-independent throttling families.
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
# The generation-independent families each have a panel that says when no
# selected host measures them; the fleet DRAM panel reads the record every
# generation has; the collector panel shows not applicable apart from down.
exprs = {p["title"]: [t["expr"] for t in p.get("targets", [])] for p in dash["panels"]}
novalue = {p["title"]: p.get("fieldConfig", {}).get("defaults", {}).get("noValue") for p in dash["panels"]}
for family in ("uncored_dram_throttled_seconds_total", "uncored_prochot_seconds_total",
               "uncored_frequency_limited_seconds_total"):
    panels = [t for t, es in exprs.items() if any(family in e for e in es)]
    assert panels, f"no panel shows {family}"
    assert all(novalue[t] for t in panels), f"a panel of {family} has no noValue text"
assert any("uncored:dram_throttled_fraction:rate1m" in e for es in exprs.values() for e in es), \
    "no panel reads uncored:dram_throttled_fraction:rate1m"
assert not any("uncored:dram_thermal_throttled_fraction" in e for es in exprs.values() for e in es), \
    "a panel still reads the deprecated Westmere-only record"
assert any("uncored_collector_applicable" in e for es in exprs.values() for e in es), \
    "no panel shows collector applicability"
assert any("uncored_dram_throttled_seconds_total" in e and "slot" in e and "channel" in e
           for es in exprs.values() for e in es), "no per-DIMM panel (by channel and slot)"
# AMD EPYC is judged like Intel: Tctl, Tccd, DIMM temperature and refresh, each saying when no host has it.
for what, needle in (("Tctl", 'sensor="Tctl"'), ("Tccd", 'sensor=~"Tccd'),
                     ("DIMM temperature", "uncored_dimm_temperature_celsius"),
                     ("DIMM refresh", "uncored_dimm_extended_refresh_seconds_total")):
    panels = [t for t, es in exprs.items() if any(needle in e for e in es)]
    assert panels and all(novalue[t] for t in panels), f"no AMD {what} panel with a noValue text"
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
timeout 60 promtool check rules "$tmp/dashboard.rules.yml" >/dev/null
echo "rules and dashboard: ok"
