/*
 * HSMP on the simulated AMD machines: the driver's and the firmware's
 * answers per protocol (hardware-amd.md §1, §7), and the hsmp collector's
 * sampled PROCHOT seconds against the scenario's truth.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "collector.h"
#include "conf.h"
#include "cpu.h"
#include "helpers.h"
#include "metric.h"
#include "sim.h"

struct machine {
	struct sim *sim;
	struct hw hw;
	struct cpu_info info;
	struct cpu_topology topo;
};

static void boot(struct machine *m, const char *spec)
{
	char dir[4096], err[1024];

	helpers_source_path("conf/scenarios", dir, sizeof(dir));
	m->sim = sim_open(spec, dir, SIM_CLOCK_STEPPED, err, sizeof(err));
	if (!m->sim)
		fail_msg("sim_open(%s): %s", spec, err);
	sim_bind(m->sim, &m->hw);
	assert_int_equal(cpu_detect(&m->hw, &m->info, err, sizeof(err)), 0);
	assert_int_equal(cpu_topology_load(&m->hw, &m->topo, err, sizeof(err)), 0);
}

static void shutdown_machine(struct machine *m)
{
	cpu_topology_free(&m->topo);
	hw_close(&m->hw);
}

/*
 * Boot model with a scenario of text (written under a temporary directory,
 * its path in dir), start the hsmp collector on it, and sample it n + 1
 * times step_s apart; the last snapshot, which the caller releases.
 */
static struct snapshot *run_hsmp(struct machine *m, struct collector *c, const char *model,
				 const char *text, int n, double step_s, char *dir, size_t len)
{
	char path[4300], spec[4400];
	struct conf_errors errs = { 0 };
	struct snapshot *s = NULL;
	static struct conf conf;

	helpers_mkdtemp(dir, len);
	snprintf(path, sizeof(path), "%s/s.ini", dir);
	helpers_write_file(path, text);
	snprintf(spec, sizeof(spec), "%s:%s", model, path);
	boot(m, spec);
	assert_int_equal(conf_load_string("t.conf", "", &conf, &errs), 0);
	assert_int_equal(collector_start(c, collector_find("hsmp"), &m->hw, &m->info, &m->topo, &conf), 0);
	for (int i = 0; i <= n; i++) {
		if (s)
			snapshot_release(s);
		s = snapshot_new(&m->topo, &m->info);
		assert_non_null(s);
		collector_sample(c, s);
		sim_advance(m->sim, step_s);
	}
	return s;
}

/* Send id with the given sizes and argument to socket; the errno, reply in *ret. */
static int send(struct machine *m, uint32_t id, int n_args, int n_resp, uint32_t arg, int socket,
		uint32_t *ret)
{
	struct hw_hsmp_msg msg = { .msg_id = id, .num_args = (uint16_t)n_args,
				   .response_sz = (uint16_t)n_resp, .sock_ind = (uint16_t)socket };
	int r;

	msg.args[0] = arg;
	r = hw_hsmp(&m->hw, &msg);
	*ret = msg.args[0];
	return r;
}

/* The driver's checks, then the firmware's table, per protocol. */
static void driver_and_firmware_answers(void **state)
{
	static const struct {
		const char *model;
		unsigned proto;
		int freq_limit, temp_monitor;   /* errno of 0x19 and 0x15 */
	} cases[] = {
		{ "milan-2s", 2, -ENOMSG, -ENOMSG },
		{ "genoa-2s", 5, 0, -ENOMSG },
		{ "turin-2s", 7, 0, -ENOMSG },
	};
	struct machine m;
	uint32_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		print_message("%s\n", cases[i].model);
		boot(&m, cases[i].model);
		assert_int_equal(send(&m, 0x03, 0, 1, 0, 1, &v), 0);
		assert_int_equal(v, cases[i].proto);
		assert_int_equal(send(&m, 0x01, 1, 1, 0xDEADBEEF, 0, &v), 0);
		assert_int_equal(v, 0xDEADBEF0u);
		assert_int_equal(send(&m, 0x19, 0, 1, 0, 0, &v), cases[i].freq_limit);
		assert_int_equal(send(&m, 0x15, 0, 1, 0, 0, &v), cases[i].temp_monitor);
		/* the kernel's own checks: its id range, exact sizes, the socket */
		assert_int_equal(send(&m, 0x00, 0, 1, 0, 0, &v), -ENOMSG);
		assert_int_equal(send(&m, 0x30, 0, 1, 0, 0, &v), -ENOMSG);
		assert_int_equal(send(&m, 0x0B, 1, 1, 0, 0, &v), -EINVAL);
		assert_int_equal(send(&m, 0x0B, 0, 2, 0, 0, &v), -EINVAL);
		assert_int_equal(send(&m, 0x0B, 0, 1, 0, 2, &v), -ENODEV);
		shutdown_machine(&m);
	}
	/* Zen 2: no mainline driver, no /dev/hsmp. */
	boot(&m, "rome-2s");
	assert_int_equal(send(&m, 0x03, 0, 1, 0, 0, &v), -ENOENT);
	shutdown_machine(&m);
}

