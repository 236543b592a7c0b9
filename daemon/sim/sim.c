/*
 * The simulated machine behind struct hw: a register file per socket, per
 * physical core and per logical CPU, with the PMU, thermal and RAPL
 * semantics of hardware.md, driven by a scenario's timelines.  A counter is
 * stored as (value, time of last change); a read integrates the event rate
 * since then, so counts are exact and never go backwards while counting,
 * and any write re-bases every counter of the PMU it touches.  The
 * kernel's writes (boot state, perf users) come from sim_kernel.c at their
 * times, through the same register table.  It knows nothing about
 * collectors; hw.c forwards to the ops table at the bottom.
 *
 * The simulator's choices where hardware.md says UNCONFIRMED or is silent:
 * reading 0x393 fails with EIO; the uncore and core overflow status
 * registers read 0 (overflow is not modelled) and writes to them are
 * ignored (OVF_CTRL, STATUS_SET) or fail with EIO (read-only STATUS);
 * CMASK and INV are ignored, EDGE is honoured on uncore events only;
 * IA32_PERF_CAPABILITIES reads FW_WRITE (bit 13) alone where the model has
 * it, 0 elsewhere;
 * several CORE_n umask bits count the OR of the conditions; 0x80 counts
 * while a core is at/above TjMax, 0x81 while it is throttled (hot, or
 * forced by the scenario), 0x83 while its socket's PROCHOT is asserted;
 * Nehalem generates no thermal uncore events; counter writes keep the low
 * width bits, except plain IA32_PMCx writes, which sign-extend bit 31; writes to read-only registers fail with
 * EIO; INUSE (0x392, v4) bit n = PERFEVTSELn EN, bit 32+i = nonzero fixed
 * nibble i; the package thermal status bit 0 is the OR of its cores'.
 * A CPU taken offline with sim_set_online() keeps generating events;
 * scenario offline windows make its load idle.
 */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "hw.h"
#include "msr.h"
#include "sim.h"
#include "sim_box.h"
#include "sim_kernel.h"
#include "sim_perf.h"
#include "sim_model.h"
#include "sim_scenario.h"

#define IDLE_CELSIUS        45       /* simulator's choice */
#define MAX_GP              8
#define MAX_FIXED           4
#define N_CORE_UMASK_CORES  4        /* CORE_0..3 umask bits, hardware.md §2.1 */
#define N_UMASKS            16
#define RAPL_ENERGY_UNIT_SHIFT 8        /* 0x606 bits 12:8, hardware.md §4.1 */
#define RAPL_POWER_UNIT_VALUE ((UINT64_C(10) << RAPL_POWER_UNIT_TIME_SHIFT) | \
			       (UINT64_C(14) << RAPL_ENERGY_UNIT_SHIFT) | UINT64_C(3))
#define RAPL_TIME_UNITS_PER_S 1024

enum core_event {
	EV_INSTRUCTIONS,
	EV_CYCLES,
	EV_REF_CYCLES,
	EV_LLC_REFS,
	EV_LLC_MISSES,
	EV_BRANCHES,
	EV_BRANCH_MISSES,
	EV_COUNT,
};

/* Architectural events, hardware.md §5.2. */
static const struct {
	uint8_t code, umask;
} core_event_codes[EV_COUNT] = {
	[EV_INSTRUCTIONS] = { 0xc0, 0x00 },
	[EV_CYCLES] = { 0x3c, 0x00 },
	[EV_REF_CYCLES] = { 0x3c, 0x01 },
	[EV_LLC_REFS] = { 0x2e, 0x4f },
	[EV_LLC_MISSES] = { 0x2e, 0x41 },
	[EV_BRANCHES] = { 0xc4, 0x00 },
	[EV_BRANCH_MISSES] = { 0xc5, 0x00 },
};

/* Fixed counters 0..2, hardware.md §5.3. */
static const enum core_event fixed_events[] = { EV_INSTRUCTIONS, EV_CYCLES, EV_REF_CYCLES };

/* Uncore thermal event codes, hardware.md §2.1. */
#define UNC_EV_DRAM_THROTTLED   0x67
#define UNC_EV_THROTTLING_TEMP  0x80
#define UNC_EV_THROTTLED_TEMP   0x81
#define UNC_EV_PROCHOT          0x82
#define UNC_EV_PROCHOT_CORE     0x83

struct sim_ctr {
	uint64_t base;     /* value at t0 */
	int64_t t0;
};

/* How an event accumulates: rate integral, or rising edges, of a timeline. */
struct count_src {
	const struct sim_timeline *tl;   /* NULL: always on */
	int64_t hz;                      /* events/s while tl is nonzero; 0: tl holds the rate */
	bool edge;
};

struct sim_uncore {
	uint64_t global_ctrl, fixed_ctrl, addr_match;
	uint64_t evtsel[UNCORE_N_COUNTERS];
	struct sim_ctr pmc[UNCORE_N_COUNTERS];
	struct sim_ctr fixed;
};

struct sim_socket {
	struct sim_uncore unc;
	struct sim_timeline dram, prochot, pkg_limit, dram_limit, pkg_thermal;
	struct sim_timeline pkg_hot;                /* a core at or above TjMax */
	struct sim_timeline temp_or[N_UMASKS];      /* 0x80 by umask */
	struct sim_timeline throttled_or[N_UMASKS]; /* 0x81 by umask */
	int64_t pkg_log_from[2];
};

struct sim_core {
	struct sim_timeline temp, hot, throttled;
	int64_t log_from[2];     /* thermal log, PROCHOT log: rises before this are cleared */
};

struct sim_cpu {
	struct hw_cpu topo;
	int core_index;
	bool manual_offline;
	struct sim_timeline rate[EV_COUNT];
	struct sim_timeline offline;
	uint64_t evtsel[MAX_GP];
	struct sim_ctr pmc[MAX_GP];
	uint64_t fixed_ctrl, global_ctrl;
	struct sim_ctr fixed[MAX_FIXED];
};

struct sim {
	const struct sim_model *model;
	struct sim_scenario *scn;
	enum sim_clock clock;
	int64_t stepped_ns;
	struct timespec opened;
	bool refuse_writes;
	struct { int cpu; uint32_t msr; int err; } fail_read;   /* tests: err 0 = none */
	pthread_mutex_t lock;
	int n_cpus;
	struct sim_socket *sockets;
	struct sim_core *cores;        /* socket * n_cores + core index */
	struct sim_cpu *cpus;
	enum sim_boot boot;
	struct sim_kernel *kernel;
	struct sim_perf *perf;
	struct sim_boxes *boxes;       /* server uncore; NULL when the model has none */
	char *pmu_root;                /* sim_attach_perf's PMU tree, removed at close */
	const struct sim_rule **rewrites;
	int n_rewrites, rw_idx;
	int64_t rw_period;
};

/* Where an access lands. */
struct loc {
	struct sim_cpu *cpu;
	struct sim_core *core;
	struct sim_socket *socket;
};

static uint64_t width_mask(int width)
{
	return width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1;
}

static uint64_t src_count(const struct count_src *src, int64_t t)
{
	unsigned __int128 integral;

	if (src->edge)
		return sim_timeline_rises(src->tl, t);
	integral = src->tl ? sim_timeline_integral(src->tl, t) : (unsigned __int128)(t > 0 ? t : 0);
	if (src->hz)
		integral *= (uint64_t)src->hz;
	return (uint64_t)(integral / SIM_NS_PER_S);
}

static uint64_t ctr_value(const struct sim_ctr *c, const struct count_src *src, bool counting,
			  int64_t t, int width)
{
	uint64_t v = c->base;

	if (counting && src)
		v += src_count(src, t) - src_count(src, c->t0);
	return v & width_mask(width);
}

/* ---- event sources ---- */

static int uncore_src(const struct sim *s, int socket, uint8_t code, uint8_t umask, bool edge,
		      struct count_src *ret)
{
	const struct sim_socket *sk = &s->sockets[socket];
	bool core_umask = umask >= 1 && umask < N_UMASKS;

