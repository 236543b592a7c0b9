/*
 * A plain register file behind struct hw for unit tests.  See regfile.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "regfile.h"

struct reg {
	bool is_socket;      /* shared by the CPUs of socket id */
	int id;              /* cpu or socket */
	uint32_t msr;
	uint64_t value;
	unsigned writes;
};

struct attr {
	int cpu;
	char relpath[96];
	uint64_t value;
};

struct read_count {
	int cpu;
	uint32_t msr;
	unsigned n;
};

struct cpuid_leaf {
	uint32_t leaf, subleaf;
	struct hw_cpuid regs;
};

struct regfile {
	struct read_count reads[512];
	int n_reads;
	struct cpuid_leaf leaves[32];
	int n_leaves;
	int fail_cpu;
	uint32_t fail_msr;
	int fail_err;
	struct hw_cpu *cpus;
	int n_cpus;
	struct reg *regs;
	int n_regs, cap_regs;
	struct attr attrs[256];
	int n_attrs;
	bool refuse_writes;
};

static const struct hw_cpu *find_cpu(struct regfile *rf, int cpu)
{
	for (int i = 0; i < rf->n_cpus; i++)
		if (rf->cpus[i].cpu == cpu)
			return &rf->cpus[i];
	return NULL;
}

static struct reg *find_reg(struct regfile *rf, int cpu, uint32_t msr)
{
	const struct hw_cpu *c = find_cpu(rf, cpu);

	if (!c)
		return NULL;
	for (int i = 0; i < rf->n_regs; i++) {
		struct reg *r = &rf->regs[i];

		if (r->msr == msr && r->is_socket == false && r->id == cpu)
			return r;
	}
	for (int i = 0; i < rf->n_regs; i++) {
		struct reg *r = &rf->regs[i];

		if (r->msr == msr && r->is_socket && r->id == c->socket)
			return r;
	}
	return NULL;
}

static void define(struct regfile *rf, bool is_socket, int id, uint32_t msr, uint64_t value)
{
	if (rf->n_regs == rf->cap_regs) {
		rf->cap_regs = rf->cap_regs ? 2 * rf->cap_regs : 64;
		rf->regs = realloc(rf->regs, (size_t)rf->cap_regs * sizeof(*rf->regs));
		if (!rf->regs)
			abort();
	}
	rf->regs[rf->n_regs++] = (struct reg){ is_socket, id, msr, value, 0 };
}

struct regfile *regfile_new(const struct hw_cpu *cpus, int n_cpus)
{
	struct regfile *rf = calloc(1, sizeof(*rf));

	if (!rf)
		abort();
	rf->cpus = calloc((size_t)n_cpus, sizeof(*cpus));
	if (!rf->cpus)
		abort();
	memcpy(rf->cpus, cpus, (size_t)n_cpus * sizeof(*cpus));
	rf->n_cpus = n_cpus;
	return rf;
}

void regfile_define_cpu(struct regfile *rf, int cpu, uint32_t msr, uint64_t value)
{
	define(rf, false, cpu, msr, value);
}

void regfile_define_socket(struct regfile *rf, int socket, uint32_t msr, uint64_t value)
{
	define(rf, true, socket, msr, value);
}

void regfile_define_all(struct regfile *rf, uint32_t msr, uint64_t value)
{
	for (int i = 0; i < rf->n_cpus; i++)
		define(rf, false, rf->cpus[i].cpu, msr, value);
}

uint64_t regfile_get(struct regfile *rf, int cpu, uint32_t msr)
{
	struct reg *r = find_reg(rf, cpu, msr);

	if (!r) {
		fprintf(stderr, "regfile: cpu %d msr 0x%x not defined\n", cpu, msr);
		abort();
	}
	return r->value;
}

void regfile_set(struct regfile *rf, int cpu, uint32_t msr, uint64_t value)
{
	struct reg *r = find_reg(rf, cpu, msr);

	if (!r) {
		fprintf(stderr, "regfile: cpu %d msr 0x%x not defined\n", cpu, msr);
		abort();
	}
	r->value = value;
}

void regfile_set_online(struct regfile *rf, int cpu, bool online)
{
	for (int i = 0; i < rf->n_cpus; i++)
		if (rf->cpus[i].cpu == cpu)
			rf->cpus[i].online = online;
}

void regfile_refuse_writes(struct regfile *rf, bool refuse)
{
	rf->refuse_writes = refuse;
}

void regfile_set_attr(struct regfile *rf, int cpu, const char *relpath, uint64_t value)
{
	for (int i = 0; i < rf->n_attrs; i++) {
		if (rf->attrs[i].cpu == cpu && strcmp(rf->attrs[i].relpath, relpath) == 0) {
			rf->attrs[i].value = value;
			return;
		}
	}
	if (rf->n_attrs == (int)(sizeof(rf->attrs) / sizeof(rf->attrs[0])))
		abort();
	rf->attrs[rf->n_attrs].cpu = cpu;
	snprintf(rf->attrs[rf->n_attrs].relpath, sizeof(rf->attrs[0].relpath), "%s", relpath);
	rf->attrs[rf->n_attrs++].value = value;
}

unsigned regfile_writes(struct regfile *rf, int cpu, uint32_t msr)
{
	unsigned n = 0;

	for (int i = 0; i < rf->n_regs; i++) {
		struct reg *r = &rf->regs[i];

		if (r->msr != msr)
			continue;
		if (cpu < 0 || (!r->is_socket && r->id == cpu) ||
		    (r->is_socket && find_cpu(rf, cpu) && find_cpu(rf, cpu)->socket == r->id))
			n += r->writes;
	}
	return n;
}

