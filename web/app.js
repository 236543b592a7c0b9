/*
 * uncored web page.  Polls /api/v1/snapshot every sampling interval (at
 * least once a second) and /api/v1/episodes every few seconds, derives what
 * only a difference of two snapshots can tell (DRAM throttling now and its
 * fraction of time), polls /api/v1/history for the charts of the last hour
 * (drawn by charts.js), and says plainly when the daemon stops answering.
 * Plain DOM, textContent only: nothing from the daemon is parsed as HTML.
 */
'use strict';

const EPISODE_POLL_MS = 5000;
const HISTORY_POLL_MS = 5000;
const EPISODE_WINDOW_S = 15 * 60;
const MAX_EPISODES = 40;
const DRAM_EVENT = 'dram_thermal_throttled_cycles';
const PROCHOT_EVENT = 'prochot_assertions';

const state = {
	prev: new Map(),     /* socket -> {time, cycles, clockticks, prochot, families} */
	derived: new Map(),  /* socket -> {dram, prochot, freq: family shares; prochotDelta} */
	lastTime: null,
	downSince: null,
	episodes: [],
	thermalAbsent: false, /* the thermal collector does not apply (AMD): its fields are not on this CPU */
	history: null,       /* the last /api/v1/history document drawn */
	historyTime: null,   /* when it was fetched (browser clock) */
};

function $(id) { return document.getElementById(id); }

function el(tag, attrs, ...children) {
	const e = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs || {})) {
		if (v === null || v === undefined || v === false)
			continue;
		if (k === 'class')
			e.className = v;
		else if (k === 'text')
			e.textContent = v;
		else
			e.setAttribute(k, v === true ? '' : String(v));
	}
	for (const c of children)
		if (c !== null && c !== undefined)
			e.append(c);
	return e;
}

function hhmmss(t) {
	return new Date(t * 1000).toLocaleTimeString([], { hour12: false });
}

function isNum(v) { return typeof v === 'number' && Number.isFinite(v); }

async function getJSON(path, timeoutMs) {
	const ctl = new AbortController();
	const timer = setTimeout(() => ctl.abort(), timeoutMs);
	try {
		const r = await fetch(path, { cache: 'no-store', signal: ctl.signal });
		if (!r.ok)
			throw new Error(path + ': HTTP ' + r.status);
		return await r.json();
	} finally {
		clearTimeout(timer);
	}
}

/* ---- derived per-socket values ---- */

function hottestCore(sock) {
	let best = null;
	for (const c of sock.cores || [])
		if (isNum(c.temperature_celsius) && (best === null || c.temperature_celsius > best))
			best = c.temperature_celsius;
	return best;
}

/* The package sensor, the hottest core, or on AMD k10temp's Tctl (the control temperature). */
function socketTemperature(sock) {
	if (isNum(sock.package_temperature_celsius))
		return { value: sock.package_temperature_celsius, source: 'package' };
	const h = hottestCore(sock);
	if (h !== null)
		return { value: h, source: 'hottest core' };
	const k = sock.k10temp_celsius;
	return k && isNum(k.Tctl) ? { value: k.Tctl, source: 'Tctl' } : null;
}

/*
 * The DIMMs of an AMD socket (hsmp collector): the snapshot nests the last
 * label first, so temperatures are {sensor: {channel: {slot: °C}}} and
 * refresh multipliers {slot: {channel: 1 or 2}}.  By "channel/slot":
 * {channel, slot, celsius (the hotter sensor), refresh}; null where the
 * socket has neither field.
 */
function dimmsOf(sock) {
	const temps = sock.dimm_temperature_celsius, refresh = sock.dimm_refresh_multiplier;
	if (!(temps && typeof temps === 'object') && !(refresh && typeof refresh === 'object'))
		return null;
	const dimms = new Map();
	const dimm = (channel, slot) => {
		const key = channel + '/' + slot;
		if (!dimms.has(key))
			dimms.set(key, { channel, slot, celsius: null, refresh: null });
		return dimms.get(key);
	};
	for (const byChannel of Object.values(temps || {}))
		for (const [channel, bySlot] of Object.entries(byChannel || {}))
			for (const [slot, c] of Object.entries(bySlot || {}))
				if (isNum(c)) {
					const d = dimm(channel, slot);
					d.celsius = d.celsius === null ? c : Math.max(d.celsius, c);
				}
	for (const [slot, byChannel] of Object.entries(refresh || {}))
		for (const [channel, m] of Object.entries(byChannel || {}))
			if (isNum(m))
				dimm(channel, slot).refresh = m;
	return dimms;
}

