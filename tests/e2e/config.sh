#!/bin/sh
# A configuration that means what it says.  --check-config refuses bytes
# that are not a text file (NUL, lone CR), files that are not regular
# (/dev/zero, a FIFO, a directory) and oversized ones, each at once with
# FILE:LINE or FILE:, and runs start-up's checks (user, listen address,
# root, state file, a busy port, max_connections over the fd limit);
# start-up and a reload refuse the same with the same location, start-up
# before it touches a register.  A reload logs "KEY changed: takes effect
# at restart" for each key it cannot apply and keeps the running value,
# and a config path that became a FIFO neither blocks the reload nor
# SIGTERM.  Device-file tree: checked byte for byte after each case.
. "$(dirname "$0")/lib.sh"

tree="$TEST_TMP/tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree"
python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/before"
mkdir -m 0755 "$TEST_TMP/state"
chmod 0755 "$TEST_TMP"
UNCORED_TEST_STATE_FILE="$TEST_TMP/state/ledger" write_conf "$TEST_TMP/u.conf" 0

same_tree() {
	python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" --dump >"$TEST_TMP/after"
	diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "$1: registers differ from before"
}

check_refused() { # check_refused NAME FILE EXPECTED-STDERR: exit 1 at once, exactly that
	rc=0
	timeout 20 "$UNCORED_BIN" --check-config "$2" >"$TEST_TMP/out" 2>"$TEST_TMP/err" || rc=$?
	[ "$rc" = 1 ] || fail "$1: exit status $rc, expected 1: $(cat "$TEST_TMP/err")"
	[ "$(cat "$TEST_TMP/err")" = "$3" ] || fail "$1: got '$(cat "$TEST_TMP/err")', expected '$3'"
	[ ! -s "$TEST_TMP/out" ] || fail "$1: printed '$(cat "$TEST_TMP/out")'"
}

start_refused() { # start_refused NAME CONF EXPECTED-LOG-LINE: exit 1, tree unchanged
	rc=0
	timeout 20 "$UNCORED_BIN" --config "$2" >"$TEST_TMP/log.$1" 2>&1 || rc=$?
	[ "$rc" = 1 ] || fail "$1: exit status $rc, expected 1: $(cat "$TEST_TMP/log.$1")"
	grep -qxF "uncored: $3" "$TEST_TMP/log.$1" || fail "$1: expected 'uncored: $3' in: $(cat "$TEST_TMP/log.$1")"
	same_tree "$1"
}

# --- Bytes and file types.
printf '[daemon]\ninterval = 1\nuser = root\0nobody\nlog_level = info\n' >"$TEST_TMP/nul.conf"
check_refused nul "$TEST_TMP/nul.conf" "$TEST_TMP/nul.conf:3: NUL byte (a configuration file is text)"
head -c 1000 /dev/zero >"$TEST_TMP/zeros.conf"
check_refused zeros "$TEST_TMP/zeros.conf" "$TEST_TMP/zeros.conf:1: NUL byte (a configuration file is text)"
printf '[daemon]\rinterval = 1\rmax_episodes = 3\r' >"$TEST_TMP/cr.conf"
check_refused cr "$TEST_TMP/cr.conf" "$TEST_TMP/cr.conf:1: carriage return without a line feed (lines end in LF or CR LF)"
check_refused dev-zero /dev/zero "/dev/zero: a character device, not a regular file"
mkfifo "$TEST_TMP/fifo.conf"
check_refused fifo "$TEST_TMP/fifo.conf" "$TEST_TMP/fifo.conf: a FIFO, not a regular file"
check_refused directory "$TEST_TMP/state" "$TEST_TMP/state: a directory, not a regular file"
head -c 1048577 /dev/zero | tr '\0' '\n' >"$TEST_TMP/big.conf"
check_refused big "$TEST_TMP/big.conf" "$TEST_TMP/big.conf: too large (1048577 bytes, at most 1048576)"

wait_for() { # wait_for LOG TEXT: until the log has the line TEXT, at most 20 s
	wait_until 30 grep -qxF "$2" "$1" || fail "no '$2' in: $(cat "$1")"
}

