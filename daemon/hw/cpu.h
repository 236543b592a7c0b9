/*
 * CPU identification, facility table and topology.
 *
 * cpu_detect() reads CPUID through struct hw and decides, by exact vendor
 * and model (never by probing MSRs, see hardware.md §1.2), which facilities
 * the collectors may use.  cpu_topology_load() groups the logical CPUs into
 * sockets and physical cores.
 */
#ifndef UNCORED_CPU_H
#define UNCORED_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw.h"

/* What a model has, chosen by exact family/model (hardware.md §8). */
struct cpu_facilities {
	bool has_nhm_uncore;           /* MSR_UNCORE_* at 0x391/0x3b0/0x3c0 */
	bool has_uncore_thermal_events;/* Westmere events 0x67, 0x80-0x83 */
	bool has_tjmax;                /* MSR_TEMPERATURE_TARGET */
	bool has_package_thermal;      /* IA32_PACKAGE_THERM_STATUS (also needs CPUID.06H:EAX[6]) */
	bool has_rapl_perf_status;     /* MSR_RAPL_POWER_UNIT, MSR_PKG_PERF_STATUS, MSR_DRAM_PERF_STATUS */
	/*
	 * What AMD lacks, stated as absence so that a zeroed cpu_info reads as
	 * Intel: no IA32_THERM_STATUS and no thermal_throttle counts
	 * (hardware-amd.md §2.3); no fixed counters and no CPUID leaf 0xA (§3.1).
	 */
	bool lacks_intel_thermal;
	bool lacks_intel_core_pmu;
	/* AMD EPYC (hardware-amd.md; all 0 on Intel): */
	unsigned amd_zen;              /* Zen generation 2 … 6 */
	unsigned hsmp_proto;           /* HSMP protocol the part speaks; 0: no mainline HSMP driver */
	bool has_hsmp_prochot;         /* HSMP GET_PROC_HOT 0x0B */
	bool has_hsmp_freq_limit;      /* HSMP GET_SOCKET_FREQ_LIMIT 0x19, source bitmap */
	bool has_hsmp_dimm;            /* HSMP per-DIMM messages 0x16-0x18 */
	unsigned n_tccd;               /* k10temp Tccd channels (temp3 …) */
	bool has_ref_cycles;           /* perf maps the generic ref-cycles event */
	unsigned amd_core_counters;    /* GP counters of the core PMU (hardware-amd.md §3.1) */
	unsigned amd_core_counter_bits;
};

/* Architectural performance monitoring as CPUID leaf 0xA describes it, per CPU. */
struct cpu_perfmon {
	unsigned version;              /* EAX[7:0] */
	unsigned n_gp;                 /* EAX[15:8] */
	unsigned gp_width_bits;        /* EAX[23:16] */
	unsigned ebx_length;           /* EAX[31:24] */
	uint32_t unavailable;          /* EBX: bit set = architectural event not available */
	unsigned n_fixed;              /* EDX[4:0] (v2+) */
	unsigned fixed_width_bits;     /* EDX[12:5] (v2+) */
};

struct cpu_info {
	char vendor[13];               /* "GenuineIntel", "AuthenticAMD" */
	unsigned family;               /* display family */
	unsigned model;                /* display model */
	unsigned stepping;
	const char *microarch;         /* "westmere-ep", "skylake-sp", ..., "genoa", "turin" */
	struct cpu_facilities fac;
	struct cpu_perfmon perfmon;    /* of the first online CPU; see cpu_perfmon_read() */
};

/*
 * Identify the CPU of the machine behind hw (CPUID of the first online CPU).
 * Returns 0, or -ENOTSUP for an unsupported vendor or model with a sentence
 * in err naming what was found and what is supported, or another negative
 * errno with its reason in err.
 */
int cpu_detect(struct hw *hw, struct cpu_info *ret_info, char *err, size_t errlen);

/*
 * What the model table says of a CPU known only by its signature (from
 * /proc/cpuinfo, say), without CPUID: the facilities of its generation,
 * package thermal as the generation has it, perfmon left zero (unknown).
 * Returns 0, or -ENOTSUP with the same sentence cpu_detect() gives.
 */
int cpu_info_for_signature(const char *vendor, unsigned family, unsigned model,
			   struct cpu_info *ret_info, char *err, size_t errlen);

/*
 * The same for a model named as cpu_info.microarch names it
 * ("westmere-ep", "skylake-sp", ..., "milan", "genoa", ...).  -ENOENT for an unknown name, with
 * the known names in err.
 */
int cpu_info_for_name(const char *name, struct cpu_info *ret_info, char *err, size_t errlen);

/*
 * The same for the machine as path (/proc/cpuinfo) describes its first
 * processor; needs no privilege.  -errno when the file cannot be read,
 * -EINVAL when it lacks the fields, or what cpu_info_for_signature() says.
 */
int cpu_info_from_cpuinfo(const char *path, struct cpu_info *ret_info, char *err, size_t errlen);

/* Read CPUID leaf 0xA of one CPU (hybrid parts differ per CPU). */
int cpu_perfmon_read(struct hw *hw, int cpu, struct cpu_perfmon *ret_perfmon);

/* One physical core of a socket. */
struct cpu_core {
	int core;                      /* core_id */
	int n_cpus;
	int cpus[8];                   /* logical CPUs of this core, ascending */
};

/*
 * One die of a multi-die package (Linux's topology/die_id): where the kernel
 * keeps package thermal and RAPL state, so package-scope MSRs are read once
 * per die (hardware-linux.md 3.2, 4.1).
 */
struct cpu_die {
	int die;                       /* die_id */
	int n_cpus;
	int *cpus;                     /* the die's logical CPUs, ascending */
};

struct cpu_socket {
	int socket;                    /* physical_package_id */
	int n_cores;
	struct cpu_core *cores;        /* ascending die id, then core id */
	int n_cpus;
	int *cpus;                     /* all logical CPUs of the socket, ascending */
	/*
	 * Ascending die id; at least one once loaded.  0 (a topology built by
	 * hand) reads as one die holding every CPU of the socket.
	 */
	int n_dies;
	struct cpu_die *dies;
};

struct cpu_topology {
	int n_cpus;
	struct hw_cpu *cpus;           /* by index, ascending CPU number */
	int n_sockets;
	struct cpu_socket *sockets;    /* ascending socket id */
};

/*
 * Enumerate CPUs through hw and group them.  CPUs offline at load time are
 * kept in cpus[] (online = false) but belong to no socket or core when their
 * topology is unknown.  Returns 0 or a negative errno with a reason in err.
 */
int cpu_topology_load(struct hw *hw, struct cpu_topology *ret_topo, char *err, size_t errlen);

/* Free what cpu_topology_load() allocated. */
void cpu_topology_free(struct cpu_topology *topo);

/* The entry of logical CPU cpu, or NULL. */
const struct hw_cpu *cpu_topology_find(const struct cpu_topology *topo, int cpu);

/* The socket entry with id socket, or NULL. */
const struct cpu_socket *cpu_topology_socket(const struct cpu_topology *topo, int socket);

/*
 * The lowest-numbered CPU of sock that hw reports online now, or -1.  A
 * collector reads a socket's MSRs through it; asked each time, because
 * CPUs come and go.
 */
int cpu_socket_first_online(struct hw *hw, const struct cpu_socket *sock);

/* The index in sock->dies of the die holding cpu, or 0 when not found or without dies. */
int cpu_socket_die_of(const struct cpu_socket *sock, int cpu);

#endif