/* A DIMM the SMU runs at twice the refresh rate is hot (the refresh bit of GET_DIMM_TEMP_RANGE). */
function dimmHot(d) {
	return d.refresh !== null && d.refresh >= 2;
}

/* "90 °C (channel 3, slot 0); refresh 2× on channel 3 slot 0", or "not measured on this CPU". */
function dimmFact(sock) {
	const dimms = dimmsOf(sock);
	if (dimms === null)
		return el('span', { class: 'dimm-temp', 'data-state': 'absent', text: 'not measured on this CPU' });
	let hottest = null;
	for (const d of dimms.values())
		if (d.celsius !== null && (hottest === null || d.celsius > hottest.celsius))
			hottest = d;
	const hot = [...dimms.values()].filter(dimmHot);
	let text = hottest === null ? 'no reading' :
		`${hottest.celsius} °C, hottest (channel ${hottest.channel}, slot ${hottest.slot})`;
	text += hot.length ? '; refresh 2× on ' + hot.map((d) => `channel ${d.channel} slot ${d.slot}`).join(', ') :
		'; refresh 1× on all';
	return el('span', { class: 'dimm-temp', 'data-state': hot.length ? 'hot' : 'ok', text });
}

/* The throttle families' socket fields (throttle_families.h), by what the card calls them. */
const FAMILIES = { dram: 'dram_throttled_seconds', prochot: 'prochot_seconds',
	freq: 'frequency_limited_seconds' };

/*
 * Every number under a family's field, by its path of label values, cause
 * (source, reason) first: {"thermal": {"2": {"0": 1.5}}} gives
 * "thermal/2/0" -> 1.5.  Null when the socket has no such field (no
 * collector measures the family here).
 */
function familyLeaves(v, path, out) {
	if (isNum(v))
		out.set(path, v);
	else if (v && typeof v === 'object')
		for (const [k, x] of Object.entries(v))
			familyLeaves(x, path ? path + '/' + k : k, out);
	return out;
}

/*
 * A family's state between two polls: 'absent' (not measured), 'unknown'
 * (one poll so far), 'throttling' or 'ok'; the largest share of time over
 * its series and that series' labels ("thermal_or_power/2/0").
 */
function familyShare(cur, prev, dt) {
	if (cur === null)
		return { state: 'absent', fraction: null, where: null };
	if (!prev || !(dt > 0))
		return { state: 'unknown', fraction: null, where: null };
	let best = 0, where = null;
	const leaves = new Map();
	for (const [k, v] of cur) {
		const p = prev.get(k);
		if (p === undefined || v < p)
			continue;
		leaves.set(k, { delta: v - p, dt });
		if (v - p > best) {
			best = v - p;
			where = k;
		}
	}
	return { state: best > 0 ? 'throttling' : 'ok', fraction: Math.min(1, best / dt), where, leaves };
}

/*
 * Compare this snapshot's throttle family seconds (and, where the socket
 * has no DRAM family, the Westmere uncore's DRAM cycles) with the previous
 * snapshot's.  A counter that went backwards means the daemon restarted:
 * that series starts over.
 */
