/*
 * The command line: which mode uncored runs in and with what overrides,
 * and the configuration file it loads.  Prints usage errors itself.
 */
#ifndef UNCORED_CLI_H
#define UNCORED_CLI_H

#include <stdbool.h>

#include <stdio.h>

#include "conf.h"

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
	bool verbose;             /* --once text: every series and core row (table_write_brief) */
	const char *config;       /* NULL: the default file, if it exists */
	const char *simulate;     /* MODEL[:SCENARIO] */
	const char *root;         /* overrides [daemon] root */
	const char *listen;       /* overrides [daemon] listen */
	const char *scenario_dir;
	const char *model;        /* --list-events --model NAME */
};


/*
 * Print the usage text to f: the simulated models, and the scenarios of
 * scenarios, the directory where scenario names are looked up.
 */
void usage(FILE *f, const char *scenarios);

/* Parse argv into o.  Returns 0, or EXIT_USAGE after printing why. */
int parse_args(int argc, char **argv, struct options *o);

/* Load the configuration o names (or the default file, or defaults); print every error.  Returns 0 or -1. */
int load_conf(const struct options *o, struct conf *conf);

/* The configuration file in use: --config, else the default file if it exists, else NULL. */
const char *conf_path(const struct options *o);

/* Where scenario names are looked up: --scenario-dir, else the installed directory, else the source tree's. */
const char *scenario_dir(const struct options *o);

#endif
