/*
 * PMU discovery from the kernel's event_source bus in sysfs, and event
 * configs built through each PMU's format files.  It owns the parsed PMU
 * descriptions; it reads files only when a PMU is loaded, never opens an
 * event, and never logs: errors come back as a sentence naming the file,
 * or the PMU, the field and the value.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "perf_pmu.h"
#include "perf_sys.h"

/* sysfs attributes are at most a page. */
#define TEXT_MAX 4096
/* Terms in one event description; the kernel's aliases use at most a handful. */
#define TERMS_MAX 32

static const char *const target_names[PERF_PMU_TARGET_COUNT] = {
	"config", "config1", "config2", "config3",
};

const char *perf_pmu_target_name(enum perf_pmu_target target)
{
	return (unsigned)target < PERF_PMU_TARGET_COUNT ? target_names[target] : "?";
}

/* Text for an error message: no trailing whitespace, unprintables as '?'. */
static void quote_text(const char *text, char *out, size_t outlen)
{
	size_t len = strlen(text), n;

	while (len > 0 && isspace((unsigned char)text[len - 1]))
		len--;
	for (n = 0; n < len && n + 1 < outlen; n++)
		out[n] = isprint((unsigned char)text[n]) ? text[n] : '?';
	out[n] = '\0';
}

/* Strip trailing whitespace (sysfs ends every attribute with a newline). */
static void trim(char *s)
{
	size_t len = strlen(s);

	while (len > 0 && isspace((unsigned char)s[len - 1]))
		s[--len] = '\0';
}

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
	trim(buf);
	return 0;
}

/* Parse an unsigned number (decimal, 0x hex, 0 octal) that fills all of s. */
static int parse_u64(const char *s, uint64_t *ret_value)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -EINVAL;
	*ret_value = v;
	return 0;
}

/* Parse a decimal number in [0, max] that ends at *ret_end. */
static int parse_dec(const char *s, long max, long *ret_value, const char **ret_end)
{
	long v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (*p - '0');
		if (v > max)
			return -EINVAL;
	}
	*ret_value = v;
	*ret_end = p;
	return 0;
}

/* Formats */

static int parse_target(const char *text, size_t len, enum perf_pmu_target *ret_target)
{
	for (int t = 0; t < PERF_PMU_TARGET_COUNT; t++) {
		if (strlen(target_names[t]) == len && strncmp(text, target_names[t], len) == 0) {
			*ret_target = (enum perf_pmu_target)t;
			return 0;
		}
	}
	return -EINVAL;
}

/* "n" or "lo-hi" list, bits 0..63, into a mask. */
static int parse_bits(const char *p, uint64_t *ret_mask)
{
	uint64_t mask = 0;
	long lo, hi;

	for (;;) {
		if (parse_dec(p, 63, &lo, &p) < 0)
			return -EINVAL;
		hi = lo;
		if (*p == '-' && (parse_dec(p + 1, 63, &hi, &p) < 0 || hi < lo))
			return -EINVAL;
		for (long b = lo; b <= hi; b++)
			mask |= UINT64_C(1) << b;
		if (*p == '\0')
			break;
		if (*p++ != ',')
			return -EINVAL;
	}
	*ret_mask = mask;
	return 0;
}

int perf_pmu_parse_format(const char *text, enum perf_pmu_target *ret_target,
			  uint64_t *ret_mask, char *err, size_t errlen)
{
	char buf[TEXT_MAX], shown[80];
	const char *colon;
	enum perf_pmu_target target;
	uint64_t mask;

	snprintf(buf, sizeof(buf), "%s", text);
	trim(buf);
	colon = strchr(buf, ':');
	if (!colon || parse_target(buf, (size_t)(colon - buf), &target) < 0 ||
	    parse_bits(colon + 1, &mask) < 0) {
		quote_text(text, shown, sizeof(shown));
		set_err(err, errlen, "expected 'config[123]:BITS' with BITS a comma-separated "
			"list of N or LO-HI (0 to 63), got '%s'", shown);
		return -EINVAL;
	}
	*ret_target = target;
	*ret_mask = mask;
	return 0;
}

/* CPU lists */

