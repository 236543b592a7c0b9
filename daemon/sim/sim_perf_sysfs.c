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

/*
 * cpumask: the first CPU of each package, or of each die for the server
 * boxes (per_die), which are per die (uncore_get_attr_cpumask).
 */
static int put_cpumask(const struct sim_model *m, const char *root, const char *pmu, bool per_die,
		       char *err, size_t errlen)
{
	int n = m->n_sockets * (per_die ? sim_model_n_dies(m) : 1);
	char cpumask[1024] = "", dir[PATH_MAX];
	size_t used = 0;

	for (int u = 0; u < n && used < sizeof(cpumask); u++)
		used += (size_t)snprintf(cpumask + used, sizeof(cpumask) - used, "%s%d", u ? "," : "",
					 per_die ? sim_model_unit_cpu(m, u) :
					 sim_model_cpu_of(m, u, 0, 0));
	snprintf(dir, sizeof(dir), "%s/sys/bus/event_source/devices/%s", root, pmu);
	return put(dir, "cpumask", cpumask, err, errlen);
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
