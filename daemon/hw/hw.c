/*
 * The hardware access handle: thin dispatch from struct hw to its backend's
 * ops, counting MSR reads and writes, and the table that turns a backend's
 * negative errno into a sentence for the operator.  It knows nothing about
 * which backend is behind the ops and does no I/O of its own.
 */
#include <errno.h>
#include <time.h>
#include <stddef.h>

#include <stdlib.h>

#include "err.h"
#include "hw.h"
#include "perf_sys.h"

int hw_read_msr(struct hw *hw, int cpu, uint32_t msr, uint64_t *ret_value)
{
	if (!hw->ops)
		return -EBADF;
	hw->n_reads++;
	return hw->ops->read_msr(hw->ctx, cpu, msr, ret_value);
}

int hw_write_msr(struct hw *hw, int cpu, uint32_t msr, uint64_t value)
{
	if (!hw->ops)
		return -EBADF;
	hw->n_writes++;
	return hw->ops->write_msr(hw->ctx, cpu, msr, value);
}

int hw_cpuid(struct hw *hw, int cpu, uint32_t leaf, uint32_t subleaf, struct hw_cpuid *ret_regs)
{
	if (!hw->ops)
		return -EBADF;
	if (!hw->ops->cpuid)
		return -ENOSYS;
	return hw->ops->cpuid(hw->ctx, cpu, leaf, subleaf, ret_regs);
}

int hw_enumerate(struct hw *hw, struct hw_cpu *cpus, int max, int *ret_n)
{
	if (!hw->ops)
		return -EBADF;
	if (!hw->ops->enumerate)
		return -ENOSYS;
	return hw->ops->enumerate(hw->ctx, cpus, max, ret_n);
}

int64_t hw_now_ns(struct hw *hw)
{
	struct timespec ts;

	if (hw->ops && hw->ops->now_ns)
		return hw->ops->now_ns(hw->ctx);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int hw_cpu_online(struct hw *hw, int cpu)
{
	if (!hw->ops)
		return -EBADF;
	return hw->ops->cpu_online(hw->ctx, cpu);
}

int hw_read_cpu_attr(struct hw *hw, int cpu, const char *relpath, uint64_t *ret_value)
{
	if (!hw->ops)
		return -EBADF;
	return hw->ops->read_cpu_attr(hw->ctx, cpu, relpath, ret_value);
}

int hw_read_hwmon(struct hw *hw, const char *relpath, char *buf, size_t len)
{
	if (!hw->ops)
		return -EBADF;
	if (!hw->ops->read_hwmon || len == 0)
		return -ENOENT;
	return hw->ops->read_hwmon(hw->ctx, relpath, buf, len);
}

int hw_hsmp(struct hw *hw, struct hw_hsmp_msg *msg)
{
	if (!hw->ops)
		return -EBADF;
	if (!hw->ops->hsmp)
		return -ENOENT;
	return hw->ops->hsmp(hw->ctx, msg);
}

int hw_read_online_list(struct hw *hw, char *buf, size_t len)
{
	if (!hw->ops)
		return -EBADF;
	if (!hw->ops->read_online_list || len == 0)
		return -ENOTSUP;
	return hw->ops->read_online_list(hw->ctx, buf, len);
}

static void free_perf(struct hw *hw)
{
	if (!hw->perf)
		return;
	perf_sys_free(hw->perf);
	free(hw->perf);
	hw->perf = NULL;
}

void hw_set_perf(struct hw *hw, struct perf_sys *ps)
{
	free_perf(hw);
	hw->perf = ps;
}

void hw_close(struct hw *hw)
{
	const struct hw_ops *ops = hw->ops;

	/* First: the simulator's perf borrows the machine closed below. */
	free_perf(hw);
	if (!ops)
		return;
	hw->ops = NULL;
	ops->close(hw->ctx);
	hw->ctx = NULL;
}

#define ANY_OP (ERR_OP(HW_OP_OPEN) | ERR_OP(HW_OP_READ) | ERR_OP(HW_OP_WRITE))

/*
 * The errno meanings of the msr driver (hardware.md §6): open needs
 * CAP_SYS_RAWIO, writes are refused under lockdown or msr.allow_writes=off,
 * a #GP on a missing register becomes EIO, an offline CPU gives ENXIO.
 * First matching row wins.
 */
static const char no_rawio[] = "permission denied (run as root or grant CAP_SYS_RAWIO)";
static const char writes_refused[] = "the kernel refuses MSR writes (kernel lockdown or "
				     "msr.allow_writes=off), falling back to read-only collectors";

static const struct err_hint hints[] = {
	{ ENOENT, ERR_OP(HW_OP_OPEN), "the msr driver is not loaded (run 'modprobe msr')" },
	{ EACCES, ERR_OP(HW_OP_OPEN) | ERR_OP(HW_OP_READ), no_rawio },
	{ EPERM, ERR_OP(HW_OP_OPEN) | ERR_OP(HW_OP_READ), no_rawio },
	{ EPERM, ERR_OP(HW_OP_WRITE), writes_refused },
	{ EACCES, ERR_OP(HW_OP_WRITE), writes_refused },
	{ EIO, ERR_OP(HW_OP_OPEN), "this CPU has no MSR support" },
	{ EIO, ERR_OP(HW_OP_READ) | ERR_OP(HW_OP_WRITE), "no such register on this CPU" },
	{ ENXIO, ANY_OP, "the CPU is offline" },
	{ EPIPE, ERR_OP(HW_OP_OPEN), "the msr opener is gone (its end is logged); uncored "
	  "monitors this CPU after a restart" },
	{ ETIMEDOUT, ERR_OP(HW_OP_OPEN), "the msr opener did not answer in time; uncored "
	  "monitors this CPU after a restart" },
};

const char *hw_hint(int err, enum hw_op op)
{
	return ERR_HINT_FIND(hints, err, op);
}