static int compare_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int append_range(int **cpus, size_t *n, size_t *cap, long lo, long hi)
{
	for (long c = lo; c <= hi; c++) {
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 16;
			int *p = realloc(*cpus, ncap * sizeof(**cpus));

			if (!p)
				return -ENOMEM;
			*cpus = p;
			*cap = ncap;
		}
		(*cpus)[(*n)++] = (int)c;
	}
	return 0;
}

int perf_pmu_parse_cpulist(const char *text, int **ret_cpus, size_t *ret_n)
{
	char buf[TEXT_MAX];
	const char *p = buf;
	int *cpus = NULL;
	size_t n = 0, cap = 0, out = 0;
	long lo, hi;
	int r = 0;

	snprintf(buf, sizeof(buf), "%s", text);
	trim(buf);
	while (*p && r == 0) {
		/* No CPU number above the kernel's NR_CPUS limit of 8192 could appear. */
		if (parse_dec(p, 65535, &lo, &p) < 0) {
			r = -EINVAL;
			break;
		}
		hi = lo;
		if (*p == '-' && (parse_dec(p + 1, 65535, &hi, &p) < 0 || hi < lo)) {
			r = -EINVAL;
			break;
		}
		r = append_range(&cpus, &n, &cap, lo, hi);
		if (r == 0 && *p && (*p++ != ',' || !*p))
			r = -EINVAL;
	}
	if (r < 0) {
		free(cpus);
		return r;
	}
	if (n > 0)
		qsort(cpus, n, sizeof(*cpus), compare_int);
	for (size_t i = 0; i < n; i++)
		if (out == 0 || cpus[out - 1] != cpus[i])
			cpus[out++] = cpus[i];
	*ret_cpus = cpus;
	*ret_n = out;
	return 0;
}

/* Terms */

static int parse_one_term(const char *text, size_t len, struct perf_pmu_term *term,
			  char *err, size_t errlen)
{
	char buf[TEXT_MAX], shown[80];
	char *eq;

	snprintf(buf, sizeof(buf), "%.*s", (int)len, text);
	eq = strchr(buf, '=');
	if (eq)
		*eq = '\0';
	quote_text(buf, shown, sizeof(shown));
	if (!buf[0] || strlen(buf) >= sizeof(term->name) || strspn(buf,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(buf)) {
		set_err(err, errlen, "expected a field name, got '%s'", shown);
		return -EINVAL;
	}
	snprintf(term->name, sizeof(term->name), "%s", buf);
	term->value = 1;
	if (eq && parse_u64(eq + 1, &term->value) < 0) {
		quote_text(eq + 1, shown, sizeof(shown));
		set_err(err, errlen, "%s: expected a number (decimal or 0x hex) up to 64 bits, "
			"got '%s'", term->name, shown);
		return -EINVAL;
	}
	return 0;
}

int perf_pmu_parse_terms(const char *text, struct perf_pmu_term *terms, size_t max,
			 size_t *ret_n, char *err, size_t errlen)
{
	const char *p = text;
	size_t n = 0;

	while (isspace((unsigned char)*p))
		p++;
	while (*p) {
		size_t len = strcspn(p, ",");
		size_t tlen = len;

		while (tlen > 0 && isspace((unsigned char)p[tlen - 1]))
			tlen--;
		if (n == max) {
			set_err(err, errlen, "more than %zu terms", max);
			return -E2BIG;
		}
		if (parse_one_term(p, tlen, &terms[n], err, errlen) < 0)
			return -EINVAL;
		n++;
		p += len;
		if (*p == ',') {
			p++;
			while (isspace((unsigned char)*p))
				p++;
			if (!*p) {
				set_err(err, errlen, "expected a field name after ','");
				return -EINVAL;
			}
		}
	}
	*ret_n = n;
	return 0;
}

/* Configs */

const struct perf_pmu_format *perf_pmu_find_format(const struct perf_pmu *pmu, const char *name)
{
	for (size_t i = 0; i < pmu->n_formats; i++)
		if (strcmp(pmu->formats[i].name, name) == 0)
			return &pmu->formats[i];
	return NULL;
}

const struct perf_pmu_alias *perf_pmu_find_alias(const struct perf_pmu *pmu, const char *name)
{
	for (size_t i = 0; i < pmu->n_aliases; i++)
		if (strcmp(pmu->aliases[i].name, name) == 0)
			return &pmu->aliases[i];
	return NULL;
}

static void list_fields(const struct perf_pmu *pmu, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < pmu->n_formats && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 pmu->formats[i].name);
	if (pmu->n_formats == 0)
		snprintf(buf, len, "none");
}

