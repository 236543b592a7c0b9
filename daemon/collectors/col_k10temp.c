/*
 * The k10temp collector: AMD's temperatures from the k10temp hwmon driver
 * (hardware-amd.md §2.1), one device per socket: Tctl, and Tccd1... on the
 * models whose driver lists them (cpu_info.fac.n_tccd).  Files are 0444
 * text in m°C; a read is one SMN access in the kernel, no IPI.  On 17h and
 * later the driver already reports the real temperature, and EPYC has no
 * Tdie offset, so the value is exported as read.
 *
 * Sockets take the k10temp devices in the order of their hwmon numbers:
 * the driver registers one per node's data-fabric function 3, nodes in
 * ascending order (§2.1).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collector.h"

#define HWMON_PROBE_MAX  128     /* hwmon numbers looked at once, at start */
#define K10TEMP_TCTL     1       /* temp1 "Tctl" */
#define K10TEMP_TCCD0    3       /* temp3 "Tccd1", ... */
#define K10TEMP_MAX_CH   (1 + 12) /* Tctl and up to twelve Tccd (§2.1) */
#define SENSOR_NAME_MAX  16
#define MILLI            1000.0

struct k10temp_settings {
	bool enabled;
};

static const struct conf_key k10temp_keys[] = {
	{ "enabled", CONF_KIND_BOOL, CONF_SETTING(struct k10temp_settings, enabled), .def = "yes" },
};

static const struct conf_section k10temp_conf_section = {
	.name = "k10temp", .keys = k10temp_keys,
	.n_keys = sizeof(k10temp_keys) / sizeof(k10temp_keys[0]),
	.settings_size = sizeof(struct k10temp_settings),
};

static const struct metric_family cpu_temperature = {
	.name = "uncored_cpu_temperature_celsius",
	.help = "AMD temperatures from k10temp: sensor Tctl (control temperature) and TccdN (per CCD, "
		"where the driver lists them).",
	.type = METRIC_GAUGE, .unit = "celsius", .scope = METRIC_SCOPE_SOCKET, .kind = METRIC_DOUBLE,
	.label = "sensor", .signal = METRIC_SIGNAL_SENSOR_TEMPERATURE,
	.json_key = "k10temp_celsius", .json_order = 21,
};

static const struct metric_family *const k10temp_families[] = { &cpu_temperature };

struct k10temp_channel {
	int ch;                               /* the N of tempN_input */
	char sensor[SENSOR_NAME_MAX];         /* its label: "Tctl", "Tccd1", ... */
};

struct k10temp_socket {
	int hwmon;                            /* the N of hwmonN; -1: no device for the socket */
	int n_channels;
	struct k10temp_channel channels[K10TEMP_MAX_CH];
};

struct k10temp_state {
	int n_sockets;
	struct k10temp_socket sockets[];      /* as c->topo->sockets */
};

/* Read hwmonN/attr into buf, the trailing newline removed. */
static int read_attr(struct collector *c, int hwmon, const char *attr, char *buf, size_t len)
{
	char rel[64];
	int r;

	snprintf(rel, sizeof(rel), "hwmon%d/%s", hwmon, attr);
	r = hw_read_hwmon(c->hw, rel, buf, len);
	if (r == 0)
		buf[strcspn(buf, "\n")] = '\0';
	return r;
}

/* A channel's m°C, or a negative errno (-EINVAL for text that is no number). */
static int read_milli(struct collector *c, int hwmon, int ch, long *ret)
{
	char attr[32], buf[32], *end;
	int r;

	snprintf(attr, sizeof(attr), "temp%d_input", ch);
	r = read_attr(c, hwmon, attr, buf, sizeof(buf));
	if (r < 0)
		return r;
	errno = 0;
	*ret = strtol(buf, &end, 10);
	return errno || end == buf || *end ? -EINVAL : 0;
}

/* Keep channel ch of ks when the device lists it (its label file exists). */
static void probe_channel(struct collector *c, struct k10temp_socket *ks, int ch)
{
	struct k10temp_channel *kc = &ks->channels[ks->n_channels];
	char attr[32];

	snprintf(attr, sizeof(attr), "temp%d_label", ch);
	if (read_attr(c, ks->hwmon, attr, kc->sensor, sizeof(kc->sensor)) < 0)
		return;
	kc->ch = ch;
	ks->n_channels++;
}

/* The k10temp devices in hwmon order into the sockets; how many there are. */
static int find_devices(struct collector *c, struct k10temp_state *st)
{
	char name[32];
	int n = 0;

	for (int k = 0; k < HWMON_PROBE_MAX; k++) {
		struct k10temp_socket *ks;

		if (read_attr(c, k, "name", name, sizeof(name)) < 0 || strcmp(name, "k10temp") != 0)
			continue;
		if (n++ >= st->n_sockets)
			continue;
		ks = &st->sockets[n - 1];
		ks->hwmon = k;
		probe_channel(c, ks, K10TEMP_TCTL);
		for (unsigned i = 0; i < c->info->fac.n_tccd && i + 1 < K10TEMP_MAX_CH; i++)
			probe_channel(c, ks, K10TEMP_TCCD0 + (int)i);
	}
	return n;
}

static int k10temp_start(struct collector *c)
{
	struct k10temp_state *st;
	int n;

	if (collector_refuse_disabled(c))
		return -ENOTSUP;
	if (!c->info->fac.amd_zen) {
		collector_refuse(c, "k10temp is AMD's temperature driver; on %s the thermal collector "
				 "reads the temperatures", c->info->microarch ? c->info->microarch :
				 "this CPU");
		return -ENOTSUP;
	}
	st = calloc(1, sizeof(*st) + (size_t)c->topo->n_sockets * sizeof(st->sockets[0]));
	if (!st)
		return -ENOMEM;
	st->n_sockets = c->topo->n_sockets;
	for (int i = 0; i < st->n_sockets; i++)
		st->sockets[i].hwmon = -1;
	c->state = st;
	n = find_devices(c, st);
	if (n == 0) {
		collector_refuse(c, "no k10temp device under /sys/class/hwmon (the k10temp module loads "
				 "by itself by PCI id; 'modprobe k10temp')");
		return -ENODEV;
	}
	if (n != st->n_sockets)
		collector_note(c, "%d k10temp devices for %d sockets: sockets without one have no "
			       "temperature", n, st->n_sockets);
	return 0;
}

static void k10temp_sample(struct collector *c, struct snapshot *s)
{
	struct k10temp_state *st = c->state;
	unsigned counting = 0;

	if (!st)
		return;
	for (int i = 0; i < st->n_sockets; i++) {
		const struct k10temp_socket *ks = &st->sockets[i];
		bool any = false;

		for (int k = 0; k < ks->n_channels; k++) {
			long milli;

			if (read_milli(c, ks->hwmon, ks->channels[k].ch, &milli) < 0) {
				c->errors++;
				continue;
			}
			snapshot_add_sample(s, &cpu_temperature, c->topo->sockets[i].socket,
					    ks->channels[k].sensor, 0, (double)milli / MILLI);
			any = true;
		}
		counting += any;
	}
	collector_units(c, (unsigned)st->n_sockets, counting);
}

static void k10temp_stop(struct collector *c)
{
	free(c->state);
	c->state = NULL;
}

const struct collector_ops k10temp_collector_ops = {
	.name = "k10temp",
	.start = k10temp_start,
	.sample = k10temp_sample,
	.stop = k10temp_stop,
	.families = k10temp_families,
	.n_families = sizeof(k10temp_families) / sizeof(k10temp_families[0]),
	.conf_section = &k10temp_conf_section,
};
