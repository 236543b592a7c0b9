/*
 * The hardware access interface.
 *
 * Every MSR, CPUID and per-CPU sysfs access in uncored goes through a
 * struct hw.  Two backends implement it: hw_dev.c (the Linux msr and
 * cpuid drivers and sysfs under a root prefix) and sim.c (an in-process
 * simulated machine).  Only main.c and tests choose a backend; no other
 * module knows which one it talks to.
 *
 * Errors are negative errno values, with the meanings the Linux drivers
 * give them:
 *   -EIO     the CPU has no such MSR (the driver caught the #GP)
 *   -ENXIO   the CPU is offline, or has no open device file
 *   -ENOENT  the device file or sysfs attribute does not exist
 *            (for an MSR device: the msr module is not loaded)
 *   -EACCES / -EPERM  not allowed; on a write, the kernel refuses MSR writes
 *            (lockdown or msr.allow_writes=off)
 * hw_hint() turns these into a sentence for the operator.
 */
#ifndef UNCORED_HW_H
#define UNCORED_HW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One logical CPU as the kernel enumerates it. */
struct hw_cpu {
	int cpu;       /* logical CPU number (the N of /dev/cpu/N) */
	int socket;    /* physical_package_id */
	int die;       /* die_id, 0 where the kernel has none */
	int core;      /* core_id: physical core id, unique within a socket */
	int thread;    /* 0 for the first sibling of a core, 1 for the next... */
	bool online;
};

/* The four registers CPUID returns for one leaf/subleaf. */
struct hw_cpuid {
	uint32_t eax, ebx, ecx, edx;
};

/*
 * One HSMP message (hardware-amd.md §1.1: struct hsmp_message of the
 * kernel's uapi): sent as is, answered in args[0 .. response_sz).
 */
struct hw_hsmp_msg {
	uint32_t msg_id;
	uint16_t num_args;
	uint16_t response_sz;
	uint32_t args[8];
	uint16_t sock_ind;
};

/* What an operation was, for hw_hint(). */
enum hw_op {
	HW_OP_OPEN,
	HW_OP_READ,
	HW_OP_WRITE,
};

/*
 * A backend.  Every function takes the backend's own context pointer.
 * All return 0 or a negative errno as described above.
 */
struct hw_ops {
	const char *name;   /* "dev" or "sim", for logs only */

	int (*read_msr)(void *ctx, int cpu, uint32_t msr, uint64_t *ret_value);
	int (*write_msr)(void *ctx, int cpu, uint32_t msr, uint64_t value);
	int (*cpuid)(void *ctx, int cpu, uint32_t leaf, uint32_t subleaf,
		     struct hw_cpuid *ret_regs);

	/*
	 * Enumerate the CPUs the backend knows, in ascending CPU number.
	 * Fills at most max entries of cpus and sets *ret_n to the number of
	 * CPUs (which may be larger than max).  Topology of an offline CPU is
	 * whatever was last known; online reflects the state now.
	 */
	int (*enumerate)(void *ctx, struct hw_cpu *cpus, int max, int *ret_n);

	/* Current online state of one CPU: 1 online, 0 offline, or -errno. */
	int (*cpu_online)(void *ctx, int cpu);

	/*
	 * Read an unsigned decimal number from a per-CPU sysfs attribute,
	 * path relative to /sys/devices/system/cpu/cpuN/, for example
	 * "thermal_throttle/core_throttle_count".  -ENOENT when absent.
	 */
	int (*read_cpu_attr)(void *ctx, int cpu, const char *relpath, uint64_t *ret_value);

	/*
	 * The kernel's list of online CPUs, /sys/devices/system/cpu/online
	 * ("0-3,6"), into buf (len bytes, terminated): one read for every
	 * CPU's state.  0, or a negative errno (-ENOENT where the file is
	 * absent).  NULL: the backend has none; ask each CPU (cpu_online).
	 */
	int (*read_online_list)(void *ctx, char *buf, size_t len);

	/* Release everything the backend holds, including ctx itself. */
	void (*close)(void *ctx);