function deriveSocket(sock, time) {
	const ev = sock.uncore && sock.uncore.events ? sock.uncore.events : null;
	const cur = {
		time,
		cycles: ev && isNum(ev[DRAM_EVENT]) ? ev[DRAM_EVENT] : null,
		clockticks: sock.uncore && isNum(sock.uncore.clockticks) ? sock.uncore.clockticks : null,
		prochot: ev && isNum(ev[PROCHOT_EVENT]) ? ev[PROCHOT_EVENT] : null,
		families: {},
	};
	for (const [name, field] of Object.entries(FAMILIES))
		cur.families[name] = sock[field] && typeof sock[field] === 'object' ?
			familyLeaves(sock[field], '', new Map()) : null;
	const prev = state.prev.get(sock.socket);
	if (prev && prev.time === time)
		return; /* same snapshot again: keep what we derived last time */
	const dt = prev && prev.time < time ? time - prev.time : 0;
	const d = { prochotDelta: null };
	for (const name of Object.keys(FAMILIES))
		d[name] = familyShare(cur.families[name], prev ? prev.families[name] : null, dt);
	if (d.dram.state === 'absent' && cur.cycles !== null) {
		d.dram = { state: 'unknown', fraction: null, where: null };
		if (dt > 0 && prev.cycles !== null && cur.cycles >= prev.cycles) {
			const dc = cur.cycles - prev.cycles;
			d.dram.state = dc > 0 ? 'throttling' : 'ok';
			if (cur.clockticks !== null && prev.clockticks !== null && cur.clockticks > prev.clockticks)
				d.dram.fraction = Math.min(1, dc / (cur.clockticks - prev.clockticks));
		}
	}
	if (dt > 0 && cur.prochot !== null && prev.prochot !== null && cur.prochot >= prev.prochot)
		d.prochotDelta = cur.prochot - prev.prochot;
	state.prev.set(sock.socket, cur);
	state.derived.set(sock.socket, d);
	remember(sock.socket, d.dram, time);
}

/* ---- where the heat is: each DIMM's share over the last interval and the last hour ---- */

const HOUR_S = 3600;
const dimmHour = new Map();   /* socket -> [{time, leaves}] of the last hour's polls */

function remember(socket, dram, time) {
	if (!dram || !dram.leaves)
		return;
	const list = (dimmHour.get(socket) || []).filter((p) => p.time > time - HOUR_S);
	list.push({ time, leaves: dram.leaves });
	dimmHour.set(socket, list);
}

/* A series' share of the time the page watched it in the last hour. */
function hourShare(socket, path) {
	let delta = 0, dt = 0;
	for (const p of dimmHour.get(socket) || []) {
		const l = p.leaves.get(path);
		if (l) {
			delta += l.delta;
			dt += l.dt;
		}
	}
	return dt > 0 ? Math.min(1, delta / dt) : null;
}

/* Shade 0-4 of a share: 0 none, then up to 1 %, 10 %, 50 %, more. */
function shade(share) {
	return share === null || share <= 0 ? 0 : share < 0.01 ? 1 : share < 0.1 ? 2 : share < 0.5 ? 3 : 4;
}

/*
 * The socket's memory as a grid: a column per channel, a row per slot (or
 * die), each cell filled by its share throttled in the last interval and
 * outlined by the last hour's; causes are folded (the worst one).  Null
 * where the DRAM family has no channels.
 */
function heatMap(sock) {
	const d = state.derived.get(sock.socket);
	const dram = d && d.dram;
	if (!dram || !dram.leaves || dram.leaves.size === 0)
		return temperatureMap(sock);
	const dies = hasDies(sock);
	const cells = new Map();   /* "row/channel" -> {row, channel, now, hour} */
	for (const [path, l] of dram.leaves) {
		const parts = path.split('/');
		if (parts.length < 2)
			return null;
		const channel = dies ? parts[2] : parts[1];
		const row = dies ? parts[1] : parts.length > 2 ? parts[2] : '0';
		if (channel === undefined)
			return null;
		const key = row + '/' + channel;
		const now = l.dt > 0 ? Math.min(1, l.delta / l.dt) : 0;
		const hour = hourShare(sock.socket, path);
		const c = cells.get(key) || { row, channel, now: 0, hour: null };
		c.now = Math.max(c.now, now);
		c.hour = hour === null ? c.hour : Math.max(c.hour || 0, hour);
		cells.set(key, c);
	}
	const rows = [...new Set([...cells.values()].map((c) => c.row))].sort((a, b) => a - b);
	const channels = [...new Set([...cells.values()].map((c) => c.channel))].sort((a, b) => a - b);
	const rowName = dies ? 'die' : 'slot';
	const table = el('table', { class: 'dimm-map', 'aria-label':
		`DRAM throttled by channel and ${rowName}, socket ${sock.socket}` });
	table.append(el('tr', {}, el('th', { text: '' }),
		...channels.map((ch) => el('th', { scope: 'col', text: 'ch ' + ch }))));
	for (const row of rows) {
		const tr = el('tr', {}, el('th', { scope: 'row', text: `${rowName} ${row}` }));
		for (const ch of channels) {
			const c = cells.get(row + '/' + ch);
			const words = c ? `channel ${ch}, ${rowName} ${row}: ${(100 * c.now).toFixed(1)} % throttled now, ` +
				(c.hour === null ? 'no hour yet' : `${(100 * c.hour).toFixed(1)} % in the last hour`) : 'not counted';
			tr.append(el('td', { class: 'dimm', 'data-channel': ch, ['data-' + rowName]: row,
				'data-hot': c && c.now > 0 ? 'true' : 'false',
				'data-now': c ? shade(c.now) : null, 'data-hour': c ? shade(c.hour) : null,
				title: words, 'aria-label': words }));
		}
		table.append(tr);
	}
	return table;
}

