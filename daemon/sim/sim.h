/*
 * Simulated hardware: an in-process model of a whole machine behind the
 * struct hw interface (SPEC §2).  It models CPUID, topology, online state,
 * the uncore and core PMUs (enable bits, counting only while enabled, wrap
 * at width, OCC_CTR_RST), the kernel's perf as another user of the PMU
 * (boot state, perf events coming and going, global-disable windows),
 * thermal status registers with sticky log bits,
 * TjMax, RAPL throttled-time counters and the kernel's thermal_throttle
 * counts, driven over time by a scenario file.  Registers the model lacks
 * fail with -EIO, as the msr driver does.
 *
 * Time is either real (CLOCK_MONOTONIC since open) or stepped by the
 * caller with sim_advance(), so tests are deterministic.
 */
#ifndef UNCORED_SIM_H
#define UNCORED_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hw.h"
#include "perf_sys.h"

struct sim;

enum sim_clock {
	SIM_CLOCK_REAL,
	SIM_CLOCK_STEPPED,
};

/*
 * Build the machine named by spec, "MODEL" or "MODEL:SCENARIO", in the
 * Linux boot state (see sim_open_boot).  SCENARIO
 * is a name looked up as scenario_dir/NAME.ini, or a path when it
 * contains a '/'.  Without a scenario the machine idles.  Returns NULL
 * with a sentence in err (unknown model: lists the known ones; scenario
 * errors: "FILE:LINE: key: what was expected").
 */
struct sim *sim_open(const char *spec, const char *scenario_dir, enum sim_clock clock,
		     char *err, size_t errlen);

/* The register state a machine starts in. */
enum sim_boot {
	SIM_BOOT_RESET,   /* power-on values: every PMU control register 0 */
	SIM_BOOT_LINUX,   /* as a Linux host leaves them, hardware-linux.md §1.1-§1.3 */
};

/*
 * sim_open() with a choice of boot state.  SIM_BOOT_LINUX starts every
 * Intel model with IA32_PERF_GLOBAL_CTRL = the kernel's intel_ctrl (every
 * GP and fixed enable), the NMI watchdog's cycles counting on fixed
 * counter 1 (0x38D = 0xB0), a stale select perf left on GP counter 0
 * (0x13003C: EN clear, INT set), and on the NHM/WSM uncore 0x391 =
 * 0x1000000FF with every select zero (after perf uncore use, kernel 5.4+),
 * and each server PCU box as the uncore driver's init_box leaves it
 * (BOX_CTL 0x10000, FRZ_EN, on Sandy Bridge-EP; 0 later).
 * sim_open() boots SIM_BOOT_LINUX, the state every real host is in; only
 * tests of the hardware model itself ask for SIM_BOOT_RESET.
 */
struct sim *sim_open_boot(const char *spec, const char *scenario_dir, enum sim_clock clock,
			  enum sim_boot boot, char *err, size_t errlen);

/*
 * The i-th note on the scenario (from 0; NULL past the last): a rule the
 * model accepts but whose condition nothing on it reads, as "FILE:LINE:
 * [SECTION]: why" (DRAM throttling on AMD EPYC, which counts none).  For
 * the caller to say at start.
 */
const char *sim_note(const struct sim *sim, int i);

/* Fill hw with ops bound to sim.  hw_close() on it frees the sim. */
void sim_bind(struct sim *sim, struct hw *ret_hw);

/* Stepped clock only: move simulated time forward. */
void sim_advance(struct sim *sim, double seconds);

/* Simulated seconds since open. */
double sim_now(struct sim *sim);

/* The model names sim_open() knows, NULL-terminated. */
const char *const *sim_model_names(void);

/* The most scenario names sim_scenario_names() returns. */
#define SIM_MAX_SCENARIOS 64

/*
 * The scenarios in dir, the names its *.ini files give (what
 * "MODEL:NAME" looks up), sorted, at most max: the count, 0 when dir
 * cannot be read.  Each name is allocated; the caller frees them.
 */
int sim_scenario_names(const char *dir, char **names, int max);

/*
 * Call fn for every register of every CPU whose value the model stores
 * (control registers, counters, status registers), in a fixed order.  The
 * value is the one a read would return now.  For comparing the whole
 * register file before and after a run.
 */
void sim_dump(struct sim *sim, void (*fn)(void *arg, int cpu, uint32_t msr, uint64_t value),
	      void *arg);

