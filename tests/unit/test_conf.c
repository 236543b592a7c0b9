/*
 * Unit tests of the configuration parser: defaults, the shipped file, a
 * file setting every key, and one bad input per kind of mistake with the
 * exact "FILE:LINE: key: message" the operator will read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conf.h"
#include "fake_machines.h"
#include "helpers.h"
#include "sample_views.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static struct conf conf;
static struct conf_errors errs;

static const char *first_error(void)
{
	static char buf[640];

	assert_true(errs.n > 0);
	return conf_error_format(&errs.list[0], buf, sizeof(buf));
}

static void print_errors(void)
{
	char buf[640];

	for (int i = 0; i < errs.n && i < CONF_MAX_ERRORS; i++)
		print_message("%s\n", conf_error_format(&errs.list[i], buf, sizeof(buf)));
}

static void assert_default_values(const struct conf *c)
{
	assert_string_equal(c->listen, "127.0.0.1:9796");
	assert_true(c->interval_s == 1.0);
	assert_string_equal(c->root, "/");
	assert_string_equal(c->user, "uncored");
	assert_int_equal(c->log_level, CONF_LOG_NOTICE);
	assert_int_equal(c->max_connections, 64);
	assert_int_equal(c->max_connections_per_ip, 8);
	assert_int_equal(c->request_timeout_s, 10);
	assert_int_equal(c->max_header_bytes, 8192);
	assert_int_equal(c->max_episodes, 256);
	assert_string_equal(c->state_file, "/run/uncored/ledger");
	assert_true(uncore_settings_in(c)->enabled);
	assert_true(uncore_settings_in(c)->default_events);
	assert_int_equal(uncore_settings_in(c)->on_conflict, CONF_CONFLICT_YIELD);
	assert_int_equal(uncore_settings_in(c)->n_events, 0);
	assert_true(conf_setting_is(c, "thermal", "enabled"));
	assert_true(conf_setting_is(c, "thermal", "rapl"));
	assert_true(conf_setting_is(c, "thermal", "kernel_counts"));
	assert_true(core_settings_in(c)->enabled);
	assert_true(core_settings_in(c)->default_events);
	assert_int_equal(core_settings_in(c)->on_conflict, CONF_CONFLICT_YIELD);
	assert_int_equal(core_settings_in(c)->per, 0);   /* cpu */
	assert_int_equal(core_settings_in(c)->engine, CONF_ENGINE_AUTO);
	assert_int_equal(uncore_settings_in(c)->engine, CONF_ENGINE_AUTO);
	assert_int_equal(core_settings_in(c)->n_events, 0);
}

static void defaults(void **state)
{
	(void)state;
	memset(&conf, 0xaa, sizeof(conf));
	conf_defaults(&conf);
	assert_default_values(&conf);
}

static void empty_file_means_defaults(void **state)
{
	(void)state;
	assert_int_equal(conf_load_string("t.conf", "", &conf, &errs), 0);
	assert_int_equal(errs.n, 0);
	assert_default_values(&conf);
	assert_int_equal(conf_load_string("t.conf", "# nothing\n[daemon]\n\n[core]\n", &conf, &errs), 0);
	assert_default_values(&conf);
}

static void shipped_config_parses(void **state)
{
	char path[4096];

	(void)state;
	helpers_source_path("conf/uncored.conf", path, sizeof(path));
	if (conf_load(path, &conf, &errs) != 0)
		print_errors();
	assert_int_equal(errs.n, 0);
	/* SPEC §6: the shipped file listens on every address; the rest are defaults. */
	assert_string_equal(conf.listen, "[::]:9796");
	strcpy(conf.listen, "127.0.0.1:9796");
	assert_default_values(&conf);
}

