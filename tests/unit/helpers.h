/*
 * Shared helpers for the unit tests.
 */
#ifndef UNCORED_TEST_HELPERS_H
#define UNCORED_TEST_HELPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct CMUnitTest;
struct snapshot;
struct snapshot_collector;

/* The status entry of collector name in s; fails the test when it is not listed. */
struct snapshot_collector *helpers_collector(struct snapshot *s, const char *name);
#define COLLECTOR(s, name) helpers_collector((s), (name))

/* Make a fresh temporary directory; the path is written to buf. */
void helpers_mkdtemp(char *buf, size_t len);

/* Remove a directory tree made by helpers_mkdtemp. */
void helpers_rmtree(const char *path);

/* Write text to path, creating parent directories. */
void helpers_write_file(const char *path, const char *text);

/*
 * Sharding for the long simulator tests, which meson runs as several
 * processes side by side: $UNCORED_TEST_SHARD is "I/N" (0 <= I < N), and
 * shard I takes every item whose index is I modulo N.  Without it, one
 * process takes every item.
 */
bool helpers_shard_mine(size_t index);

/* Keep the tests of this shard at the front of tests; returns how many. */
size_t helpers_shard_tests(struct CMUnitTest *tests, size_t n);

/* Path of a file in the source tree ($UNCORED_SOURCE_ROOT/rel). */
const char *helpers_source_path(const char *rel, char *buf, size_t len);

/*
 * promtool check metrics on len bytes of text where promtool is installed
 * (else nothing); fails the test naming what (a model) and the file kept.
 */
void helpers_promtool_clean(const char *text, size_t len, const char *what);

/*
 * Fake device/sysfs trees for the hw_dev backend under root: one CPU with
 * sparse regular files as <root>/dev/cpu/N/{msr,cpuid} (every 32-bit MSR
 * offset reads 0 until written) and, when online, the sysfs topology files
 * physical_package_id, die_id (0) and core_id.  cpu0 gets no online file
 * (like the kernel's); other CPUs get "1" or "0".
 *
 * Regular files hold one slot per address (offset = MSR × 8, CPUID
 * (leaf | subleaf << 32) × 16), as hw_dev.h describes, so neighbouring
 * registers such as 0x3c0 and 0x3c1 keep their own values.
 */
void helpers_fake_cpu(const char *root, int cpu, int socket, int core, bool online);

/* Write / read the 8-byte slot of msr in <root>/dev/cpu/N/msr. */
void helpers_fake_msr_write(const char *root, int cpu, uint32_t msr, uint64_t value);
uint64_t helpers_fake_msr_read(const char *root, int cpu, uint32_t msr);

/* Store the CPUID answer for leaf/subleaf in its slot of <root>/dev/cpu/N/cpuid. */
void helpers_fake_cpuid(const char *root, int cpu, uint32_t leaf, uint32_t subleaf,
			uint32_t eax, uint32_t ebx, uint32_t ecx, uint32_t edx);

/* Write text to <root>/sys/devices/system/cpu/cpuN/<rel>. */
void helpers_fake_cpu_attr(const char *root, int cpu, const char *rel, const char *text);

#endif
