#!/bin/sh
# Privilege separation (uncored(8), PROCESS MODEL), as root on the
# device-file tree: the HTTP server is a child process with no capability
# (CapBnd empty too: it drops its bounding set as root does it), no-new-
# privileges, a seccomp filter, a uid other than root, and no descriptor
# but its sockets (no msr or cpuid file, no perf fd, no state file, no
# lock), while the hardware side holds the msr files.  Killing the server
# ends the daemon with a non-zero status and every register restored;
# killing the hardware side ends the server; SIGTERM to both (as systemd
# sends it) ends them with status 0 and every register restored.  A
# stopped server (SIGSTOP, never continued) is found by the liveness check,
# ended through its keeper, and the daemon exits 3 with every register
# restored; a SIGTERM while the server is stopped ends the daemon with
# status 0, the server ended too.  The server's parent is its keeper, a
# process of the hardware side's user with no fd but its standard ones.  The
# server runs as another user than the hardware side (/proc/PID/status)
# and in a session of its own, without a controlling terminal
# (/proc/PID/stat), its standard input /dev/null and its output a pipe.
# Run as root once without a configured user (the server becomes
# server_user's default "uncored-http" where that user exists, as after
# the README's first command or the package, else "nobody"; the hardware
# side stays root), once with "user = nobody" and "server_user =
# daemon", and once with both "nobody" (refused: the same uid).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root"
id nobody >/dev/null 2>&1 || skip "no 'nobody' user"
id daemon >/dev/null 2>&1 || skip "no 'daemon' user"

tree="$TEST_TMP/tree"
python3 "$(dirname "$0")/make_tree.py" "$tree"
python3 "$(dirname "$0")/make_tree.py" "$tree" --dump >"$TEST_TMP/before"
chmod 755 "$TEST_TMP"
nobody=$(id -u nobody)
default_server_uid=$(id -u uncored-http 2>/dev/null || echo "$nobody")

# The server: the child of the daemon's child (its keeper) running as uid
# $2 (with a configured user the daemon's other child is the msr opener,
# which stays root).  Waits up to 10 s.
server_of() {
	for _ in $(seq 1 100); do
		for k in $(pgrep -P "$1" || true); do
			for s in $(pgrep -P "$k" || true); do
				if grep -q "^Uid:[[:space:]]*$2[[:space:]]" "/proc/$s/status" 2>/dev/null; then
					echo "$s"
					return 0
				fi
			done
		done
		sleep 0.1
	done
	fail "no server process under $1"
}

# The server's keeper: its parent, the daemon's child, with the real and
# saved uid the hardware side drops to ($3) and the server's effective uid
# ($4), no capability, no-new-privs, and no fd but 0, 1 and 2.
check_keeper() { # check_keeper SERVER LABEL HW_UID SERVER_UID
	keeper=$(awk '/^PPid:/ { print $2 }' "/proc/$1/status")
	st=/proc/$keeper/status
	[ "$(awk '/^PPid:/ { print $2 }' "$st")" = "$DAEMON_PID" ] ||
		fail "$2: the server's parent $keeper is not the daemon's child"
	grep -q "^Uid:[[:space:]]*$3[[:space:]]*$4[[:space:]]*$3[[:space:]]*$4$" "$st" ||
		fail "$2: keeper uid: $(grep ^Uid "$st"), expected $3 $4 $3 $4"
	for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
		grep -q "^$cap:[[:space:]]*0000000000000000$" "$st" || fail "$2: keeper $(grep "^$cap" "$st")"
	done
	grep -q '^NoNewPrivs:[[:space:]]*1$' "$st" || fail "$2: keeper without no-new-privileges"
	for fd in /proc/$keeper/fd/*; do
		case "${fd##*/}" in
		0 | 1 | 2) ;;
		*) fail "$2: keeper holds fd ${fd##*/} -> $(readlink "$fd")" ;;
		esac
	done
}

