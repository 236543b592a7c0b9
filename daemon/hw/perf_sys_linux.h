/*
 * The real kernel behind struct perf_sys: syscall(SYS_perf_event_open),
 * read(2), ioctl(2) and close(2).  Only start-up code and tests include
 * this header.
 */
#ifndef UNCORED_PERF_SYS_LINUX_H
#define UNCORED_PERF_SYS_LINUX_H

#include "perf_sys.h"

/*
 * Fill ret_ps with the real system calls, PMU sysfs under root ("/" or
 * NULL for the real machine; a temporary tree in tests).  Opens nothing.
 * 0 or -ENOMEM.
 */
int perf_sys_linux_init(struct perf_sys *ret_ps, const char *root);

#endif
