/*
 * The server-uncore table: see xeon_uncore.h.  Sources are those of
 * hardware-linux.md §4.1-§4.3 (kernel uncore_snbep.c, intel/perfmon uncore
 * JSON); "(exp)" events there are Intel's experimental ones.
 *
 * iMC throttle events: on SNB-EP … CLX the rank umasks combine, "If
 * multiple ranks are selected and are being throttled at the same time,
 * the counter will only increment by 1", so umask 0xff counts the cycles
 * any rank of the channel is throttled.  From ICX on the events are per
 * DIMM slot and no source says that slot umasks combine: each slot is
 * counted on its own (a slot label).  Granite Rapids has its cause-split
 * events.
 */
#include <stddef.h>

#include "msr.h"
#include "xeon_uncore.h"

#define INTEL_FAMILY 6

static const struct xeon_pcu_msr snbep_pcu = {
	SNBEP_PCU_MSR_BOX_CTL, SNBEP_PCU_MSR_CTL0, SNBEP_PCU_MSR_FILTER, SNBEP_PCU_MSR_STATUS,
	SNBEP_PCU_MSR_CTR0,
};

static const struct xeon_pcu_msr hswep_pcu = {
	HSWEP_PCU_MSR_BOX_CTL, HSWEP_PCU_MSR_CTL0, HSWEP_PCU_MSR_FILTER, HSWEP_PCU_MSR_STATUS,
	HSWEP_PCU_MSR_CTR0,
};

/* POWER_THROTTLE_CYCLES with every rank bit, POWER_CRITICAL_THROTTLE_CYCLES (§4.3). */
static const struct xeon_imc_event rank_events[] = {
	{ "power_throttle_cycles", 0x41, 0xff, false, XEON_CAUSE_THERMAL_OR_POWER, false, 0 },
	{ "power_critical_throttle_cycles", 0x86, 0x00, true, XEON_CAUSE_THERMAL_OR_POWER, false,
	  0 },
};

#define N_RANK_EVENTS (sizeof(rank_events) / sizeof(rank_events[0]))

/* UNC_P_CLOCKTICKS 0x00; PROCHOT_EXTERNAL 0x0A, INTERNAL 0x09; FREQ_MAX_LIMIT_THERMAL 0x04, POWER 0x05. */
#define PCU_CODES_CLK00 { 0x00, 0x0a, 0x09, 0x04, 0x05 }
/* SPR, EMR, GNR: UNC_P_CLOCKTICKS is 0x01. */
#define PCU_CODES_CLK01 { 0x01, 0x0a, 0x09, 0x04, 0x05 }

static const struct xeon_uncore snbep = {
	.generation = "sandybridge-ep", .pcu_msr = &snbep_pcu, .pcu_code = PCU_CODES_CLK00,
	/* SNB-EP has no DCLK GP event: the fixed counter, config 0xff (`clockticks`). */
	.imc_clock_code = 0xff, .imc_clock_umask = 0x00,
	.imc_events = rank_events, .n_imc_events = N_RANK_EVENTS,
};

static const struct xeon_uncore ivt = {
	.generation = "ivybridge-ep", .pcu_msr = &snbep_pcu, .pcu_code = PCU_CODES_CLK00,
	.imc_clock_code = 0x00, .imc_clock_umask = 0x00,
	.imc_events = rank_events, .n_imc_events = N_RANK_EVENTS,
};

static const struct xeon_uncore hsx_bdx = {
	.generation = "haswell-x/broadwell-x", .pcu_msr = &hswep_pcu, .pcu_code = PCU_CODES_CLK00,
	.imc_clock_code = 0x00, .imc_clock_umask = 0x00,
	.imc_events = rank_events, .n_imc_events = N_RANK_EVENTS,
};

static const struct xeon_uncore skx = {
	.generation = "skylake-sp", .pcu_msr = &hswep_pcu, .pcu_code = PCU_CODES_CLK00,
	.imc_clock_code = 0x00, .imc_clock_umask = 0x00,
	.imc_events = rank_events, .n_imc_events = N_RANK_EVENTS,
};

/*
 * ICX, SPR, EMR: POWER_THROTTLE_CYCLES.SLOT0/1 0x46 umask 0x01/0x02 and
 * POWER_CRIT_THROTTLE_CYCLES.SLOT0/1 0x86 umask 0x01/0x02 (§4.3; the
 * critical text is a copy of the other's, §4.5 item 1).
 */
