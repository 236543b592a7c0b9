/*
 * The device-file backend of struct hw.  At open it lists the CPUs from
 * sysfs, reads their topology once (the kernel removes topology/ of a CPU
 * that goes offline, so the copy taken at open is kept) and opens every
 * online CPU's msr and cpuid device once; the fds are kept until close so
 * they survive a privilege drop.  A CPU offline at open gets its devices
 * at the first access once it is online (through the opener, if one is
 * set: hwopen.h).  Every path is built under a root prefix,
 * so tests can use sparse regular files in place of the devices.  It does
 * not interpret any register; that is decode.c's and the collectors' job.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "err.h"
#include "grow.h"
#include "hw_dev.h"
#include "text.h"

#define SYSFS_CPU_DIR "/sys/devices/system/cpu"
#define DEV_CPU_DIR   "/dev/cpu"

struct dev_cpu {
	struct hw_cpu info;
	int msr_fd;     /* -1 while the CPU has not been online since open */
	int cpuid_fd;
	int online_fd;  /* a regular-file stand-in's online attribute, else -1 */
	unsigned msr_stride;    /* bytes per MSR address: 1 for the device, 8 for a file */
	unsigned cpuid_stride;  /* bytes per leaf|subleaf<<32: 1 for the device, 16 for a file */
};

struct hwdev {
	char *root;     /* prefix without a trailing slash; "" for "/" */
	int n_cpus;
	struct dev_cpu *cpus;   /* ascending CPU number */
	hwdev_opener opener;    /* opens a late CPU's devices; NULL: open them here */
	void *opener_arg;
	int hsmp_fd;            /* /dev/hsmp, O_RDONLY, opened at the first message; -1 */
};

/*
 * Parse text as an unsigned decimal number, allowing trailing whitespace.
 * Returns 0 or -EINVAL (empty, sign, garbage, overflow).
 */
