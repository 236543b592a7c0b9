/*
 * uncored: command line, start-up order, main loop and teardown.
 *
 * This is the only file that knows the whole start-up sequence and the only
 * one that chooses the hardware backend (device files or simulation).  The
 * daemon starts as: parse the configuration, open the hardware and detect
 * the CPU, take or bind the listening socket, drop privileges, start the
 * collectors and the sampler, serve, and tell systemd it is ready once the
 * first snapshot is published.  Stopping runs the same steps backwards, and
 * the collectors put every register they changed back as they found it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "collector.h"
#include "config.h"
#include "cpu.h"
#include "event.h"
#include "fmt_json.h"
#include "fmt_prom.h"
#include "fmt_table.h"
#include "http.h"
#include "ledger_file.h"
#include "hw.h"
#include "hw_dev.h"
#include "log.h"
#include "pmu.h"
#include "privdrop.h"
#include "sampler.h"
#include "service.h"
#include "sim.h"
#include "snapshot.h"
#include "strbuf.h"
#include "web_assets.h"

#define DEFAULT_CONFIG UNCORED_SYSCONFDIR "/uncored.conf"
#define EXIT_USAGE 2

enum mode { MODE_DAEMON, MODE_ONCE, MODE_CHECK_CONFIG, MODE_LIST_EVENTS, MODE_VERSION, MODE_HELP };
enum once_format { ONCE_TEXT, ONCE_JSON, ONCE_PROMETHEUS };

struct options {
	enum mode mode;
	enum once_format format;
	const char *config;       /* NULL: the default file, if it exists */
	const char *simulate;     /* MODEL[:SCENARIO] */
	const char *root;         /* overrides [daemon] root */
	const char *listen;       /* overrides [daemon] listen */
	const char *scenario_dir;
};

struct machine {
	struct hw hw;
	struct cpu_info info;
	struct cpu_topology topo;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: uncored [--config FILE] [--simulate MODEL[:SCENARIO]] [--root DIR] [--listen ADDR:PORT]\n"
		"       uncored --once [--json | --format text|json|prometheus] [same options]\n"
		"       uncored --check-config FILE\n"
		"       uncored --list-events [--simulate MODEL] [--root DIR]\n"
		"       uncored --version | --help\n"
		"\n"
		"Watches Intel servers for heat through the msr driver and serves the\n"
		"counters over HTTP for Prometheus.  Without --simulate it needs root and\n"
		"the msr driver ('modprobe msr').\n"
		"\n"
		"  -c, --config FILE        configuration file (default " DEFAULT_CONFIG ")\n"
		"  -s, --simulate SPEC      run on simulated hardware; models:");
	for (const char *const *m = sim_model_names(); *m; m++)
		fprintf(f, " %s", *m);
	fprintf(f, "\n"
		"                           scenarios: files in %s\n"
		"      --scenario-dir DIR   where scenario names are looked up\n"
		"      --root DIR           prefix for /dev/cpu and /sys (testing)\n"
		"      --listen ADDR:PORT   listen address, overrides the configuration\n"
		"      --once               take two samples one interval apart, print, exit\n"
		"      --json               with --once: print the JSON snapshot\n"
		"      --format FMT         with --once: text (default), json or prometheus\n"
		"      --check-config FILE  validate a configuration file and exit 0 or 1\n"
		"      --list-events        print the events this CPU supports and exit\n"
		"  -V, --version            print the version and exit\n"
		"  -h, --help               print this help and exit\n",
		UNCORED_SCENARIO_INSTALL_DIR);
}

static int parse_format(const char *s, enum once_format *ret)
{
	static const struct { const char *name; enum once_format f; } table[] = {
		{ "text", ONCE_TEXT }, { "json", ONCE_JSON }, { "prometheus", ONCE_PROMETHEUS },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (strcmp(s, table[i].name) == 0) {
			*ret = table[i].f;
			return 0;
		}
	}
	return -EINVAL;
}

