/*
 * CPU identification and topology.  cpu_detect() reads CPUID of the first
 * online CPU and looks the exact family-6 model up in a facility table
 * (hardware.md §1.1, §1.2, §8), or an AMD EPYC family/model up in
 * amd_epyc.h (hardware-amd.md §0): facilities are never inferred by probing
 * MSRs, whose addresses are reused between generations.  The topology
 * loader groups logical CPUs into sockets and physical cores.  Nothing here
 * touches an MSR; the collectors do that.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "amd_epyc.h"
#include "cpu.h"
#include "decode.h"
#include "err.h"
#include "strbuf.h"

#define CPUID_LEAF_VENDOR   0x0
#define CPUID_LEAF_SIG      0x1
#define CPUID_LEAF_THERMAL  0x6
#define CPUID_LEAF_PERFMON  0xa

#define INTEL_FAMILY        6
#define VENDOR_INTEL        "GenuineIntel"
#define VENDOR_AMD          "AuthenticAMD"
#define CORE_MAX_CPUS       ((int)(sizeof(((struct cpu_core *)0)->cpus) / sizeof(int)))

static const char supported_sentence[] =
	"uncored supports Intel family 6 servers (Nehalem/Westmere with the uncore PMU, "
	"and Sandy Bridge-EP through Emerald Rapids for thermal and core counters) "
	"and AMD EPYC from Zen 2 (Rome) to family 1Ah models 50h-5Fh";

/*
 * What a generation has, named facility by facility.  A new CPU is one
 * row in models[] pointing at the features of its generation; a new
 * facility is one field here, set only where it exists.
 */
struct model_features {
	bool has_nhm_uncore;           /* hardware.md §1.1 */
	bool has_uncore_thermal_events;/* hardware.md §2.1-2.2: Westmere only */
	/*
	 * IA32_PACKAGE_THERM_STATUS when CPUID.06H:EAX[6] says so (hardware.md
	 * §3.2, §8; Nehalem/Westmere lack it).
	 */
	bool has_ptm_generation;
	bool has_rapl_perf_status;     /* hardware.md §4.1 */
	const char *refused;           /* not supported, with the reason */
};

static const struct model_features nehalem_features = {
	.has_nhm_uncore = true,
};

static const struct model_features westmere_features = {
	.has_nhm_uncore = true,
	.has_uncore_thermal_events = true,
};

static const struct model_features ex_features = {
	.refused = "its uncore is a different facility (W-box) that uncored does not implement",
};

/* Sandy Bridge-EP and later servers: package thermal and RAPL perf status. */
static const struct model_features snb_server_features = {
	.has_ptm_generation = true,
	.has_rapl_perf_status = true,
};

/* Family 6 models by exact display model. */
struct model_entry {
	unsigned model;
	const char *microarch;
	const struct model_features *features;
};

static const struct model_entry models[] = {
	{ 0x1a, "nehalem-ep", &nehalem_features },
	{ 0x1e, "nehalem", &nehalem_features },
	{ 0x1f, "nehalem-g", &nehalem_features },  /* UNCONFIRMED, hardware.md §9.3 */
	{ 0x25, "westmere", &westmere_features },
	{ 0x2c, "westmere-ep", &westmere_features },
	{ 0x2e, "nehalem-ex", &ex_features },
	{ 0x2f, "westmere-ex", &ex_features },
	{ 0x2d, "sandybridge-ep", &snb_server_features },
	{ 0x3e, "ivybridge-ep", &snb_server_features },
	{ 0x3f, "haswell-x", &snb_server_features },
	{ 0x4f, "broadwell-x", &snb_server_features },
	/* Xeon D-1500: PTM, RAPL and 0x613/0x61B as 0x4F (turbostat bdx_features, hardware-linux.md §2) */
	{ 0x56, "broadwell-de", &snb_server_features },
	{ 0x55, "skylake-sp", &snb_server_features },
	{ 0x6a, "icelake-x", &snb_server_features },
	{ 0x6c, "icelake-d", &snb_server_features },
	{ 0x8f, "sapphirerapids-x", &snb_server_features },
	{ 0xcf, "emeraldrapids-x", &snb_server_features },
	/* Granite Rapids: PTM, 0x613/0x61B per turbostat (spr_features; hardware.md §4) */
	{ 0xad, "graniterapids-x", &snb_server_features },
	{ 0xae, "graniterapids-d", &snb_server_features },
};

