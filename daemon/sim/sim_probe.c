/*
 * The simulator's probe for tests and tools (sim.h): stepping the clock,
 * dumping the registers, the ground truth of every event, and the faults
 * a test may inject.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>

#include "sim_machine.h"

/* ---- test and tooling entry points ---- */

void sim_advance(struct sim *sim, double seconds)
{
	if (sim->clock != SIM_CLOCK_STEPPED || !(seconds > 0))
		return;
	pthread_mutex_lock(&sim->lock);
	sim->stepped_ns += llround(seconds * (double)SIM_NS_PER_S);
	pthread_mutex_unlock(&sim->lock);
}

double sim_now(struct sim *sim)
{
	return (double)sim_now_ns(sim) / (double)SIM_NS_PER_S;
}

void sim_dump(struct sim *sim, void (*fn)(void *arg, int cpu, uint32_t msr, uint64_t value),
	      void *arg)
{
	int64_t t;

	pthread_mutex_lock(&sim->lock);
	t = sim_sync_time(sim);
	for (int cpu = 0; cpu < sim->n_cpus; cpu++)
		sim_regs_dump(sim, cpu, t, fn, arg);
	pthread_mutex_unlock(&sim->lock);
}

int sim_ground_truth(struct sim *sim, bool uncore, int socket_or_cpu, uint16_t code,
		     uint8_t umask, bool edge, uint64_t *ret_count)
{
	struct count_src src;
	int r;

	pthread_mutex_lock(&sim->lock);
	if (uncore && code > 0xff) {
		r = -ENOENT;
	} else if (uncore && code == SIM_UNCORE_CLOCK_CODE && umask == 0 && !edge) {
		src = (struct count_src){ .hz = sim->model->uclk_hz };
		r = socket_or_cpu < 0 || socket_or_cpu >= sim->model->n_sockets ||
		    !(sim->model->flags & SIM_F_NHM_UNCORE) ? -ENOENT : 0;
	} else if (uncore)
		r = socket_or_cpu < 0 || socket_or_cpu >= sim->model->n_sockets ? -ENOENT :
		    sim_uncore_src(sim, socket_or_cpu, (uint8_t)code, umask, edge, &src);
	else
		r = socket_or_cpu < 0 || socket_or_cpu >= sim->n_cpus ||
		    !(sim->model->flags & (SIM_F_INTEL | SIM_F_AMD_PMU)) ? -ENOENT :
		    sim_core_src(sim, socket_or_cpu, code, umask, &src);
	if (r == 0)
		*ret_count = src_count(&src, sim_sync_time(sim));
	pthread_mutex_unlock(&sim->lock);
	return r;
}

int sim_box_ground_truth(struct sim *sim, bool imc, int socket, int die, int channel,
			 uint64_t config, uint64_t *ret_count)
{
	int dies = sim_model_n_dies(sim->model);
	int r;

	if (die < 0 || die >= dies)
		return -ENOENT;
	if (!imc)
		channel = sim_model_n_pcu(sim->model) - 1;   /* the PCU that sees the conditions */
	pthread_mutex_lock(&sim->lock);
	r = sim_boxes_count(sim->boxes, imc ? SIM_BOX_IMC : SIM_BOX_PCU, socket * dies + die, channel,
			    config, sim_sync_time(sim), ret_count);
	pthread_mutex_unlock(&sim->lock);
	return r;
}

int64_t sim_box_clock_hz(bool imc)
{
	return imc ? SIM_DCLK_HZ : SIM_PCLK_HZ;
}

int sim_poke(struct sim *sim, int cpu, uint32_t msr, uint64_t value)
{
	int r;

	if (cpu < 0 || cpu >= sim->n_cpus)
		return -ENXIO;
	pthread_mutex_lock(&sim->lock);
	r = sim_raw_write(sim, cpu, msr, value, sim_sync_time(sim));
	pthread_mutex_unlock(&sim->lock);
	return r;
}

int sim_set_online(struct sim *sim, int cpu, bool online)
{
	if (cpu < 0 || cpu >= sim->n_cpus)
		return -ENXIO;
	pthread_mutex_lock(&sim->lock);
	sim->cpus[cpu].manual_offline = !online;
	sim_perf_hotplug(sim->perf, cpu, online, sim_sync_time(sim));
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

void sim_refuse_writes(struct sim *sim, bool refuse)
{
	pthread_mutex_lock(&sim->lock);
	sim->refuse_writes = refuse;
	pthread_mutex_unlock(&sim->lock);
}

void sim_fail_box_reads(struct sim *sim, int err)
{
	pthread_mutex_lock(&sim->lock);
	sim->fail_box_read = err;
	pthread_mutex_unlock(&sim->lock);
}

void sim_fail_reads(struct sim *sim, int cpu, uint32_t msr, int err)
{
	pthread_mutex_lock(&sim->lock);
	sim->fail_read.cpu = cpu;
	sim->fail_read.msr = msr;
	sim->fail_read.err = err;
	pthread_mutex_unlock(&sim->lock);
}

