/*
 * Unit tests of CPU identification (vendor, model table, facilities,
 * perfmon) and topology grouping, through fake device trees of the hw_dev
 * backend with the CPUID answers written into sparse cpuid files.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <string.h>
#include <cmocka.h>

#include "cpu.h"
#include "helpers.h"
#include "hw_dev.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define SUPPORTED "uncored supports Intel family 6 servers (Nehalem/Westmere with the uncore PMU, " \
	"and Sandy Bridge-EP through Emerald Rapids for thermal and core counters) " \
	"and AMD EPYC from Zen 2 (Rome) to family 1Ah models 50h-5Fh"

/* What one CPU answers to CPUID leaves 0, 1, 6 and 0xA. */
struct fake_cpuid {
	const char *vendor;       /* 12 characters */
	uint32_t max_leaf;
	uint32_t signature;       /* leaf 1 EAX */
	uint32_t leaf6_eax;
	struct hw_cpuid leaf_a;
};

#define MAX_FAKE_CPUS 32

/*
 * A fake tree opened with hw_dev, seen through an overlay backend that
 * answers CPUID from answers[] (so each case states its CPU as a small
 * table) and passes everything else to hw_dev.  test_hw_dev covers CPUID
 * through the device files themselves.
 */
struct tree {
	char root[256];
	char err[512];
	struct hw dev;
	struct hw hw;
	struct fake_cpuid answers[MAX_FAKE_CPUS];
	struct cpu_info info;
	struct cpu_topology topo;
};

static int overlay_read_msr(void *ctx, int cpu, uint32_t msr, uint64_t *ret_value)
{
	return hw_read_msr(&((struct tree *)ctx)->dev, cpu, msr, ret_value);
}

static int overlay_write_msr(void *ctx, int cpu, uint32_t msr, uint64_t value)
{
	return hw_write_msr(&((struct tree *)ctx)->dev, cpu, msr, value);
}

static int overlay_cpuid(void *ctx, int cpu, uint32_t leaf, uint32_t subleaf,
			 struct hw_cpuid *ret_regs)
{
	struct tree *t = ctx;
	const struct fake_cpuid *c;
	struct hw_cpuid regs = { 0 };
	uint32_t v[3];
	/* The device path still decides whether the CPU answers at all. */
	int r = hw_cpuid(&t->dev, cpu, leaf, subleaf, &regs);

	if (r < 0)
		return r;
	assert_in_range(cpu, 0, MAX_FAKE_CPUS - 1);
	c = &t->answers[cpu];
	memset(&regs, 0, sizeof(regs));
	if (leaf == 0 && c->vendor) {
		/* The vendor string is EBX, EDX, ECX. */
		memcpy(v, c->vendor, 12);
		regs = (struct hw_cpuid){ c->max_leaf, v[0], v[2], v[1] };
	} else if (leaf == 1) {
		regs.eax = c->signature;
	} else if (leaf == 6) {
		regs.eax = c->leaf6_eax;
	} else if (leaf == 0xa) {
		regs = c->leaf_a;
	}
	*ret_regs = regs;
	return 0;
}

static int overlay_enumerate(void *ctx, struct hw_cpu *cpus, int max, int *ret_n)
{
	return hw_enumerate(&((struct tree *)ctx)->dev, cpus, max, ret_n);
}

static int overlay_cpu_online(void *ctx, int cpu)
{
	return hw_cpu_online(&((struct tree *)ctx)->dev, cpu);
}

static int overlay_read_cpu_attr(void *ctx, int cpu, const char *relpath, uint64_t *ret_value)
{
	return hw_read_cpu_attr(&((struct tree *)ctx)->dev, cpu, relpath, ret_value);
}

static void overlay_close(void *ctx)
{
	hw_close(&((struct tree *)ctx)->dev);
}

static const struct hw_ops overlay_ops = {
	.name = "dev+cpuid-table",
	.read_msr = overlay_read_msr,
	.write_msr = overlay_write_msr,
	.cpuid = overlay_cpuid,
	.enumerate = overlay_enumerate,
	.cpu_online = overlay_cpu_online,
	.read_cpu_attr = overlay_read_cpu_attr,
	.close = overlay_close,
};

static int tree_setup(void **state)
{
	static struct tree t;

	memset(&t, 0, sizeof(t));
	helpers_mkdtemp(t.root, sizeof(t.root));
	*state = &t;
	return 0;
}