static void every_key_parses(void **state)
{
	char path[4096];

	(void)state;
	helpers_source_path("tests/data/conf/all-keys.conf", path, sizeof(path));
	if (conf_load(path, &conf, &errs) != 0)
		print_errors();
	assert_int_equal(errs.n, 0);
	assert_string_equal(conf.listen, "[2001:db8::1]:9100");
	assert_true(conf.interval_s == 0.25);
	assert_string_equal(conf.root, "/srv/fake-root");
	assert_string_equal(conf.user, "");
	assert_int_equal(conf.log_level, CONF_LOG_DEBUG);
	assert_int_equal(conf.max_connections, 10000);
	assert_int_equal(conf.max_connections_per_ip, 1);
	assert_int_equal(conf.request_timeout_s, 300);
	assert_int_equal(conf.max_header_bytes, 1024);
	assert_int_equal(conf.max_episodes, 10000);
	assert_false(uncore_settings_of(&conf)->enabled);
	assert_false(uncore_settings_of(&conf)->default_events);
	assert_int_equal(uncore_settings_of(&conf)->on_conflict, CONF_CONFLICT_RECLAIM);
	assert_int_equal(uncore_settings_of(&conf)->n_events, 2);
	assert_string_equal(uncore_settings_of(&conf)->events[0].spec.name, "thermal_throttling_prochot_core0");
	assert_int_equal(uncore_settings_of(&conf)->events[0].line, 18);
	assert_string_equal(uncore_settings_of(&conf)->events[1].spec.name, "dram_pre_all");
	assert_int_equal(uncore_settings_of(&conf)->events[1].spec.code, 0x66);
	assert_int_equal(uncore_settings_of(&conf)->events[1].spec.umask, 0x07);
	assert_int_equal(uncore_settings_of(&conf)->events[1].spec.cmask, 2);
	assert_true(uncore_settings_of(&conf)->events[1].spec.edge);
	assert_true(uncore_settings_of(&conf)->events[1].spec.inv);
	assert_int_equal(uncore_settings_of(&conf)->events[1].line, 19);
	assert_false(conf_setting_is(&conf, "thermal", "enabled"));
	assert_false(conf_setting_is(&conf, "thermal", "rapl"));
	assert_false(conf_setting_is(&conf, "thermal", "kernel_counts"));
	assert_true(core_settings_of(&conf)->enabled);   /* left on: all off is refused */
	assert_false(core_settings_of(&conf)->default_events);
	assert_int_equal(core_settings_of(&conf)->on_conflict, CONF_CONFLICT_RECLAIM);
	assert_int_equal(core_settings_of(&conf)->n_events, 2);
	assert_int_equal(core_settings_of(&conf)->events[0].spec.arch_event, 6);
	assert_string_equal(core_settings_of(&conf)->events[1].spec.name, "l2_misses");
	assert_int_equal(core_settings_of(&conf)->events[1].spec.umask, 0xaa);
	assert_int_equal(core_settings_of(&conf)->per, 2);   /* socket, the third of cpu, core, socket */
}

/* A file that turns every collector off is refused as a whole, with what to do. */
static void every_collector_disabled_is_refused(void **state)
{
	char line[1024];

	(void)state;
	assert_int_equal(conf_load_string("off.conf", "[uncore]\nenabled = no\n[thermal]\nenabled = no\n"
					  "[core]\nenabled = no\n[pcu]\nenabled = no\n[imc]\nenabled = no\n"
					  "[k10temp]\nenabled = no\n[hsmp]\nenabled = no\n",
					  &conf, &errs), -EINVAL);
	assert_int_equal(errs.n, 1);
	assert_string_equal(conf_error_format(&errs.list[0], line, sizeof(line)),
			    "off.conf: every collector is disabled, so uncored would collect nothing; "
			    "set enabled = yes in [uncore], [thermal], [core], [pcu], [imc], [k10temp] or [hsmp]");
	assert_int_equal(conf_load_string("one.conf", "[uncore]\nenabled = no\n[core]\nenabled = no\n",
					  &conf, &errs), 0);
}

/* Small good inputs pinning the dialect: bounds, spacing, comments, line ends. */
struct good_case {
	const char *name;
	const char *text;
	double interval_s;
	const char *listen;
};