static int parse_u64(const char *text, uint64_t *ret_value)
{
	char *end;
	unsigned long long v;

	if (!isdigit((unsigned char)text[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno == ERANGE)
		return -EINVAL;
	while (isspace((unsigned char)*end))
		end++;
	if (*end)
		return -EINVAL;
	*ret_value = v;
	return 0;
}

/*
 * Read a small sysfs file into buf (NUL-terminated, at most len - 1 bytes).
 * Returns 0, -ENOENT when absent, -EINVAL when it is longer than buf, or
 * another negative errno.
 */
static int read_small_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	close(fd);
	buf[n] = '\0';
	return (size_t)n == len - 1 ? -EINVAL : 0;
}

/*
 * Read a decimal number from path.  On garbage, fill err with
 * "PATH: expected a non-negative integer, got 'TEXT'".
 */
static int read_u64_file(const char *path, uint64_t *ret_value, char *err, size_t errlen)
{
	char buf[64], shown[40];
	int r = read_small_file(path, buf, sizeof(buf));

	if (r == 0)
		r = parse_u64(buf, ret_value);
	if (r == -EINVAL) {
		text_quote(buf, shown, sizeof(shown));
		set_err(err, errlen, "%s: expected a non-negative integer, got '%s'", path, shown);
	} else if (r < 0) {
		set_err(err, errlen, "%s: %s", path, strerror(-r));
	}
	return r;
}

/* As read_u64_file, limited to INT_MAX. */
static int read_int_file(const char *path, int *ret_value, char *err, size_t errlen)
{
	uint64_t v;
	int r = read_u64_file(path, &v, err, errlen);

	if (r < 0)
		return r;
	if (v > INT_MAX) {
		set_err(err, errlen, "%s: expected a non-negative integer, got '%llu'",
			path, (unsigned long long)v);
		return -EINVAL;
	}
	*ret_value = (int)v;
	return 0;
}

static void cpu_path(const struct hwdev *d, char *buf, size_t len, int cpu, const char *rel)
{
	snprintf(buf, len, "%s" SYSFS_CPU_DIR "/cpu%d/%s", d->root, cpu, rel);
}

/* 1 online, 0 offline, or -errno; an absent online file means online (cpu0). */
static int read_online(const struct hwdev *d, int cpu, char *err, size_t errlen)
{
	char path[PATH_MAX];
	uint64_t v;
	int r;

	cpu_path(d, path, sizeof(path), cpu, "online");
	r = read_u64_file(path, &v, err, errlen);
	if (r == -ENOENT)
		return 1;
	if (r < 0)
		return r;
	return v != 0;
}

static int compare_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* A "cpuN" directory name; other entries (cpufreq, cpuidle, online...) are not CPUs. */
static bool parse_cpu_name(const char *name, int *ret_cpu)
{
	uint64_t v;

	if (strncmp(name, "cpu", 3) != 0 || parse_u64(name + 3, &v) < 0 || v > INT_MAX)
		return false;
	for (const char *p = name + 3; *p; p++)
		if (!isdigit((unsigned char)*p))
			return false;
	*ret_cpu = (int)v;
	return true;
}

/* List the cpuN directories, ascending.  *ret_list is malloc'ed. */
static int list_cpus(const struct hwdev *d, int **ret_list, int *ret_n, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct dirent *de;
	int *list = NULL, n = 0, cpu;
	size_t cap = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s" SYSFS_CPU_DIR, d->root);
	dir = opendir(path);
	if (!dir) {
		int e = -errno;

		set_err(err, errlen, "%s: cannot list CPUs: %s", path, strerror(-e));
		return e;
	}
	while ((de = readdir(dir))) {
		if (!parse_cpu_name(de->d_name, &cpu))
			continue;
		int *grown = grow_array(list, &cap, (size_t)n + 1, sizeof(*list), 64);

		if (!grown) {
			closedir(dir);
			free(list);
			set_err(err, errlen, "%s: out of memory", path);
			return -ENOMEM;
		}
		list = grown;
		list[n++] = cpu;
	}
	closedir(dir);
	if (n == 0) {
		free(list);
		set_err(err, errlen, "%s: no cpuN directories found", path);
		return -ENOENT;
	}
	qsort(list, n, sizeof(*list), compare_int);
	*ret_list = list;
	*ret_n = n;
	return 0;
}

/*
 * Read socket, die and core of one CPU.  A CPU offline at open may lack
 * topology/ entirely: its ids stay -1 (unknown).  die_id is optional.
 */
static int read_topology(const struct hwdev *d, struct hw_cpu *c, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int r;

	c->socket = c->die = c->core = c->thread = -1;
	cpu_path(d, path, sizeof(path), c->cpu, "topology/physical_package_id");
	r = read_int_file(path, &c->socket, err, errlen);
	if (r == -ENOENT && !c->online)
		return 0;
	if (r < 0)
		return r;
	cpu_path(d, path, sizeof(path), c->cpu, "topology/die_id");
	r = read_int_file(path, &c->die, err, errlen);
	if (r == -ENOENT)
		c->die = 0;
	else if (r < 0)
		return r;
	cpu_path(d, path, sizeof(path), c->cpu, "topology/core_id");
	return read_int_file(path, &c->core, err, errlen);
}

/* Thread index: position among the CPUs of the same (socket, core), by CPU number. */
static void number_threads(struct hwdev *d)
{
	for (int i = 0; i < d->n_cpus; i++) {
		struct hw_cpu *c = &d->cpus[i].info;

		if (c->socket < 0 || c->core < 0)
			continue;
		c->thread = 0;
		for (int j = 0; j < i; j++) {
			const struct hw_cpu *o = &d->cpus[j].info;

			if (o->socket == c->socket && o->core == c->core)
				c->thread++;
		}
	}
}

/* Open one device file of one CPU.  -ENXIO means the CPU went offline. */
static int open_device(const struct hwdev *d, int cpu, const char *name, int flags,
		       int *ret_fd, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd, e;

	snprintf(path, sizeof(path), "%s" DEV_CPU_DIR "/%d/%s", d->root, cpu, name);
	fd = open(path, flags | O_CLOEXEC);
	if (fd >= 0) {
		*ret_fd = fd;
		return 0;
	}
	e = -errno;
	if (e == -ENXIO)
		return e;
	if (e == -ENOENT && strcmp(name, "cpuid") == 0)
		set_err(err, errlen, "%s: the cpuid driver is not loaded (run 'modprobe cpuid')", path);
	else if (e == -ENOENT || e == -EACCES || e == -EPERM)
		set_err(err, errlen, "%s: %s", path, hw_hint(e, HW_OP_OPEN));
	else
		set_err(err, errlen, "%s: %s", path, strerror(-e));
	return e;
}

/*
 * The drivers read 8 bytes at offset = MSR address and 16 bytes at offset =
 * leaf | subleaf << 32, so neighbouring addresses overlap in offset space.
 * A character device gives each address its own value; a regular file
 * cannot (0x3c0 and 0x3c1 would share seven bytes).  So a regular file
 * standing in for a device, as in a test tree, holds one slot of record
 * size per address: offset = address × 8 (MSR) or × 16 (CPUID).
 */
static unsigned offset_stride(int fd, unsigned record_size)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		return record_size;
	return 1;
}

static struct dev_cpu *find_cpu(const struct hwdev *d, int cpu);