# Seconds since the epoch, to tenths, for the figures the test prints.
now_s() { date +%s.%N | cut -c1-12; }

# Wait up to 20 s for pid to end.
gone_within() {
	for _ in $(seq 1 200); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}

registers_restored() {
	python3 "$(dirname "$0")/make_tree.py" "$tree" --dump >"$TEST_TMP/after"
	diff "$TEST_TMP/before" "$TEST_TMP/after" >&2 || fail "$1: registers not restored"
	[ ! -s "$TEST_TMP/ledger" ] || fail "$1: the state file is not empty"
}

check_server() { # check_server PID LABEL UID
	st=/proc/$1/status
	for cap in CapInh CapPrm CapEff CapBnd CapAmb; do
		grep -q "^$cap:[[:space:]]*0000000000000000$" "$st" || fail "$2: server $cap: $(grep "^$cap" "$st")"
	done
	grep -q '^NoNewPrivs:[[:space:]]*1$' "$st" || fail "$2: server without no-new-privileges"
	grep -q '^Seccomp:[[:space:]]*2$' "$st" || fail "$2: server without a seccomp filter: $(grep ^Seccomp "$st")"
	grep -q "^Uid:[[:space:]]*$3[[:space:]]*$3[[:space:]]*$3[[:space:]]*$3$" "$st" ||
		fail "$2: server uid: $(grep ^Uid "$st")"
	hw_uid=$(awk '/^Uid:/ { print $2 }' "/proc/$DAEMON_PID/status")
	[ "$hw_uid" != "$3" ] || fail "$2: server and hardware side both run as uid $3"
	# /proc/PID/stat after the command's ")": state ppid pgrp session tty_nr ...
	set -- "$1" "$2" $(sed 's/.*) //' "/proc/$1/stat")
	[ "$7" = 0 ] || fail "$2: server has a controlling terminal (tty_nr $7)"
	[ "$6" = "$1" ] || fail "$2: server is not the leader of a session of its own (session $6)"
	for fd in /proc/$1/fd/*; do
		n=${fd##*/}
		t=$(readlink "$fd") || continue
		case "$n:$t" in
		0:/dev/null | 1:pipe:* | 2:pipe:*) ;;   # no terminal: the log's pipe
		*:socket:* | *:anon_inode:\[eventfd\]) ;;
		*) fail "$2: server holds fd $n -> $t" ;;
		esac
	done
	# The same look finds the msr files in the hardware side.
	ls -l /proc/"$DAEMON_PID"/fd | grep -q "$tree/dev/cpu/.*/msr" ||
		fail "$2: the check would not see an msr file: the hardware side holds none"
}

# Both sides as nobody: refused before anything starts.
write_conf "$TEST_TMP/same.conf" 0 "server_user = nobody"
sed -i "s/^user =.*/user = nobody/" "$TEST_TMP/same.conf"
rc=0
timeout 30 "$UNCORED_BIN" --config "$TEST_TMP/same.conf" --root "$tree" --listen 127.0.0.1:0 >"$TEST_TMP/same.log" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "server_user 'nobody' has the uid of user 'nobody'" "$TEST_TMP/same.log" ||
	{ cat "$TEST_TMP/same.log" >&2; fail "the same user for both sides: status $rc"; }
registers_restored "the same user for both sides"