static int tree_teardown(void **state)
{
	struct tree *t = *state;

	cpu_topology_free(&t->topo);
	hw_close(&t->hw);
	helpers_rmtree(t->root);
	return 0;
}

/* Open the tree with hw_dev and put the overlay in t->hw. */
static void open_tree(struct tree *t)
{
	int r = hwdev_open(t->root, &t->dev, t->err, sizeof(t->err));

	if (r < 0)
		print_error("hwdev_open: %s\n", t->err);
	assert_int_equal(r, 0);
	t->hw = (struct hw){ .ops = &overlay_ops, .ctx = t };
}

/* Start again with an empty tree (for table-driven cases). */
static void reset_tree(struct tree *t)
{
	hw_close(&t->hw);
	helpers_rmtree(t->root);
	memset(t->answers, 0, sizeof(t->answers));
	helpers_mkdtemp(t->root, sizeof(t->root));
}

static void write_cpuid(struct tree *t, int cpu, const struct fake_cpuid *c)
{
	t->answers[cpu] = *c;
}

/* A two-socket machine of 2 cores each, every CPU answering CPUID as c. */
static void make_machine(struct tree *t, const struct fake_cpuid *c)
{
	for (int cpu = 0; cpu < 4; cpu++) {
		helpers_fake_cpu(t->root, cpu, cpu / 2, cpu % 2, true);
		write_cpuid(t, cpu, c);
	}
	open_tree(t);
}

/* Initializers, not const objects: clang (the sanitizer build) takes no object in a static one. */
#define PERFMON_V3 { 0x07300403, 0, 0, 0x603 }
#define PERFMON_V4 { 0x08300804, 0, 0, 0x8603 }

static void westmere_ep(void **state)
{
	static const struct fake_cpuid c = { "GenuineIntel", 0xb, 0x206c2, 0x77, PERFMON_V3 };
	struct tree *t = *state;

	make_machine(t, &c);
	assert_int_equal(cpu_detect(&t->hw, &t->info, t->err, sizeof(t->err)), 0);
	assert_string_equal(t->info.vendor, "GenuineIntel");
	assert_int_equal(t->info.family, 6);
	assert_int_equal(t->info.model, 0x2c);
	assert_int_equal(t->info.stepping, 2);
	assert_string_equal(t->info.microarch, "westmere-ep");
	assert_true(t->info.fac.has_nhm_uncore);
	assert_true(t->info.fac.has_uncore_thermal_events);
	assert_true(t->info.fac.has_tjmax);
	/* CPUID.06H:EAX[6] is set here, but Westmere has no package thermal MSR. */
	assert_false(t->info.fac.has_package_thermal);
	assert_false(t->info.fac.has_rapl_perf_status);
	assert_int_equal(t->info.perfmon.version, 3);
	assert_int_equal(t->info.perfmon.n_gp, 4);
	assert_int_equal(t->info.perfmon.gp_width_bits, 48);
	assert_int_equal(t->info.perfmon.ebx_length, 7);
	assert_int_equal(t->info.perfmon.unavailable, 0);
	assert_int_equal(t->info.perfmon.n_fixed, 3);
	assert_int_equal(t->info.perfmon.fixed_width_bits, 48);
	/* CPUID reads are not MSR reads. */
	assert_int_equal(t->hw.n_reads, 0);
}

static void nehalem_ep_from_first_online_cpu(void **state)
{
	static const struct fake_cpuid nhm = { "GenuineIntel", 0xb, 0x106a5, 0x3, PERFMON_V3 };
	static const struct fake_cpuid amd = { "AuthenticAMD", 0x10, 0x830f10, 0, { 0 } };
	struct tree *t = *state;

	/* cpu0 is offline and would answer as AMD: it must not be asked. */
	helpers_fake_cpu(t->root, 0, 0, 0, false);
	helpers_fake_cpu_attr(t->root, 0, "online", "0\n");
	write_cpuid(t, 0, &amd);
	helpers_fake_cpu(t->root, 1, 0, 1, true);
	write_cpuid(t, 1, &nhm);
	open_tree(t);

	assert_int_equal(cpu_detect(&t->hw, &t->info, t->err, sizeof(t->err)), 0);
	assert_int_equal(t->info.model, 0x1a);
	assert_int_equal(t->info.stepping, 5);
	assert_string_equal(t->info.microarch, "nehalem-ep");
	assert_true(t->info.fac.has_nhm_uncore);
	assert_false(t->info.fac.has_uncore_thermal_events);
	assert_true(t->info.fac.has_tjmax);
	assert_false(t->info.fac.has_package_thermal);
	assert_false(t->info.fac.has_rapl_perf_status);
}

