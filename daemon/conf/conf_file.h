/*
 * Reading a configuration file's bytes before any parsing: the file must
 * be a regular file of sane size whose text has no NUL byte and no
 * carriage return that does not end a line.  The opening never blocks (a
 * FIFO is refused, not waited on) and never reads without end (a device
 * such as /dev/zero is refused by its type).  Also finds the line a key
 * was set on, so errors found after parsing can say where the value came
 * from.  Non-logging.
 */
#ifndef UNCORED_CONF_FILE_H
#define UNCORED_CONF_FILE_H

#include <stddef.h>

/* The largest configuration file read; a real one is a few KiB. */
#define CONF_FILE_MAX (1024 * 1024)

/*
 * Read path whole into *ret_text (allocated, NUL-terminated; free it) and
 * its length into *ret_len.  Returns 0; or a negative errno with
 * *ret_line set to the offending line (0 when the error concerns the whole
 * file) and err a message without the file name: -ENOENT and the like
 * from open or read, -EISDIR for a directory, -EINVAL for another file
 * that is not a regular file (a FIFO, a device, a socket), -EFBIG for one over CONF_FILE_MAX bytes,
 * -EILSEQ for a NUL byte or a lone carriage return (CR LF line ends are
 * fine).
 */
int conf_file_read(const char *path, char **ret_text, size_t *ret_len, int *ret_line,
		   char *err, size_t errlen);

/*
 * Check len bytes of text as conf_file_read does (NUL bytes, lone carriage
 * returns).  Returns 0, or -EILSEQ with *ret_line and err set.
 */
int conf_file_check_text(const char *text, size_t len, int *ret_line, char *err, size_t errlen);

/*
 * The line of path on which key is last set in section (ini syntax:
 * "[section]" headers, "key = value" or "key: value", ';' and '#'
 * comments), or 0 when it is not set there or the file cannot be read.
 */
int conf_file_key_line(const char *path, const char *section, const char *key);

#endif