static const struct good_case good_cases[] = {
	{ "lowest interval", "[daemon]\ninterval = 0.05\n", 0.05, "127.0.0.1:9796" },
	{ "highest interval", "[daemon]\ninterval = 60.0\n", 60, "127.0.0.1:9796" },
	{ "leading dot", "[daemon]\ninterval = .5\n", 0.5, "127.0.0.1:9796" },
	{ "indented keys stand alone", "[daemon]\nlisten = 10.0.0.1:80\n    interval = 2\n", 2, "10.0.0.1:80" },
	{ "inline comment", "[daemon]\ninterval = 3 ; three\n", 3, "127.0.0.1:9796" },
	{ "crlf line ends", "[daemon]\r\ninterval = 4\r\nlisten = [::1]:1\r\n", 4, "[::1]:1" },
	{ "byte order mark", "\xef\xbb\xbf[daemon]\ninterval = 5", 5, "127.0.0.1:9796" },
	{ "colon separator", "[daemon]\ninterval: 6\n", 6, "127.0.0.1:9796" },
	{ "highest port", "[daemon]\nlisten = 0.0.0.0:65535\n", 1, "0.0.0.0:65535" },
	{ "199 characters fit", "[daemon]\nroot = /"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	  "\n", 1, "127.0.0.1:9796" },
};

static void good_inputs(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(good_cases); i++) {
		const struct good_case *c = &good_cases[i];

		print_message("%s\n", c->name);
		if (conf_load_string("t.conf", c->text, &conf, &errs) != 0)
			print_errors();
		assert_int_equal(errs.n, 0);
		assert_true(conf.interval_s == c->interval_s);
		assert_string_equal(conf.listen, c->listen);
	}
}

/* [core] engine and [uncore] engine: each auto, perf or msr. */
static void engine_values(void **state)
{
	static const struct { const char *text; enum conf_engine core, uncore; } cases[] = {
		{ "[core]\nengine = perf\n[uncore]\nengine = msr\n", CONF_ENGINE_PERF, CONF_ENGINE_MSR },
		{ "[core]\nengine = msr\n[uncore]\nengine = perf\n", CONF_ENGINE_MSR, CONF_ENGINE_PERF },
		{ "[core]\nengine = auto\n", CONF_ENGINE_AUTO, CONF_ENGINE_AUTO },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		if (conf_load_string("t.conf", cases[i].text, &conf, &errs) != 0)
			print_errors();
		assert_int_equal(errs.n, 0);
		assert_int_equal(core_settings_of(&conf)->engine, cases[i].core);
		assert_int_equal(uncore_settings_of(&conf)->engine, cases[i].uncore);
	}
}

struct bad_case {
	const char *name;
	const char *text;
	const char *first;       /* formatted first error */
	int n_errors;
};

#define LONG_USER "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" /* 64 */
#define LONG_50 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

