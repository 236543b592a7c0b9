/*
 * A CPU's core events as two engine groups (col_core_state.h): the fixed
 * events in one, the programmable events in the other.  The kernel
 * schedules a group whole or not at all, so with one group a single
 * configured event too many (the NMI watchdog holding fixed counter 1
 * sends cycles to a GP counter) left every event of the CPU, instructions
 * included, without a counter.  Apart, the fixed group counts whatever
 * the other does, and the two rotate when they do not fit together.
 * The msr engine places each event on its own (an event without a counter
 * waits alone), so there the CPU keeps one group: its gate bits are then
 * one group's, which its restore rule needs (engine_msr.h).
 */
#include <errno.h>

#include "col_core_state.h"

/* Group k's first event and how many it has. */
static size_t group_first(size_t k)
{
	return k == 0 ? 0 : N_FIXED;
}

static size_t group_len(const struct core_cpu *cc, size_t k)
{
	if (!cc->split)
		return k == 0 ? cc->n_group : 0;
	if (k == 0)
		return cc->n_group < cc->n_fixed ? cc->n_group : cc->n_fixed;
	return cc->n_group > N_FIXED ? cc->n_group - N_FIXED : 0;
}

/* The programmable events' group could not be opened: each reads as failed, with err. */
static void gp_refused(struct core_cpu *cc, int err)
{
	for (size_t i = N_FIXED; i < cc->n_group; i++)
		cc->readings[i] = (struct engine_reading){
			.state = ENGINE_FAILED, .err = err, .fault = ENGINE_FAULT_READ,
			.reason = "the kernel refused the group of programmable events" };
}

int core_groups_open(struct engine *e, struct core_cpu *cc, char *why, size_t whylen)
{
	int err = 0;

	cc->split = e->ops->kind == ENGINE_PERF;
	for (size_t k = 0; k < CORE_N_GROUPS; k++) {
		size_t n = group_len(cc, k);

		cc->groups[k] = NULL;
		if (!n)
			continue;
		err = engine_open(e, ENGINE_PMU_CORE, cc->cpu, cc->group_events + group_first(k), n,
				  &cc->groups[k], why, whylen);
		if (err == 0)
			continue;
		if (k > 0 && err != -ENXIO) {
			/* The fixed group counts on without the other. */
			gp_refused(cc, err);
			cc->gp_refused = err;
			return 0;
		}
		core_groups_close(e, cc, NULL);
		return err;
	}
	cc->gp_refused = 0;
	return 0;
}

int core_groups_read(struct engine *e, struct core_cpu *cc)
{
	int ret = 0;
	bool offline = false;

	/* Every group is read, so each sees its CPU offline (the engine reopens on that). */
	for (size_t k = 0; k < CORE_N_GROUPS; k++) {
		int err;

		if (!cc->groups[k])
			continue;
		err = engine_read(e, cc->groups[k], cc->readings + group_first(k));
		offline |= err == -ENXIO;
		if (err && !ret)
			ret = err;
	}
	if (offline)
		return -ENXIO;
	if (cc->gp_refused)
		gp_refused(cc, cc->gp_refused);
	return ret;
}

int core_groups_close(struct engine *e, struct core_cpu *cc, unsigned *ret_failed)
{
	int ret = 0;

	if (ret_failed)
		*ret_failed = 0;
	for (size_t k = 0; k < CORE_N_GROUPS; k++) {
		unsigned failed = 0;
		int err;

		if (!cc->groups[k])
			continue;
		err = engine_close(e, cc->groups[k], &failed);
		cc->groups[k] = NULL;
		if (ret_failed)
			*ret_failed += failed;
		if (err && !ret)
			ret = err;
	}
	return ret;
}

bool core_groups_open_any(const struct core_cpu *cc)
{
	for (size_t k = 0; k < CORE_N_GROUPS; k++)
		if (cc->groups[k])
			return true;
	return false;
}
