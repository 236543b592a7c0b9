/*
 * The error sentence of modules that return errors instead of logging
 * (STYLE §4.5): a negative errno as the result, and one sentence in the
 * caller's buffer saying where and what.
 */
#ifndef UNCORED_ERR_H
#define UNCORED_ERR_H

#include <stddef.h>

/*
 * Format the sentence into err (at most errlen bytes, NUL included,
 * truncated when longer).  Nothing when err is NULL or errlen is 0, so a
 * caller that does not want the sentence passes NULL.
 */
void set_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * One row of a table of what an errno means: err (positive) in any of the
 * operations whose bit (ERR_OP(op)) is set in ops.
 */
struct err_hint {
	int err;
	unsigned ops;
	const char *hint;
};

/* The bit of operation op (a small enum value) in struct err_hint's ops. */
#define ERR_OP(op) (1u << (op))

/* The hint of err in op from a table of rows (an array): err_hint_find on all of it. */
#define ERR_HINT_FIND(rows, err, op) \
	err_hint_find((rows), sizeof(rows) / sizeof((rows)[0]), (err), (op))

/*
 * The hint of the first of the n rows that matches err (either sign) in
 * operation op; strerror() when none does.
 */
const char *err_hint_find(const struct err_hint *rows, size_t n, int err, unsigned op);

#endif
