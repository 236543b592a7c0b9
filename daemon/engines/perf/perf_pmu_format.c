/*
 * The text of a PMU's sysfs files, and attr.config built from it: the
 * format parser ("config1:0-7,32-35"), event term lists, CPU lists, and
 * the encoding of a term list through a loaded PMU's formats
 * (perf_pmu.h).  It reads no file and never logs: errors come back as a
 * sentence naming the PMU, the field and the value.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "perf_pmu.h"
#include "perf_pmu_text.h"
#include "text.h"

/* sysfs attributes are at most a page. */
#define TEXT_MAX PERF_PMU_TEXT_MAX
/* Terms in one event description; the kernel's aliases use at most a handful. */
#define TERMS_MAX 32

static const char *const target_names[PERF_PMU_TARGET_COUNT] = {
	"config", "config1", "config2", "config3",
};

const char *perf_pmu_target_name(enum perf_pmu_target target)
{
	return (unsigned)target < PERF_PMU_TARGET_COUNT ? target_names[target] : "?";
}

/* Strip trailing whitespace (sysfs ends every attribute with a newline). */
void perf_pmu_trim(char *s)
{
	size_t len = strlen(s);

	while (len > 0 && isspace((unsigned char)s[len - 1]))
		s[--len] = '\0';
}

/* Parse an unsigned number (decimal, 0x hex, 0 octal) that fills all of s. */
int perf_pmu_parse_u64(const char *s, uint64_t *ret_value)
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
		if (text_parse_dec(p, 63, &lo, &p) < 0)
			return -EINVAL;
		hi = lo;
		if (*p == '-' && (text_parse_dec(p + 1, 63, &hi, &p) < 0 || hi < lo))
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
	perf_pmu_trim(buf);
	colon = strchr(buf, ':');
	if (!colon || parse_target(buf, (size_t)(colon - buf), &target) < 0 ||
	    parse_bits(colon + 1, &mask) < 0) {
		text_quote(text, shown, sizeof(shown));
		set_err(err, errlen, "expected 'config[123]:BITS' with BITS a comma-separated "
			"list of N or LO-HI (0 to 63), got '%s'", shown);
		return -EINVAL;
	}
	*ret_target = target;
	*ret_mask = mask;
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
	text_quote(buf, shown, sizeof(shown));
	if (!buf[0] || strlen(buf) >= sizeof(term->name) || strspn(buf,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(buf)) {
		set_err(err, errlen, "expected a field name, got '%s'", shown);
		return -EINVAL;
	}
	snprintf(term->name, sizeof(term->name), "%s", buf);
	term->value = 1;
	if (eq && perf_pmu_parse_u64(eq + 1, &term->value) < 0) {
		text_quote(eq + 1, shown, sizeof(shown));
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
