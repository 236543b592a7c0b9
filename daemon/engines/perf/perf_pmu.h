/*
 * The kernel's PMUs as sysfs describes them, and attr.config built from
 * their formats.
 *
 * Each PMU is a directory <root>/sys/bus/event_source/devices/<name>
 * (hardware-linux.md §3.2) holding:
 *   type       the value for perf_event_attr.type;
 *   format/F   one file per field F, "<target>:<bits>", target config,
 *              config1, config2 or config3, bits a comma-separated list of
 *              n or lo-hi, e.g. "config:0-7,32-35";
 *   cpumask    where present, the CPUs to open the PMU's events on (one
 *              per package or die for an uncore PMU), as a CPU list;
 *   events/E   aliases E, "term=value,..." lists, with <alias>.scale and
 *              <alias>.unit where the kernel gives them.
 *
 * A field's value is placed into its target bit by bit, lowest value bit
 * into the lowest listed position (the perf tool's pmu_format_value), so no
 * event encoding is hard-coded here.  Nothing in this module opens events.
 *
 * Errors are negative errno values with a sentence in err that names the
 * file, or the PMU, the field and the value.
 */
#ifndef UNCORED_PERF_PMU_H
#define UNCORED_PERF_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Which perf_event_attr word a format field lives in. */
enum perf_pmu_target {
	PERF_PMU_CONFIG,
	PERF_PMU_CONFIG1,
	PERF_PMU_CONFIG2,
	PERF_PMU_CONFIG3,
	PERF_PMU_TARGET_COUNT
};

/* attr.config, config1, config2 and config3 of one event, by target. */
struct perf_pmu_config {
	uint64_t config[PERF_PMU_TARGET_COUNT];
};

/* One format/<field> file. */
struct perf_pmu_format {
	char *name;                  /* the file name, e.g. "umask" */
	char *spec;                  /* its text, trimmed, e.g. "config:8-15" */
	enum perf_pmu_target target;
	uint64_t mask;               /* the bits of the target it occupies */
};

/* One events/<alias> file. */
struct perf_pmu_alias {
	char *name;                  /* e.g. "clockticks" */
	char *terms;                 /* its text, trimmed, e.g. "event=0xff,umask=0x00" */
	bool has_scale;
	double scale;                /* events/<alias>.scale; 1.0 when absent */
	char *unit;                  /* events/<alias>.unit; NULL when absent */
};

struct perf_pmu {
	char *name;                  /* the directory name, e.g. "uncore_imc_0" */
	uint32_t type;               /* for attr.type */
	struct perf_pmu_format *formats;
	size_t n_formats;
	struct perf_pmu_alias *aliases;
	size_t n_aliases;
	bool has_cpumask;            /* false: open on any CPU (core, software) */
	int *cpus;                   /* cpumask, ascending */
	size_t n_cpus;
};

/* Every PMU under one root, sorted by name. */
struct perf_pmu_set {
	struct perf_pmu **pmus;
	size_t n;
};

/* One "name=value" of an event description. */
#define PERF_PMU_TERM_NAME_MAX 64
struct perf_pmu_term {
	char name[PERF_PMU_TERM_NAME_MAX];
	uint64_t value;
};

/*
 * Load the PMU called name under root ("" or "/" for the real machine).
 * On success *ret_pmu is malloc'ed (free with perf_pmu_free).  Errors:
 * -ENOENT no such PMU (err says which directory was looked in); -EINVAL a
 * type file that is missing or a file that does not parse (err names it
 * and quotes it); other -errno from reading a file (err names it).
 */
int perf_pmu_load(const char *root, const char *name, struct perf_pmu **ret_pmu,
		  char *err, size_t errlen);

/* Free a PMU from perf_pmu_load; NULL is ignored. */
void perf_pmu_free(struct perf_pmu *pmu);

/*
 * Load every PMU under root into ret_set (free with perf_pmu_set_free).
 * Errors as perf_pmu_load, for the first PMU that fails; -ENOENT with err
 * naming the directory when the kernel has no event_source bus.
 */
int perf_pmu_scan(const char *root, struct perf_pmu_set *ret_set, char *err, size_t errlen);

/* Room for one instance's reason it does not load (perf_pmu_load_instances). */
#define PERF_PMU_WHY_MAX 256