# --- Start-up's checks, in --check-config, at start and at a reload: one
# rule.  A daemon runs with c.conf (on a port of its own, from the file,
# and a tree of its own); each hostile file written there is refused by
# all three with the same message, and the reload keeps the running
# configuration.
c="$TEST_TMP/c.conf"
ulimit -n 1000   # for the fd limit case, below; every daemon from here on inherits it
python3 "$(dirname "$0")/make_tree.py" --boot linux "$TEST_TMP/tree2"   # its own registers
# Its listen address is the file's (--listen would set it for start and
# reload alike): a port the kernel picks now, free until the daemon binds it.
# Another test may take that port first: then the start is refused ("is in
# use"), and another port is tried.
for try in 1 2 3 4 5; do
	reload_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	UNCORED_TEST_STATE_FILE="$TEST_TMP/state/ledger" write_conf "$c" "$reload_port" "root = $TEST_TMP/tree2"
	"$UNCORED_BIN" --config "$c" >"$TEST_TMP/log.hostile" 2>&1 &
	reloader=$!
	PIDS="$PIDS $reloader"
	started() { log_has "$TEST_TMP/log.hostile" 'serving on' || ! kill -0 "$reloader" 2>/dev/null; }
	wait_until 30 started || fail "the daemon did not start in 30 s: $(cat "$TEST_TMP/log.hostile")"
	log_has "$TEST_TMP/log.hostile" 'serving on' && break
	wait "$reloader" 2>/dev/null || true
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$reloader" | tr '\n' ' ')
	log_has "$TEST_TMP/log.hostile" "$reload_port is in use" && [ "$try" -lt 5 ] ||
		fail "the daemon did not start: $(cat "$TEST_TMP/log.hostile")"
done
wait_healthy "http://127.0.0.1:$reload_port" "$reloader" "$TEST_TMP/log.hostile"
refusals=0
bad() { # bad NAME 'key = value' EXPECTED-MESSAGE: that line last; the message after "c.conf:LINE: "
	UNCORED_TEST_STATE_FILE="$TEST_TMP/state/ledger" write_conf "$c.in" 0 "root = $tree"
	{ grep -v "^${2%% *} *=" "$c.in"; echo "$2"; } >"$c"
	line=$(wc -l <"$c")
	check_refused "$1" "$c" "$c:$line: $3"
	# Start-up drops to the users (and so checks them) only when run as root.
	if { [ "$1" != user ] && [ "$1" != server_user ]; } || [ "$(id -u)" = 0 ]; then
		start_refused "$1" "$c" "$c:$line: $3; refusing to start"
	fi
	kill -HUP "$reloader"
	wait_for "$TEST_TMP/log.hostile" "uncored: $c:$line: $3; the reload is refused"
	n=$(grep -c 'configuration refused, the running one stays in force' "$TEST_TMP/log.hostile" || true)
	[ "$n" = "$((refusals + 1))" ] || fail "$1: the reload was not refused as a whole: $(cat "$TEST_TMP/log.hostile")"
	refusals=$n
}
bad user 'user = no-such-user-here' "user: no user 'no-such-user-here' on this machine (create it, for example with systemd-sysusers)"
bad server_user 'server_user = no-such-user-here' "server_user: no user 'no-such-user-here' on this machine (create it, for example with systemd-sysusers)"
# own-paths: an address no machine here has, refused before any bind.
bad listen 'listen = 192.0.2.1:9796' "listen: 192.0.2.1 is not an address of this machine"
bad root "root = $TEST_TMP/missing" "root: $TEST_TMP/missing: No such file or directory"
bad state_file "state_file = $TEST_TMP/state" "state_file: $TEST_TMP/state: not a regular file, so it is not trusted and not replayed"
chmod 0777 "$TEST_TMP/state"
bad state_dir "state_file = $TEST_TMP/state/ledger" "state_file: directory $TEST_TMP/state: writable by group or others, so the state file in it is not trusted"
chmod 0755 "$TEST_TMP/state"
# A listen port another socket holds: the holder takes a port the kernel
# chooses and names it once it listens.
python3 -c 'import os, socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
open(sys.argv[1] + ".tmp", "w").write("%d\n" % s.getsockname()[1]); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(30)' "$TEST_TMP/busy.port" &
holder=$!
PIDS="$PIDS $holder"
wait_until 30 test -s "$TEST_TMP/busy.port" || fail "busy port: the holder did not listen in 30 s"
busy=$(cat "$TEST_TMP/busy.port")
bad busy_port "listen = 127.0.0.1:$busy" "listen: 127.0.0.1:$busy is in use: a socket listens on port $busy there already (/proc/net/tcp)"
kill "$holder"
wait "$holder" 2>/dev/null || true
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$holder" | tr '\n' ' ')
# More connections than the fd limit allows.  The fd count in the message
# differs between the three: matched up to it.
UNCORED_TEST_STATE_FILE="$TEST_TMP/state/ledger" write_conf "$c.in" 0 "root = $tree"
{ grep -v '^max_connections *=' "$c.in"; echo 'max_connections = 5000'; } >"$c"
want="$c:$(wc -l <"$c"): max_connections: max_connections = 5000 needs "
rc=0
timeout 20 "$UNCORED_BIN" --check-config "$c" >/dev/null 2>"$TEST_TMP/err" || rc=$?
[ "$rc" = 1 ] && grep -qF "$want" "$TEST_TMP/err" || fail "fds: --check-config exit $rc: $(cat "$TEST_TMP/err")"
rc=0
timeout 20 "$UNCORED_BIN" --config "$c" >"$TEST_TMP/log.fds" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -F "uncored: $want" "$TEST_TMP/log.fds" | grep -q '; refusing to start$' ||
	fail "fds: start exit $rc: $(cat "$TEST_TMP/log.fds")"
