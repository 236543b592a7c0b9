/*
 * The kernel's perf_event interface, as uncored uses it.
 *
 * Every perf_event_open(2), read(2), ioctl(2) and close(2) on a perf event
 * fd goes through a struct perf_sys, and so does the location of the PMU
 * sysfs tree (<root>/sys/bus/event_source/devices).  Two implementations
 * sit behind it: perf_sys_linux.c (the real system calls) and the
 * simulator's kernel side (sim_perf_sys() in sim.h, sim_perf.c), whose
 * PMU tree sim_write_sysfs() writes under a root of the caller's.  Only start-up code and tests choose one; no
 * module above this header knows which one it talks to.
 *
 * The ops mirror the system calls' ABI (struct perf_event_attr, the
 * PERF_EVENT_IOC_* requests, the read_format layout), so an
 * implementation is a kernel, not a re-interpretation of one.  They
 * return a negative errno instead of setting errno.
 *
 * The wrappers count the calls made through them, so a benchmark can
 * report system calls per sample.  A struct perf_sys is used by one
 * thread at a time (the sampler); the counts are not atomic.
 */
#ifndef UNCORED_PERF_SYS_H
#define UNCORED_PERF_SYS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The PMU devices directory, relative to the root prefix. */
#define PERF_SYS_PMU_DIR "/sys/bus/event_source/devices"

/* An implementation.  Every function takes the implementation's own ctx. */
struct perf_sys_ops {
	const char *name;   /* "linux" or "sim", for logs only */

	/*
	 * perf_event_open(attr, pid, cpu, group_fd, flags): a new fd, or a
	 * negative errno with the kernel's meaning (see perf_group_hint()).
	 */
	int (*open)(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu,
		    int group_fd, unsigned long flags);

	/* read(fd, buf, len): bytes read (0 is end of file), or -errno. */
	ssize_t (*read)(void *ctx, int fd, void *buf, size_t len);

	/*
	 * ioctl(fd, request, arg) for the PERF_EVENT_IOC_* requests: 0 or
	 * -errno (-ENOTTY for a request the implementation does not know).
	 * For PERF_EVENT_IOC_ID, arg is a uint64_t * cast to unsigned long.
	 */
	int (*ioctl)(void *ctx, int fd, unsigned long request, unsigned long arg);

	/* close(fd): 0 or -errno. */
	int (*close)(void *ctx, int fd);

	/*
	 * Release the implementation's ctx (not the fds, which callers
	 * close); NULL when there is nothing to release.
	 */
	void (*free)(void *ctx);
};

/* Calls made through one struct perf_sys, by kind. */
struct perf_sys_counts {
	uint64_t n_open;
	uint64_t n_read;
	uint64_t n_ioctl;
	uint64_t n_close;
};

struct perf_sys {
	const struct perf_sys_ops *ops;
	void *ctx;
	char *root;                    /* prefix without trailing '/'; "" for "/" */
	struct perf_sys_counts counts;
	bool drops_sys_admin;          /* the process gives up CAP_SYS_ADMIN after start */
};

/*
 * Fill ps for implementation ops with context ctx and root prefix root
 * ("/" or NULL for the real machine).  Used by the implementations'
 * constructors.  0, or -ENOMEM (then ops->free(ctx) has been called).
 */
int perf_sys_init(struct perf_sys *ps, const struct perf_sys_ops *ops, void *ctx,
		  const char *root);

/*
 * Open one counting event on one CPU for every task (pid -1), with
 * PERF_FLAG_FD_CLOEXEC, as a member of group_fd's group or a new group
 * leader (group_fd -1).  The fd, or a negative errno.
 */
int perf_sys_open(struct perf_sys *ps, struct perf_event_attr *attr, int cpu, int group_fd);

/* read(2) on a perf fd: bytes read, 0 at end of file, or -errno. */
ssize_t perf_sys_read(struct perf_sys *ps, int fd, void *buf, size_t len);

/*
 * PERF_EVENT_IOC_ENABLE / _DISABLE / _RESET on fd; flags is 0 or
 * PERF_IOC_FLAG_GROUP (the whole group of which fd is the leader).
 * 0 or -errno.
 */
int perf_sys_enable(struct perf_sys *ps, int fd, unsigned flags);
int perf_sys_disable(struct perf_sys *ps, int fd, unsigned flags);
int perf_sys_reset(struct perf_sys *ps, int fd, unsigned flags);

/* PERF_EVENT_IOC_ID: the event's id as a group read reports it.  0 or -errno. */
int perf_sys_id(struct perf_sys *ps, int fd, uint64_t *ret_id);

/* close(2) a perf fd; a negative fd is ignored.  0 or -errno. */
int perf_sys_close(struct perf_sys *ps, int fd);

/* The root prefix sysfs paths are built under ("" for the real machine). */
const char *perf_sys_root(const struct perf_sys *ps);

/* Every call made through ps so far: opens + reads + ioctls + closes. */
uint64_t perf_sys_calls(const struct perf_sys *ps);

/*
 * Read <root>/proc/sys/kernel/perf_event_paranoid into *ret_level.
 * 0, or -errno (-ENOENT when the file is absent or hidden, as under
 * ProcSubset=pid; -EINVAL when it does not hold an integer).
 */
int perf_sys_read_paranoid(const struct perf_sys *ps, int *ret_level);

/*
 * Say that the process gives up CAP_SYS_ADMIN after start (the privilege
 * drop to a configured user, privdrop.h): events it opens now succeed, but
 * above perf_event_paranoid 2 every later open (a CPU back online, a
 * reload) would be refused.
 */
void perf_sys_set_drops_sys_admin(struct perf_sys *ps, bool drops);

/* Room for perf_sys_paranoid_text's text. */
#define PERF_SYS_PARANOID_TEXT_MAX 16

/*
 * The level of perf_event_paranoid as a message says it after "is": "3",
 * or "unreadable" where the file cannot be read (a sandbox that hides it,
 * hardware-linux.md §7.1; start-up logs the path and the error once).
 * Returns whether the level is strict: above 2, where only CAP_SYS_ADMIN
 * opens perf events (§6), or unreadable, which counts as the strictest.
 */
bool perf_sys_paranoid_text(const struct perf_sys *ps, char *level, size_t len);

/*
 * Whether opens after the privilege drop will be refused: the process
 * drops CAP_SYS_ADMIN and perf_event_paranoid is strict (above 2, or
 * unreadable: perf_sys_paranoid_text, whose text level gets).
 */
bool perf_sys_reopens_refused(const struct perf_sys *ps, char *level, size_t len);

/* Free the implementation and the root; the struct itself is the caller's. */
void perf_sys_free(struct perf_sys *ps);

#endif