	if (!(s->model->flags & SIM_F_UNCORE_THERMAL))
		return -ENOENT;
	*ret = (struct count_src){ .hz = s->model->uclk_hz, .edge = edge };
	if (code == UNC_EV_DRAM_THROTTLED && umask == 0x01)
		ret->tl = &sk->dram;
	else if (code == UNC_EV_PROCHOT && umask == 0x01)
		*ret = (struct count_src){ .tl = &sk->prochot, .edge = true };
	else if (code == UNC_EV_THROTTLING_TEMP && core_umask)
		ret->tl = &sk->temp_or[umask];
	else if (code == UNC_EV_THROTTLED_TEMP && core_umask)
		ret->tl = &sk->throttled_or[umask];
	else if (code == UNC_EV_PROCHOT_CORE && core_umask)
		ret->tl = &sk->prochot;
	else
		return -ENOENT;
	return 0;
}

static int core_src(const struct sim *s, int cpu, uint8_t code, uint8_t umask,
		    struct count_src *ret)
{
	for (int e = 0; e < EV_COUNT; e++) {
		if (core_event_codes[e].code != code || core_event_codes[e].umask != umask)
			continue;
		*ret = (struct count_src){ .tl = &s->cpus[cpu].rate[e] };
		return 0;
	}
	return -ENOENT;
}

/* ---- uncore registers (per socket), hardware.md §1.3-1.7 ---- */

static bool unc_pmc_counting(const struct sim_uncore *u, int n)
{
	return (u->evtsel[n] & UNC_EVTSEL_EN) && (u->global_ctrl & UNC_GLOBAL_CTRL_EN_PC(n));
}

static bool unc_fixed_counting(const struct sim_uncore *u)
{
	return (u->fixed_ctrl & UNC_FIXED_CTR_CTRL_EN) && (u->global_ctrl & UNC_GLOBAL_CTRL_EN_FC0);
}

static uint64_t unc_pmc_value(const struct sim *s, const struct loc *l, int n, int64_t t)
{
	const struct sim_uncore *u = &l->socket->unc;
	struct count_src src;
	uint64_t sel = u->evtsel[n];
	bool known = uncore_src(s, l->cpu->topo.socket, sel & UNC_EVTSEL_EVENT_MASK,
				(sel >> UNC_EVTSEL_UMASK_SHIFT) & 0xff, sel & UNC_EVTSEL_EDGE, &src) == 0;

	return ctr_value(&u->pmc[n], known ? &src : NULL, unc_pmc_counting(u, n), t,
			 UNCORE_COUNTER_WIDTH);
}

static uint64_t unc_fixed_value(const struct sim *s, const struct loc *l, int64_t t)
{
	const struct sim_uncore *u = &l->socket->unc;
	struct count_src src = { .hz = s->model->uclk_hz };

	return ctr_value(&u->fixed, &src, unc_fixed_counting(u), t, UNCORE_COUNTER_WIDTH);
}

/* Fold the counts so far into every uncore counter of the socket. */
static void unc_rebase(const struct sim *s, const struct loc *l, int64_t t)
{
	struct sim_uncore *u = &l->socket->unc;

	for (int n = 0; n < UNCORE_N_COUNTERS; n++)
		u->pmc[n] = (struct sim_ctr){ unc_pmc_value(s, l, n, t), t };
	u->fixed = (struct sim_ctr){ unc_fixed_value(s, l, t), t };
}

static int read_unc_global(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)i, (void)t;
	*v = l->socket->unc.global_ctrl;
	return 0;
}

static int write_unc_global(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)i;
	unc_rebase(s, l, t);
	l->socket->unc.global_ctrl = v;
	return 0;
}

static int read_unc_fixed(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)i;
	*v = unc_fixed_value(s, l, t);
	return 0;
}

static int write_unc_fixed(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)i;
	unc_rebase(s, l, t);
	l->socket->unc.fixed = (struct sim_ctr){ v & width_mask(UNCORE_COUNTER_WIDTH), t };
	return 0;
}

static int read_unc_fixed_ctrl(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)i, (void)t;
	*v = l->socket->unc.fixed_ctrl;
	return 0;
}

static int write_unc_fixed_ctrl(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)i;
	unc_rebase(s, l, t);
	l->socket->unc.fixed_ctrl = v;
	return 0;
}

static int read_unc_match(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)i, (void)t;
	*v = l->socket->unc.addr_match;
	return 0;
}

static int write_unc_match(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)s, (void)i, (void)t;
	l->socket->unc.addr_match = v;
	return 0;
}

static int read_unc_pmc(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	*v = unc_pmc_value(s, l, i, t);
	return 0;
}

static int write_unc_pmc(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	unc_rebase(s, l, t);
	l->socket->unc.pmc[i] = (struct sim_ctr){ v & width_mask(UNCORE_COUNTER_WIDTH), t };
	return 0;
}

static int read_unc_evtsel(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)t;
	*v = l->socket->unc.evtsel[i];
	return 0;
}

/*
 * OCC_CTR_RST clears the queue-occupancy accumulator of the event, not the
 * PMC, and reads back 0 (hardware-linux.md §2).  The simulator models no
 * occupancy event, so the bit has no effect beyond reading back clear.
 */
static int write_unc_evtsel(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	struct sim_uncore *u = &l->socket->unc;

	unc_rebase(s, l, t);
	u->evtsel[i] = v & ~UNC_EVTSEL_OCC_CTR_RST;
	return 0;
}

/* ---- core PMU registers (per logical CPU), hardware.md §5.3-5.4 ---- */

static bool gp_counting(const struct sim_cpu *c, int n)
{
	uint64_t sel = c->evtsel[n];

	return (sel & PERFEVTSEL_EN) && (sel & (PERFEVTSEL_USR | PERFEVTSEL_OS)) &&
	       (c->global_ctrl & PERF_GLOBAL_CTRL_EN_PMC(n));
}

static unsigned fixed_nibble(const struct sim_cpu *c, int i)
{
	return (unsigned)(c->fixed_ctrl >> (FIXED_CTR_CTRL_STRIDE * i)) & 0xfu;
}

static bool fixed_counting(const struct sim_cpu *c, int i)
{
	return (fixed_nibble(c, i) & (FIXED_CTR_CTRL_EN_OS | FIXED_CTR_CTRL_EN_USR)) &&
	       (c->global_ctrl & PERF_GLOBAL_CTRL_EN_FIXED(i));
}

static uint64_t gp_value(const struct sim *s, const struct loc *l, int n, int64_t t)
{
	const struct sim_cpu *c = l->cpu;
	struct count_src src;
	uint64_t sel = c->evtsel[n];
	bool known = core_src(s, c->topo.cpu, sel & 0xff, (sel >> 8) & 0xff, &src) == 0;

	return ctr_value(&c->pmc[n], known ? &src : NULL, gp_counting(c, n), t, s->model->gp_width);
}

static uint64_t fixed_value(const struct sim *s, const struct loc *l, int i, int64_t t)
{
	const struct sim_cpu *c = l->cpu;
	struct count_src src = { .tl = &c->rate[fixed_events[i]] };

	return ctr_value(&c->fixed[i], &src, fixed_counting(c, i), t, s->model->fixed_width);
}

static void core_rebase(const struct sim *s, const struct loc *l, int64_t t)
{
	struct sim_cpu *c = l->cpu;

	for (int n = 0; n < s->model->n_gp; n++)
		c->pmc[n] = (struct sim_ctr){ gp_value(s, l, n, t), t };
	for (int i = 0; i < s->model->n_fixed; i++)
		c->fixed[i] = (struct sim_ctr){ fixed_value(s, l, i, t), t };
}

static int read_gp(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	*v = gp_value(s, l, i, t);
	return 0;
}

/*
 * A plain write to IA32_PMCx keeps the sign extension of its low 32 bits
 * (hardware-linux.md §2, SDM §18.2.5); IA32_A_PMCx takes the full width.
 */
static int write_gp(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	uint64_t extended = (uint64_t)(int64_t)(int32_t)(uint32_t)v;

	core_rebase(s, l, t);
	l->cpu->pmc[i] = (struct sim_ctr){ extended & width_mask(s->model->gp_width), t };
	return 0;
}

static int write_gp_full(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	core_rebase(s, l, t);
	l->cpu->pmc[i] = (struct sim_ctr){ v & width_mask(s->model->gp_width), t };
	return 0;
}

static int read_perf_caps(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)l, (void)i, (void)t;
	*v = (s->model->flags & SIM_F_FW_WRITE) ? PERF_CAP_FW_WRITE : 0;
	return 0;
}