static const struct bad_case bad_cases[] = {
	{ "unknown section", "[daemon]\n[bogus]\nfoo = 1\n",
	  "t.conf:2: unknown section '[bogus]' (expected [daemon], [uncore], [thermal], [core], [pcu], [imc], [k10temp] or [hsmp])", 1 },
	{ "unknown key", "[daemon]\nlisten_port = 1\n",
	  "t.conf:2: listen_port: unknown key in [daemon] (expected listen, interval, root, user, "
	  "server_user, log_level, max_connections, max_connections_per_ip, request_timeout, write_timeout, "
	  "max_header_size, max_episodes, state_file)", 1 },
	{ "key outside any section", "interval = 1\n",
	  "t.conf:1: interval: key outside any section (put it under [daemon], [uncore], [thermal], [core], [pcu], [imc], [k10temp] or [hsmp])", 1 },
	{ "interval too short", "[daemon]\ninterval = 0.01\n",
	  "t.conf:2: interval: expected a number of seconds from 0.05 to 60, got '0.01'", 1 },
	{ "interval too long", "[daemon]\ninterval = 61\n",
	  "t.conf:2: interval: expected a number of seconds from 0.05 to 60, got '61'", 1 },
	{ "interval not a number", "[daemon]\ninterval = abc\n",
	  "t.conf:2: interval: expected a number of seconds from 0.05 to 60, got 'abc'", 1 },
	{ "interval with exponent", "[daemon]\ninterval = 1e1\n",
	  "t.conf:2: interval: expected a number of seconds from 0.05 to 60, got '1e1'", 1 },
	{ "interval empty", "[daemon]\ninterval =\n",
	  "t.conf:2: interval: expected a number of seconds from 0.05 to 60, got ''", 1 },
	{ "bad bool", "[uncore]\nenabled = maybe\n",
	  "t.conf:2: enabled: expected yes/no, true/false, on/off or 1/0, got 'maybe'", 1 },
	{ "host name in listen", "[daemon]\nlisten = localhost:9796\n",
	  "t.conf:2: listen: 'localhost' is not an IPv4 address (expected A.B.C.D:PORT or [IPV6]:PORT)", 1 },
	{ "listen without port", "[daemon]\nlisten = 10.1.2.3\n",
	  "t.conf:2: listen: expected A.B.C.D:PORT or [IPV6]:PORT, got '10.1.2.3'", 1 },
	{ "ipv6 without brackets", "[daemon]\nlisten = ::1:9796\n",
	  "t.conf:2: listen: an IPv6 address goes in brackets, as in '[::1]:9796', got '::1:9796'", 1 },
	{ "bad ipv6", "[daemon]\nlisten = [::g]:9796\n",
	  "t.conf:2: listen: '::g' is not an IPv6 address (expected A.B.C.D:PORT or [IPV6]:PORT)", 1 },
	{ "port 0", "[daemon]\nlisten = 127.0.0.1:0\n",
	  "t.conf:2: listen: expected a port from 1 to 65535, got '0'", 1 },
	{ "port 70000", "[daemon]\nlisten = [::]:70000\n",
	  "t.conf:2: listen: expected a port from 1 to 65535, got '70000'", 1 },
	{ "duplicate key", "[daemon]\ninterval = 2\n\n[daemon]\ninterval = 3\n",
	  "t.conf:5: interval: duplicate key, first set on line 2", 1 },
	{ "unknown log level", "[daemon]\nlog_level = loud\n",
	  "t.conf:2: log_level: expected error, warning, notice, info or debug, got 'loud'", 1 },
	{ "unknown conflict policy", "[core]\non_conflict = steal\n",
	  "t.conf:2: on_conflict: expected reclaim or yield, got 'steal'", 1 },
	{ "unknown per", "[core]\nper = thread\n",
	  "t.conf:2: per: expected cpu, core or socket, got 'thread'", 1 },
	{ "unknown engine", "[core]\nengine = pmu\n",
	  "t.conf:2: engine: expected auto, perf or msr, got 'pmu'", 1 },
	{ "engine in the wrong case", "[daemon]\n[uncore]\nengine = Perf\n",
	  "t.conf:3: engine: expected auto, perf or msr, got 'Perf'", 1 },
	{ "relative root", "[daemon]\nroot = var/lib/x\n",
	  "t.conf:2: root: expected an absolute path, got 'var/lib/x'", 1 },
	{ "user too long", "[daemon]\nuser = " LONG_USER "\n",
	  "t.conf:2: user: expected at most 63 characters, got 64", 1 },
	{ "unsigned below range", "[daemon]\nmax_header_size = 512\n",
	  "t.conf:2: max_header_size: expected a whole number of bytes from 1024 to 65536, got '512'", 1 },
	{ "negative unsigned", "[daemon]\nmax_connections = -1\n",
	  "t.conf:2: max_connections: expected a whole number from 1 to 10000, got '-1'", 1 },
	{ "fractional timeout", "[daemon]\nrequest_timeout = 1.5\n",
	  "t.conf:2: request_timeout: expected a whole number of seconds from 1 to 300, got '1.5'", 1 },
	{ "bad event line", "[uncore]\nevent = x, event=0x1ff, umask=1\n",
	  "t.conf:2: event: event: expected 0x00..0xff, got '0x1ff'", 1 },
	{ "core event in uncore", "[uncore]\nevent = llc_misses\n",
	  "t.conf:2: event: unknown built-in uncore event 'llc_misses' (known: dram_thermal_throttled_cycles, "
	  "dram_thermal_throttle_episodes, prochot_assertions, thermal_throttling_prochot_core0..3, "
	  "thermal_throttling_temp_core0..3, thermal_throttled_temp_core0..3)", 1 },
	{ "too many uncore events", "[uncore]\nevent = thermal_throttling_prochot_core0\n"
	  "event = thermal_throttling_prochot_core1\nevent = thermal_throttling_prochot_core2\n",
	  "t.conf:3: event: event 'thermal_throttling_prochot_core1' does not fit: the uncore has 8 "
	  "counters and 8 are already taken by the 7 default events and 1 configured event", 1 },
	{ "too many uncore events without defaults", "[uncore]\ndefault_events = no\n"
	  "event = a, event=1, umask=1\nevent = b, event=1, umask=1\nevent = c, event=1, umask=1\n"
	  "event = d, event=1, umask=1\nevent = e, event=1, umask=1\nevent = f, event=1, umask=1\n"
	  "event = g, event=1, umask=1\nevent = h, event=1, umask=1\nevent = i, event=1, umask=1\n",
	  "t.conf:11: event: event 'i' does not fit: the uncore has 8 counters and 8 are already "
	  "taken by 8 configured events", 1 },
	{ "too many core events", "[core]\nevent = branch_instructions\n"
	  "event = a, event=1, umask=1\nevent = b, event=1, umask=1\nevent = c, event=1, umask=1\n"
	  "event = d, event=1, umask=1\nevent = e, event=1, umask=1\n",
	  "t.conf:7: event: event 'e' does not fit: at most 8 core events, and 8 are already taken by "
	  "the 3 default events and 5 configured events (the CPU's own counter count, from CPUID, "
	  "is checked at start)", 1 },
	{ "event repeats a default", "[uncore]\nevent = prochot_assertions\n",
	  "t.conf:2: event: duplicate event name 'prochot_assertions': already counted as a default "
	  "event (set default_events = no to list it yourself)", 1 },
	{ "duplicate event name", "[core]\ndefault_events = no\nevent = x, event=1, umask=1\n"
	  "event = llc_misses\nevent = x, event=2, umask=2\n",
	  "t.conf:5: event: duplicate event name 'x', first configured on line 3", 1 },
	{ "over-long line", "[daemon]\nuser = " LONG_50 LONG_50 LONG_50 LONG_50 "\n",
	  "t.conf:2: line too long (207 characters, at most 199)", 1 },
	{ "very long line", "[daemon]\n#" LONG_50 LONG_50 LONG_50 LONG_50 LONG_50 LONG_50 LONG_50
	  LONG_50 LONG_50 LONG_50 LONG_50 LONG_50 "\ninterval = 0\n",
	  "t.conf:2: line too long (601 characters, at most 199)", 2 },
	{ "syntax error", "[daemon]\nlisten\ninterval = 2\n",
	  "t.conf:2: expected 'key = value' or '[section]'", 1 },
	{ "unclosed section", "[daemon\ninterval = 2\n",
	  "t.conf:1: expected 'key = value' or '[section]'", 1 },
	{ "indented section", "[thermal]\n  [core] ; indented\n  event = llc_misses\n",
	  "t.conf:3: event: duplicate event name 'llc_misses': already counted as a default event "
	  "(set default_events = no to list it yourself)", 1 },
};

