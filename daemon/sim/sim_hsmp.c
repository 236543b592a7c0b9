/*
 * The simulated /dev/hsmp (hardware-amd.md §1, §7): the 6.12 amd_hsmp
 * driver in front of the SMU firmware of the model's protocol.
 *
 * Kernel (linux-6.12 hsmp.c): id < 1 or beyond its table (0x25) -ENOMSG;
 * num_args and response_sz must equal its table exactly, else -EINVAL;
 * sock_ind beyond the sockets -ENODEV; the ioctl command is not looked at.
 * The table below holds the sizes §1.3 gives; uncored sends no other id,
 * and the simulator answers any other with -EINVAL.
 * Firmware (esmi's lookup tables, §1.7): protocol 2 answers 0x01-0x14;
 * 5 and 7 (Genoa, Turin) 0x01-0x22 except 0x15; any other id comes back
 * 0xFE, which the driver turns into -ENOMSG.  A model without HSMP (Zen 2:
 * no mainline driver) has no /dev/hsmp: -ENOENT.
 *
 * State: GET_PROC_HOT is 1 while a [prochot.N] rule holds on the socket;
 * GET_SOCKET_FREQ_LIMIT gives the reference clock in MHz, source bit 1
 * (PROCHOT) then, bit 3 (PPT Limit, the package power limit, §1.4) while a
 * package [power-limit.N] rule holds, and the bit of every
 * [frequency-limit.N] rule that holds.
 * DIMMs (§1.5): address bit 7 mode 1, bit 6 sensor, bit 4 DIMM, bits 3:0
 * channel; GET_DIMM_THERMAL gives the temperature as 11-bit two's
 * complement quarter degrees in [31:21], the age in [16:8] and the address
 * in [7:0]; GET_DIMM_TEMP_RANGE range [2:0] 1 (1X) or 5 (2X) and the
 * refresh bit [3].
 * Simulator's choices: the SMU version 0x00450c00 (major 0x45, minor
 * 0x0c); replies with no latency; one two-sensor DIMM (slot 0) on each of
 * the model's DIMM channels, both sensors alike, 40 C outside every
 * [dimm-temperature.N] rule; refresh 2X from 85 C (JEDEC's extended range);
 * readings 10 ms old; an empty slot or a mode-0 address answered -EINVAL.
 */
#include <errno.h>

#include "sim_machine.h"

#define KERNEL_MSG_ID_MAX   0x25
#define SMU_VERSION         0x00450c00u
#define FREQ_LIMIT_MHZ_SHIFT 16
#define SOURCE_PROCHOT      (1u << 1)
#define SOURCE_PPT          (1u << 3)
#define DIMM_IDLE_C         40
#define DIMM_2X_FROM_C      85
#define DIMM_AGE_MS         10
#define DIMM_ADDR_MODE1     0x80u
#define DIMM_ADDR_SLOT      0x10u
#define DIMM_ADDR_CHANNEL   0x0fu
#define DIMM_RANGE_1X       1u
#define DIMM_RANGE_2X       5u
#define DIMM_REFRESH_2X     (1u << 3)

enum {
	MSG_TEST = 0x01, MSG_SMU_VER = 0x02, MSG_PROTO_VER = 0x03, MSG_PROC_HOT = 0x0B,
	MSG_FREQ_LIMIT = 0x19, MSG_DIMM_RANGE = 0x16, MSG_DIMM_THERMAL = 0x18,
};

/* num_args / response_sz of the driver's table, by id (§1.3); 0xff: not known here. */
static const struct { unsigned char args, resp; } sizes[KERNEL_MSG_ID_MAX + 1] = {
	[0x01] = { 1, 1 }, [0x02] = { 0, 1 }, [0x03] = { 0, 1 }, [0x04] = { 0, 1 },
	[0x05] = { 0xff, 0xff }, [0x06] = { 0, 1 }, [0x07] = { 0, 1 }, [0x08] = { 0xff, 0xff },
	[0x09] = { 0xff, 0xff }, [0x0A] = { 1, 1 }, [0x0B] = { 0, 1 }, [0x0C] = { 0xff, 0xff },
	[0x0D] = { 0xff, 0xff }, [0x0E] = { 0xff, 0xff }, [0x0F] = { 0, 2 }, [0x10] = { 0, 1 },
	[0x11] = { 0xff, 0xff }, [0x12] = { 0xff, 0xff }, [0x13] = { 0xff, 0xff },
	[0x14] = { 0, 1 }, [0x15] = { 0, 1 }, [0x16] = { 1, 1 }, [0x17] = { 1, 1 },
	[0x18] = { 1, 1 }, [0x19] = { 0, 1 }, [0x1A] = { 1, 1 }, [0x1B] = { 0xff, 0xff },
	[0x1C] = { 0, 1 }, [0x1D] = { 0xff, 0xff }, [0x1E] = { 0xff, 0xff },
	[0x1F] = { 0xff, 0xff }, [0x20] = { 0xff, 0xff }, [0x21] = { 0xff, 0xff },
	[0x22] = { 0xff, 0xff }, [0x23] = { 0, 1 }, [0x24] = { 0, 0 }, [0x25] = { 0, 2 },
};

/* Whether the firmware of protocol proto answers id (esmi's lookup tables). */
static bool firmware_has(unsigned proto, uint32_t id)
{
	if (proto == 2)
		return id >= 0x01 && id <= 0x14;
	return id >= 0x01 && id <= 0x22 && id != 0x15;
}

bool sim_hsmp_has_prochot(const struct sim_model *m)
{
	return m->hsmp_proto && firmware_has((unsigned)m->hsmp_proto, MSG_PROC_HOT);
}

