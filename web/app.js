/*
 * uncored web page.  Polls /api/v1/snapshot every sampling interval (at
 * least once a second) and /api/v1/episodes every few seconds, derives what
 * only a difference of two snapshots can tell (DRAM throttling now and its
 * fraction of time), polls /api/v1/history for the charts of the last hour
 * (drawn by charts.js), and says plainly when the daemon stops answering.
 * The page answers first: a verdict line from the last hour (the history)
 * and from now (the snapshots), then each socket's card, whose rows say
 * whether a figure is now or the last hour.  The channel and DIMM map is
 * drawn from the history's places, so a page opened after the heat still
 * shows where it was.  Plain DOM, textContent only: nothing from the
 * daemon is parsed as HTML.
 */
'use strict';

const EPISODE_POLL_MS = 5000;
const HISTORY_POLL_MS = 5000;
const EPISODE_WINDOW_S = 15 * 60;
const DRAM_EVENT = 'dram_thermal_throttled_cycles';
const PROCHOT_EVENT = 'prochot_assertions';

const state = {
	prev: new Map(),     /* socket -> {time, cycles, clockticks, prochot, families} */
	derived: new Map(),  /* socket -> {dram, prochot, freq: family shares; prochotDelta} */
	lastTime: null,
	downSince: null,
	episodes: [],
	thermalAbsent: false, /* the thermal collector does not apply (AMD): its fields are not on this CPU */
	snapshot: null,      /* the last /api/v1/snapshot document drawn */
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
	const h = hourOf(sock.socket);
	return nowAndHour(el('span', { class: 'dimm-temp', 'data-state': hot.length ? 'hot' : 'ok', text }),
		h && h.hottestDimm !== null ? `at most ${h.hottestDimm} °C in ${spanWords(h.span)}` : null);
}

/* The throttle families' socket fields (throttle_families.h), by what the card calls them. */
const FAMILIES = { dram: 'dram_throttled_seconds', dramSlot: 'dram_slot_throttled_seconds',
	prochot: 'prochot_seconds', freq: 'frequency_limited_seconds' };

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
}

/* ---- where the heat is: each DIMM's share now (snapshots) and over the last hour (history) ---- */

const HOUR_S = 3600;

/* Shade 0-4 of a share: 0 none, then up to 1 %, 10 %, 50 %, more. */
function shade(share) {
	return share === null || share <= 0 ? 0 : share < 0.01 ? 1 : share < 0.1 ? 2 : share < 0.5 ? 3 : 4;
}

/*
 * A cell of the map per channel and row, a row per die (packages of
 * several dies), else per DIMM slot where the hardware counts slots, else
 * one row for the channel as a whole.  The history's places give each
 * cell its share of the last hour (outline, "was"), the last two
 * snapshots its share now (fill).
 */
function mapCells(sock) {
	const d = state.derived.get(sock.socket) || {};
	const h = hourOf(sock.socket);
	const dies = hasDies(sock);
	const cells = new Map();   /* "row/channel" -> {row, channel, now, hour, last} */
	const cell = (row, channel) => {
		const key = row + '/' + channel;
		if (!cells.has(key))
			cells.set(key, { row, channel: String(channel), now: 0, hour: null, last: null });
		return cells.get(key);
	};
	const rowOf = (die, slot) => dies ? (die === undefined ? null : 'die ' + die) :
		slot === undefined ? 'all' : 'slot ' + slot;
	for (const p of h ? h.places : [])
		if (isNum(p.dram_throttled_fraction)) {
			const row = rowOf(p.die, p.slot);
			if (row === null)
				continue;
			const c = cell(row, p.channel);
			c.hour = Math.max(c.hour || 0, p.dram_throttled_fraction);
			if (isNum(p.dram_throttled_last))
				c.last = Math.max(c.last || 0, p.dram_throttled_last);
		}
	for (const sh of [d.dram, d.dramSlot])
		for (const [path, l] of (sh && sh.leaves) || []) {
			const parts = path.split('/');
			if (parts.length < 2)
				continue;
			const row = dies ? rowOf(parts[1], undefined) : rowOf(undefined, parts[2]);
			const c = cell(row, dies ? parts[2] : parts[1]);
			c.now = Math.max(c.now, l.dt > 0 ? Math.min(1, l.delta / l.dt) : 0);
		}
	/* Slots where the hardware counts them: the channel-wide counts are in the card's row. */
	if ([...cells.values()].some((c) => c.row.startsWith('slot ')))
		for (const [k, c] of cells)
			if (c.row === 'all')
				cells.delete(k);
	return cells;
}