static void skylake_sp_package_thermal_follows_cpuid(void **state)
{
	static const struct {
		const char *name;
		uint32_t max_leaf, leaf6_eax;
		bool want_ptm;
		unsigned want_version;
	} cases[] = {
		{ "ptm set", 0x16, 0x77, true, 4 },
		{ "ptm clear", 0x16, 0x37, false, 4 },
		{ "leaf 6 beyond max leaf", 0x5, 0x77, false, 0 },
	};
	struct tree *t = *state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fake_cpuid c = { "GenuineIntel", cases[i].max_leaf, 0x50654,
					cases[i].leaf6_eax, PERFMON_V4 };

		print_message("case %s\n", cases[i].name);
		make_machine(t, &c);
		assert_int_equal(cpu_detect(&t->hw, &t->info, t->err, sizeof(t->err)), 0);
		assert_int_equal(t->info.model, 0x55);
		assert_string_equal(t->info.microarch, "skylake-sp");
		assert_false(t->info.fac.has_nhm_uncore);
		assert_false(t->info.fac.has_uncore_thermal_events);
		assert_true(t->info.fac.has_tjmax);
		assert_true(t->info.fac.has_rapl_perf_status);
		assert_int_equal(t->info.fac.has_package_thermal, cases[i].want_ptm);
		assert_int_equal(t->info.perfmon.version, cases[i].want_version);
		reset_tree(t);
	}
}

static void later_servers_by_model(void **state)
{
	static const struct {
		uint32_t signature;
		const char *microarch;
	} cases[] = {
		{ 0x206d7, "sandybridge-ep" },
		{ 0x306e4, "ivybridge-ep" },
		{ 0x306f2, "haswell-x" },
		{ 0x406f1, "broadwell-x" },
		{ 0x606a6, "icelake-x" },
		{ 0x606c1, "icelake-d" },
		{ 0x806f8, "sapphirerapids-x" },
		{ 0xc06f2, "emeraldrapids-x" },
		{ 0x106e5, "nehalem" },
		{ 0x20652, "westmere" },
	};
	struct tree *t = *state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fake_cpuid c = { "GenuineIntel", 0x1b, cases[i].signature, 0x77, PERFMON_V4 };

		print_message("case %s\n", cases[i].microarch);
		make_machine(t, &c);
		assert_int_equal(cpu_detect(&t->hw, &t->info, t->err, sizeof(t->err)), 0);
		assert_string_equal(t->info.microarch, cases[i].microarch);
		reset_tree(t);
	}
}

static void refused_cpus(void **state)
{
	static const struct {
		struct fake_cpuid c;
		const char *want;
	} cases[] = {
		/* Naples (Zen 1, 17h 01h) and a Ryzen desktop (19h 21h) */
		{ { "AuthenticAMD", 0x10, 0x800f12, 0, { 0 } },
		  "unsupported CPU: AuthenticAMD family 0x17 model 0x1; " SUPPORTED
		  "; on other AMD parts read temperatures from the k10temp hwmon driver" },
		{ { "AuthenticAMD", 0x10, 0xa20f10, 0, { 0 } },
		  "unsupported CPU: AuthenticAMD family 0x19 model 0x21; " SUPPORTED
		  "; on other AMD parts read temperatures from the k10temp hwmon driver" },
		{ { "GenuineIntel", 0xd, 0x306a9, 0x77, { 0 } },
		  "unsupported CPU: GenuineIntel family 0x6 model 0x3a; " SUPPORTED },
		{ { "GenuineIntel", 0xb, 0x206f2, 0x7, { 0 } },
		  "unsupported CPU: GenuineIntel family 0x6 model 0x2f (westmere-ex): its uncore is a "
		  "different facility (W-box) that uncored does not implement; " SUPPORTED },
		{ { "GenuineIntel", 0x2, 0xf29, 0, { 0 } },
		  "unsupported CPU: GenuineIntel family 0xf model 0x2; " SUPPORTED },
		{ { "GenuineIotel", 0xb, 0x206c2, 0, { 0 } },
		  "unsupported CPU: GenuineIotel family 0x6 model 0x2c; " SUPPORTED },
	};
	struct tree *t = *state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		make_machine(t, &cases[i].c);
		t->info.model = 0x1234;
		assert_int_equal(cpu_detect(&t->hw, &t->info, t->err, sizeof(t->err)), -ENOTSUP);
		assert_string_equal(t->err, cases[i].want);
		assert_int_equal(t->info.model, 0x1234);
		reset_tree(t);
	}
}