/*
 * Take msr_fd and cpuid_fd as c's devices.  A regular file standing in for
 * a device also gets its CPU's online attribute kept open: the driver
 * answers -ENXIO while its CPU is offline, and so must the stand-in.
 */
static void attach_devices(const struct hwdev *d, struct dev_cpu *c, int msr_fd, int cpuid_fd)
{
	char path[PATH_MAX];

	c->msr_fd = msr_fd;
	c->cpuid_fd = cpuid_fd;
	c->msr_stride = offset_stride(c->msr_fd, sizeof(uint64_t));
	c->cpuid_stride = offset_stride(c->cpuid_fd, 4 * sizeof(uint32_t));
	if (c->msr_stride != 1 && c->online_fd < 0) {
		cpu_path(d, path, sizeof(path), c->info.cpu, "online");
		c->online_fd = open(path, O_RDONLY | O_CLOEXEC);   /* none for cpu0: always online */
	}
}

/* Open msr and cpuid of an online CPU; a CPU that raced offline is marked so. */
static int open_cpu_devices(struct hwdev *d, struct dev_cpu *c, char *err, size_t errlen)
{
	int r, msr_fd = -1, cpuid_fd = -1;

	if (!c->info.online)
		return 0;
	r = open_device(d, c->info.cpu, "msr", O_RDWR, &msr_fd, err, errlen);
	if (r == 0)
		r = open_device(d, c->info.cpu, "cpuid", O_RDONLY, &cpuid_fd, err, errlen);
	if (r == 0) {
		attach_devices(d, c, msr_fd, cpuid_fd);
		return 0;
	}
	if (msr_fd >= 0)
		close(msr_fd);
	if (r == -ENXIO) {
		c->info.online = false;
		return 0;
	}
	return r;
}

int hwdev_open_cpu(const char *root, int cpu, int *ret_msr_fd, int *ret_cpuid_fd)
{
	char prefix[PATH_MAX];
	struct hwdev d = { .root = prefix };
	size_t len;
	int r;

	*ret_msr_fd = *ret_cpuid_fd = -1;
	if (cpu < 0)
		return -EINVAL;
	snprintf(prefix, sizeof(prefix), "%s", root ? root : "");
	len = strlen(prefix);
	while (len > 0 && prefix[len - 1] == '/')
		prefix[--len] = '\0';
	r = open_device(&d, cpu, "msr", O_RDWR, ret_msr_fd, NULL, 0);
	if (r == 0)
		r = open_device(&d, cpu, "cpuid", O_RDONLY, ret_cpuid_fd, NULL, 0);
	if (r < 0 && *ret_msr_fd >= 0) {
		close(*ret_msr_fd);
		*ret_msr_fd = -1;
	}
	return r;
}

/*
 * A CPU without devices (offline at open, or since): open them if it is
 * online now, through the opener when one is set.  Returns 0 when c has
 * its devices, else -ENXIO (offline) or the open's negative errno.
 */
static int late_attach(struct hwdev *d, struct dev_cpu *c)
{
	int msr_fd, cpuid_fd, r = read_online(d, c->info.cpu, NULL, 0);

	if (r <= 0)
		return r == 0 ? -ENXIO : r;
	if (d->opener)
		r = d->opener(d->opener_arg, c->info.cpu, &msr_fd, &cpuid_fd);
	else
		r = hwdev_open_cpu(d->root, c->info.cpu, &msr_fd, &cpuid_fd);
	if (r < 0)
		return r;
	attach_devices(d, c, msr_fd, cpuid_fd);
	c->info.online = true;
	/* Offline at open, its topology was not there yet. */
	if (c->info.socket < 0 && read_topology(d, &c->info, NULL, 0) == 0)
		number_threads(d);
	return 0;
}

/*
 * The devices of cpu, ready for an access: opened late if need be, and
 * -ENXIO for a stand-in whose CPU is offline, as the driver answers.
 */
static int usable_cpu(struct hwdev *d, int cpu, struct dev_cpu **ret_c)
{
	struct dev_cpu *c = find_cpu(d, cpu);
	char buf[8];
	ssize_t n;
	int r;

	if (!c)
		return -ENXIO;
	if (c->msr_fd < 0 && (r = late_attach(d, c)) < 0)
		return r;
	if (c->online_fd >= 0) {
		n = pread(c->online_fd, buf, sizeof(buf), 0);
		if (n > 0 && buf[0] == '0')
			return -ENXIO;
	}
	*ret_c = c;
	return 0;
}

