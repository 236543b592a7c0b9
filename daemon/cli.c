/*
 * The command line: options, modes, usage, and the configuration file they
 * name (cli.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "sim.h"

void usage(FILE *f, const char *scenarios)
{
	char *names[SIM_MAX_SCENARIOS];
	int n;

	fprintf(f,
		"usage: uncored [--config FILE] [--simulate MODEL[:SCENARIO]] [--root DIR] [--listen ADDR:PORT]\n"
		"       uncored --once [--json | --format text|json|prometheus] [--verbose] [same options]\n"
		"       uncored --check-config FILE\n"
		"       uncored --list-events [--model NAME | --simulate MODEL]\n"
		"       uncored --version | --help\n"
		"\n"
		"Watches Intel Xeon and AMD EPYC servers for heat (uncore and core PMU\n"
		"counters, thermal registers, HSMP, k10temp) and serves the counts over HTTP\n"
		"for Prometheus.  Without --simulate it needs root, and on Intel the msr\n"
		"driver ('modprobe msr').\n"
		"\n"
		"  -c, --config FILE        configuration file (default " DEFAULT_CONFIG ")\n"
		"  -s, --simulate SPEC      run on simulated hardware; models:");
	for (const char *const *m = sim_model_names(); *m; m++)
		fprintf(f, " %s", *m);
	fprintf(f, "\n                           scenarios in %s:", scenarios);
	n = sim_scenario_names(scenarios, names, SIM_MAX_SCENARIOS);
	for (int i = 0; i < n; i++) {
		fprintf(f, " %s", names[i]);
		free(names[i]);
	}
	fprintf(f, "%s\n"
		"      --scenario-dir DIR   where scenario names are looked up\n"
		"      --root DIR           prefix for /dev/cpu and /sys (testing)\n"
		"      --listen ADDR:PORT   listen address, overrides the configuration\n"
		"      --once               take two samples one interval apart, print, exit\n"
		"      --json               with --once: print the JSON snapshot\n"
		"      --format FMT         with --once: text (default), json or prometheus\n"
		"      --verbose            with --once: every series and core, not only what is non-zero\n"
		"      --check-config FILE  validate a configuration file and exit 0 or 1\n"
		"      --list-events        print the events the configuration accepts for this\n"
		"                           CPU, or for --model, and exit (no privilege needed)\n"
		"      --model NAME         with --list-events: a CPU model (westmere-ep,\n"
		"                           skylake-sp, ...) or a simulated model\n"
		"  -V, --version            print the version and exit\n"
		"  -h, --help               print this help and exit\n",
		n ? "" : " none");
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
int parse_args(int argc, char **argv, struct options *o)
{
	enum { OPT_ROOT = 256, OPT_LISTEN, OPT_ONCE, OPT_JSON, OPT_FORMAT, OPT_CHECK, OPT_LIST,
	       OPT_SCENARIO_DIR, OPT_MODEL, OPT_VERBOSE };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "simulate", required_argument, NULL, 's' },
		{ "root", required_argument, NULL, OPT_ROOT },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "scenario-dir", required_argument, NULL, OPT_SCENARIO_DIR },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "verbose", no_argument, NULL, OPT_VERBOSE },
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
		case OPT_VERBOSE: o->verbose = true; break;
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
int load_conf(const struct options *o, struct conf *conf)
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
const char *conf_path(const struct options *o)
{
	if (o->config)
		return o->config;
	return access(DEFAULT_CONFIG, F_OK) == 0 ? DEFAULT_CONFIG : NULL;
}

const char *scenario_dir(const struct options *o)
{
	struct stat st;

	if (o->scenario_dir)
		return o->scenario_dir;
	if (stat(UNCORED_SCENARIO_INSTALL_DIR, &st) == 0 && S_ISDIR(st.st_mode))
		return UNCORED_SCENARIO_INSTALL_DIR;
	return UNCORED_SCENARIO_DIR;
}
