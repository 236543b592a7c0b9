/*
 * sim-tree: the device-file tree of a simulated machine, written by the
 * simulator itself, for the end-to-end tests (tests/e2e/make_tree.py).
 *
 *   sim-tree --pmus MODEL ROOT     the kernel's PMU tree under
 *                                  ROOT/sys/bus/event_source/devices
 *                                  (sim_write_sysfs)
 *   sim-tree --machine MODEL ROOT  that, and ROOT/dev/cpu/N/{msr,cpuid} as
 *                                  the device backend reads regular files
 *                                  (an MSR at offset msr x 8, CPUID
 *                                  (leaf | subleaf << 32) x 16), and
 *                                  sys/devices/system/cpu/cpuN/{topology,
 *                                  online, thermal_throttle} and
 *                                  sys/class/hwmon/hwmonK (k10temp on AMD):
 *                                  the machine as it boots (SIM_BOOT_LINUX)
 *   sim-tree --dump MODEL ROOT     every register the model stores, as
 *                                  ROOT's msr files hold it now, one
 *                                  "cpuN 0xMSR 0xVALUE" a line
 *
 * One source of facts: no second copy of the simulator's tables.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw.h"
#include "sim.h"

#define MAX_CPUS 1024
#define MSR_FILE_SIZE (8ULL << 32)   /* one 8-byte slot per 32-bit MSR address */
#define CPUID_SUBLEAVES 4

struct tree {
	const char *root;
	int err;   /* first -errno */
};

static void fail_errno(struct tree *t, int r, const char *what, const char *path)
{
	if (!t->err) {
		t->err = r;
		fprintf(stderr, "sim-tree: %s %s: %s\n", what, path, strerror(-r));
	}
}

/* mkdir -p of path's parent directories. */
static int make_parents(char *path)
{
	for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		int r = mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
		*p = '/';
		if (r < 0)
			return r;
	}
	return 0;
}

static void put_at(struct tree *t, const char *rel, const void *buf, size_t len, uint64_t off)
{
	char path[PATH_MAX];
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", t->root, rel);
	if ((r = make_parents(path)) < 0) {
		fail_errno(t, r, "mkdir for", path);
		return;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		fail_errno(t, -errno, "open", path);
		return;
	}
	if (pwrite(fd, buf, len, (off_t)off) != (ssize_t)len)
		r = -errno ? -errno : -EIO;
	close(fd);
	if (r < 0)
		fail_errno(t, r, "write", path);
}

static void put_text(struct tree *t, const char *rel, const char *text)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", t->root, rel);
	unlink(path);   /* a rewrite replaces, never leaves a longer tail */
	put_at(t, rel, text, strlen(text), 0);
}

static void put_msr(void *arg, int cpu, uint32_t msr, uint64_t value)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "dev/cpu/%d/msr", cpu);
	put_at(arg, rel, &value, sizeof(value), (uint64_t)msr * 8);
}

/*
 * The hwmon devices the simulator has (k10temp on the AMD models), as
 * /sys/class/hwmon/hwmonK files: name and every tempN_input/_label.
 */
static void write_hwmon(struct tree *t, struct hw *hw)
{
	static const char *const attrs[] = { "name", "temp%d_input", "temp%d_label" };
	char rel[128], attr[32], text[64];

	for (int k = 0; k < 64; k++) {
		snprintf(rel, sizeof(rel), "hwmon%d/name", k);
		if (hw_read_hwmon(hw, rel, text, sizeof(text)) < 0)
			continue;
		for (int ch = 1; ch <= 14; ch++)
			for (size_t a = ch == 1 ? 0 : 1; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
				snprintf(attr, sizeof(attr), attrs[a], ch);
				snprintf(rel, sizeof(rel), "hwmon%d/%s", k, attr);
				if (hw_read_hwmon(hw, rel, text, sizeof(text)) < 0)
					continue;
				snprintf(rel, sizeof(rel), "sys/class/hwmon/hwmon%d/%s", k, attr);
				put_text(t, rel, text);
			}
	}
}