/* Returns 0, or EXIT_USAGE after printing why. */
static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_ROOT = 256, OPT_LISTEN, OPT_ONCE, OPT_JSON, OPT_FORMAT, OPT_CHECK, OPT_LIST,
	       OPT_SCENARIO_DIR };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "simulate", required_argument, NULL, 's' },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "scenario-dir", required_argument, NULL, OPT_SCENARIO_DIR },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "check-config", required_argument, NULL, OPT_CHECK },
		{ "list-events", no_argument, NULL, OPT_LIST },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "c:s:Vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 's': o->simulate = optarg; break;
		case OPT_ROOT: o->root = optarg; break;
		case OPT_LISTEN: o->listen = optarg; break;
		case OPT_SCENARIO_DIR: o->scenario_dir = optarg; break;
		case OPT_ONCE: o->mode = MODE_ONCE; break;
		case OPT_JSON: o->format = ONCE_JSON; break;
		case OPT_FORMAT:
			if (parse_format(optarg, &o->format) < 0) {
				fprintf(stderr, "uncored: --format: expected text, json or prometheus, got '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_CHECK: o->mode = MODE_CHECK_CONFIG; o->config = optarg; break;
		case OPT_LIST: o->mode = MODE_LIST_EVENTS; break;
		case 'V': o->mode = MODE_VERSION; break;
		case 'h': o->mode = MODE_HELP; break;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "uncored: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	return 0;
}

/* Load the configuration; print every error.  Returns 0 or -1. */
static int load_conf(const struct options *o, struct conf *conf)
{
	struct conf_errors errs;
	char line[512];
	const char *path = o->config;

	if (!path) {
		if (access(DEFAULT_CONFIG, F_OK) < 0) {
			conf_defaults(conf);
			return 0;
		}
		path = DEFAULT_CONFIG;
	}
	if (conf_load(path, conf, &errs) == 0)
		return 0;
	for (int i = 0; i < errs.n && i < CONF_MAX_ERRORS; i++)
		fprintf(stderr, "%s\n", conf_error_format(&errs.list[i], line, sizeof(line)));
	if (errs.n > CONF_MAX_ERRORS)
		fprintf(stderr, "%s: %d more errors not shown\n", path, errs.n - CONF_MAX_ERRORS);
	return -1;
}

static const char *scenario_dir(const struct options *o)
{
	struct stat st;

	if (o->scenario_dir)
		return o->scenario_dir;
	if (stat(UNCORED_SCENARIO_INSTALL_DIR, &st) == 0 && S_ISDIR(st.st_mode))
		return UNCORED_SCENARIO_INSTALL_DIR;
	return UNCORED_SCENARIO_DIR;
}

/* Open the backend, detect the CPU and load the topology.  Returns 0 or -1 after logging. */
static int machine_open(const struct options *o, const struct conf *conf, struct machine *m)
{
	char err[512];
	int r;

	memset(m, 0, sizeof(*m));
	if (o->simulate) {
		struct sim *sim = sim_open(o->simulate, scenario_dir(o), SIM_CLOCK_REAL, err, sizeof(err));

		if (!sim) {
			log_error("--simulate '%s': %s", o->simulate, err);
			return -1;
		}
		sim_bind(sim, &m->hw);
	} else {
		r = hwdev_open(o->root ? o->root : conf->root, &m->hw, err, sizeof(err));
		if (r < 0) {
			log_error("%s", err);
			return -1;
		}
	}
	r = cpu_detect(&m->hw, &m->info, err, sizeof(err));
	if (r == 0)
		r = cpu_topology_load(&m->hw, &m->topo, err, sizeof(err));
	if (r < 0) {
		log_error("%s", err);
		hw_close(&m->hw);
		return -1;
	}
	log_info("cpu: %s family %u model 0x%x (%s), %d sockets, %d cpus, %s backend",
		 m->info.vendor, m->info.family, m->info.model, m->info.microarch,
		 m->topo.n_sockets, m->topo.n_cpus, m->hw.ops->name);
	return 0;
}

static void machine_close(struct machine *m)
{
	cpu_topology_free(&m->topo);
	hw_close(&m->hw);
}

/* Create the state file's directory (one level) if it is missing. */
static void make_parent_dir(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return;
	*slash = '\0';
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		log_debug("state file: cannot create %s: %s", dir, strerror(errno));
}

/*
 * Undo what a killed uncored left programmed and journal this run's
 * register changes to [daemon] state_file (SPEC §8).  Device backend only:
 * a simulated machine dies with the process.  Runs before the privilege
 * drop: the file is created and locked as root and kept open, and every
 * later append and the final emptying go through that descriptor, so the
 * unprivileged user needs no access to the file or its directory.  Returns
 * the state file, or NULL when running without one (logged).
 */
static struct ledger_file *journal_open(const struct options *o, const struct conf *conf,
					struct hw *hw)
{
	struct ledger_recovery rec;
	struct ledger_file *lf;
	char err[512] = "";

	if (o->simulate)
		return NULL;
	make_parent_dir(conf->state_file);
	if (ledger_file_open(conf->state_file, o->root ? o->root : conf->root, hw, &lf, &rec,
			     err, sizeof(err)) < 0) {
		log_warning("state file: %s; running without it, so registers left programmed by a "
			    "crash would not be cleaned up at the next start", err);
		return NULL;
	}
	if (rec.found)
		log_notice("state file %s: the previous uncored did not stop cleanly; cleaned up %u "
			   "registers it left programmed, left %u that another agent took over alone"
			   "%s", conf->state_file, rec.cleaned, rec.left,
			   rec.failed ? ", some could not be accessed" : "");
	pmu_set_journal(lf);
	return lf;
}

/* After every register is restored: stop journaling and empty the state file. */
static void journal_close(struct ledger_file *lf)
{
	if (!lf)
		return;
	pmu_set_journal(NULL);
	if (ledger_file_error(lf))
		log_warning("state file: a write failed (%s); the journal was incomplete",
			    strerror(-ledger_file_error(lf)));
	ledger_file_close(lf);
}

/* What each registered collector can count here, one block each. */
static int list_events(const struct options *o, const struct conf *conf)
{
	struct machine m;
	struct strbuf out;
	bool first = true;

	if (machine_open(o, conf, &m) < 0)
		return 1;
	strbuf_init(&out);
	strbuf_printf(&out, "%s family %u model 0x%x (%s)\n\n", m.info.vendor, m.info.family,
		      m.info.model, m.info.microarch);
	for (size_t i = 0; i < collector_registry_n; i++) {
		if (!collector_registry[i]->list_events)
			continue;
		if (!first)
			strbuf_append(&out, "\n");
		first = false;
		collector_registry[i]->list_events(&m.info, &out);
	}
	machine_close(&m);
	if (out.failed) {
		strbuf_free(&out);
		log_error("--list-events: out of memory");
		return 1;
	}
	fputs(out.buf, stdout);
	strbuf_free(&out);
	return 0;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/*
 * Turn the totals of s into counts over the interval since first (SPEC §5a:
 * for --once, counters cover its one interval).  Both are private to
 * --once by now: the sampler is gone and nothing else reads them.
 */
static void subtract_totals(struct snapshot *s, const struct snapshot *first)
{
	for (size_t i = 0; i < collector_registry_n; i++) {
		const struct collector_ops *ops = collector_registry[i];

		ops->add_totals(s, first, -1);
		snapshot_add_sample_totals(s, first, ops->families, ops->n_families, -1);
	}
}

static int print_once(enum once_format format, struct snapshot *first, struct snapshot *second)
{
	struct strbuf out;
	int r;

	strbuf_init(&out);
	if (format == ONCE_TEXT) {
		r = fmt_table_write(first, second, &out);
	} else {
		subtract_totals(second, first);
		r = format == ONCE_JSON ? fmt_json_snapshot(second, &out) : fmt_prom_write(second, &out);
		if (format == ONCE_JSON)
			strbuf_append(&out, "\n");
	}
	if (r == 0 && !out.failed)
		fwrite(out.buf, 1, out.len, stdout);
	strbuf_free(&out);
	return r == 0 ? 0 : 1;
}

static int run_once(const struct options *o, const struct conf *conf)
{
	struct machine m;
	struct sampler *sampler;
	struct snapshot *first, *second;
	struct ledger_file *journal;
	char err[512];
	int rc;

	if (machine_open(o, conf, &m) < 0)
		return 1;
	journal = journal_open(o, conf, &m.hw);
	if (sampler_new(conf, &m.hw, &m.info, &m.topo, &sampler, err, sizeof(err)) < 0) {
		log_error("%s", err);
		journal_close(journal);
		machine_close(&m);
		return 1;
	}
	first = sampler_sample(sampler);
	sleep_s(conf->interval_s);
	second = sampler_sample(sampler);
	sampler_free(sampler);   /* restores every register before anything is printed */
	journal_close(journal);
	rc = first && second ? print_once(o->format, first, second) : 1;
	snapshot_release(first);
	snapshot_release(second);
	snapshot_clear();
	machine_close(&m);
	return rc;
}

/* The daemon's running state, for the main loop. */
struct daemon {
	const struct options *opt;
	const char *conf_path;
	struct conf conf;
	struct machine machine;
	struct ledger_file *journal;
	struct sampler *sampler;
	struct http_server *http;
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

/* Take the socket systemd passed, or bind our own.  Returns the fd or -1. */
static int open_listener(struct daemon *d)
{
	char err[256];
	int fd, r = service_listen_fd(&fd, err, sizeof(err));

	if (r == 0) {
		log_info("http: using the socket passed by systemd, 'listen' is not used");
		return fd;
	}
	if (r != -ENOENT) {
		log_error("socket activation: %s", err);
		return -1;
	}
	r = http_bind(d->conf.listen, &fd, err, sizeof(err));
	if (r < 0) {
		log_error("%s", err);
		return -1;
	}
	return fd;
}

static int block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	/* Before any thread exists, so every thread inherits the mask. */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC);
}

static void send_status(void)
{
	struct snapshot *s = snapshot_acquire();
	int up = 0, enabled = 0;
	struct timespec now;

	if (!s)
		return;
	for (int i = 0; i < s->n_collectors; i++) {
		enabled += s->collectors[i].enabled;
		up += s->collectors[i].enabled && s->collectors[i].up;
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

static void reload(struct daemon *d)
{
	struct conf fresh;

	service_reloading();
	log_notice("reloading %s", d->conf_path ? d->conf_path : "(built-in defaults)");
	if (load_conf(d->opt, &fresh) < 0) {
		log_error("reload: configuration refused, the running one stays in force");
	} else {
		if (d->opt->listen)
			snprintf(fresh.listen, sizeof(fresh.listen), "%s", d->opt->listen);
		if (strcmp(fresh.listen, d->conf.listen) != 0)
			log_warning("reload: listen address change to '%s' needs a restart, ignoring",
				    fresh.listen);
		log_set_level((enum log_level)(LOG_LEVEL_ERROR + fresh.log_level));
		sampler_post_conf(d->sampler, &fresh);
		d->conf = fresh;
	}
	service_ready();
}

/* Wait for signals; feed the watchdog and refresh STATUS= between them. */
static void main_loop(struct daemon *d)
{
	uint64_t wd_usec = service_watchdog_interval_usec();
	int tick_ms = 1000;

	if (wd_usec && wd_usec / 2000 < (uint64_t)tick_ms)
		tick_ms = (int)(wd_usec / 2000);
	for (;;) {
		struct pollfd p = { .fd = d->signal_fd, .events = POLLIN };
		struct signalfd_siginfo si;

		if (poll(&p, 1, tick_ms) > 0 && read(d->signal_fd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGHUP) {
				reload(d);
				continue;
			}
			log_notice("received %s, stopping", strsignal((int)si.ssi_signo));
			return;
		}
		if (wd_usec)
			kick_watchdog(d);
		send_status();
	}
}

static struct http_server *start_http(struct daemon *d, int listen_fd)
{
	struct http_options ho = {
		.listen_fd = listen_fd,
		.max_connections = d->conf.max_connections,
		.max_connections_per_ip = d->conf.max_connections_per_ip,
		.request_timeout_s = d->conf.request_timeout_s,
		.max_header_bytes = d->conf.max_header_bytes,
		.interval_s = d->conf.interval_s,
		.assets = web_assets,
		.n_assets = web_n_assets,
	};
	char err[256];
	struct http_server *h = http_start(&ho, err, sizeof(err));

	if (!h)
		log_error("http: %s", err);
	return h;
}

static int run_daemon(const struct options *o, struct conf *conf)
{
	struct daemon d = { .opt = o, .conf = *conf, .signal_fd = -1 };
	struct snapshot *first;
	char err[512];
	int listen_fd, rc = 1;

	d.conf_path = o->config;
	if (machine_open(o, &d.conf, &d.machine) < 0)
		return 1;
	d.journal = journal_open(o, &d.conf, &d.machine.hw);
	listen_fd = open_listener(&d);
	if (listen_fd < 0)
		goto out_machine;
	d.signal_fd = block_signals();
	if (d.signal_fd < 0) {
		log_error("signals: %s", strerror(errno));
		goto out_listen;
	}
	/* Every msr fd is open and the socket bound: root is no longer needed. */
	if (privdrop_to_user(d.conf.user, err, sizeof(err)) < 0) {
		log_error("%s", err);
		goto out_listen;
	}
	if (sampler_new(&d.conf, &d.machine.hw, &d.machine.info, &d.machine.topo, &d.sampler,
			err, sizeof(err)) < 0) {
		log_error("%s", err);
		goto out_listen;
	}
	first = sampler_sample(d.sampler);
	snapshot_release(first);
	if (sampler_start(d.sampler) < 0) {
		log_error("sampler: cannot start its thread");
		goto out_sampler;
	}
	d.http = start_http(&d, listen_fd);
	if (!d.http)
		goto out_sampler;
	listen_fd = -1;   /* the server owns it now */
	d.last_progress_at = monotonic_s();
	log_notice("serving on %s, sampling every %g s", d.conf.listen, d.conf.interval_s);
	service_ready();
	send_status();

	main_loop(&d);

	service_stopping();
	rc = 0;
	http_stop(d.http);
out_sampler:
	sampler_free(d.sampler);   /* stops the thread and restores every register */
	snapshot_clear();
out_listen:
	if (listen_fd >= 0)
		close(listen_fd);
	if (d.signal_fd >= 0)
		close(d.signal_fd);
out_machine:
	journal_close(d.journal);
	machine_close(&d.machine);
	if (rc == 0)
		log_notice("stopped, every register restored");
	return rc;
}

int main(int argc, char **argv)
{
	struct options o;
	struct conf conf;
	int r;

	log_init();
	r = parse_args(argc, argv, &o);
	if (r)
		return r;
	switch (o.mode) {
	case MODE_VERSION:
		printf("uncored %s\n", UNCORED_VERSION);
		return 0;
	case MODE_HELP:
		usage(stdout);
		return 0;
	default:
		break;
	}
	if (load_conf(&o, &conf) < 0)
		return 1;
	if (o.mode == MODE_CHECK_CONFIG) {
		printf("%s: configuration ok\n", o.config);
		return 0;
	}
	if (o.listen)
		snprintf(conf.listen, sizeof(conf.listen), "%s", o.listen);
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
