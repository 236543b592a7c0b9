/*
 * Headless Chromium check of the page's last-hour charts, driven by
 * web_history.sh against a simulated Westmere-EP running
 * tests/data/scenarios/dram-pulse.ini (socket 1 DRAM throttles from 1 s to
 * 8 s of every 600 s).
 *
 * Env: PLAYWRIGHT_CORE (module dir), UNCORED_URL, USER_DATA_DIR,
 * SCREENSHOT, T_BEFORE and T_HEALTHY (wall time just before the daemon
 * started and once it answered: the scenario's time 0 lies between them),
 * COLOR_SCHEME (light or dark).  Exits 0 when every check passes.
 */
'use strict';

const { run } = require('./web_browser.js');

const url = process.env.UNCORED_URL;
const tBefore = Number(process.env.T_BEFORE);
const tHealthy = Number(process.env.T_HEALTHY);
const PULSE = [1, 8];        /* seconds of the scenario's period when socket 1 throttles */
const SLACK = 1.5;           /* sampling interval and clock rounding */

function fail(msg) {
	throw new Error(msg);
}

async function history(page) {
	return page.evaluate(async () => (await fetch('/api/v1/history', { cache: 'no-store' })).json());
}

/* Wait until the API has a point past the pulse, so the area has its end. */
async function waitForPulse(page) {
	const until = Date.now() + 60000;
	for (;;) {
		const doc = await history(page);
		const s1 = doc.sockets.find((s) => s.socket === 1);
		if (s1 && s1.time.length && s1.time[s1.time.length - 1] > tHealthy + PULSE[1] + doc.step_seconds)
			return doc;
		if (Date.now() > until)
			fail('history did not reach the end of the pulse within 60 s: ' + JSON.stringify(doc));
		await new Promise((r) => setTimeout(r, 250));
	}
}

function checkApi(doc) {
	const step = doc.step_seconds;
	const s0 = doc.sockets.find((s) => s.socket === 0);
	const s1 = doc.sockets.find((s) => s.socket === 1);
	if (!s0 || !s1)
		fail('history lacks socket 0 or 1');
	if (s0.dram_throttled_fraction.some((v) => v > 0))
		fail('socket 0 shows DRAM throttling: ' + JSON.stringify(s0.dram_throttled_fraction));
	let hot = 0;
	s1.time.forEach((t, i) => {
		const v = s1.dram_throttled_fraction[i];
		if (typeof v !== 'number')
			fail(`socket 1 point ${i} has no DRAM fraction`);
		const overlaps = t - step < tHealthy + PULSE[1] + SLACK && t > tBefore + PULSE[0] - SLACK;
		if (v > 0) {
			hot++;
			if (!overlaps)
				fail(`socket 1 throttles in the step ending ${t}, outside the pulse ` +
				     `(${tBefore + PULSE[0]} .. ${tHealthy + PULSE[1]})`);
		} else if (overlaps && t - step > tHealthy + PULSE[0] + SLACK && t < tBefore + PULSE[1] - SLACK) {
			fail(`socket 1 shows no throttling in the step ending ${t}, inside the pulse`);
		}
	});
	if (hot === 0)
		fail('socket 1 shows no DRAM throttling at all: ' + JSON.stringify(s1));
	return hot;
}