static void bad_inputs(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad_cases); i++) {
		const struct bad_case *c = &bad_cases[i];

		print_message("%s\n", c->name);
		memset(&conf, 0x5a, sizeof(conf));
		assert_int_equal(conf_load_string("t.conf", c->text, &conf, &errs), -EINVAL);
		assert_string_equal(first_error(), c->first);
		if (errs.n != c->n_errors)
			print_errors();
		assert_int_equal(errs.n, c->n_errors);
		/* A refused file leaves the caller's struct alone. */
		assert_int_equal(uncore_settings_of(&conf)->n_events, 0x5a5a5a5a);
	}
}

static void every_error_is_reported_in_line_order(void **state)
{
	static const char text[] =
		"[daemon]\n"                                   /* 1 */
		"interval = 0\n"                               /* 2 */
		"listen = nowhere\n"                           /* 3 */
		"bogus\n"                                      /* 4 */
		"[uncore]\n"                                   /* 5 */
		"event = prochot_assertions\n"                 /* 6 */
		"enabled = perhaps\n"                          /* 7 */
		"[wrong]\n"                                    /* 8 */
		"x = 1\n"                                      /* 9 */
		"[core]\n"                                     /* 10 */
		"default_events = nope\n"                      /* 11 */
		"default_events = yes\n";                      /* 12 */
	static const char *const expected[] = {
		"my.conf:2: interval: expected a number of seconds from 0.05 to 60, got '0'",
		"my.conf:3: listen: expected A.B.C.D:PORT or [IPV6]:PORT, got 'nowhere'",
		"my.conf:4: expected 'key = value' or '[section]'",
		("my.conf:6: event: duplicate event name 'prochot_assertions': already counted as a "
		 "default event (set default_events = no to list it yourself)"),
		"my.conf:7: enabled: expected yes/no, true/false, on/off or 1/0, got 'perhaps'",
		"my.conf:8: unknown section '[wrong]' (expected [daemon], [uncore], [thermal], [core], [pcu], [imc], [k10temp] or [hsmp])",
		"my.conf:11: default_events: expected yes/no, true/false, on/off or 1/0, got 'nope'",
		"my.conf:12: default_events: duplicate key, first set on line 11",
	};
	char buf[640];

	(void)state;
	assert_int_equal(conf_load_string("my.conf", text, &conf, &errs), -EINVAL);
	assert_int_equal(errs.n, ARRAY_SIZE(expected));
	for (size_t i = 0; i < ARRAY_SIZE(expected); i++)
		assert_string_equal(conf_error_format(&errs.list[i], buf, sizeof(buf)), expected[i]);
}

