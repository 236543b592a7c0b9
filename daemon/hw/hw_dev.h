/*
 * The device-file backend: /dev/cpu/N/msr and /dev/cpu/N/cpuid of the Linux
 * msr and cpuid drivers, and CPU topology and online state from
 * /sys/devices/system/cpu, all under a root prefix so tests can point it
 * at a tree of sparse regular files.
 *
 * A regular file standing in for a device holds one slot per address
 * (offset = MSR address × 8, CPUID leaf | subleaf << 32 × 16), because in
 * a file the driver's byte offsets would make neighbouring registers share
 * bytes; the character devices are read at the driver's offsets.  And as
 * the driver answers -ENXIO on a CPU that is offline, so does a stand-in
 * while its CPU's online attribute reads 0.
 */
#ifndef UNCORED_HW_DEV_H
#define UNCORED_HW_DEV_H

#include <stddef.h>

#include "hw.h"

/*
 * Open the backend under root ("/" for the real machine): enumerate CPUs
 * from sysfs and open every online CPU's msr (read-write) and cpuid
 * (read-only) device once; the fds are kept until hw_close(), so they keep
 * working after privileges are dropped (and after the CPU goes offline and
 * comes back, as the driver's do).  Returns 0 and fills ret_hw, or a
 * negative errno with a sentence in err naming the path and the remedy
 * (-ENOENT: msr driver not loaded; -EACCES/-EPERM: needs root or
 * CAP_SYS_RAWIO; -EINVAL: unreadable topology).
 */
int hwdev_open(const char *root, struct hw *ret_hw, char *err, size_t errlen);

/*
 * A CPU offline at open has no device fds.  The first access to it once
 * it is online opens them (so it is monitored from then on); a process
 * that has dropped the privilege to open them sets an opener that asks a
 * process that kept it (hwopen.h).  The opener fills both fds, or returns
 * a negative errno (-ENXIO: the CPU is offline again).  NULL opens them
 * directly.  Ignored for a struct hw of another backend.
 */
typedef int (*hwdev_opener)(void *arg, int cpu, int *ret_msr_fd, int *ret_cpuid_fd);
void hwdev_set_opener(struct hw *hw, hwdev_opener opener, void *arg);

/*
 * Open cpu's msr device read-write and its cpuid device read-only under
 * root (as for hwdev_open, "" or "/" for the machine), close-on-exec.
 * Returns 0 with both fds, or a negative errno and no fd.  What an opener
 * runs with the privilege.
 */
int hwdev_open_cpu(const char *root, int cpu, int *ret_msr_fd, int *ret_cpuid_fd);

#endif
