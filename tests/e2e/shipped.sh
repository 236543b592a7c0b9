#!/bin/sh
# The shipped configuration, as root, on every simulated model: the daemon
# starts, drops to its user (the package's 'uncored', or 'nobody' where
# this machine has no such user) with no capability left in any thread,
# every collector the model has is up from the first sample on, with no
# error, and again after a reload restarts them all as the user, and a stop
# restores every register.
# The other tests run with an empty user; a collector that breaks the drop
# (a thread started before it, a device opened after it) fails here.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root"
# The package's two users (systemd/uncored.sysusers), or where this machine
# has not got them, two of Debian's own: the server must run as another uid.
user=uncored
server_user=uncored-http
if ! getent passwd uncored >/dev/null || ! getent passwd uncored-http >/dev/null; then
	user=nobody
	server_user=daemon
fi
id "$user" >/dev/null 2>&1 && id "$server_user" >/dev/null 2>&1 || skip "no '$user' and '$server_user' users"
uid=$(id -u "$user")

# The user reads the configuration again at each reload.
chmod 755 "$TEST_TMP"
# The shipped file with its users where this machine has them, a quicker
# interval, so that two samples come within a second, and a state file of
# the test's own.
printf '[daemon]\nuser = %s\nserver_user = %s\ninterval = 0.25\nstate_file = %s\n' \
	"$user" "$server_user" "$TEST_TMP/ledger" |
	cat "$UNCORED_SOURCE_ROOT/conf/uncored.conf" - >"$TEST_TMP/u.conf"
models=$("$UNCORED_BIN" --help | sed -n 's/.*models: //p')
[ -n "$models" ] || fail "--help lists no models"

# Every collector in the scrape FILE up, none with an error; WHEN names the scrape.
all_up() {
	grep -q '^uncored_collector_up{' "$1" || fail "$model, $2: no collector up"
	if grep '^uncored_collector_up{' "$1" | grep -v ' 1$' >"$TEST_TMP/down"; then
		fail "$model, $2: a collector is down: $(cat "$TEST_TMP/down"); log: $(cat "$log")"
	fi
	if grep '^uncored_sample_errors_total{' "$1" | grep -v ' 0$' >"$TEST_TMP/errors"; then
		fail "$model, $2: errors: $(cat "$TEST_TMP/errors"); log: $(cat "$log")"
	fi
}

for model in $models; do
	log="$TEST_TMP/$model.log"
	conf="$TEST_TMP/$model.conf"
	cp "$TEST_TMP/u.conf" "$conf"
	start_daemon 0 "$log" --config "$conf" --simulate "$model"
	# The first samples, just after the open, and one a whole interval later.
	wait_until 30 has_samples "$DAEMON_URL" 3 || fail "$model: no samples: $(cat "$log")"
	for st in /proc/"$DAEMON_PID"/task/*/status; do
		grep -q "^Uid:[[:space:]]*$uid[[:space:]]" "$st" || fail "$model: $st: $(grep Uid "$st")"
		grep -q "^CapEff:[[:space:]]*0000000000000000" "$st" ||
			grep -q "^CapEff:[[:space:]]*0000004000000000" "$st" ||
			fail "$model: $st kept a capability: $(grep CapEff "$st")"
	done
	curl -fsS "$DAEMON_URL/metrics" >"$TEST_TMP/$model.prom"
	all_up "$TEST_TMP/$model.prom" "after start"
	# hsmp reads PROCHOT on a thread of its own, started after the drop (which
	# refuses to run beside another thread): beside the main and sampler threads.
	if grep -q '^uncored_collector_up{collector="hsmp"} 1$' "$TEST_TMP/$model.prom"; then
		n=$(ls /proc/"$DAEMON_PID"/task | wc -l)
		[ "$n" -ge 3 ] || fail "$model: $n threads: no hsmp tick beside the sampler"
	fi
	# A reload that changes the interval restarts every collector, now as the
	# user: each opens its hardware again with what the drop kept.
	sed -i 's/^interval = 0.25$/interval = 0.3/' "$conf"
	kill -HUP "$DAEMON_PID"
	wait_until 30 log_has "$log" "configuration applied" || fail "$model: reload not applied: $(cat "$log")"
	s0=$(samples_total "$DAEMON_URL")
	wait_until 30 has_samples "$DAEMON_URL" $((s0 + 2)) || fail "$model: no samples after the reload"
	curl -fsS "$DAEMON_URL/metrics" >"$TEST_TMP/$model.reloaded.prom"
	all_up "$TEST_TMP/$model.reloaded.prom" "after the reload"
	stop_daemon "$DAEMON_PID" || fail "$model: exit status after SIGTERM: $(cat "$log")"
	grep -q "every register restored" "$log" || fail "$model: no restore: $(cat "$log")"
	echo "shipped: $model as $user, $(grep -c '^uncored_collector_up{' "$TEST_TMP/$model.prom") collectors up: ok"
done