async function check(page) {
	await page.goto(url + '/', { timeout: 15000 });
	const doc = await waitForPulse(page);
	checkApi(doc);

	/* The page draws what the API returned: same number of points per chart. */
	try {
		await page.waitForFunction((want) => {
			const c = document.querySelector('svg.history-chart[data-socket="1"]');
			return c && Number(c.getAttribute('data-points')) >= want;
		}, doc.sockets[1].time.length, { timeout: 15000 });
	} catch (e) {
		const seen = await page.evaluate(() => ({
			points: [...document.querySelectorAll('svg.history-chart')].map((c) => c.getAttribute('data-points')),
			stale: document.getElementById('history-stale').hidden ? null : document.getElementById('history-stale').textContent,
			now: Date.now() / 1000,
		}));
		const latest = await history(page);
		fail(`the charts did not reach ${doc.sockets[1].time.length} points: page ${JSON.stringify(seen)}, ` +
		     `API now ${latest.sockets[1].time.length} points, last at ${latest.sockets[1].time.slice(-1)}; ${e.message}`);
	}
	const drawn = await history(page).then(async (latest) => page.evaluate((want) => {
		const out = {};
		for (const s of want.sockets) {
			const c = document.querySelector(`svg.history-chart[data-socket="${s.socket}"]`);
			out[s.socket] = c ? Number(c.getAttribute('data-points')) : null;
		}
		return out;
	}, latest));
	for (const s of doc.sockets)
		if (drawn[s.socket] === null)
			fail(`no chart for socket ${s.socket}`);

	/* Re-read both at once so they agree on the number of points. */
	const both = await page.evaluate(async () => {
		const d = await (await fetch('/api/v1/history', { cache: 'no-store' })).json();
		const charts = {};
		for (const c of document.querySelectorAll('svg.history-chart'))
			charts[c.getAttribute('data-socket')] = Number(c.getAttribute('data-points'));
		return { d, charts };
	});
	for (const s of both.d.sockets) {
		const n = both.charts[String(s.socket)];
		if (Math.abs(n - s.time.length) > 1)
			fail(`chart of socket ${s.socket} has ${n} points, the API ${s.time.length}`);
	}

	/* Socket 1: a non-empty DRAM area at the pulse; socket 0: none. */
	const areas = await page.evaluate(() => [...document.querySelectorAll('svg.history-chart .area-dram')].map((p) => {
		const b = p.getBBox();
		return {
			socket: p.closest('svg').getAttribute('data-socket'),
			start: Number(p.getAttribute('data-start')), end: Number(p.getAttribute('data-end')),
			width: b.width, height: b.height,
		};
	}));
	if (areas.some((a) => a.socket === '0'))
		fail('socket 0 chart has a DRAM area');
	const a1 = areas.filter((a) => a.socket === '1');
	if (a1.length < 1)
		fail('socket 1 chart has no DRAM area');
	for (const a of a1) {
		if (!(a.width > 0 && a.height > 0))
			fail(`socket 1 DRAM area is empty: ${JSON.stringify(a)}`);
		if (!(a.start < tHealthy + PULSE[1] + SLACK && a.end > tBefore + PULSE[0] - SLACK))
			fail(`socket 1 DRAM area ${a.start}..${a.end} is not at the pulse`);
	}

	/* Hover shows one point's values; focus and arrow keys do too. */
	const chart = page.locator('svg.history-chart[data-socket="1"]');
	/* A new point each step redraws the chart: measure the one that is there. */
	let box = null;
	for (let i = 0; i < 5 && !box; i++)
		box = await chart.boundingBox();
	if (!box)
		fail('socket 1 chart has no box');
	await page.mouse.move(box.x + box.width * 0.5, box.y + box.height * 0.3);
	const hover = await page.textContent('figure.history[data-socket="1"] .readout');
	if (!/DRAM throttled .*%/.test(hover))
		fail(`hover readout is ${JSON.stringify(hover)}`);
	await chart.focus();
	await page.keyboard.press('ArrowLeft');
	const keyed = await page.textContent('figure.history[data-socket="1"] .readout');
	if (!/hottest core .*°C/.test(keyed))
		fail(`keyboard readout is ${JSON.stringify(keyed)}`);
	await page.mouse.move(0, 0);
	await page.evaluate(() => document.activeElement.blur());
	await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });

	/* A failing fetch leaves the charts in place: once the page says so (its next poll). */
	await page.route('**/api/v1/history', (route) => route.abort());
	await page.waitForSelector('#history-stale', { state: 'visible', timeout: 20000 })
		.catch(() => fail('no note that the history is not updated within 20 s'));
	if (await page.locator('svg.history-chart').count() !== doc.sockets.length)
		fail('charts disappeared when the history fetch failed');
	if (!(await page.isVisible('#history-stale')))
		fail('no note that the history is not updated');
}

run({ viewport: { width: 1280, height: 1000 }, colorScheme: process.env.COLOR_SCHEME || 'light' },
	async (page, errors) => {
		await check(page);
		if (errors.length)
			fail('page errors: ' + errors.join('; '));
		console.log(`history charts (${process.env.COLOR_SCHEME}): ok`);
	});
