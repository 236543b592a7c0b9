#!/bin/sh
# The shipped configuration, as root, on every simulated model: the daemon
# starts, drops to its user (the package's 'uncored', or 'nobody' where
# this machine has no such user) with no capability left in any thread,
# every collector the model has is up from the first sample on, with no
# error, and a stop restores every register.
# The other tests run with an empty user; a collector that breaks the drop
# (a thread started before it, a device opened after it) fails here.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip "needs root"
user=uncored
getent passwd uncored >/dev/null || user=nobody
id "$user" >/dev/null 2>&1 || skip "no '$user' user"
uid=$(id -u "$user")

# The shipped file with its user where this machine has one, and a quicker
# interval, so that two samples come within a second.
printf '[daemon]\nuser = %s\ninterval = 0.25\n' "$user" |
	cat "$UNCORED_SOURCE_ROOT/conf/uncored.conf" - >"$TEST_TMP/u.conf"
models=$("$UNCORED_BIN" --help | sed -n 's/.*models: //p')
[ -n "$models" ] || fail "--help lists no models"

for model in $models; do
	log="$TEST_TMP/$model.log"
	start_daemon 0 "$log" --config "$TEST_TMP/u.conf" --simulate "$model"
	# The first samples, just after the open, and one a whole interval later.
	wait_until 10 has_samples "$DAEMON_URL" 3 || fail "$model: no samples: $(cat "$log")"
	for st in /proc/"$DAEMON_PID"/task/*/status; do
		grep -q "^Uid:[[:space:]]*$uid[[:space:]]" "$st" || fail "$model: $st: $(grep Uid "$st")"
		grep -q "^CapEff:[[:space:]]*0000000000000000" "$st" ||
			grep -q "^CapEff:[[:space:]]*0000004000000000" "$st" ||
			fail "$model: $st kept a capability: $(grep CapEff "$st")"
	done
	curl -fsS "$DAEMON_URL/metrics" >"$TEST_TMP/$model.prom"
	grep -q '^uncored_collector_up{' "$TEST_TMP/$model.prom" || fail "$model: no collector up"
	if grep '^uncored_collector_up{' "$TEST_TMP/$model.prom" | grep -v ' 1$' >"$TEST_TMP/down"; then
		fail "$model: a collector is down: $(cat "$TEST_TMP/down"); log: $(cat "$log")"
	fi
	# hsmp reads PROCHOT on a thread of its own, started after the drop (which
	# refuses to run beside another thread): beside the main and sampler threads.
	if grep -q '^uncored_collector_up{collector="hsmp"} 1$' "$TEST_TMP/$model.prom"; then
		n=$(ls /proc/"$DAEMON_PID"/task | wc -l)
		[ "$n" -ge 3 ] || fail "$model: $n threads: no hsmp tick beside the sampler"
	fi
	if grep '^uncored_sample_errors_total{' "$TEST_TMP/$model.prom" | grep -v ' 0$' >"$TEST_TMP/errors"; then
		fail "$model: errors: $(cat "$TEST_TMP/errors"); log: $(cat "$log")"
	fi
	stop_daemon "$DAEMON_PID" || fail "$model: exit status after SIGTERM: $(cat "$log")"
	grep -q "every register restored" "$log" || fail "$model: no restore: $(cat "$log")"
	echo "shipped: $model as $user, $(grep -c '^uncored_collector_up{' "$TEST_TMP/$model.prom") collectors up: ok"
done
