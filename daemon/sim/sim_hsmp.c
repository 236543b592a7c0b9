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
 * GET_SOCKET_FREQ_LIMIT gives the reference clock in MHz and source bit 1
 * (PROCHOT) then.  Simulator's choices: the SMU version 0x00450c00 (major
 * 0x45, minor 0x0c), a reply with no latency.
 */
#include <errno.h>

#include "sim_machine.h"

#define KERNEL_MSG_ID_MAX   0x25
#define SMU_VERSION         0x00450c00u
#define FREQ_LIMIT_MHZ_SHIFT 16
#define SOURCE_PROCHOT      (1u << 1)

enum {
	MSG_TEST = 0x01, MSG_SMU_VER = 0x02, MSG_PROTO_VER = 0x03, MSG_PROC_HOT = 0x0B,
	MSG_FREQ_LIMIT = 0x19,
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

/* The firmware's reply to a supported id. */
static void reply(const struct sim *s, struct hw_hsmp_msg *m, int64_t t)
{
	bool prochot = sim_timeline_value_at(&s->sockets[m->sock_ind].prochot, t) != 0;

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
			     (prochot ? SOURCE_PROCHOT : 0);
		break;
	default:
		m->args[0] = 0;   /* a supported message uncored does not read */
		break;
	}
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
	reply(s, m, t);
	return 0;
}
