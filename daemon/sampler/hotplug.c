/*
 * CPU hotplug, as the sampler sees it.  See hotplug.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "engine.h"
#include "hotplug.h"
#include "log.h"
#include "msr.h"

struct hotplug {
	struct hw *hw;
	int n;                  /* CPUs known */
	struct hw_cpu *cpus;    /* as of the last check */
	struct hw_cpu *now;     /* scratch for the next */
	uint64_t n_offline, n_online;
	/*
	 * Whether the registers left unrestored are due another try: at
	 * start, after a CPU came online, or when more were left since the
	 * last try (a collector stopped at a reload while their CPU was
	 * offline).  Otherwise nothing could have changed for them.
	 */
	bool left_due;
	size_t n_left_tried;    /* how many were left after the last try */
	/*
	 * The online list the CPUs' states were last taken from (NULL: none,
	 * or they were asked one by one since): the same text again changes
	 * nothing, and is not parsed.
	 */
	char *online_text;
};

struct hotplug *hotplug_new(struct hw *hw)
{
	struct hotplug *h = calloc(1, sizeof(*h));
	int n = 0;

	if (!h || hw_enumerate(hw, NULL, 0, &n) < 0 || n < 0)
		n = 0;
	if (h) {
		h->cpus = calloc((size_t)n + 1, sizeof(*h->cpus));
		h->now = calloc((size_t)n + 1, sizeof(*h->now));
	}
	if (!h || !h->cpus || !h->now) {
		hotplug_free(h);
		return NULL;
	}
	h->hw = hw;
	h->left_due = true;
	if (n > 0 && hw_enumerate(hw, h->cpus, n, &h->n) == 0) {
		if (h->n > n)
			h->n = n;
	} else {
		h->n = 0;
	}
	for (int i = 0; i < h->n; i++)
		if (!h->cpus[i].online)
			log_notice("cpu %d is offline; it is monitored once it comes online",
				   h->cpus[i].cpu);
	return h;
}

/* Try the registers left unrestored again when due; say what was settled. */
static void finish_left(struct hotplug *h)
{
	struct engine_left_result res;
	size_t n = engine_left_count();

	if (n > h->n_left_tried)
		h->left_due = true;
	if (!h->left_due || !n) {
		h->n_left_tried = n;
		return;
	}
	h->left_due = false;
	engine_finish_left(h->hw, &res);
	h->n_left_tried = res.remaining;
	if (res.settled)
		log_notice("put back %u registers left unrestored when their CPU was offline "
			   "(%u restored, %u left to the agent that took them over); %zu remain",
			   res.settled, res.restored, res.taken_over, res.remaining);
}

/*
 * A CPU that came online: its devices are opened at the first access (on
 * the device backend, by the msr opener after the privilege drop), so read
 * its thermal status once to know whether it can be monitored at all.
 */
static void log_online(struct hotplug *h, int cpu)
{
	uint64_t v;
	int r = hw_read_msr(h->hw, cpu, IA32_THERM_STATUS, &v);

	if (r < 0 && r != -EIO)
		log_error("cpu %d came online but cannot be monitored: %s", cpu,
			  hw_hint(r, HW_OP_OPEN));
	else
		log_notice("cpu %d came online; monitoring it", cpu);
}

/*
 * Every known CPU's online state now into h->now, from one read of the
 * kernel's online list: 1.  0 when the list is the one the states were
 * last taken from (nothing changed; h->now is not filled).  -1 when the
 * backend has none or it does not parse (then each CPU is asked).
 * Topology is the last check's.
 */
static int read_online_list(struct hotplug *h)
{
	char text[4096];
	int *cpus = NULL;
	size_t n = 0, k = 0;

	if (hw_read_online_list(h->hw, text, sizeof(text)) < 0)
		return -1;
	if (h->online_text && strcmp(text, h->online_text) == 0)
		return 0;
	free(h->online_text);
	h->online_text = NULL;
	if (cpulist_parse(text, &cpus, &n) < 0)
		return -1;
	for (int i = 0; i < h->n; i++) {
		while (k < n && cpus[k] < h->cpus[i].cpu)
			k++;
		h->now[i] = h->cpus[i];
		h->now[i].online = k < n && cpus[k] == h->cpus[i].cpu;
	}
	free(cpus);
	/* Without memory for the copy, the next list is parsed again: no harm. */
	h->online_text = strdup(text);
	return 1;
}

void hotplug_check(struct hotplug *h)
{
	int n = h ? h->n : 0, listed;

	if (!h)
		return;
	listed = h->n > 0 ? read_online_list(h) : 0;
	if (listed != 0 && (listed > 0 || hw_enumerate(h->hw, h->now, h->n, &n) == 0)) {
		for (int i = 0; i < h->n && i < n; i++) {
			bool was = h->cpus[i].online, is = h->now[i].online;

			if (h->now[i].cpu != h->cpus[i].cpu || was == is)
				continue;
			if (is) {
				h->n_online++;
				h->left_due = true;
				log_online(h, h->now[i].cpu);
			} else {
				h->n_offline++;
				log_warning("cpu %d went offline; its counters carry on when it comes "
					    "back", h->now[i].cpu);
			}
			h->cpus[i].online = is;
		}
	}
	finish_left(h);
}

uint64_t hotplug_offline_count(const struct hotplug *h)
{
	return h ? h->n_offline : 0;
}

uint64_t hotplug_online_count(const struct hotplug *h)
{
	return h ? h->n_online : 0;
}

int hotplug_cpu_online(const struct hotplug *h, int cpu)
{
	/* CPU numbers are usually their places: a sample asks for each, so look there first. */
	if (h && cpu >= 0 && cpu < h->n && h->cpus[cpu].cpu == cpu)
		return h->cpus[cpu].online;
	for (int i = 0; h && i < h->n; i++)
		if (h->cpus[i].cpu == cpu)
			return h->cpus[i].online;
	return -1;
}

void hotplug_free(struct hotplug *h)
{
	if (!h)
		return;
	free(h->cpus);
	free(h->now);
	free(h->online_text);
	free(h);
}
