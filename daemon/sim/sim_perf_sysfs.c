/*
 * The PMU tree of the simulated kernel's sysfs (sim_perf.h): each PMU's
 * type, cpumask and format files, for the core PMU, the Nehalem/Westmere
 * uncore and the server boxes.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sim_box.h"
#include "sim_perf_int.h"

/* ---- the sysfs tree ---- */

static int mkdirs(char *path)
{
	for (char *s = path + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST) {
			*s = '/';
			return -errno;
		}
		*s = '/';
	}
	return mkdir(path, 0755) < 0 && errno != EEXIST ? -errno : 0;
}

static int put(const char *dir, const char *name, const char *text, char *err, size_t errlen)
{
	char path[2 * PATH_MAX];
	FILE *f;
	int r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	if (!f || fprintf(f, "%s\n", text) < 0)
		r = -errno;
	if (f && fclose(f) != 0 && r == 0)
		r = -errno;
	if (r < 0)
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
	return r;
}

struct sysfs_file {
	const char *name, *text;
};

static int put_pmu(const char *root, const char *pmu, const struct sysfs_file *files, size_t n,
		   char *err, size_t errlen)
{
	char dir[PATH_MAX], sub[PATH_MAX + 16];
	int r;

	snprintf(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, pmu);
	for (size_t i = 0; i < 2; i++) {
		snprintf(sub, sizeof(sub), "%s/%s", dir, i ? "events" : "format");
		if ((r = mkdirs(sub)) < 0) {
			snprintf(err, errlen, "%s: %s", sub, strerror(-r));
			return r;
		}
	}
	for (size_t i = 0; i < n; i++)
		if ((r = put(dir, files[i].name, files[i].text, err, errlen)) < 0)
			return r;
	return 0;
}

/* The first CPU of place u of n (a package, a die or an L3 complex). */
typedef int (*place_cpu_fn)(const struct sim_model *m, int u, int n);

static int package_cpu(const struct sim_model *m, int u, int n)
{
	(void)n;
	return sim_model_cpu_of(m, u, 0, 0);
}

static int die_cpu(const struct sim_model *m, int u, int n)
{
	(void)n;
	return sim_model_unit_cpu(m, u);
}

/* AMD: the socket's cores split evenly over its L3 complexes (sim_model.h n_l3). */
static int l3_cpu(const struct sim_model *m, int u, int n)
{
	int per_socket = n / m->n_sockets;

	return sim_model_cpu_of(m, u / per_socket, (u % per_socket) * (m->n_cores / per_socket), 0);
}

/* cpumask: the first CPU of each of the n places. */
static int put_cpu_list(const struct sim_model *m, const char *root, const char *pmu, int n,
			place_cpu_fn first_cpu, char *err, size_t errlen)
{
	char cpumask[1024] = "", dir[PATH_MAX];
	size_t used = 0;

	for (int u = 0; u < n && used < sizeof(cpumask); u++)
		used += (size_t)snprintf(cpumask + used, sizeof(cpumask) - used, "%s%d", u ? "," : "",
					 first_cpu(m, u, n));
	snprintf(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, pmu);
	return put(dir, "cpumask", cpumask, err, errlen);
}

/*
 * cpumask: the first CPU of each package, or of each die for the server
 * boxes (per_die), which are per die (uncore_get_attr_cpumask).
 */
static int put_cpumask(const struct sim_model *m, const char *root, const char *pmu, bool per_die,
		       char *err, size_t errlen)
{
	return put_cpu_list(m, root, pmu, m->n_sockets * (per_die ? sim_model_n_dies(m) : 1),
			    per_die ? die_cpu : package_cpu, err, errlen);
}

/* A PMU's files, its type and, with first_cpu, its cpumask over n places. */
static int put_typed_pmu(const struct sim_model *m, const char *root, const char *pmu, int type,
			 const struct sysfs_file *files, size_t n_files, int n, place_cpu_fn first_cpu,
			 char *err, size_t errlen)
{
	char dir[PATH_MAX], text[16];
	int r;

	snprintf(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, pmu);
	snprintf(text, sizeof(text), "%d", type);
	if ((r = put_pmu(root, pmu, files, n_files, err, errlen)) < 0 ||
	    (r = put(dir, "type", text, err, errlen)) < 0)
		return r;
	return first_cpu ? put_cpu_list(m, root, pmu, n, first_cpu, err, errlen) : 0;
}

#define N_FILES(a) (sizeof(a) / sizeof((a)[0]))