/*
 * Where the socket has DIMM temperatures instead of DRAM throttled time
 * (AMD): the same grid, each cell a DIMM, filled dark where it runs at
 * twice the refresh rate, its temperature in its title.
 */
function temperatureMap(sock) {
	const dimms = dimmsOf(sock);
	if (dimms === null || dimms.size === 0)
		return null;
	const num = (a, b) => Number(a) - Number(b);
	const slots = [...new Set([...dimms.values()].map((x) => x.slot))].sort(num);
	const channels = [...new Set([...dimms.values()].map((x) => x.channel))].sort(num);
	const table = el('table', { class: 'dimm-map', 'aria-label': `DIMM temperatures by channel and slot, socket ${sock.socket}` });
	table.append(el('tr', {}, el('th', { text: '' }),
		...channels.map((ch) => el('th', { scope: 'col', text: 'ch ' + ch }))));
	for (const slot of slots) {
		const tr = el('tr', {}, el('th', { scope: 'row', text: `slot ${slot}` }));
		for (const ch of channels) {
			const x = dimms.get(ch + '/' + slot);
			const words = !x ? 'no DIMM' : `channel ${ch}, slot ${slot}: ` +
				(x.celsius === null ? 'no temperature' : `${x.celsius} °C`) +
				(x.refresh === null ? '' : `, refresh ${x.refresh}×`);
			tr.append(el('td', { class: 'dimm', 'data-channel': ch, 'data-slot': slot,
				'data-hot': x && dimmHot(x) ? 'true' : 'false', 'data-now': x ? (dimmHot(x) ? 4 : 0) : null,
				title: words, 'aria-label': words }));
		}
		table.append(tr);
	}
	return table;
}

/* Colour band from the distance to TjMax (see the legend). */
function band(temp, tjmax) {
	if (!isNum(temp))
		return null;
	if (!isNum(tjmax))
		return temp >= 90 ? 3 : temp >= 80 ? 2 : temp >= 65 ? 1 : 0;
	const margin = tjmax - temp;
	return margin < 5 ? 3 : margin < 15 ? 2 : margin < 30 ? 1 : 0;
}

/* ---- rendering ---- */

function stateSpan(kind, value, text) {
	return el('span', { class: 'state ' + kind, 'data-state': value, text });
}

const FAMILY_LABELS = {
	throttling: 'throttling now',
	ok: 'not throttling',
	unknown: 'measuring…',
	absent: 'not measured on this CPU',
};

/* "12.5 % of time (channel 2, slot 0)" from a family's share; the labels by the family's nesting. */
function shareText(sh, levels) {
	if (sh.fraction === null)
		return '—';
	let text = (100 * sh.fraction).toFixed(sh.fraction < 0.001 && sh.fraction > 0 ? 3 : 1) + ' % of time';
	if (sh.where && sh.state === 'throttling') {
		const parts = sh.where.split('/');
		const names = levels[parts.length - 1] || [];
		const said = parts.slice(1).map((v, i) => (names[i] ? names[i] + ' ' : '') + v);
		if (parts[0])
			said.push(parts[0].replace(/_/g, ' '));
		text += ` (${said.join(', ')})`;
	}
	return text;
}

/*
 * The labels under cause, by how many there are: channel; channel, slot;
 * with dies die, channel; die, channel, slot.
 */
const DRAM_LEVELS = { 1: ['channel'], 2: ['channel', 'slot'] };

/*
 * A die level goes before the channel on packages of several dies (SPEC
 * §5a); such a package's PROCHOT seconds are split by die too.
 */
function hasDies(sock) {
	const p = sock.prochot_seconds;
	return !!p && typeof p === 'object' && Object.values(p).some((v) => v && typeof v === 'object');
}

