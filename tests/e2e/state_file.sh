#!/bin/sh
# The state file under a hostile or unlucky environment, on the device-file
# tree: a full disk (a file size limit), a corrupt header, a garbled record,
# forged files (mode, owner, directory, registers uncored never programs).
# Each case checks the registers byte for byte, what was logged and the
# exit code.
. "$(dirname "$0")/lib.sh"

tree="$TEST_TMP/tree"
ledger="$TEST_TMP/state/ledger"
mkdir -m 0755 "$TEST_TMP/state"
chmod 0755 "$TEST_TMP"
UNCORED_TEST_STATE_FILE=$ledger write_conf "$TEST_TMP/u.conf" 0

new_tree() { # new_tree [make_tree options]: a fresh tree, its dump in $TEST_TMP/before
	rm -rf "$tree" "$TEST_TMP/state"/*
	python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" "$@"
	python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" "$@" --dump >"$TEST_TMP/before"
}

dump() { # dump FILE [make_tree options]
	out=$1
	shift
	python3 "$(dirname "$0")/make_tree.py" --boot linux "$tree" "$@" --dump >"$out"
}

killed() { # start, then SIGKILL: leaves programming and records behind
	start_daemon 0 "$TEST_TMP/log.killed" --config "$TEST_TMP/u.conf" --root "$tree"
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null || true
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$DAEMON_PID" | tr '\n' ' ')
	[ -s "$ledger" ] || fail "no state file after SIGKILL"
}

restart_and_stop() { # restart_and_stop NAME: start, stop with SIGTERM, expect exit 0
	start_daemon 0 "$TEST_TMP/log.$1" --config "$TEST_TMP/u.conf" --root "$tree"
	stop_daemon "$DAEMON_PID" || fail "$1: exit status $? after SIGTERM: $(cat "$TEST_TMP/log.$1")"
	grep -q 'stopped, every register restored' "$TEST_TMP/log.$1" || fail "$1: no stop message"
}

same_tree() { # same_tree NAME [make_tree options]
	name=$1
	shift
	dump "$TEST_TMP/after" "$@"
	diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "$name: registers differ from the tree before start"
}

refused_start() { # refused_start NAME TEXT: the daemon exits 1 at once, logging TEXT, touching nothing
	dump "$TEST_TMP/left"
	cp "$ledger" "$TEST_TMP/ledger.copy" 2>/dev/null || true
	rc=0
	timeout 60 "$UNCORED_BIN" --config "$TEST_TMP/u.conf" --root "$tree" --listen 127.0.0.1:0 >"$TEST_TMP/log.$1" 2>&1 || rc=$?
	[ "$rc" = 1 ] || fail "$1: exit status $rc, expected 1: $(cat "$TEST_TMP/log.$1")"
	grep -qF "$2" "$TEST_TMP/log.$1" || fail "$1: expected '$2' in: $(cat "$TEST_TMP/log.$1")"
	dump "$TEST_TMP/after"
	diff "$TEST_TMP/left" "$TEST_TMP/after" >&2 || fail "$1: a refused start changed registers"
	if [ -e "$TEST_TMP/ledger.copy" ]; then
		cmp -s "$ledger" "$TEST_TMP/ledger.copy" || fail "$1: a refused start changed the state file"
	fi
}

seal() { # seal LINE...: print each line with its CRC-32
	python3 -c 'import sys, zlib
for l in sys.argv[1:]: print("%s *%08x" % (l, zlib.crc32(l.encode())))' "$@"
}

# --- A full disk: here a file size limit of 8 KiB (16 blocks), above every
# register's offset in the tree but below what the journal of 48 CPUs
# needs.  Records that cannot be written stop their register writes; the
# counters are reported off with the reason; after SIGKILL the restart
# finds every changed register journaled.
new_tree --cores 12
cat >"$TEST_TMP/limited" <<EOS
#!/bin/sh
ulimit -f 16
exec "$UNCORED_BIN" "\$@"
EOS
chmod +x "$TEST_TMP/limited"
UNCORED_BIN="$TEST_TMP/limited" start_daemon 0 "$TEST_TMP/log.full" --config "$TEST_TMP/u.conf" --root "$tree"
grep -q 'the state file cannot record the change (File too large), so it was not made' "$TEST_TMP/log.full" ||
	fail "full disk: no reason logged: $(cat "$TEST_TMP/log.full")"
curl -fsS "$DAEMON_URL/api/v1/snapshot" | grep -q "the state file cannot record the change" ||
	fail "full disk: /api/v1/snapshot does not give the reason"
[ "$(tail -c 1 "$ledger" | od -An -c | tr -d ' ')" = '\n' ] || fail "full disk: a half record was left"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null || true
PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$DAEMON_PID" | tr '\n' ' ')
restart_and_stop full
grep -q 'did not stop cleanly; cleaned up [1-9][0-9]* registers it left programmed, left 0 ' "$TEST_TMP/log.full" ||
	fail "full disk: no clean-up notice: $(cat "$TEST_TMP/log.full")"
if grep -qi 'busy\|in use\|damaged' "$TEST_TMP/log.full"; then
	fail "full disk: the restart found leftovers it could not account for: $(cat "$TEST_TMP/log.full")"
fi
same_tree "full disk" --cores 12

# --- No journal at start: a state file over the 16 MiB a state file may
# hold, and a file size limit under which not even its header can be
# written (EFBIG, as a full disk's ENOSPC).  Without a journal the msr
# engine programs nothing: the reason is logged, /metrics says
# uncored_journal_up 0, and after SIGKILL and a restart with a usable file
# every register is as it was.
unjournaled() { # unjournaled NAME TEXT LAUNCHER: started by LAUNCHER, checked, killed, restarted
	UNCORED_BIN="$3" start_daemon 0 "$TEST_TMP/log.$1" --config "$TEST_TMP/u.conf" --root "$tree"
	grep -F "$2" "$TEST_TMP/log.$1" | grep -q 'so the msr engine programs nothing' ||
		fail "$1: no reason logged: $(cat "$TEST_TMP/log.$1")"
	m=$(curl -fsS "$DAEMON_URL/metrics")
	[ "$(metric_value "$m" uncored_journal_up)" = 0 ] ||
		fail "$1: uncored_journal_up is not 0: $(printf '%s\n' "$m" | grep journal)"
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null || true
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$DAEMON_PID" | tr '\n' ' ')
	same_tree "$1: after SIGKILL"
	rm -f "$ledger"
	restart_and_stop "$1.after"
	same_tree "$1: after the restart"
}
new_tree
head -c $((17 << 20)) /dev/zero >"$ledger"
chmod 0600 "$ledger"
unjournaled oversized "$ledger: File too large" "$UNCORED_BIN"
new_tree
mkfifo "$TEST_TMP/log.pipe"
cat >"$TEST_TMP/nothing" <<EOS
#!/bin/sh
cat "$TEST_TMP/log.pipe" &
ulimit -f 0
exec "$UNCORED_BIN" "\$@" >"$TEST_TMP/log.pipe" 2>&1
EOS
chmod +x "$TEST_TMP/nothing"
unjournaled no_room "$ledger: File too large" "$TEST_TMP/nothing"

# --- A corrupt header: the records are still replayed, the damage reported.
new_tree
killed
python3 -c 'import sys; p=sys.argv[1]; b=bytearray(open(p,"rb").read()); b[3]^=0x20; open(p,"wb").write(b)' "$ledger"
cp "$ledger" "$TEST_TMP/damaged.expected"
restart_and_stop header
grep -qF "state file $ledger: its header is damaged; replayed the records whose checksums hold, as this machine's" "$TEST_TMP/log.header" ||
	fail "corrupt header: not reported: $(cat "$TEST_TMP/log.header")"
grep -qF "state file $ledger: the damaged file is kept as $ledger.damaged" "$TEST_TMP/log.header" ||
	fail "corrupt header: copy not reported"
cmp -s "$ledger.damaged" "$TEST_TMP/damaged.expected" || fail "corrupt header: the kept copy differs"
grep -q 'did not stop cleanly; cleaned up [1-9][0-9]* registers it left programmed, left 0 ' "$TEST_TMP/log.header" ||
	fail "corrupt header: recovery did not run: $(cat "$TEST_TMP/log.header")"
same_tree "corrupt header"

# --- A garbled record (cpu 0's event select 0): reported with its line;
# only that register stays as the dead daemon left it.
new_tree
killed
line=$(grep -n '^own 0 0x3c0 0x0 0x400167 ' "$ledger" | cut -d: -f1)
[ -n "$line" ] || fail "garbled: no record of cpu 0 0x3c0: $(head "$ledger")"
sed -i "${line}s/0x400167/0x400168/" "$ledger"
restart_and_stop garbled
grep -qF "state file $ledger: 1 damaged records (the first on line $line) could not be read; the registers they describe may still hold what the previous uncored wrote" "$TEST_TMP/log.garbled" ||
	fail "garbled: not reported: $(cat "$TEST_TMP/log.garbled")"
dump "$TEST_TMP/after"
diff "$TEST_TMP/before" "$TEST_TMP/after" | grep '^[<>]' >"$TEST_TMP/diff" || true
printf '< cpu0 0x3c0 0x0\n> cpu0 0x3c0 0x400167\n' | cmp -s - "$TEST_TMP/diff" ||
	fail "garbled: expected only cpu 0's 0x3c0 left programmed, got: $(cat "$TEST_TMP/diff")"

# --- Forged files: refused before any register is touched.
new_tree
killed
at="$TEST_TMP/u.conf:$(grep -n '^state_file' "$TEST_TMP/u.conf" | cut -d: -f1)"
chmod 0666 "$ledger"
refused_start mode "$at: state_file: $ledger: writable by group or others, so it is not trusted and not replayed; refusing to start"
chmod 0600 "$ledger"
chown 65534 "$ledger"
refused_start owner "$at: state_file: $ledger: not owned by root, so it is not trusted and not replayed; refusing to start"
chown 0 "$ledger"
chmod 0777 "$TEST_TMP/state"
refused_start directory "$at: state_file: directory $TEST_TMP/state: writable by group or others, so the state file in it is not trusted; refusing to start"
chmod 0755 "$TEST_TMP/state"
restart_and_stop after_forged
same_tree "after the forged files were put right"

# --- A state-file directory reached through a symbolic link is refused,
# at start and by --check-config, wherever the link is on the path.
new_tree
killed
ln -s "$TEST_TMP/state" "$TEST_TMP/state-link"
sed "s|^state_file = .*|state_file = $TEST_TMP/state-link/ledger|" "$TEST_TMP/u.conf" >"$TEST_TMP/link.conf"
at="$TEST_TMP/link.conf:$(grep -n '^state_file' "$TEST_TMP/link.conf" | cut -d: -f1)"
rc=0
timeout 20 "$UNCORED_BIN" --config "$TEST_TMP/link.conf" --root "$tree" >"$TEST_TMP/log.link" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "symlinked directory: exit status $rc, expected 1: $(cat "$TEST_TMP/log.link")"
grep -qF "$at: state_file: directory $TEST_TMP/state-link: a symbolic link, so the state file in it is not trusted; refusing to start" \
	"$TEST_TMP/log.link" || fail "symlinked directory: not refused as such: $(cat "$TEST_TMP/log.link")"
"$UNCORED_BIN" --check-config "$TEST_TMP/link.conf" >"$TEST_TMP/check.link" 2>&1 &&
	fail "symlinked directory: --check-config passed it"
grep -qF "directory $TEST_TMP/state-link: a symbolic link" "$TEST_TMP/check.link" ||
	fail "symlinked directory: --check-config said: $(cat "$TEST_TMP/check.link")"
restart_and_stop after_link
same_tree "after the symlinked directory"

# --- No other user can take the state file's lock: the file is root's
# and 0600, and an flock on its directory (the lock of earlier versions,
# which any user could take) is nothing to uncored.
if command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	new_tree
	killed
	if setpriv --reuid=nobody --regid=nogroup --clear-groups flock -n "$ledger" true 2>/dev/null; then
		fail "user nobody could take the state file's lock"
	fi
	setpriv --reuid=nobody --regid=nogroup --clear-groups flock "$TEST_TMP/state" sleep 60 >/dev/null 2>&1 &
	squatter=$!
	PIDS="$PIDS $squatter"
	squatted() { ! flock -n "$TEST_TMP/state" true; }
	wait_until 30 squatted || fail "squat: nobody did not take the directory's lock in 30 s"
	restart_and_stop squat
	grep -q 'did not stop cleanly; cleaned up [1-9]' "$TEST_TMP/log.squat" ||
		fail "squat: no recovery: $(cat "$TEST_TMP/log.squat")"
	same_tree "squatted directory"
	kill "$squatter"
fi

# --- Records for registers uncored never changes: IA32_MISC_ENABLE and
# TEMPERATURE_TARGET.  Not replayed; every register as before.
new_tree
{
	seal "uncored-ledger 2 $tree"
	seal "own 0 0x1a0 0x4141414141 -" "own 0 0x1a2 0x0 0x5f0000"
} >"$ledger"
chmod 0600 "$ledger"
restart_and_stop forged
grep -qF "state file $ledger: 2 records name registers uncored never changes (the first: cpu 0 MSR 0x1a0); not replayed" "$TEST_TMP/log.forged" ||
	fail "forged registers: not reported: $(cat "$TEST_TMP/log.forged")"
same_tree "forged registers"
# --- state_file = none: no journal on purpose, so registers are programmed
# unjournaled (uncored_journal_up 0), and a stop restores them.
new_tree
sed 's|^state_file = .*|state_file = none|' "$TEST_TMP/u.conf" >"$TEST_TMP/none.conf"
"$UNCORED_BIN" --check-config "$TEST_TMP/none.conf" >"$TEST_TMP/check.none" 2>&1 ||
	fail "state_file = none: refused by --check-config: $(cat "$TEST_TMP/check.none")"
start_daemon 0 "$TEST_TMP/log.none" --config "$TEST_TMP/none.conf" --root "$tree"
grep -q 'state_file = none: registers are programmed without a journal' "$TEST_TMP/log.none" ||
	fail "state_file = none: not logged: $(cat "$TEST_TMP/log.none")"
[ "$(metric_value "$(curl -fsS "$DAEMON_URL/metrics")" uncored_journal_up)" = 0 ] ||
	fail "state_file = none: uncored_journal_up is not 0"
dump "$TEST_TMP/programmed"
cmp -s "$TEST_TMP/before" "$TEST_TMP/programmed" && fail "state_file = none: nothing programmed"
stop_daemon "$DAEMON_PID" || fail "state_file = none: exit status $? after SIGTERM"
same_tree "state_file = none"
[ ! -e "$ledger" ] || fail "state_file = none: a state file was written"

echo "state_file: full disk, no journal at start, state_file = none, a symlinked directory, a squatted lock, corrupt header, garbled record, forged files: ok"