static void dev_close(void *ctx)
{
	struct hwdev *d = ctx;

	if (!d)
		return;
	for (int i = 0; i < d->n_cpus; i++) {
		if (d->cpus[i].msr_fd >= 0)
			close(d->cpus[i].msr_fd);
		if (d->cpus[i].cpuid_fd >= 0)
			close(d->cpus[i].cpuid_fd);
		if (d->cpus[i].online_fd >= 0)
			close(d->cpus[i].online_fd);
	}
	if (d->hsmp_fd >= 0)
		close(d->hsmp_fd);
	free(d->cpus);
	free(d->root);
	free(d);
}

static int compare_dev_cpu(const void *key, const void *elem)
{
	int cpu = *(const int *)key;
	const struct dev_cpu *c = elem;

	return (cpu > c->info.cpu) - (cpu < c->info.cpu);
}

static struct dev_cpu *find_cpu(const struct hwdev *d, int cpu)
{
	return bsearch(&cpu, d->cpus, d->n_cpus, sizeof(*d->cpus), compare_dev_cpu);
}

static int dev_read_msr(void *ctx, int cpu, uint32_t msr, uint64_t *ret_value)
{
	struct dev_cpu *c = NULL;
	uint64_t v;
	ssize_t n;
	int r = usable_cpu(ctx, cpu, &c);

	if (r < 0)
		return r;
	/* hardware.md §6: 8 bytes at offset = MSR number; off_t is 64-bit. */
	n = pread(c->msr_fd, &v, sizeof(v), (off_t)msr * c->msr_stride);
	if (n < 0)
		return -errno;
	if (n != sizeof(v))
		return -EIO;
	*ret_value = v;
	return 0;
}

static int dev_write_msr(void *ctx, int cpu, uint32_t msr, uint64_t value)
{
	struct dev_cpu *c = NULL;
	ssize_t n;
	int r = usable_cpu(ctx, cpu, &c);

	if (r < 0)
		return r;
	n = pwrite(c->msr_fd, &value, sizeof(value), (off_t)msr * c->msr_stride);
	if (n < 0)
		return -errno;
	return n == sizeof(value) ? 0 : -EIO;
}

static int dev_cpuid(void *ctx, int cpu, uint32_t leaf, uint32_t subleaf, struct hw_cpuid *ret_regs)
{
	struct dev_cpu *c = NULL;
	uint32_t regs[4];
	ssize_t n;
	int r = usable_cpu(ctx, cpu, &c);

	if (r < 0)
		return r;
	/* The cpuid driver takes the leaf in the low and the subleaf in the high 32 bits. */
	n = pread(c->cpuid_fd, regs, sizeof(regs),
		  (off_t)(leaf | (uint64_t)subleaf << 32) * c->cpuid_stride);
	if (n < 0)
		return -errno;
	if (n != sizeof(regs))
		return -EIO;
	ret_regs->eax = regs[0];
	ret_regs->ebx = regs[1];
	ret_regs->ecx = regs[2];
	ret_regs->edx = regs[3];
	return 0;
}

static int dev_enumerate(void *ctx, struct hw_cpu *cpus, int max, int *ret_n)
{
	struct hwdev *d = ctx;

	for (int i = 0; i < d->n_cpus && i < max; i++) {
		int online = read_online(d, d->cpus[i].info.cpu, NULL, 0);

		cpus[i] = d->cpus[i].info;
		if (online >= 0)
			cpus[i].online = online;
	}
	*ret_n = d->n_cpus;
	return 0;
}

static int dev_cpu_online(void *ctx, int cpu)
{
	const struct hwdev *d = ctx;

	if (!find_cpu(d, cpu))
		return -ENXIO;
	return read_online(d, cpu, NULL, 0);
}

