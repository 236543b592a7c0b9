/*
 * The simulator's server-uncore generations (sim_facts.h), written from
 * hardware-linux.md §4.1-§4.3 and hardware.md §4.3-§4.4: the PCU box
 * addresses of kernel uncore_snbep.c (SNBEP_PCU_MSR_PMON_*,
 * HSWEP_PCU_MSR_PMON_*; STATUS from likwid), the PCU codes of Intel's
 * perfmon JSON and PCM, the iMC codes of the perfmon uncore JSON and the
 * kernel's `clockticks` aliases.
 *
 * The iMC events listed are those the simulator generates (sim_box.h):
 * POWER_THROTTLE_CYCLES with every rank bit (0xff41, "the counter will
 * only increment by 1" when several ranks throttle) and
 * POWER_CRITICAL_THROTTLE_CYCLES 0x0086 up to Cascade Lake; the SLOT0/1
 * events (0x46, 0x86 umask 0x01/0x02) on Ice Lake-SP and Sapphire/Emerald
 * Rapids; RAPLBLK 0x0446, MR4BLKEN 0x0846, BW_SLOT0/1 0x0146/0x0246 and the
 * critical SLOT0/1 events 0x89 on Granite Rapids.  Any other config counts nothing.
 */
#include <stddef.h>

#include "sim_facts.h"

#define INTEL_FAMILY 6
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* hardware-linux.md §4.1. */
static const struct sim_pcu_addr pcu_snbep = {
	SNBEP_PCU_MSR_PMON_BOX_CTL, SNBEP_PCU_MSR_PMON_CTL0, SNBEP_PCU_MSR_PMON_BOX_FILTER,
	SNBEP_PCU_MSR_PMON_BOX_STATUS, SNBEP_PCU_MSR_PMON_CTR0,
};
static const struct sim_pcu_addr pcu_hswep = {
	HSWEP_PCU_MSR_PMON_BOX_CTL, HSWEP_PCU_MSR_PMON_CTL0, HSWEP_PCU_MSR_PMON_BOX_FILTER,
	HSWEP_PCU_MSR_PMON_BOX_STATUS, HSWEP_PCU_MSR_PMON_CTR0,
};

/*
 * By enum sim_pcu_cond: CLOCKTICKS, PROCHOT_EXTERNAL, PROCHOT_INTERNAL,
 * FREQ_MAX_LIMIT_THERMAL, FREQ_MAX_POWER (hardware-linux.md §4.2).
 */
#define PCU_UP_TO_ICX { 0x00, 0x0a, 0x09, 0x04, 0x05 }
#define PCU_FROM_SPR  { 0x01, 0x0a, 0x09, 0x04, 0x05 }  /* UNC_P_CLOCKTICKS 0x01 */

static const struct sim_imc_event imc_rank[] = {
	{ 0xff41, SIM_IMC_THERMAL_OR_POWER },
	{ 0x0086, SIM_IMC_CRITICAL },
};

static const struct sim_imc_event imc_slot[] = {
	{ 0x0146, SIM_IMC_THERMAL_OR_POWER },
	{ 0x0246, SIM_IMC_THERMAL_OR_POWER },
	{ 0x0186, SIM_IMC_CRITICAL },
	{ 0x0286, SIM_IMC_CRITICAL },
};

/*
 * GNR's BW_SLOT0/1 (0x0146/0x0246, hardware-linux.md §6) have no description
 * in Intel's file: the simulator counts them as the earlier slot events,
 * thermal or the DRAM power limit.
 */
static const struct sim_imc_event imc_gnr[] = {
	{ 0x0446, SIM_IMC_POWER },
	{ 0x0846, SIM_IMC_THERMAL },
	{ 0x0146, SIM_IMC_THERMAL_OR_POWER },
	{ 0x0246, SIM_IMC_THERMAL_OR_POWER },
	{ 0x0189, SIM_IMC_CRITICAL },
	{ 0x0289, SIM_IMC_CRITICAL },
};

/* SNB-EP: no DCLK GP event; the fixed counter (0xff) is the clock. */
static const struct sim_uncore_gen snbep = {
	"sandybridge-ep", &pcu_snbep, PCU_UP_TO_ICX, SIM_IMC_FIXED_CONFIG, imc_rank, N_OF(imc_rank),
	0, 0,
};
static const struct sim_uncore_gen ivt = {
	"ivybridge-ep", &pcu_snbep, PCU_UP_TO_ICX, 0x0000, imc_rank, N_OF(imc_rank), 0, 0,
};
static const struct sim_uncore_gen hsx_bdx = {
	"haswell-x/broadwell-x", &pcu_hswep, PCU_UP_TO_ICX, 0x0000, imc_rank, N_OF(imc_rank), 0, 0,
};
static const struct sim_uncore_gen skx = {
	"skylake-sp", &pcu_hswep, PCU_UP_TO_ICX, 0x0000, imc_rank, N_OF(imc_rank), 0, 0,
};
/*
 * ICX: DCLK 0x0000 (its fixed counter counts HCLK).  Current kernels (6.12
 * among them) register 3 channels per controller, 12 in all
 * (ICX_NUMBER_IMC_CHN, uncore_imc_N with N / 3 the controller and N % 3
 * the channel's offset): a 2021 stable fix raised it from 2, the 8 boxes
 * of older kernels.  A channel that is not in use can still be accessed
 * and reads 0 (the fix's own words, hardware-linux.md §6); the simulator
 * leaves the third of each controller without memory.
 */
static const struct sim_uncore_gen icx = {
	"icelake-x", &pcu_hswep, PCU_UP_TO_ICX, 0x0000, imc_slot, N_OF(imc_slot), 3, 2,
};
/* SPR, EMR, GNR: the PCU only through the discovery table; DCLK 0x0101. */
static const struct sim_uncore_gen spr = {
	"sapphirerapids-x", NULL, PCU_FROM_SPR, 0x0101, imc_slot, N_OF(imc_slot), 0, 0,
};
static const struct sim_uncore_gen gnr = {
	"graniterapids-x", NULL, PCU_FROM_SPR, 0x0101, imc_gnr, N_OF(imc_gnr), 0, 0,
};

static const struct {
	unsigned model;
	const struct sim_uncore_gen *gen;
} gens[] = {
	{ 0x2d, &snbep }, { 0x3e, &ivt }, { 0x3f, &hsx_bdx }, { 0x4f, &hsx_bdx }, { 0x56, &hsx_bdx },
	{ 0x55, &skx }, { 0x6a, &icx }, { 0x6c, &icx }, { 0x8f, &spr }, { 0xcf, &spr },
	{ 0xad, &gnr }, { 0xae, &gnr },
};

const struct sim_uncore_gen *sim_uncore_gen_find(unsigned family, unsigned model)
{
	if (family != INTEL_FAMILY)
		return NULL;
	for (size_t i = 0; i < N_OF(gens); i++)
		if (gens[i].model == model)
			return gens[i].gen;
	return NULL;
}
