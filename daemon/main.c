/*
 * uncored: the daemon's start-up order, main loop and teardown; the other
 * modes are cli.c (the command line), once.c and list_events.c, and the
 * steps every mode shares are startup.c (which alone chooses the hardware
 * backend: device files or simulation).
 *
 * This is the only file that knows the daemon's whole start-up sequence.  The
 * daemon starts as: parse the configuration, open the hardware and detect
 * the CPU, take or bind the listening socket, fork the HTTP server process
 * (privsep.h) and, when a user is switched to, the msr opener (hwopen.h),
 * start the collectors, drop privileges (keeping CAP_PERFMON only where perf
 * events may have to be opened again), start the sampler, and tell systemd
 * it is ready once the server has the first sample.  Stopping runs the same
 * steps backwards, and the collectors put every register they changed back
 * as they found it; what they cannot reach (a CPU offline) is logged, stays
 * in the state file, and makes the exit status 4.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <limits.h>
#include <malloc.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "collector.h"
#include "conf.h"
#include "conf_check.h"
#include "config.h"
#include "http.h"
#include "hw.h"
#include "perf_sys.h"
#include "hw_dev.h"
#include "hwopen.h"
#include "list_events.h"
#include "listen_addr.h"
#include "log.h"
#include "once.h"
#include "privdrop.h"
#include "privsep.h"
#include "sampler.h"
#include "service.h"
#include "sim.h"
#include "snapshot.h"
#include "startup.h"
#include "web_assets.h"

/* The daemon's running state, for the main loop. */
struct daemon {
	const struct options *opt;
	const char *conf_path;
	struct conf conf;
	struct machine machine;
	struct state_file *journal;
	struct sampler *sampler;
	struct privsep *server;
	struct hwopen *opener;         /* NULL when no privilege is dropped */
	bool server_gone;
	int signal_fd;
	uint64_t last_progress;
	double last_progress_at;
};

static double monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Take the socket systemd passed, or bind our own; say in where what it
 * really listens on (the address bound, with the port chosen for port 0).
 * Returns the fd or -1.
 */
static int open_listener(struct daemon *d, char *where_listening, size_t len)
{
	char err[256], where[4400], addr[INET6_ADDRSTRLEN + 16];
	struct sockaddr_storage sa;
	socklen_t sa_len = sizeof(sa);
	int fd, r = service_listen_fd(&fd, err, sizeof(err));

	if (r == 0) {
		if (getsockname(fd, (struct sockaddr *)&sa, &sa_len) == 0)
			listen_addr_format(&sa, addr, sizeof(addr));
		else
			snprintf(addr, sizeof(addr), "?");
		snprintf(where_listening, len, "%s (the socket systemd passed; 'listen' is not used)",
			 addr);
		return fd;
	}
	if (r != -ENOENT) {
		log_error("socket activation: %s", err);
		return -1;
	}
	r = http_bind(d->conf.listen, &fd, err, sizeof(err));
	if (r < 0) {
		log_error("%s: %s", conf_check_where(conf_path(d->opt), "listen", d->opt->listen != NULL,
						     where, sizeof(where)), err);
		return -1;
	}
	if (getsockname(fd, (struct sockaddr *)&sa, &sa_len) == 0)
		snprintf(where_listening, len, "%s", listen_addr_format(&sa, addr, sizeof(addr)));
	else
		snprintf(where_listening, len, "%s", d->conf.listen);
	return fd;
}


