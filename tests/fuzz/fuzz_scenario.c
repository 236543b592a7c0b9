/*
 * libFuzzer target for simulator scenario files: every input is written
 * to an anonymous memory file and opened with sim_open() on the
 * westmere-ep-2s model, so the ini parser, the checks against the model
 * and the timeline building all run.  A scenario that opens is then
 * stepped through a few instants and its register file read out, which
 * exercises the timeline queries.  Only crashes, leaks and undefined
 * behaviour count.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hw.h"
#include "sim.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void ignore_register(void *arg, int cpu, uint32_t msr, uint64_t value)
{
	(void)arg;
	(void)cpu;
	(void)msr;
	(void)value;
}

/* Write all of data to fd; false when that fails. */
static int write_all(int fd, const uint8_t *data, size_t size)
{
	while (size > 0) {
		ssize_t n = write(fd, data, size);

		if (n <= 0)
			return 0;
		data += n;
		size -= (size_t)n;
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const double steps_s[] = { 0.5, 1.0, 59.5, 3600.0 };
	char spec[64], err[1024];
	struct sim *sim;
	struct hw hw;
	int fd = memfd_create("fuzz-scenario", MFD_CLOEXEC);

	if (fd < 0)
		return 0;
	if (!write_all(fd, data, size)) {
		close(fd);
		return 0;
	}
	/* A path with a '/' is taken as a file, not a scenario name. */
	snprintf(spec, sizeof(spec), "westmere-ep-2s:/proc/self/fd/%d", fd);
	sim = sim_open(spec, "/nonexistent", SIM_CLOCK_STEPPED, err, sizeof(err));
	close(fd);
	if (!sim)
		return 0;
	for (size_t i = 0; i < sizeof(steps_s) / sizeof(steps_s[0]); i++) {
		sim_advance(sim, steps_s[i]);
		sim_dump(sim, ignore_register, NULL);
	}
	sim_bind(sim, &hw);
	hw_close(&hw);
	return 0;
}
