/*
 * conf_file: a configuration file's bytes are checked before parsing, and
 * conf_load refuses what they fail with FILE:LINE (or FILE: for the whole
 * file): NUL bytes, lone carriage returns, files that are not regular
 * (directory, FIFO, /dev/zero) and files over the size limit.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "conf.h"
#include "conf_file.h"
#include "helpers.h"

static char dir[256], path[512];
static struct conf conf;
static struct conf_errors errs;

static int setup(void **state)
{
	(void)state;
	helpers_mkdtemp(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/uncored.conf", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	helpers_rmtree(dir);
	return 0;
}

static void write_bytes(const char *text, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* conf_load(p) must fail with r and the one error "p" + want. */
static void refused(const char *p, int r, const char *want)
{
	char line[600], expected[600];

	assert_int_equal(conf_load(p, &conf, &errs), r);
	assert_int_equal(errs.n, 1);
	snprintf(expected, sizeof(expected), "%s%s", p, want);
	assert_string_equal(conf_error_format(&errs.list[0], line, sizeof(line)), expected);
}

static void nul_bytes_are_refused_with_their_line(void **state)
{
	static const char text[] = "[daemon]\ninterval = 2\nlisten = 127.0.0.1:9\0 700\nuser = root\n";

	(void)state;
	write_bytes(text, sizeof(text) - 1);
	refused(path, -EILSEQ, ":3: NUL byte (a configuration file is text)");
}

static void a_file_of_nul_bytes_is_not_empty(void **state)
{
	char zeros[1000] = { 0 };

	(void)state;
	write_bytes(zeros, sizeof(zeros));
	refused(path, -EILSEQ, ":1: NUL byte (a configuration file is text)");
}

static void lone_carriage_returns_are_refused(void **state)
{
	static const char cr_only[] = "[daemon]\rinterval = 2\rlisten = 127.0.0.1:9\r";
	static const char inside[] = "[daemon]\ninterval = 2\nuser = ro\rot\n";

	(void)state;
	write_bytes(cr_only, sizeof(cr_only) - 1);
	refused(path, -EILSEQ, ":1: carriage return without a line feed (lines end in LF or CR LF)");
	write_bytes(inside, sizeof(inside) - 1);
	refused(path, -EILSEQ, ":3: carriage return without a line feed (lines end in LF or CR LF)");
}

static void crlf_line_ends_are_fine(void **state)
{
	static const char text[] = "[daemon]\r\ninterval = 2\r\nmax_episodes = 7\r\n";

	(void)state;
	write_bytes(text, sizeof(text) - 1);
	assert_int_equal(conf_load(path, &conf, &errs), 0);
	assert_int_equal(conf.max_episodes, 7);
	assert_true(conf.interval_s == 2.0);
}

static void an_empty_file_means_the_defaults(void **state)
{
	struct conf defaults;

	(void)state;
	write_bytes("", 0);
	conf_defaults(&defaults);
	assert_int_equal(conf_load(path, &conf, &errs), 0);
	assert_int_equal(errs.n, 0);
	assert_string_equal(conf.listen, defaults.listen);
	assert_int_equal(conf.max_episodes, defaults.max_episodes);
}

static void non_regular_files_are_refused_without_blocking(void **state)
{
	char fifo[600];

	(void)state;
	refused(dir, -EISDIR, ": a directory, not a regular file");
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* No writer: an open that waited for one would hang here. */
	refused(fifo, -EINVAL, ": a FIFO, not a regular file");
	refused("/dev/zero", -EINVAL, ": a character device, not a regular file");
	refused("/dev/null", -EINVAL, ": a character device, not a regular file");
}

static void oversized_files_are_refused(void **state)
{
	size_t len = CONF_FILE_MAX + 1;
	char *text = malloc(len), want[128];

	(void)state;
	assert_non_null(text);
	memset(text, '\n', len);
	write_bytes(text, len);
	snprintf(want, sizeof(want), ": too large (%zu bytes, at most %d)", len, CONF_FILE_MAX);
	refused(path, -EFBIG, want);
	/* Exactly the limit is fine. */
	write_bytes(text, len - 1);
	assert_int_equal(conf_load(path, &conf, &errs), 0);
	free(text);
}

static void key_lines_are_found(void **state)
{
	static const char text[] =
		"; a comment\n"
		"[daemon]\n"
		"  user = nobody\n"
		"# user = root\n"
		"listen: 127.0.0.1:9\n"
		"[core]\n"
		"user = x\n"
		"[daemon]\n"
		"user=uncored\n";

	(void)state;
	write_bytes(text, sizeof(text) - 1);
	assert_int_equal(conf_file_key_line(path, "daemon", "user"), 9);
	assert_int_equal(conf_file_key_line(path, "daemon", "listen"), 5);
	assert_int_equal(conf_file_key_line(path, "core", "user"), 7);
	assert_int_equal(conf_file_key_line(path, "daemon", "root"), 0);
	assert_int_equal(conf_file_key_line("/nonexistent", "daemon", "user"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(nul_bytes_are_refused_with_their_line, setup, teardown),
		cmocka_unit_test_setup_teardown(a_file_of_nul_bytes_is_not_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(lone_carriage_returns_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(crlf_line_ends_are_fine, setup, teardown),
		cmocka_unit_test_setup_teardown(an_empty_file_means_the_defaults, setup, teardown),
		cmocka_unit_test_setup_teardown(non_regular_files_are_refused_without_blocking,
						setup, teardown),
		cmocka_unit_test_setup_teardown(oversized_files_are_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(key_lines_are_found, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