static void write_machine(struct tree *t, struct hw *hw, struct sim *sim)
{
	static struct hw_cpu cpus[MAX_CPUS];
	char rel[128], text[32], path[PATH_MAX];
	int n = 0, r;

	if ((r = hw_enumerate(hw, cpus, MAX_CPUS, &n)) < 0) {
		fail_errno(t, r, "enumerate", "CPUs");
		return;
	}
	for (int i = 0; i < n; i++) {
		const struct hw_cpu *c = &cpus[i];
		struct hw_cpuid regs;
		uint32_t max_leaf;
		uint64_t v;

		snprintf(rel, sizeof(rel), "dev/cpu/%d/msr", c->cpu);
		snprintf(path, sizeof(path), "%s/%s", t->root, rel);
		put_at(t, rel, "", 0, 0);
		if (!t->err && truncate(path, (off_t)MSR_FILE_SIZE) < 0)
			fail_errno(t, -errno, "truncate", path);
		snprintf(rel, sizeof(rel), "dev/cpu/%d/cpuid", c->cpu);
		if ((r = hw_cpuid(hw, c->cpu, 0, 0, &regs)) < 0) {
			fail_errno(t, r, "cpuid of", rel);
			return;
		}
		max_leaf = regs.eax;
		for (uint32_t leaf = 0; leaf <= max_leaf; leaf++)
			for (uint32_t sub = 0; sub < CPUID_SUBLEAVES; sub++)
				if (hw_cpuid(hw, c->cpu, leaf, sub, &regs) == 0)
					put_at(t, rel, &regs, sizeof(regs),
					       ((uint64_t)leaf | (uint64_t)sub << 32) * 16);
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/topology/physical_package_id", c->cpu);
		snprintf(text, sizeof(text), "%d\n", c->socket);
		put_text(t, rel, text);
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/topology/die_id", c->cpu);
		snprintf(text, sizeof(text), "%d\n", c->die);
		put_text(t, rel, text);
		snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/topology/core_id", c->cpu);
		snprintf(text, sizeof(text), "%d\n", c->core);
		put_text(t, rel, text);
		if (c->cpu != 0) {   /* cpu0 has no online attribute */
			snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/online", c->cpu);
			put_text(t, rel, c->online ? "1\n" : "0\n");
		}
		static const char *const attrs[] = {
			"thermal_throttle/core_throttle_count",
			"thermal_throttle/package_throttle_count",
		};
		for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
			if (hw_read_cpu_attr(hw, c->cpu, attrs[a], &v) < 0)
				continue;   /* the model has no such attribute */
			snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/%s", c->cpu, attrs[a]);
			snprintf(text, sizeof(text), "%" PRIu64 "\n", v);
			put_text(t, rel, text);
		}
	}
	write_hwmon(t, hw);
	sim_dump(sim, put_msr, t);
}

static void dump_one(void *arg, int cpu, uint32_t msr, uint64_t value)
{
	struct tree *t = arg;
	char path[PATH_MAX];
	int fd;

	(void)value;   /* the tree's value, not the simulator's */
	snprintf(path, sizeof(path), "%s/dev/cpu/%d/msr", t->root, cpu);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fail_errno(t, -errno, "open", path);
		return;
	}
	if (pread(fd, &value, sizeof(value), (off_t)msr * 8) != (ssize_t)sizeof(value))
		fail_errno(t, -EIO, "read", path);
	else
		printf("cpu%d 0x%" PRIx32 " 0x%" PRIx64 "\n", cpu, msr, value);
	close(fd);
}

int main(int argc, char **argv)
{
	struct tree t = { 0 };
	char err[512];
	struct sim *sim;
	struct hw hw;
	int r = 0;

	if (argc != 4 || (strcmp(argv[1], "--pmus") && strcmp(argv[1], "--machine") &&
			  strcmp(argv[1], "--dump"))) {
		fprintf(stderr, "usage: sim-tree --pmus|--machine|--dump MODEL ROOT\n");
		return 2;
	}
	t.root = argv[3];
	sim = sim_open(argv[2], NULL, SIM_CLOCK_STEPPED, err, sizeof(err));
	if (!sim) {
		fprintf(stderr, "sim-tree: %s\n", err);
		return 1;
	}
	sim_bind(sim, &hw);
	if (!strcmp(argv[1], "--dump")) {
		sim_dump(sim, dump_one, &t);
	} else {
		if (!strcmp(argv[1], "--machine"))
			write_machine(&t, &hw, sim);
		if (!t.err && (r = sim_write_sysfs(sim, t.root, err, sizeof(err))) < 0) {
			fprintf(stderr, "sim-tree: %s\n", err);
			t.err = r;
		}
	}
	hw_close(&hw);   /* frees the sim */
	return t.err ? 1 : 0;
}
