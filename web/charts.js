/*
 * uncored web page: the last hour of each socket as one small SVG chart,
 * all charts on one shared time axis.  Top band: hottest core, package,
 * margin to TjMax and, where the socket has DIMM sensors, the hottest
 * DIMM in °C (lines).  Middle band: DRAM throttled and
 * PROCHOT fractions of time (filled areas, drawn only where non-zero, one
 * path per run so each throttling interval is its own shape).  Bottom row:
 * that socket's throttle episodes.  Hover or focus a chart (arrow keys
 * move) to read the values of one point.
 *
 * Input is /api/v1/history as served; nothing is parsed as HTML.  Drawing
 * is separate from fetching (app.js), so the last charts stay when a fetch
 * fails.
 */
'use strict';

const Charts = (() => {
	const NS = 'http://www.w3.org/2000/svg';
	const W = 720;
	const PAD_L = 60, PAD_R = 10;
	const TEMP_TOP = 8, TEMP_H = 88;
	const FRAC_TOP = TEMP_TOP + TEMP_H + 10, FRAC_H = 40;
	const EPI_TOP = FRAC_TOP + FRAC_H + 8, EPI_H = 10;
	const AXIS_TOP = EPI_TOP + EPI_H + 14;
	const H = AXIS_TOP + 4;

	const SERIES = [
		{ key: 'hottest_core_celsius', label: 'hottest core', unit: '°C', cls: 'line-core' },
		{ key: 'package_celsius', label: 'package', unit: '°C', cls: 'line-package' },
		{ key: 'margin_celsius', label: 'margin to TjMax', unit: '°C', cls: 'line-margin' },
		{ key: 'hottest_dimm_celsius', label: 'hottest DIMM', unit: '°C', cls: 'line-dimm' },
	];
	const AREAS = [
		{ key: 'dram_throttled_fraction', label: 'DRAM throttled', cls: 'area-dram' },
		{ key: 'prochot_fraction', label: 'PROCHOT', cls: 'area-prochot' },
		{ key: 'frequency_limited_fraction', label: 'frequency limited', cls: 'area-freq' },
	];

	function svg(tag, attrs, text) {
		const e = document.createElementNS(NS, tag);
		for (const [k, v] of Object.entries(attrs || {}))
			if (v !== null && v !== undefined)
				e.setAttribute(k, String(v));
		if (text !== undefined)
			e.textContent = text;
		return e;
	}

	function isNum(v) { return typeof v === 'number' && Number.isFinite(v); }

	function clock(t) {
		return new Date(t * 1000).toLocaleTimeString([], { hour12: false, hour: '2-digit', minute: '2-digit' });
	}

	function clockSeconds(t) {
		return new Date(t * 1000).toLocaleTimeString([], { hour12: false });
	}

	/* The time span every chart shares: from the oldest step's start to the newest point. */
	function timeDomain(doc) {
		let lo = Infinity, hi = -Infinity;
		for (const s of doc.sockets || [])
			for (const t of s.time || []) {
				lo = Math.min(lo, t);
				hi = Math.max(hi, t);
			}
		if (!Number.isFinite(lo))
			return null;
		lo -= doc.step_seconds || 5;
		return { lo, hi: Math.max(hi, lo + 1) };
	}

	function tempDomain(s) {
		let lo = Infinity, hi = -Infinity;
		for (const k of SERIES.map((ser) => ser.key))
			for (const v of s[k] || [])
				if (isNum(v)) {
					lo = Math.min(lo, v);
					hi = Math.max(hi, v);
				}
		if (!Number.isFinite(lo))
			return { lo: 0, hi: 100 };
		lo = Math.floor(Math.min(lo, 0) / 10) * 10;
		hi = Math.ceil((hi + 1) / 10) * 10;
		return { lo, hi };
	}

	/* Runs of consecutive indices where pred holds. */
	function runs(values, pred) {
		const out = [];
		let start = -1;
		for (let i = 0; i <= values.length; i++) {
			const on = i < values.length && pred(values[i]);
			if (on && start < 0)
				start = i;
			else if (!on && start >= 0) {
				out.push([start, i - 1]);
				start = -1;
			}
		}
		return out;
	}

	function linePath(times, values, x, y) {
		let d = '';
		for (const [a, b] of runs(values, isNum))
			for (let i = a; i <= b; i++)
				d += (i === a ? 'M' : 'L') + x(times[i]).toFixed(1) + ' ' + y(values[i]).toFixed(1);
		return d;
	}

	/*
	 * One area per run of non-zero values: each point covers its step,
	 * [time - step, time], as a block, since the value is an average over it.
	 */
	function areaPaths(times, values, step, x, y, base) {
		const out = [];
		for (const [a, b] of runs(values, (v) => isNum(v) && v > 0)) {
			let d = 'M' + x(times[a] - step).toFixed(1) + ' ' + base.toFixed(1);
			for (let i = a; i <= b; i++) {
				const top = y(values[i]).toFixed(1);
				d += 'L' + x(times[i] - step).toFixed(1) + ' ' + top + 'L' + x(times[i]).toFixed(1) + ' ' + top;
			}
			d += 'L' + x(times[b]).toFixed(1) + ' ' + base.toFixed(1) + 'Z';
			out.push({ d, start: times[a] - step, end: times[b] });
		}
		return out;
	}

	function fmt(v, unit) {
		if (!isNum(v))
			return '—';
		return unit === '%' ? (100 * v).toFixed(v > 0 && v < 0.001 ? 3 : 1) + ' %' : v.toFixed(unit === '' ? 2 : 0) + (unit ? ' ' + unit : '');
	}

	/* A socket without a package sensor names what its package line is instead (AMD: Tctl). */
	function seriesLabel(s, ser) {
		return ser.key === 'package_celsius' && s.package_sensor ? s.package_sensor : ser.label;
	}

	function readoutText(s, i) {
		const parts = [clockSeconds(s.time[i])];
		for (const ser of SERIES)
			if (Array.isArray(s[ser.key]))   /* the hottest DIMM only where the socket has DIMM sensors */
				parts.push(`${seriesLabel(s, ser)} ${fmt(s[ser.key][i], ser.unit)}`);
		for (const ar of AREAS)
			parts.push(`${ar.label} ${fmt(s[ar.key][i], '%')}`);
		parts.push(`IPC ${fmt(s.ipc[i], '')}`);
		return parts.join(' · ');
	}

	function axis(g, dom, x) {
		const span = dom.hi - dom.lo;
		const stepS = [60, 300, 600, 900, 1800].find((v) => span / v <= 6) || 3600;
		g.append(svg('line', { class: 'axis', x1: PAD_L, x2: W - PAD_R, y1: AXIS_TOP - 10, y2: AXIS_TOP - 10 }));
		for (let t = Math.ceil(dom.lo / stepS) * stepS; t <= dom.hi; t += stepS) {
			g.append(svg('line', { class: 'tick', x1: x(t), x2: x(t), y1: TEMP_TOP, y2: AXIS_TOP - 10 }));
			g.append(svg('text', { class: 'tick-label', x: x(t), y: AXIS_TOP + 2, 'text-anchor': 'middle' }, clock(t)));
		}
	}

	function chart(s, dom, step, episodes) {
		const x = (t) => PAD_L + (W - PAD_L - PAD_R) * (t - dom.lo) / (dom.hi - dom.lo);
		const td = tempDomain(s);
		const yT = (v) => TEMP_TOP + TEMP_H * (1 - (v - td.lo) / (td.hi - td.lo));
		const yF = (v) => FRAC_TOP + FRAC_H * (1 - Math.min(1, Math.max(0, v)));
		const n = (s.time || []).length;
		const root = svg('svg', {
			class: 'history-chart', viewBox: `0 0 ${W} ${H}`, role: 'img', tabindex: 0,
			'data-socket': s.socket, 'data-points': n,
			'aria-label': `Socket ${s.socket}, last hour: temperatures, margin to TjMax and throttled time; ` +
				'hover or use the arrow keys to read a point',
		});
		const g = svg('g');
		root.append(g);

		g.append(svg('rect', { class: 'band', x: PAD_L, y: TEMP_TOP, width: W - PAD_L - PAD_R, height: TEMP_H }));
		g.append(svg('rect', { class: 'band', x: PAD_L, y: FRAC_TOP, width: W - PAD_L - PAD_R, height: FRAC_H }));
		g.append(svg('text', { class: 'y-label', x: PAD_L - 4, y: TEMP_TOP + 8, 'text-anchor': 'end' }, `${td.hi}°`));
		g.append(svg('text', { class: 'y-label', x: PAD_L - 4, y: TEMP_TOP + TEMP_H, 'text-anchor': 'end' }, `${td.lo}°`));
		g.append(svg('text', { class: 'y-label', x: PAD_L - 4, y: FRAC_TOP + 8, 'text-anchor': 'end' }, '100%'));
		g.append(svg('text', { class: 'y-label', x: PAD_L - 4, y: FRAC_TOP + FRAC_H, 'text-anchor': 'end' }, '0%'));
		g.append(svg('text', { class: 'y-label', x: PAD_L - 4, y: EPI_TOP + EPI_H - 1, 'text-anchor': 'end' }, 'episodes'));
		axis(g, dom, x);

		for (const ar of AREAS)
			for (const a of areaPaths(s.time, s[ar.key] || [], step, x, yF, FRAC_TOP + FRAC_H))
				g.append(svg('path', { class: 'area ' + ar.cls, d: a.d, 'data-start': a.start, 'data-end': a.end }));
		for (const ser of SERIES) {
			const d = linePath(s.time, s[ser.key] || [], x, yT);
			if (d)
				g.append(svg('path', { class: 'line ' + ser.cls, d }));
		}
		for (const e of episodes) {
			const start = Math.max(e.start, dom.lo);
			const end = isNum(e.end) ? Math.min(e.end, dom.hi) : dom.hi;
			if (end < dom.lo || start > dom.hi)
				continue;
			g.append(svg('rect', {
				class: 'episode-mark' + (isNum(e.end) ? '' : ' ongoing'), 'data-kind': e.kind,
				x: x(start), y: EPI_TOP, width: Math.max(2, x(end) - x(start)), height: EPI_H,
			}));
		}

		const cursor = svg('line', { class: 'cursor', y1: TEMP_TOP, y2: EPI_TOP + EPI_H, visibility: 'hidden' });
		g.append(cursor);
		return { root, x, cursor };
	}

	function nearest(times, t) {
		let best = 0;
		for (let i = 1; i < times.length; i++)
			if (Math.abs(times[i] - t) < Math.abs(times[best] - t))
				best = i;
		return best;
	}

	/*
	 * What the reader is looking at, by socket: the time of the point shown
	 * and whether the cursor is up.  A redraw (a new point every step)
	 * builds new charts; this lets it put the cursor, the readout and the
	 * keyboard focus back where they were.
	 */
	const held = new Map();

	/* Attach hover and keyboard reading of points to one chart; returns its show(index). */
	function interactive(c, s, readout) {
		let at = -1;
		const show = (i) => {
			if (!s.time.length)
				return;
			at = Math.max(0, Math.min(s.time.length - 1, i));
			const px = c.x(s.time[at]);
			c.cursor.setAttribute('x1', px);
			c.cursor.setAttribute('x2', px);
			c.cursor.setAttribute('visibility', 'visible');
			readout.textContent = readoutText(s, at);
			held.set(s.socket, s.time[at]);
		};
		c.root.addEventListener('pointermove', (ev) => {
			const box = c.root.getBoundingClientRect();
			const vx = (ev.clientX - box.left) * W / box.width;
			const dom = c.root.__domain;
			show(nearest(s.time, dom.lo + (vx - PAD_L) * (dom.hi - dom.lo) / (W - PAD_L - PAD_R)));
		});
		c.root.addEventListener('focus', () => show(at < 0 ? s.time.length - 1 : at));
		c.root.addEventListener('keydown', (ev) => {
			if (ev.key === 'ArrowLeft' || ev.key === 'ArrowRight') {
				show(at + (ev.key === 'ArrowLeft' ? -1 : 1));
				ev.preventDefault();
			}
		});
		const hide = () => {
			c.cursor.setAttribute('visibility', 'hidden');
			held.delete(s.socket);
		};
		c.root.addEventListener('pointerleave', hide);
		c.root.addEventListener('blur', hide);
		return show;
	}

	let drawn = null;   /* the input of the charts on the page, as JSON */

	/* Draw doc (an /api/v1/history document) and the episodes into box. */
	function draw(box, doc, episodes) {
		const input = JSON.stringify([doc, episodes || []]);
		if (input === drawn && box.childElementCount)
			return;   /* nothing new: keep the charts, and the reader's place in them */
		drawn = input;
		const focused = document.activeElement && document.activeElement.closest ?
			document.activeElement.closest('svg.history-chart') : null;
		const refocus = focused && box.contains(focused) ? focused.getAttribute('data-socket') : null;
		const dom = timeDomain(doc);
		const step = doc.step_seconds || 5;
		const figures = [];
		const restore = [];
		for (const s of doc.sockets || []) {
			const fig = document.createElement('figure');
			fig.className = 'history';
			fig.setAttribute('data-socket', s.socket);
			const cap = document.createElement('figcaption');
			cap.textContent = `Socket ${s.socket}`;
			const readout = document.createElement('p');
			readout.className = 'readout';
			readout.setAttribute('aria-live', 'polite');
			fig.append(cap);
			if (!dom) {
				readout.textContent = 'No history yet: the first point comes after one step (' + step + ' s).';
				fig.append(readout);
				figures.push(fig);
				continue;
			}
			const c = chart(s, dom, step, (episodes || []).filter((e) => e.socket === s.socket));
			c.root.__domain = dom;
			const show = interactive(c, s, readout);
			readout.textContent = s.time.length ? readoutText(s, s.time.length - 1) : '';
			fig.append(c.root, readout);
			figures.push(fig);
			/* Taken now: replacing the old charts may blur them, which forgets the place. */
			const t = held.get(s.socket);
			if (refocus === String(s.socket))
				restore.push(() => c.root.focus({ preventScroll: true }));
			if (t !== undefined)
				restore.push(() => show(nearest(s.time, t)));
		}
		box.replaceChildren(...figures);
		for (const r of restore)
			r();
	}

	return { draw };
})();