static void send_status(void)
{
	struct snapshot *s = snapshot_acquire();
	int up = 0, enabled = 0;
	struct timespec now;

	if (!s)
		return;
	/* Out of those that should work here: a collector that does not apply is not counted. */
	for (int i = 0; i < s->n_collectors; i++) {
		enabled += snapshot_collector_applies(&s->collectors[i]);
		up += snapshot_collector_applies(&s->collectors[i]) && s->collectors[i].up;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	service_status("%d sockets, collectors up %d/%d, last sample %.1f s ago",
		       s->n_sockets, up, enabled,
		       (double)now.tv_sec + (double)now.tv_nsec / 1e9 - s->time);
	snapshot_release(s);
}

/*
 * WATCHDOG=1 only while the sampler makes progress (SPEC §8): by the same
 * staleness rule as /healthz, on the monotonic clock, from when a new
 * sample was first seen here.
 */
static void kick_watchdog(struct daemon *d)
{
	uint64_t p = sampler_progress(d->sampler);
	double now = monotonic_s();

	if (p != d->last_progress) {
		d->last_progress = p;
		d->last_progress_at = now;
	}
	if (now - d->last_progress_at <= snapshot_stale_limit_s(d->conf.interval_s))
		service_watchdog_ping();
	else
		log_warning("sampler: no sample for %.1f s, not feeding the watchdog",
			    now - d->last_progress_at);
}

/*
 * The keys a running daemon cannot apply: the socket and the HTTP server's
 * limits are fixed when the server starts, the episode list's length when
 * the sampler is made, and root, user and state_file are used only by
 * start-up.  A collector marks its own such keys (conf_key.restart): the
 * counter engines are chosen at start-up too, since only then may a
 * kernel PMU be opened as root (see run_daemon), and a collector switching
 * engines mid-run would start its totals over.  Everything else
 * (interval, log_level, the collectors' other keys) is applied live.
 */
#define RESTART_KEY(name, field, is_string) \
	{ name, offsetof(struct conf, field), sizeof(((struct conf *)0)->field), is_string }
static const struct {
	const char *key;
	size_t offset, size;
	bool is_string;
} restart_keys[] = {
	RESTART_KEY("listen", listen, true),
	RESTART_KEY("root", root, true),
	RESTART_KEY("user", user, true),
	RESTART_KEY("server_user", server_user, true),
	RESTART_KEY("state_file", state_file, true),
	RESTART_KEY("max_connections", max_connections, false),
	RESTART_KEY("max_connections_per_ip", max_connections_per_ip, false),
	RESTART_KEY("request_timeout", request_timeout_s, false),
	RESTART_KEY("write_timeout", write_timeout_s, false),
	RESTART_KEY("max_header_size", max_header_bytes, false),
	RESTART_KEY("max_episodes", max_episodes, false),
};

/* Keep the running value of a key that changed, and say so. */
static void keep_key(const char *name, const void *old, void *new, size_t size, bool is_string)
{
	bool changed = is_string ? strcmp(old, new) != 0 : memcmp(old, new, size) != 0;

	if (changed) {
		log_warning("%s changed: takes effect at restart", name);
		memcpy(new, old, size);
	}
}

/*
 * For each key fresh changes that needs a restart ([daemon]'s above, then
 * the collectors' keys marked restart): say so and keep the running value.
 */
static void keep_restart_keys(const struct conf *running, struct conf *fresh)
{
	for (size_t i = 0; i < sizeof(restart_keys) / sizeof(restart_keys[0]); i++)
		keep_key(restart_keys[i].key, (const char *)running + restart_keys[i].offset,
			 (char *)fresh + restart_keys[i].offset, restart_keys[i].size,
			 restart_keys[i].is_string);
	for (size_t i = 0; i < collector_registry_n; i++) {
		const struct conf_section *sec = collector_registry[i]->conf_section;

		for (size_t k = 0; sec && k < sec->n_keys; k++) {
			const struct conf_key *key = &sec->keys[k];
			const char *old = sec->settings_size ? (const char *)running->settings[i] :
							       (const char *)running;
			char *new = sec->settings_size ? (char *)fresh->settings[i] : (char *)fresh;
			char name[96];

			if (!key->restart)
				continue;
			snprintf(name, sizeof(name), "[%s] %s", sec->name, key->name);
			keep_key(name, old + key->offset, new + key->offset, key->size,
				 key->kind == CONF_KIND_STRING || key->kind == CONF_KIND_PATH);
		}
	}
}

static void reload(struct daemon *d)
{
	struct conf fresh;
	int r;

	service_reloading();
	log_notice("reloading %s", d->conf_path ? d->conf_path : "(built-in defaults)");
	r = load_conf(d->opt, &fresh);
	if (r == 0 && d->opt->listen)
		snprintf(fresh.listen, sizeof(fresh.listen), "%s", d->opt->listen);
	/* The checks --check-config and start-up run: a file they refuse is not applied. */
	if (r == 0)
		r = check_at_reload(d->opt, &d->conf, &fresh);
	if (r < 0) {
		log_error("reload: configuration refused, the running one stays in force");
	} else {
		keep_restart_keys(&d->conf, &fresh);
		log_set_level((enum log_level)(LOG_LEVEL_ERROR + fresh.log_level));
		sampler_post_conf(d->sampler, &fresh);
		d->conf = fresh;
	}
	service_ready();
}

/*
 * Wait for signals; feed the watchdog and refresh STATUS= between them.
 * Returns after a stop signal, or with server_gone set when the server
 * process went away.
 */
/*
 * How long the main loop sleeps with nothing to read, in ms: until the
 * server's liveness check is due (a ping every PRIVSEP_PING_EVERY_MS, or
 * the deadline of the one that waits), sooner when a quarter of the
 * watchdog interval (at least 1 ms) is shorter; the status, when there is
 * one to send, goes with each wake.
 */
static int main_tick_ms(uint64_t wd_usec, const struct privsep *server)
{
	uint64_t ms = wd_usec / 4000;
	int due = privsep_tick_due_ms(server);

	if (wd_usec && ms < (uint64_t)due)
		return ms == 0 ? 1 : (int)ms;
	return due;
}

static void main_loop(struct daemon *d)
{
	uint64_t wd_usec = service_watchdog_interval_usec();
	bool notifying = service_notifying();

	for (;;) {
		struct pollfd p[4] = { { .fd = d->signal_fd, .events = POLLIN },
				       { .fd = privsep_fd(d->server), .events = POLLIN },
				       { .fd = privsep_log_fd(d->server), .events = POLLIN },
				       { .fd = hwopen_exit_fd(d->opener), .events = POLLIN } };
		struct signalfd_siginfo si;
		int n = poll(p, 4, main_tick_ms(wd_usec, d->server));
		char why[64];

		if (n > 0 && p[2].revents)
			privsep_relay_log(d->server);

		/* A stop signal first: systemd signals the server too, and that is no crash. */
		if (n > 0 && (p[0].revents & POLLIN) &&
		    read(d->signal_fd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGHUP) {
				reload(d);
				continue;
			}
			log_notice("received SIG%s, stopping", sigabbrev_np((int)si.ssi_signo));
			return;
		}
		if (n > 0 && p[1].revents && !privsep_check(d->server)) {
			log_error("server process %d went away; restoring every register and exiting",
				  (int)privsep_pid(d->server));
			d->server_gone = true;
			return;
		}
		if (!privsep_tick(d->server)) {
			if (privsep_hung(d->server))
				log_error("server process %d did not answer its liveness check within "
					  "%d s (stopped or hung); ending it, restoring every register "
					  "and exiting", (int)privsep_pid(d->server),
					  PRIVSEP_PONG_DEADLINE_MS / 1000);
			else
				log_error("server process %d went away; restoring every register "
					  "and exiting", (int)privsep_pid(d->server));
			d->server_gone = true;
			return;
		}
		/* Sampling goes on without it; only CPUs that come online later are lost. */
		if (n > 0 && p[3].revents && hwopen_reap(d->opener, why, sizeof(why)))
			log_error("msr opener %d %s; a CPU that comes online from now on cannot be "
				  "monitored until uncored restarts", (int)hwopen_pid(d->opener), why);
		if (wd_usec && privsep_alive(d->server))   /* and only while the server lives */
			kick_watchdog(d);
		if (notifying)
			send_status();
	}
}

/* Fork the server process, serving on listen_fd.  Returns 0 or -1 after logging. */
static int start_server(struct daemon *d, int listen_fd)
{
	struct http_options ho = {
		.listen_fd = listen_fd,
		.max_connections = d->conf.max_connections,
		.max_connections_per_ip = d->conf.max_connections_per_ip,
		.request_timeout_s = d->conf.request_timeout_s,
		.write_timeout_s = d->conf.write_timeout_s,
		.max_header_bytes = d->conf.max_header_bytes,
		.interval_s = d->conf.interval_s,
		.assets = web_assets,
		.n_assets = web_n_assets,
	};
	char err[256], server_user[sizeof(d->conf.server_user)];
	sigset_t stop;

	if (privsep_server_user(d->conf.user, d->conf.server_user, server_user,
				sizeof(server_user), err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	if (privsep_start(&ho, server_user, d->conf.user, &d->server, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
	/* A reload waits for the answer being written; a stop does not. */
	stop_signal_set(&stop);
	sigdelset(&stop, SIGHUP);
	privsep_stop_on(d->server, &stop);
	return 0;
}

/*
 * What the hardware side keeps after the privilege drop: CAP_PERFMON, and
 * only when a PMU collector counts, or would count once a reload enables
 * it, through the real kernel's perf.  Opens made later need it (a CPU
 * back online, a reload that restarts a collector; hardware-linux.md
 * §3.1: the kernel checks privilege at perf_event_open only, so the fds
 * already open need nothing).  CAP_PERFMON lets the process count CPU-wide
 * events and nothing else; the msr fds, opened as root, need no capability
 * afterwards.  The simulator's kernel checks no privilege: nothing is kept.
 */
static unsigned kept_privileges(const struct daemon *d)
{
	struct perf_sys *ps = d->machine.hw.perf;

	if (d->opt->simulate || !ps)
		return 0;
	for (size_t i = 0; i < collector_registry_n; i++) {
		const struct collector_ops *ops = collector_registry[i];

		if (ops->uses_perf && ops->uses_perf(&d->conf, ps))
			return PRIVDROP_KEEP_PERFMON;
	}
	return 0;
}

/* Drop to [daemon] user, keeping kept_privileges().  0, or -errno with err set. */
static int drop_privileges(struct daemon *d, char *err, size_t errlen)
{
	unsigned keep = kept_privileges(d);
	const char *user = d->conf.user;
	struct passwd *pw;
	char level[PERF_SYS_PARANOID_TEXT_MAX];
	int r;

	/* The simulated PMU tree goes to the user, who removes it at exit. */
	if (d->machine.sim && geteuid() == 0 && user[0] && strcmp(user, "root") != 0 &&
	    (pw = getpwnam(user)) != NULL)
		sim_perf_tree_chown(d->machine.sim, pw->pw_uid, pw->pw_gid);
	r = privdrop_to_user_keep(user, keep, err, errlen);

	if (r == 2)
		log_warning("privileges: running as '%s' without CAP_PERFMON (this kernel does not "
			    "know it, before Linux 5.8, or the unit's CapabilityBoundingSet= lacks it): "
			    "a CPU that comes back online, or a reload that restarts a collector, "
			    "cannot open its perf events again", d->conf.user);
	else if (r == 0 && keep)
		log_info("privileges: running as '%s' with CAP_PERFMON only, to open perf events "
			 "again after CPU hotplug and reload", d->conf.user);
	/* Above 2 (Debian, Ubuntu) only CAP_SYS_ADMIN opens perf events (hardware-linux.md §6). */
	if (r == 0 && sampler_counts_through_perf(d->sampler) &&
	    perf_sys_reopens_refused(d->machine.hw.perf, level, sizeof(level)))
		log_warning("privileges: perf_event_paranoid is %s: running as '%s' without "
			    "CAP_SYS_ADMIN, a CPU that comes back online, or a reload that restarts "
			    "a collector, cannot open its perf events again (set "
			    "kernel.perf_event_paranoid=2)", level, d->conf.user);
	return r < 0 ? r : 0;
}

/* Stop the server, if there is one still, and log how it ended when that was not as asked. */
static void stop_server(struct daemon *d, int rc)
{
	char how[160];

	if (!d->server)
		return;
	/* When the daemon itself fails, that is the news: the server's end is a detail. */
	if (!privsep_stop(d->server, how, sizeof(how))) {
		if (rc == 0)
			log_warning("server process: %s", how);
		else
			log_notice("server process %s", how);
	}
	d->server = NULL;
}

static int run_daemon(const struct options *o, struct conf *conf)
{
	struct daemon d = { .opt = o, .conf = *conf, .signal_fd = -1 };
	struct snapshot *first;
	char err[512], where[4400], listening[INET6_ADDRSTRLEN + 96];
	int listen_fd = -1, rc = 1, lock_fd;
	size_t n_left;

	d.conf_path = o->config;
	if (check_at_start(o, &d.conf, true) < 0)
		return 1;
	/* Before any register is touched: stop signals wait, and one uncored per machine. */
	d.signal_fd = block_signals();
	if (d.signal_fd < 0) {
		log_error("signals: %s", strerror(errno));
		return 1;
	}
	lock_fd = lock_instance(o, &d.conf);
	if (lock_fd == -1)
		goto out_lock;
	listen_fd = open_listener(&d, listening, sizeof(listening));
	if (listen_fd < 0)
		goto out_lock;
	/*
	 * Before any thread starts, and before the hardware is opened: the
	 * server gets the socket and nothing else, and none of the machine's
	 * memory (the tables, the simulator) is shared with it copy-on-write,
	 * to become its own copy when this side writes the page.
	 */
	if (start_server(&d, listen_fd) < 0)
		goto out_server;
	close(listen_fd);
	listen_fd = -1;
	if (machine_open(o, &d.conf, &d.machine) < 0)
		goto out_server;
	if (journal_open(o, &d.conf, &d.machine.hw, &d.journal) < 0)
		goto out_machine;
	snapshot_set_publish_hook(privsep_publish, d.server);
	/* A CPU that comes online later needs its devices opened: the opener keeps that right. */
	if (!o->simulate && privdrop_will_drop(d.conf.user)) {
		if (hwopen_start(o->root ? o->root : d.conf.root, &d.opener, err, sizeof(err)) < 0) {
			log_error("%s", err);
			goto out_listen;
		}
		hwdev_set_opener(&d.machine.hw, hwopen_open, d.opener);
		log_info("msr opener started as pid %d", (int)hwopen_pid(d.opener));
	}
	/*
	 * The collectors start as root, after the fork (the server holds none
	 * of their fds): perf events are opened with every privilege the
	 * process holds (above perf_event_paranoid 2 without CAP_SYS_ADMIN the
	 * kernel refuses them all, and each collector's trial open chooses msr;
	 * with it, a process that drops it to a user chooses msr too where it
	 * can, since every reopen after the drop would be refused).
	 */
	if (d.machine.hw.perf)
		perf_sys_set_drops_sys_admin(d.machine.hw.perf, privdrop_will_drop(d.conf.user));
	if (sampler_new(&d.conf, &d.machine.hw, &d.machine.info, &d.machine.topo, &d.sampler,
			err, sizeof(err)) < 0) {
		log_error("%s", err);
		goto out_listen;
	}
	/* Every msr fd and perf event is open and the socket bound: root is no longer needed. */
	if (drop_privileges(&d, err, sizeof(err)) < 0) {
		log_error("%s: %s", conf_check_where(conf_path(o), "user", 0, where, sizeof(where)),
			  err);
		goto out_sampler;
	}
	first = sampler_sample(d.sampler);
	snapshot_release(first);
	if (sampler_start(d.sampler) < 0) {
		log_error("sampler: cannot start its thread");
		goto out_sampler;
	}
	/*
	 * After the first sample, in this order: it is on the sample page when
	 * the server says it serves, so READY=1 below means a client is answered.
	 */
	if (privsep_wait_first(d.server, 60000) < 0) {
		log_error("server process %d did not start serving", (int)privsep_pid(d.server));
		goto out_sampler;
	}
	d.last_progress_at = monotonic_s();
	log_notice("serving on %s, sampling every %g s", listening, d.conf.interval_s);
	service_ready();
	send_status();

	main_loop(&d);
	rc = d.server_gone ? EXIT_SERVER_DIED : 0;

	service_stopping();
out_sampler:
	sampler_free(d.sampler);   /* stops the thread and restores every register */
	snapshot_set_publish_hook(NULL, NULL);
	snapshot_clear();
out_listen:
	/* After the sampler: nothing asks it any more. */
	hwdev_set_opener(&d.machine.hw, NULL, NULL);
	hwopen_stop(d.opener);
	stop_server(&d, rc);
out_machine:
	n_left = journal_close(d.journal, d.conf.state_file);
	machine_close(&d.machine);
	stop_server(&d, rc);
	close(d.signal_fd);
	if (lock_fd >= 0)
		close(lock_fd);
	return log_stopped(n_left, d.journal != NULL, rc);
out_server:
	if (listen_fd >= 0)
		close(listen_fd);
	stop_server(&d, rc);
out_lock:
	close(d.signal_fd);
	if (lock_fd >= 0)
		close(lock_fd);
	return 1;
}

int main(int argc, char **argv)
{
	struct options o;
	struct conf conf;
	int r;

	/*
	 * One malloc arena: a thread's own arena (the sampler's, an HTTP
	 * thread's) keeps pages resident that the main one has free.  (A low
	 * fixed mmap threshold here would cost a mapping and its page faults
	 * for every sample's arrays; the server, which has none, sets one for
	 * its documents: privsep_server.c.)
	 */
	mallopt(M_ARENA_MAX, 1);
	ignore_write_signals();
	log_init();
	r = parse_args(argc, argv, &o);
	if (r)
		return r;
	switch (o.mode) {
	case MODE_VERSION:
		printf("uncored %s\n", UNCORED_VERSION);
		return 0;
	case MODE_HELP:
		usage(stdout, scenario_dir(&o));
		return 0;
	default:
		break;
	}
	if (load_conf(&o, &conf) < 0)
		return 1;
	if (o.listen)
		snprintf(conf.listen, sizeof(conf.listen), "%s", o.listen);
	if (o.mode == MODE_CHECK_CONFIG)
		return check_config(&o, &conf);
	log_set_level((enum log_level)(LOG_LEVEL_ERROR + conf.log_level));
	switch (o.mode) {
	case MODE_LIST_EVENTS:
		return list_events(&o, &conf);
	case MODE_ONCE:
		return run_once(&o, &conf);
	default:
		return run_daemon(&o, &conf);
	}
}
