/*
 * The AMD EPYC generation table (amd_epyc.h).  Every row is from
 * hardware-amd.md: family/model ranges and kernel flags §0; HSMP protocol
 * and supported messages §1.7 (esmi's lookup tables); k10temp Tccd
 * channels §2.1 (linux-6.12 k10temp.c:463-508: 19h 00h-01h eight, 19h
 * 10h-1Fh and A0h-AFh twelve, no case for other Milan models, Trento or
 * family 1Ah EPYC); ref-cycles §3.3 (mapped from Zen 4 on).
 */
#include <string.h>

#include "amd_epyc.h"

static const struct amd_epyc table[] = {
	/* Zen 2: no mainline HSMP binding (only the out-of-tree driver, §1.7) */
	{ "rome", 0x17, 0x31, 0x31, 2, 0, false, false, false, 8, false },
	/*
	 * Zen 3, HSMP protocol 2: 0x01-0x14 (no freq-limit source, no DIMM); two
	 * rows because k10temp lists Tccd only for 00h-01h.  By name, the first.
	 */
	{ "milan", 0x19, 0x00, 0x01, 3, 2, true, false, false, 8, false },
	{ "milan", 0x19, 0x02, 0x0f, 3, 2, true, false, false, 0, false },
	/* Trento, protocol 4: 0x01-0x15 */
	{ "trento", 0x19, 0x30, 0x3f, 3, 4, true, false, false, 0, false },
	/* Zen 4, protocol 5: 0x01-0x22 except 0x15 */
	{ "genoa", 0x19, 0x10, 0x1f, 4, 5, true, true, true, 12, true },
	{ "bergamo", 0x19, 0xa0, 0xaf, 4, 5, true, true, true, 12, true },
	/* Zen 5 (1Ah 00h-1Fh), protocol 7: 0x01-0x22 except 0x15 */
	{ "turin", 0x1a, 0x00, 0x1f, 5, 7, true, true, true, 0, true },
	/* 1Ah 50h-5Fh ("Zen6" in esmi), protocol 7 with the metrics table */
	{ "zen6", 0x1a, 0x50, 0x5f, 6, 7, true, true, true, 0, true },
};

const struct amd_epyc *amd_epyc_find(unsigned family, unsigned model)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].family == family && model >= table[i].model_first &&
		    model <= table[i].model_last)
			return &table[i];
	return NULL;
}

const struct amd_epyc *amd_epyc_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(table[i].microarch, name) == 0)
			return &table[i];
	return NULL;
}

const struct amd_epyc *amd_epyc_at(size_t i)
{
	return i < sizeof(table) / sizeof(table[0]) ? &table[i] : NULL;
}
