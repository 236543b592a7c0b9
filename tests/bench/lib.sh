# Helpers the benchmarks share (sourced after tests/e2e/lib.sh).

# PID and its children: uncored's HTTP server is a child process (uncored(8),
# PROCESS MODEL), and both count.
procs() {
	echo "$1" $(pgrep -P "$1" || true)
}

# A field of /proc/PID/smaps_rollup (Pss, Pss_Anon, ...) summed over PID and
# its children, in KiB: PSS counts a page shared by them (the libraries, since
# the server is forked) once.
pss_kb() {
	for p in $(procs "$1"); do cat /proc/"$p"/smaps_rollup; done |
		awk -v k="$2:" '$1 == k { s += $2 } END { print s }'
}

# Three scrapes of each document uncored serves at URL, identity and gzip:
# what its memory is measured after.
scrape_all() {
	for i in 1 2 3; do
		for doc in metrics api/v1/snapshot api/v1/episodes api/v1/history; do
			curl -fsS -o /dev/null --max-time 5 "$1/$doc" || true
			curl -fsS -o /dev/null --max-time 5 -H 'Accept-Encoding: gzip' "$1/$doc" || true
		done
	done
}

# CPU time of every thread of PID and its children so far, in nanoseconds
# (schedstat is exact, /proc/PID/stat counts whole clock ticks).
cpu_ns() {
	for p in $(procs "$1"); do cat /proc/"$p"/task/*/schedstat; done |
		awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# HSMP messages per second that uncored process PID sends over SECS seconds:
# the calls of hw_hsmp(), the one function every message of the daemon goes
# through (the ioctl on /dev/hsmp on a real host, the simulator's mailbox
# under --simulate), counted by a perf uprobe on the binary BIN.  The probe
# costs a trap per call, so count in a window of its own, never in one whose
# CPU time is measured.  Prints "-" where perf cannot place the probe (not
# root, no uprobes, a stripped binary).
hsmp_per_s() {
	bin=$1 pid=$2 secs=$3
	perf probe -q -x "$bin" -a uncored_hsmp=hw_hsmp >/dev/null 2>&1 || { echo -; return 0; }
	n=$(perf stat -x, -e probe_uncored:uncored_hsmp -p "$pid" -- sleep "$secs" 2>&1 |
		awk -F, '$3 == "probe_uncored:uncored_hsmp" { print $1 }')
	perf probe -q -d probe_uncored:uncored_hsmp >/dev/null 2>&1 || true
	awk -v n="${n:-}" -v s="$secs" 'BEGIN { if (n == "" || n !~ /^[0-9]+$/) print "-"; else printf "%.1f\n", n / s }'
}

# The collectors' own CPU per sample, the shipped default (bench_sample):
# the sum of the rows marked default in OUT.
bench_default_cpu() {
	awk 'f && NF == 8 && $8 == "yes" { c += $7 } /^collector/ { f = 1 } END { print c }' "$1"
}

# The same collectors all at once, paced one sample a second as the daemon
# runs them (bench_sample's PACED line in OUT), and the same samples back to
# back: the two differ by the pause alone.
bench_paced_cpu() {
	awk '/^paced:/ { print $(NF - 4) }' "$1"
}

bench_back_to_back_cpu() {
	awk '/^back to back:/ { print $(NF - 4) }' "$1"
}
