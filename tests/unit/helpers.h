/*
 * Shared helpers for the unit tests.
 */
#ifndef UNCORED_TEST_HELPERS_H
#define UNCORED_TEST_HELPERS_H

#include <stddef.h>

/* Make a fresh temporary directory; the path is written to buf. */
void helpers_mkdtemp(char *buf, size_t len);

/* Remove a directory tree made by helpers_mkdtemp. */
void helpers_rmtree(const char *path);

/* Write text to path, creating parent directories. */
void helpers_write_file(const char *path, const char *text);

/* Path of a file in the source tree ($UNCORED_SOURCE_ROOT/rel). */
const char *helpers_source_path(const char *rel, char *buf, size_t len);

#endif