same_tree fds
kill -HUP "$reloader"
reload_refused() { grep -F "uncored: $want" "$TEST_TMP/log.hostile" | grep -q '; the reload is refused$'; }
wait_until 30 reload_refused || fail "fds: the reload was not refused: $(cat "$TEST_TMP/log.hostile")"
stop_daemon "$reloader" || fail "hostile reloads: exit status $? after SIGTERM"
[ ! -e "$TEST_TMP/state/ledger" ] || fail "a refused start created the state file"

# A root with no CPUs under it: found by opening the hardware, still located.
mkdir "$TEST_TMP/empty"
UNCORED_TEST_STATE_FILE="$TEST_TMP/state/ledger" write_conf "$c" 0 "root = $TEST_TMP/empty"
rc=0
timeout 20 "$UNCORED_BIN" --config "$c" >"$TEST_TMP/log.empty" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "^uncored: $c:7: root: $TEST_TMP/empty/" "$TEST_TMP/log.empty" ||
	fail "empty root: exit $rc: $(cat "$TEST_TMP/log.empty")"

# What --check-config could not check, for a good file.
rc=0
"$UNCORED_BIN" --check-config "$TEST_TMP/u.conf" --root "$tree" >"$TEST_TMP/out" 2>&1 || rc=$?
cat >"$TEST_TMP/want" <<EOF
$TEST_TMP/u.conf: configuration ok
$TEST_TMP/u.conf: not checked: the CPU and its msr and cpuid devices under $tree (start-up opens them)
$TEST_TMP/u.conf: not checked: whether another uncored holds the machine or $TEST_TMP/state/ledger (start-up takes their locks)
EOF
[ "$rc" = 0 ] && diff "$TEST_TMP/want" "$TEST_TMP/out" >&2 || fail "good file: exit $rc: $(cat "$TEST_TMP/out")"

# --- Reload: what cannot be applied live is said and kept.
mkdir -m 0755 "$TEST_TMP/elsewhere"
start_daemon 0 "$TEST_TMP/log.reload" --config "$TEST_TMP/u.conf" --root "$tree"
{
	sed -e "s|^state_file = .*|state_file = $TEST_TMP/state/other|" -e 's/^interval = .*/interval = 0.5/' \
		-e 's/^user =.*/user = nobody/' "$TEST_TMP/u.conf"
	printf 'max_connections = 5\nmax_connections_per_ip = 2\nrequest_timeout = 3\n'
	printf 'max_header_size = 2048\nmax_episodes = 9\nroot = %s/elsewhere\n' "$TEST_TMP"
	printf '[uncore]\nengine = perf\n[core]\nengine = msr\n'
} >"$TEST_TMP/new.conf"
cp "$TEST_TMP/u.conf" "$TEST_TMP/u.conf.orig"
cp "$TEST_TMP/new.conf" "$TEST_TMP/u.conf"
kill -HUP "$DAEMON_PID"
wait_for "$TEST_TMP/log.reload" "uncored: configuration applied"
grep 'takes effect at restart' "$TEST_TMP/log.reload" >"$TEST_TMP/got"
cat >"$TEST_TMP/want" <<'EOF'
uncored: root changed: takes effect at restart
uncored: user changed: takes effect at restart
uncored: state_file changed: takes effect at restart
uncored: max_connections changed: takes effect at restart
uncored: max_connections_per_ip changed: takes effect at restart
uncored: request_timeout changed: takes effect at restart
uncored: max_header_size changed: takes effect at restart
uncored: max_episodes changed: takes effect at restart
uncored: [uncore] engine changed: takes effect at restart
uncored: [core] engine changed: takes effect at restart
EOF
diff "$TEST_TMP/want" "$TEST_TMP/got" >&2 || fail "reload: restart keys"
# The running state file stays the journal: nothing at the new path.
[ -s "$TEST_TMP/state/ledger" ] && [ ! -e "$TEST_TMP/state/other" ] || fail "reload: state file changed"

# A FIFO in the config's place: refused at once; SIGTERM still works.
rm "$TEST_TMP/u.conf"
mkfifo "$TEST_TMP/u.conf"
kill -HUP "$DAEMON_PID"
wait_for "$TEST_TMP/log.reload" "$TEST_TMP/u.conf: a FIFO, not a regular file"
wait_for "$TEST_TMP/log.reload" "uncored: reload: configuration refused, the running one stays in force"
stop_daemon "$DAEMON_PID" || fail "FIFO reload: exit status $? after SIGTERM: $(cat "$TEST_TMP/log.reload")"
tail -n 1 "$TEST_TMP/log.reload" | grep -qxF 'uncored: stopped, every register restored' ||
	fail "FIFO reload: no stop message: $(cat "$TEST_TMP/log.reload")"
same_tree "reload"
[ ! -s "$TEST_TMP/state/ledger" ] || fail "reload: state file not emptied"
echo "config: bytes, file types, start-up checks, reload: ok"