/*
 * AMD EPYC generations by family/model range (hardware-amd.md §0): the
 * HSMP messages, k10temp channels and ref-cycles of each, and none of
 * Intel's thermal MSRs, TjMax or fixed counters.
 */
static void amd_epyc_generations(void **state)
{
	static const struct {
		uint32_t signature;
		const char *microarch;
		unsigned family, model, zen, proto, n_tccd;
		bool prochot, freq_limit, dimm, ref_cycles;
	} cases[] = {
		{ 0x830f10, "rome", 0x17, 0x31, 2, 0, 8, false, false, false, false },
		{ 0xa00f11, "milan", 0x19, 0x01, 3, 2, 8, true, false, false, false },
		{ 0xa00f80, "milan", 0x19, 0x08, 3, 2, 0, true, false, false, false },
		{ 0xa30f00, "trento", 0x19, 0x30, 3, 4, 0, true, false, false, false },
		{ 0xa10f11, "genoa", 0x19, 0x11, 4, 5, 12, true, true, true, true },
		{ 0xaa0f01, "bergamo", 0x19, 0xa0, 4, 5, 12, true, true, true, true },
		{ 0xb00f21, "turin", 0x1a, 0x02, 5, 7, 0, true, true, true, true },
		{ 0xb50f00, "zen6", 0x1a, 0x50, 6, 7, 0, true, true, true, true },
	};
	struct tree *t = *state;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct fake_cpuid c = { "AuthenticAMD", 0x10, cases[i].signature, 0, { 0 } };
		const struct cpu_facilities *f = &t->info.fac;

		print_message("case %s 0x%x\n", cases[i].microarch, cases[i].signature);
		make_machine(t, &c);
		assert_int_equal(cpu_detect(&t->hw, &t->info, t->err, sizeof(t->err)), 0);
		assert_string_equal(t->info.microarch, cases[i].microarch);
		assert_int_equal(t->info.family, cases[i].family);
		assert_int_equal(t->info.model, cases[i].model);
		assert_int_equal(f->amd_zen, cases[i].zen);
		assert_int_equal(f->hsmp_proto, cases[i].proto);
		assert_int_equal(f->n_tccd, cases[i].n_tccd);
		assert_int_equal(f->has_hsmp_prochot, cases[i].prochot);
		assert_int_equal(f->has_hsmp_freq_limit, cases[i].freq_limit);
		assert_int_equal(f->has_hsmp_dimm, cases[i].dimm);
		assert_int_equal(f->has_ref_cycles, cases[i].ref_cycles);
		assert_false(f->has_tjmax || f->has_package_thermal || f->has_rapl_perf_status ||
			     f->has_nhm_uncore);
		assert_true(f->lacks_intel_thermal && f->lacks_intel_core_pmu);
		assert_int_equal(t->info.perfmon.version, 0);
		reset_tree(t);
	}
}

/* --model names: an AMD generation by its name, the first Milan row for "milan". */
static void amd_by_name(void **state)
{
	struct cpu_info info;
	char err[512];

	(void)state;
	assert_int_equal(cpu_info_for_name("genoa", &info, err, sizeof(err)), 0);
	assert_string_equal(info.vendor, "AuthenticAMD");
	assert_int_equal(info.family, 0x19);
	assert_int_equal(info.model, 0x10);
	assert_true(info.fac.has_hsmp_dimm);
	assert_int_equal(cpu_info_for_name("milan", &info, err, sizeof(err)), 0);
	assert_int_equal(info.fac.n_tccd, 8);
	assert_int_equal(cpu_info_for_signature("AuthenticAMD", 0x1a, 0x11, &info, err, sizeof(err)), 0);
	assert_string_equal(info.microarch, "turin");
	assert_int_equal(cpu_info_for_name("naples", &info, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "graniterapids-d, rome, milan, trento, genoa, bergamo, turin, zen6"));
	assert_null(strstr(err, "milan, milan"));
}

