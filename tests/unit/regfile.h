/*
 * A plain register file behind struct hw, for unit tests of the modules
 * that program and read registers (pmu, collectors).  It has no time and no
 * PMU semantics: a register holds what was last written, reads of a
 * register nobody defined fail with -EIO as the msr driver does.  Tests
 * that need counting hardware use the simulator instead.
 */
#ifndef UNCORED_TEST_REGFILE_H
#define UNCORED_TEST_REGFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "hw.h"

struct regfile;

/* A register file for the given CPUs (copied). */
struct regfile *regfile_new(const struct hw_cpu *cpus, int n_cpus);

/* Bind hw to rf; hw_close(hw) frees rf. */
void regfile_bind(struct regfile *rf, struct hw *ret_hw);

/* Define a register private to one CPU, with its value. */
void regfile_define_cpu(struct regfile *rf, int cpu, uint32_t msr, uint64_t value);

/* Define a register shared by every CPU of a socket (package scope). */
void regfile_define_socket(struct regfile *rf, int socket, uint32_t msr, uint64_t value);

/* Define a per-CPU register on every CPU. */
void regfile_define_all(struct regfile *rf, uint32_t msr, uint64_t value);

/* Current value as the test sees it (no counting); aborts if undefined. */
uint64_t regfile_get(struct regfile *rf, int cpu, uint32_t msr);

/* Set a value as another agent would (the register must be defined). */
void regfile_set(struct regfile *rf, int cpu, uint32_t msr, uint64_t value);

void regfile_set_online(struct regfile *rf, int cpu, bool online);
void regfile_refuse_writes(struct regfile *rf, bool refuse);

/* Set a per-CPU sysfs attribute value for read_cpu_attr. */
void regfile_set_attr(struct regfile *rf, int cpu, const char *relpath, uint64_t value);

/* Number of writes to (cpu, msr) since creation; cpu -1 = any. */
unsigned regfile_writes(struct regfile *rf, int cpu, uint32_t msr);

/*
 * Number of read attempts of msr through cpu since creation, failed ones
 * included; cpu -1 = any.  Counted by the CPU the read went through, so a
 * package register read through two CPUs counts for each.
 */
unsigned regfile_reads(struct regfile *rf, int cpu, uint32_t msr);

/*
 * Make reads of msr through cpu fail with err (a negative errno) until
 * called again with err 0.  One such rule at a time.
 */
void regfile_fail_reads(struct regfile *rf, int cpu, uint32_t msr, int err);

/* What CPUID leaf/subleaf returns on every CPU (leaves never set return zeros). */
void regfile_set_cpuid(struct regfile *rf, uint32_t leaf, uint32_t subleaf, uint32_t eax,
		       uint32_t ebx, uint32_t ecx, uint32_t edx);

#endif