static int dev_read_cpu_attr(void *ctx, int cpu, const char *relpath, uint64_t *ret_value)
{
	const struct hwdev *d = ctx;
	char path[PATH_MAX], buf[64];
	int r;

	if (cpu < 0 || !relpath)
		return -EINVAL;
	cpu_path(d, path, sizeof(path), cpu, relpath);
	r = read_small_file(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	return parse_u64(buf, ret_value);
}

static int dev_read_hwmon(void *ctx, const char *relpath, char *buf, size_t len)
{
	const struct hwdev *d = ctx;
	char path[PATH_MAX];
	int r;

	if (!relpath || strstr(relpath, ".."))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/sys/class/hwmon/%s", d->root, relpath);
	r = read_small_file(path, buf, len);
	return r < 0 ? r : 0;
}

/*
 * The amd_hsmp driver's ioctl (hardware-amd.md §1.1): HSMP_IOCTL_CMD =
 * _IOWR(0xF8, 0, struct hsmp_message) = 0xC02CF800, the struct packed to
 * 4 bytes, 44 in all.
 */
#define HSMP_IOCTL_CMD 0xC02CF800u
#pragma pack(push, 4)
struct uapi_hsmp_message {
	uint32_t msg_id;
	uint16_t num_args;
	uint16_t response_sz;
	uint32_t args[8];
	uint16_t sock_ind;
};
#pragma pack(pop)
_Static_assert(sizeof(struct uapi_hsmp_message) == 44, "struct hsmp_message is 44 bytes");

/* One message on the real /dev/hsmp; a tree under a root prefix cannot carry an ioctl. */
static int dev_hsmp(void *ctx, struct hw_hsmp_msg *msg)
{
	struct hwdev *d = ctx;
	struct uapi_hsmp_message m = { .msg_id = msg->msg_id, .num_args = msg->num_args,
				       .response_sz = msg->response_sz, .sock_ind = msg->sock_ind };

	if (d->root[0])
		return -EOPNOTSUPP;
	if (d->hsmp_fd < 0) {
		d->hsmp_fd = open("/dev/hsmp", O_RDONLY | O_CLOEXEC);
		if (d->hsmp_fd < 0)
			return -errno;
	}
	memcpy(m.args, msg->args, sizeof(m.args));
	if (ioctl(d->hsmp_fd, HSMP_IOCTL_CMD, &m) < 0)
		return -errno;
	memcpy(msg->args, m.args, sizeof(msg->args));
	return 0;
}

static int dev_read_online_list(void *ctx, char *buf, size_t len)
{
	struct hwdev *d = ctx;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s" SYSFS_CPU_DIR "/online", d->root);
	return read_small_file(path, buf, len);
}

static const struct hw_ops hwdev_ops = {
	.name = "dev",
	.read_msr = dev_read_msr,
	.write_msr = dev_write_msr,
	.cpuid = dev_cpuid,
	.enumerate = dev_enumerate,
	.cpu_online = dev_cpu_online,
	.read_cpu_attr = dev_read_cpu_attr,
	.read_online_list = dev_read_online_list,
	.close = dev_close,
	.read_hwmon = dev_read_hwmon,
	.hsmp = dev_hsmp,
};

/* Allocate the CPU table, ascending CPU number, no device open yet. */
static int alloc_cpus(struct hwdev *d, const int *list, int n)
{
	d->cpus = calloc(n, sizeof(*d->cpus));
	if (!d->cpus)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		d->cpus[i].info.cpu = list[i];
		d->cpus[i].msr_fd = d->cpus[i].cpuid_fd = d->cpus[i].online_fd = -1;
	}
	d->n_cpus = n;
	return 0;
}

/* Read state and topology of every CPU, then open the devices of the online ones. */
static int load_cpus(struct hwdev *d, char *err, size_t errlen)
{
	int *list = NULL, n = 0, r;

	r = list_cpus(d, &list, &n, err, errlen);
	if (r < 0)
		return r;
	r = alloc_cpus(d, list, n);
	free(list);
	if (r < 0) {
		set_err(err, errlen, "out of memory");
		return r;
	}
	for (int i = 0; i < n; i++) {
		struct hw_cpu *c = &d->cpus[i].info;

		r = read_online(d, c->cpu, err, errlen);
		if (r < 0)
			return r;
		c->online = r;
		r = read_topology(d, c, err, errlen);
		if (r < 0)
			return r;
	}
	number_threads(d);
	for (int i = 0; i < n; i++) {
		r = open_cpu_devices(d, &d->cpus[i], err, errlen);
		if (r < 0)
			return r;
	}
	return 0;
}

int hwdev_open(const char *root, struct hw *ret_hw, char *err, size_t errlen)
{
	struct hwdev *d;
	size_t len;
	int r;

	if (!root || !*root)
		root = "/";
	d = calloc(1, sizeof(*d));
	if (!d || !(d->root = strdup(root))) {
		free(d);
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->hsmp_fd = -1;
	len = strlen(d->root);
	while (len > 0 && d->root[len - 1] == '/')
		d->root[--len] = '\0';
	r = load_cpus(d, err, errlen);
	if (r < 0) {
		dev_close(d);
		return r;
	}
	ret_hw->ops = &hwdev_ops;
	ret_hw->ctx = d;
	ret_hw->n_reads = 0;
	ret_hw->n_writes = 0;
	return 0;
}

void hwdev_set_opener(struct hw *hw, hwdev_opener opener, void *arg)
{
	struct hwdev *d = hw->ctx;

	if (hw->ops != &hwdev_ops)
		return;
	d->opener = opener;
	d->opener_arg = arg;
}