static void perfmon_per_cpu(void **state)
{
	static const struct fake_cpuid c = { "GenuineIntel", 0x1b, 0x50654, 0x77, PERFMON_V4 };
	struct tree *t = *state;
	struct cpu_perfmon p;

	make_machine(t, &c);
	t->answers[3].leaf_a = (struct hw_cpuid){ 0x07300205, 0x4, 0, 0x603 };
	assert_int_equal(cpu_perfmon_read(&t->hw, 0, &p), 0);
	assert_int_equal(p.version, 4);
	assert_int_equal(p.n_gp, 8);
	assert_int_equal(cpu_perfmon_read(&t->hw, 3, &p), 0);
	assert_int_equal(p.version, 5);
	assert_int_equal(p.n_gp, 2);
	assert_int_equal(p.unavailable, 0x4);
	assert_int_equal(p.n_fixed, 3);
	assert_int_equal(cpu_perfmon_read(&t->hw, 42, &p), -ENXIO);
}

static void no_online_cpu(void **state)
{
	struct tree *t = *state;

	helpers_fake_cpu(t->root, 1, 0, 0, false);
	open_tree(t);
	assert_int_equal(cpu_detect(&t->hw, &t->info, t->err, sizeof(t->err)), -ENODEV);
	assert_string_equal(t->err, "no online CPU found");
}

/*
 * Two sockets of six cores with non-contiguous core ids, CPUs numbered
 * socket 1 first, siblings 12 apart, plus cpu 24 offline at open.
 */
static void make_grouping_tree(const char *root)
{
	static const int core_ids[] = { 8, 0, 10, 1, 9, 2 };

	for (int cpu = 0; cpu < 24; cpu++) {
		int pos = cpu % 12;

		helpers_fake_cpu(root, cpu, pos < 6 ? 1 : 0, core_ids[pos % 6], true);
	}
	helpers_fake_cpu(root, 24, 0, 0, false);
}

static void topology_groups_cores_and_siblings(void **state)
{
	static const int want_cores[] = { 0, 1, 2, 8, 9, 10 };
	static const int want_s0_cpus[] = { 6, 7, 8, 9, 10, 11, 18, 19, 20, 21, 22, 23 };
	struct tree *t = *state;
	const struct cpu_socket *s;
	const struct hw_cpu *c;

	make_grouping_tree(t->root);
	open_tree(t);
	assert_int_equal(cpu_topology_load(&t->hw, &t->topo, t->err, sizeof(t->err)), 0);

	assert_int_equal(t->topo.n_cpus, 25);
	for (int i = 0; i < 25; i++)
		assert_int_equal(t->topo.cpus[i].cpu, i);
	assert_int_equal(t->topo.n_sockets, 2);
	assert_int_equal(t->topo.sockets[0].socket, 0);
	assert_int_equal(t->topo.sockets[1].socket, 1);

	s = &t->topo.sockets[0];
	assert_int_equal(s->n_cores, 6);
	assert_int_equal(s->n_cpus, 12);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(s->cores[i].core, want_cores[i]);
		assert_int_equal(s->cores[i].n_cpus, 2);
	}
	for (int i = 0; i < 12; i++)
		assert_int_equal(s->cpus[i], want_s0_cpus[i]);
	/* Core 8 of socket 0 is cpu 6 and its sibling 18. */
	assert_int_equal(s->cores[3].cpus[0], 6);
	assert_int_equal(s->cores[3].cpus[1], 18);

	s = cpu_topology_socket(&t->topo, 1);
	assert_non_null(s);
	assert_int_equal(s->socket, 1);
	/* Core 0 of socket 1: cpu 1 and its sibling 13. */
	assert_int_equal(s->cores[0].core, 0);
	assert_int_equal(s->cores[0].cpus[0], 1);
	assert_int_equal(s->cores[0].cpus[1], 13);
	assert_null(cpu_topology_socket(&t->topo, 2));

	c = cpu_topology_find(&t->topo, 12);
	assert_non_null(c);
	assert_int_equal(c->socket, 1);
	assert_int_equal(c->core, 8);
	assert_int_equal(c->thread, 1);
	assert_int_equal(cpu_topology_find(&t->topo, 0)->thread, 0);
	c = cpu_topology_find(&t->topo, 24);
	assert_non_null(c);
	assert_false(c->online);
	assert_int_equal(c->socket, -1);
	assert_null(cpu_topology_find(&t->topo, 25));
	assert_null(cpu_topology_find(&t->topo, -1));
}

