/*
 * The simulated kernel's perf_event interface bound to a struct perf_sys
 * (sim.h): its system calls under the machine's lock, and the PMU tree it
 * reads from.
 */
#include <errno.h>
#include <ftw.h>
#include <linux/capability.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sim_machine.h"

/* ---- the kernel's perf_event interface (sim_perf.h) ---- */

/* Whether the calling thread holds CAP_SYS_ADMIN in its effective set (capget(2)). */
static bool caller_has_sys_admin(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) < 0)
		return false;
	return d[CAP_TO_INDEX(CAP_SYS_ADMIN)].effective & CAP_TO_MASK(CAP_SYS_ADMIN);
}

/*
 * perf_event_open(2).  Debian's kernel (hardware-linux.md §6) refuses
 * every open without CAP_SYS_ADMIN once kernel.perf_event_paranoid is
 * above 2, before any other check (perf_paranoid_any()); the caller's real
 * capabilities decide.
 */
static int perf_op_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags)
{
	struct sim *s = ctx;
	int r;

	if (s->scn->perf_event_paranoid > 2 && !caller_has_sys_admin())
		return -EACCES;
	pthread_mutex_lock(&s->lock);
	r = sim_perf_open(s->perf, attr, pid, cpu, group_fd, flags, sim_sync_time(s));
	pthread_mutex_unlock(&s->lock);
	return r;
}

static ssize_t perf_op_read(void *ctx, int fd, void *buf, size_t len)
{
	struct sim *s = ctx;
	ssize_t r;

	pthread_mutex_lock(&s->lock);
	if (s->fail_box_read && sim_perf_is_box_event(s->perf, fd))
		r = s->fail_box_read;
	else
		r = sim_perf_read(s->perf, fd, buf, len, sim_sync_time(s));
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int perf_op_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	struct sim *s = ctx;
	int r;

	pthread_mutex_lock(&s->lock);
	r = sim_perf_ioctl(s->perf, fd, request, arg, sim_sync_time(s));
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int perf_op_close(void *ctx, int fd)
{
	struct sim *s = ctx;
	int r;

	pthread_mutex_lock(&s->lock);
	r = sim_perf_close(s->perf, fd, sim_sync_time(s));
	pthread_mutex_unlock(&s->lock);
	return r;
}

static const struct perf_sys_ops sim_perf_ops = {
	.name = "sim",
	.open = perf_op_open,
	.read = perf_op_read,
	.ioctl = perf_op_ioctl,
	.close = perf_op_close,   /* no .free: the sim is the caller's */
};

int sim_perf_sys(struct sim *sim, const char *root, struct perf_sys *ret_ps)
{
	return perf_sys_init(ret_ps, &sim_perf_ops, sim, root);
}

/*
 * root/proc/sys/kernel/perf_event_paranoid, holding the scenario's level;
 * absent under proc_subset = pid, as a procfs mounted with subset=pid has
 * only the PID directories (hardware-linux.md §7.1: kernel fs/proc/root.c).
 */
static int write_paranoid(const struct sim *sim, const char *root, char *err, size_t errlen)
{
	static const char *const dirs[] = { "/proc", "/proc/sys", "/proc/sys/kernel" };
	size_t n_dirs = sim->scn->proc_subset_pid ? 1 : sizeof(dirs) / sizeof(dirs[0]);
	char path[4096];
	FILE *f;

	for (size_t i = 0; i < n_dirs; i++) {
		snprintf(path, sizeof(path), "%s%s", root, dirs[i]);
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			goto fail;
	}
	if (sim->scn->proc_subset_pid)
		return 0;
	snprintf(path, sizeof(path), "%s/proc/sys/kernel/perf_event_paranoid", root);
	f = fopen(path, "we");
	if (!f)
		goto fail;
	fprintf(f, "%d\n", sim->scn->perf_event_paranoid);
	if (fclose(f) == 0)
		return 0;
fail: {
		int r = -errno;

		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
}

int sim_write_sysfs(struct sim *sim, const char *root, char *err, size_t errlen)
{
	int r = sim_perf_write_sysfs(sim->model, sim->scn->discovery_names, root, err, errlen);

	return r < 0 ? r : write_paranoid(sim, root, err, errlen);
}

int sim_attach_perf(struct sim *sim, struct hw *hw, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	struct perf_sys *ps;
	char root[4096];
	int r;

	snprintf(root, sizeof(root), "%s/uncored-sim-pmu.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		r = -errno;
		snprintf(err, errlen, "simulated PMU tree: mkdtemp %s: %s", root, strerror(-r));
		return r;
	}
	/* Readable after a privilege drop, as the real sysfs is. */
	chmod(root, 0755);
	sim_remove_pmu_root(sim);
	sim->pmu_root = strdup(root);
	ps = calloc(1, sizeof(*ps));
	if (!sim->pmu_root || !ps) {
		free(ps);
		if (!sim->pmu_root)
			rmdir(root);
		sim_remove_pmu_root(sim);
		snprintf(err, errlen, "simulated PMU tree: out of memory");
		return -ENOMEM;
	}
	r = sim_write_sysfs(sim, root, err, errlen);
	if (r == 0)
		r = sim_perf_sys(sim, root, ps);
	if (r < 0) {
		if (r == -ENOMEM)
			snprintf(err, errlen, "simulated perf: out of memory");
		free(ps);
		sim_remove_pmu_root(sim);
		return r;
	}
	hw_set_perf(hw, ps);
	return 0;
}

static uid_t chown_uid;
static gid_t chown_gid;

static int chown_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return lchown(path, chown_uid, chown_gid) < 0 ? -errno : 0;
}

int sim_perf_tree_chown(struct sim *sim, uid_t uid, gid_t gid)
{
	if (!sim->pmu_root)
		return 0;
	chown_uid = uid;
	chown_gid = gid;
	return nftw(sim->pmu_root, chown_entry, 16, FTW_PHYS);
}

size_t sim_perf_open_events(struct sim *sim)
{
	size_t n;

	pthread_mutex_lock(&sim->lock);
	n = sim_perf_n_open(sim->perf);
	pthread_mutex_unlock(&sim->lock);
	return n;
}