static const struct xeon_imc_event slot_events[] = {
	{ "power_throttle_cycles_slot0", 0x46, 0x01, false, XEON_CAUSE_THERMAL_OR_POWER, true, 0 },
	{ "power_throttle_cycles_slot1", 0x46, 0x02, false, XEON_CAUSE_THERMAL_OR_POWER, true, 1 },
	{ "power_crit_throttle_cycles_slot0", 0x86, 0x01, true, XEON_CAUSE_THERMAL_OR_POWER, true,
	  0 },
	{ "power_crit_throttle_cycles_slot1", 0x86, 0x02, true, XEON_CAUSE_THERMAL_OR_POWER, true,
	  1 },
};

#define N_SLOT_EVENTS (sizeof(slot_events) / sizeof(slot_events[0]))

/* ICX: DCLK is the GP event 0x0000; its fixed counter counts HCLK (§4.3). */
static const struct xeon_uncore icx = {
	.generation = "icelake-x", .pcu_msr = &hswep_pcu, .pcu_code = PCU_CODES_CLK00,
	.imc_clock_code = 0x00, .imc_clock_umask = 0x00,
	.imc_events = slot_events, .n_imc_events = N_SLOT_EVENTS,
};

/* SPR, EMR: DCLK 0x0101 (§4.3). */
static const struct xeon_uncore spr = {
	.generation = "sapphirerapids-x", .pcu_msr = NULL, .pcu_code = PCU_CODES_CLK01,
	.imc_clock_code = 0x01, .imc_clock_umask = 0x01,
	.imc_events = slot_events, .n_imc_events = N_SLOT_EVENTS,
};

/*
 * Granite Rapids tells the causes apart (§4.3, §4.5 item 3):
 * POWER_THROTTLE_CYCLES.RAPLBLK "RAPL is throttling" and .MR4BLKEN "MR4
 * temp reading is throttling".  Beside them POWER_THROTTLE_CYCLES.BW_SLOT0/1
 * (0x46 umask 0x01/0x02, the ICX…EMR slot encoding, §6) have no
 * description: cause thermal_or_power, per slot.  Its critical events,
 * POWER_CRITICAL_THROTTLE_CYCLES.SLOT0/1 0x89 umask 0x01/0x02, say no
 * cause; nothing says their slot umasks combine, so each slot is counted
 * on its own, as from ICX on.
 */
static const struct xeon_imc_event gnr_events[] = {
	{ "power_throttle_cycles_raplblk", 0x46, 0x04, false, XEON_CAUSE_POWER, false, 0 },
	{ "power_throttle_cycles_mr4blken", 0x46, 0x08, false, XEON_CAUSE_THERMAL, false, 0 },
	{ "power_throttle_cycles_bw_slot0", 0x46, 0x01, false, XEON_CAUSE_THERMAL_OR_POWER, true,
	  0 },
	{ "power_throttle_cycles_bw_slot1", 0x46, 0x02, false, XEON_CAUSE_THERMAL_OR_POWER, true,
	  1 },
	{ "power_critical_throttle_cycles_slot0", 0x89, 0x01, true, XEON_CAUSE_THERMAL_OR_POWER,
	  true, 0 },
	{ "power_critical_throttle_cycles_slot1", 0x89, 0x02, true, XEON_CAUSE_THERMAL_OR_POWER,
	  true, 1 },
};

static const struct xeon_uncore gnr = {
	.generation = "graniterapids-x", .pcu_msr = NULL, .pcu_code = PCU_CODES_CLK01,
	.imc_clock_code = 0x01, .imc_clock_umask = 0x01,
	.imc_events = gnr_events, .n_imc_events = sizeof(gnr_events) / sizeof(gnr_events[0]),
};

static const struct {
	unsigned model;
	const struct xeon_uncore *uncore;
} models[] = {
	{ 0x2d, &snbep },
	{ 0x3e, &ivt },
	{ 0x3f, &hsx_bdx },
	{ 0x4f, &hsx_bdx },
	{ 0x56, &hsx_bdx },
	{ 0x55, &skx },
	{ 0x6a, &icx },
	{ 0x6c, &icx },
	{ 0x8f, &spr },
	{ 0xcf, &spr },
	{ 0xad, &gnr },
	{ 0xae, &gnr },
};

static const struct xeon_uncore *override;

const struct xeon_uncore *xeon_uncore_find(unsigned family, unsigned model)
{
	if (family != INTEL_FAMILY)
		return NULL;
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (models[i].model == model)
			return override ? override : models[i].uncore;
	return NULL;
}

void xeon_uncore_override(const struct xeon_uncore *u)
{
	override = u;
}

const char *xeon_dram_cause_name(enum xeon_dram_cause cause)
{
	switch (cause) {
	case XEON_CAUSE_THERMAL:
		return "thermal";
	case XEON_CAUSE_POWER:
		return "power";
	case XEON_CAUSE_THERMAL_OR_POWER:
		break;
	}
	return "thermal_or_power";
}
