/*
 * Unit tests of PMU discovery and config building: format, CPU list and
 * term parsing as pure functions, then whole PMUs loaded from fake sysfs
 * trees in a temporary directory (the layouts are those of
 * hardware-linux.md §3.2: the Nehalem/Westmere "uncore" PMU, an iMC
 * channel with a cpumask per socket, the msr PMU, a split AMD-style field).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "helpers.h"
#include "cpulist.h"
#include "perf_pmu.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

struct tree {
	char root[256];
	char err[512];
	struct perf_pmu *pmu;
};

static int tree_setup(void **state)
{
	static struct tree t;

	memset(&t, 0, sizeof(t));
	helpers_mkdtemp(t.root, sizeof(t.root));
	*state = &t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;

	perf_pmu_free(t->pmu);
	helpers_rmtree(t->root);
	return 0;
}

/* Write <root>/sys/bus/event_source/devices/<pmu>/<rel>. */
static void pmu_file(const char *root, const char *pmu, const char *rel, const char *text)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/sys/bus/event_source/devices/%s/%s", root, pmu, rel);
	helpers_write_file(path, text);
}

/* The kernel's Nehalem/Westmere uncore PMU (uncore_snb.c; hardware-linux.md §3.2). */
static void make_nhm_uncore(const char *root)
{
	pmu_file(root, "uncore", "type", "12\n");
	pmu_file(root, "uncore", "cpumask", "0,6\n");
	pmu_file(root, "uncore", "format/event", "config:0-7\n");
	pmu_file(root, "uncore", "format/umask", "config:8-15\n");
	pmu_file(root, "uncore", "format/edge", "config:18\n");
	pmu_file(root, "uncore", "format/inv", "config:23\n");
	pmu_file(root, "uncore", "format/cmask", "config:24-31\n");
	pmu_file(root, "uncore", "events/clockticks", "event=0xff,umask=0x00\n");
}

static void make_msr(const char *root)
{
	pmu_file(root, "msr", "type", "9\n");
	pmu_file(root, "msr", "format/event", "config:0-63\n");
	pmu_file(root, "msr", "events/tsc", "event=0x00\n");
}

/* Pure parsers */

static void format_good(void **state)
{
	static const struct {
		const char *text;
		enum perf_pmu_target target;
		uint64_t mask;
	} rows[] = {
		{ "config:0-7\n", PERF_PMU_CONFIG, 0xff },
		{ "config:18", PERF_PMU_CONFIG, UINT64_C(1) << 18 },
		{ "config1:0-7", PERF_PMU_CONFIG1, 0xff },
		{ "config2:63", PERF_PMU_CONFIG2, UINT64_C(1) << 63 },
		{ "config3:1-2", PERF_PMU_CONFIG3, 0x6 },
		{ "config:0-7,32-35", PERF_PMU_CONFIG, UINT64_C(0xf000000ff) },
		{ "config:0-63", PERF_PMU_CONFIG, UINT64_MAX },
		{ "config:1,3,5", PERF_PMU_CONFIG, 0x2a },
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		enum perf_pmu_target target = PERF_PMU_TARGET_COUNT;
		uint64_t mask = 0;

		print_message("row %zu: '%s'\n", i, rows[i].text);
		assert_int_equal(perf_pmu_parse_format(rows[i].text, &target, &mask,
						       err, sizeof(err)), 0);
		assert_int_equal(target, rows[i].target);
		assert_int_equal(mask, rows[i].mask);
	}
}

static void format_bad(void **state)
{
	static const char *const rows[] = {
		"", "config", "config:", "config4:0-7", "conf:0", "config:64", "config:7-0",
		"config:0-7,", "config:0-7;8", "config:-1", "config:0x3", "config :0-7",
		"config:0-64",
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		enum perf_pmu_target target;
		uint64_t mask;

		print_message("row %zu: '%s'\n", i, rows[i]);
		err[0] = '\0';
		assert_int_equal(perf_pmu_parse_format(rows[i], &target, &mask, err, sizeof(err)),
				 -EINVAL);
		assert_non_null(strstr(err, "expected 'config[123]:BITS'"));
	}
}

