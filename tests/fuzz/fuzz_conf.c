/*
 * libFuzzer target for the configuration parser: every input is taken as
 * the text of a config file and handed to conf_load_string(), which runs
 * inih and every value and cross-event check.  It only looks for crashes,
 * leaks and undefined behaviour; the meaning of the result is the unit
 * tests' business.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct conf conf;
	static struct conf_errors errs;
	char *text = malloc(size + 1);
	char line[1024];

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (conf_load_string("fuzz.conf", text, &conf, &errs) < 0) {
		/* Formatting every kept error is part of what a user sees. */
		for (int i = 0; i < errs.n && i < CONF_MAX_ERRORS; i++)
			conf_error_format(&errs.list[i], line, sizeof(line));
	}
	free(text);
	return 0;
}
