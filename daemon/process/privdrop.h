/*
 * Dropping root (SPEC §8, STYLE §4.12): after every privileged step of
 * start-up (msr/cpuid fds opened, socket bound), switch to an
 * unprivileged user with no capabilities and no way to regain any.
 * Already-open fds keep working.
 */
#ifndef UNCORED_PRIVDROP_H
#define UNCORED_PRIVDROP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Become user: no supplementary groups, real/effective/saved gid and uid
 * of the user, every capability set (effective, permitted, inheritable,
 * ambient, bounding) empty, and PR_SET_NO_NEW_PRIVS set; then read it all
 * back and refuse if any part did not take.
 *
 * Nothing is done (return 1) when user is "" or "root", or when the
 * process is not running as root: tests and simulation runs as a normal
 * user keep running as that user.
 *
 * Must be called while the process has a single thread: capability sets
 * and no-new-privs are per thread, so threads started earlier would keep
 * theirs (refused with -EBUSY).
 *
 * Returns 0 when dropped, 1 when nothing was to be done, or a negative
 * errno with a sentence in err: -ENOENT for a user that does not exist
 * (hint: systemd-sysusers), -EBUSY for a multi-threaded caller, -EPERM
 * when the verification failed, or the errno of the failing call.  After
 * a failure the process may be half-dropped and must not serve.
 */
int privdrop_to_user(const char *user, char *err, size_t errlen);

/* What privdrop_to_user_keep may keep. */
#define PRIVDROP_KEEP_PERFMON 0x1u   /* CAP_PERFMON: perf_event_open of CPU-wide events */

/*
 * privdrop_to_user, keeping the capabilities in keep in the permitted and
 * effective sets (and nothing else: inheritable, ambient and bounding sets
 * empty, no-new-privs set), so that the hardware side can open perf events
 * again after the drop (a CPU back online, a reload that restarts a
 * collector; hardware-linux.md §3.1).  The verification then expects
 * exactly those bits in CapPrm and CapEff.  Returns as privdrop_to_user,
 * and 2 when the drop was done but a capability of keep was not kept
 * because the kernel does not know it (CAP_PERFMON: before Linux 5.8) or
 * the process did not hold it (a bounding set without it).
 */
int privdrop_to_user_keep(const char *user, unsigned keep, char *err, size_t errlen);

/*
 * Become the keeper of a process of user of (privsep_keeper.c): real and
 * saved uid and gid of user (root for "" and "root"), effective uid and
 * gid of of, no supplementary group, every capability set empty,
 * no-new-privs; then read it all back.  The kernel checks a signal against
 * the sender's real or effective uid and the target's real or saved uid:
 * so user's processes may signal the keeper, the parent-death signal the
 * keeper's end sends (checked as from the keeper) reaches of's process,
 * and of's processes may not signal the keeper.  Nothing is done (1) when
 * the process is not root.  Returns as privdrop_to_user().
 */
int privdrop_to_keeper(const char *user, const char *of, char *err, size_t errlen);

/* Whether privdrop_to_user(user) would drop anything (0 rather than 1). */
bool privdrop_will_drop(const char *user);

/*
 * Stay the same user but keep only capability cap (linux/capability.h):
 * effective and permitted hold cap alone, the bounding set nothing else,
 * inheritable and ambient nothing; no-new-privs is set.  For the process
 * that opens a late CPU's msr device (hwopen.h), which needs root's
 * ownership of the device file and CAP_SYS_RAWIO, and nothing more.
 * Returns 0 or a negative errno with a sentence in err.
 */
int privdrop_keep_only(int cap, char *err, size_t errlen);

#endif