int perf_pmu_set_field(const struct perf_pmu *pmu, struct perf_pmu_config *cfg,
		       const char *field, uint64_t value, char *err, size_t errlen)
{
	const struct perf_pmu_format *f = perf_pmu_find_format(pmu, field);
	enum perf_pmu_target target;
	uint64_t placed = 0, rest = value;
	int width = 0;

	if (!f) {
		char fields[512];

		if (parse_target(field, strlen(field), &target) == 0) {
			cfg->config[target] = value;
			return 0;
		}
		list_fields(pmu, fields, sizeof(fields));
		set_err(err, errlen, "PMU '%s' has no field '%s' (value 0x%llx); its fields: %s",
			pmu->name, field, (unsigned long long)value, fields);
		return -ENOENT;
	}
	/* Lowest value bit into the lowest listed position (tools/perf/util/pmu.c). */
	for (int b = 0; b < 64; b++) {
		if (!(f->mask & (UINT64_C(1) << b)))
			continue;
		if (rest & 1)
			placed |= UINT64_C(1) << b;
		rest >>= 1;
		width++;
	}
	if (rest) {
		set_err(err, errlen, "PMU '%s': value 0x%llx does not fit field '%s' "
			"(%d bit%s, %s)", pmu->name, (unsigned long long)value, field, width,
			width == 1 ? "" : "s", f->spec);
		return -ERANGE;
	}
	cfg->config[f->target] = (cfg->config[f->target] & ~f->mask) | placed;
	return 0;
}

int perf_pmu_encode(const struct perf_pmu *pmu, const char *terms, struct perf_pmu_config *ret_cfg,
		    char *err, size_t errlen)
{
	struct perf_pmu_term t[TERMS_MAX];
	struct perf_pmu_config cfg = { { 0 } };
	char why[256];
	size_t n;
	int r;

	r = perf_pmu_parse_terms(terms, t, TERMS_MAX, &n, why, sizeof(why));
	if (r < 0) {
		set_err(err, errlen, "PMU '%s': %s", pmu->name, why);
		return r;
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < i; j++) {
			if (strcmp(t[i].name, t[j].name) == 0) {
				set_err(err, errlen, "PMU '%s': field '%s' given twice",
					pmu->name, t[i].name);
				return -EINVAL;
			}
		}
		r = perf_pmu_set_field(pmu, &cfg, t[i].name, t[i].value, err, errlen);
		if (r < 0)
			return r;
	}
	*ret_cfg = cfg;
	return 0;
}

int perf_pmu_alias_config(const struct perf_pmu *pmu, const char *name,
			  struct perf_pmu_config *ret_cfg, char *err, size_t errlen)
{
	const struct perf_pmu_alias *a = perf_pmu_find_alias(pmu, name);
	char why[512];
	int r;

	if (!a) {
		set_err(err, errlen, "PMU '%s' has no event '%s'", pmu->name, name);
		return -ENOENT;
	}
	r = perf_pmu_encode(pmu, a->terms, ret_cfg, why, sizeof(why));
	if (r < 0)
		set_err(err, errlen, "events/%s of %s: %s", name, pmu->name, why);
	return r;
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
	if (parse_u64(text, &v) < 0 || v > UINT32_MAX) {
		quote_text(text, shown, sizeof(shown));
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
	r = perf_pmu_parse_cpulist(text, &pmu->cpus, &pmu->n_cpus);
	if (r == -EINVAL) {
		quote_text(text, shown, sizeof(shown));
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
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			p = realloc(names, cap * sizeof(*names));
			if (!p)
				goto nomem;
			names = p;
		}
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
			quote_text(text, shown, sizeof(shown));
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