/*
 * The instances of the uncore PMU type name under root, by the kernel's
 * naming rule (uncore.c uncore_get_pmu_name, hardware-linux.md §6): the
 * one PMU "uncore_<name>" of a type with one box, or "uncore_<name>_<id>"
 * for each box of a type with several; where there is neither and
 * discovery_type is not negative, the names of a kernel with the
 * discovery table but without the platform's, "uncore_type_<type>" or
 * "uncore_type_<type>_<id>".  Up to max are loaded into ret[] in
 * ascending id order (ids need not be contiguous) and *ret_n says how
 * many there are; free each with perf_pmu_free.  Each stands alone: one
 * that does not load (perf_pmu_load's error) leaves ret[i] NULL, with its
 * error in why[i] when why is not NULL, and the others load.  0, -ENOENT
 * when there is none (err names the directory), or -ENOMEM.
 */
int perf_pmu_load_instances(const char *root, const char *name, int discovery_type,
			    struct perf_pmu **ret, char (*why)[PERF_PMU_WHY_MAX], size_t max,
			    size_t *ret_n, char *err, size_t errlen);

/* The PMU called name in set, or NULL. */
const struct perf_pmu *perf_pmu_set_find(const struct perf_pmu_set *set, const char *name);

void perf_pmu_set_free(struct perf_pmu_set *set);

/* Result of perf_pmu_probe_core() other than an error. */
enum perf_pmu_core {
	PERF_PMU_CORE_PRESENT,
	PERF_PMU_CORE_ABSENT,        /* no "cpu" PMU: count core events with the msr engine */
};

/*
 * Whether the kernel has a core PMU (the "cpu" PMU) under root.
 * PERF_PMU_CORE_PRESENT: *ret_pmu is loaded (when ret_pmu is not NULL).
 * PERF_PMU_CORE_ABSENT: reason holds "this kernel has no core PMU (cpu PMU
 * absent from sysfs: a virtual machine or a kernel without perf hardware
 * support)", and the caller falls back to the msr engine.
 * A negative errno when the cpu PMU exists but cannot be read (reason
 * names the file).
 */
int perf_pmu_probe_core(const char *root, struct perf_pmu **ret_pmu, char *reason,
			size_t reasonlen);

/* The format field called name, or NULL. */
const struct perf_pmu_format *perf_pmu_find_format(const struct perf_pmu *pmu, const char *name);

/* The alias called name, or NULL. */
const struct perf_pmu_alias *perf_pmu_find_alias(const struct perf_pmu *pmu, const char *name);

/*
 * Set field to value in *cfg: the value's bits, lowest first, go into the
 * field's bit positions in ascending order; the field's other bits are
 * cleared first, the rest of *cfg is kept.  A field named config, config1,
 * config2 or config3 that the PMU does not define as a format sets that
 * whole word (as the perf tool does).  -ENOENT when the PMU has no such
 * field, -ERANGE when the value does not fit; err names the PMU, the field
 * and the value.
 */
int perf_pmu_set_field(const struct perf_pmu *pmu, struct perf_pmu_config *cfg,
		       const char *field, uint64_t value, char *err, size_t errlen);

/*
 * Build *ret_cfg from scratch out of a term list such as
 * "event=0x3c,umask=0x00,edge" (a bare name means 1).  A field given
 * twice is an error.  Errors as perf_pmu_set_field and
 * perf_pmu_parse_terms; *ret_cfg is untouched on error.
 */
int perf_pmu_encode(const struct perf_pmu *pmu, const char *terms, struct perf_pmu_config *ret_cfg,
		    char *err, size_t errlen);

/*
 * The config of the alias called name (its events/<name> terms through
 * the formats).  -ENOENT when the PMU has no such alias; otherwise as
 * perf_pmu_encode, with err naming the alias file.
 */
int perf_pmu_alias_config(const struct perf_pmu *pmu, const char *name,
			  struct perf_pmu_config *ret_cfg, char *err, size_t errlen);

/*
 * Parse one format file's text ("config1:0-7,32-35\n").  0, or -EINVAL
 * with err saying what was expected.
 */
int perf_pmu_parse_format(const char *text, enum perf_pmu_target *ret_target,
			  uint64_t *ret_mask, char *err, size_t errlen);

/*
 * Parse a term list "a=1,b=0x2,c" into at most max terms.  Values are
 * decimal, 0x hex or 0 octal, up to 64 bits; a bare name means 1.
 * -EINVAL (malformed) or -E2BIG (more than max terms) with err set.
 */
int perf_pmu_parse_terms(const char *text, struct perf_pmu_term *terms, size_t max,
			 size_t *ret_n, char *err, size_t errlen);

/* "config", "config1", "config2" or "config3". */
const char *perf_pmu_target_name(enum perf_pmu_target target);

#endif
