/*
 * Headless Chromium check of the page's episode rows, driven by
 * web_episodes.sh against a simulated Granite Rapids in a PROCHOT storm
 * (conf/scenarios/prochot-storm.ini, a 30 s period): one row per place and
 * condition, as many as /api/v1/episodes has places, each place once; an
 * ongoing row gives its running length; then the same storm over 15
 * minutes (the daemon's first period repeated 30 times, served in place of
 * /api/v1/episodes) is still one row per place, and the episode section
 * fits on one screen.  Prints the rows, the episodes and the heights.
 *
 * Env: PLAYWRIGHT_CORE (module dir), UNCORED_URL, USER_DATA_DIR,
 * SCREENSHOT (the page; the episode section goes beside it, -section.png).
 * Exits 0 when every check passes.
 */
'use strict';

const { run } = require('./web_browser.js');

const url = process.env.UNCORED_URL;
const PERIOD_S = 30;
const WINDOW_S = 15 * 60;
const VIEWPORT = { width: 1280, height: 900 };

function fail(msg) {
	throw new Error(msg);
}

/* The row an episode belongs to, as the page keys it. */
function placeKey(e) {
	const l = e.labels || {};
	const part = (v) => (v === null || v === undefined ? '' : String(v));
	return [e.kind, e.socket, part(l.die), part(l.channel), part(e.core)].join('/');
}

async function episodes(page) {
	return page.evaluate(async () => (await fetch('/api/v1/episodes', { cache: 'no-store' })).json());
}

async function rows(page) {
	return page.$$eval('#timeline .episode', (list) => list.map((r) => ({
		place: r.getAttribute('data-place'),
		episodes: Number(r.getAttribute('data-episodes')),
		ongoing: r.classList.contains('ongoing'),
		text: r.textContent,
	})));
}

/* The places of doc's episodes: the rows the page should have. */
function placesOf(doc) {
	return new Set(doc.episodes.map(placeKey));
}

async function checkRows(page, what, wantPlaces) {
	const got = await rows(page);
	const seen = new Set();
	for (const r of got) {
		if (seen.has(r.place))
			fail(`${what}: two rows for ${r.place}`);
		seen.add(r.place);
		if (!wantPlaces.has(r.place))
			fail(`${what}: a row for ${r.place}, which no episode has`);
	}
	if (got.length !== wantPlaces.size)
		fail(`${what}: ${got.length} rows for ${wantPlaces.size} places: ${JSON.stringify(got)}`);
	return got;
}

/*
 * The daemon's episodes of its first period, repeated back over the
 * window: the same storm as if it had lasted 15 minutes.
 */
function fifteenMinutes(doc) {
	const out = [];
	let id = 1000000;
	for (let k = 0; k < WINDOW_S / PERIOD_S; k++) {
		for (const e of doc.episodes) {
			if (k > 0 && (e.end === null || e.end === undefined))
				continue;
			const c = { ...e, id: id--, start: e.start - k * PERIOD_S };
			if (c.end !== null && c.end !== undefined)
				c.end = e.end - k * PERIOD_S;
			out.push(c);
		}
	}
	return { episodes: out };
}

async function heights(page) {
	return page.evaluate(() => {
		const section = document.getElementById('episodes-heading').closest('section');
		return {
			section: section.getBoundingClientRect().height,
			page: document.documentElement.scrollHeight,
		};
	});
}

run({ viewport: VIEWPORT }, async (page, errors) => {
	await page.goto(url + '/', { timeout: 15000 });
	await page.waitForSelector('#timeline .episode', { timeout: 20000 });
	/* Rows follow the episodes document, polled every few seconds. */
	let doc = await episodes(page);
	await page.waitForFunction((n) => document.querySelectorAll('#timeline .episode').length >= n,
		placesOf(doc).size, { timeout: 15000 });
	doc = await episodes(page);
	await page.reload();
	await page.waitForFunction((n) => document.querySelectorAll('#timeline .episode').length >= n,
		placesOf(doc).size, { timeout: 15000 });
	const live = await checkRows(page, 'live', placesOf(doc));
	if (live.length !== 6)
		fail(`the storm has ${live.length} places, not 6 (PROCHOT, frequency limited, package, cores 0-2)`);
	for (const r of live)
		if (/_seconds|_throttling/.test(r.text))
			fail(`a row names a key where words belong: ${r.text}`);
	const livePage = await heights(page);

	/* An ongoing row says how long it has run so far, and that grows. */
	const running = await page.waitForFunction(() => {
		for (const r of document.querySelectorAll('#timeline .episode.ongoing')) {
			const m = /now, (\d+(?:\.\d)?) s so far/.exec(r.textContent);
			if (m && Number(m[1]) >= 1)
				return r.textContent;
		}
		return null;
	}, null, { timeout: 45000, polling: 250 });
	const runningText = await running.jsonValue();

	/* The same storm over 15 minutes. */
	const long = fifteenMinutes(await episodes(page));
	await page.route('**/api/v1/episodes', (route) => route.fulfill({ json: long }));
	await page.reload();
	await page.waitForFunction((n) => {
		const r = document.querySelectorAll('#timeline .episode');
		return r.length >= n && [...r].some((x) => Number(x.getAttribute('data-episodes')) > 20);
	}, placesOf(long).size, { timeout: 15000 });
	const stormRows = await checkRows(page, '15 minutes', placesOf(long));
	const stormEpisodes = stormRows.reduce((n, r) => n + r.episodes, 0);
	for (const r of stormRows) {
		const m = /(\d+) episodes?, (?:(\d+) min (\d+) s|\d+\.\d s) in all; /.exec(r.text);
		if (!m || Number(m[1]) !== r.episodes || (m[3] !== undefined && Number(m[3]) >= 60))
			fail(`15 minutes: the row of ${r.place} says ${JSON.stringify(r.text)}`);
	}
	const h = await heights(page);
	await page.screenshot({ path: process.env.SCREENSHOT, fullPage: true });
	await page.locator('section', { has: page.locator('#episodes-heading') })
		.screenshot({ path: process.env.SCREENSHOT.replace(/\.png$/, '-section.png') });
	console.log(`live: ${live.length} rows for ${doc.episodes.length} episodes, ` +
		`episode section ${Math.round(livePage.section)} px, page ${livePage.page} px`);
	console.log(`ongoing: ${runningText}`);
	console.log(`15 minutes: ${stormRows.length} rows for ${stormEpisodes} episodes shown ` +
		`(${long.episodes.length} served), episode section ${Math.round(h.section)} px, ` +
		`page ${h.page} px`);
	if (stormRows.length !== 6)
		fail(`15 minutes of storm give ${stormRows.length} rows, not 6`);
	if (h.section > VIEWPORT.height / 2)
		fail(`the episode section is ${h.section} px high, more than half a ${VIEWPORT.height} px screen`);
	if (errors.length)
		fail('page errors: ' + errors.join('; '));
});