function dramLevels(sock) {
	return hasDies(sock) ?
		{ 1: ['channel'], 2: ['die', 'channel'], 3: ['die', 'channel', 'slot'] } : DRAM_LEVELS;
}

function familyFacts(sock) {
	const d = state.derived.get(sock.socket) || {};
	const unknown = { state: 'unknown', fraction: null, where: null };
	const dram = d.dram || unknown, freq = d.freq || unknown, hot = d.prochot || unknown;
	const stateOf = (sh) => sh.state === 'absent' ? 'unknown' : sh.state;
	return [
		['DRAM throttling', stateSpan('dram-state', stateOf(dram), FAMILY_LABELS[dram.state])],
		['DRAM throttled', el('span', { class: 'dram-fraction', 'data-state': dram.state,
			text: dram.state === 'absent' ? 'not measured on this CPU' : shareText(dram, dramLevels(sock)) })],
		['PROCHOT', prochotFact(sock)],
		['PROCHOT time', el('span', { class: 'prochot-fraction', 'data-state': hot.state,
			text: hot.state === 'absent' ? 'not measured on this CPU' :
				shareText(hot, { 1: ['die'] }) })],
		['Frequency limited', el('span', { class: 'freq-fraction', 'data-state': freq.state,
			text: freq.state === 'absent' ? 'not measured on this CPU' :
				shareText(freq, { 1: ['die'] }) })],
		['DIMM temperature', dimmFact(sock)],
	];
}

function prochotFact(sock) {
	const cores = sock.cores || [];
	const known = sock.package_prochot_active !== undefined && sock.package_prochot_active !== null ||
		cores.some((c) => typeof c.prochot_active === 'boolean');
	const active = sock.package_prochot_active === true || cores.some((c) => c.prochot_active === true);
	const d = state.derived.get(sock.socket);
	if (!known && !hasRegister(sock, 'package_prochot_active'))
		return stateSpan('prochot-state', 'absent', 'no status bit on this CPU');
	let text = !known ? 'no reading' : active ? 'asserted now' : 'not asserted';
	if (d && d.prochotDelta !== null && d.prochotDelta > 0)
		text += ` (${d.prochotDelta} assertions since last poll)`;
	return stateSpan('prochot-state', !known ? 'unknown' : active ? 'active' : 'ok', text);
}

/*
 * Whether the CPU has the register behind field of sock: the snapshot's
 * "present" says so; without it, it does unless the thermal collector, which
 * reads all of them, does not apply to this CPU (AMD).
 */
function hasRegister(sock, field) {
	if (!sock.present)
		return !state.thermalAbsent;
	return sock.present[field] !== false;
}

/* A status bit: "not on this CPU" when the CPU lacks it, "no reading" when it could not be read. */
function boolFact(sock, field, onText, offText, kind) {
	const v = sock[field];
	if (!hasRegister(sock, field))
		return stateSpan(kind, 'absent', 'not on this CPU');
	if (typeof v !== 'boolean')
		return stateSpan(kind, 'unknown', 'no reading');
	return stateSpan(kind, v ? 'throttling' : 'ok', v ? onText : offText);
}

function coreCell(sock, c) {
	const temp = isNum(c.temperature_celsius) ? c.temperature_celsius : null;
	const b = band(temp, sock.tjmax_celsius);
	const words = [`Core ${c.core}`, temp === null ? 'no temperature reading' : `${temp} °C`];
	if (isNum(sock.tjmax_celsius) && temp !== null)
		words.push(`${sock.tjmax_celsius - temp} °C below TjMax`);
	if (c.thermal_throttling === true)
		words.push('thermal throttling');
	if (c.prochot_active === true)
		words.push('PROCHOT asserted');
	if (Array.isArray(c.cpus) && c.cpus.length)
		words.push('CPUs ' + c.cpus.join(', '));
	const marks = el('span', { class: 'marks', 'aria-hidden': 'true' },
		c.thermal_throttling === true ? el('span', { class: 'mark mark-t', text: 'T' }) : null,
		c.prochot_active === true ? el('span', { class: 'mark mark-p', text: 'P' }) : null);
	const classes = ['core-cell'];
	if (c.thermal_throttling === true)
		classes.push('throttling');
	if (c.prochot_active === true)
		classes.push('prochot');
	return el('div', {
		class: classes.join(' '), role: 'listitem', 'data-core': c.core,
		'data-band': b === null ? null : b, title: words.join(', '), 'aria-label': words.join(', '),
	},
	el('span', { class: 'core-id', text: 'core ' + c.core, 'aria-hidden': 'true' }),
	el('span', { class: 'core-temp', text: temp === null ? '—' : temp + '°', 'aria-hidden': 'true' }),
	marks);
}