/*
 * Ground truth: how many times the simulated hardware event (pmu "uncore"
 * per socket, "core" per cpu; code/umask/edge as programmed) occurred
 * since open, whether or not a counter counted it.  For fault tests.
 * On AMD models a core code is the 12-bit event select (ref-cycles 0x120).
 * The uncore clock (the fixed counter 0x394) is code SIM_UNCORE_CLOCK_CODE,
 * umask 0, the pseudo code the kernel and libpfm4 give it (hardware.md §1.7).
 * Returns 0 or -ENOENT when the model does not generate that event.
 */
#define SIM_UNCORE_CLOCK_CODE 0xff
int sim_ground_truth(struct sim *sim, bool uncore, int socket_or_cpu, uint16_t code,
		     uint8_t umask, bool edge, uint64_t *ret_count);

/*
 * Ground truth of the server uncore boxes (PCU, iMC; models with them):
 * how many times event config (perf attr.config, event | umask << 8;
 * 0xff the iMC fixed counter) of the PCU of die die of socket (imc false,
 * channel 0; where a die has several PCUs, the one that counts the
 * package's conditions, sim_box.h) or of its memory channel channel (imc
 * true) occurred since
 * open.  die is 0 on single-die packages.  0, or -ENOENT when the model
 * has no such box or event.
 */
int sim_box_ground_truth(struct sim *sim, bool imc, int socket, int die, int channel,
			 uint64_t config, uint64_t *ret_count);

/* The constant clock of the PCU (imc false, pclk) or of a memory channel (dclk), in Hz. */
int64_t sim_box_clock_hz(bool imc);

/* Poke a register as another agent would (tests: conflicts). */
int sim_poke(struct sim *sim, int cpu, uint32_t msr, uint64_t value);

/* Take a CPU offline or back online (tests: hot-plug). */
int sim_set_online(struct sim *sim, int cpu, bool online);

/*
 * Tests only (fault injection): make every read of msr on cpu fail with
 * err (a negative errno, -EIO as the msr driver reports a #GP) until called
 * again with err 0.  One register at a time; the register keeps counting.
 */
void sim_fail_reads(struct sim *sim, int cpu, uint32_t msr, int err);

/*
 * Tests only (fault injection): make every read(2) of a server box's perf
 * event (PCU, iMC) fail with err until called again with err 0; the
 * events keep counting.
 */
void sim_fail_box_reads(struct sim *sim, int err);

/*
 * The simulated kernel's perf_event_open(2) (sim_perf.h) behind struct
 * perf_sys, with sysfs paths under root (where sim_write_sysfs() put the
 * PMU tree).  Counts come from the simulated counters, which perf shares
 * with the msr driver, the NMI watchdog and the scenario's perf users as
 * on a real host.  ret_ps borrows sim: free it (perf_sys_free) before
 * closing the machine.  0 or -ENOMEM.
 */
int sim_perf_sys(struct sim *sim, const char *root, struct perf_sys *ret_ps);

/*
 * Write the PMU tree the kernel would show for sim's model under
 * root/sys/bus/event_source/devices ("cpu" on Intel models; "uncore" with
 * its cpumask on Nehalem/Westmere; the PCU and "uncore_imc_N" with one CPU
 * per die in their cpumasks on the server models, the PCU named by the
 * kernel's rule: "uncore_pcu", "uncore_pcu_N" where a die has several, or
 * "uncore_type_4[_N]" under the scenario's uncore_pmu_names =
 * discovery, which names the channels "uncore_type_6_N" too), and
 * root/proc/sys/kernel/perf_event_paranoid with the scenario's level (its
 * perf_event_open refuses every open without CAP_SYS_ADMIN above 2, as
 * Debian's kernel does), which the scenario's proc_subset = pid hides as
 * a procfs mounted with subset=pid does.  The caller owns and removes root.
 * 0, or -errno with err naming the file.
 */
int sim_write_sysfs(struct sim *sim, const char *root, char *err, size_t errlen);

/*
 * Give hw (bound to sim with sim_bind) the simulated kernel's perf, as
 * start-up gives a real machine perf_sys_linux: the PMU tree of
 * sim_write_sysfs in a new directory under $TMPDIR (or /tmp), removed
 * when sim is closed, and sim_perf_sys over it as hw->perf.  0, or
 * -errno with err saying what failed.
 */
int sim_attach_perf(struct sim *sim, struct hw *hw, char *err, size_t errlen);

/*
 * Hand sim_attach_perf's PMU tree to uid:gid, so that a process that drops
 * root to that user can still remove it at close.  0 or -errno.
 */
int sim_perf_tree_chown(struct sim *sim, uid_t uid, gid_t gid);

/* Perf events still open on sim (tests: every fd closed). */
size_t sim_perf_open_events(struct sim *sim);

/* Make every MSR write fail with -EPERM, as kernel lockdown does. */
void sim_refuse_writes(struct sim *sim, bool refuse);

#endif