/* Vendors refused with a pointer to where their temperatures are (hardware.md §7). */
static const struct {
	const char *vendor;
	const char *advice;
} other_vendors[] = {
	{ VENDOR_AMD, "; on other AMD parts read temperatures from the k10temp hwmon driver" },
	{ "HygonGenuine", "; on Hygon read temperatures from the k10temp hwmon driver" },
};

static const struct model_entry *find_model(unsigned model)
{
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (models[i].model == model)
			return &models[i];
	return NULL;
}

static const char *vendor_advice(const char *vendor)
{
	for (size_t i = 0; i < sizeof(other_vendors) / sizeof(other_vendors[0]); i++)
		if (strcmp(other_vendors[i].vendor, vendor) == 0)
			return other_vendors[i].advice;
	return "";
}

/*
 * Enumerate all CPUs into a malloc'ed array (ascending CPU number, as
 * hw_ops.enumerate promises).  Retries if the count grows in between.
 */
static int load_cpu_list(struct hw *hw, struct hw_cpu **ret_cpus, int *ret_n)
{
	struct hw_cpu *cpus = NULL;
	int n = 0, max = 0, r;

	for (;;) {
		r = hw_enumerate(hw, cpus, max, &n);
		if (r < 0 || n <= max)
			break;
		free(cpus);
		max = n;
		cpus = calloc(max, sizeof(*cpus));
		if (!cpus)
			return -ENOMEM;
	}
	if (r < 0) {
		free(cpus);
		return r;
	}
	*ret_cpus = cpus;
	*ret_n = n;
	return 0;
}

/* The first online CPU in hw's list, before any topology exists. */
static int first_listed_online_cpu(struct hw *hw, char *err, size_t errlen)
{
	struct hw_cpu *cpus;
	int n, r, cpu = -ENODEV;

	r = load_cpu_list(hw, &cpus, &n);
	if (r < 0) {
		set_err(err, errlen, "cannot list CPUs: %s", strerror(-r));
		return r;
	}
	for (int i = 0; i < n && cpu < 0; i++)
		if (cpus[i].online)
			cpu = cpus[i].cpu;
	free(cpus);
	if (cpu < 0)
		set_err(err, errlen, "no online CPU found");
	return cpu;
}

static void perfmon_from_decode(const struct decode_cpuid_perfmon *d, struct cpu_perfmon *p)
{
	p->version = d->version;
	p->n_gp = d->n_gp;
	p->gp_width_bits = d->gp_width_bits;
	p->ebx_length = d->ebx_length;
	p->unavailable = d->unavailable;
	p->n_fixed = d->n_fixed;
	p->fixed_width_bits = d->fixed_width_bits;
}

int cpu_perfmon_read(struct hw *hw, int cpu, struct cpu_perfmon *ret_perfmon)
{
	struct decode_cpuid_perfmon d;
	struct hw_cpuid regs;
	int r = hw_cpuid(hw, cpu, CPUID_LEAF_PERFMON, 0, &regs);

	if (r < 0)
		return r;
	d = decode_cpuid_perfmon(&regs);
	perfmon_from_decode(&d, ret_perfmon);
	return 0;
}

/* Refuse a vendor/model with the one-sentence explanation. */
static int refuse(const struct cpu_info *info, const struct model_entry *m, char *err, size_t errlen)
{
	if (m && m->features->refused)
		set_err(err, errlen, "unsupported CPU: %s family 0x%x model 0x%x (%s): %s; %s",
			info->vendor, info->family, info->model, m->microarch, m->features->refused,
			supported_sentence);
	else
		set_err(err, errlen, "unsupported CPU: %s family 0x%x model 0x%x; %s%s",
			info->vendor, info->family, info->model, supported_sentence,
			vendor_advice(info->vendor));
	return -ENOTSUP;
}