static void error_list_is_bounded(void **state)
{
	char text[4096] = "[daemon]\n";

	(void)state;
	for (int i = 0; i < CONF_MAX_ERRORS + 10; i++)
		strcat(text, "nope = 1\n");
	assert_int_equal(conf_load_string("t.conf", text, &conf, &errs), -EINVAL);
	assert_int_equal(errs.n, CONF_MAX_ERRORS + 10);
	assert_int_equal(errs.list[CONF_MAX_ERRORS - 1].line, CONF_MAX_ERRORS + 1);
}

static void missing_file(void **state)
{
	(void)state;
	assert_int_equal(conf_load("/nonexistent/uncored.conf", &conf, &errs), -ENOENT);
	assert_int_equal(errs.n, 1);
	assert_int_equal(errs.list[0].line, 0);
	assert_string_equal(first_error(), "/nonexistent/uncored.conf: cannot open: No such file or directory");
}

static void directory_instead_of_file(void **state)
{
	char dir[256], expected[512];

	(void)state;
	helpers_mkdtemp(dir, sizeof(dir));
	assert_int_equal(conf_load(dir, &conf, &errs), -EISDIR);
	assert_int_equal(errs.n, 1);
	snprintf(expected, sizeof(expected), "%s: a directory, not a regular file", dir);
	assert_string_equal(first_error(), expected);
	helpers_rmtree(dir);
}

static void error_format(void **state)
{
	static const struct {
		struct conf_error e;
		const char *text;
	} cases[] = {
		{ { "a.conf", 3, "interval", "bad" }, "a.conf:3: interval: bad" },
		{ { "a.conf", 3, "", "bad" }, "a.conf:3: bad" },
		{ { "a.conf", 0, "", "cannot open: x" }, "a.conf: cannot open: x" },
		{ { "a.conf", 0, "k", "m" }, "a.conf: k: m" },
	};
	char buf[640], small[8];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		assert_string_equal(conf_error_format(&cases[i].e, buf, sizeof(buf)), cases[i].text);
	assert_string_equal(conf_error_format(&cases[0].e, small, sizeof(small)), "a.conf:");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(empty_file_means_defaults),
		cmocka_unit_test(shipped_config_parses),
		cmocka_unit_test(every_key_parses),
		cmocka_unit_test(every_collector_disabled_is_refused),
		cmocka_unit_test(good_inputs),
		cmocka_unit_test(engine_values),
		cmocka_unit_test(bad_inputs),
		cmocka_unit_test(every_error_is_reported_in_line_order),
		cmocka_unit_test(error_list_is_bounded),
		cmocka_unit_test(missing_file),
		cmocka_unit_test(directory_instead_of_file),
		cmocka_unit_test(error_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