function socketCard(sock) {
	const t = socketTemperature(sock);
	const tj = isNum(sock.tjmax_celsius) ? sock.tjmax_celsius : null;
	const facts = [
		['Temperature', t === null ? 'no reading' : `${t.value} °C (${t.source})`],
		['Margin to TjMax', !hasRegister(sock, 'tjmax_celsius') ? 'no TjMax on this CPU' :
			t === null || tj === null ? '—' : `${tj - t.value} °C (TjMax ${tj} °C)`],
		...familyFacts(sock),
		['Package throttling', boolFact(sock, 'package_thermal_throttling', 'throttling now', 'no', 'package-state')],
	];
	const dl = el('dl', { class: 'facts' });
	for (const [k, v] of facts)
		dl.append(el('dt', { text: k }), el('dd', {}, typeof v === 'string' ? document.createTextNode(v) : v));
	const cores = (sock.cores || []).slice().sort((a, b) => a.core - b.core);
	const grid = el('div', { class: 'grid', role: 'list', 'aria-label': `Cores of socket ${sock.socket}` });
	for (const c of cores)
		grid.append(coreCell(sock, c));
	return el('article', { class: 'socket', 'data-socket': sock.socket, 'aria-labelledby': 'socket-h-' + sock.socket },
		el('h3', { id: 'socket-h-' + sock.socket, text: `Socket ${sock.socket}` }), dl, heatMap(sock), grid);
}

function renderCollectors(list) {
	const body = $('collectors');
	body.replaceChildren();
	for (const c of list || []) {
		const st = c.enabled === false ? ['unknown', 'disabled'] :
			c.state === 'not_applicable' ? ['unknown', 'not applicable'] :
			c.up ? ['ok', 'up'] :
			c.state === 'partial' ? ['throttling', `partial: ${c.units_counting} of ${c.units}`] :
			['throttling', 'down'];
		body.append(el('tr', { 'data-collector': c.name },
			el('th', { scope: 'row', text: c.name }),
			el('td', {}, stateSpan('', st[0], st[1])),
			el('td', { text: c.reason === null || c.reason === undefined ? '—' : c.reason }),
			el('td', { class: 'num', text: String(c.errors ?? '—') })));
	}
}

function renderSnapshot(s) {
	const cpu = s.cpu || {};
	const parts = [];
	if (cpu.microarch)
		parts.push(cpu.microarch);
	if (cpu.vendor)
		parts.push(`${cpu.vendor} family ${cpu.family} model ${cpu.model}`);
	parts.push(`${(s.sockets || []).length} socket(s)`);
	if (s.version)
		parts.push('uncored ' + s.version);
	$('host').textContent = parts.join(' · ');
	$('updated').textContent = `Sample at ${hhmmss(s.time)}, every ${s.interval_seconds} s`;
	state.thermalAbsent = (s.collectors || []).some((c) => c.name === 'thermal' && c.state === 'not_applicable');
	$('sockets').replaceChildren(...(s.sockets || []).map(socketCard));
	renderCollectors(s.collectors);
	Signals.render(s);
}