static void cpulist_good(void **state)
{
	static const struct {
		const char *text;
		size_t n;
		int cpus[8];
	} rows[] = {
		{ "0\n", 1, { 0 } },
		{ "0,18", 2, { 0, 18 } },
		{ "0-3", 4, { 0, 1, 2, 3 } },
		{ "8-9,0-1", 4, { 0, 1, 8, 9 } },
		{ "5,5,4-5", 2, { 4, 5 } },
		{ "", 0, { 0 } },
		{ "\n", 0, { 0 } },
		{ "223", 1, { 223 } },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		int *cpus = NULL;
		size_t n = 99;

		print_message("row %zu: '%s'\n", i, rows[i].text);
		assert_int_equal(cpulist_parse(rows[i].text, &cpus, &n), 0);
		assert_int_equal(n, rows[i].n);
		for (size_t k = 0; k < n; k++)
			assert_int_equal(cpus[k], rows[i].cpus[k]);
		free(cpus);
	}
}

static void cpulist_bad(void **state)
{
	static const char *const rows[] = {
		"a", "0,", ",0", "3-1", "0-", "-1", "0 1", "0,,1", "0x1", "99999",
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		int *cpus = NULL;
		size_t n = 0;

		print_message("row %zu: '%s'\n", i, rows[i]);
		assert_int_equal(cpulist_parse(rows[i], &cpus, &n), -EINVAL);
		assert_null(cpus);
	}
}

static void terms_good(void **state)
{
	struct perf_pmu_term t[4];
	char err[256];
	size_t n = 0;

	(void)state;
	assert_int_equal(perf_pmu_parse_terms("event=0xff,umask=0x00,edge, cmask=3", t, 4, &n,
					      err, sizeof(err)), 0);
	assert_int_equal(n, 4);
	assert_string_equal(t[0].name, "event");
	assert_int_equal(t[0].value, 0xff);
	assert_string_equal(t[1].name, "umask");
	assert_int_equal(t[1].value, 0);
	assert_string_equal(t[2].name, "edge");
	assert_int_equal(t[2].value, 1);
	assert_string_equal(t[3].name, "cmask");
	assert_int_equal(t[3].value, 3);

	assert_int_equal(perf_pmu_parse_terms("", t, 4, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 0);
	assert_int_equal(perf_pmu_parse_terms("config=0xffffffffffffffff", t, 4, &n,
					      err, sizeof(err)), 0);
	assert_int_equal(t[0].value, UINT64_MAX);
}

static void terms_bad(void **state)
{
	static const struct {
		const char *text;
		int r;
		const char *msg;
	} rows[] = {
		{ "event=", -EINVAL, "event: expected a number" },
		{ "event=zz", -EINVAL, "event: expected a number (decimal or 0x hex) up to 64 bits, got 'zz'" },
		{ "event=0x10000000000000000", -EINVAL, "event: expected a number" },
		{ "event=-1", -EINVAL, "event: expected a number" },
		{ "=3", -EINVAL, "expected a field name, got ''" },
		{ "event=1,", -EINVAL, "expected a field name after ','" },
		{ "a b=1", -EINVAL, "expected a field name, got 'a b'" },
		{ "a,b,c", -E2BIG, "more than 2 terms" },
	};
	struct perf_pmu_term t[2];
	char err[256];
	size_t n;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		print_message("row %zu: '%s'\n", i, rows[i].text);
		err[0] = '\0';
		assert_int_equal(perf_pmu_parse_terms(rows[i].text, t, 2, &n, err, sizeof(err)),
				 rows[i].r);
		assert_non_null(strstr(err, rows[i].msg));
	}
}

/* Whole PMUs from fake trees */