/*
 * PROCHOT on socket 1 for 3 s of every 10 s: sampled every 0.1 s for
 * 30 s, socket 1's seconds are within one resolution per episode of the
 * truth (9 s), socket 0's are 0, and the resolution is exported.
 */
static void prochot_seconds_within_one_resolution_per_episode(void **state)
{
	const struct metric_family *prochot, *resolution;
	const struct metric_sample *v0, *v1, *res;
	struct snapshot *s;
	struct collector c;
	struct machine m;
	char dir[4096];

	(void)state;
	s = run_hsmp(&m, &c, "genoa-2s", "[scenario]\nperiod = 10\n\n[prochot.1]\nsocket = 1\n"
		     "start = 2\nend = 5\n", 300, 0.1, dir, sizeof(dir));
	assert_true(c.up);
	prochot = metric_family_find("hsmp", "uncored_prochot_seconds_total");
	resolution = metric_family_find("hsmp", "uncored_sample_resolution_seconds");
	assert_non_null(prochot);
	assert_non_null(resolution);
	v0 = snapshot_find_sample(s, prochot, 0, "any");
	v1 = snapshot_find_sample(s, prochot, 1, "any");
	res = snapshot_find_sample(s, resolution, 0, "hsmp");
	assert_non_null(v0);
	assert_non_null(v1);
	assert_non_null(res);
	print_message("socket 1: %.3f s, resolution %.3f s\n", v1->value.d, res->value.d);
	assert_true(v0->value.d == 0);
	assert_true(res->value.d > 0.099 && res->value.d < 0.101);
	assert_true(v1->value.d >= 9.0 - 3 * res->value.d && v1->value.d <= 9.0 + 3 * res->value.d);
	snapshot_release(s);
	collector_stop(&c);
	helpers_rmtree(dir);
	shutdown_machine(&m);
}

/*
 * A DIMM at 90 C is exported at 90 C with refresh 2, the others at the
 * idle 40 C with refresh 1; frequency-limit reasons accrue by their bits,
 * and opn_max (bit 4) accrues nothing.
 */
static void dimm_heat_and_limit_reasons(void **state)
{
	const struct metric_family *temp, *refresh, *extended, *limited;
	const struct metric_sample *v;
	struct snapshot *s;
	struct collector c;
	struct machine m;
	char dir[4096];

	(void)state;
	s = run_hsmp(&m, &c, "turin-2s", "[dimm-temperature.1]\nsocket = 1\nchannel = 3\nslot = 0\n"
		     "celsius = 90\n[frequency-limit.1]\nsocket = 0\nreason = power\n"
		     "[frequency-limit.2]\nsocket = 0\nreason = opn_max\n", 10, 1.0, dir, sizeof(dir));
	temp = metric_family_find("hsmp", "uncored_dimm_temperature_celsius");
	refresh = metric_family_find("hsmp", "uncored_dimm_refresh_multiplier");
	extended = metric_family_find("hsmp", "uncored_dimm_extended_refresh_seconds_total");
	limited = metric_family_find("hsmp", "uncored_frequency_limited_seconds_total");
	v = snapshot_find_sample(s, temp, 1, "3" METRIC_LABEL_SEP "0" METRIC_LABEL_SEP "1");
	assert_non_null(v);
	assert_true(v->value.d == 90.0);
	v = snapshot_find_sample(s, refresh, 1, "3" METRIC_LABEL_SEP "0");
	assert_non_null(v);
	assert_int_equal(v->value.u, 2);
	v = snapshot_find_sample(s, extended, 1, "3" METRIC_LABEL_SEP "0");
	assert_non_null(v);
	assert_true(v->value.d == 10.0);
	v = snapshot_find_sample(s, temp, 0, "3" METRIC_LABEL_SEP "0" METRIC_LABEL_SEP "0");
	assert_non_null(v);
	assert_true(v->value.d == 40.0);
	assert_int_equal(snapshot_find_sample(s, refresh, 0, "3" METRIC_LABEL_SEP "0")->value.u, 1);
	/* one DIMM per channel here: slot 1 answers nothing, so it is absent */
	assert_null(snapshot_find_sample(s, refresh, 1, "3" METRIC_LABEL_SEP "1"));
	assert_true(snapshot_find_sample(s, limited, 0, "power")->value.d == 10.0);
	assert_true(snapshot_find_sample(s, limited, 1, "power")->value.d == 0.0);
	assert_true(snapshot_find_sample(s, limited, 0, "thermal")->value.d == 0.0);
	snapshot_release(s);
	collector_stop(&c);
	helpers_rmtree(dir);
	shutdown_machine(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(driver_and_firmware_answers),
		cmocka_unit_test(prochot_seconds_within_one_resolution_per_episode),
		cmocka_unit_test(dimm_heat_and_limit_reasons),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