daemon_uid=$(id -u daemon)
for user in "" nobody; do
	label="user '$user'"
	write_conf "$TEST_TMP/u.conf" 0
	sed -i "s/^user =.*/user = $user/" "$TEST_TMP/u.conf"
	server_uid=$default_server_uid
	if [ "$user" = nobody ]; then
		echo "server_user = daemon" >>"$TEST_TMP/u.conf"
		server_uid=$daemon_uid
	fi

	# The server's confinement; the service answers through it.
	start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --root "$tree"
	server=$(server_of "$DAEMON_PID" "$server_uid")
	check_server "$server" "$label" "$server_uid"
	keeper_uid=0
	[ "$user" = nobody ] && keeper_uid=$nobody
	check_keeper "$server" "$label" "$keeper_uid" "$server_uid"
	curl -fsS --compressed "$DAEMON_URL/metrics" | grep -q '^uncored_samples_total' || fail "$label: no metrics"
	samples_grow "$DAEMON_URL" || fail "$label: the server does not get new samples"

	# The server killed: the hardware side restores and fails.
	kill -KILL "$server"
	rc=0
	gone_within "$DAEMON_PID" || fail "$label: the daemon outlived its server by 20 s"
	wait "$DAEMON_PID" || rc=$?
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$DAEMON_PID" | tr '\n' ' ')
	[ "$rc" = 3 ] || fail "$label: exit status $rc after the server was killed, expected 3"
	grep -q "server process $server went away" "$TEST_TMP/log" || { cat "$TEST_TMP/log" >&2; fail "$label: no word of the server's death"; }
	registers_restored "$label, server killed"

	# The hardware side killed: the server ends.
	start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --root "$tree"
	server=$(server_of "$DAEMON_PID" "$server_uid")
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null || true
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$DAEMON_PID" | tr '\n' ' ')
	gone_within "$server" || { kill -KILL "$server"; fail "$label: the server outlived the hardware side by 20 s"; }

	# SIGTERM to both, as systemd stops the service (this start also cleans up the kill).
	start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --root "$tree"
	server=$(server_of "$DAEMON_PID" "$server_uid")
	kill -TERM "$server"
	stop_daemon "$DAEMON_PID" || fail "$label: exit status after SIGTERM to both processes"
	gone_within "$server" || fail "$label: the server outlived the stop"
	registers_restored "$label, SIGTERM"

	# The server stopped: the liveness check finds it, the daemon ends it and exits 3.
	start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --root "$tree"
	server=$(server_of "$DAEMON_PID" "$server_uid")
	kill -STOP "$server"
	t0=$(now_s)
	rc=0
	gone_within "$DAEMON_PID" || fail "$label: the daemon did not notice its stopped server in 20 s"
	wait "$DAEMON_PID" || rc=$?
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$DAEMON_PID" | tr '\n' ' ')
	echo "privsep: $label: a stopped server ended the daemon after $(awk -v a="$t0" -v b="$(now_s)" 'BEGIN { printf "%.1f", b - a }') s"
	[ "$rc" = 3 ] || { cat "$TEST_TMP/log" >&2; fail "$label: exit status $rc with the server stopped, expected 3"; }
	grep -q "server process $server did not answer its liveness check" "$TEST_TMP/log" ||
		{ cat "$TEST_TMP/log" >&2; fail "$label: no word of the stopped server"; }
	gone_within "$server" || { kill -KILL "$server"; fail "$label: the stopped server outlived the daemon"; }
	registers_restored "$label, server stopped"

	# SIGTERM with the server stopped: the stop does not wait on it.
	start_daemon 0 "$TEST_TMP/log" --config "$TEST_TMP/u.conf" --root "$tree"
	server=$(server_of "$DAEMON_PID" "$server_uid")
	kill -STOP "$server"
	t0=$(now_s)
	stop_daemon "$DAEMON_PID" || { cat "$TEST_TMP/log" >&2; fail "$label: exit status after SIGTERM with the server stopped"; }
	echo "privsep: $label: SIGTERM with the server stopped took $(awk -v a="$t0" -v b="$(now_s)" 'BEGIN { printf "%.1f", b - a }') s"
	grep -q "server process: did not end within 1 s of the transport's close: ended" "$TEST_TMP/log" ||
		{ cat "$TEST_TMP/log" >&2; fail "$label: no word of the stopped server at the stop"; }
	gone_within "$server" || { kill -KILL "$server"; fail "$label: the stopped server outlived the stop"; }
	registers_restored "$label, SIGTERM with the server stopped"
done
echo "privsep: server without capabilities, hardware fds or state file, under seccomp; each side ends with the other; a stopped server is found and ended: ok"