static int read_evtsel(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)t;
	*v = l->cpu->evtsel[i];
	return 0;
}

static int write_evtsel(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	core_rebase(s, l, t);
	l->cpu->evtsel[i] = v;
	return 0;
}

static int read_fixed(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	*v = fixed_value(s, l, i, t);
	return 0;
}

static int write_fixed(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	core_rebase(s, l, t);
	l->cpu->fixed[i] = (struct sim_ctr){ v & width_mask(s->model->fixed_width), t };
	return 0;
}

static int read_fixed_ctrl(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)i, (void)t;
	*v = l->cpu->fixed_ctrl;
	return 0;
}

static int write_fixed_ctrl(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)i;
	core_rebase(s, l, t);
	l->cpu->fixed_ctrl = v;
	return 0;
}

static int read_global_ctrl(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)i, (void)t;
	*v = l->cpu->global_ctrl;
	return 0;
}

static int write_global_ctrl(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)i;
	core_rebase(s, l, t);
	l->cpu->global_ctrl = v;
	return 0;
}

static int read_inuse(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)i, (void)t;
	*v = 0;
	for (int n = 0; n < s->model->n_gp; n++)
		if (l->cpu->evtsel[n] & PERFEVTSEL_EN)
			*v |= MSR_BIT(n);
	for (int f = 0; f < s->model->n_fixed; f++)
		if (fixed_nibble(l->cpu, f))
			*v |= MSR_BIT(32 + f);
	return 0;
}

static int read_zero(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)l, (void)i, (void)t;
	*v = 0;
	return 0;
}

static int write_ignored(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)s, (void)l, (void)i, (void)t, (void)v;
	return 0;
}

/* ---- thermal, hardware.md §3 ---- */

static bool logged(const struct sim_timeline *tl, int64_t from, int64_t t)
{
	return sim_timeline_value_at(tl, t) ||
	       sim_timeline_rises(tl, t + 1) > sim_timeline_rises(tl, from);
}

static uint64_t status_bits(const struct sim_timeline *thermal, const struct sim_timeline *prochot,
			    const int64_t log_from[2], int64_t t)
{
	uint64_t v = 0;

	if (sim_timeline_value_at(thermal, t))
		v |= THERM_STATUS_THERMAL;
	if (logged(thermal, log_from[0], t))
		v |= THERM_STATUS_THERMAL_LOG;
	if (sim_timeline_value_at(prochot, t))
		v |= THERM_STATUS_PROCHOT;
	if (logged(prochot, log_from[1], t))
		v |= THERM_STATUS_PROCHOT_LOG;
	return v;
}

/* R/WC0: a 0 written to a log bit clears it; everything else is ignored. */
static void clear_logs(int64_t log_from[2], uint64_t v, int64_t t)
{
	if (!(v & THERM_STATUS_THERMAL_LOG))
		log_from[0] = t + 1;
	if (!(v & THERM_STATUS_PROCHOT_LOG))
		log_from[1] = t + 1;
}

static uint64_t readout(const struct sim *s, int64_t celsius)
{
	int64_t below = s->model->tjmax_c - celsius;

	below = below < 0 ? 0 : below > THERM_STATUS_READOUT_MASK ? THERM_STATUS_READOUT_MASK : below;
	return (uint64_t)below << THERM_STATUS_READOUT_SHIFT;
}

static int read_therm(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)i;
	*v = status_bits(&l->core->throttled, &l->socket->prochot, l->core->log_from, t) |
	     readout(s, sim_timeline_value_at(&l->core->temp, t)) |
	     (uint64_t)1 << THERM_STATUS_RESOLUTION_SHIFT | THERM_STATUS_READING_VALID;
	return 0;
}

static int write_therm(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)s, (void)i;
	clear_logs(l->core->log_from, v, t);
	return 0;
}

static int read_pkg_therm(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	const struct sim_core *cores = &s->cores[l->cpu->topo.socket * s->model->n_cores];
	int64_t hottest = INT64_MIN;

	(void)i;
	for (int c = 0; c < s->model->n_cores; c++) {
		int64_t temp = sim_timeline_value_at(&cores[c].temp, t);

		hottest = temp > hottest ? temp : hottest;
	}
	*v = status_bits(&l->socket->pkg_thermal, &l->socket->prochot, l->socket->pkg_log_from, t) |
	     readout(s, hottest);
	return 0;
}

static int write_pkg_therm(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v)
{
	(void)s, (void)i;
	clear_logs(l->socket->pkg_log_from, v, t);
	return 0;
}

static int read_tjmax(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)l, (void)i, (void)t;
	*v = (uint64_t)s->model->tjmax_c << TEMPERATURE_TARGET_TJMAX_SHIFT;
	return 0;
}

/* ---- RAPL, hardware.md §4.1 ---- */

static int read_rapl_unit(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)l, (void)i, (void)t;
	*v = RAPL_POWER_UNIT_VALUE;
	return 0;
}

static uint64_t throttled_time(const struct sim_timeline *tl, int64_t t)
{
	struct count_src src = { .tl = tl, .hz = RAPL_TIME_UNITS_PER_S };

	return src_count(&src, t) & width_mask(RAPL_PERF_STATUS_WIDTH);
}

static int read_pkg_perf(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)i;
	*v = throttled_time(&l->socket->pkg_limit, t);
	return 0;
}

static int read_dram_perf(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v)
{
	(void)s, (void)i;
	*v = throttled_time(&l->socket->dram_limit, t);
	return 0;
}

/* ---- register table ---- */

#define COUNT_GP    (-1)
#define COUNT_FIXED (-2)

struct reg_desc {
	uint32_t first;
	int count;            /* registers from first, or COUNT_GP / COUNT_FIXED */
	unsigned need;        /* model flags required */
	int (*read)(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t *v);  /* NULL: EIO */
	int (*write)(struct sim *s, const struct loc *l, int i, int64_t t, uint64_t v);   /* NULL: EIO */
};

#define UNC SIM_F_NHM_UNCORE
#define V4 (SIM_F_INTEL | SIM_F_PERFMON_V4)

/* Order matters: the first entry that covers an address and the model wins; dump order. */
static const struct reg_desc regs[] = {
	{ MSR_UNCORE_PERF_GLOBAL_CTRL, 1, UNC, read_unc_global, write_unc_global },
	{ MSR_UNCORE_PERF_GLOBAL_STATUS, 1, UNC, read_zero, NULL },
	{ MSR_UNCORE_PERF_GLOBAL_OVF_CTRL, 1, UNC, NULL, write_ignored },
	{ MSR_UNCORE_FIXED_CTR0, 1, UNC, read_unc_fixed, write_unc_fixed },
	{ MSR_UNCORE_FIXED_CTR_CTRL, 1, UNC, read_unc_fixed_ctrl, write_unc_fixed_ctrl },
	{ MSR_UNCORE_ADDR_OPCODE_MATCH, 1, UNC, read_unc_match, write_unc_match },
	{ MSR_UNCORE_PMC0, UNCORE_N_COUNTERS, UNC, read_unc_pmc, write_unc_pmc },
	{ MSR_UNCORE_PERFEVTSEL0, UNCORE_N_COUNTERS, UNC, read_unc_evtsel, write_unc_evtsel },
	{ IA32_THERM_STATUS, 1, SIM_F_INTEL, read_therm, write_therm },
	{ MSR_TEMPERATURE_TARGET, 1, SIM_F_INTEL, read_tjmax, NULL },
	{ IA32_PACKAGE_THERM_STATUS, 1, SIM_F_PTM, read_pkg_therm, write_pkg_therm },
	{ MSR_RAPL_POWER_UNIT, 1, SIM_F_RAPL, read_rapl_unit, NULL },
	{ MSR_PKG_PERF_STATUS, 1, SIM_F_RAPL, read_pkg_perf, NULL },
	{ MSR_DRAM_PERF_STATUS, 1, SIM_F_RAPL, read_dram_perf, NULL },
	{ IA32_PMC0, COUNT_GP, SIM_F_INTEL, read_gp, write_gp },
	{ IA32_A_PMC0, COUNT_GP, SIM_F_INTEL | SIM_F_FW_WRITE, read_gp, write_gp_full },
	{ IA32_PERF_CAPABILITIES, 1, SIM_F_INTEL, read_perf_caps, NULL },
	{ IA32_PERFEVTSEL0, COUNT_GP, SIM_F_INTEL, read_evtsel, write_evtsel },
	{ IA32_FIXED_CTR0, COUNT_FIXED, SIM_F_INTEL, read_fixed, write_fixed },
	{ IA32_FIXED_CTR_CTRL, 1, SIM_F_INTEL, read_fixed_ctrl, write_fixed_ctrl },
	{ IA32_PERF_GLOBAL_STATUS, 1, SIM_F_INTEL, read_zero, NULL },
	{ IA32_PERF_GLOBAL_CTRL, 1, SIM_F_INTEL, read_global_ctrl, write_global_ctrl },
	{ IA32_PERF_GLOBAL_OVF_CTRL, 1, SIM_F_INTEL, read_zero, write_ignored },
	{ IA32_PERF_GLOBAL_STATUS_SET, 1, V4, NULL, write_ignored },
	{ IA32_PERF_GLOBAL_INUSE, 1, V4, read_inuse, NULL },
};