/* Every socket of the grouping tree is one die (die_id 0). */
static void topology_single_die_per_socket(void **state)
{
	struct tree *t = *state;

	make_grouping_tree(t->root);
	open_tree(t);
	assert_int_equal(cpu_topology_load(&t->hw, &t->topo, t->err, sizeof(t->err)), 0);
	for (int k = 0; k < 2; k++) {
		const struct cpu_socket *s = &t->topo.sockets[k];

		assert_int_equal(s->n_dies, 1);
		assert_int_equal(s->dies[0].die, 0);
		assert_int_equal(s->dies[0].n_cpus, s->n_cpus);
		assert_memory_equal(s->dies[0].cpus, s->cpus, sizeof(int) * (size_t)s->n_cpus);
	}
}

/*
 * One package of two dies of two cores each (as Cascade Lake-AP's), with
 * the same core ids on both dies: CPUs 0-1 and 4-5 on die 0, 2-3 and 6-7 on
 * die 1 (siblings 4 apart).
 */
static void topology_groups_dies(void **state)
{
	static const int die0[] = { 0, 1, 4, 5 }, die1[] = { 2, 3, 6, 7 };
	struct tree *t = *state;
	const struct cpu_socket *s;

	for (int cpu = 0; cpu < 8; cpu++) {
		helpers_fake_cpu(t->root, cpu, 0, cpu % 2, true);
		helpers_fake_cpu_attr(t->root, cpu, "topology/die_id", cpu % 4 < 2 ? "0\n" : "1\n");
	}
	open_tree(t);
	assert_int_equal(cpu_topology_load(&t->hw, &t->topo, t->err, sizeof(t->err)), 0);
	assert_int_equal(t->topo.n_sockets, 1);
	s = &t->topo.sockets[0];
	assert_int_equal(s->n_dies, 2);
	assert_int_equal(s->dies[0].die, 0);
	assert_int_equal(s->dies[1].die, 1);
	assert_int_equal(s->dies[0].n_cpus, 4);
	assert_int_equal(s->dies[1].n_cpus, 4);
	assert_memory_equal(s->dies[0].cpus, die0, sizeof(die0));
	assert_memory_equal(s->dies[1].cpus, die1, sizeof(die1));
	/* Core 0 of die 0 and core 0 of die 1 stay two cores. */
	assert_int_equal(s->n_cores, 4);
	assert_int_equal(s->cores[0].core, 0);
	assert_int_equal(s->cores[0].cpus[0], 0);
	assert_int_equal(s->cores[0].cpus[1], 4);
	assert_int_equal(s->cores[2].core, 0);
	assert_int_equal(s->cores[2].cpus[0], 2);
	assert_int_equal(s->cores[2].cpus[1], 6);
	assert_int_equal(cpu_topology_find(&t->topo, 6)->die, 1);
	assert_int_equal(cpu_socket_die_of(s, 6), 1);
	assert_int_equal(cpu_socket_die_of(s, 5), 0);
}

static void topology_caps_cpus_per_core(void **state)
{
	struct tree *t = *state;

	for (int cpu = 0; cpu < 9; cpu++)
		helpers_fake_cpu(t->root, cpu, 0, 3, true);
	open_tree(t);
	assert_int_equal(cpu_topology_load(&t->hw, &t->topo, t->err, sizeof(t->err)), -E2BIG);
	assert_string_equal(t->err, "socket 0 core 3: more than 8 logical CPUs");
	assert_int_equal(t->topo.n_sockets, 0);
	assert_null(t->topo.sockets);
}

#define TREE_TEST(f) cmocka_unit_test_setup_teardown(f, tree_setup, tree_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		TREE_TEST(westmere_ep),
		TREE_TEST(nehalem_ep_from_first_online_cpu),
		TREE_TEST(skylake_sp_package_thermal_follows_cpuid),
		TREE_TEST(later_servers_by_model),
		TREE_TEST(refused_cpus),
		TREE_TEST(amd_epyc_generations),
		cmocka_unit_test(amd_by_name),
		TREE_TEST(perfmon_per_cpu),
		TREE_TEST(no_online_cpu),
		TREE_TEST(topology_groups_cores_and_siblings),
		TREE_TEST(topology_single_die_per_socket),
		TREE_TEST(topology_groups_dies),
		TREE_TEST(topology_caps_cpus_per_core),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