/*
 * An AMD host's PMUs (hardware-amd.md §3.3, §4; arch/x86/events/amd/core.c
 * and uncore.c, arch/x86/events/msr.c).  The events/ strings of the
 * generic events are x86_event_sysfs_show's; amd_df on a part without
 * PerfMonV2 gets the family 17h (v1) format, Milan's included.  Types
 * are the simulator's choice (sim_perf.h).
 */
static int write_amd(const struct sim_model *m, const char *root, char *err, size_t errlen)
{
	static const struct sysfs_file cpu[] = {
		{ "type", "4" },
		{ "format/event", "config:0-7,32-35" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/cmask", "config:24-31" },
		{ "events/cpu-cycles", "event=0x76" }, { "events/instructions", "event=0xc0" },
		{ "events/cache-references", "event=0x60,umask=0xff" },
		{ "events/cache-misses", "event=0x64,umask=0x09" },
		{ "events/branch-instructions", "event=0xc2" },
		{ "events/branch-misses", "event=0xc3" },
		{ "perf_event_mux_interval_ms", "4" },
		{ "events/ref-cycles", "event=0x120,umask=0x01" },   /* PerfMonV2 models only: last */
	};
	static const struct sysfs_file df_v1[] = {
		{ "format/event", "config:0-7,32-35,59-60" }, { "format/umask", "config:8-15" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file df_v2[] = {
		{ "format/event", "config:0-7,32-37" }, { "format/umask", "config:8-15,24-27" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file l3_17h[] = {
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/slicemask", "config:48-51" }, { "format/threadmask", "config:56-63" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file l3_19h[] = {
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/threadmask", "config:56-57" }, { "format/coreid", "config:42-44" },
		{ "format/enallslices", "config:46" }, { "format/enallcores", "config:47" },
		{ "format/sliceid", "config:48-50" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file umc[] = {
		{ "format/event", "config:0-7" }, { "format/rdwrmask", "config:8-9" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file msr[] = {
		{ "format/event", "config:0-63" },
		{ "events/tsc", "event=0x00" }, { "events/aperf", "event=0x01" },
		{ "events/mperf", "event=0x02" }, { "events/irperf", "event=0x06" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	bool v2 = m->flags & SIM_F_PERFMON_V2;
	char name[32], dir[PATH_MAX], cpu_text[16];
	int r;

	if ((r = put_pmu(root, "cpu", cpu, N_FILES(cpu) - (v2 ? 0 : 1), err, errlen)) < 0 ||
	    (r = put_typed_pmu(m, root, "amd_df", SIM_PERF_AMD_DF_TYPE, v2 ? df_v2 : df_v1,
			       v2 ? N_FILES(df_v2) : N_FILES(df_v1), m->n_sockets, package_cpu,
			       err, errlen)) < 0 ||
	    (r = put_typed_pmu(m, root, "amd_l3", SIM_PERF_AMD_L3_TYPE,
			       m->family == 0x17 ? l3_17h : l3_19h,
			       m->family == 0x17 ? N_FILES(l3_17h) : N_FILES(l3_19h),
			       m->n_sockets * m->n_l3, l3_cpu, err, errlen)) < 0 ||
	    (r = put_typed_pmu(m, root, "msr", SIM_PERF_MSR_TYPE, msr, N_FILES(msr), 0, NULL,
			       err, errlen)) < 0)
		return r;
	/*
	 * One PMU per UMC of every socket (uncore.c: N counts all sockets'
	 * UMCs), its cpumask the one CPU of its node (a socket here).
	 */
	for (int i = 0; v2 && i < m->n_sockets * m->n_umc; i++) {
		snprintf(name, sizeof(name), "amd_umc_%d", i);
		snprintf(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, name);
		snprintf(cpu_text, sizeof(cpu_text), "%d", package_cpu(m, i / m->n_umc, 0));
		if ((r = put_typed_pmu(m, root, name, SIM_PERF_AMD_UMC_TYPE0 + i, umc, N_FILES(umc),
				       0, NULL, err, errlen)) < 0 ||
		    (r = put(dir, "cpumask", cpu_text, err, errlen)) < 0)
			return r;
	}
	return 0;
}

/* The discovery table's type id of the PCU (hardware-linux.md §6: uncore_type_4_N). */
#define DISCOVERY_PCU_TYPE 4
/* ... and of the iMC (kernel uncore_snbep.c UNCORE_SPR_IMC, gnr_uncores[6]). */
#define DISCOVERY_IMC_TYPE 6

/*
 * The name of PCU instance k of m, and its alias ("" when none), by
 * uncore.c uncore_get_pmu_name and uncore_get_alias_name: uncore_pcu for a
 * type of one box, uncore_pcu_<box id> for several; the discovery
 * generations (Sapphire Rapids on) have the alias uncore_type_4[_<id>],
 * which is the name itself on a kernel without the platform's table.
 */
static void pcu_names(const struct sim_model *m, bool discovery_names, int k, char *name,
		      size_t len, char *alias, size_t alias_len)
{
	bool discovery = m->model == 0x8f || m->model == 0xad;
	bool several = sim_model_n_pcu(m) > 1;

	alias[0] = '\0';
	if (discovery && several)
		snprintf(alias, alias_len, "uncore_type_%d_%d", DISCOVERY_PCU_TYPE, k);
	else if (discovery)
		snprintf(alias, alias_len, "uncore_type_%d", DISCOVERY_PCU_TYPE);
	if (discovery && discovery_names) {
		snprintf(name, len, "%s", alias);
		alias[0] = '\0';
	} else if (several) {
		snprintf(name, len, "uncore_pcu_%d", k);
	} else {
		snprintf(name, len, "uncore_pcu");
	}
}

/*
 * The server boxes: Skylake-SP's (uncore_snbep.c skx_uncore_pcu_formats_attr,
 * skx_uncore_formats_attr, hswep_uncore_imc_events; only the first of the
 * kernel's iMC aliases are written).  Types are the simulator's choice.
 */
static int write_boxes(const struct sim_model *m, bool discovery_names, const char *root,
		       char *err, size_t errlen)
{
	static const struct sysfs_file pcu[] = {
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/thresh", "config:24-31" }, { "format/occ_invert", "config:30" },
		{ "format/occ_edge_det", "config:31" },
		{ "format/filter_band0", "config1:0-7" }, { "format/filter_band1", "config1:8-15" },
		{ "format/filter_band2", "config1:16-23" }, { "format/filter_band3", "config1:24-31" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file imc[] = {
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/thresh", "config:24-31" },
		{ "events/clockticks", "event=0x00,umask=0x00" },
		{ "events/cas_count_read", "event=0x04,umask=0x03" },
		{ "events/cas_count_read.scale", "6.103515625e-5" },
		{ "events/cas_count_read.unit", "MiB" },
		{ "events/cas_count_write", "event=0x04,umask=0x0c" },
		{ "events/cas_count_write.scale", "6.103515625e-5" },
		{ "events/cas_count_write.unit", "MiB" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	/*
	 * Sandy Bridge-EP (uncore_snbep.c snbep_uncore_pcu_formats_attr, of
	 * which the occupancy edge/invert and band filter fields are not
	 * written; snbep_uncore_formats_attr and snbep_uncore_imc_events).
	 */
	static const struct sysfs_file snbep_pcu[] = {
		{ "format/event", "config:0-7" }, { "format/occ_sel", "config:14-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/thresh", "config:24-28" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file snbep_imc[] = {
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/thresh", "config:24-31" },
		{ "events/clockticks", "event=0xff,umask=0x00" },
		{ "events/cas_count_read", "event=0x04,umask=0x03" },
		{ "events/cas_count_write", "event=0x04,umask=0x0c" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	/*
	 * Sapphire Rapids and later: discovery types.  The PCU has no format
	 * group of its own (spr_uncore_pcu), so the generic discovery formats
	 * (uncore_discovery.c generic_uncore_formats_attr); the iMC has
	 * spr_uncore_raw_formats_attr (umask_ext4) and spr_uncore_imc_events'
	 * clockticks.  Granite Rapids' tree is written the same way: the
	 * kernel's GNR table was not read here.
	 */
	static const struct sysfs_file spr_pcu[] = {
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/thresh", "config:24-31" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file spr_imc[] = {
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15,32-55" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/thresh", "config:24-31" },
		{ "events/clockticks", "event=0x01,umask=0x00" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	int n_imc = sim_uncore_gen_find(m->family, m->model) ? m->n_imc : 0;
	bool snbep = m->model == 0x2d, spr = m->model == 0x8f || m->model == 0xad;
	const struct sysfs_file *pcu_files = snbep ? snbep_pcu : spr ? spr_pcu : pcu;
	const struct sysfs_file *imc_files = snbep ? snbep_imc : spr ? spr_imc : imc;
	size_t n_pcu_files = snbep ? sizeof(snbep_pcu) / sizeof(snbep_pcu[0]) :
			     spr ? sizeof(spr_pcu) / sizeof(spr_pcu[0]) : sizeof(pcu) / sizeof(pcu[0]);
	size_t n_imc_files = snbep ? sizeof(snbep_imc) / sizeof(snbep_imc[0]) :
			     spr ? sizeof(spr_imc) / sizeof(spr_imc[0]) : sizeof(imc) / sizeof(imc[0]);

	/*
	 * Ice Lake-SP: skx_uncore_pcu, and icx_uncore_imc with
	 * skx_uncore_format_group; its snr_uncore_imc_events aliases are not
	 * written (their text was not read here): the formats alone.
	 */
	if (m->model == 0x6a)
		n_imc_files = 5;
	char name[64], alias[64], type[16], dir[PATH_MAX];
	int r;

	if (!n_imc)
		return 0;
	for (int k = 0; k < sim_model_n_pcu(m); k++) {
		pcu_names(m, discovery_names, k, name, sizeof(name), alias, sizeof(alias));
		snprintf(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, name);
		snprintf(type, sizeof(type), "%d", k ? SIM_PERF_PCU_TYPE_N + k : SIM_PERF_PCU_TYPE);
		if ((r = put_pmu(root, name, pcu_files, n_pcu_files, err, errlen)) < 0 ||
		    (r = put(dir, "type", type, err, errlen)) < 0 ||
		    (alias[0] && (r = put(dir, "alias", alias, err, errlen)) < 0) ||
		    (r = put_cpumask(m, root, name, true, err, errlen)) < 0)
			return r;
	}
	for (int ch = 0; ch < n_imc; ch++) {
		/* Discovery generations: alias uncore_type_6_<id>, the name without the table. */
		alias[0] = '\0';
		if (spr)
			snprintf(alias, sizeof(alias), "uncore_type_%d_%d", DISCOVERY_IMC_TYPE, ch);
		if (spr && discovery_names) {
			snprintf(name, sizeof(name), "%s", alias);
			alias[0] = '\0';
		} else {
			snprintf(name, sizeof(name), "uncore_imc_%d", ch);
		}
		snprintf(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, name);
		snprintf(type, sizeof(type), "%d", SIM_PERF_IMC_TYPE0 + ch);
		if ((r = put_pmu(root, name, imc_files, n_imc_files, err, errlen)) < 0 ||
		    (r = put(dir, "type", type, err, errlen)) < 0 ||
		    (alias[0] && (r = put(dir, "alias", alias, err, errlen)) < 0) ||
		    (r = put_cpumask(m, root, name, true, err, errlen)) < 0)
			return r;
	}
	return 0;
}

int sim_perf_write_sysfs(const struct sim_model *m, bool discovery_names, const char *root,
			 char *err, size_t errlen)
{
	/* arch/x86/events/intel/core.c PMU_FORMAT_ATTR; uncore_snb.c nhm_uncore (§3.2). */
	static const struct sysfs_file cpu[] = {
		{ "type", "4" },
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/pc", "config:19" },
		{ "format/any", "config:21" }, { "format/inv", "config:23" },
		{ "format/cmask", "config:24-31" },
		{ "events/cpu-cycles", "event=0x3c" }, { "events/instructions", "event=0xc0" },
		{ "events/ref-cycles", "event=0x00,umask=0x03" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	static const struct sysfs_file uncore[] = {
		{ "type", "10" },
		{ "format/event", "config:0-7" }, { "format/umask", "config:8-15" },
		{ "format/edge", "config:18" }, { "format/inv", "config:23" },
		{ "format/cmask", "config:24-31" },
		{ "events/clockticks", "event=0xff,umask=0x00" },
		{ "perf_event_mux_interval_ms", "4" },
	};
	int r;

	if (m->flags & SIM_F_AMD_PMU)
		return write_amd(m, root, err, errlen);
	if ((m->flags & SIM_F_INTEL) &&
	    (r = put_pmu(root, "cpu", cpu, sizeof(cpu) / sizeof(cpu[0]), err, errlen)) < 0)
		return r;
	if ((m->flags & SIM_F_INTEL) && (r = write_boxes(m, discovery_names, root, err, errlen)) < 0)
		return r;
	if (!(m->flags & SIM_F_NHM_UNCORE))
		return 0;
	r = put_pmu(root, "uncore", uncore, sizeof(uncore) / sizeof(uncore[0]), err, errlen);
	if (r < 0)
		return r;
	return put_cpumask(m, root, "uncore", false, err, errlen);
}
