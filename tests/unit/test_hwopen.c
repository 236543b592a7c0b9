/*
 * Unit tests of the msr opener (hwopen.h) against a tree of regular files:
 * it answers a CPU number with that CPU's msr and cpuid descriptors, an
 * error for a CPU without devices or a negative number, serves the device
 * backend as its opener, and exits when its socket is closed.  As root it
 * also keeps CAP_SYS_RAWIO alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "helpers.h"
#include "hw_dev.h"
#include "hwopen.h"
#include "msr.h"

static char root[256];

static int setup(void **state)
{
	(void)state;
	helpers_mkdtemp(root, sizeof(root));
	helpers_fake_cpu(root, 0, 0, 0, true);
	helpers_fake_cpu(root, 1, 0, 1, false);
	helpers_fake_msr_write(root, 1, IA32_THERM_STATUS, 0x88420000);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	helpers_rmtree(root);
	return 0;
}

static void answers_with_the_cpus_devices(void **state)
{
	struct hwopen *o;
	char err[256];
	int msr_fd, cpuid_fd, flags;
	uint64_t v;

	(void)state;
	assert_int_equal(hwopen_start(root, &o, err, sizeof(err)), 0);
	assert_true(hwopen_pid(o) > 0);
	assert_int_equal(hwopen_open(o, 1, &msr_fd, &cpuid_fd), 0);
	assert_true(msr_fd >= 0 && cpuid_fd >= 0);
	assert_int_equal(pread(msr_fd, &v, sizeof(v), (off_t)IA32_THERM_STATUS * 8), sizeof(v));
	assert_int_equal(v, 0x88420000);
	flags = fcntl(msr_fd, F_GETFL);
	assert_int_equal(flags & O_ACCMODE, O_RDWR);
	assert_int_equal(fcntl(cpuid_fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	assert_true(fcntl(msr_fd, F_GETFD) & FD_CLOEXEC);
	close(msr_fd);
	close(cpuid_fd);
	/* No such CPU, and a negative number: an error, no fd, and it keeps serving. */
	assert_int_equal(hwopen_open(o, 7, &msr_fd, &cpuid_fd), -ENOENT);
	assert_int_equal(msr_fd, -1);
	assert_int_equal(hwopen_open(o, -1, &msr_fd, &cpuid_fd), -EINVAL);
	assert_int_equal(hwopen_open(o, 0, &msr_fd, &cpuid_fd), 0);
	close(msr_fd);
	close(cpuid_fd);
	hwopen_stop(o);
}

/* The device backend reaches a CPU that came online through it. */
static void serves_the_device_backend(void **state)
{
	struct hwopen *o;
	struct hw hw = { 0 };
	char err[256];
	uint64_t v;

	(void)state;
	assert_int_equal(hwdev_open(root, &hw, err, sizeof(err)), 0);
	assert_int_equal(hwopen_start(root, &o, err, sizeof(err)), 0);
	hwdev_set_opener(&hw, hwopen_open, o);
	assert_int_equal(hw_read_msr(&hw, 1, IA32_THERM_STATUS, &v), -ENXIO);
	helpers_fake_cpu(root, 1, 0, 1, true);
	assert_int_equal(hw_read_msr(&hw, 1, IA32_THERM_STATUS, &v), 0);
	assert_int_equal(v, 0x88420000);
	hwdev_set_opener(&hw, NULL, NULL);
	hwopen_stop(o);
	hw_close(&hw);
}

/* Gone (here killed), it answers nothing: -EPIPE, not a hang or SIGPIPE. */
static void a_dead_opener_is_epipe(void **state)
{
	struct hwopen *o;
	char err[256];
	int msr_fd, cpuid_fd, status;

	(void)state;
	assert_int_equal(hwopen_start(root, &o, err, sizeof(err)), 0);
	assert_int_equal(kill(hwopen_pid(o), SIGKILL), 0);
	assert_int_equal(waitpid(hwopen_pid(o), &status, 0), hwopen_pid(o));
	assert_int_equal(hwopen_open(o, 0, &msr_fd, &cpuid_fd), -EPIPE);
	assert_int_equal(msr_fd, -1);
	hwopen_stop(o);   /* already reaped: closes its end, waits for nothing */
}

/* As root: CAP_SYS_RAWIO (bit 17) alone, in effective, permitted and bounding sets. */
static void keeps_cap_sys_rawio_alone(void **state)
{
	struct hwopen *o;
	char err[256], path[64], line[256];
	int found = 0, msr_fd, cpuid_fd;
	FILE *f;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(hwopen_start(root, &o, err, sizeof(err)), 0);
	/* One round trip: the opener has dropped what it drops before it answers. */
	assert_int_equal(hwopen_open(o, 0, &msr_fd, &cpuid_fd), 0);
	close(msr_fd);
	close(cpuid_fd);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)hwopen_pid(o));
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "CapEff:", 7) || !strncmp(line, "CapPrm:", 7) ||
		    !strncmp(line, "CapBnd:", 7)) {
			assert_non_null(strstr(line, "0000000000020000"));
			found++;
		} else if (!strncmp(line, "CapInh:", 7) || !strncmp(line, "CapAmb:", 7)) {
			assert_non_null(strstr(line, "0000000000000000"));
		} else if (!strncmp(line, "NoNewPrivs:", 11)) {
			assert_non_null(strstr(line, "1"));
			found++;
		}
	}
	fclose(f);
	assert_int_equal(found, 4);
	hwopen_stop(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(answers_with_the_cpus_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(serves_the_device_backend, setup, teardown),
		cmocka_unit_test_setup_teardown(a_dead_opener_is_epipe, setup, teardown),
		cmocka_unit_test_setup_teardown(keeps_cap_sys_rawio_alone, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