/* Fill vendor, signature and the maximum basic leaf from CPUID 0x0 and 0x1. */
static int read_identity(struct hw *hw, int cpu, struct cpu_info *info, uint32_t *ret_max_leaf)
{
	struct decode_cpuid_signature sig;
	struct hw_cpuid regs;
	int r = hw_cpuid(hw, cpu, CPUID_LEAF_VENDOR, 0, &regs);

	if (r < 0)
		return r;
	decode_cpuid_vendor(&regs, info->vendor);
	*ret_max_leaf = regs.eax;
	r = hw_cpuid(hw, cpu, CPUID_LEAF_SIG, 0, &regs);
	if (r < 0)
		return r;
	sig = decode_cpuid_signature(regs.eax);
	info->family = sig.family;
	info->model = sig.model;
	info->stepping = sig.stepping;
	return 0;
}

/* What the table alone says of a model (no CPUID: package thermal as its generation has it). */
static void table_facilities(const struct model_entry *m, struct cpu_info *info)
{
	info->microarch = m->microarch;
	info->fac.has_nhm_uncore = m->features->has_nhm_uncore;
	info->fac.has_uncore_thermal_events = m->features->has_uncore_thermal_events;
	info->fac.has_tjmax = true;  /* every model in the table, hardware.md §3.4 */
	info->fac.has_rapl_perf_status = m->features->has_rapl_perf_status;
	info->fac.has_package_thermal = m->features->has_ptm_generation;
}

/*
 * What an AMD EPYC generation has (amd_epyc.h): no TjMax, no Intel thermal
 * MSRs or uncore, no fixed counters (hardware-amd.md §2, §3, §5).
 */
static void amd_facilities(const struct amd_epyc *a, struct cpu_info *info)
{
	memset(&info->fac, 0, sizeof(info->fac));
	info->microarch = a->microarch;
	info->fac.lacks_intel_thermal = true;
	info->fac.lacks_intel_core_pmu = true;
	info->fac.amd_zen = a->zen;
	info->fac.hsmp_proto = a->hsmp_proto;
	info->fac.has_hsmp_prochot = a->hsmp_prochot;
	info->fac.has_hsmp_freq_limit = a->hsmp_freq_limit;
	info->fac.has_hsmp_dimm = a->hsmp_dimm;
	info->fac.n_tccd = a->n_tccd;
	info->fac.has_ref_cycles = a->ref_cycles;
	info->fac.amd_core_counters = AMD_CORE_COUNTERS;
	info->fac.amd_core_counter_bits = AMD_CORE_COUNTER_BITS;
}

/* The AMD generation of info's signature, or NULL when info is not an AMD part uncored knows. */
static const struct amd_epyc *find_amd(const struct cpu_info *info)
{
	return strcmp(info->vendor, VENDOR_AMD) == 0 ? amd_epyc_find(info->family, info->model) : NULL;
}

int cpu_info_for_signature(const char *vendor, unsigned family, unsigned model,
			   struct cpu_info *ret_info, char *err, size_t errlen)
{
	const struct model_entry *m = NULL;
	struct cpu_info info = { 0 };

	snprintf(info.vendor, sizeof(info.vendor), "%s", vendor);
	info.family = family;
	info.model = model;
	if (find_amd(&info)) {
		amd_facilities(find_amd(&info), &info);
		*ret_info = info;
		return 0;
	}
	if (strcmp(vendor, VENDOR_INTEL) == 0 && family == INTEL_FAMILY)
		m = find_model(model);
	if (!m || m->features->refused)
		return refuse(&info, m, err, errlen);
	table_facilities(m, &info);
	*ret_info = info;
	return 0;
}

