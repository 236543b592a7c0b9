#!/bin/sh
# A device-file tree with the kernel's PMU tree in it (make_tree.py --pmus:
# the Westmere-EP's "cpu" and "uncore", as the simulator writes them), and
# the real binary's --once --json on it.  The PMUs are discovered from the
# tree, but events open on this machine's own kernel, as on a real host
# whose sysfs and kernel agree only when they are the same machine:
#   - uncore: the msr engine under engine = auto (the Westmere uncore's
#     default, the tree's "uncore" PMU not used), up, with the reason;
#   - core: the perf engine (the tree has a core PMU); up where this kernel
#     has a core PMU, else down with the kernel's reason, never a crash;
#   - pcu, imc: not applicable, with the reason (no server uncore);
# and every register in the tree holds its original value afterwards.
# Then the same on a Skylake-SP tree written wholly by the simulator
# (make_tree.py --model skylake-sp-2s: uncore_pcu, uncore_imc_0..5):
#   - pcu: perf under engine = auto (the tree lists uncore_pcu); where this
#     kernel refuses every uncore_pcu event it falls back to the PCU box's
#     MSRs (0x710...) and says why, else it counts through perf;
#   - imc: up through perf where this kernel accepts the events, else down
#     with "the kernel refused every uncore_imc event (...)", never up with
#     nothing counting (there is no msr path for the iMC).
. "$(dirname "$0")/lib.sh"

: "${UNCORED_SIM_TREE_BIN:?UNCORED_SIM_TREE_BIN must point at the sim-tree program}"
tree="$TEST_TMP/tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux --pmus "$tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/before"

# The tree is the simulator's own, byte for byte.
"$UNCORED_SIM_TREE_BIN" --pmus westmere-ep-2s "$TEST_TMP/sim"
diff -r "$TEST_TMP/sim/sys/bus/event_source/devices" "$tree/sys/bus/event_source/devices" >&2 ||
	fail "the tree's PMUs differ from the simulator's"
[ "$(cat "$tree/sys/bus/event_source/devices/uncore/cpumask")" = 0,6 ] ||
	fail "uncore cpumask: $(cat "$tree/sys/bus/event_source/devices/uncore/cpumask")"
[ ! -e "$tree/sys/bus/event_source/devices/uncore_pcu" ] || fail "a Westmere-EP tree with uncore_pcu"

printf '[daemon]\nuser =\nlog_level = info\nstate_file = %s/ledger\n' "$TEST_TMP" >"$TEST_TMP/u.conf"
rc=0
timeout 120 "$UNCORED_BIN" --config "$TEST_TMP/u.conf" --root "$tree" --once --json \
	>"$TEST_TMP/out.json" 2>"$TEST_TMP/log" || rc=$?
[ "$rc" = 0 ] || fail "exit status $rc: $(cat "$TEST_TMP/log")"

python3 - "$TEST_TMP/out.json" "$TEST_TMP/log" <<'PY' || fail "$(cat "$TEST_TMP/log")"
import json, sys
doc = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
cols = {c["name"]: c for c in doc["collectors"]}
def check(cond, what):
    if not cond:
        sys.exit("devtree_pmu: %s: %s" % (what, json.dumps(doc["collectors"])))

u = cols["uncore"]
check(u["state"] == "up" and u["engine"]["name"] == "msr", "uncore not up on msr")
check(u["engine"]["reason"] == "the default for the Nehalem/Westmere uncore "
      "(engine = perf counts through the kernel's uncore PMU)", "uncore engine reason")
check("collector uncore: msr engine: the default for the Nehalem/Westmere uncore" in log,
      "uncore engine not logged")

c = cols["core"]
check(c["engine"]["name"] == "perf" and
      c["engine"]["reason"] == "the kernel has a core PMU (engine = auto)", "core engine")
# Up where this machine's kernel has a core PMU; else down, saying why.
check(c["state"] == "up" or (c["state"] == "down" and c["reason"].startswith("cpu 0: open ")),
      "core neither up nor down with the open's reason")
