/*
 * uncored: command line, start-up order, main loop and teardown.
 *
 * This is the only file that knows the whole start-up sequence and the only
 * one that chooses the hardware backend (device files or simulation).  The
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
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "collector.h"
#include "conf_check.h"
#include "conf_file.h"
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
#include "hwopen.h"
#include "listen_addr.h"
#include "instance.h"
#include "log.h"
#include "perf_sys.h"
#include "perf_sys_linux.h"
#include "pmu.h"
#include "privdrop.h"
#include "privsep.h"
#include "sampler.h"
#include "service.h"
#include "sim.h"
#include "snapshot.h"
#include "strbuf.h"
#include "web_assets.h"

#define DEFAULT_CONFIG UNCORED_SYSCONFDIR "/uncored.conf"
#define EXIT_USAGE 2
/* Not 1, which the unit takes for a refused start and does not restart. */
#define EXIT_SERVER_DIED 3
/* Stopped, but registers could not be restored (their CPU offline); the state file keeps them. */
#define EXIT_NOT_RESTORED 4

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
	const char *model;        /* --list-events --model NAME */
};

struct machine {
	struct hw hw;
	struct sim *sim;          /* the simulated machine behind hw, or NULL */
	struct cpu_info info;
	struct cpu_topology topo;
};

static void usage(FILE *f, const char *scenarios)
{
	fprintf(f,
		"usage: uncored [--config FILE] [--simulate MODEL[:SCENARIO]] [--root DIR] [--listen ADDR:PORT]\n"
		"       uncored --once [--json | --format text|json|prometheus] [same options]\n"
		"       uncored --check-config FILE\n"
		"       uncored --list-events [--model NAME | --simulate MODEL]\n"
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
		"      --list-events        print the events the configuration accepts for this\n"
		"                           CPU, or for --model, and exit (no privilege needed)\n"
		"      --model NAME         with --list-events: a CPU model (westmere-ep,\n"
		"                           skylake-sp, ...) or a simulated model\n"
		"  -V, --version            print the version and exit\n"
		"  -h, --help               print this help and exit\n",
		scenarios);
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

/* A usage error: one line, and where to read more.  Returns EXIT_USAGE. */
static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("uncored: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; see 'uncored --help'\n", stderr);
	return EXIT_USAGE;
}

/* The option word of mode, for messages. */
static const char *mode_option(enum mode m)
{
	static const char *const names[] = {
		[MODE_DAEMON] = "", [MODE_ONCE] = "--once", [MODE_CHECK_CONFIG] = "--check-config",
		[MODE_LIST_EVENTS] = "--list-events", [MODE_VERSION] = "--version", [MODE_HELP] = "--help",
	};
	return names[m];
}

/* Switch to mode m; a second, different mode is a usage error. */
static int set_mode(struct options *o, enum mode m)
{
	if (o->mode != MODE_DAEMON && o->mode != m)
		return usage_error("%s and %s cannot be used together", mode_option(o->mode),
				   mode_option(m));
	o->mode = m;
	return 0;
}