/*
 * The socket's memory as a grid: a column per channel, filled by its
 * share throttled now and outlined by the last hour's (the worst cause);
 * null where the DRAM family has no channels.
 */
function heatMap(sock) {
	const cells = mapCells(sock);
	if (cells.size === 0)
		return temperatureMap(sock);
	const num = (a, b) => Number(a.replace(/\D+/g, '')) - Number(b.replace(/\D+/g, ''));
	const rows = [...new Set([...cells.values()].map((c) => c.row))].sort(num);
	const channels = [...new Set([...cells.values()].map((c) => c.channel))].sort((a, b) => a - b);
	const span = hourOf(sock.socket) ? spanWords(hourOf(sock.socket).span) : null;
	const table = el('table', { class: 'dimm-map', 'aria-label': `DRAM throttled by channel, socket ${sock.socket}` });
	table.append(el('caption', { text: `DRAM throttled: fill now, outline ${span || 'the last hour'}` }));
	table.append(el('tr', {}, el('th', { text: '' }),
		...channels.map((ch) => el('th', { scope: 'col', text: 'ch ' + ch }))));
	for (const row of rows) {
		const tr = el('tr', {}, el('th', { scope: 'row', text: row === 'all' ? 'channel' : row }));
		for (const ch of channels) {
			const c = cells.get(row + '/' + ch);
			const words = c ? `channel ${ch}${row === 'all' ? '' : ', ' + row}: ${pct(c.now)} throttled now, ` +
				(c.hour === null ? 'no history yet' : `${pct(c.hour)} of ${span}`) +
				(c.last ? `, last at ${hhmmss(c.last)}` : '') : 'not counted';
			tr.append(el('td', { class: 'dimm', 'data-channel': ch, 'data-row': row,
				'data-slot': row.startsWith('slot ') ? row.slice(5) : null,
				'data-hot': c && c.now > 0 ? 'true' : 'false',
				'data-was': c && c.hour > 0 ? 'true' : 'false',
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
 * twice the refresh rate now and outlined where it did in the last hour,
 * its temperatures in its title.
 */
function temperatureMap(sock) {
	const dimms = dimmsOf(sock);
	if (dimms === null || dimms.size === 0)
		return null;
	const h = hourOf(sock.socket);
	const span = h ? spanWords(h.span) : null;
	const hour = new Map();
	for (const p of h ? h.places : [])
		hour.set(p.channel + '/' + p.slot, p);
	const num = (a, b) => Number(a) - Number(b);
	const slots = [...new Set([...dimms.values()].map((x) => x.slot))].sort(num);
	const channels = [...new Set([...dimms.values()].map((x) => x.channel))].sort(num);
	const table = el('table', { class: 'dimm-map', 'aria-label': `DIMM temperatures by channel and slot, socket ${sock.socket}` });
	table.append(el('caption', { text: `DIMMs at twice the refresh rate (hot): fill now, outline ${span || 'the last hour'}` }));
	table.append(el('tr', {}, el('th', { text: '' }),
		...channels.map((ch) => el('th', { scope: 'col', text: 'ch ' + ch }))));
	for (const slot of slots) {
		const tr = el('tr', {}, el('th', { scope: 'row', text: `slot ${slot}` }));
		for (const ch of channels) {
			const x = dimms.get(ch + '/' + slot);
			const p = hour.get(ch + '/' + slot);
			const was = p && isNum(p.refresh_doubled_fraction) ? p.refresh_doubled_fraction : null;
			const words = !x ? 'no DIMM' : `channel ${ch}, slot ${slot}: ` +
				(x.celsius === null ? 'no temperature' : `${x.celsius} °C now`) +
				(x.refresh === null ? '' : `, refresh ${x.refresh}×`) +
				(p && isNum(p.celsius_max) ? `; at most ${p.celsius_max} °C in ${span}` : '') +
				(was ? `, refresh doubled ${pct(was)} of it` : '');
			tr.append(el('td', { class: 'dimm', 'data-channel': ch, 'data-slot': slot,
				'data-hot': x && dimmHot(x) ? 'true' : 'false', 'data-was': was > 0 ? 'true' : 'false',
				'data-now': x ? (dimmHot(x) ? 4 : 0) : null, 'data-hour': x ? shade(was) : null,
				title: words, 'aria-label': words }));
		}
		table.append(tr);
	}
	return table;
}

/*
 * Colour band from the distance to TjMax (see the legend); "nolimit" for
 * a reading with no limit to judge it against (AMD: no source names one),
 * rather than a made-up limit.
 */
function band(temp, tjmax) {
	if (!isNum(temp))
		return null;
	if (!isNum(tjmax))
		return 'nolimit';
	const margin = tjmax - temp;
	return margin < 5 ? 3 : margin < 15 ? 2 : margin < 30 ? 1 : 0;
}

/*
 * Why an AMD temperature is not coloured against a limit: k10temp hides
 * temp1_crit on Zen and no kernel interface or MSR publishes the HTC
 * limit (shared/hardware-amd.md §2.1-2.2, drivers/hwmon/k10temp.c).
 */
const NO_LIMIT_WHY = 'no limit known: on AMD EPYC the kernel (k10temp) publishes no Tctl or Tccd limit ' +
	'and AMD names none per part; the SMU\'s thermal frequency limit and PROCHOT (HSMP) say when it acts';

/*
 * Whether an AMD socket controls its temperature now: HSMP reports a
 * thermal frequency limit (cHTC-Active) or PROCHOT since the last poll.
 */
function amdThermalControl(sock) {
	const d = state.derived.get(sock.socket) || {};
	const thermal = d.freq && d.freq.leaves && d.freq.leaves.get('thermal');
	return (thermal && thermal.delta > 0) || (d.prochot && d.prochot.state === 'throttling');
}

/* The card's temperature: on AMD Tctl, said to have no known limit, red while the SMU acts on it. */
function temperatureFact(sock, t) {
	if (t === null)
		return 'no reading';
	if (t.source !== 'Tctl')
		return `${t.value} °C (${t.source})`;
	const acting = amdThermalControl(sock);
	return el('span', { class: 'temp-fact', 'data-state': acting ? 'throttling' : 'nolimit', title: NO_LIMIT_WHY,
		text: `${t.value} °C (Tctl) · no limit known` + (acting ? ' · thermal control active now (HSMP)' : '') });
}

/*
 * AMD's cores have no sensor of their own: the grid shows each CCD's
 * temperature (k10temp Tccd1..12) instead, judged like Tctl.  Empty where
 * the socket has none (Turin: Tctl only).
 */
function ccdCells(sock) {
	const k = sock.k10temp_celsius;
	if (!k || typeof k !== 'object')
		return [];
	const acting = amdThermalControl(sock);
	return Object.entries(k).filter(([name, v]) => /^Tccd\d+$/.test(name) && isNum(v))
		.map(([name, v]) => [Number(name.slice(4)), v]).sort((a, b) => a[0] - b[0])
		.map(([n, v]) => {
			const words = `CCD ${n}: ${v} °C (k10temp Tccd${n}); ` + (acting ? 'thermal control active now; ' : '') + NO_LIMIT_WHY;
			return el('div', { class: 'ccd-cell', role: 'listitem', 'data-ccd': n,
				'data-band': acting ? 'hot' : 'nolimit', title: words, 'aria-label': words },
			el('span', { class: 'core-id', text: 'CCD ' + n, 'aria-hidden': 'true' }),
			el('span', { class: 'core-temp', text: v + '°', 'aria-hidden': 'true' }));
		});
}

/* ---- the last hour, from /api/v1/history ---- */

/* "the last hour", or "the last 12 min" while the daemon has not kept an hour yet. */
function spanWords(span) {
	if (span >= HOUR_S - 60)
		return 'the last hour';
	return span >= 120 ? `the last ${Math.round(span / 60)} min` : `the last ${Math.round(span)} s`;
}

function mean(values) {
	let n = 0, sum = 0;
	for (const v of values || [])
		if (isNum(v)) {
			n++;
			sum += v;
		}
	return n ? sum / n : null;
}

/*
 * What the history says of socket id: over how long (span, seconds), the
 * mean DRAM throttled, PROCHOT and frequency-limited shares, the share of
 * points with a core at TjMax, the hottest DIMM and the places; null
 * before the first point.
 */
function hourOf(id) {
	const doc = state.history;
	const s = doc && (doc.sockets || []).find((x) => x.socket === id);
	if (!s || !Array.isArray(s.time) || s.time.length === 0)
		return null;
	const margins = (s.margin_celsius || []).filter(isNum);
	const dimms = (s.hottest_dimm_celsius || []).filter(isNum);
	return {
		span: s.time.length * (doc.step_seconds || 5),
		dram: mean(s.dram_throttled_fraction),
		prochot: mean(s.prochot_fraction),
		freq: mean(s.frequency_limited_fraction),
		atTjmax: margins.length ? margins.filter((m) => m <= 0).length / margins.length : null,
		hottestDimm: dimms.length ? Math.max(...dimms) : null,
		places: Array.isArray(s.places) ? s.places : [],
	};
}

function pct(f) {
	return (100 * f).toFixed(f > 0 && f < 0.001 ? 3 : f < 0.1 ? 1 : 0) + ' %';
}

/*
 * Where the history's places say the memory was hottest: the channel
 * with the largest figure (a share of time, key), and the slots of it
 * close to that (within 10 %); null when no place of the socket had any.
 * Words: "channel 2 slots 0, 1", "die 1, channel 3".
 */
function hottestPlace(places, key) {
	let best = null;
	for (const p of places)
		if (isNum(p[key]) && p[key] > 0 && (best === null || p[key] > best[key] ||
			(p[key] === best[key] && p.slot !== undefined && best.slot === undefined)))
			best = p;
	if (best === null)
		return null;
	const same = (p) => p.channel === best.channel && p.die === best.die;
	const slots = places.filter((p) => same(p) && p.slot !== undefined && isNum(p[key]) && p[key] > 0);
	const top = slots.length ? Math.max(...slots.map((p) => p[key])) : 0;
	const named = slots.filter((p) => p[key] >= 0.9 * top).map((p) => p.slot).sort((a, b) => a - b);
	let words = (best.die !== undefined ? `die ${best.die}, ` : '') + `channel ${best.channel}`;
	if (named.length)
		words += (named.length > 1 ? ' slots ' : ' slot ') + named.join(', ');
	const last = Math.max(...places.filter(same).map((p) => isNum(p[key.replace('_fraction', '_last')]) ?
		p[key.replace('_fraction', '_last')] : -Infinity));
	return { words, share: best[key], channel: best.channel, slots: named, last: Number.isFinite(last) ? last : null };
}

/* "channel 2, slot 0" of a family's now path ("thermal/2/0"), by the socket's label levels. */
function nowWhere(sock, sh) {
	if (!sh || !sh.where)
		return null;
	const parts = sh.where.split('/');
	const names = dramLevels(sock)[parts.length - 1] || [];
	const said = parts.slice(1).map((v, i) => (names[i] ? names[i] + ' ' : '') + v);
	return said.length ? said.join(' ') : null;
}

/*
 * The conditions worth a verdict on one socket, the worst first: DRAM
 * throttled (where), a DIMM the SMU runs at twice the refresh rate,
 * PROCHOT, a core at TjMax; each with its share of the span and whether
 * it holds now.  Frequency limits are not heat by themselves (a power cap
 * limits too) and have their own row.
 */
function conditions(sock) {
	const h = hourOf(sock.socket);
	const d = state.derived.get(sock.socket) || {};
	const span = h ? spanWords(h.span) : null;
	const out = [];
	const dramNow = d.dram && d.dram.state === 'throttling';
	const dramWhere = h && hottestPlace(h.places, 'dram_throttled_fraction');
	if ((h && h.dram > 0) || dramNow || dramWhere) {
		const where = dramWhere ? dramWhere.words : nowWhere(sock, d.dram);
		const share = dramWhere ? dramWhere.share : h ? h.dram : null;
		let text = `DRAM throttled ${share !== null && share > 0 ? pct(share) + ' of ' + span : 'now'}`;
		if (share !== null && share > 0)
			text += dramNow ? ', throttling now' : dramWhere && dramWhere.last ? `, last at ${hhmmss(dramWhere.last)}` : ', not now';
		out.push({ socket: sock.socket, where, score: share || 0.001, now: dramNow, text, kind: 'dram' });
	}
	const dimms = dimmsOf(sock);
	const hotNow = dimms ? [...dimms.values()].filter(dimmHot) : [];
	const refresh = h && hottestPlace(h.places, 'refresh_doubled_fraction');
	if (refresh || hotNow.length) {
		const where = refresh ? refresh.words : `channel ${hotNow[0].channel} slot ${hotNow[0].slot}`;
		const share = refresh ? refresh.share : null;
		let text = 'DIMM hot (refresh doubled) ' + (share ? `${pct(share)} of ${span}` : 'now');
		if (share)
			text += hotNow.length ? ', hot now' : refresh.last ? `, last at ${hhmmss(refresh.last)}` : '';
		out.push({ socket: sock.socket, where, score: share || 0.001, now: hotNow.length > 0, text, kind: 'dimm' });
	}
	const prochotNow = (d.prochot && d.prochot.state === 'throttling') || sock.package_prochot_active === true ||
		(sock.cores || []).some((c) => c.prochot_active === true);
	if ((h && h.prochot > 0) || prochotNow) {
		const share = h && h.prochot > 0 ? h.prochot : null;
		out.push({ socket: sock.socket, where: null, score: share || 0.001, now: prochotNow, kind: 'prochot',
			text: `PROCHOT ${share ? pct(share) + ' of ' + span : 'now'}` + (share ? (prochotNow ? ', asserted now' : ', not now') : '') });
	}
	const tjNow = (sock.cores || []).some((c) => c.thermal_throttling === true);
	if ((h && h.atTjmax > 0) || tjNow) {
		const share = h && h.atTjmax > 0 ? h.atTjmax : null;
		out.push({ socket: sock.socket, where: null, score: share || 0.001, now: tjNow, kind: 'tjmax',
			text: `a core at TjMax ${share ? pct(share) + ' of ' + span : 'now'}` + (share ? (tjNow ? ', throttling now' : ', not now') : '') });
	}
	return out;
}

/* The verdict line: the worst condition of any socket, or that there was no heat. */
function renderVerdict(s) {
	const all = (s.sockets || []).flatMap(conditions).sort((a, b) => (b.now - a.now) || (b.score - a.score));
	const box = $('verdict');
	const spans = (s.sockets || []).map((x) => hourOf(x.socket)).filter((x) => x !== null);
	const span = spans.length ? spanWords(Math.min(...spans.map((x) => x.span))) : null;
	const say = (c) => `Socket ${c.socket}${c.where ? ', ' + c.where : ''}: ${c.text}`;
	if (all.length === 0) {
		box.textContent = span ? `No heat in ${span}` : 'No heat now (no history yet)';
		box.setAttribute('data-state', 'ok');
	} else {
		box.textContent = say(all[0]) + (all.length > 1 ? `; also ${say(all[1])}` +
			(all.length > 2 ? ` (and ${all.length - 2} more)` : '') : '');
		box.setAttribute('data-state', all[0].now ? 'throttling' : 'was');
	}
	box.setAttribute('data-socket', all.length ? all[0].socket : '');
	box.setAttribute('data-kind', all.length ? all[0].kind : '');
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

/* A family's share over the history's span, with where (DRAM: the hottest place); null without history. */
function hourText(sock, key) {
	const h = hourOf(sock.socket);
	if (h === null || !isNum(h[key]))
		return null;
	let text = `${pct(h[key])} of ${spanWords(h.span)}`;
	if (key === 'dram') {
		const where = hottestPlace(h.places, 'dram_throttled_fraction');
		if (where)
			text += ` (worst: ${where.words}, ${pct(where.share)}` + (where.last ? `, last at ${hhmmss(where.last)})` : ')');
	}
	return text;
}

/* One row's value: what it is now, then, where the history has it, over the last hour. */
function nowAndHour(nowSpan, hour) {
	const dd = el('span', { class: 'now-hour' }, nowSpan);
	if (hour)
		dd.append(el('span', { class: 'hour', text: ' · ' + hour }));
	return dd;
}

function familyFacts(sock) {
	const d = state.derived.get(sock.socket) || {};
	const unknown = { state: 'unknown', fraction: null, where: null };
	const dram = d.dram || unknown, freq = d.freq || unknown;
	const stateOf = (sh) => sh.state === 'absent' ? 'unknown' : sh.state;
	return [
		['DRAM throttling, now', stateSpan('dram-state', stateOf(dram), FAMILY_LABELS[dram.state])],
		['DRAM throttled, now · last hour', nowAndHour(el('span', { class: 'dram-fraction', 'data-state': dram.state,
			text: dram.state === 'absent' ? 'not measured on this CPU' : shareText(dram, dramLevels(sock)) }),
		dram.state === 'absent' ? null : hourText(sock, 'dram'))],
		['PROCHOT, now · last hour', prochotRow(sock)],
		['Frequency limited, now · last hour', nowAndHour(el('span', { class: 'freq-fraction', 'data-state': freq.state,
			text: freq.state === 'absent' ? 'not measured on this CPU' : shareText(freq, { 1: ['die'] }) }),
		freq.state === 'absent' ? null : hourText(sock, 'freq'))],
		['DIMM temperature, now · last hour', dimmFact(sock)],
	];
}

/*
 * One PROCHOT row from every source the host has: the measured share of
 * time (the throttle family, external or internal or "any"), the
 * PROCHOT# status bit, the Westmere uncore's assertion count, and the
 * history's share.  The bit is the external pin only, so where a share
 * is above zero it is said to be clear, never "not asserted".
 */
function prochotRow(sock) {
	const d = state.derived.get(sock.socket) || {};
	const hot = d.prochot || { state: 'unknown', fraction: null, where: null };
	const h = hourOf(sock.socket);
	const hourShare = h && isNum(h.prochot) ? h.prochot : null;
	const nowShare = hot.state === 'throttling' ? hot.fraction : null;
	const anyShare = (nowShare || 0) > 0 || (hourShare || 0) > 0;
	const row = el('span', { class: 'prochot-row' });
	let text;
	if (hot.state === 'absent')
		text = 'time not measured on this CPU';
	else if (hot.state === 'unknown')
		text = 'measuring…';
	else
		text = nowShare > 0 ? `asserted ${shareText(hot, { 1: ['die'] })} now` : 'none now';
	row.append(el('span', { class: 'prochot-fraction', 'data-state': hot.state, text }));
	row.append(document.createTextNode('; '), prochotFact(sock, anyShare));
	if (hourShare !== null)
		row.append(el('span', { class: 'hour', text: ` · ${pct(hourShare)} of ${spanWords(h.span)}` }));
	return row;
}

function prochotFact(sock, anyShare) {
	const cores = sock.cores || [];
	const known = sock.package_prochot_active !== undefined && sock.package_prochot_active !== null ||
		cores.some((c) => typeof c.prochot_active === 'boolean');
	const active = sock.package_prochot_active === true || cores.some((c) => c.prochot_active === true);
	const d = state.derived.get(sock.socket);
	if (!known && !hasRegister(sock, 'package_prochot_active'))
		return stateSpan('prochot-state', 'absent', 'no status bit on this CPU');
	let text = !known ? 'no reading of the PROCHOT# bit' : active ? 'PROCHOT# asserted now' :
		anyShare ? 'PROCHOT# pin clear now' : 'not asserted';
	if (d && d.prochotDelta !== null && d.prochotDelta > 0)
		text += ` (${d.prochotDelta} assertions since last poll)`;
	/* The pin clear beside a measured share is no all-clear: not green. */
	return stateSpan('prochot-state', !known ? 'unknown' : active ? 'active' : anyShare ? 'pin-clear' : 'ok', text);
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
		['Temperature, now', temperatureFact(sock, t)],
		['Margin to TjMax, now', !hasRegister(sock, 'tjmax_celsius') ? 'no TjMax on this CPU' :
			t === null || tj === null ? '—' : `${tj - t.value} °C (TjMax ${tj} °C)`],
		...familyFacts(sock),
		['Package throttling, now', boolFact(sock, 'package_thermal_throttling', 'throttling now', 'no', 'package-state')],
	];
	const dl = el('dl', { class: 'facts' });
	for (const [k, v] of facts)
		dl.append(el('dt', { text: k }), el('dd', {}, typeof v === 'string' ? document.createTextNode(v) : v));
	const cores = (sock.cores || []).slice().sort((a, b) => a.core - b.core);
	const ccds = cores.some((c) => isNum(c.temperature_celsius)) ? [] : ccdCells(sock);
	const grid = el('div', { class: 'grid', role: 'list', 'aria-label': ccds.length ?
		`CCD temperatures of socket ${sock.socket} (its ${cores.length} cores have no sensor of their own)` :
		`Cores of socket ${sock.socket}` });
	if (ccds.length)
		grid.append(...ccds);
	else
		for (const c of cores)
			grid.append(coreCell(sock, c));
	const note = ccds.length ? el('p', { class: 'hint grid-note',
		text: `CCD temperatures (k10temp Tccd): its ${cores.length} cores have no sensor of their own; no limit known.` }) : null;
	return el('article', { class: 'socket', 'data-socket': sock.socket, 'aria-labelledby': 'socket-h-' + sock.socket },
		el('h3', { id: 'socket-h-' + sock.socket, text: `Socket ${sock.socket}` }), dl, heatMap(sock), note, grid);
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

/*
 * The verdict and the cards: from the last snapshot and the last history,
 * so drawn again when either arrives (the signals section only with a new
 * snapshot, since it measures between two).
 */
function renderSockets(s) {
	$('sockets').replaceChildren(...(s.sockets || []).map(socketCard));
	renderVerdict(s);
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
	renderSockets(s);
	renderCollectors(s.collectors);
	Signals.render(s);
}

/*
 * The last EPISODE_WINDOW_S seconds of episodes, one row per place and
 * condition (a channel's DRAM throttling, a socket's PROCHOT, a core's
 * thermal throttling): its words, how many episodes and how long in all,
 * the newest one (an ongoing one with its running length), and a strip on
 * which each episode is a bar.  A storm is a handful of rows, however many
 * bursts it has.
 */
const MAX_EPISODE_ROWS = 16;
const EPISODE_NAMES = {
	dram_thermal_throttling: 'DRAM throttled for heat',
	dram_throttled_seconds: 'DRAM throttled',
	prochot_seconds: 'PROCHOT asserted',
	frequency_limited_seconds: 'frequency limited',
	prochot: 'PROCHOT asserted',
	core_thermal_throttling: 'core throttled for heat',
	package_thermal_throttling: 'package throttled for heat',
};

/* The row an episode belongs to: its condition and its place (socket, die, channel, core). */
function episodeRowKey(e) {
	const l = e.labels && typeof e.labels === 'object' ? e.labels : {};
	const part = (v) => (v === null || v === undefined ? '' : String(v));
	return [e.kind, e.socket, part(l.die), part(l.channel), part(e.core)].join('/');
}

function episodeSeconds(s) {
	if (s < 60)
		return s.toFixed(1) + ' s';
	const t = Math.round(s);
	return `${Math.floor(t / 60)} min ${t % 60} s`;
}

/* An episode's length: its end less its start, or while ongoing its running length up to now. */
function episodeLength(e, now) {
	if (isNum(e.end))
		return Math.max(0, e.end - e.start);
	return Math.max(isNum(e.duration_seconds) ? e.duration_seconds : 0, now - e.start);
}

function episodeRow(row, now, from) {
	const e = row.episodes[0];    /* the newest */
	/* Its words from the episode with the most series in it (both slots, both sources). */
	const parts = (x) => (Array.isArray(x.parts) ? x.parts.length : 0);
	const named = row.episodes.reduce((best, x) => (parts(x) > parts(best) ? x : best), e);
	const ongoing = !isNum(e.end);
	const n = row.episodes.length;
	const total = row.episodes.reduce((sum, x) => sum + episodeLength(x, now), 0);
	const place = named.place || `socket ${e.socket}` + (isNum(e.core) ? ` core ${e.core}` : '');
	const what = named.what || EPISODE_NAMES[e.kind] || e.kind;
	const newest = ongoing ? `now, ${episodeSeconds(episodeLength(e, now))} so far`
		: `last ${hhmmss(e.start)}–${hhmmss(e.end)} (${episodeSeconds(episodeLength(e, now))})`;
	const summary = `${n} ${n === 1 ? 'episode' : 'episodes'}, ${episodeSeconds(total)} in all; ${newest}`;
	const track = el('div', { class: 'track', 'aria-hidden': 'true' });
	for (const x of row.episodes) {
		const start = Math.max(x.start, from);
		const end = isNum(x.end) ? x.end : now;
		const bar = el('div', { class: 'bar' + (isNum(x.end) ? '' : ' ongoing') });
		bar.style.left = (100 * (start - from) / EPISODE_WINDOW_S).toFixed(2) + '%';
		bar.style.width = (100 * Math.max(0, end - start) / EPISODE_WINDOW_S).toFixed(2) + '%';
		track.append(bar);
	}
	return el('div', {
		class: 'episode' + (ongoing ? ' ongoing' : ''), 'data-kind': e.kind, 'data-socket': e.socket,
		'data-place': row.key, 'data-episodes': n,
	},
	el('div', { class: 'episode-text' },
		el('span', { class: 'episode-what', text: `${place}: ${what}` }),
		el('span', { class: 'episode-summary', text: summary })),
	track);
}

function renderEpisodes(now) {
	const box = $('timeline');
	const from = now - EPISODE_WINDOW_S;
	const rows = new Map();
	for (const e of state.episodes) {   /* newest first */
		if (isNum(e.end) && e.end < from)
			continue;
		const key = episodeRowKey(e);
		if (!rows.has(key))
			rows.set(key, { key, episodes: [] });
		rows.get(key).episodes.push(e);
	}
	/* Ongoing rows first, then the most recently active. */
	const latest = (row) => (isNum(row.episodes[0].end) ? row.episodes[0].end : now);
	const ongoing = (row) => (isNum(row.episodes[0].end) ? 0 : 1);
	const list = [...rows.values()].sort((a, b) => ongoing(b) - ongoing(a) || latest(b) - latest(a));
	const shown = list.slice(0, MAX_EPISODE_ROWS);
	$('episodes-empty').hidden = list.length > 0;
	const more = list.length - shown.length;
	const moreNote = $('episodes-more');
	moreNote.hidden = more <= 0;
	moreNote.textContent = more > 0 ? `${more} more ${more === 1 ? 'place' : 'places'} (/api/v1/episodes lists them)` : '';
	box.replaceChildren(...shown.map((row) => episodeRow(row, now, from)));
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
		state.snapshot = s;
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
		/* The verdict, the cards' last hour and the map read the history too. */
		if (state.snapshot)
			renderSockets(state.snapshot);
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