int cpu_info_for_name(const char *name, struct cpu_info *ret_info, char *err, size_t errlen)
{
	struct strbuf known;

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (strcmp(models[i].microarch, name) == 0)
			return cpu_info_for_signature(VENDOR_INTEL, INTEL_FAMILY, models[i].model,
						      ret_info, err, errlen);
	if (amd_epyc_by_name(name))
		return cpu_info_for_signature(VENDOR_AMD, amd_epyc_by_name(name)->family,
					      amd_epyc_by_name(name)->model_first, ret_info, err, errlen);
	strbuf_init(&known);
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (!models[i].features->refused)
			strbuf_printf(&known, "%s%s", known.len ? ", " : "", models[i].microarch);
	for (size_t i = 0; amd_epyc_at(i); i++)
		if (amd_epyc_by_name(amd_epyc_at(i)->microarch) == amd_epyc_at(i))
			strbuf_printf(&known, ", %s", amd_epyc_at(i)->microarch);
	set_err(err, errlen, "unknown CPU model '%s'; known: %s", name, known.buf ? known.buf : "");
	strbuf_free(&known);
	return -ENOENT;
}

int cpu_info_from_cpuinfo(const char *path, struct cpu_info *ret_info, char *err, size_t errlen)
{
	char line[512], vendor[13] = "";
	int family = -1, model = -1;
	FILE *f = fopen(path, "re");

	if (!f) {
		int r = -errno;

		set_err(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	/* The first processor's block is enough: uncored refuses mixed machines anyway. */
	while (fgets(line, sizeof(line), f) && line[0] != '\n') {
		char *colon = strchr(line, ':');
		const char *value;
		size_t key_len;

		if (!colon)
			continue;
		key_len = (size_t)(colon - line);
		while (key_len > 0 && (line[key_len - 1] == ' ' || line[key_len - 1] == '\t'))
			key_len--;
		value = colon + 1 + strspn(colon + 1, " \t");
		if (key_len == 9 && strncmp(line, "vendor_id", 9) == 0)
			snprintf(vendor, sizeof(vendor), "%.*s", (int)strcspn(value, "\n"), value);
		else if (key_len == 10 && strncmp(line, "cpu family", 10) == 0)
			family = atoi(value);
		else if (key_len == 5 && strncmp(line, "model", 5) == 0)
			model = atoi(value);
	}
	fclose(f);
	if (!vendor[0] || family < 0 || model < 0) {
		set_err(err, errlen, "%s: no vendor_id, cpu family and model for the first processor",
			path);
		return -EINVAL;
	}
	return cpu_info_for_signature(vendor, (unsigned)family, (unsigned)model, ret_info, err, errlen);
}

/* Facilities from the table entry, and package thermal from CPUID.06H:EAX[6]. */
static int read_facilities(struct hw *hw, int cpu, const struct model_entry *m,
			   uint32_t max_leaf, struct cpu_info *info)
{
	struct hw_cpuid regs;
	int r;

	table_facilities(m, info);
	info->fac.has_package_thermal = false;
	if (m->features->has_ptm_generation && max_leaf >= CPUID_LEAF_THERMAL) {
		r = hw_cpuid(hw, cpu, CPUID_LEAF_THERMAL, 0, &regs);
		if (r < 0)
			return r;
		info->fac.has_package_thermal = decode_cpuid_thermal(regs.eax).ptm;
	}
	memset(&info->perfmon, 0, sizeof(info->perfmon));
	if (max_leaf >= CPUID_LEAF_PERFMON)
		return cpu_perfmon_read(hw, cpu, &info->perfmon);
	return 0;
}

int cpu_detect(struct hw *hw, struct cpu_info *ret_info, char *err, size_t errlen)
{
	const struct model_entry *m = NULL;
	struct cpu_info info = { 0 };
	uint32_t max_leaf;
	int cpu, r;

	cpu = first_listed_online_cpu(hw, err, errlen);
	if (cpu < 0)
		return cpu;
	r = read_identity(hw, cpu, &info, &max_leaf);
	if (r < 0) {
		set_err(err, errlen, "cpu %d: CPUID: %s", cpu, hw_hint(r, HW_OP_READ));
		return r;
	}
	if (find_amd(&info)) {
		/* Leaves 6 and 0xA are Intel's; AMD's facilities are the table's alone. */
		amd_facilities(find_amd(&info), &info);
		*ret_info = info;
		return 0;
	}
	if (strcmp(info.vendor, VENDOR_INTEL) == 0 && info.family == INTEL_FAMILY)
		m = find_model(info.model);
	if (!m || m->features->refused)
		return refuse(&info, m, err, errlen);
	r = read_facilities(hw, cpu, m, max_leaf, &info);
	if (r < 0) {
		set_err(err, errlen, "cpu %d: CPUID: %s", cpu, hw_hint(r, HW_OP_READ));
		return r;
	}
	*ret_info = info;
	return 0;
}

static int compare_cpu_number(const void *a, const void *b)
{
	const struct hw_cpu *x = a, *y = b;

	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

/* Order by socket, then die, then core, then CPU number. */
static int compare_placement(const void *a, const void *b)
{
	const struct hw_cpu *x = *(const struct hw_cpu *const *)a;
	const struct hw_cpu *y = *(const struct hw_cpu *const *)b;

	if (x->socket != y->socket)
		return (x->socket > y->socket) - (x->socket < y->socket);
	if (x->die != y->die)
		return (x->die > y->die) - (x->die < y->die);
	if (x->core != y->core)
		return (x->core > y->core) - (x->core < y->core);
	return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

static int compare_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Whether placed[i] starts a new core (or die) of its socket. */
static bool starts_core(struct hw_cpu *const *placed, int i)
{
	return i == 0 || placed[i]->core != placed[i - 1]->core ||
	       placed[i]->die != placed[i - 1]->die;
}

/* The dies of s from placed[0..n), ordered by die. */
static int fill_dies(struct cpu_socket *s, struct hw_cpu *const *placed, int n)
{
	s->n_dies = 0;
	for (int i = 0; i < n; i++)
		if (i == 0 || placed[i]->die != placed[i - 1]->die)
			s->n_dies++;
	s->dies = calloc(s->n_dies, sizeof(*s->dies));
	if (!s->dies)
		return -ENOMEM;
	for (int i = 0, k = -1; i < n; i++) {
		struct cpu_die *d;

		if (i == 0 || placed[i]->die != placed[i - 1]->die) {
			int j = i;

			while (j < n && placed[j]->die == placed[i]->die)
				j++;
			d = &s->dies[++k];
			d->die = placed[i]->die;
			d->cpus = calloc(j - i, sizeof(*d->cpus));
			if (!d->cpus)
				return -ENOMEM;
		}
		d = &s->dies[k];
		d->cpus[d->n_cpus++] = placed[i]->cpu;
	}
	for (int k = 0; k < s->n_dies; k++)
		qsort(s->dies[k].cpus, s->dies[k].n_cpus, sizeof(int), compare_int);
	return 0;
}

/*
 * Fill one socket from placed[0..n), all of the same socket, ordered by
 * die, core, then CPU number.
 */
static int fill_socket(struct cpu_socket *s, struct hw_cpu *const *placed, int n,
		       char *err, size_t errlen)
{
	if (n <= 0)
		return -EINVAL;
	s->socket = placed[0]->socket;
	s->n_cores = 0;
	for (int i = 0; i < n; i++)
		if (starts_core(placed, i))
			s->n_cores++;
	s->cores = calloc(s->n_cores, sizeof(*s->cores));
	s->cpus = calloc(n, sizeof(*s->cpus));
	if (!s->cores || !s->cpus || fill_dies(s, placed, n) < 0) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->n_cpus = n;
	for (int i = 0, k = -1; i < n; i++) {
		struct cpu_core *c;

		if (starts_core(placed, i))
			s->cores[++k].core = placed[i]->core;
		c = &s->cores[k];
		if (c->n_cpus == CORE_MAX_CPUS) {
			set_err(err, errlen, "socket %d core %d: more than %d logical CPUs",
				s->socket, c->core, CORE_MAX_CPUS);
			return -E2BIG;
		}
		c->cpus[c->n_cpus++] = placed[i]->cpu;
		s->cpus[i] = placed[i]->cpu;
	}
	qsort(s->cpus, n, sizeof(*s->cpus), compare_int);
	return 0;
}

/* Group the CPUs of known topology into topo->sockets. */
static int group_sockets(struct cpu_topology *topo, char *err, size_t errlen)
{
	struct hw_cpu **placed = calloc(topo->n_cpus ? topo->n_cpus : 1, sizeof(*placed));
	int n = 0, r = 0;

	if (!placed) {
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < topo->n_cpus; i++)
		if (topo->cpus[i].socket >= 0 && topo->cpus[i].core >= 0)
			placed[n++] = &topo->cpus[i];
	qsort(placed, n, sizeof(*placed), compare_placement);
	for (int i = 0; i < n; i++)
		if (i == 0 || placed[i]->socket != placed[i - 1]->socket)
			topo->n_sockets++;
	topo->sockets = calloc(topo->n_sockets ? topo->n_sockets : 1, sizeof(*topo->sockets));
	if (!topo->sockets) {
		free(placed);
		set_err(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0, k = 0; i < n && r == 0; k++) {
		int j = i;

		while (j < n && placed[j]->socket == placed[i]->socket)
			j++;
		r = fill_socket(&topo->sockets[k], placed + i, j - i, err, errlen);
		i = j;
	}
	free(placed);
	return r;
}

int cpu_topology_load(struct hw *hw, struct cpu_topology *ret_topo, char *err, size_t errlen)
{
	struct cpu_topology topo = { 0 };
	int r;

	r = load_cpu_list(hw, &topo.cpus, &topo.n_cpus);
	if (r < 0) {
		set_err(err, errlen, "cannot list CPUs: %s", strerror(-r));
		return r;
	}
	qsort(topo.cpus, topo.n_cpus, sizeof(*topo.cpus), compare_cpu_number);
	r = group_sockets(&topo, err, errlen);
	if (r < 0) {
		cpu_topology_free(&topo);
		return r;
	}
	*ret_topo = topo;
	return 0;
}

void cpu_topology_free(struct cpu_topology *topo)
{
	if (!topo)
		return;
	for (int i = 0; topo->sockets && i < topo->n_sockets; i++) {
		for (int k = 0; topo->sockets[i].dies && k < topo->sockets[i].n_dies; k++)
			free(topo->sockets[i].dies[k].cpus);
		free(topo->sockets[i].dies);
		free(topo->sockets[i].cores);
		free(topo->sockets[i].cpus);
	}
	free(topo->sockets);
	free(topo->cpus);
	memset(topo, 0, sizeof(*topo));
}

const struct hw_cpu *cpu_topology_find(const struct cpu_topology *topo, int cpu)
{
	struct hw_cpu key = { .cpu = cpu };

	if (!topo->cpus)
		return NULL;
	return bsearch(&key, topo->cpus, topo->n_cpus, sizeof(*topo->cpus), compare_cpu_number);
}

const struct cpu_socket *cpu_topology_socket(const struct cpu_topology *topo, int socket)
{
	for (int i = 0; i < topo->n_sockets; i++)
		if (topo->sockets[i].socket == socket)
			return &topo->sockets[i];
	return NULL;
}

int cpu_socket_first_online(struct hw *hw, const struct cpu_socket *sock)
{
	for (int i = 0; i < sock->n_cpus; i++)
		if (hw_cpu_online(hw, sock->cpus[i]) == 1)
			return sock->cpus[i];
	return -1;
}

int cpu_socket_die_of(const struct cpu_socket *sock, int cpu)
{
	for (int k = 0; k < sock->n_dies; k++)
		for (int i = 0; i < sock->dies[k].n_cpus; i++)
			if (sock->dies[k].cpus[i] == cpu)
				return k;
	return 0;
}
