/*
 * --list-events: what each registered collector can count on a CPU
 * (list_events.h).
 */
#include <stdio.h>
#include <string.h>

#include "collector.h"
#include "hw_dev.h"
#include "list_events.h"
#include "sim.h"
#include "startup.h"
#include "strbuf.h"

/* Whether name is one of the simulator's models. */
static bool is_sim_model(const char *name)
{
	for (const char *const *m = sim_model_names(); *m; m++)
		if (strcmp(*m, name) == 0)
			return true;
	return false;
}

/*
 * The CPU --list-events describes, and where that came from: --model (a
 * model of the table, or a simulated one), --simulate, else the machine:
 * CPUID through the cpuid device when it can be read, or /proc/cpuinfo,
 * which needs no privilege and no msr driver.
 */
static int list_events_cpu(const struct options *o, const struct conf *conf,
			   struct cpu_info *ret_info, const char **ret_source)
{
	struct options sim = *o;
	struct machine m;
	char err[512];

	if (o->model && !is_sim_model(o->model)) {
		*ret_source = "the model table";
		if (cpu_info_for_name(o->model, ret_info, err, sizeof(err)) == 0)
			return 0;
		fprintf(stderr, "uncored: --model: %s (or a simulated model:", err);
		for (const char *const *n = sim_model_names(); *n; n++)
			fprintf(stderr, " %s", *n);
		fputs(")\n", stderr);
		return -1;
	}
	if (o->model)
		sim.simulate = o->model;
	if (sim.simulate || o->root) {
		if (machine_open(&sim, conf, &m) < 0)
			return -1;
		*ret_info = m.info;
		*ret_source = sim.simulate ? "simulated" : "CPUID";
		machine_close(&m);
		return 0;
	}
	if (hwdev_open(conf->root, &m.hw, err, sizeof(err)) == 0) {
		int r = cpu_detect(&m.hw, ret_info, err, sizeof(err));

		hw_close(&m.hw);
		if (r == 0) {
			*ret_source = "CPUID";
			return 0;
		}
	}
	*ret_source = "/proc/cpuinfo";
	if (cpu_info_from_cpuinfo("/proc/cpuinfo", ret_info, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "uncored: %s\n", err);
	return -1;
}

int list_events(const struct options *o, const struct conf *conf)
{
	struct cpu_info info;
	const char *source;
	struct strbuf out;
	bool first = true;

	if (list_events_cpu(o, conf, &info, &source) < 0)
		return 1;
	strbuf_init(&out);
	strbuf_printf(&out, "%s family %u model 0x%x (%s), from %s\n\n", info.vendor, info.family,
		      info.model, info.microarch, source);
	for (size_t i = 0; i < collector_registry_n; i++) {
		if (!collector_registry[i]->list_events)
			continue;
		if (!first)
			strbuf_append(&out, "\n");
		first = false;
		collector_registry[i]->list_events(&info, &out);
	}
	if (out.failed) {
		strbuf_free(&out);
		fputs("uncored: --list-events: out of memory\n", stderr);
		return 1;
	}
	fputs(out.buf, stdout);
	strbuf_free(&out);
	return 0;
}