bool sim_hsmp_has_freq_limit(const struct sim_model *m)
{
	return m->hsmp_proto && firmware_has((unsigned)m->hsmp_proto, MSG_FREQ_LIMIT);
}

bool sim_hsmp_has_dimms(const struct sim_model *m)
{
	return m->hsmp_proto && firmware_has((unsigned)m->hsmp_proto, MSG_DIMM_THERMAL) &&
	       m->n_dimm_channels > 0;
}

/* Whether rule r holds at t (its window and duty cycle in the scenario's period). */
static bool rule_holds(const struct sim *s, const struct sim_rule *r, int64_t t)
{
	struct sim_timeline tl;
	bool on = false;

	if (sim_timeline_init(&tl, s->scn->period_ns, 0) < 0)
		return false;
	if (sim_timeline_paint_rule(&tl, r, 1, SIM_PAINT_SET) == 0) {
		sim_timeline_finish(&tl);
		on = sim_timeline_value_at(&tl, t) != 0;
	}
	sim_timeline_free(&tl);
	return on;
}

/* The source bits of the [frequency-limit.N] rules that hold on socket at t. */
static uint32_t limit_bits(const struct sim *s, int socket, int64_t t)
{
	uint32_t v = 0;

	for (int i = 0; i < s->scn->n_rules; i++) {
		const struct sim_rule *r = &s->scn->rules[i];

		if (r->kind == SIM_RULE_FREQ_LIMIT && (r->socket == SIM_ALL || r->socket == socket) &&
		    rule_holds(s, r, t))
			v |= 1u << r->bit;
	}
	return v;
}

/* The temperature of DIMM addr of socket at t, or -EINVAL for no such DIMM. */
static int dimm_celsius(const struct sim *s, int socket, uint32_t addr, int64_t t, int *ret)
{
	int channel = (int)(addr & DIMM_ADDR_CHANNEL), slot = (addr & DIMM_ADDR_SLOT) ? 1 : 0;

	if (!(addr & DIMM_ADDR_MODE1) || (addr & ~0xffu) || slot >= SIM_DIMM_SLOTS ||
	    channel >= s->model->n_dimm_channels)
		return -EINVAL;
	*ret = DIMM_IDLE_C;
	for (int i = 0; i < s->scn->n_rules; i++) {
		const struct sim_rule *r = &s->scn->rules[i];

		if (r->kind == SIM_RULE_DIMM_TEMP && (r->socket == SIM_ALL || r->socket == socket) &&
		    (r->channel == SIM_ALL || r->channel == channel) &&
		    (r->slot == SIM_ALL || r->slot == slot) && rule_holds(s, r, t))
			*ret = r->celsius;
	}
	return 0;
}

/* A DIMM message's reply, or -EINVAL for an address with no DIMM. */
static int dimm_reply(const struct sim *s, struct hw_hsmp_msg *m, int64_t t)
{
	uint32_t addr = m->args[0];
	int c, r = dimm_celsius(s, m->sock_ind, addr, t, &c);

	if (r < 0)
		return r;
	if (m->msg_id == MSG_DIMM_RANGE)
		m->args[0] = c >= DIMM_2X_FROM_C ? DIMM_RANGE_2X | DIMM_REFRESH_2X : DIMM_RANGE_1X;
	else
		m->args[0] = ((uint32_t)(c * 4) & 0x7ffu) << 21 | (uint32_t)DIMM_AGE_MS << 8 | addr;
	return 0;
}

/* The firmware's reply to a supported id. */
static int reply(const struct sim *s, struct hw_hsmp_msg *m, int64_t t)
{
	const struct sim_socket *sk = &s->sockets[m->sock_ind];
	bool prochot = sim_timeline_value_at(&sk->prochot, t) != 0;
	bool ppt = sim_timeline_value_at(&sk->pkg_limit, t) != 0;

	switch (m->msg_id) {
	case MSG_TEST:
		m->args[0] = m->args[0] + 1;
		break;
	case MSG_SMU_VER:
		m->args[0] = SMU_VERSION;
		break;
	case MSG_PROTO_VER:
		m->args[0] = (uint32_t)s->model->hsmp_proto;
		break;
	case MSG_PROC_HOT:
		m->args[0] = prochot;
		break;
	case MSG_FREQ_LIMIT:
		m->args[0] = (uint32_t)(s->model->ref_hz / 1000000) << FREQ_LIMIT_MHZ_SHIFT |
			     (prochot ? SOURCE_PROCHOT : 0) | (ppt ? SOURCE_PPT : 0) |
			     limit_bits(s, m->sock_ind, t);
		break;
	case MSG_DIMM_RANGE:
	case MSG_DIMM_THERMAL:
		return dimm_reply(s, m, t);
	default:
		m->args[0] = 0;   /* a supported message uncored does not read */
		break;
	}
	return 0;
}

int sim_hsmp_send(const struct sim *s, struct hw_hsmp_msg *m, int64_t t)
{
	if (!s->model->hsmp_proto)
		return -ENOENT;
	if (m->msg_id < 1 || m->msg_id > KERNEL_MSG_ID_MAX)
		return -ENOMSG;
	if (sizes[m->msg_id].args != m->num_args || sizes[m->msg_id].resp != m->response_sz)
		return -EINVAL;
	if (m->sock_ind >= s->model->n_sockets)
		return -ENODEV;
	if (!firmware_has((unsigned)s->model->hsmp_proto, m->msg_id))
		return -ENOMSG;
	return reply(s, m, t);
}