#define N_REGS (sizeof(regs) / sizeof(regs[0]))

static int reg_count(const struct sim *s, const struct reg_desc *d)
{
	if (d->count == COUNT_GP)
		return s->model->n_gp;
	if (d->count == COUNT_FIXED)
		return s->model->n_fixed;
	return d->count;
}

static bool reg_present(const struct sim *s, const struct reg_desc *d)
{
	return (s->model->flags & d->need) == d->need;
}

static const struct reg_desc *reg_find(const struct sim *s, uint32_t msr, int *ret_index)
{
	for (size_t i = 0; i < N_REGS; i++) {
		const struct reg_desc *d = &regs[i];

		if (!reg_present(s, d) || msr < d->first ||
		    msr - d->first >= (uint32_t)reg_count(s, d))
			continue;
		*ret_index = (int)(msr - d->first);
		return d;
	}
	return NULL;
}

static struct loc loc_of(struct sim *s, int cpu)
{
	struct sim_cpu *c = &s->cpus[cpu];

	return (struct loc){
		.cpu = c,
		.core = &s->cores[c->topo.socket * s->model->n_cores + c->core_index],
		.socket = &s->sockets[c->topo.socket],
	};
}

/* ---- time and agents ---- */

static int64_t now_ns(const struct sim *s)
{
	struct timespec ts;

	if (s->clock == SIM_CLOCK_STEPPED)
		return s->stepped_ns;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec - s->opened.tv_sec) * SIM_NS_PER_S + (ts.tv_nsec - s->opened.tv_nsec);
}

/* The uncore unit (sim_box.h: socket * dies + die) of cpu. */
static int unit_of(const struct sim *s, int cpu)
{
	const struct hw_cpu *t = &s->cpus[cpu].topo;

	return t->socket * sim_model_n_dies(s->model) + t->die;
}

static int raw_write(struct sim *s, int cpu, uint32_t msr, uint64_t value, int64_t t)
{
	const struct reg_desc *d;
	struct loc l;
	int i;

	if (sim_boxes_has_msr(s->boxes, msr))
		return sim_boxes_write(s->boxes, unit_of(s, cpu), msr, t, value);
	d = reg_find(s, msr, &i);
	if (!d || !d->write)
		return -EIO;
	l = loc_of(s, cpu);
	return d->write(s, &l, i, t, value);
}

static int raw_read(struct sim *s, int cpu, uint32_t msr, uint64_t *value, int64_t t)
{
	const struct reg_desc *d;
	struct loc l;
	int i;

	if (sim_boxes_has_msr(s->boxes, msr))
		return sim_boxes_read(s->boxes, unit_of(s, cpu), msr, t, value);
	d = reg_find(s, msr, &i);
	if (!d || !d->read)
		return -EIO;
	l = loc_of(s, cpu);
	return d->read(s, &l, i, t, value);
}

/* Apply a preset or rewrite rule at time t to every CPU it names. */
static int apply_rule_write(struct sim *s, const struct sim_rule *rule, int64_t t)
{
	int r = 0;

	for (int cpu = 0; cpu < s->n_cpus; cpu++) {
		const struct hw_cpu *topo = &s->cpus[cpu].topo;
		bool hit = rule->cpu != SIM_UNSET ?
			   (rule->cpu == SIM_ALL || rule->cpu == cpu) :
			   (rule->socket == SIM_ALL || rule->socket == topo->socket);

		if (hit && (r = raw_write(s, cpu, rule->msr, rule->value, t)) < 0)
			return r;
	}
	return r;
}

/* The kernel's writes (sim_kernel.h) land as another agent's would. */
static int kernel_write(void *ctx, int cpu, uint32_t msr, uint64_t value, int64_t t)
{
	return raw_write(ctx, cpu, msr, value, t);
}

/* Run every scenario rewrite and agent change due by now, in time order; returns now. */
static int64_t sync_time(struct sim *s)
{
	int64_t now = now_ns(s);

	for (;;) {
		int64_t t_kernel = sim_kernel_next(s->kernel);
		int64_t t_perf = sim_perf_next(s->perf);
		int64_t t_rw = s->rw_idx < s->n_rewrites ?
			       s->rw_period + s->rewrites[s->rw_idx]->at_ns : SIM_FOREVER;

		if (t_perf < t_kernel && t_perf < t_rw && t_perf <= now) {
			sim_perf_step(s->perf);
		} else if (t_rw <= t_kernel && t_rw <= now) {
			apply_rule_write(s, s->rewrites[s->rw_idx], t_rw);
			if (++s->rw_idx == s->n_rewrites && s->scn->period_ns) {
				s->rw_idx = 0;
				s->rw_period += s->scn->period_ns;
			}
		} else if (t_kernel <= now && sim_kernel_next_is_core_event(s->kernel)) {
			/* Adding or removing an event re-schedules the CPU's PMU. */
			sim_perf_core_sched_out(s->perf, t_kernel);
			sim_kernel_step(s->kernel);
			sim_perf_core_sched_in(s->perf, t_kernel);
		} else if (t_kernel <= now) {
			sim_kernel_step(s->kernel);
		} else {
			return now;
		}
	}
}

static bool cpu_is_online(const struct sim *s, int cpu, int64_t t)
{
	const struct sim_cpu *c = &s->cpus[cpu];

	return !c->manual_offline && !sim_timeline_value_at(&c->offline, t);
}

/* ---- hw_ops ---- */

static int check_cpu(struct sim *s, int cpu, int64_t t)
{
	if (cpu < 0 || cpu >= s->n_cpus || !cpu_is_online(s, cpu, t))
		return -ENXIO;
	return 0;
}

static int op_read_msr(void *ctx, int cpu, uint32_t msr, uint64_t *ret_value)
{
	struct sim *s = ctx;
	uint64_t v;
	int64_t t;
	int r;

	pthread_mutex_lock(&s->lock);
	t = sync_time(s);
	r = check_cpu(s, cpu, t);
	if (r == 0 && s->fail_read.err && s->fail_read.cpu == cpu && s->fail_read.msr == msr)
		r = s->fail_read.err;
	if (r == 0)
		r = raw_read(s, cpu, msr, &v, t);
	pthread_mutex_unlock(&s->lock);
	if (r == 0)
		*ret_value = v;
	return r;
}

