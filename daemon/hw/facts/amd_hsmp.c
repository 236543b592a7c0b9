/*
 * HSMP reply decoding (amd_hsmp.h).  The reason names are hardware-amd.md
 * §1.4's proposal: bit 0 cHTC-Active thermal, 1 PROCHOT, 2 TDC (CPU rail)
 * current, 3 PPT power, 4 OPN Max (the part's rated maximum: not a
 * throttle, not accrued), 5 reliability, 6 APML agent bmc, 7 HSMP agent
 * host_software, 8 VRHOT vr_hot, 9 TDC (VDD_MEM_S3) current, 10 SOC and
 * DIMM power.
 */
#include <stddef.h>

#include "amd_hsmp.h"

static const char *const by_bit[] = {
	"thermal", "prochot", "current", "power", NULL, "reliability", "bmc", "host_software",
	"vr_hot", "current", "power",
};

static const char *const reasons[] = {
	"thermal", "prochot", "current", "power", "reliability", "bmc", "host_software", "vr_hot",
	NULL,
};

const char *amd_hsmp_limit_reason(unsigned bit)
{
	return bit < sizeof(by_bit) / sizeof(by_bit[0]) ? by_bit[bit] : NULL;
}

const char *const *amd_hsmp_reasons(void)
{
	return reasons;
}

/* Send id with n_args arguments (arg the first) and one reply word. */
static int get(struct hw *hw, int socket, uint32_t id, int n_args, uint32_t arg, uint32_t *ret)
{
	struct hw_hsmp_msg m = { .msg_id = id, .num_args = (uint16_t)n_args, .response_sz = 1,
				 .sock_ind = (uint16_t)socket };
	int r;

	m.args[0] = arg;
	r = hw_hsmp(hw, &m);
	if (r == 0)
		*ret = m.args[0];
	return r;
}

int amd_hsmp_get(struct hw *hw, int socket, uint32_t id, uint32_t *ret_value)
{
	return get(hw, socket, id, 0, 0, ret_value);
}

int amd_hsmp_get_arg(struct hw *hw, int socket, uint32_t id, uint32_t arg, uint32_t *ret_value)
{
	return get(hw, socket, id, 1, arg, ret_value);
}

uint32_t amd_hsmp_dimm_addr(unsigned channel, unsigned slot, unsigned sensor)
{
	return 0x80u | (sensor & 1u) << 6 | (slot & 1u) << 4 | (channel & 0xfu);
}

double amd_hsmp_dimm_celsius(uint32_t reply)
{
	uint32_t raw = reply >> 21 & 0x7ffu;

	return raw <= 0x3ffu ? raw / 4.0 : ((double)raw - 0x800) / 4.0;
}
