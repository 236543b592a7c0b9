/*
 * Loading a configuration: the file's bytes are checked first
 * (conf_file.h), then inih splits them into sections and "key = value"
 * pairs, read one physical line at a time so that every error has its
 * line, and each value goes to its key's parser (conf_keys.h).  Every
 * error is collected with its file, line and key, and a file with any
 * error is refused whole.  It does no logging.
 */
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf_file.h"
#include "conf_keys.h"

/* Read buffer of the line reader; longer lines are read in pieces and refused. */
#define RAW_LINE_CHUNK 512

#define SYNTAX_MESSAGE "expected 'key = value' or '[section]'"

/* Section name standing in for a malformed header; reader lines never hold a newline. */
#define BROKEN_SECTION "[\n]"

struct parse_ctx {
	FILE *f;
	const char *file;
	int line;                         /* physical line last handed to inih */
	int read_errno;
	struct conf conf;
	struct conf_errors *errs;
	/* Where each key was first set, 0 = not yet; by section and key index. */
	int set_line[CONF_MAX_SECTIONS][CONF_MAX_SECTION_KEYS];
};

static bool has_error_at(const struct conf_errors *errs, int line)
{
	for (int i = 0; i < errs->n && i < CONF_MAX_ERRORS; i++)
		if (errs->list[i].line == line)
			return true;
	return false;
}

/* ---- the inih handler ---------------------------------------------------- */

/* The index of section name, or -1. */
static int find_section(const char *name)
{
	for (size_t i = 0; i < conf_n_sections(); i++)
		if (conf_section_at(i) && strcmp(conf_section_at(i)->name, name) == 0)
			return (int)i;
	return -1;
}

/* "[daemon], [a], [b] or [c]": every section, for messages. */
static const char *sections_text(char *buf, size_t len)
{
	size_t used = 0, n = conf_n_sections();

	buf[0] = '\0';
	for (size_t i = 0; i < n && used < len; i++) {
		const char *sep = i == 0 ? "" : i + 1 < n ? ", " : " or ";

		used += (size_t)snprintf(buf + used, len - used, "%s[%s]", sep, conf_section_at(i)->name);
	}
	return buf;
}

static const char *keys_of(const struct conf_section *sec, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sec->n_keys && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
					 sec->keys[i].name);
	return buf;
}

