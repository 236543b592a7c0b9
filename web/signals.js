/*
 * The "Throttling signals" section: which generation-independent
 * throttling signals this host can see and why not (the snapshot's
 * "throttling_signals"), and, per socket, the share of time each seen
 * signal held since the previous poll, from the socket's field of the
 * signal's family (the family name without "uncored_" and "_total", an
 * object by label value whose leaves may be split further, by channel
 * say).  A signal the host cannot see, or a socket without its field, is
 * not shown; the section says so when nothing is seen at all.
 */
'use strict';

const Signals = (() => {
	const prev = new Map(); /* "socket/family/value" -> {time, leaves} */

	function el(tag, attrs, ...children) {
		const e = document.createElement(tag);
		for (const [k, v] of Object.entries(attrs || {}))
			if (k === 'text')
				e.textContent = v;
			else if (v !== null && v !== undefined)
				e.setAttribute(k, v);
		for (const c of children)
			if (c !== null && c !== undefined)
				e.append(c);
		return e;
	}

	function title(sig) {
		const names = { dram_throttled: 'DRAM throttled', prochot: 'PROCHOT',
			frequency_limited: 'Frequency limited' };
		const key = { dram_throttled: 'cause', prochot: 'source', frequency_limited: 'reason' }[sig.signal];
		const value = key && typeof sig[key] === 'string' ? sig[key].replace(/_/g, ' ') : '?';
		return `${names[sig.signal] || sig.signal} (${value})`;
	}

	function labelValue(sig) {
		const key = { dram_throttled: 'cause', prochot: 'source', frequency_limited: 'reason' }[sig.signal];
		return key ? sig[key] : undefined;
	}

	/* Every number under v, by its path: one leaf per channel, or the value itself. */
	function leaves(v, path, out) {
		if (typeof v === 'number' && Number.isFinite(v))
			out.set(path, v);
		else if (v && typeof v === 'object')
			for (const [k, x] of Object.entries(v))
				leaves(x, path + '/' + k, out);
		return out;
	}

	/* Largest share of time over the leaves since the previous poll, or null. */
	function share(key, time, value) {
		const cur = { time, leaves: leaves(value, '', new Map()) };
		const p = prev.get(key);
		prev.set(key, cur);
		if (!p || !(time > p.time) || cur.leaves.size === 0)
			return null;
		let best = null;
		for (const [path, v] of cur.leaves) {
			const before = p.leaves.get(path);
			if (before === undefined || v < before)
				continue;
			const f = Math.min(1, (v - before) / (time - p.time));
			best = best === null ? f : Math.max(best, f);
		}
		return best;
	}

	function render(s) {
		const list = Array.isArray(s.throttling_signals) ? s.throttling_signals : [];
		const seen = list.filter((x) => x.visible === true);
		const unseen = list.filter((x) => x.visible !== true);
		const values = document.getElementById('signal-values');
		const rows = [];
		for (const sig of seen) {
			const field = typeof sig.family === 'string' ? sig.family.replace(/^uncored_/, '').replace(/_total$/, '') : '';
			for (const sock of s.sockets || []) {
				const byLabel = sock[field];
				const v = byLabel && typeof byLabel === 'object' ? byLabel[labelValue(sig)] : undefined;
				if (v === undefined || v === null)
					continue;
				const f = share(`${sock.socket}/${field}/${labelValue(sig)}`, s.time, v);
				rows.push(el('tr', { 'data-signal': `${sig.signal}/${labelValue(sig)}`, 'data-socket': sock.socket },
					el('th', { scope: 'row', text: title(sig) }),
					el('td', { class: 'num', text: String(sock.socket) }),
					el('td', { class: 'num', text: f === null ? 'measuring…' :
						(100 * f).toFixed(f > 0 && f < 0.001 ? 3 : 1) + ' % of time' })));
			}
		}
		values.replaceChildren();
		if (rows.length)
			values.append(el('table', { class: 'collectors signal-values' },
				el('thead', {}, el('tr', {},
					el('th', { scope: 'col', text: 'Signal' }),
					el('th', { scope: 'col', text: 'Socket' }),
					el('th', { scope: 'col', text: 'Since the previous poll' }))),
				el('tbody', {}, ...rows)));

		const seenBox = document.getElementById('signals-seen');
		seenBox.replaceChildren(...seen.map((x) => el('li', { 'data-signal': `${x.signal}/${labelValue(x)}`,
			text: `${title(x)}: ${x.collector} collector` })));
		document.getElementById('signals-none').hidden = seen.length > 0 || list.length === 0;
		const unseenBox = document.getElementById('signals-unseen');
		unseenBox.replaceChildren(...unseen.map((x) => el('li', { 'data-signal': `${x.signal}/${labelValue(x)}`,
			text: `${title(x)}: ${x.why_not || 'not measured'}` })));
		document.getElementById('signals-unseen-box').hidden = unseen.length === 0;
	}

	return { render };
})();
