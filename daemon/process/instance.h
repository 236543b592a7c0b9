/*
 * One uncored per machine: the PMU has one owner.  The lock is an flock on
 * ROOT/run/uncored/instance.lock, a file only uncored's user (root) can
 * open: mode 0600 in a directory of mode 0700 that nobody else owns or
 * may write to, both opened without following symbolic links, so no other
 * local user can take the lock and keep uncored from starting.  The holder
 * writes its pid into the file, and a refusal names it.  The lock is taken
 * before any register is read or written and held until the process exits;
 * the kernel drops it when the process dies, so a killed daemon never
 * leaves a stale lock.  Non-logging.
 */
#ifndef UNCORED_INSTANCE_H
#define UNCORED_INSTANCE_H

#include <stddef.h>

/* Under the machine's root ("/" or a test tree); the unit's RuntimeDirectory=. */
#define INSTANCE_LOCK_DIR "run/uncored"
#define INSTANCE_LOCK_FILE "instance.lock"

/*
 * Lock the machine under root ("/" or a test tree).  Returns the lock's fd
 * (close it to release), -EBUSY when another uncored holds it, -EPERM for a
 * directory or file that others own or may write to, or another negative
 * errno; err holds a sentence in every failure.
 */
int instance_lock(const char *root, char *err, size_t errlen);

#endif