static void loads_nhm_uncore(void **state)
{
	struct tree *t = *state;
	const struct perf_pmu_format *f;
	const struct perf_pmu_alias *a;

	make_nhm_uncore(t->root);
	assert_int_equal(perf_pmu_load(t->root, "uncore", &t->pmu, t->err, sizeof(t->err)), 0);
	assert_string_equal(t->pmu->name, "uncore");
	assert_int_equal(t->pmu->type, 12);
	assert_true(t->pmu->has_cpumask);
	assert_int_equal(t->pmu->n_cpus, 2);
	assert_int_equal(t->pmu->cpus[0], 0);
	assert_int_equal(t->pmu->cpus[1], 6);
	assert_int_equal(t->pmu->n_formats, 5);
	/* Sorted by name. */
	assert_string_equal(t->pmu->formats[0].name, "cmask");
	f = perf_pmu_find_format(t->pmu, "umask");
	assert_non_null(f);
	assert_int_equal(f->target, PERF_PMU_CONFIG);
	assert_int_equal(f->mask, 0xff00);
	assert_string_equal(f->spec, "config:8-15");
	assert_null(perf_pmu_find_format(t->pmu, "any"));
	assert_int_equal(t->pmu->n_aliases, 1);
	a = perf_pmu_find_alias(t->pmu, "clockticks");
	assert_non_null(a);
	assert_string_equal(a->terms, "event=0xff,umask=0x00");
	assert_false(a->has_scale);
	assert_true(a->scale == 1.0);
	assert_null(a->unit);
}

