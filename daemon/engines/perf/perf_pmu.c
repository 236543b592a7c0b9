/*
 * The PMU loader: PMU discovery from the kernel's event_source bus in
 * sysfs.  It owns the parsed PMU descriptions; it reads files only when a
 * PMU is loaded, never opens an event, and never logs: errors come back as
 * a sentence naming the file.  The files' text is parsed, and configs are
 * built through the formats, in perf_pmu_format.c.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cpulist.h"
#include "grow.h"
#include "err.h"
#include "perf_pmu.h"
#include "perf_pmu_text.h"
#include "text.h"
#include "perf_sys.h"

/* sysfs attributes are at most a page. */
#define TEXT_MAX PERF_PMU_TEXT_MAX

/* Read a whole small file into buf (NUL-terminated, trimmed). */
static int read_text(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f) {
		int r = -errno;

		set_err(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	n = fread(buf, 1, len - 1, f);
	if (ferror(f)) {
		/* sysfs reports a driver's error at read, not at open. */
		int r = errno ? -errno : -EIO;

		fclose(f);
		set_err(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	fclose(f);
	buf[n] = '\0';
	if (strlen(buf) != n) {
		set_err(err, errlen, "%s: unexpected NUL byte", path);
		return -EINVAL;
	}
	perf_pmu_trim(buf);
	return 0;
}

/* Loading */

struct loader {
	char dir[PATH_MAX];          /* <root>/sys/bus/event_source/devices/<name> */
	char *err;
	size_t errlen;
};

static void file_path(const struct loader *l, char *buf, size_t len, const char *rel)
{
	snprintf(buf, len, "%s/%s", l->dir, rel);
}

static int load_type(struct loader *l, struct perf_pmu *pmu)
{
	char path[PATH_MAX + 16], text[TEXT_MAX], shown[40];
	uint64_t v;
	int r;

	file_path(l, path, sizeof(path), "type");
	r = read_text(path, text, sizeof(text), l->err, l->errlen);
	if (r == -ENOENT) {
		/* Not -ENOENT: that means "no such PMU" to the callers. */
		set_err(l->err, l->errlen, "%s: missing (every PMU directory has one)", path);
		return -EINVAL;
	}
	if (r < 0)
		return r;
	if (perf_pmu_parse_u64(text, &v) < 0 || v > UINT32_MAX) {
		text_quote(text, shown, sizeof(shown));
		set_err(l->err, l->errlen, "%s: expected a PMU type number, got '%s'", path, shown);
		return -EINVAL;
	}
	pmu->type = (uint32_t)v;
	return 0;
}

static int load_cpumask(struct loader *l, struct perf_pmu *pmu)
{
	char path[PATH_MAX + 16], text[TEXT_MAX], shown[80];
	int r;

	file_path(l, path, sizeof(path), "cpumask");
	r = read_text(path, text, sizeof(text), l->err, l->errlen);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	r = cpulist_parse(text, &pmu->cpus, &pmu->n_cpus);
	if (r == -EINVAL) {
		text_quote(text, shown, sizeof(shown));
		set_err(l->err, l->errlen, "%s: expected a CPU list such as '0' or '0,18' "
			"or '0-3', got '%s'", path, shown);
	} else if (r < 0) {
		set_err(l->err, l->errlen, "%s: %s", path, strerror(-r));
	}
	pmu->has_cpumask = r == 0;
	return r;
}

static int compare_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The names in dir, sorted, skipping dot-files (and, with skip_dotted, the
 * .scale/.unit/... companions of events/, whose names contain a dot).  A missing
 * directory is an empty list.
 */
static int list_dir(const char *dir, bool skip_dotted, char ***ret_names, size_t *ret_n,
		    char *err, size_t errlen)
{
	char **names = NULL, **p;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d = opendir(dir);

	if (!d) {
		int r = -errno;

		if (r == -ENOENT)
			goto done;
		set_err(err, errlen, "%s: %s", dir, strerror(-r));
		return r;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || (skip_dotted && strchr(de->d_name, '.')))
			continue;
		p = grow_array(names, &cap, n + 1, sizeof(*names), 16);
		if (!p)
			goto nomem;
		names = p;
		if (!(names[n] = strdup(de->d_name)))
			goto nomem;
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(names, n, sizeof(*names), compare_name);
done:
	*ret_names = names;
	*ret_n = n;
	return 0;
nomem:
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	set_err(err, errlen, "%s: out of memory", dir);
	return -ENOMEM;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int load_format(struct loader *l, struct perf_pmu_format *f, char *name)
{
	char path[PATH_MAX + 300], text[TEXT_MAX], why[256];
	int r;

	f->name = name;
	snprintf(path, sizeof(path), "%s/format/%s", l->dir, name);
	r = read_text(path, text, sizeof(text), l->err, l->errlen);
	if (r < 0)
		return r;
	r = perf_pmu_parse_format(text, &f->target, &f->mask, why, sizeof(why));
	if (r < 0) {
		set_err(l->err, l->errlen, "%s: %s", path, why);
		return r;
	}
	f->spec = strdup(text);
	return f->spec ? 0 : -ENOMEM;
}

static int load_formats(struct loader *l, struct perf_pmu *pmu)
{
	char path[PATH_MAX + 16], **names;
	size_t n;
	int r;

	file_path(l, path, sizeof(path), "format");
	r = list_dir(path, false, &names, &n, l->err, l->errlen);
	if (r < 0 || n == 0)
		return r;
	pmu->formats = calloc(n, sizeof(*pmu->formats));
	if (!pmu->formats) {
		free_names(names, n);
		return -ENOMEM;
	}
	/* Each name is handed to its format, even on error, so perf_pmu_free frees it. */
	pmu->n_formats = n;
	for (size_t i = 0; i < n; i++)
		pmu->formats[i].name = names[i];
	for (size_t i = 0; i < n && r == 0; i++)
		r = load_format(l, &pmu->formats[i], names[i]);
	free(names);
	return r;
}

/* events/<alias>.scale and .unit, both optional. */
static int load_alias_extras(struct loader *l, struct perf_pmu_alias *a)
{
	char path[PATH_MAX + 300], text[TEXT_MAX], shown[40], *end;
	int r;

	snprintf(path, sizeof(path), "%s/events/%s.scale", l->dir, a->name);
	r = read_text(path, text, sizeof(text), l->err, l->errlen);
	if (r == 0) {
		errno = 0;
		a->scale = strtod(text, &end);
		if (errno || end == text || *end) {
			text_quote(text, shown, sizeof(shown));
			set_err(l->err, l->errlen, "%s: expected a number, got '%s'", path, shown);
			return -EINVAL;
		}
		a->has_scale = true;
	} else if (r != -ENOENT) {
		return r;
	}
	snprintf(path, sizeof(path), "%s/events/%s.unit", l->dir, a->name);
	r = read_text(path, text, sizeof(text), l->err, l->errlen);
	if (r == 0)
		return (a->unit = strdup(text)) ? 0 : -ENOMEM;
	return r == -ENOENT ? 0 : r;
}

static int load_alias(struct loader *l, struct perf_pmu_alias *a)
{
	char path[PATH_MAX + 300], text[TEXT_MAX];
	int r;

	a->scale = 1.0;
	snprintf(path, sizeof(path), "%s/events/%s", l->dir, a->name);
	r = read_text(path, text, sizeof(text), l->err, l->errlen);
	if (r < 0)
		return r;
	if (!(a->terms = strdup(text)))
		return -ENOMEM;
	return load_alias_extras(l, a);
}

static int load_aliases(struct loader *l, struct perf_pmu *pmu)
{
	char path[PATH_MAX + 16], **names;
	size_t n;
	int r;

	file_path(l, path, sizeof(path), "events");
	r = list_dir(path, true, &names, &n, l->err, l->errlen);
	if (r < 0 || n == 0)
		return r;
	pmu->aliases = calloc(n, sizeof(*pmu->aliases));
	if (!pmu->aliases) {
		free_names(names, n);
		return -ENOMEM;
	}
	pmu->n_aliases = n;
	for (size_t i = 0; i < n; i++)
		pmu->aliases[i].name = names[i];
	for (size_t i = 0; i < n && r == 0; i++)
		r = load_alias(l, &pmu->aliases[i]);
	free(names);
	return r;
}

static bool valid_pmu_name(const char *name)
{
	return name[0] && strcmp(name, ".") != 0 && strcmp(name, "..") != 0 && !strchr(name, '/');
}

static const char *root_or_empty(const char *root)
{
	return root && strcmp(root, "/") != 0 ? root : "";
}

int perf_pmu_load(const char *root, const char *name, struct perf_pmu **ret_pmu,
		  char *err, size_t errlen)
{
	struct loader l = { .err = err, .errlen = errlen };
	struct perf_pmu *pmu;
	struct stat st;
	int r;

	if (!valid_pmu_name(name)) {
		set_err(err, errlen, "'%s' is not a PMU name", name);
		return -EINVAL;
	}
	snprintf(l.dir, sizeof(l.dir), "%s" PERF_SYS_PMU_DIR "/%s", root_or_empty(root), name);
	if (stat(l.dir, &st) < 0) {
		r = -errno;
		if (r == -ENOENT)
			set_err(err, errlen, "no PMU '%s' (%s does not exist)", name, l.dir);
		else
			set_err(err, errlen, "%s: %s", l.dir, strerror(-r));
		return r;
	}
	pmu = calloc(1, sizeof(*pmu));
	if (!pmu || !(pmu->name = strdup(name))) {
		free(pmu);
		set_err(err, errlen, "%s: out of memory", l.dir);
		return -ENOMEM;
	}
	r = load_type(&l, pmu);
	if (r == 0)
		r = load_cpumask(&l, pmu);
	if (r == 0)
		r = load_formats(&l, pmu);
	if (r == 0)
		r = load_aliases(&l, pmu);
	if (r < 0) {
		if (r == -ENOMEM)
			set_err(err, errlen, "%s: out of memory", l.dir);
		perf_pmu_free(pmu);
		return r;
	}
	*ret_pmu = pmu;
	return 0;
}

void perf_pmu_free(struct perf_pmu *pmu)
{
	if (!pmu)
		return;
	for (size_t i = 0; i < pmu->n_formats; i++) {
		free(pmu->formats[i].name);
		free(pmu->formats[i].spec);
	}
	for (size_t i = 0; i < pmu->n_aliases; i++) {
		free(pmu->aliases[i].name);
		free(pmu->aliases[i].terms);
		free(pmu->aliases[i].unit);
	}
	free(pmu->formats);
	free(pmu->aliases);
	free(pmu->cpus);
	free(pmu->name);
	free(pmu);
}

int perf_pmu_scan(const char *root, struct perf_pmu_set *ret_set, char *err, size_t errlen)
{
	struct perf_pmu_set set = { 0 };
	char dir[PATH_MAX], **names;
	struct stat st;
	size_t n;
	int r;

	snprintf(dir, sizeof(dir), "%s" PERF_SYS_PMU_DIR, root_or_empty(root));
	if (stat(dir, &st) < 0) {
		r = -errno;
		set_err(err, errlen, "%s: %s", dir, r == -ENOENT ?
			"does not exist (a kernel without perf events)" : strerror(-r));
		return r;
	}
	r = list_dir(dir, false, &names, &n, err, errlen);
	if (r < 0)
		return r;
	set.pmus = calloc(n ? n : 1, sizeof(*set.pmus));
	if (!set.pmus) {
		free_names(names, n);
		set_err(err, errlen, "%s: out of memory", dir);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		r = perf_pmu_load(root, names[i], &set.pmus[set.n], err, errlen);
		if (r == 0)
			set.n++;
	}
	free_names(names, n);
	if (r < 0) {
		perf_pmu_set_free(&set);
		return r;
	}
	*ret_set = set;
	return 0;
}

/*
 * The id of an instance called name of the type whose names start with
 * prefix ("uncore_pcu"): 0 for prefix itself, N for prefix_N; -1 for
 * another name.
 */
static long instance_id(const char *name, const char *prefix)
{
	size_t len = strlen(prefix);
	char *end;
	long id;

	if (strncmp(name, prefix, len) != 0)
		return -1;
	if (name[len] == '\0')
		return 0;
	if (name[len] != '_' || !isdigit((unsigned char)name[len + 1]))
		return -1;
	id = strtol(name + len + 1, &end, 10);
	return *end || id < 0 || id > 65535 ? -1 : id;
}

struct instance {
	long id;
	char *name;
};

static int compare_instance(const void *a, const void *b)
{
	const struct instance *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * Load the instances of prefix among names (sorted by id) into ret, one
 * that does not load left NULL with its error in why[i].
 */
static int load_prefixed(const char *root, char **names, size_t n, const char *prefix,
			 struct perf_pmu **ret, char (*why)[PERF_PMU_WHY_MAX], size_t max,
			 size_t *ret_n)
{
	struct instance *found = calloc(n ? n : 1, sizeof(*found));
	char err[PERF_PMU_WHY_MAX];
	size_t k = 0;

	if (!found)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		long id = instance_id(names[i], prefix);

		if (id >= 0)
			found[k++] = (struct instance){ .id = id, .name = names[i] };
	}
	qsort(found, k, sizeof(*found), compare_instance);
	*ret_n = 0;
	for (size_t i = 0; i < k && i < max; i++) {
		if (perf_pmu_load(root, found[i].name, &ret[i], err, sizeof(err)) < 0) {
			ret[i] = NULL;
			if (why)
				snprintf(why[i], sizeof(why[i]), "%s", err);
		} else if (why) {
			why[i][0] = '\0';
		}
		(*ret_n)++;
	}
	free(found);
	return 0;
}

int perf_pmu_load_instances(const char *root, const char *name, int discovery_type,
			    struct perf_pmu **ret, char (*why)[PERF_PMU_WHY_MAX], size_t max,
			    size_t *ret_n, char *err, size_t errlen)
{
	char dir[PATH_MAX], prefix[96], **names;
	size_t n;
	int r;

	*ret_n = 0;
	snprintf(dir, sizeof(dir), "%s" PERF_SYS_PMU_DIR, root_or_empty(root));
	r = list_dir(dir, false, &names, &n, err, errlen);
	if (r < 0)
		return r;
	snprintf(prefix, sizeof(prefix), "uncore_%s", name);
	r = load_prefixed(root, names, n, prefix, ret, why, max, ret_n);
	if (r == 0 && *ret_n == 0 && discovery_type >= 0) {
		snprintf(prefix, sizeof(prefix), "uncore_type_%d", discovery_type);
		r = load_prefixed(root, names, n, prefix, ret, why, max, ret_n);
	}
	free_names(names, n);
	if (r == 0 && *ret_n == 0) {
		set_err(err, errlen, "no uncore_%s PMU in %s", name, dir);
		return -ENOENT;
	}
	return r;
}

const struct perf_pmu *perf_pmu_set_find(const struct perf_pmu_set *set, const char *name)
{
	for (size_t i = 0; i < set->n; i++)
		if (strcmp(set->pmus[i]->name, name) == 0)
			return set->pmus[i];
	return NULL;
}

void perf_pmu_set_free(struct perf_pmu_set *set)
{
	for (size_t i = 0; i < set->n; i++)
		perf_pmu_free(set->pmus[i]);
	free(set->pmus);
	set->pmus = NULL;
	set->n = 0;
}

int perf_pmu_probe_core(const char *root, struct perf_pmu **ret_pmu, char *reason,
			size_t reasonlen)
{
	struct perf_pmu *pmu;
	int r = perf_pmu_load(root, "cpu", &pmu, reason, reasonlen);

	if (r == -ENOENT) {
		set_err(reason, reasonlen, "this kernel has no core PMU (cpu PMU absent from "
			"sysfs: a virtual machine or a kernel without perf hardware support)");
		return PERF_PMU_CORE_ABSENT;
	}
	if (r < 0)
		return r;
	if (ret_pmu)
		*ret_pmu = pmu;
	else
		perf_pmu_free(pmu);
	return PERF_PMU_CORE_PRESENT;
}