static int find_key(const struct conf_section *sec, const char *name)
{
	for (size_t i = 0; i < sec->n_keys && i < CONF_MAX_SECTION_KEYS; i++)
		if (strcmp(sec->keys[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Always returns 1 (go on): errors are collected, not signalled to inih. */
static int handle_key(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;
	char err[sizeof(ctx->errs->list[0].message)], list[192];
	const struct conf_section *sec;
	const struct conf_key *k;
	int si, i;

	if (!*section) {
		conf_add_error(ctx->errs, ctx->file, ctx->line, name,
			  "key outside any section (put it under %s)", sections_text(list, sizeof(list)));
		return 1;
	}
	si = find_section(section);
	if (si < 0)
		return 1;   /* reported once, at the section line */
	sec = conf_section_at((size_t)si);
	i = find_key(sec, name);
	if (i < 0) {
		conf_add_error(ctx->errs, ctx->file, ctx->line, name, "unknown key in [%s] (expected %s)",
			  section, keys_of(sec, list, sizeof(list)));
		return 1;
	}
	k = &sec->keys[i];
	if (ctx->set_line[si][i] && !conf_key_is_repeatable(k)) {
		conf_add_error(ctx->errs, ctx->file, ctx->line, name, "duplicate key, first set on line %d",
			  ctx->set_line[si][i]);
		return 1;
	}
	if (!ctx->set_line[si][i])
		ctx->set_line[si][i] = ctx->line;
	if (conf_parse_value(k, value, conf_section_base(&ctx->conf, (size_t)si), ctx->line, err,
			     sizeof(err)) < 0)
		conf_add_error(ctx->errs, ctx->file, ctx->line, name, "%s", err);
	return 1;
}

/*
 * ---- the line reader -------------------------------------------------------
 *
 * inih as packaged (header defaults) gives the handler no line number, lets
 * an indented line continue the previous value, and cuts lines at
 * INI_MAX_LINE.  So the reader counts lines, refuses over-long and malformed
 * lines itself (so that every one is reported, not only the first), and
 * strips leading blanks, which means indentation is allowed and multi-line
 * values are not.
 */

/*
 * Like inih's own scan: the first of chars, or the start of an inline
 * comment (';' after a blank), or the end of s.
 */
static const char *find_chars_or_comment(const char *s, const char *chars)
{
	bool was_blank = false;

	while (*s && !strchr(chars, *s) && !(was_blank && *s == ';')) {
		was_blank = *s == ' ' || *s == '\t';
		s++;
	}
	return s;
}

/* Report a section header naming no section of ours; name runs from s to end. */
static void check_section(struct parse_ctx *ctx, const char *s, const char *end)
{
	char section[64], list[192];
	size_t len = (size_t)(end - s);

	conf_copy_str(section, len < sizeof(section) ? len + 1 : sizeof(section), s);
	if (find_section(section) < 0)
		conf_add_error(ctx->errs, ctx->file, ctx->line, "", "unknown section '[%s]' (expected %s)",
			  section, sections_text(list, sizeof(list)));
}

/*
 * Check one line (leading blanks already gone) the way inih will read it.
 * Returns false for a line inih would refuse; reports unknown sections.
 */
static bool check_line(struct parse_ctx *ctx, const char *s)
{
	const char *end;

	if (!*s || *s == ';' || *s == '#')
		return true;
	if (*s != '[') {
		end = find_chars_or_comment(s, "=:");
		return *end == '=' || *end == ':';
	}
	end = find_chars_or_comment(s + 1, "]");
	if (*end != ']')
		return false;
	check_section(ctx, s + 1, end);
	return true;
}

/* Read the rest of a line longer than the buffer; returns its length without the line end. */
static size_t line_length(FILE *f, const char *first)
{
	char chunk[RAW_LINE_CHUNK];
	size_t len = strlen(first);

	if (len == 0 || first[len - 1] == '\n')
		return strcspn(first, "\r\n");
	while (fgets(chunk, sizeof(chunk), f)) {
		size_t n = strlen(chunk);

		if (chunk[n - 1] == '\n')
			return len + strcspn(chunk, "\r\n");
		len += n;
	}
	return len;
}

/*
 * The ini_reader: one physical line per call, with leading blanks removed.
 * Over-long and malformed lines are reported here and handed to inih as
 * empty lines, so inih never splits or refuses a line itself.
 */
static char *read_line(char *str, int num, void *stream)
{
	struct parse_ctx *ctx = stream;
	char raw[RAW_LINE_CHUNK], *s = raw;
	size_t len;

	if (!fgets(raw, sizeof(raw), ctx->f)) {
		if (ferror(ctx->f))
			ctx->read_errno = errno ? errno : EIO;
		return NULL;
	}
	ctx->line++;
	len = line_length(ctx->f, raw);
	raw[strcspn(raw, "\r\n")] = '\0';
	str[0] = '\0';
	if (len > (size_t)num - 1) {
		conf_add_error(ctx->errs, ctx->file, ctx->line, "",
			  "line too long (%zu characters, at most %d)", len, num - 1);
		return str;
	}
	if (ctx->line == 1 && strncmp(s, "\xef\xbb\xbf", 3) == 0)
		s += 3;
	s += strspn(s, " \t");
	if (!check_line(ctx, s)) {
		conf_add_error(ctx->errs, ctx->file, ctx->line, "", SYNTAX_MESSAGE);
		/*
		 * A broken section header opens a section no file can name, so
		 * the keys below it are not reported again as misplaced.
		 */
		if (*s == '[')
			conf_copy_str(str, (size_t)num, BROKEN_SECTION);
		return str;
	}
	conf_copy_str(str, (size_t)num, s);
	return str;
}

/* ---- loading -------------------------------------------------------------- */

/* Stable, by line, so the operator reads the errors top to bottom. */
static void sort_errors(struct conf_errors *errs)
{
	int n = errs->n < CONF_MAX_ERRORS ? errs->n : CONF_MAX_ERRORS;

	for (int i = 1; i < n; i++) {
		struct conf_error e = errs->list[i];
		int j = i;

		for (; j > 0 && errs->list[j - 1].line > e.line; j--)
			errs->list[j] = errs->list[j - 1];
		errs->list[j] = e;
	}
}

static int load_stream(const char *name, FILE *f, struct conf *ret_conf, struct conf_errors *errs)
{
	struct parse_ctx *ctx = calloc(1, sizeof(*ctx));
	int r;

	if (!ctx) {
		conf_add_error(errs, name, 0, "", "out of memory");
		return -ENOMEM;
	}
	*ctx = (struct parse_ctx){ .f = f, .file = name, .errs = errs };
	conf_defaults(&ctx->conf);
	r = ini_parse_stream(read_line, ctx, handle_key, ctx);
	if (ctx->read_errno) {
		r = -ctx->read_errno;
		conf_add_error(errs, name, 0, "", "cannot read: %s", strerror(ctx->read_errno));
		goto out;
	}
	if (r > 0 && !has_error_at(errs, r))
		conf_add_error(errs, name, r, "", SYNTAX_MESSAGE);
	else if (r < 0)
		conf_add_error(errs, name, 0, "", "out of memory");
	conf_validate(&ctx->conf, ctx->file, ctx->errs);
	sort_errors(errs);
	r = errs->n ? -EINVAL : 0;
	if (r == 0)
		*ret_conf = ctx->conf;
out:
	free(ctx);
	return r;
}

int conf_load(const char *path, struct conf *ret_conf, struct conf_errors *errs)
{
	char *text, err[sizeof(errs->list[0].message)];
	size_t len;
	int line, r;
	FILE *f;

	errs->n = 0;
	/* The bytes are checked first: type, size, NUL bytes, lone CRs (conf_file.h). */
	r = conf_file_read(path, &text, &len, &line, err, sizeof(err));
	if (r < 0) {
		conf_add_error(errs, path, line, "", "%s", err);
		return r;
	}
	f = fmemopen(text, len, "r");
	if (!f) {
		r = -errno;
		conf_add_error(errs, path, 0, "", "cannot open: %s", strerror(-r));
		free(text);
		return r;
	}
	r = load_stream(path, f, ret_conf, errs);
	fclose(f);
	free(text);
	return r;
}

int conf_load_string(const char *name, const char *text, struct conf *ret_conf,
		     struct conf_errors *errs)
{
	size_t len = strlen(text);
	char *copy = malloc(len + 1);
	FILE *f;
	int r;

	errs->n = 0;
	f = copy ? fmemopen(copy, len, "r") : NULL;
	if (!f) {
		r = copy ? -errno : -ENOMEM;
		conf_add_error(errs, name, 0, "", "cannot open: %s", strerror(-r));
		free(copy);
		return r;
	}
	memcpy(copy, text, len + 1);
	r = load_stream(name, f, ret_conf, errs);
	fclose(f);
	free(copy);
	return r;
}

const char *conf_error_format(const struct conf_error *e, char *buf, size_t len)
{
	char line[16] = "";

	if (e->line > 0)
		snprintf(line, sizeof(line), ":%d", e->line);
	snprintf(buf, len, "%s%s: %s%s%s", e->file, line, e->key, *e->key ? ": " : "", e->message);
	return buf;
}
