# The load that the flake hunts put beside the suite, sourced by
# tests/flake-hunt/repeat and tests/flake-hunt/under-load.  Every process
# started here is stopped by its PID by load_stop (call it from an EXIT
# trap), and stops by itself after $LOAD_LIMIT seconds (default 4 hours)
# should the script that started it die first.

LOAD_LIMIT=${LOAD_LIMIT:-14400}
LOAD_PIDS=""
LOAD_DIR=""

# A directory for what the load writes, removed by load_stop.
load_dir() {
	[ -n "$LOAD_DIR" ] || LOAD_DIR=$(mktemp -d /tmp/uncored-load.XXXXXX)
	echo "$LOAD_DIR"
}

# N busy loops at normal priority.  Usage: load_hogs N
load_hogs() {
	for _ in $(seq 1 "$1"); do
		timeout "$LOAD_LIMIT" sh -c 'while :; do :; done' &
		LOAD_PIDS="$LOAD_PIDS $!"
	done
}

# One TCP connection on loopback carrying bulk data as fast as the kernel
# takes it, the receiver discarding it.  Usage: load_loopback_bulk
load_loopback_bulk() {
	timeout "$LOAD_LIMIT" python3 -c '
import socket, threading
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
def sink():
    conn, _ = srv.accept()
    while conn.recv(1 << 20):
        pass
threading.Thread(target=sink, daemon=True).start()
out = socket.create_connection(srv.getsockname())
block = bytes(1 << 20)
while True:
    out.sendall(block)
' &
	LOAD_PIDS="$LOAD_PIDS $!"
}

# A writer that fills 256 MiB, syncs it to disk, removes it, and again.
# Usage: load_disk_writer
load_disk_writer() {
	file=$(load_dir)/disk
	timeout "$LOAD_LIMIT" sh -c '
		while :; do
			dd if=/dev/zero of="$1" bs=1M count=256 conv=fsync 2>/dev/null
			rm -f "$1"
		done' sh "$file" &
	LOAD_PIDS="$LOAD_PIDS $!"
}

# A second uncored as a developer or the README's first command leaves it:
# the shipped configuration (its users created as that command does), on
# the default port 9796 of loopback, on a device-file tree of its own
# (tests/e2e/make_tree.py) so that it journals to the default state file
# /run/uncored/ledger as a real host's daemon does.  Fails when it does not
# answer; refuses to run where port 9796 is already taken.
# Usage: load_default_uncored BINARY SOURCE_ROOT
load_default_uncored() {
	bin=$1
	src=$2
	if curl -s -o /dev/null --max-time 2 http://127.0.0.1:9796/healthz; then
		echo "load: an uncored answers on 127.0.0.1:9796 already; using it" >&2
		return 0
	fi
	systemd-sysusers "$src/systemd/uncored.sysusers"
	tree=$(load_dir)/tree
	python3 "$src/tests/e2e/make_tree.py" --boot linux "$tree"
	timeout "$LOAD_LIMIT" "$bin" --config "$src/conf/uncored.conf" --listen 127.0.0.1:9796 \
		--root "$tree" >"$(load_dir)/uncored.log" 2>&1 &
	LOAD_PIDS="$LOAD_PIDS $!"
	for _ in $(seq 1 600); do
		curl -s -o /dev/null --max-time 2 http://127.0.0.1:9796/healthz && return 0
		sleep 0.1
	done
	cat "$(load_dir)/uncored.log" >&2
	echo "load: the default uncored does not answer on 127.0.0.1:9796" >&2
	return 1
}

# Stop everything load_* started, by PID, and remove its files.
load_stop() {
	for pid in $LOAD_PIDS; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in $LOAD_PIDS; do
		wait "$pid" 2>/dev/null || true
	done
	LOAD_PIDS=""
	[ -z "$LOAD_DIR" ] || rm -rf "$LOAD_DIR"
	LOAD_DIR=""
}