if c["state"] == "down":
    check("collector core: off: " + c["reason"] in log, "core's reason not logged")

for name, what in (("pcu", "PCU"), ("imc", "memory controller")):
    p = cols[name]
    reason = "westmere-ep has no server uncore " + what
    check(p["state"] == "not_applicable" and p["reason"] == reason, name + " state")
    check("collector %s: not applicable: %s" % (name, reason) in log, name + " not logged")
PY

python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/after"
diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "registers differ after exit"

skx="$TEST_TMP/skx"
python3 "$(dirname "$0")/make_tree.py" "$skx" --model skylake-sp-2s
python3 "$(dirname "$0")/make_tree.py" "$skx" --model skylake-sp-2s --dump >"$TEST_TMP/skx-before"
grep -q '^cpu28 0x710 ' "$TEST_TMP/skx-before" || fail "no PCU box registers in the Skylake-SP tree"
for pmu in uncore_pcu uncore_imc_0 uncore_imc_5; do
	[ "$(cat "$skx/sys/bus/event_source/devices/$pmu/cpumask")" = 0,28 ] || fail "$pmu cpumask"
done
rc=0
timeout 120 "$UNCORED_BIN" --config "$TEST_TMP/u.conf" --root "$skx" --once --json \
	>"$TEST_TMP/skx.json" 2>"$TEST_TMP/skx.log" || rc=$?
[ "$rc" = 0 ] || fail "skylake-sp: exit status $rc: $(cat "$TEST_TMP/skx.log")"

python3 - "$TEST_TMP/skx.json" "$TEST_TMP/skx.log" <<'PY' || fail "$(cat "$TEST_TMP/skx.log")"
import glob, json, sys
doc = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
cols = {c["name"]: c for c in doc["collectors"]}
# The PMU types this machine's kernel has: the tree's uncore_pcu is type 11,
# uncore_imc_N 12 + N (the simulator's choices); a kernel without them must
# refuse every event.
real = set()
for path in glob.glob("/sys/bus/event_source/devices/*/type"):
    try:
        real.add(int(open(path).read()))
    except (OSError, ValueError):
        pass
def check(cond, what):
    if not cond:
        sys.exit("devtree_pmu skylake-sp: %s: %s" % (what, json.dumps(doc["collectors"])))

p = cols["pcu"]
check(p["state"] == "up", "pcu not up")
check(p["engine"]["name"] == "msr" or 11 in real, "pcu stayed on perf though the kernel has no type 11")
if p["engine"]["name"] == "msr":
    why = p["engine"]["reason"]
    check(why.startswith("engine = auto falls back to msr: the kernel refused every "
                         "uncore_pcu event (socket 0 die 0: cpu 0: open 'clockticks'"), "pcu reason")
    check("collector pcu: msr engine: " + why in log, "pcu fallback not logged")
else:
    # This kernel accepted type 11 (some PMU of its own): perf, as chosen.
    check(p["engine"]["reason"] == "the kernel has the uncore_pcu PMU (engine = auto)", "pcu perf")

m = cols["imc"]
check(m["engine"]["name"] == "perf", "imc engine")
check(m["state"] == "down" or real & set(range(12, 18)), "imc up though the kernel has no type 12..17")
if m["state"] == "down":
    check(m["reason"].startswith("the kernel refused every uncore_imc event (socket 0 die 0 "
                                 "channel 0: cpu 0: open 'clockticks'"), "imc reason")
    check("collector imc: off: " + m["reason"] in log, "imc reason not logged")
else:
    check(m["state"] == "up", "imc neither down nor up")
check(cols["uncore"]["state"] == "not_applicable", "uncore on skylake-sp")
PY

python3 "$(dirname "$0")/make_tree.py" "$skx" --model skylake-sp-2s --dump >"$TEST_TMP/skx-after"
diff "$TEST_TMP/skx-before" "$TEST_TMP/skx-after" >&2 || fail "skylake-sp: registers differ after exit"
echo "devtree_pmu: ok"