/* hardware-linux.md §3.2: UNC_DRAM_THERMAL_THROTTLED is config 0x0167, clockticks 0xff. */
static void builds_configs_through_formats(void **state)
{
	struct tree *t = *state;
	struct perf_pmu_config cfg;

	make_nhm_uncore(t->root);
	assert_int_equal(perf_pmu_load(t->root, "uncore", &t->pmu, t->err, sizeof(t->err)), 0);

	assert_int_equal(perf_pmu_encode(t->pmu, "event=0x67,umask=0x01", &cfg,
					 t->err, sizeof(t->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG], 0x0167);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG1], 0);

	/* THERMAL_THROTTLING_TEMP.CORE_2: 0x0180 | (1 << 2) << 8. */
	assert_int_equal(perf_pmu_encode(t->pmu, "event=0x80,umask=0x4", &cfg,
					 t->err, sizeof(t->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG], 0x0480);

	assert_int_equal(perf_pmu_encode(t->pmu, "event=0x01,edge,inv,cmask=2", &cfg,
					 t->err, sizeof(t->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG],
			 0x01 | (1u << 18) | (1u << 23) | (UINT64_C(2) << 24));

	assert_int_equal(perf_pmu_alias_config(t->pmu, "clockticks", &cfg,
					       t->err, sizeof(t->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG], 0xff);

	/* A whole word by name when the PMU has no field of that name. */
	assert_int_equal(perf_pmu_encode(t->pmu, "config=0x1234,config1=7", &cfg,
					 t->err, sizeof(t->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG], 0x1234);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG1], 7);
}

static void rejects_bad_fields_and_values(void **state)
{
	struct tree *t = *state;
	struct perf_pmu_config cfg = { { 0xabc, 0, 0, 0 } };

	make_nhm_uncore(t->root);
	assert_int_equal(perf_pmu_load(t->root, "uncore", &t->pmu, t->err, sizeof(t->err)), 0);

	assert_int_equal(perf_pmu_encode(t->pmu, "event=0x100", &cfg, t->err, sizeof(t->err)),
			 -ERANGE);
	assert_string_equal(t->err, "PMU 'uncore': value 0x100 does not fit field 'event' "
			    "(8 bits, config:0-7)");
	assert_int_equal(perf_pmu_encode(t->pmu, "edge=2", &cfg, t->err, sizeof(t->err)),
			 -ERANGE);
	assert_string_equal(t->err, "PMU 'uncore': value 0x2 does not fit field 'edge' "
			    "(1 bit, config:18)");
	assert_int_equal(perf_pmu_encode(t->pmu, "event=1,any=1", &cfg, t->err, sizeof(t->err)),
			 -ENOENT);
	assert_string_equal(t->err, "PMU 'uncore' has no field 'any' (value 0x1); its fields: "
			    "cmask, edge, event, inv, umask");
	assert_int_equal(perf_pmu_encode(t->pmu, "event=1,event=2", &cfg, t->err, sizeof(t->err)),
			 -EINVAL);
	assert_string_equal(t->err, "PMU 'uncore': field 'event' given twice");
	assert_int_equal(perf_pmu_encode(t->pmu, "event=x", &cfg, t->err, sizeof(t->err)),
			 -EINVAL);
	assert_non_null(strstr(t->err, "PMU 'uncore': event: expected a number"));
	assert_int_equal(perf_pmu_alias_config(t->pmu, "cycles", &cfg, t->err, sizeof(t->err)),
			 -ENOENT);
	assert_string_equal(t->err, "PMU 'uncore' has no event 'cycles'");
	/* Untouched on error. */
	assert_int_equal(cfg.config[PERF_PMU_CONFIG], 0xabc);
}

/* A split field: the value's bits go lowest first into the listed positions. */
static void places_bits_across_ranges(void **state)
{
	struct tree *t = *state;
	struct perf_pmu_config cfg = { { 0 } };

	pmu_file(t->root, "split", "type", "20\n");
	pmu_file(t->root, "split", "format/event", "config:0-7,32-35\n");
	pmu_file(t->root, "split", "format/odd", "config1:1,3,5\n");
	pmu_file(t->root, "split", "format/filter", "config2:8-15\n");
	assert_int_equal(perf_pmu_load(t->root, "split", &t->pmu, t->err, sizeof(t->err)), 0);
	assert_false(t->pmu->has_cpumask);

	assert_int_equal(perf_pmu_set_field(t->pmu, &cfg, "event", 0xabc, t->err,
					    sizeof(t->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG], UINT64_C(0xa000000bc));
	assert_int_equal(perf_pmu_set_field(t->pmu, &cfg, "odd", 0x5, t->err, sizeof(t->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG1], 0x22);
	assert_int_equal(perf_pmu_set_field(t->pmu, &cfg, "filter", 0x7f, t->err,
					    sizeof(t->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG2], 0x7f00);
	/* Setting a field again replaces its bits and keeps the others. */
	assert_int_equal(perf_pmu_set_field(t->pmu, &cfg, "event", 0x001, t->err,
					    sizeof(t->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG], 0x1);
	assert_int_equal(perf_pmu_set_field(t->pmu, &cfg, "event", 0x1000, t->err,
					    sizeof(t->err)), -ERANGE);
	assert_string_equal(t->err, "PMU 'split': value 0x1000 does not fit field 'event' "
			    "(12 bits, config:0-7,32-35)");
	assert_int_equal(perf_pmu_set_field(t->pmu, &cfg, "odd", 8, t->err, sizeof(t->err)),
			 -ERANGE);
}

/* The full 64-bit field of the msr PMU takes any value. */
static void msr_pmu_full_width_field(void **state)
{
	struct tree *t = *state;
	struct perf_pmu_config cfg;

	make_msr(t->root);
	assert_int_equal(perf_pmu_load(t->root, "msr", &t->pmu, t->err, sizeof(t->err)), 0);
	assert_int_equal(t->pmu->type, 9);
	assert_int_equal(perf_pmu_encode(t->pmu, "event=0xffffffffffffffff", &cfg,
					 t->err, sizeof(t->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG], UINT64_MAX);
	assert_int_equal(perf_pmu_alias_config(t->pmu, "tsc", &cfg, t->err, sizeof(t->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG], 0);
}

/* uncore_snbep.c: iMC cas_count aliases come with .scale and .unit. */
static void alias_scale_and_unit(void **state)
{
	struct tree *t = *state;
	const struct perf_pmu_alias *a;
	struct perf_pmu_config cfg;

	pmu_file(t->root, "uncore_imc_0", "type", "15\n");
	pmu_file(t->root, "uncore_imc_0", "cpumask", "0,18\n");
	pmu_file(t->root, "uncore_imc_0", "format/event", "config:0-7\n");
	pmu_file(t->root, "uncore_imc_0", "format/umask", "config:8-15\n");
	pmu_file(t->root, "uncore_imc_0", "events/cas_count_read", "event=0x04,umask=0x03\n");
	pmu_file(t->root, "uncore_imc_0", "events/cas_count_read.scale", "6.103515625e-5\n");
	pmu_file(t->root, "uncore_imc_0", "events/cas_count_read.unit", "MiB\n");
	pmu_file(t->root, "uncore_imc_0", "events/clockticks", "event=0x00,umask=0x00\n");
	assert_int_equal(perf_pmu_load(t->root, "uncore_imc_0", &t->pmu, t->err,
				       sizeof(t->err)), 0);
	assert_int_equal(t->pmu->n_aliases, 2);
	a = perf_pmu_find_alias(t->pmu, "cas_count_read");
	assert_non_null(a);
	assert_true(a->has_scale);
	assert_true(a->scale > 6.1035e-5 && a->scale < 6.1036e-5);
	assert_string_equal(a->unit, "MiB");
	assert_int_equal(perf_pmu_alias_config(t->pmu, "cas_count_read", &cfg,
					       t->err, sizeof(t->err)), 0);
	assert_int_equal(cfg.config[PERF_PMU_CONFIG], 0x0304);
	assert_int_equal(t->pmu->n_cpus, 2);
	assert_int_equal(t->pmu->cpus[1], 18);
}

static void alias_with_unknown_field_names_its_file(void **state)
{
	struct tree *t = *state;
	struct perf_pmu_config cfg;

	make_nhm_uncore(t->root);
	pmu_file(t->root, "uncore", "events/odd", "event=0x1,thresh=3\n");
	assert_int_equal(perf_pmu_load(t->root, "uncore", &t->pmu, t->err, sizeof(t->err)), 0);
	assert_int_equal(perf_pmu_alias_config(t->pmu, "odd", &cfg, t->err, sizeof(t->err)),
			 -ENOENT);
	assert_non_null(strstr(t->err, "events/odd of uncore: PMU 'uncore' has no field 'thresh'"));
}

/* Every bad or missing file gives an error naming it. */
static void bad_files_are_named(void **state)
{
	static const struct {
		const char *rel;
		const char *text;
		const char *msg;
	} rows[] = {
		{ "type", "twelve\n", "/uncore/type: expected a PMU type number, got 'twelve'" },
		{ "type", "4294967296\n", "/uncore/type: expected a PMU type number" },
		{ "cpumask", "0-\n", "/uncore/cpumask: expected a CPU list such as '0' or '0,18' "
		  "or '0-3', got '0-'" },
		{ "format/umask", "config:8-16x\n", "/uncore/format/umask: expected "
		  "'config[123]:BITS'" },
		{ "format/edge", "config5:18\n", "got 'config5:18'" },
		{ "events/clockticks.scale", "much\n", "/uncore/events/clockticks.scale: "
		  "expected a number, got 'much'" },
	};
	struct tree *t = *state;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		struct perf_pmu *pmu = NULL;

		print_message("row %zu: %s\n", i, rows[i].rel);
		helpers_rmtree(t->root);
		helpers_mkdtemp(t->root, sizeof(t->root));
		make_nhm_uncore(t->root);
		pmu_file(t->root, "uncore", rows[i].rel, rows[i].text);
		t->err[0] = '\0';
		assert_int_equal(perf_pmu_load(t->root, "uncore", &pmu, t->err, sizeof(t->err)),
				 -EINVAL);
		assert_null(pmu);
		assert_non_null(strstr(t->err, t->root));
		assert_non_null(strstr(t->err, rows[i].msg));
	}
}

static void missing_pmu_and_missing_type(void **state)
{
	struct tree *t = *state;
	char path[600];

	make_msr(t->root);
	assert_int_equal(perf_pmu_load(t->root, "uncore_pcu", &t->pmu, t->err, sizeof(t->err)),
			 -ENOENT);
	snprintf(path, sizeof(path), "no PMU 'uncore_pcu' (%s/sys/bus/event_source/devices/"
		 "uncore_pcu does not exist)", t->root);
	assert_string_equal(t->err, path);

	pmu_file(t->root, "uncore_pcu", "format/event", "config:0-7\n");
	assert_int_equal(perf_pmu_load(t->root, "uncore_pcu", &t->pmu, t->err, sizeof(t->err)),
			 -EINVAL);
	assert_non_null(strstr(t->err, "/uncore_pcu/type: missing"));

	assert_int_equal(perf_pmu_load(t->root, "../msr", &t->pmu, t->err, sizeof(t->err)),
			 -EINVAL);
	assert_string_equal(t->err, "'../msr' is not a PMU name");
}

static void core_pmu_absent_means_msr(void **state)
{
	struct tree *t = *state;
	struct perf_pmu *pmu = NULL;
	char reason[256];

	make_msr(t->root);
	pmu_file(t->root, "software", "type", "1\n");
	assert_int_equal(perf_pmu_probe_core(t->root, &pmu, reason, sizeof(reason)),
			 PERF_PMU_CORE_ABSENT);
	assert_null(pmu);
	assert_string_equal(reason, "this kernel has no core PMU (cpu PMU absent from sysfs: "
			    "a virtual machine or a kernel without perf hardware support)");

	/* Present, with type PERF_TYPE_RAW (4) as hardware-linux.md §3.1 gives it. */
	pmu_file(t->root, "cpu", "type", "4\n");
	pmu_file(t->root, "cpu", "format/event", "config:0-7\n");
	pmu_file(t->root, "cpu", "format/umask", "config:8-15\n");
	pmu_file(t->root, "cpu", "events/cpu-cycles", "event=0x3c\n");
	assert_int_equal(perf_pmu_probe_core(t->root, &t->pmu, reason, sizeof(reason)),
			 PERF_PMU_CORE_PRESENT);
	assert_int_equal(t->pmu->type, 4);

	/* Present but unreadable is an error, not a fallback. */
	pmu_file(t->root, "cpu", "format/umask", "config:8-\n");
	assert_int_equal(perf_pmu_probe_core(t->root, NULL, reason, sizeof(reason)), -EINVAL);
	assert_non_null(strstr(reason, "/cpu/format/umask"));
}

static void scan_finds_every_pmu(void **state)
{
	struct tree *t = *state;
	struct perf_pmu_set set;

	make_nhm_uncore(t->root);
	make_msr(t->root);
	pmu_file(t->root, "software", "type", "1\n");
	assert_int_equal(perf_pmu_scan(t->root, &set, t->err, sizeof(t->err)), 0);
	assert_int_equal(set.n, 3);
	assert_string_equal(set.pmus[0]->name, "msr");
	assert_string_equal(set.pmus[1]->name, "software");
	assert_string_equal(set.pmus[2]->name, "uncore");
	assert_int_equal(perf_pmu_set_find(&set, "software")->type, 1);
	assert_int_equal(perf_pmu_set_find(&set, "software")->n_formats, 0);
	assert_null(perf_pmu_set_find(&set, "cpu"));
	perf_pmu_set_free(&set);

	pmu_file(t->root, "broken", "type", "\n");
	assert_int_equal(perf_pmu_scan(t->root, &set, t->err, sizeof(t->err)), -EINVAL);
	assert_non_null(strstr(t->err, "/broken/type"));
}

static void scan_without_event_source_bus(void **state)
{
	struct tree *t = *state;
	struct perf_pmu_set set;

	assert_int_equal(perf_pmu_scan(t->root, &set, t->err, sizeof(t->err)), -ENOENT);
	assert_non_null(strstr(t->err, "/sys/bus/event_source/devices: does not exist"));
}

/*
 * The instances of a type by the kernel's naming rule (uncore_get_pmu_name):
 * uncore_pcu alone, uncore_pcu_N in ascending N (not name order), and the
 * discovery names uncore_type_4[_N] only where the type's own are absent;
 * an instance that does not load leaves its place empty, and only its own.
 */
static void instances_by_the_kernels_names(void **state)
{
	struct tree *t = *state;
	struct perf_pmu *p[4];
	char why[4][PERF_PMU_WHY_MAX];
	size_t n;

	assert_int_equal(perf_pmu_load_instances(t->root, "pcu", 4, p, NULL, 4, &n, t->err,
						 sizeof(t->err)), -ENOENT);
	assert_non_null(strstr(t->err, "no uncore_pcu PMU"));
	pmu_file(t->root, "uncore_type_4_0", "type", "30\n");
	pmu_file(t->root, "uncore_type_4_1", "type", "31\n");
	assert_int_equal(perf_pmu_load_instances(t->root, "pcu", 4, p, NULL, 4, &n, t->err,
						 sizeof(t->err)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(p[1]->name, "uncore_type_4_1");
	perf_pmu_free(p[0]);
	perf_pmu_free(p[1]);
	assert_int_equal(perf_pmu_load_instances(t->root, "pcu", -1, p, NULL, 4, &n, t->err,
						 sizeof(t->err)), -ENOENT);

	pmu_file(t->root, "uncore_pcu_10", "type", "21\n");
	pmu_file(t->root, "uncore_pcu_2", "type", "20\n");
	pmu_file(t->root, "uncore_pcu_x", "type", "22\n");
	pmu_file(t->root, "uncore_pcux", "type", "23\n");
	assert_int_equal(perf_pmu_load_instances(t->root, "pcu", 4, p, NULL, 4, &n, t->err,
						 sizeof(t->err)), 0);
	assert_int_equal(n, 2);
	assert_string_equal(p[0]->name, "uncore_pcu_2");
	assert_string_equal(p[1]->name, "uncore_pcu_10");
	perf_pmu_free(p[0]);
	perf_pmu_free(p[1]);
	assert_int_equal(perf_pmu_load_instances(t->root, "pcu", 4, p, NULL, 1, &n, t->err,
						 sizeof(t->err)), 0);
	assert_int_equal(n, 1);
	perf_pmu_free(p[0]);

	/* One that does not parse stands alone: its place empty, with why; the others load. */
	pmu_file(t->root, "uncore_pcu_3", "type", "\n");
	assert_int_equal(perf_pmu_load_instances(t->root, "pcu", 4, p, why, 4, &n, t->err,
						 sizeof(t->err)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(p[0]->name, "uncore_pcu_2");
	assert_null(p[1]);
	assert_non_null(strstr(why[1], "uncore_pcu_3/type"));
	assert_string_equal(p[2]->name, "uncore_pcu_10");
	assert_string_equal(why[2], "");
	perf_pmu_free(p[0]);
	perf_pmu_free(p[2]);

	pmu_file(t->root, "uncore_imc", "type", "40\n");
	assert_int_equal(perf_pmu_load_instances(t->root, "imc", -1, p, NULL, 4, &n, t->err,
						 sizeof(t->err)), 0);
	assert_int_equal(n, 1);
	assert_int_equal(p[0]->type, 40);
	perf_pmu_free(p[0]);
}

#define TREE_TEST(f) cmocka_unit_test_setup_teardown(f, tree_setup, tree_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(format_good),
		cmocka_unit_test(format_bad),
		cmocka_unit_test(cpulist_good),
		cmocka_unit_test(cpulist_bad),
		cmocka_unit_test(terms_good),
		cmocka_unit_test(terms_bad),
		TREE_TEST(loads_nhm_uncore),
		TREE_TEST(builds_configs_through_formats),
		TREE_TEST(rejects_bad_fields_and_values),
		TREE_TEST(places_bits_across_ranges),
		TREE_TEST(msr_pmu_full_width_field),
		TREE_TEST(alias_scale_and_unit),
		TREE_TEST(alias_with_unknown_field_names_its_file),
		TREE_TEST(bad_files_are_named),
		TREE_TEST(missing_pmu_and_missing_type),
		TREE_TEST(core_pmu_absent_means_msr),
		TREE_TEST(scan_finds_every_pmu),
		TREE_TEST(scan_without_event_source_bus),
		TREE_TEST(instances_by_the_kernels_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