function renderEpisodes(now) {
	const box = $('timeline');
	const recent = state.episodes
		.filter((e) => e.end === null || e.end === undefined || e.end >= now - EPISODE_WINDOW_S)
		.slice(0, MAX_EPISODES);
	$('episodes-empty').hidden = recent.length > 0;
	const names = {
		dram_thermal_throttling: 'DRAM thermal throttling',
		dram_throttled_seconds: 'DRAM throttled',
		dram_critical_throttled_seconds: 'DRAM critically throttled',
		prochot_seconds: 'PROCHOT',
		frequency_limited_seconds: 'frequency limited',
		prochot: 'PROCHOT',
		core_thermal_throttling: 'core thermal throttling',
		package_thermal_throttling: 'package thermal throttling',
	};
	box.replaceChildren(...recent.map((e) => {
		const ongoing = e.end === null || e.end === undefined;
		const start = Math.max(e.start, now - EPISODE_WINDOW_S);
		const end = ongoing ? now : e.end;
		const left = 100 * (start - (now - EPISODE_WINDOW_S)) / EPISODE_WINDOW_S;
		const width = 100 * Math.max(0, end - start) / EPISODE_WINDOW_S;
		const what = ['cause', 'source', 'reason'];
		const labels = e.labels && typeof e.labels === 'object' ? Object.entries(e.labels)
			.map(([k, v]) => what.includes(k) ? String(v).replace(/_/g, ' ') : `${k} ${v}`) : [];
		const where = `socket ${e.socket}` + (e.core === null || e.core === undefined ? '' : ` core ${e.core}`) +
			labels.map((l) => ', ' + l).join('');
		const dur = isNum(e.duration_seconds) ? e.duration_seconds.toFixed(1) + ' s' : '';
		const text = `${names[e.kind] || e.kind}, ${where}: ${hhmmss(e.start)}` +
			(ongoing ? `, ongoing (${dur})` : ` – ${hhmmss(e.end)} (${dur})`);
		const bar = el('div', { class: 'bar' });
		bar.style.left = left.toFixed(2) + '%';
		bar.style.width = width.toFixed(2) + '%';
		return el('div', { class: 'episode' + (ongoing ? ' ongoing' : ''), 'data-kind': e.kind, 'data-socket': e.socket },
			el('span', { text }),
			el('div', { class: 'track', 'aria-hidden': 'true' }, bar));
	}));
}

/* ---- polling and the "not answering" banner ---- */

function answered() {
	state.downSince = null;
	$('banner').hidden = true;
	$('main').classList.remove('stale');
}

function notAnswering(err) {
	if (state.downSince === null)
		state.downSince = Date.now() / 1000;
	const b = $('banner');
	b.textContent = `daemon not answering since ${hhmmss(state.downSince)}` +
		(state.lastTime === null ? '' : ` — showing the sample from ${hhmmss(state.lastTime)}`) +
		` (${err && err.message ? err.message : 'no response'})`;
	b.hidden = false;
	$('main').classList.add('stale');
}

async function pollSnapshot() {
	let delayMs = 1000;
	try {
		const s = await getJSON('/api/v1/snapshot', 3000);
		if (isNum(s.interval_seconds))
			delayMs = Math.max(1000, s.interval_seconds * 1000);
		for (const sock of s.sockets || [])
			deriveSocket(sock, s.time);
		state.lastTime = s.time;
		renderSnapshot(s);
		renderEpisodes(s.time);
		answered();
	} catch (err) {
		notAnswering(err);
	}
	setTimeout(pollSnapshot, delayMs);
}

async function pollEpisodes() {
	try {
		const r = await getJSON('/api/v1/episodes', 3000);
		state.episodes = Array.isArray(r.episodes) ? r.episodes : [];
		renderEpisodes(state.lastTime === null ? Date.now() / 1000 : state.lastTime);
		renderHistory();
	} catch (err) {
		/* the snapshot poll reports the daemon as not answering */
	}
	setTimeout(pollEpisodes, EPISODE_POLL_MS);
}

/* ---- the last hour: charts.js draws, this keeps the last good document ---- */

function renderHistory() {
	if (state.history)
		Charts.draw($('history'), state.history, state.episodes);
}

async function pollHistory() {
	let delayMs = HISTORY_POLL_MS;
	try {
		const doc = await getJSON('/api/v1/history', 3000);
		if (isNum(doc.step_seconds))
			delayMs = Math.max(1000, doc.step_seconds * 1000);
		state.history = doc;
		state.historyTime = Date.now() / 1000;
		$('history-stale').hidden = true;
		renderHistory();
	} catch (err) {
		/* Keep drawing the last document; say how old it is. */
		if (state.history) {
			$('history-stale').textContent = `History not updated since ${hhmmss(state.historyTime)}.`;
			$('history-stale').hidden = false;
		}
	}
	setTimeout(pollHistory, delayMs);
}

$('window-minutes').textContent = String(EPISODE_WINDOW_S / 60);
pollSnapshot();
pollEpisodes();
pollHistory();