static int op_write_msr(void *ctx, int cpu, uint32_t msr, uint64_t value)
{
	struct sim *s = ctx;
	int64_t t;
	int r;

	pthread_mutex_lock(&s->lock);
	t = sync_time(s);
	r = check_cpu(s, cpu, t);
	if (r == 0 && s->refuse_writes)
		r = -EPERM;
	if (r == 0)
		r = raw_write(s, cpu, msr, value, t);
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int op_cpuid(void *ctx, int cpu, uint32_t leaf, uint32_t subleaf, struct hw_cpuid *ret_regs)
{
	struct sim *s = ctx;
	int r;

	pthread_mutex_lock(&s->lock);
	r = check_cpu(s, cpu, sync_time(s));
	pthread_mutex_unlock(&s->lock);
	if (r == 0)
		sim_model_cpuid(s->model, cpu, leaf, subleaf, ret_regs);
	return r;
}

static int op_enumerate(void *ctx, struct hw_cpu *cpus, int max, int *ret_n)
{
	struct sim *s = ctx;
	int64_t t;

	pthread_mutex_lock(&s->lock);
	t = sync_time(s);
	for (int cpu = 0; cpu < s->n_cpus && cpu < max; cpu++) {
		cpus[cpu] = s->cpus[cpu].topo;
		cpus[cpu].online = cpu_is_online(s, cpu, t);
	}
	pthread_mutex_unlock(&s->lock);
	*ret_n = s->n_cpus;
	return 0;
}

static int op_cpu_online(void *ctx, int cpu)
{
	struct sim *s = ctx;
	int r;

	if (cpu < 0 || cpu >= s->n_cpus)
		return -ENOENT;
	pthread_mutex_lock(&s->lock);
	r = cpu_is_online(s, cpu, sync_time(s));
	pthread_mutex_unlock(&s->lock);
	return r;
}

/* Kernel thermal_throttle counts, hardware.md §3.5: rising edges of status bit 0. */
static int cpu_attr(struct sim *s, int cpu, const char *relpath, int64_t t, uint64_t *ret_value)
{
	struct loc l;

	if (!(s->model->flags & SIM_F_INTEL) || !s->scn->kernel_thermal_throttle ||
	    check_cpu(s, cpu, t) < 0)
		return -ENOENT;
	l = loc_of(s, cpu);
	if (strcmp(relpath, "thermal_throttle/core_throttle_count") == 0) {
		*ret_value = sim_timeline_rises(&l.core->throttled, t + 1);
		return 0;
	}
	if ((s->model->flags & SIM_F_PTM) &&
	    strcmp(relpath, "thermal_throttle/package_throttle_count") == 0) {
		*ret_value = sim_timeline_rises(&l.socket->pkg_thermal, t + 1);
		return 0;
	}
	return -ENOENT;
}

static int op_read_cpu_attr(void *ctx, int cpu, const char *relpath, uint64_t *ret_value)
{
	struct sim *s = ctx;
	uint64_t v;
	int r;

	pthread_mutex_lock(&s->lock);
	r = cpu_attr(s, cpu, relpath, sync_time(s), &v);
	pthread_mutex_unlock(&s->lock);
	if (r == 0)
		*ret_value = v;
	return r;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/*
 * Remove the tree sim_attach_perf wrote.  Best effort: a process that
 * dropped root after writing it may no longer be allowed to.
 */
static void remove_pmu_root(struct sim *s)
{
	if (!s->pmu_root)
		return;
	nftw(s->pmu_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(s->pmu_root);
	s->pmu_root = NULL;
}

static void sim_free(struct sim *s);

static void op_close(void *ctx)
{
	sim_free(ctx);
}

static int64_t op_now_ns(void *ctx)
{
	struct sim *s = ctx;
	int64_t t;

	pthread_mutex_lock(&s->lock);
	t = now_ns(s);
	pthread_mutex_unlock(&s->lock);
	return t;
}

static const struct hw_ops sim_hw_ops = {
	.name = "sim",
	.read_msr = op_read_msr,
	.write_msr = op_write_msr,
	.cpuid = op_cpuid,
	.enumerate = op_enumerate,
	.cpu_online = op_cpu_online,
	.read_cpu_attr = op_read_cpu_attr,
	.close = op_close,
	.now_ns = op_now_ns,
};

void sim_bind(struct sim *sim, struct hw *ret_hw)
{
	*ret_hw = (struct hw){ .ops = &sim_hw_ops, .ctx = sim };
}

/* ---- building the machine from the scenario ---- */

static bool rule_hits_core(const struct sim_rule *r, int socket, int core_id)
{
	return (r->socket == SIM_ALL || r->socket == socket) &&
	       (r->core == SIM_ALL || r->core == SIM_UNSET || r->core == core_id);
}

/* OR every rule of kind covering (socket, core_id) into tl. */
static int paint_kind(struct sim *s, struct sim_timeline *tl, enum sim_rule_kind kind,
		      int socket, int core_id, int domain)
{
	for (int i = 0; i < s->scn->n_rules; i++) {
		const struct sim_rule *r = &s->scn->rules[i];
		int err;

		if (r->kind != kind || !rule_hits_core(r, socket, core_id))
			continue;
		if (kind == SIM_RULE_POWER_LIMIT && (int)r->domain != domain)
			continue;
		err = sim_timeline_paint_rule(tl, r, kind == SIM_RULE_TEMPERATURE ? r->celsius : 1,
					      kind == SIM_RULE_TEMPERATURE ? SIM_PAINT_SET :
									     SIM_PAINT_OR);
		if (err < 0)
			return err;
	}
	sim_timeline_finish(tl);
	return 0;
}

static int build_core(struct sim *s, int socket, int core_index)
{
	struct sim_core *c = &s->cores[socket * s->model->n_cores + core_index];
	int64_t period = s->scn->period_ns;
	int id = sim_model_core_id(s->model, core_index);
	int r;

	if (sim_timeline_init(&c->temp, period, IDLE_CELSIUS) < 0 ||
	    sim_timeline_init(&c->hot, period, 0) < 0 ||
	    sim_timeline_init(&c->throttled, period, 0) < 0)
		return -ENOMEM;
	r = paint_kind(s, &c->temp, SIM_RULE_TEMPERATURE, socket, id, 0);
	if (r == 0)
		r = sim_timeline_or_where(&c->hot, &c->temp, s->model->tjmax_c);
	sim_timeline_finish(&c->hot);
	if (r == 0)
		r = sim_timeline_or_where(&c->throttled, &c->hot, 1);
	if (r == 0)
		r = paint_kind(s, &c->throttled, SIM_RULE_CORE_THROTTLE, socket, id, 0);
	return r;
}

/* The OR of the conditions of cores whose bits are set in umask. */
static int build_umask_or(struct sim *s, int socket, struct sim_timeline *tl, bool throttled)
{
	int64_t period = s->scn->period_ns;
	int n = s->model->n_cores < N_CORE_UMASK_CORES ? s->model->n_cores : N_CORE_UMASK_CORES;

	for (int umask = 0; umask < N_UMASKS; umask++) {
		if (sim_timeline_init(&tl[umask], period, 0) < 0)
			return -ENOMEM;
		for (int k = 0; k < n; k++) {
			const struct sim_core *c = &s->cores[socket * s->model->n_cores + k];

			if ((umask & (1 << k)) &&
			    sim_timeline_or_where(&tl[umask], throttled ? &c->throttled : &c->hot,
						  1) < 0)
				return -ENOMEM;
		}
		sim_timeline_finish(&tl[umask]);
	}
	return 0;
}

static int build_socket(struct sim *s, int socket)
{
	struct sim_socket *sk = &s->sockets[socket];
	int64_t period = s->scn->period_ns;
	struct sim_timeline *tls[] = { &sk->dram, &sk->prochot, &sk->pkg_limit, &sk->dram_limit,
				       &sk->pkg_thermal, &sk->pkg_hot };
	int r = 0;

	for (size_t i = 0; i < sizeof(tls) / sizeof(tls[0]); i++)
		if (sim_timeline_init(tls[i], period, 0) < 0)
			return -ENOMEM;
	for (int c = 0; c < s->model->n_cores && r == 0; c++) {
		r = build_core(s, socket, c);
		if (r == 0)
			r = sim_timeline_or_where(&sk->pkg_thermal,
						  &s->cores[socket * s->model->n_cores + c].throttled, 1);
		if (r == 0)
			r = sim_timeline_or_where(&sk->pkg_hot,
						  &s->cores[socket * s->model->n_cores + c].hot, 1);
	}
	sim_timeline_finish(&sk->pkg_thermal);
	sim_timeline_finish(&sk->pkg_hot);
	if (r == 0)
		r = paint_kind(s, &sk->dram, SIM_RULE_DRAM_THROTTLE, socket, SIM_ALL, 0);
	if (r == 0)
		r = paint_kind(s, &sk->prochot, SIM_RULE_PROCHOT, socket, SIM_ALL, 0);
	if (r == 0)
		r = paint_kind(s, &sk->pkg_limit, SIM_RULE_POWER_LIMIT, socket, SIM_ALL,
			       SIM_DOMAIN_PACKAGE);
	if (r == 0)
		r = paint_kind(s, &sk->dram_limit, SIM_RULE_POWER_LIMIT, socket, SIM_ALL,
			       SIM_DOMAIN_DRAM);
	if (r == 0)
		r = build_umask_or(s, socket, sk->temp_or, false);
	if (r == 0)
		r = build_umask_or(s, socket, sk->throttled_or, true);
	return r;
}

/* Event rates (events/s) of a load on model m. */
static void load_rates(const struct sim_model *m, const struct sim_load *ld, int64_t rate[EV_COUNT])
{
	double ghz = ld->ghz > 0 ? ld->ghz : (double)m->ref_hz / 1e9;
	double cycles = ld->busy * ghz * 1e9, instructions = cycles * ld->ipc;

	rate[EV_CYCLES] = llround(cycles);
	rate[EV_INSTRUCTIONS] = llround(instructions);
	rate[EV_REF_CYCLES] = llround(ld->busy * (double)m->ref_hz);
	rate[EV_LLC_REFS] = llround(instructions * ld->llc_refs);
	rate[EV_LLC_MISSES] = llround(instructions * ld->llc_misses);
	rate[EV_BRANCHES] = llround(instructions * ld->branches);
	rate[EV_BRANCH_MISSES] = llround(instructions * ld->branch_misses);
}

static int paint_rates(struct sim_cpu *c, const struct sim_rule *r, const int64_t rate[EV_COUNT])
{
	for (int e = 0; e < EV_COUNT; e++)
		if (sim_timeline_paint_rule(&c->rate[e], r, rate[e], SIM_PAINT_SET) < 0)
			return -ENOMEM;
	return 0;
}

static int build_cpu(struct sim *s, int cpu)
{
	static const int64_t idle[EV_COUNT];
	struct sim_cpu *c = &s->cpus[cpu];
	int64_t period = s->scn->period_ns, rate[EV_COUNT];

	sim_model_topology(s->model, cpu, &c->topo, &c->core_index);
	load_rates(s->model, &sim_load_default, rate);
	for (int e = 0; e < EV_COUNT; e++)
		if (sim_timeline_init(&c->rate[e], period, rate[e]) < 0)
			return -ENOMEM;
	if (sim_timeline_init(&c->offline, period, 0) < 0)
		return -ENOMEM;
	for (int i = 0; i < s->scn->n_rules; i++) {
		const struct sim_rule *r = &s->scn->rules[i];

		if (r->kind != SIM_RULE_LOAD || (r->cpu != SIM_ALL && r->cpu != cpu))
			continue;
		load_rates(s->model, &r->load, rate);
		if (paint_rates(c, r, rate) < 0)
			return -ENOMEM;
	}
	for (int i = 0; i < s->scn->n_rules; i++) {
		const struct sim_rule *r = &s->scn->rules[i];

		if (r->kind != SIM_RULE_OFFLINE || (r->cpu != SIM_ALL && r->cpu != cpu))
			continue;
		if (paint_rates(c, r, idle) < 0 ||
		    sim_timeline_paint_rule(&c->offline, r, 1, SIM_PAINT_OR) < 0)
			return -ENOMEM;
	}
	for (int e = 0; e < EV_COUNT; e++)
		sim_timeline_finish(&c->rate[e]);
	sim_timeline_finish(&c->offline);
	return 0;
}

/* ---- checking the scenario against the model ---- */

static void core_id_list(const struct sim_model *m, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < m->n_cores && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%d", i ? ", " : "",
					 sim_model_core_id(m, i));
}

static int check_ids(const struct sim *s, const struct sim_rule *r, char *err, size_t errlen)
{
	const struct sim_model *m = s->model;
	char ids[512];

	if (r->socket >= m->n_sockets) {
		sim_scenario_error(s->scn, sim_rule_line(r, "socket"), "socket", err, errlen,
				   "expected 0 to %d or 'all' (model '%s' has %d sockets)",
				   m->n_sockets - 1, m->name, m->n_sockets);
		return -EINVAL;
	}
	if (r->core >= 0 && sim_model_core_index(m, r->core) < 0) {
		core_id_list(m, ids, sizeof(ids));
		sim_scenario_error(s->scn, sim_rule_line(r, "core"), "core", err, errlen,
				   "expected a core id of model '%s' (%s) or 'all'", m->name, ids);
		return -EINVAL;
	}
	/* A model without channels throttles the socket's memory as a whole. */
	if (r->channel >= 0 && m->n_imc > 0 && r->channel >= m->n_imc) {
		sim_scenario_error(s->scn, sim_rule_line(r, "channel"), "channel", err, errlen,
				   "expected 0 to %d or 'all' (model '%s' has %d memory channels "
				   "per socket)", m->n_imc - 1, m->name, m->n_imc);
		return -EINVAL;
	}
	if (r->cpu >= s->n_cpus) {
		sim_scenario_error(s->scn, sim_rule_line(r, "cpu"), "cpu", err, errlen,
				   "expected 0 to %d or 'all' (model '%s' has %d cpus)",
				   s->n_cpus - 1, m->name, s->n_cpus);
		return -EINVAL;
	}
	return 0;
}

/* Whether msr is a PCU box register of model m (sim_box.h; known before the boxes are built). */
static bool is_pcu_register(const struct sim_model *m, uint32_t msr)
{
	const struct xeon_uncore *xu = m->n_imc ? xeon_uncore_find(m->family, m->model) : NULL;
	const struct xeon_pcu_msr *a = xu ? xu->pcu_msr : NULL;

	return a && (msr == a->box_ctl || msr == a->filter ||
		     (msr >= a->ctl0 && msr < a->ctl0 + PCU_N_COUNTERS) ||
		     (msr >= a->ctr0 && msr < a->ctr0 + PCU_N_COUNTERS));
}

static int check_register(const struct sim *s, const struct sim_rule *r, char *err, size_t errlen)
{
	const struct reg_desc *d;
	int i;

	if (r->kind != SIM_RULE_PRESET && r->kind != SIM_RULE_REWRITE)
		return 0;
	if (is_pcu_register(s->model, r->msr))
		return 0;
	d = reg_find(s, r->msr, &i);
	if (d && d->write)
		return 0;
	sim_scenario_error(s->scn, sim_rule_line(r, "msr"), "msr", err, errlen,
			   "expected a writable register of model '%s', 0x%x is not one",
			   s->model->name, r->msr);
	return -EINVAL;
}

static int check_scenario(const struct sim *s, char *err, size_t errlen)
{
	for (int i = 0; i < s->scn->n_rules; i++) {
		const struct sim_rule *r = &s->scn->rules[i];
		int e = check_ids(s, r, err, errlen);

		if (e == 0)
			e = check_register(s, r, err, errlen);
		if (e == 0)
			e = sim_kernel_check(s->model, s->scn, r, err, errlen);
		if (e < 0)
			return e;
	}
	return 0;
}

static int cmp_rewrite(const void *a, const void *b)
{
	const struct sim_rule *ra = *(const struct sim_rule *const *)a;
	const struct sim_rule *rb = *(const struct sim_rule *const *)b;

	if (ra->at_ns != rb->at_ns)
		return ra->at_ns < rb->at_ns ? -1 : 1;
	return ra < rb ? -1 : ra > rb;
}

static int perf_read(void *ctx, int cpu, uint32_t msr, uint64_t *ret_value, int64_t t)
{
	return raw_read(ctx, cpu, msr, ret_value, t);
}

static bool perf_online(void *ctx, int cpu, int64_t t)
{
	return cpu_is_online(ctx, cpu, t);
}

static int perf_box_count(void *ctx, bool imc, int socket, int index, uint64_t config, int64_t t,
			  uint64_t *ret)
{
	struct sim *s = ctx;

	return sim_boxes_count(s->boxes, imc ? SIM_BOX_IMC : SIM_BOX_PCU, socket, index, config, t,
			       ret);
}

/* The kernel's perf reaches the registers as the kernel does: without the msr driver's checks. */
static const struct sim_perf_io perf_io = {
	.read = perf_read,
	.write = kernel_write,
	.online = perf_online,
	.box_count = perf_box_count,
};

/*
 * The kernel's uncore driver initialises each PCU box: BOX_CTL =
 * SNBEP_PMON_BOX_CTL_INT (reset controls and counters, FRZ_EN) on Sandy
 * Bridge-EP (snbep_uncore_msr_init_box), IVBEP_PMON_BOX_CTL_INT (the two
 * resets) from Ivy Bridge-EP on (ivbep_uncore_msr_init_box, which SKX and
 * ICX use).  The resets read back 0.
 */
static void boot_boxes(struct sim *s)
{
	const struct xeon_uncore *xu = s->boxes ? sim_boxes_uncore(s->boxes) : NULL;
	uint64_t v = PMON_BOX_CTL_RST_CTRL | PMON_BOX_CTL_RST_CTRS;

	if (!xu || !xu->pcu_msr)
		return;
	if (xu->pcu_msr->box_ctl == SNBEP_PCU_MSR_BOX_CTL)
		v |= PMON_BOX_CTL_FRZ_EN;
	for (int u = 0; u < s->model->n_sockets * sim_model_n_dies(s->model); u++)
		kernel_write(s, sim_model_unit_cpu(s->model, u), xu->pcu_msr->box_ctl, v, 0);
}

static int setup_agents(struct sim *s)
{
	struct sim_scenario *scn = s->scn;

	s->rewrites = calloc((size_t)scn->n_rules + 1, sizeof(*s->rewrites));
	if (!s->rewrites || sim_kernel_new(s->model, scn, kernel_write, s, &s->kernel) < 0)
		return -ENOMEM;
	if (s->boot == SIM_BOOT_LINUX) {
		sim_kernel_boot(s->kernel);
		boot_boxes(s);
	}
	if (sim_perf_new(s->model, s->kernel, s->boot == SIM_BOOT_LINUX, &perf_io, s, &s->perf) < 0)
		return -ENOMEM;
	for (int i = 0; i < scn->n_rules; i++) {
		if (scn->rules[i].kind == SIM_RULE_PRESET)
			apply_rule_write(s, &scn->rules[i], 0);
		else if (scn->rules[i].kind == SIM_RULE_REWRITE)
			s->rewrites[s->n_rewrites++] = &scn->rules[i];
	}
	qsort(s->rewrites, (size_t)s->n_rewrites, sizeof(*s->rewrites), cmp_rewrite);
	s->refuse_writes = scn->refuse_writes;
	return 0;
}

static int build(struct sim *s)
{
	const struct sim_model *m = s->model;

	s->n_cpus = sim_model_n_cpus(m);
	s->sockets = calloc((size_t)m->n_sockets, sizeof(*s->sockets));
	s->cores = calloc((size_t)(m->n_sockets * m->n_cores), sizeof(*s->cores));
	s->cpus = calloc((size_t)s->n_cpus, sizeof(*s->cpus));
	if (!s->sockets || !s->cores || !s->cpus)
		return -ENOMEM;
	for (int sk = 0; sk < m->n_sockets; sk++)
		if (build_socket(s, sk) < 0)
			return -ENOMEM;
	for (int cpu = 0; cpu < s->n_cpus; cpu++)
		if (build_cpu(s, cpu) < 0)
			return -ENOMEM;
	if (sim_boxes_new(m, s->scn, &s->boxes) < 0)
		return -ENOMEM;
	for (int sk = 0; s->boxes && sk < m->n_sockets; sk++) {
		struct sim_socket *so = &s->sockets[sk];
		const struct sim_timeline *cond[XEON_PCU_N_EVENTS] = {
			[XEON_PCU_CLOCKTICKS] = NULL,
			[XEON_PCU_PROCHOT_EXTERNAL] = &so->prochot,
			[XEON_PCU_PROCHOT_INTERNAL] = &so->pkg_hot,
			[XEON_PCU_FREQ_THERMAL] = &so->pkg_thermal,
			[XEON_PCU_FREQ_POWER] = &so->pkg_limit,
		};

		if (sim_boxes_set_socket(s->boxes, sk, cond, &so->dram_limit, s->scn->period_ns) < 0)
			return -ENOMEM;
	}
	return setup_agents(s);
}

static void sim_free(struct sim *s)
{
	if (!s)
		return;
	for (int i = 0; s->sockets && i < s->model->n_sockets; i++) {
		struct sim_socket *sk = &s->sockets[i];

		sim_timeline_free(&sk->dram);
		sim_timeline_free(&sk->prochot);
		sim_timeline_free(&sk->pkg_limit);
		sim_timeline_free(&sk->dram_limit);
		sim_timeline_free(&sk->pkg_thermal);
		sim_timeline_free(&sk->pkg_hot);
		for (int u = 0; u < N_UMASKS; u++) {
			sim_timeline_free(&sk->temp_or[u]);
			sim_timeline_free(&sk->throttled_or[u]);
		}
	}
	for (int i = 0; s->cores && i < s->model->n_sockets * s->model->n_cores; i++) {
		sim_timeline_free(&s->cores[i].temp);
		sim_timeline_free(&s->cores[i].hot);
		sim_timeline_free(&s->cores[i].throttled);
	}
	for (int i = 0; s->cpus && i < s->n_cpus; i++) {
		for (int e = 0; e < EV_COUNT; e++)
			sim_timeline_free(&s->cpus[i].rate[e]);
		sim_timeline_free(&s->cpus[i].offline);
	}
	free(s->sockets);
	free(s->cores);
	free(s->cpus);
	sim_perf_free(s->perf);
	remove_pmu_root(s);
	sim_kernel_free(s->kernel);
	sim_boxes_free(s->boxes);
	free(s->rewrites);
	sim_scenario_free(s->scn);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static void unknown_model(const char *name, char *err, size_t errlen)
{
	const char *const *names = sim_model_names();
	size_t used;

	used = (size_t)snprintf(err, errlen, "unknown simulated model '%s', expected one of: ", name);
	for (int i = 0; names[i] && used < errlen; i++)
		used += (size_t)snprintf(err + used, errlen - used, "%s%s", i ? ", " : "", names[i]);
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "unknown scenario 'NAME' in DIR; known: a, b, c" (the .ini files there, sorted). */
static void unknown_scenario(const char *name, const char *dir, char *err, size_t errlen)
{
	char *names[64];
	int n = 0;
	size_t used;
	struct dirent *de;
	DIR *d = opendir(dir);

	used = (size_t)snprintf(err, errlen, "unknown scenario '%s' in %s", name, dir);
	if (!d)
		return;
	while ((de = readdir(d)) && n < 64) {
		size_t len = strlen(de->d_name);

		if (len <= 4 || strcmp(de->d_name + len - 4, ".ini") != 0)
			continue;
		names[n] = strndup(de->d_name, len - 4);
		if (names[n])
			n++;
	}
	closedir(d);
	qsort(names, (size_t)n, sizeof(names[0]), compare_names);
	for (int i = 0; i < n; i++) {
		if (used < errlen)
			used += (size_t)snprintf(err + used, errlen - used, "%s%s", i ? ", " : "; known: ",
						 names[i]);
		free(names[i]);
	}
}

/* Parse "MODEL[:SCENARIO]" into the model and the scenario (loaded, or an idle one). */
static int open_spec(struct sim *s, const char *spec, const char *scenario_dir, char *err,
		     size_t errlen)
{
	char model[64], path[1024];
	const char *colon = strchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
	int r;

	snprintf(model, sizeof(model), "%.*s", (int)len, spec);
	s->model = len < sizeof(model) ? sim_model_find(model) : NULL;
	if (!s->model) {
		unknown_model(model, err, errlen);
		return -ENOENT;
	}
	if (!colon || !colon[1]) {
		s->scn = calloc(1, sizeof(*s->scn));
		if (!s->scn)
			return -ENOMEM;
		s->scn->kernel_thermal_throttle = true;
		return 0;
	}
	if (strchr(colon + 1, '/'))
		return sim_scenario_load(colon + 1, &s->scn, err, errlen);
	if (!scenario_dir)
		scenario_dir = UNCORED_SCENARIO_DIR;
	snprintf(path, sizeof(path), "%s/%s.ini", scenario_dir, colon + 1);
	r = sim_scenario_load(path, &s->scn, err, errlen);
	if (r == -ENOENT)
		unknown_scenario(colon + 1, scenario_dir, err, errlen);
	return r;
}

struct sim *sim_open(const char *spec, const char *scenario_dir, enum sim_clock clock,
		     char *err, size_t errlen)
{
	return sim_open_boot(spec, scenario_dir, clock, SIM_BOOT_LINUX, err, errlen);
}

struct sim *sim_open_boot(const char *spec, const char *scenario_dir, enum sim_clock clock,
			  enum sim_boot boot, char *err, size_t errlen)
{
	struct sim *s = calloc(1, sizeof(*s));
	int r;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->clock = clock;
	s->boot = boot;
	clock_gettime(CLOCK_MONOTONIC, &s->opened);
	r = open_spec(s, spec, scenario_dir, err, errlen);
	if (r == 0) {
		s->n_cpus = sim_model_n_cpus(s->model);
		r = check_scenario(s, err, errlen);
	}
	if (r == 0 && (r = build(s)) < 0)
		snprintf(err, errlen, "simulated machine: %s", strerror(-r));
	if (r < 0) {
		sim_free(s);
		return NULL;
	}
	return s;
}

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
	return (double)now_ns(sim) / (double)SIM_NS_PER_S;
}

struct dump_ctx {
	void (*fn)(void *arg, int cpu, uint32_t msr, uint64_t value);
	void *arg;
	int cpu;
};

static void dump_box(void *arg, uint32_t msr, uint64_t value)
{
	struct dump_ctx *dc = arg;

	dc->fn(dc->arg, dc->cpu, msr, value);
}

void sim_dump(struct sim *sim, void (*fn)(void *arg, int cpu, uint32_t msr, uint64_t value),
	      void *arg)
{
	int64_t t;

	pthread_mutex_lock(&sim->lock);
	t = sync_time(sim);
	for (int cpu = 0; cpu < sim->n_cpus; cpu++) {
		for (size_t i = 0; i < N_REGS; i++) {
			const struct reg_desc *d = &regs[i];
			struct loc l = loc_of(sim, cpu);

			if (!reg_present(sim, d) || !d->read || d->first == IA32_A_PMC0)
				continue;   /* absent, write-only, or an alias of IA32_PMCx */
			for (int n = 0; n < reg_count(sim, d); n++) {
				uint64_t v;

				if (d->read(sim, &l, n, t, &v) == 0)
					fn(arg, cpu, d->first + (uint32_t)n, v);
			}
		}
		if (sim->boxes) {
			struct dump_ctx dc = { fn, arg, cpu };

			sim_boxes_dump(sim->boxes, unit_of(sim, cpu), t, dump_box, &dc);
		}
	}
	pthread_mutex_unlock(&sim->lock);
}

int sim_ground_truth(struct sim *sim, bool uncore, int socket_or_cpu, uint8_t code,
		     uint8_t umask, bool edge, uint64_t *ret_count)
{
	struct count_src src;
	int r;

	pthread_mutex_lock(&sim->lock);
	if (uncore && code == SIM_UNCORE_CLOCK_CODE && umask == 0 && !edge) {
		src = (struct count_src){ .hz = sim->model->uclk_hz };
		r = socket_or_cpu < 0 || socket_or_cpu >= sim->model->n_sockets ||
		    !(sim->model->flags & SIM_F_NHM_UNCORE) ? -ENOENT : 0;
	} else if (uncore)
		r = socket_or_cpu < 0 || socket_or_cpu >= sim->model->n_sockets ? -ENOENT :
		    uncore_src(sim, socket_or_cpu, code, umask, edge, &src);
	else
		r = socket_or_cpu < 0 || socket_or_cpu >= sim->n_cpus ||
		    !(sim->model->flags & SIM_F_INTEL) ? -ENOENT :
		    core_src(sim, socket_or_cpu, code, umask, &src);
	if (r == 0)
		*ret_count = src_count(&src, sync_time(sim));
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
	pthread_mutex_lock(&sim->lock);
	r = sim_boxes_count(sim->boxes, imc ? SIM_BOX_IMC : SIM_BOX_PCU, socket * dies + die, channel,
			    config, sync_time(sim), ret_count);
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
	r = raw_write(sim, cpu, msr, value, sync_time(sim));
	pthread_mutex_unlock(&sim->lock);
	return r;
}

int sim_set_online(struct sim *sim, int cpu, bool online)
{
	if (cpu < 0 || cpu >= sim->n_cpus)
		return -ENXIO;
	pthread_mutex_lock(&sim->lock);
	sim->cpus[cpu].manual_offline = !online;
	sim_perf_hotplug(sim->perf, cpu, online, sync_time(sim));
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

void sim_refuse_writes(struct sim *sim, bool refuse)
{
	pthread_mutex_lock(&sim->lock);
	sim->refuse_writes = refuse;
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

/* ---- the kernel's perf_event interface (sim_perf.h) ---- */

static int perf_op_open(void *ctx, struct perf_event_attr *attr, pid_t pid, int cpu,
			int group_fd, unsigned long flags)
{
	struct sim *s = ctx;
	int r;

	pthread_mutex_lock(&s->lock);
	r = sim_perf_open(s->perf, attr, pid, cpu, group_fd, flags, sync_time(s));
	pthread_mutex_unlock(&s->lock);
	return r;
}

static ssize_t perf_op_read(void *ctx, int fd, void *buf, size_t len)
{
	struct sim *s = ctx;
	ssize_t r;

	pthread_mutex_lock(&s->lock);
	r = sim_perf_read(s->perf, fd, buf, len, sync_time(s));
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int perf_op_ioctl(void *ctx, int fd, unsigned long request, unsigned long arg)
{
	struct sim *s = ctx;
	int r;

	pthread_mutex_lock(&s->lock);
	r = sim_perf_ioctl(s->perf, fd, request, arg, sync_time(s));
	pthread_mutex_unlock(&s->lock);
	return r;
}

static int perf_op_close(void *ctx, int fd)
{
	struct sim *s = ctx;
	int r;

	pthread_mutex_lock(&s->lock);
	r = sim_perf_close(s->perf, fd, sync_time(s));
	pthread_mutex_unlock(&s->lock);
	return r;
}

static void perf_op_free(void *ctx)
{
	(void)ctx;   /* the sim is the caller's */
}

static const struct perf_sys_ops sim_perf_ops = {
	.name = "sim",
	.open = perf_op_open,
	.read = perf_op_read,
	.ioctl = perf_op_ioctl,
	.close = perf_op_close,
	.free = perf_op_free,
};

int sim_perf_sys(struct sim *sim, const char *root, struct perf_sys *ret_ps)
{
	return perf_sys_init(ret_ps, &sim_perf_ops, sim, root);
}

int sim_write_sysfs(struct sim *sim, const char *root, char *err, size_t errlen)
{
	return sim_perf_write_sysfs(sim->model, root, err, errlen);
}

int sim_attach_perf(struct sim *sim, struct hw *hw, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");
	struct perf_sys *ps;
	char root[4096];
	int r;

	snprintf(root, sizeof(root), "%s/uncored-sim-pmu.XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!mkdtemp(root)) {
		r = -errno;
		snprintf(err, errlen, "simulated PMU tree: mkdtemp %s: %s", root, strerror(-r));
		return r;
	}
	/* Readable after a privilege drop, as the real sysfs is. */
	chmod(root, 0755);
	remove_pmu_root(sim);
	sim->pmu_root = strdup(root);
	ps = calloc(1, sizeof(*ps));
	if (!sim->pmu_root || !ps) {
		free(ps);
		if (!sim->pmu_root)
			rmdir(root);
		remove_pmu_root(sim);
		snprintf(err, errlen, "simulated PMU tree: out of memory");
		return -ENOMEM;
	}
	r = sim_write_sysfs(sim, root, err, errlen);
	if (r == 0)
		r = sim_perf_sys(sim, root, ps);
	if (r < 0) {
		if (r == -ENOMEM)
			snprintf(err, errlen, "simulated perf: out of memory");
		free(ps);
		remove_pmu_root(sim);
		return r;
	}
	hw_set_perf(hw, ps);
	return 0;
}

static uid_t chown_uid;
static gid_t chown_gid;

static int chown_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return lchown(path, chown_uid, chown_gid) < 0 ? -errno : 0;
}

int sim_perf_tree_chown(struct sim *sim, uid_t uid, gid_t gid)
{
	if (!sim->pmu_root)
		return 0;
	chown_uid = uid;
	chown_gid = gid;
	return nftw(sim->pmu_root, chown_entry, 16, FTW_PHYS);
}

size_t sim_perf_open_events(struct sim *sim)
{
	size_t n;

	pthread_mutex_lock(&sim->lock);
	n = sim_perf_n_open(sim->perf);
	pthread_mutex_unlock(&sim->lock);
	return n;
}
