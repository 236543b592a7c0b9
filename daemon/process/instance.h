/*
 * One uncored per machine: the PMU has one owner.  The lock is an flock on
 * the machine's CPU device directory (ROOT/dev/cpu), the one thing every
 * uncored on that machine shares whatever its configuration (state_file,
 * listen address).  It is taken before any register is read or written and
 * held until the process exits; the kernel drops it when the process dies,
 * so a killed daemon never leaves a stale lock.  Non-logging.
 */
#ifndef UNCORED_INSTANCE_H
#define UNCORED_INSTANCE_H

#include <stddef.h>

/*
 * Lock the machine under root ("/" or a test tree).  Returns the lock's fd
 * (close it to release), -EBUSY when another process holds it, or another
 * negative errno (no ROOT/dev/cpu: the caller's backend reports that
 * better); err holds a sentence on -EBUSY.
 */
int instance_lock(const char *root, char *err, size_t errlen);

#endif