	/*
	 * The machine's monotonic clock in nanoseconds (the simulator's own
	 * time); NULL: CLOCK_MONOTONIC.  For wall time over an interval.
	 */
	int64_t (*now_ns)(void *ctx);
	/*
	 * Read a hwmon attribute, path relative to /sys/class/hwmon/
	 * ("hwmon0/name", "hwmon2/temp1_input"), into buf as text (at most
	 * len - 1 bytes, NUL-terminated, the kernel's newline kept).  -ENOENT
	 * when absent.  NULL: the backend has no hwmon devices.
	 */
	int (*read_hwmon)(void *ctx, const char *relpath, char *buf, size_t len);
	/*
	 * Send one HSMP message through /dev/hsmp, read-only (GET messages
	 * only), as the amd_hsmp driver answers it: 0, or the driver's
	 * negative errno (-ENOMSG unsupported, -EINVAL bad sizes, -ENODEV no
	 * such socket, -ETIMEDOUT, ...; hardware-amd.md §1.1-1.2).  -ENOENT
	 * when there is no /dev/hsmp; -EOPNOTSUPP where the backend cannot
	 * carry an ioctl (a device-file tree).  NULL: -ENOENT.
	 */
	int (*hsmp)(void *ctx, struct hw_hsmp_msg *msg);
};

struct perf_sys;

struct hw {
	const struct hw_ops *ops;
	void *ctx;
	uint64_t n_reads;   /* MSR reads issued through this handle */
	uint64_t n_writes;  /* MSR writes issued through this handle */
	/*
	 * The same machine's kernel perf_event interface (perf_sys.h), set by
	 * start-up next to the backend: the real system calls beside the
	 * device files, the simulator's kernel beside a simulated machine.
	 * Owned by hw (hw_close frees it first).  NULL when there is none:
	 * every collector then counts through the msr engine.
	 */
	struct perf_sys *perf;
};

/* The machine's monotonic clock (hw_ops.now_ns), in nanoseconds. */
int64_t hw_now_ns(struct hw *hw);

/* Read one MSR on one CPU.  Counts the read in hw->n_reads. */
int hw_read_msr(struct hw *hw, int cpu, uint32_t msr, uint64_t *ret_value);

/* Write one MSR on one CPU.  Counts the write in hw->n_writes. */
int hw_write_msr(struct hw *hw, int cpu, uint32_t msr, uint64_t value);

/* Execute CPUID leaf/subleaf on one CPU. */
int hw_cpuid(struct hw *hw, int cpu, uint32_t leaf, uint32_t subleaf, struct hw_cpuid *ret_regs);

/* See hw_ops.enumerate. */
int hw_enumerate(struct hw *hw, struct hw_cpu *cpus, int max, int *ret_n);

/* 1 if the CPU is online now, 0 if offline, or a negative errno. */
int hw_cpu_online(struct hw *hw, int cpu);

/* See hw_ops.read_cpu_attr. */
int hw_read_cpu_attr(struct hw *hw, int cpu, const char *relpath, uint64_t *ret_value);

/* See hw_ops.hsmp; -ENOENT from a backend without it. */
int hw_hsmp(struct hw *hw, struct hw_hsmp_msg *msg);

/* See hw_ops.read_hwmon; -ENOENT from a backend without hwmon devices. */
int hw_read_hwmon(struct hw *hw, const char *relpath, char *buf, size_t len);

/* See hw_ops.read_online_list; -ENOTSUP when the backend has none. */
int hw_read_online_list(struct hw *hw, char *buf, size_t len);

/* Close the backend; the struct hw itself is the caller's. Safe on a closed hw. */
void hw_close(struct hw *hw);

/*
 * Hand ps (malloc'ed, filled by perf_sys_linux_init or sim_perf_sys) to hw
 * as hw->perf; a perf interface set before is freed.  hw owns it from now.
 */
void hw_set_perf(struct hw *hw, struct perf_sys *ps);

/*
 * The operator's sentence for error err (negative errno) from operation op,
 * e.g. "the msr driver is not loaded (run 'modprobe msr')".  Never NULL;
 * points to static storage.
 */
const char *hw_hint(int err, enum hw_op op);

#endif