/* Returns 0, or EXIT_USAGE after printing why. */
static int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_ROOT = 256, OPT_LISTEN, OPT_ONCE, OPT_JSON, OPT_FORMAT, OPT_CHECK, OPT_LIST,
	       OPT_SCENARIO_DIR, OPT_MODEL };
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
		{ "model", required_argument, NULL, OPT_MODEL },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char format_option[80] = "";    /* the first --json / --format given, for conflicts */
	enum once_format format;
	int c, r = 0;

	memset(o, 0, sizeof(*o));
	opterr = 0;   /* our own one-line messages, without argv[0]'s path */
	while (r == 0 && (c = getopt_long(argc, argv, ":c:s:Vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': o->config = optarg; break;
		case 's': o->simulate = optarg; break;
		case OPT_ROOT: o->root = optarg; break;
		case OPT_LISTEN: o->listen = optarg; break;
		case OPT_SCENARIO_DIR: o->scenario_dir = optarg; break;
		case OPT_MODEL: o->model = optarg; break;
		case OPT_ONCE: r = set_mode(o, MODE_ONCE); break;
		case OPT_JSON:
		case OPT_FORMAT: {
			char given[80];

			if (c == OPT_JSON)
				format = ONCE_JSON;
			else if (parse_format(optarg, &format) < 0)
				return usage_error("--format: expected text, json or prometheus, got '%s'",
						   optarg);
			snprintf(given, sizeof(given), "%s%s%s", c == OPT_JSON ? "--json" : "--format",
				 c == OPT_JSON ? "" : " ", c == OPT_JSON ? "" : optarg);
			if (format_option[0] && format != o->format)
				return usage_error("%s and %s ask for different outputs", format_option,
						   given);
			snprintf(format_option, sizeof(format_option), "%s", given);
			o->format = format;
			break;
		}
		case OPT_CHECK:
			r = set_mode(o, MODE_CHECK_CONFIG);
			o->config = optarg;
			break;
		case OPT_LIST: r = set_mode(o, MODE_LIST_EVENTS); break;
		case 'V': r = set_mode(o, MODE_VERSION); break;
		case 'h': r = set_mode(o, MODE_HELP); break;
		case ':':
			return usage_error("%s needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (r)
		return r;
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (format_option[0] && o->mode != MODE_ONCE)
		return usage_error("%s goes with --once", format_option);
	if (o->model && o->mode != MODE_LIST_EVENTS)
		return usage_error("--model goes with --list-events");
	if (o->model && o->simulate)
		return usage_error("--model and --simulate both name the machine; give one");
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

/* The configuration file in use: --config, else the default file if it exists, else NULL. */
static const char *conf_path(const struct options *o)
{
	if (o->config)
		return o->config;
	return access(DEFAULT_CONFIG, F_OK) == 0 ? DEFAULT_CONFIG : NULL;
}

/* The checks of what that failed on conf, printed; conf holds the command-line overrides. */
static int print_check_errors(const struct options *o, const struct conf *conf, unsigned what,
			      bool to_log)
{
	struct conf_errors errs = { 0 };
	unsigned from_options = (o->listen ? CONF_CHECK_LISTEN : 0) | (o->root ? CONF_CHECK_ROOT : 0);
	char line[600];
	int n = conf_check(conf, conf_path(o), what, from_options, &errs);

	for (int i = 0; i < errs.n && i < CONF_MAX_ERRORS; i++) {
		conf_error_format(&errs.list[i], line, sizeof(line));
		if (to_log)
			log_error("%s; refusing to start", line);
		else
			fprintf(stderr, "%s\n", line);
	}
	return n;
}

/*
 * --check-config: every start-up check that needs neither the socket nor
 * the hardware, then what it could not check.  Returns the exit status.
 */
static int check_config(const struct options *o, struct conf *conf)
{
	const char *root = o->root ? o->root : conf->root;

	if (o->root)
		snprintf(conf->root, sizeof(conf->root), "%s", o->root);
	if (print_check_errors(o, conf, CONF_CHECK_ALL, false) > 0)
		return 1;
	printf("%s: configuration ok\n", o->config);
	printf("%s: not checked: whether %s is free (start-up binds it, unless systemd passes "
	       "the socket)\n", o->config, conf->listen);
	printf("%s: not checked: the CPU and its msr and cpuid devices under %s (start-up opens "
	       "them)\n", o->config, root);
	printf("%s: not checked: whether another uncored holds the machine or %s (start-up takes "
	       "their locks)\n", o->config, conf->state_file);
	return 0;
}

/*
 * Start-up's own run of the checks, before any register is touched: what
 * a mode uses (root and the state file on the device backend; the user
 * when it will drop to it; the listen address unless systemd passes the
 * socket).  Returns 0, or -1 after logging each failure.
 */
static int check_at_start(const struct options *o, const struct conf *conf, bool daemon)
{
	struct conf c = *conf;
	unsigned what = 0;

	if (!o->simulate)
		what |= CONF_CHECK_ROOT | CONF_CHECK_STATE_FILE;
	if (daemon && geteuid() == 0)
		what |= CONF_CHECK_USER;
	if (daemon && !getenv("LISTEN_FDS"))
		what |= CONF_CHECK_LISTEN;
	if (o->root)
		snprintf(c.root, sizeof(c.root), "%s", o->root);
	return print_check_errors(o, &c, what, true) > 0 ? -1 : 0;
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

/*
 * The real kernel's perf_event interface beside the device files, its PMU
 * tree under the same root.  Opens nothing.  Returns 0 or -1 after logging.
 */
static int attach_linux_perf(struct hw *hw, const char *root)
{
	struct perf_sys *ps = calloc(1, sizeof(*ps));

	if (!ps || perf_sys_linux_init(ps, root) < 0) {
		free(ps);
		log_error("perf: out of memory");
		return -1;
	}
	hw_set_perf(hw, ps);
	return 0;
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
		m->sim = sim;
		/* The simulator's kernel: the collectors count through it as through Linux. */
		if (sim_attach_perf(sim, &m->hw, err, sizeof(err)) < 0) {
			log_error("--simulate '%s': %s", o->simulate, err);
			hw_close(&m->hw);
			return -1;
		}
	} else {
		r = hwdev_open(o->root ? o->root : conf->root, &m->hw, err, sizeof(err));
		if (r < 0) {
			const char *path = conf_path(o);
			char where[4400];

			/* Located when root was chosen (the default "/" is the machine itself). */
			if (o->root || (path && conf_file_key_line(path, "daemon", "root") > 0))
				log_error("%s: %s", conf_check_where(path, "root", o->root != NULL, where,
								     sizeof(where)), err);
			else
				log_error("%s", err);
			return -1;
		}
		if (attach_linux_perf(&m->hw, o->root ? o->root : conf->root) < 0) {
			hw_close(&m->hw);
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

/* Log what recovery found damaged or refused in the state file. */
static void log_damage(const char *path, const struct ledger_recovery *rec)
{
	if (rec->header_damaged)
		log_error("state file %s: its header is damaged; replayed the records whose checksums "
			  "hold, as this machine's", path);
	if (rec->damaged)
		log_error("state file %s: %u damaged records (the first on line %u) could not be read; "
			  "the registers they describe may still hold what the previous uncored wrote",
			  path, rec->damaged, rec->first_damaged_line);
	if (rec->refused)
		log_error("state file %s: %u records name registers uncored never changes (the first: "
			  "cpu %d MSR 0x%x); not replayed", path, rec->refused, rec->refused_cpu,
			  rec->refused_msr);
	if (rec->kept)
		log_notice("state file %s: the damaged file is kept as %s.damaged", path, path);
}

/* Each register recovery could not reach: it stays in the state file until it can be. */
static void log_left_found(struct ledger_file *lf, const char *path)
{
	const struct ledger_record *v;
	const int *errs;
	size_t n = ledger_file_left(lf, &v, &errs);

	for (size_t i = 0; i < n; i++)
		log_warning("state file %s: cpu %d MSR 0x%x could not be restored yet: %s; kept, and "
			    "put back when its CPU comes online", path, v[i].cpu, v[i].msr,
			    hw_hint(errs[i], HW_OP_WRITE));
}

/*
 * Undo what a killed uncored left programmed and journal this run's
 * register changes to [daemon] state_file (SPEC §8).  Device backend only:
 * a simulated machine dies with the process.  Runs before the privilege
 * drop: the file is created and locked as root and kept open, and every
 * later append and the final emptying go through that descriptor, so the
 * unprivileged user needs no access to the file or its directory.  Sets
 * *ret_lf to the state file, or NULL when running without one (logged).
 * Returns -1 after logging when start-up must stop: a file or directory
 * that is not trusted, a file that is not a state file, a file in use.
 */
static int journal_open(const struct options *o, const struct conf *conf, struct hw *hw,
			struct ledger_file **ret_lf)
{
	struct ledger_recovery rec;
	struct ledger_file *lf;
	char err[512] = "", where[4400];
	int r;

	*ret_lf = NULL;
	if (o->simulate)
		return 0;
	make_parent_dir(conf->state_file);
	r = ledger_file_open(conf->state_file, o->root ? o->root : conf->root, hw, &lf, &rec,
			     err, sizeof(err));
	if (r == -EPERM || r == -EBADMSG || r == -EBUSY) {
		log_error("%s: %s; refusing to start",
			  conf_check_where(conf_path(o), "state_file", 0, where, sizeof(where)), err);
		return -1;
	}
	if (r < 0) {
		log_warning("%s: %s; running without it, so registers left programmed by a "
			    "crash would not be cleaned up at the next start",
			    conf_check_where(conf_path(o), "state_file", 0, where, sizeof(where)), err);
		return 0;
	}
	log_damage(conf->state_file, &rec);
	if (rec.found)
		log_notice("state file %s: the previous uncored did not stop cleanly; cleaned up %u "
			   "registers it left programmed, left %u that another agent took over alone",
			   conf->state_file, rec.cleaned, rec.left);
	log_left_found(lf, conf->state_file);
	pmu_set_journal(lf);
	*ret_lf = lf;
	return 0;
}

/*
 * After the collectors have stopped: log every register that could not be
 * restored, stop journaling, and empty the state file, or keep it when
 * registers were left so that the next start (or the CPU coming back
 * online, while it runs) finishes the job.  Returns how many were left.
 */
static size_t journal_close(struct ledger_file *lf, const char *path)
{
	const struct ledger_record *v;
	const int *errs;
	size_t n = pmu_left(&v, &errs);

	for (size_t i = 0; i < n; i++) {
		char what[64];

		if (v[i].kind == LEDGER_BITS)
			snprintf(what, sizeof(what), "uncored's bits 0x%llx",
				 (unsigned long long)v[i].bits);
		else
			snprintf(what, sizeof(what), "original value 0x%llx",
				 (unsigned long long)v[i].original);
		log_error("cpu %d MSR 0x%x: not restored (%s): %s; %s%s", v[i].cpu, v[i].msr, what,
			  hw_hint(errs[i], HW_OP_WRITE),
			  lf ? "kept in the state file " : "there is no state file to keep it",
			  lf ? path : "");
	}
	if (!lf)
		return n;
	pmu_set_journal(NULL);
	if (ledger_file_error(lf))
		log_warning("state file: a write failed (%s); the journal was incomplete",
			    strerror(-ledger_file_error(lf)));
	if (n)
		ledger_file_keep(lf);
	else
		ledger_file_close(lf);
	return n;
}

/* The last line of a stop: every register restored, or how many were not. */
static int log_stopped(size_t n_left, bool has_journal, int rc)
{
	if (n_left) {
		log_error("stopped; %zu registers could not be restored%s", n_left,
			  has_journal ? " and stay in the state file: the next start, or their CPU "
			  "coming back online while uncored runs, puts them back" : "");
		return rc ? rc : EXIT_NOT_RESTORED;
	}
	if (rc == 0)
		log_notice("stopped, every register restored");
	return rc;
}

/* What each registered collector can count here, one block each. */
/* Whether name is one of the simulator's models. */
static bool is_sim_model(const char *name)
{
	for (const char *const *m = sim_model_names(); *m; m++)
		if (strcmp(*m, name) == 0)
			return true;
	return false;
}

/*
 * The CPU --list-events describes, and where that came from: --model (a
 * model of the table, or a simulated one), --simulate, else the machine:
 * CPUID through the cpuid device when it can be read, or /proc/cpuinfo,
 * which needs no privilege and no msr driver.
 */
static int list_events_cpu(const struct options *o, const struct conf *conf,
			   struct cpu_info *ret_info, const char **ret_source)
{
	struct options sim = *o;
	struct machine m;
	char err[512];

	if (o->model && !is_sim_model(o->model)) {
		*ret_source = "the model table";
		if (cpu_info_for_name(o->model, ret_info, err, sizeof(err)) == 0)
			return 0;
		fprintf(stderr, "uncored: --model: %s (or a simulated model:", err);
		for (const char *const *n = sim_model_names(); *n; n++)
			fprintf(stderr, " %s", *n);
		fputs(")\n", stderr);
		return -1;
	}
	if (o->model)
		sim.simulate = o->model;
	if (sim.simulate || o->root) {
		if (machine_open(&sim, conf, &m) < 0)
			return -1;
		*ret_info = m.info;
		*ret_source = sim.simulate ? "simulated" : "CPUID";
		machine_close(&m);
		return 0;
	}
	if (hwdev_open(conf->root, &m.hw, err, sizeof(err)) == 0) {
		int r = cpu_detect(&m.hw, ret_info, err, sizeof(err));

		hw_close(&m.hw);
		if (r == 0) {
			*ret_source = "CPUID";
			return 0;
		}
	}
	*ret_source = "/proc/cpuinfo";
	if (cpu_info_from_cpuinfo("/proc/cpuinfo", ret_info, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "uncored: %s\n", err);
	return -1;
}

static int list_events(const struct options *o, const struct conf *conf)
{
	struct cpu_info info;
	const char *source;
	struct strbuf out;
	bool first = true;

	if (list_events_cpu(o, conf, &info, &source) < 0)
		return 1;
	strbuf_init(&out);
	strbuf_printf(&out, "%s family %u model 0x%x (%s), from %s\n\n", info.vendor, info.family,
		      info.model, info.microarch, source);
	for (size_t i = 0; i < collector_registry_n; i++) {
		if (!collector_registry[i]->list_events)
			continue;
		if (!first)
			strbuf_append(&out, "\n");
		first = false;
		collector_registry[i]->list_events(&info, &out);
	}
	if (out.failed) {
		strbuf_free(&out);
		fputs("uncored: --list-events: out of memory\n", stderr);
		return 1;
	}
	fputs(out.buf, stdout);
	strbuf_free(&out);
	return 0;
}

/*
 * Every signal whose default action ends the process and that is sent
 * rather than caused by a fault is received through a signalfd, so the
 * process ends through the restore path: SIGHUP (a reload for the
 * daemon), SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU,
 * SIGVTALRM, SIGPROF, SIGIO, SIGPWR, SIGSTKFLT and the real-time signals.
 * SIGPIPE (a log line once stderr's reader is gone, a client gone) and
 * SIGXFSZ (a file size limit) are ignored: the write then fails with
 * EPIPE or EFBIG, which the writer handles.  Faults (SIGSEGV, SIGBUS,
 * SIGILL, SIGFPE, SIGABRT, SIGSYS, SIGTRAP) cannot be deferred and leave
 * the registers to the next start's recovery.
 */
static const int stop_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGALRM, SIGXCPU, SIGVTALRM,
	SIGPROF, SIGIO, SIGPWR, SIGSTKFLT,
};

/* Ignore the signals a failed write raises.  First thing in main. */
static void ignore_write_signals(void)
{
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
}

/* Block every stop signal and return a signalfd for them, or -1. */
static int block_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaddset(&set, stop_signals[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(&set, sig);
	/* Before any thread exists, so every thread inherits the mask. */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL) != 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC);
}

/*
 * Sleep s seconds unless a stop signal arrives on signal_fd first.
 * Returns 0, or the signal's number.
 */
static int sleep_or_signal(int signal_fd, double s)
{
	struct timespec end, now;
	struct signalfd_siginfo si;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)s;
	end.tv_nsec += (long)((s - floor(s)) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	for (;;) {
		struct pollfd p = { .fd = signal_fd, .events = POLLIN };
		double left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (double)(end.tv_sec - now.tv_sec) + (double)(end.tv_nsec - now.tv_nsec) / 1e9;
		if (left <= 0)
			return 0;
		if (poll(&p, 1, (int)ceil(left * 1000)) > 0 &&
		    read(signal_fd, &si, sizeof(si)) == sizeof(si))
			return (int)si.ssi_signo;
	}
}

/*
 * Take the machine's instance lock (device backend only).  Returns the
 * lock fd, -2 for none needed, or -1 after logging a refusal.
 */
static int lock_instance(const struct options *o, const struct conf *conf)
{
	char err[512];
	int fd;

	if (o->simulate)
		return -2;
	fd = instance_lock(o->root ? o->root : conf->root, err, sizeof(err));
	if (fd == -EBUSY) {
		log_error("%s", err);
		return -1;
	}
	return fd < 0 ? -2 : fd;   /* no dev/cpu: the backend says so */
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

		snapshot_add_sample_totals(s, first, ops->families, ops->n_families,
					   collector_source(ops), -1);
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
	int rc, sig, signal_fd, lock_fd;
	size_t n_left;

	if (check_at_start(o, conf, false) < 0)
		return 1;
	signal_fd = block_signals();
	lock_fd = lock_instance(o, conf);
	if (signal_fd < 0 || lock_fd == -1)
		return 1;
	if (machine_open(o, conf, &m) < 0)
		return 1;
	if (journal_open(o, conf, &m.hw, &journal) < 0) {
		machine_close(&m);
		return 1;
	}
	if (sampler_new(conf, &m.hw, &m.info, &m.topo, &sampler, err, sizeof(err)) < 0) {
		log_error("%s", err);
		journal_close(journal, conf->state_file);
		machine_close(&m);
		return 1;
	}
	if (o->format == ONCE_TEXT)
		sampler_quiet_episodes(sampler);   /* the table lists them */
	first = sampler_sample(sampler);
	sig = sleep_or_signal(signal_fd, conf->interval_s);
	second = sig ? NULL : sampler_sample(sampler);
	sampler_free(sampler);   /* restores every register before anything is printed */
	if (sig)
		log_notice("received SIG%s, stopping", sigabbrev_np(sig));
	n_left = journal_close(journal, conf->state_file);
	rc = first && second ? print_once(o->format, first, second) : 1;
	if (n_left)
		rc = log_stopped(n_left, journal != NULL, rc);
	snapshot_release(first);
	snapshot_release(second);
	snapshot_clear();
	machine_close(&m);
	close(signal_fd);
	if (lock_fd >= 0)
		close(lock_fd);
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
	RESTART_KEY("state_file", state_file, true),
	RESTART_KEY("max_connections", max_connections, false),
	RESTART_KEY("max_connections_per_ip", max_connections_per_ip, false),
	RESTART_KEY("request_timeout", request_timeout_s, false),
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

	service_reloading();
	log_notice("reloading %s", d->conf_path ? d->conf_path : "(built-in defaults)");
	if (load_conf(d->opt, &fresh) < 0) {
		log_error("reload: configuration refused, the running one stays in force");
	} else {
		if (d->opt->listen)
			snprintf(fresh.listen, sizeof(fresh.listen), "%s", d->opt->listen);
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
static void main_loop(struct daemon *d)
{
	uint64_t wd_usec = service_watchdog_interval_usec();
	int tick_ms = 1000;

	if (wd_usec && wd_usec / 2000 < (uint64_t)tick_ms)
		tick_ms = (int)(wd_usec / 2000);
	for (;;) {
		struct pollfd p[2] = { { .fd = d->signal_fd, .events = POLLIN },
				       { .fd = privsep_fd(d->server), .events = POLLIN } };
		struct signalfd_siginfo si;
		int n = poll(p, 2, tick_ms);

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
		if (wd_usec && privsep_alive(d->server))   /* and only while the server lives */
			kick_watchdog(d);
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
		.max_header_bytes = d->conf.max_header_bytes,
		.interval_s = d->conf.interval_s,
		.assets = web_assets,
		.n_assets = web_n_assets,
	};
	char err[256];

	if (privsep_start(&ho, d->conf.user, &d->server, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return -1;
	}
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
	return r < 0 ? r : 0;
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
	if (lock_fd == -1 || machine_open(o, &d.conf, &d.machine) < 0) {
		close(d.signal_fd);
		return 1;
	}
	if (journal_open(o, &d.conf, &d.machine.hw, &d.journal) < 0)
		goto out_machine;
	listen_fd = open_listener(&d, listening, sizeof(listening));
	if (listen_fd < 0)
		goto out_machine;
	/* Before any thread starts: the server gets the socket and nothing else. */
	if (start_server(&d, listen_fd) < 0)
		goto out_listen;
	close(listen_fd);
	listen_fd = -1;
	snapshot_set_publish_hook(privsep_publish, d.server);
	/* A CPU that comes online later needs its devices opened: the opener keeps that right. */
	if (!o->simulate && privdrop_will_drop(d.conf.user)) {
		if (hwopen_start(o->root ? o->root : d.conf.root, &d.opener, err, sizeof(err)) < 0) {
			log_error("%s", err);
			goto out_listen;
		}
		hwdev_set_opener(&d.machine.hw, hwopen_open, d.opener);
	}
	/*
	 * The collectors start as root, after the fork (the server holds none
	 * of their fds): perf events are opened with every privilege they may
	 * need, whatever the kernel's perf_event_paranoid.
	 */
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
	if (listen_fd >= 0)
		close(listen_fd);
	if (d.server) {
		char how[160];

		if (!privsep_stop(d.server, how, sizeof(how)) && rc == 0)
			log_warning("server process: %s", how);
		else if (rc != 0)
			log_notice("server process %s", how);
	}
out_machine:
	n_left = journal_close(d.journal, d.conf.state_file);
	machine_close(&d.machine);
	close(d.signal_fd);
	if (lock_fd >= 0)
		close(lock_fd);
	return log_stopped(n_left, d.journal != NULL, rc);
}

int main(int argc, char **argv)
{
	struct options o;
	struct conf conf;
	int r;

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