unsigned regfile_reads(struct regfile *rf, int cpu, uint32_t msr)
{
	unsigned n = 0;

	for (int i = 0; i < rf->n_reads; i++)
		if (rf->reads[i].msr == msr && (cpu < 0 || rf->reads[i].cpu == cpu))
			n += rf->reads[i].n;
	return n;
}

static void count_read(struct regfile *rf, int cpu, uint32_t msr)
{
	for (int i = 0; i < rf->n_reads; i++) {
		if (rf->reads[i].cpu == cpu && rf->reads[i].msr == msr) {
			rf->reads[i].n++;
			return;
		}
	}
	if (rf->n_reads == (int)(sizeof(rf->reads) / sizeof(rf->reads[0])))
		abort();
	rf->reads[rf->n_reads++] = (struct read_count){ cpu, msr, 1 };
}

void regfile_fail_reads(struct regfile *rf, int cpu, uint32_t msr, int err)
{
	rf->fail_cpu = cpu;
	rf->fail_msr = msr;
	rf->fail_err = err;
}

void regfile_set_cpuid(struct regfile *rf, uint32_t leaf, uint32_t subleaf, uint32_t eax,
		       uint32_t ebx, uint32_t ecx, uint32_t edx)
{
	struct cpuid_leaf *l = NULL;

	for (int i = 0; i < rf->n_leaves; i++)
		if (rf->leaves[i].leaf == leaf && rf->leaves[i].subleaf == subleaf)
			l = &rf->leaves[i];
	if (!l) {
		if (rf->n_leaves == (int)(sizeof(rf->leaves) / sizeof(rf->leaves[0])))
			abort();
		l = &rf->leaves[rf->n_leaves++];
	}
	*l = (struct cpuid_leaf){ leaf, subleaf, { eax, ebx, ecx, edx } };
}

static int rf_online_check(struct regfile *rf, int cpu)
{
	const struct hw_cpu *c = find_cpu(rf, cpu);

	if (!c || !c->online)
		return -ENXIO;
	return 0;
}

static int rf_read_msr(void *ctx, int cpu, uint32_t msr, uint64_t *ret_value)
{
	struct regfile *rf = ctx;
	struct reg *r;
	int err = rf_online_check(rf, cpu);

	count_read(rf, cpu, msr);
	if (err)
		return err;
	if (rf->fail_err && rf->fail_cpu == cpu && rf->fail_msr == msr)
		return rf->fail_err;
	r = find_reg(rf, cpu, msr);
	if (!r)
		return -EIO;
	*ret_value = r->value;
	return 0;
}

static int rf_write_msr(void *ctx, int cpu, uint32_t msr, uint64_t value)
{
	struct regfile *rf = ctx;
	struct reg *r;
	int err = rf_online_check(rf, cpu);

	if (err)
		return err;
	if (rf->refuse_writes)
		return -EPERM;
	r = find_reg(rf, cpu, msr);
	if (!r)
		return -EIO;
	r->value = value;
	r->writes++;
	return 0;
}

static int rf_cpuid(void *ctx, int cpu, uint32_t leaf, uint32_t subleaf, struct hw_cpuid *ret)
{
	struct regfile *rf = ctx;

	(void)cpu;
	memset(ret, 0, sizeof(*ret));
	for (int i = 0; i < rf->n_leaves; i++)
		if (rf->leaves[i].leaf == leaf && rf->leaves[i].subleaf == subleaf)
			*ret = rf->leaves[i].regs;
	return 0;
}

static int rf_enumerate(void *ctx, struct hw_cpu *cpus, int max, int *ret_n)
{
	struct regfile *rf = ctx;

	for (int i = 0; i < rf->n_cpus && i < max; i++)
		cpus[i] = rf->cpus[i];
	*ret_n = rf->n_cpus;
	return 0;
}

static int rf_cpu_online(void *ctx, int cpu)
{
	return rf_online_check(ctx, cpu) == 0;
}

static int rf_read_cpu_attr(void *ctx, int cpu, const char *relpath, uint64_t *ret_value)
{
	struct regfile *rf = ctx;

	if (rf_online_check(rf, cpu))
		return -ENOENT;
	for (int i = 0; i < rf->n_attrs; i++) {
		if (rf->attrs[i].cpu == cpu && strcmp(rf->attrs[i].relpath, relpath) == 0) {
			*ret_value = rf->attrs[i].value;
			return 0;
		}
	}
	return -ENOENT;
}

static void rf_close(void *ctx)
{
	struct regfile *rf = ctx;

	free(rf->regs);
	free(rf->cpus);
	free(rf);
}

static const struct hw_ops regfile_ops = {
	.name = "regfile",
	.read_msr = rf_read_msr,
	.write_msr = rf_write_msr,
	.cpuid = rf_cpuid,
	.enumerate = rf_enumerate,
	.cpu_online = rf_cpu_online,
	.read_cpu_attr = rf_read_cpu_attr,
	.close = rf_close,
};

void regfile_bind(struct regfile *rf, struct hw *ret_hw)
{
	memset(ret_hw, 0, sizeof(*ret_hw));
	ret_hw->ops = &regfile_ops;
	ret_hw->ctx = rf;
}
