/*
 * Inside the conf layer: the sections and their keys, one value's parsing
 * and the error list, as the key tables (conf.c) give them to the loader
 * (conf_load.c) and to the checks across keys (conf_validate.c).  Not for
 * use outside daemon/conf.
 */
#ifndef UNCORED_CONF_KEYS_H
#define UNCORED_CONF_KEYS_H

#include <stdbool.h>
#include <stddef.h>

#include "conf.h"

/* At most this many sections ([daemon] included) and keys in one section. */
#define CONF_MAX_SECTIONS 16
#define CONF_MAX_SECTION_KEYS 32

/* How many sections: [daemon] and the registered collectors', at most CONF_MAX_SECTIONS. */
size_t conf_n_sections(void);

/* Section i: [daemon], then each registered collector's in registration order; NULL past. */
const struct conf_section *conf_section_at(size_t i);

/*
 * Where the offsets of section i's keys count from in conf: conf itself,
 * or the settings block of a section that has one (settings_size).
 */
void *conf_section_base(struct conf *conf, size_t i);

/*
 * Parse value for key k into its place from base (conf_section_base()).
 * line is where value was read (an event line keeps it; 0 for a default).
 * Returns 0, or a negative errno with err saying what was expected.
 */
int conf_parse_value(const struct conf_key *k, const char *value, void *base, int line,
		     char *err, size_t errlen);

/* Whether k may be given more than once in its section (an event line). */
bool conf_key_is_repeatable(const struct conf_key *k);

/* Copy src into dst of size bytes, truncated, always terminated. */
void conf_copy_str(char *dst, size_t size, const char *src);

/*
 * Add the error FILE:LINE: KEY: message to errs (counted, but not kept,
 * past CONF_MAX_ERRORS).
 */
__attribute__((format(printf, 5, 6)))
void conf_add_error(struct conf_errors *errs, const char *file, int line, const char *key,
		    const char *fmt, ...);

/*
 * The checks across keys of conf, read from file: each section's check and
 * that some collector is enabled; every failure added to errs.
 */
void conf_validate(const struct conf *conf, const char *file, struct conf_errors *errs);

#endif
