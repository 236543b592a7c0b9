/*
 * The simulated Nehalem/Westmere uncore PMU (hardware.md §1.3-1.7), one
 * per socket, and its thermal events (§2.1): see sim.c for the
 * simulator's choices.
 */
#include <errno.h>

#include "sim_machine.h"

/* ---- event sources ---- */

int sim_uncore_src(const struct sim *s, int socket, uint8_t code, uint8_t umask, bool edge,
		   struct count_src *ret)
{
	const struct sim_socket *sk = &s->sockets[socket];
	bool core_umask = umask >= 1 && umask < N_UMASKS;

	if (!(s->model->flags & SIM_F_UNCORE_THERMAL))
		return -ENOENT;
	*ret = (struct count_src){ .hz = s->model->uclk_hz, .edge = edge };
	if (code == NHM_UNC_EV_DRAM_THERMAL_THROTTLED && umask == 0x01)
		ret->tl = &sk->dram;
	else if (code == NHM_UNC_EV_PROCHOT_ASSERTION && umask == 0x01)
		*ret = (struct count_src){ .tl = &sk->prochot, .edge = true };
	else if (code == NHM_UNC_EV_THERMAL_THROTTLING_TEMP && core_umask)
		ret->tl = &sk->temp_or[umask];
	else if (code == NHM_UNC_EV_THERMAL_THROTTLED_TEMP && core_umask)
		ret->tl = &sk->throttled_or[umask];
	else if (code == NHM_UNC_EV_PROCHOT_CORE && core_umask)
		ret->tl = &sk->prochot;
	else
		return -ENOENT;
	return 0;
}

/* ---- uncore registers (per socket), hardware.md §1.3-1.7 ---- */

static bool unc_pmc_counting(const struct sim_uncore *u, int n)
{
	return (u->evtsel[n] & NHM_UNC_EVTSEL_ENABLE) && (u->global_ctrl & NHM_UNC_GLOBAL_CTL_EN_PC(n));
}

static bool unc_fixed_counting(const struct sim_uncore *u)
{
	return (u->fixed_ctrl & NHM_UNC_FIXED_CTR_CTL_EN) && (u->global_ctrl & NHM_UNC_GLOBAL_CTL_EN_FC);
}

static uint64_t unc_pmc_value(const struct sim *s, const struct loc *l, int n, int64_t t)
{
	const struct sim_uncore *u = &l->socket->unc;
	struct count_src src;
	uint64_t sel = u->evtsel[n];
	bool known = sim_uncore_src(s, l->cpu->topo.socket, sel & NHM_UNC_EVTSEL_EVENT,
				    (sel >> NHM_UNC_EVTSEL_UMASK_SHIFT) & 0xff,
				    sel & NHM_UNC_EVTSEL_EDGE, &src) == 0;

	return ctr_value(&u->pmc[n], known ? &src : NULL, unc_pmc_counting(u, n), t,
			 NHM_UNC_CTR_BITS);
}

static uint64_t unc_fixed_value(const struct sim *s, const struct loc *l, int64_t t)
{
	const struct sim_uncore *u = &l->socket->unc;
	struct count_src src = { .hz = s->model->uclk_hz };

	return ctr_value(&u->fixed, &src, unc_fixed_counting(u), t, NHM_UNC_CTR_BITS);
}

/* Fold the counts so far into every uncore counter of the socket. */
static void unc_rebase(const struct sim *s, const struct loc *l, int64_t t)
{
	struct sim_uncore *u = &l->socket->unc;

	for (int n = 0; n < NHM_UNC_NUM_COUNTERS; n++)
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
	l->socket->unc.fixed = (struct sim_ctr){ v & width_mask(NHM_UNC_CTR_BITS), t };
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
	l->socket->unc.pmc[i] = (struct sim_ctr){ v & width_mask(NHM_UNC_CTR_BITS), t };
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
	u->evtsel[i] = v & ~NHM_UNC_EVTSEL_OCC_CTR_RST;
	return 0;
}

#define UNC SIM_F_NHM_UNCORE

const struct reg_desc sim_uncore_regs[] = {
	{ NHM_UNC_PERF_GLOBAL_CTL, 1, UNC, read_unc_global, write_unc_global },
	{ NHM_UNC_PERF_GLOBAL_STATUS, 1, UNC, sim_read_zero, NULL },
	{ NHM_UNC_PERF_GLOBAL_OVF_CTRL, 1, UNC, NULL, sim_write_ignored },
	{ NHM_UNC_FIXED_CTR, 1, UNC, read_unc_fixed, write_unc_fixed },
	{ NHM_UNC_FIXED_CTR_CTRL, 1, UNC, read_unc_fixed_ctrl, write_unc_fixed_ctrl },
	{ NHM_UNC_ADDR_OPCODE_MATCH, 1, UNC, read_unc_match, write_unc_match },
	{ NHM_UNC_UNCORE_PMC0, NHM_UNC_NUM_COUNTERS, UNC, read_unc_pmc, write_unc_pmc },
	{ NHM_UNC_PERFEVTSEL0, NHM_UNC_NUM_COUNTERS, UNC, read_unc_evtsel, write_unc_evtsel },
};

const size_t sim_n_uncore_regs = sizeof(sim_uncore_regs) / sizeof(sim_uncore_regs[0]);
